//===- HostileInputTest.cpp - What fuzzing found in the graph readers -----===//
//
// Each reproducer of the fuzz campaign that broke a reader, with the exact
// error it gets now: a file declaring a size it cannot back, trailing data
// after a gzip stream, an .npz with two members of one name, .npy headers
// numpy would not write. And the memory budget that bounds what a reader
// allocates, and the error an allocation failure becomes.
//
//===----------------------------------------------------------------------===//
#include "NpzBuilder.h"
#include "TestUtil.h"

#include "gnnc/graph/Readers.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/resource.h>
#include <utility>
#include <vector>

using namespace gnnc;
using namespace gnnc::graph;
using gnnc::test::TempDir;
using namespace gnnc::test::npz;

namespace {

/// Sets GNNC_GRAPH_MEMORY_LIMIT for one scope (unset: the default).
class BudgetScope {
public:
  explicit BudgetScope(const char *value) {
    if (value)
      setenv("GNNC_GRAPH_MEMORY_LIMIT", value, 1);
    else
      unsetenv("GNNC_GRAPH_MEMORY_LIMIT");
  }
  ~BudgetScope() { unsetenv("GNNC_GRAPH_MEMORY_LIMIT"); }
};

std::string gzipped(const std::string &text) {
  TempDir dir;
  return gnnc::test::readBytes(dir.writeGz("x.gz", text));
}

const char kPatternHeader[] = "%%MatrixMarket matrix coordinate pattern "
                              "general\n";

TEST(HostileInput, MatrixMarketSizeTheFileCannotBack) {
  // Three lines declaring 2^31 - 1 rows: the reader allocated ~16 GB of row
  // offsets up front (std::bad_alloc, exit 134).
  BudgetScope budget(nullptr);
  TempDir dir;
  std::string path = dir.write("huge.mtx", std::string(kPatternHeader) +
                                               "2147483647 2 1\n1 1\n");
  const std::string why =
      ":2: a 2147483647 x 2 matrix with 1 entries needs about 48.0 GiB, over "
      "the readers' memory budget of 8.0 GiB (GNNC_GRAPH_MEMORY_LIMIT sets "
      "it)";
  EXPECT_EQ(readMatrixMarket(path).message(), path + why);
  EXPECT_EQ(readGraph(path).message(), path + why);
  EXPECT_EQ(parseMatrixMarket("mem.mtx", std::string(kPatternHeader) +
                                             "2147483647 2 1\n1 1\n")
                .message(),
            "mem.mtx" + why);
  // With a budget large enough, what stops it is the memory it takes; a
  // small one refuses a modest file.
  BudgetScope small("1K");
  EXPECT_EQ(parseMatrixMarket("m.mtx", std::string(kPatternHeader) +
                                           "100 100 3\n1 1\n2 2\n3 3\n")
                .message(),
            "m.mtx:2: a 100 x 100 matrix with 3 entries needs about 4.0 KiB, "
            "over the readers' memory budget of 1.0 KiB "
            "(GNNC_GRAPH_MEMORY_LIMIT sets it)");
}

TEST(HostileInput, SnapIdTheFileCannotBack) {
  BudgetScope budget(nullptr);
  TempDir dir;
  std::string path = dir.write("huge.txt", "0 1\n2147483647 0\n");
  const std::string why =
      ":2: a 2147483648 x 2147483648 graph with 2 entries needs about 80.0 "
      "GiB, over the readers' memory budget of 8.0 GiB "
      "(GNNC_GRAPH_MEMORY_LIMIT sets it)";
  EXPECT_EQ(readSnapEdgeList(path).message(), path + why);
  EXPECT_EQ(readGraph(path).message(), path + why);
  // Compact ids take two nodes per edge at most, whatever the ids.
  SnapOptions compact;
  compact.compactIds = true;
  Expected<CsrGraph> g = readSnapEdgeList(path, compact);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_EQ(g->numRows, 3);
  // Found by fuzzing: with compact ids an id may be INT64_MAX (the node
  // count computed for plain ids overflowed, though unused).
  Expected<CsrGraph> big =
      parseSnapEdgeList("big.txt", "0 9223372036854775807\n", compact);
  ASSERT_TRUE(big.isOk()) << big.message();
  EXPECT_EQ(big->numRows, 2);
  // A node count option is checked before the first line.
  SnapOptions nodes;
  nodes.numNodes = kMaxReaderDimension;
  EXPECT_EQ(parseSnapEdgeList("e.txt", "", nodes).message(),
            "e.txt: a 2147483648 x 2147483648 graph with 0 entries needs "
            "about 80.0 GiB, over the readers' memory budget of 8.0 GiB "
            "(GNNC_GRAPH_MEMORY_LIMIT sets it)");
}

TEST(HostileInput, GzipTrailingData) {
  std::string text = std::string(kPatternHeader) + "3 3 1\n1 1\n";
  std::string gz = gzipped(text);
  ASSERT_TRUE(parseMatrixMarket("ok.mtx.gz", gz).isOk());
  // Concatenated members are one gzip stream.
  Expected<CsrGraph> two =
      parseSnapEdgeList("two.txt.gz", gzipped("0 1\n") + gzipped("1 2\n"));
  ASSERT_TRUE(two.isOk()) << two.message();
  EXPECT_EQ(two->nnz(), 2);
  // Anything else after the stream is an error (zlib's gzread ignored it).
  TempDir dir;
  std::string path = dir.write("trailing.mtx.gz", gz + "garbage\n");
  EXPECT_EQ(readMatrixMarket(path).message(),
            path +
                ": 8 bytes of trailing data after the end of the gzip "
                "stream (at byte " +
                std::to_string(gz.size()) +
                "): only another gzip member may follow one");
  EXPECT_EQ(readGraph(path).message(), readMatrixMarket(path).message());
  // Truncated and corrupt streams.
  EXPECT_EQ(
      parseMatrixMarket("cut.mtx.gz", gz.substr(0, gz.size() - 4)).message(),
      "cut.mtx.gz: gzip data ends in the middle of a stream (file "
      "truncated?)");
  std::string corrupt = gz;
  corrupt[12] = static_cast<char>(corrupt[12] ^ 0xff);
  EXPECT_EQ(parseMatrixMarket("bad.mtx.gz", corrupt)
                .message()
                .rfind("bad.mtx.gz: corrupt gzip data: ", 0),
            0u)
      << parseMatrixMarket("bad.mtx.gz", corrupt).message();
}

TEST(HostileInput, GzipBomb) {
  // 64 MiB of zeros compress to ~64 KiB; the budget bounds the text.
  BudgetScope budget("1M");
  std::string gz = gzipped(std::string(64 << 20, '0'));
  EXPECT_EQ(parseMatrixMarket("bomb.mtx.gz", gz).message(),
            "bomb.mtx.gz: the decompressed text is larger than the readers' "
            "memory budget of 1.0 MiB (GNNC_GRAPH_MEMORY_LIMIT sets it)");
}

TEST(HostileInput, NpzDuplicateMembers) {
  // numpy reads the last of two members 'indices.npy' (here one with an
  // index out of range); gnnc read the first. Now neither.
  std::string zip = storedZip({{"indptr.npy", int64Array({0, 1, 2})},
                               {"indices.npy", int64Array({1, 0})},
                               {"indices.npy", int64Array({1, 7})}});
  TempDir dir;
  std::string path = dir.write("dup.npz", zip);
  const std::string why =
      ": members 1 and 2 are both named 'indices' (with or without '.npy'): "
      "an archive must hold each name once (numpy would read the last)";
  EXPECT_EQ(readNpzCsr(path).message(), path + why);
  EXPECT_EQ(readGraph(path).message(), path + why);
  EXPECT_EQ(readNpz(path).message(), path + why);
  // 'indices' and 'indices.npy' name the same array.
  EXPECT_EQ(
      parseNpz("d.npz", bytesOf(storedZip({{"indices", int64Array({1})},
                                           {"indices.npy", int64Array({1})}})))
          .message(),
      "d.npz: members 0 and 1 are both named 'indices' (with or "
      "without '.npy'): an archive must hold each name once (numpy "
      "would read the last)");
  // Without the duplicate, the archive reads.
  Expected<CsrGraph> g = parseNpzCsr(
      "ok.npz", bytesOf(storedZip({{"indptr.npy", int64Array({0, 1, 2})},
                                   {"indices.npy", int64Array({1, 0})}})));
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_EQ(g->nnz(), 2);
}

TEST(HostileInput, NpyVersionsAndKeys) {
  const std::string header =
      "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }";
  const std::string data = int64Data({3, 4});
  auto parse = [](const std::string &bytes) {
    return parseNpy(reinterpret_cast<const uint8_t *>(bytes.data()),
                    bytes.size(), "a.npy");
  };
  ASSERT_TRUE(parse(npy(header, data)).isOk());
  EXPECT_EQ(parse(npy(header, data, 1, 1)).message(),
            "a.npy: unsupported .npy format version 1.1 (numpy's versions are "
            "1.0, 2.0 and 3.0)");
  EXPECT_EQ(parse(npy(header, data, 4, 0)).message(),
            "a.npy: unsupported .npy format version 4.0 (numpy's versions are "
            "1.0, 2.0 and 3.0)");
  EXPECT_EQ(parse(npy("{'descr': '<i8', 'fortran_order': False, 'shape': "
                      "(2,), 'extra': True}",
                      data))
                .message(),
            "a.npy: header has the unknown key 'extra' (a .npy header holds "
            "exactly 'descr', 'fortran_order' and 'shape')");
  EXPECT_EQ(parse(npy("{'descr': '<i8', 'fortran_order': False, 'shape': "
                      "(2,), 'descr': '<i4'}",
                      data))
                .message(),
            "a.npy: header gives 'descr' twice");
  EXPECT_EQ(parse(npy(header + " junk", data)).message(),
            "a.npy: malformed header: 'junk' after the closing '}' (only "
            "spaces and a newline may pad a header)");
  // A shape whose byte count wraps 64 bits: 2^62 eight-byte elements
  // "matched" an empty data section.
  EXPECT_EQ(parse(npy("{'descr': '<i8', 'fortran_order': False, 'shape': "
                      "(2147483648, 2147483648), }",
                      ""))
                .message(),
            "a.npy: shape (2147483648, 2147483648) is too large");
}

TEST(HostileInput, NpzSizesAgainstTheLimits) {
  // Without num_nodes the largest index sets the column count.
  EXPECT_EQ(parseNpzCsr("wide.npz",
                        bytesOf(storedZip(
                            {{"indptr.npy", int64Array({0, 1})},
                             {"indices.npy", int64Array({int64_t(1) << 40})}})))
                .message(),
            "wide.npz: member 'indices': makes the graph 1099511627777 "
            "columns wide, more than the supported maximum 2147483648");
  BudgetScope small("1K");
  std::vector<int64_t> indptr(40);
  for (size_t i = 0; i < indptr.size(); ++i)
    indptr[i] = 0;
  EXPECT_EQ(parseNpzCsr("rows.npz",
                        bytesOf(storedZip({{"indptr.npy", int64Array(indptr)},
                                           {"indices.npy", int64Array({})}})))
                .message(),
            "rows.npz: a 39 x 39 graph with 0 entries needs about 1.5 KiB, "
            "over the readers' memory budget of 1.0 KiB "
            "(GNNC_GRAPH_MEMORY_LIMIT sets it)");
}

TEST(HostileInput, BudgetSetting) {
  {
    BudgetScope unset(nullptr);
    EXPECT_EQ(*readerMemoryBudget(), kDefaultReaderMemoryBudget);
  }
  {
    BudgetScope g("64G");
    EXPECT_EQ(*readerMemoryBudget(), int64_t(64) << 30);
  }
  {
    BudgetScope bytes("4096");
    EXPECT_EQ(*readerMemoryBudget(), 4096);
  }
  BudgetScope bad("lots");
  EXPECT_EQ(readerMemoryBudget().message(),
            "GNNC_GRAPH_MEMORY_LIMIT='lots': expected a positive number of "
            "bytes, optionally with the suffix K, M, G or T (e.g. 64G)");
  EXPECT_EQ(parseMatrixMarket("x.mtx", kPatternHeader).message(),
            "x.mtx: GNNC_GRAPH_MEMORY_LIMIT='lots': expected a positive "
            "number of bytes, optionally with the suffix K, M, G or T (e.g. "
            "64G)");
}

/// In a child process with 1 GiB of address space and a budget the machine
/// cannot give: reads a graph needing 48 GiB, prints the error, exits 0 if
/// there was one.
[[noreturn]] void readHugeWithLittleMemory() {
  setenv("GNNC_GRAPH_MEMORY_LIMIT", "1T", 1);
  struct rlimit limit;
  limit.rlim_cur = limit.rlim_max = rlim_t(1) << 30;
  setrlimit(RLIMIT_AS, &limit);
  Expected<CsrGraph> g = parseMatrixMarket(
      "huge.mtx", std::string(kPatternHeader) + "2147483647 2 1\n1 1\n");
  std::fprintf(stderr, "%s\n", g.message().c_str());
  std::exit(g.isOk() ? 2 : 0);
}

TEST(HostileInput, AllocationFailureIsAnError) {
  // The allocation that fails becomes an error naming the file, not
  // std::bad_alloc's abort.
  EXPECT_EXIT(readHugeWithLittleMemory(), testing::ExitedWithCode(0),
              "huge.mtx: out of memory while reading it \\(the graph needs "
              "more memory than this machine gives the process; "
              "GNNC_GRAPH_MEMORY_LIMIT sets the readers' budget\\)");
}

} // namespace
