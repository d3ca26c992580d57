//===- MatrixMarketTest.cpp - Matrix Market reader ------------------------===//

#include "TestUtil.h"

#include "gnnc/graph/Readers.h"

#include <gtest/gtest.h>

using namespace gnnc;
using namespace gnnc::graph;
using gnnc::test::TempDir;

namespace {

/// Expects reading `content` to fail with a message containing `path:line:`
/// and `what`.
void expectMtxError(const std::string &content, int line,
                    const std::string &what) {
  TempDir dir;
  std::string path = dir.write("bad.mtx", content);
  Expected<CsrGraph> g = readMatrixMarket(path);
  ASSERT_FALSE(g.isOk()) << "accepted:\n" << content;
  std::string prefix = path + ":" + std::to_string(line) + ": ";
  EXPECT_EQ(g.message().rfind(prefix, 0), 0u)
      << "message: " << g.message() << "\nexpected prefix: " << prefix;
  EXPECT_NE(g.message().find(what), std::string::npos)
      << "message: " << g.message() << "\nexpected: " << what;
}

TEST(MatrixMarketTest, RealGeneral) {
  TempDir dir;
  std::string path = dir.write("a.mtx", "%%MatrixMarket matrix coordinate real "
                                        "general\n"
                                        "% a comment\n"
                                        "%\n"
                                        "3 4 5\n"
                                        "1 1 1.5\n"
                                        "3 4 -2e1\n"
                                        "1 3 0.25\n"
                                        "3 2 7\n"
                                        "1 1 1.0\n"); // duplicate: summed
  Expected<CsrGraph> g = readMatrixMarket(path);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_TRUE(g->validate().isOk());
  EXPECT_EQ(g->numRows, 3);
  EXPECT_EQ(g->numCols, 4);
  EXPECT_EQ(g->rowPtr, (std::vector<int64_t>{0, 2, 2, 4}));
  EXPECT_EQ(g->colIdx, (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(g->values, (std::vector<float>{2.5f, 0.25f, 7.0f, -20.0f}));
}

TEST(MatrixMarketTest, PatternSymmetricCrlfAndGzip) {
  std::string content = "%%MatrixMarket matrix coordinate pattern symmetric\r\n"
                        "4 4 4\r\n"
                        "2 1\r\n"
                        "3 3\r\n"
                        "4 1\r\n"
                        "\r\n"
                        "4 2\r\n";
  TempDir dir;
  for (bool gz : {false, true}) {
    std::string path =
        gz ? dir.writeGz("s.mtx.gz", content) : dir.write("s.mtx", content);
    Expected<CsrGraph> g = gz ? readGraph(path) : readMatrixMarket(path);
    ASSERT_TRUE(g.isOk()) << g.message();
    EXPECT_TRUE(g->values.empty());
    // Expanded: (1,0),(0,1),(2,2) once,(3,0),(0,3),(3,1),(1,3).
    EXPECT_EQ(g->nnz(), 7);
    EXPECT_EQ(g->rowPtr, (std::vector<int64_t>{0, 2, 4, 5, 7}));
    EXPECT_EQ(g->colIdx, (std::vector<int64_t>{1, 3, 0, 3, 2, 0, 1}));
  }
}

TEST(MatrixMarketTest, IntegerField) {
  TempDir dir;
  std::string path = dir.write("i.mtx", "%%MatrixMarket matrix coordinate "
                                        "integer general\n2 2 2\n1 2 3\n2 1 "
                                        "-4\n");
  Expected<CsrGraph> g = readMatrixMarket(path);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_EQ(g->values, (std::vector<float>{3, -4}));
}

TEST(MatrixMarketTest, EmptyMatrix) {
  TempDir dir;
  std::string path = dir.write("e.mtx", "%%MatrixMarket matrix coordinate real "
                                        "general\n3 3 0\n");
  Expected<CsrGraph> g = readMatrixMarket(path);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_EQ(g->nnz(), 0);
  EXPECT_EQ(g->rowPtr.size(), 4u);
}

const char *kHeader = "%%MatrixMarket matrix coordinate real general\n";

TEST(MatrixMarketTest, IndexOutOfRange) {
  expectMtxError(std::string(kHeader) + "2 2 2\n1 1 1\n3 1 1\n", 4,
                 "row index 3 is out of range [1, 2]");
  expectMtxError(std::string(kHeader) + "2 2 1\n1 0 1\n", 3,
                 "column index 0 is out of range [1, 2]");
}

TEST(MatrixMarketTest, TruncatedFile) {
  expectMtxError(std::string(kHeader) + "3 3 4\n1 1 1\n2 2 2\n", 4,
                 "file ends after 2 of 4 declared entries");
}

TEST(MatrixMarketTest, TooManyEntries) {
  expectMtxError(std::string(kHeader) + "3 3 1\n1 1 1\n2 2 2\n", 4,
                 "more entries than the 1 declared");
}

TEST(MatrixMarketTest, BadHeader) {
  expectMtxError("%%MatrixMarkt matrix coordinate real general\n1 1 0\n", 1,
                 "missing '%%MatrixMarket' header");
  expectMtxError("1 1 0\n", 1, "missing '%%MatrixMarket' header");
  expectMtxError("%%MatrixMarket matrix coordinate real\n1 1 0\n", 1,
                 "malformed header");
  expectMtxError(std::string(kHeader) + "2 2\n", 2, "malformed size line");
  expectMtxError(std::string(kHeader) + "% only comments\n", 2,
                 "file ends before the size line");
  expectMtxError(std::string(kHeader) + "2 -2 1\n", 2, "negative size");
  expectMtxError("%%MatrixMarket matrix coordinate pattern symmetric\n2 3 "
                 "0\n",
                 2, "symmetric matrix must be square");
}

TEST(MatrixMarketTest, UnsupportedVariants) {
  expectMtxError("%%MatrixMarket matrix coordinate complex general\n", 1,
                 "unsupported field 'complex'");
  expectMtxError("%%MatrixMarket matrix array real general\n", 1,
                 "unsupported format 'array'");
  expectMtxError("%%MatrixMarket matrix coordinate real hermitian\n", 1,
                 "unsupported symmetry 'hermitian'");
  expectMtxError("%%MatrixMarket matrix coordinate real skew-symmetric\n", 1,
                 "unsupported symmetry 'skew-symmetric'");
  expectMtxError("%%MatrixMarket vector coordinate real general\n", 1,
                 "unsupported object 'vector'");
}

TEST(MatrixMarketTest, NonNumericTokens) {
  expectMtxError(std::string(kHeader) + "2 2 1\n1 x 1\n", 3,
                 "malformed column index 'x'");
  expectMtxError(std::string(kHeader) + "2 2 1\n1.5 1 1\n", 3,
                 "malformed row index '1.5'");
  expectMtxError(std::string(kHeader) + "2 2 1\n1 1 abc\n", 3,
                 "malformed real value 'abc'");
  expectMtxError(std::string(kHeader) + "2 2 1\n1 1 1.0e\n", 3,
                 "malformed real value");
  expectMtxError(std::string(kHeader) + "2 2 1\n1 1 nan\n", 3,
                 "malformed real value 'nan'");
  expectMtxError(std::string(kHeader) + "2 2 1\n1 1\n", 3, "expected 3 fields");
  expectMtxError(std::string(kHeader) + "2 2 1\n1 1 1 1\n", 3,
                 "expected 3 fields");
  expectMtxError("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 "
                 "2.5\n",
                 3, "malformed integer value '2.5'");
  expectMtxError(std::string(kHeader) + "2 2 x\n", 2, "malformed size line");
}

TEST(MatrixMarketTest, MissingFileAndCorruptGzip) {
  Expected<CsrGraph> g = readMatrixMarket("/nonexistent/dir/x.mtx");
  ASSERT_FALSE(g.isOk());
  EXPECT_NE(g.message().find("/nonexistent/dir/x.mtx: cannot open"),
            std::string::npos)
      << g.message();

  TempDir dir;
  std::string content = std::string(kHeader) + "100 100 200\n";
  for (int i = 0; i < 200; ++i)
    content += std::to_string(i % 100 + 1) + " " +
               std::to_string((i * 7) % 100 + 1) + " 1.0\n";
  std::string full = dir.writeGz("full.mtx.gz", content);
  ASSERT_TRUE(readGraph(full).isOk()) << readGraph(full).message();
  std::string bytes = gnnc::test::readBytes(full);
  std::string cut = dir.write("cut.mtx.gz", bytes.substr(0, bytes.size() / 2));
  Expected<CsrGraph> truncated = readGraph(cut);
  ASSERT_FALSE(truncated.isOk());
  EXPECT_EQ(truncated.message().rfind(cut + ":", 0), 0u) << truncated.message();
}

} // namespace
