//===- CsrTest.cpp - CsrGraph helpers -------------------------------------===//

#include "gnnc/graph/Csr.h"

#include <gtest/gtest.h>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

CsrGraph smallGraph() {
  // 0 -> {1, 2}, 1 -> {}, 2 -> {0, 2}
  CsrGraph g;
  g.numRows = g.numCols = 3;
  g.rowPtr = {0, 2, 2, 4};
  g.colIdx = {1, 2, 0, 2};
  g.values = {1, 2, 3, 4};
  return g;
}

TEST(CsrTest, ValidateAcceptsGoodGraph) {
  CsrGraph g = smallGraph();
  EXPECT_TRUE(g.validate().isOk()) << g.validate().message();
  EXPECT_EQ(g.nnz(), 4);
  EXPECT_TRUE(g.isSortedAndUnique());
}

TEST(CsrTest, ValidateReportsFirstViolation) {
  CsrGraph g = smallGraph();
  g.rowPtr = {0, 2, 4};
  EXPECT_NE(g.validate().message().find("rowPtr has 3 entries"),
            std::string::npos)
      << g.validate().message();

  g = smallGraph();
  g.rowPtr[0] = 1;
  EXPECT_NE(g.validate().message().find("rowPtr[0] is 1"), std::string::npos);

  g = smallGraph();
  g.rowPtr = {0, 3, 2, 4};
  EXPECT_NE(g.validate().message().find("not monotone: rowPtr[1] = 3"),
            std::string::npos)
      << g.validate().message();

  g = smallGraph();
  g.rowPtr.back() = 3;
  EXPECT_NE(g.validate().message().find("colIdx has 4 entries"),
            std::string::npos);

  g = smallGraph();
  g.colIdx[3] = 3;
  EXPECT_NE(g.validate().message().find("colIdx[3] = 3 (row 2) is out of "
                                        "range [0, 3)"),
            std::string::npos)
      << g.validate().message();

  g = smallGraph();
  g.values.pop_back();
  EXPECT_NE(g.validate().message().find("values has 3 entries"),
            std::string::npos);
}

TEST(CsrTest, ThirtyTwoBitConversions) {
  CsrGraph g = smallGraph();
  Expected<std::vector<int32_t>> cols = g.colIdx32();
  ASSERT_TRUE(cols.isOk());
  EXPECT_EQ(*cols, (std::vector<int32_t>{1, 2, 0, 2}));
  Expected<std::vector<int32_t>> rows = g.rowPtr32();
  ASSERT_TRUE(rows.isOk());
  EXPECT_EQ(*rows, (std::vector<int32_t>{0, 2, 2, 4}));

  // A fake huge graph: rowPtr claims 3e9 entries.
  CsrGraph big;
  big.numRows = 1;
  big.numCols = 1;
  big.rowPtr = {0, 3000000000ll};
  Expected<std::vector<int32_t>> bad = big.rowPtr32();
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.message().find(
                "32-bit overflow: nnz 3000000000 does not fit i32 row offsets"),
            std::string::npos)
      << bad.message();
  big.colIdx = {5000000000ll};
  big.numCols = 5000000001ll;
  EXPECT_FALSE(big.colIdx32().isOk());
}

TEST(CsrTest, Transpose) {
  CsrGraph t = transpose(smallGraph());
  ASSERT_TRUE(t.validate().isOk()) << t.validate().message();
  // Column 0 <- row 2; column 1 <- row 0; column 2 <- rows 0, 2.
  EXPECT_EQ(t.rowPtr, (std::vector<int64_t>{0, 1, 2, 4}));
  EXPECT_EQ(t.colIdx, (std::vector<int64_t>{2, 0, 0, 2}));
  EXPECT_EQ(t.values, (std::vector<float>{3, 1, 2, 4}));
  CsrGraph tt = transpose(t);
  EXPECT_EQ(tt.rowPtr, smallGraph().rowPtr);
  EXPECT_EQ(tt.colIdx, smallGraph().colIdx);
  EXPECT_EQ(tt.values, smallGraph().values);
}

TEST(CsrTest, FromCooSumsOrKeepsDuplicates) {
  std::vector<int64_t> rows = {2, 0, 0, 2, 0};
  std::vector<int64_t> cols = {1, 3, 1, 1, 3};
  std::vector<float> vals = {1, 2, 3, 4, 5};
  Expected<CsrGraph> sum = fromCoo(3, 4, rows, cols, vals, Duplicates::Sum);
  ASSERT_TRUE(sum.isOk()) << sum.message();
  EXPECT_EQ(sum->rowPtr, (std::vector<int64_t>{0, 2, 2, 3}));
  EXPECT_EQ(sum->colIdx, (std::vector<int64_t>{1, 3, 1}));
  EXPECT_EQ(sum->values, (std::vector<float>{3, 7, 5}));
  Expected<CsrGraph> first =
      fromCoo(3, 4, rows, cols, vals, Duplicates::KeepFirst);
  ASSERT_TRUE(first.isOk());
  EXPECT_EQ(first->values, (std::vector<float>{3, 2, 1}));
  Expected<CsrGraph> pattern = fromCoo(3, 4, rows, cols, {});
  ASSERT_TRUE(pattern.isOk());
  EXPECT_TRUE(pattern->values.empty());
  EXPECT_EQ(pattern->nnz(), 3);

  Expected<CsrGraph> bad = fromCoo(3, 4, {0, 3}, {0, 0}, {});
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.message().find("row index 3 at position 1"), std::string::npos)
      << bad.message();
  EXPECT_FALSE(fromCoo(3, 4, {0}, {0, 1}, {}).isOk());
}

TEST(CsrTest, Stats) {
  Stats s = computeStats(smallGraph());
  EXPECT_EQ(s.minDegree, 0);
  EXPECT_EQ(s.maxDegree, 2);
  EXPECT_EQ(s.emptyRows, 1);
  EXPECT_EQ(s.selfLoops, 1);
  EXPECT_DOUBLE_EQ(s.meanDegree, 4.0 / 3.0);
  EXPECT_FALSE(formatStats(s).empty());
}

TEST(CsrTest, PermuteRandomlyIsAnIsomorphism) {
  CsrGraph g = smallGraph();
  CsrGraph p = permuteRandomly(g, 7);
  ASSERT_TRUE(p.validate().isOk()) << p.validate().message();
  EXPECT_TRUE(p.isSortedAndUnique());
  EXPECT_EQ(p.nnz(), g.nnz());
  Stats a = computeStats(g), b = computeStats(p);
  EXPECT_EQ(a.selfLoops, b.selfLoops);
  EXPECT_EQ(a.emptyRows, b.emptyRows);
  // Deterministic.
  CsrGraph q = permuteRandomly(g, 7);
  EXPECT_EQ(p.colIdx, q.colIdx);
  EXPECT_EQ(p.values, q.values);
  // Value sum is preserved.
  float sum = 0;
  for (float v : p.values)
    sum += v;
  EXPECT_EQ(sum, 10.0f);
}

} // namespace
