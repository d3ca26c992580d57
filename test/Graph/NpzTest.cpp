//===- NpzTest.cpp - .npy / .npz readers ----------------------------------===//

#include "TestUtil.h"

#include "gnnc/graph/Readers.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace gnnc;
using namespace gnnc::graph;
using gnnc::test::inputPath;
using gnnc::test::TempDir;

namespace {

void expectSmallCsr(const CsrGraph &g, bool withValues) {
  EXPECT_TRUE(g.validate().isOk()) << g.validate().message();
  EXPECT_EQ(g.numRows, 5);
  EXPECT_EQ(g.numCols, 5);
  EXPECT_EQ(g.rowPtr, (std::vector<int64_t>{0, 2, 3, 3, 5, 6}));
  EXPECT_EQ(g.colIdx, (std::vector<int64_t>{1, 2, 2, 0, 4, 4}));
  if (withValues)
    EXPECT_EQ(g.values, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  else
    EXPECT_TRUE(g.values.empty());
}

TEST(NpzTest, CompressedCsr) {
  Expected<CsrGraph> g = readNpzCsr(inputPath("small_csr.npz"));
  ASSERT_TRUE(g.isOk()) << g.message();
  expectSmallCsr(*g, true);
  Expected<CsrGraph> viaDispatch = readGraph(inputPath("small_csr.npz"));
  ASSERT_TRUE(viaDispatch.isOk());
  expectSmallCsr(*viaDispatch, true);
}

TEST(NpzTest, StoredCsr) {
  Expected<CsrGraph> g = readNpzCsr(inputPath("small_csr_stored.npz"));
  ASSERT_TRUE(g.isOk()) << g.message();
  expectSmallCsr(*g, false);
}

TEST(NpzTest, PrefixedRelation) {
  Expected<CsrGraph> g = readNpzCsr(inputPath("prefixed.npz"), "a__r__b__");
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_EQ(g->numRows, 3);
  EXPECT_EQ(g->numCols, 4); // max(3, max index + 1)
  Expected<CsrGraph> wider =
      readNpzCsr(inputPath("prefixed.npz"), "a__r__b__", 10);
  ASSERT_TRUE(wider.isOk());
  EXPECT_EQ(wider->numCols, 10);
  Expected<CsrGraph> narrow =
      readNpzCsr(inputPath("prefixed.npz"), "a__r__b__", 2);
  ASSERT_FALSE(narrow.isOk());
  EXPECT_NE(narrow.message().find("member 'a__r__b__indices': index 3"),
            std::string::npos)
      << narrow.message();
}

TEST(NpzTest, AllDtypes) {
  Expected<NpzFile> npz = readNpz(inputPath("dtypes.npz"));
  ASSERT_TRUE(npz.isOk()) << npz.message();
  EXPECT_TRUE(npz->has("i1"));
  EXPECT_TRUE(npz->has("i1.npy"));
  EXPECT_FALSE(npz->has("nope"));
  auto ints = [&](const char *name) {
    Expected<NpyArray> a = npz->get(name);
    EXPECT_TRUE(a.isOk()) << a.message();
    Expected<std::vector<int64_t>> v = a->asInt64();
    EXPECT_TRUE(v.isOk()) << v.message();
    return v.isOk() ? *v : std::vector<int64_t>();
  };
  EXPECT_EQ(ints("i1"), (std::vector<int64_t>{-1, 2, -128}));
  EXPECT_EQ(ints("u1"), (std::vector<int64_t>{0, 255}));
  EXPECT_EQ(ints("i2"), (std::vector<int64_t>{-300, 300}));
  EXPECT_EQ(ints("u2"), (std::vector<int64_t>{65535, 1}));
  EXPECT_EQ(ints("i4"), (std::vector<int64_t>{-2147483648ll, 7}));
  EXPECT_EQ(ints("u4"), (std::vector<int64_t>{4294967295ll}));
  EXPECT_EQ(ints("i8"), (std::vector<int64_t>{-(1ll << 62), 5}));
  EXPECT_EQ(ints("b1"), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(ints("empty"), std::vector<int64_t>());
  Expected<NpyArray> u8 = npz->get("u8");
  ASSERT_TRUE(u8.isOk());
  EXPECT_FALSE(u8->asInt64().isOk()); // 2^63 + 1 does not fit

  Expected<NpyArray> f2 = npz->get("f2");
  ASSERT_TRUE(f2.isOk());
  EXPECT_EQ(f2->dtype, "<f2");
  EXPECT_EQ(*f2->asFloat32(), (std::vector<float>{1.5f, -0.25f}));
  EXPECT_FALSE(f2->asInt64().isOk());
  EXPECT_EQ(*npz->get("f4")->asFloat32(), (std::vector<float>{0.1f, 2.5f}));
  EXPECT_EQ(*npz->get("f8")->asFloat64(), (std::vector<double>{0.1, -1e300}));
  EXPECT_EQ(*npz->get("i4")->asFloat64(),
            (std::vector<double>{-2147483648.0, 7.0}));

  Expected<NpyArray> scalar = npz->get("scalar");
  ASSERT_TRUE(scalar.isOk());
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(*scalar->scalarInt64(), 42);
  Expected<NpyArray> matrix = npz->get("matrix");
  ASSERT_TRUE(matrix.isOk());
  EXPECT_EQ(matrix->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(*matrix->asInt64(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_FALSE(matrix->scalarInt64().isOk());
}

/// Expects `fn()` to fail with a message containing each of `parts`.
template <typename T>
void expectError(const Expected<T> &result,
                 std::initializer_list<std::string> parts) {
  ASSERT_FALSE(result.isOk());
  for (const std::string &part : parts)
    EXPECT_NE(result.message().find(part), std::string::npos)
        << "message: " << result.message() << "\nexpected: " << part;
}

TEST(NpzTest, RejectsUnsupportedArrays) {
  std::string path = inputPath("bad_bigendian.npz");
  expectError(readNpzCsr(path),
              {path + ": member 'indptr'", "big-endian dtype '>i8'"});
  Expected<NpzFile> fortran = readNpz(inputPath("bad_fortran.npz"));
  ASSERT_TRUE(fortran.isOk());
  expectError(fortran->get("matrix"), {"member 'matrix'", "Fortran-order"});
  Expected<NpzFile> object = readNpz(inputPath("bad_object.npz"));
  ASSERT_TRUE(object.isOk());
  expectError(object->get("obj"), {"member 'obj'", "object arrays"});
  Expected<NpzFile> strings = readNpz(inputPath("bad_strings.npz"));
  ASSERT_TRUE(strings.isOk());
  expectError(strings->get("names"), {"string arrays"});
}

TEST(NpzTest, InvalidCsrMembers) {
  std::string p = inputPath("bad_indptr_nonmonotone.npz");
  expectError(readNpzCsr(p), {p + ": member 'indptr': not monotone",
                              "offset 2 at position 1 > 1 at position 2"});
  p = inputPath("bad_indices_range.npz");
  expectError(readNpzCsr(p),
              {p + ": member 'indices': index 9000 at position 2 is out of "
                   "range [0, 3)"});
  p = inputPath("bad_missing_indices.npz");
  expectError(readNpzCsr(p),
              {p + ": missing member 'indices'", "members: indptr, num_nodes"});
  p = inputPath("bad_num_nodes.npz");
  expectError(readNpzCsr(p), {"member 'indptr': has 3 entries, expected "
                              "num_nodes + 1 = 8"});
  p = inputPath("bad_last_offset.npz");
  expectError(readNpzCsr(p), {"member 'indptr': last offset 5 does not match "
                              "the 2 entries of 'indices'"});
  p = inputPath("bad_float_indices.npz");
  expectError(readNpzCsr(p),
              {"member 'indices': dtype '<f4' is not an integer type"});
}

TEST(NpzTest, TruncatedArchive) {
  TempDir dir;
  std::string bytes = gnnc::test::readBytes(inputPath("small_csr.npz"));
  ASSERT_GT(bytes.size(), 100u);
  // Every prefix of the file must be rejected cleanly (never crash or hang).
  for (size_t len = 0; len < bytes.size(); ++len) {
    std::string path = dir.write("cut.npz", bytes.substr(0, len));
    Expected<CsrGraph> g = readNpzCsr(path);
    ASSERT_FALSE(g.isOk()) << "accepted a prefix of " << len << " bytes";
    EXPECT_EQ(g.message().rfind(path + ": ", 0), 0u) << g.message();
  }
  std::string path = dir.write("half.npz", bytes.substr(0, bytes.size() / 2));
  expectError(readNpz(path), {path + ": ", "truncated"});
  expectError(readNpz(dir.write("junk.npz", "hello, this is not a zip file "
                                            "at all, really")),
              {"not a ZIP/.npz archive"});
  expectError(readNpz(dir.path("missing.npz")), {"cannot open"});
}

/// Offset of the central directory header of member `name` in a ZIP image.
size_t centralHeaderOffset(const std::string &zip, const std::string &name) {
  for (size_t i = 0; i + 46 < zip.size(); ++i) {
    if (std::memcmp(zip.data() + i, "PK\x01\x02", 4) != 0)
      continue;
    uint16_t nameLen = uint8_t(zip[i + 28]) | (uint8_t(zip[i + 29]) << 8);
    if (zip.compare(i + 46, nameLen, name) == 0)
      return i;
  }
  return std::string::npos;
}

TEST(NpzTest, CorruptedCrc) {
  TempDir dir;
  // Compressed archive: change the stored CRC of 'indices'.
  std::string bytes = gnnc::test::readBytes(inputPath("small_csr.npz"));
  size_t cd = centralHeaderOffset(bytes, "indices.npy");
  ASSERT_NE(cd, std::string::npos);
  bytes[cd + 16] ^= 0x5a;
  std::string path = dir.write("crc.npz", bytes);
  Expected<NpzFile> npz = readNpz(path);
  ASSERT_TRUE(npz.isOk()) << npz.message();
  EXPECT_TRUE(npz->get("indptr").isOk());
  expectError(npz->get("indices"),
              {path + ": member 'indices': CRC-32 mismatch"});
  expectError(readNpzCsr(path), {"member 'indices': CRC-32 mismatch"});

  // Stored archive: flip a data byte of the last member (num_nodes).
  std::string stored = gnnc::test::readBytes(inputPath("small_csr_stored.npz"));
  size_t cdNum = centralHeaderOffset(stored, "num_nodes.npy");
  ASSERT_NE(cdNum, std::string::npos);
  size_t firstCd = stored.find("PK\x01\x02");
  stored[firstCd - 3] ^= 0x01; // inside the last member's data
  std::string storedPath = dir.write("crc_stored.npz", stored);
  expectError(readNpzCsr(storedPath), {"CRC-32 mismatch"});
}

// Flipping any single byte must give either a valid graph or a clean error
// (run under ASan/UBSan to make this meaningful).
TEST(NpzTest, SingleByteCorruptionNeverCrashes) {
  TempDir dir;
  for (const char *name : {"small_csr.npz", "small_csr_stored.npz"}) {
    std::string bytes = gnnc::test::readBytes(inputPath(name));
    int rejected = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
      for (unsigned char mask : {0x01, 0x80, 0xff}) {
        std::string copy = bytes;
        copy[i] = static_cast<char>(copy[i] ^ mask);
        std::string path = dir.write("flip.npz", copy);
        Expected<CsrGraph> g = readNpzCsr(path);
        if (g.isOk())
          EXPECT_TRUE(g->validate().isOk());
        else
          ++rejected;
      }
    }
    EXPECT_GT(rejected, static_cast<int>(bytes.size()));
  }
}

TEST(NpzTest, CorruptDeflateData) {
  TempDir dir;
  std::string bytes = gnnc::test::readBytes(inputPath("small_csr.npz"));
  // Overwrite the start of the first member's compressed data.
  size_t nameLen = uint8_t(bytes[26]) | (uint8_t(bytes[27]) << 8);
  size_t extraLen = uint8_t(bytes[28]) | (uint8_t(bytes[29]) << 8);
  size_t data = 30 + nameLen + extraLen;
  for (size_t i = 0; i < 8; ++i)
    bytes[data + i] = static_cast<char>(0xff);
  std::string path = dir.write("deflate.npz", bytes);
  Expected<CsrGraph> g = readNpzCsr(path);
  ASSERT_FALSE(g.isOk());
  EXPECT_EQ(g.message().rfind(path + ": member 'indptr': ", 0), 0u)
      << g.message();
}

TEST(NpzTest, ParseNpyHeaderErrors) {
  auto npy = [](const std::string &header, size_t dataBytes) {
    std::string h = header;
    while ((10 + h.size() + 1) % 64)
      h += ' ';
    h += '\n';
    std::string s = "\x93NUMPY";
    s += '\x01';
    s += '\x00';
    s += static_cast<char>(h.size() & 0xff);
    s += static_cast<char>(h.size() >> 8);
    s += h;
    s += std::string(dataBytes, '\0');
    return s;
  };
  auto parse = [](const std::string &s) {
    return parseNpy(reinterpret_cast<const uint8_t *>(s.data()), s.size(),
                    "x.npy");
  };
  EXPECT_TRUE(parse(npy("{'descr': '<i4', 'fortran_order': False, 'shape': "
                        "(3,), }",
                        12))
                  .isOk());
  expectError(parse(npy("{'descr': '<i4', 'fortran_order': False, 'shape': "
                        "(3,), }",
                        8)),
              {"x.npy: array data has 8 bytes, expected 12", "truncated"});
  expectError(parse(npy("{'descr': '<i4', 'shape': (3,), }", 12)),
              {"fortran_order"});
  expectError(parse(npy("{'descr': '<c8', 'fortran_order': False, 'shape': "
                        "(1,), }",
                        8)),
              {"unsupported dtype '<c8'"});
  expectError(parse(npy("{'descr': [('a', '<i4')], 'fortran_order': False, "
                        "'shape': (1,), }",
                        4)),
              {"structured dtypes"});
  expectError(parse(npy("{'descr': '<i4', 'fortran_order': False, 'shape': "
                        "(3, x), }",
                        12)),
              {"malformed header"});
  expectError(parse("\x93NUMPX\x01\x00"), {"bad magic"});
  std::string v9 = npy("{'descr': '<i4', 'fortran_order': False, 'shape': "
                       "(), }",
                       4);
  v9[6] = 9;
  expectError(parse(v9), {"unsupported .npy format version 9"});
}

} // namespace
