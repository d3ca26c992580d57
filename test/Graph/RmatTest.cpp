//===- RmatTest.cpp - Synthetic graph generators --------------------------===//

#include "gnnc/graph/Rmat.h"

#include <gtest/gtest.h>

#include <chrono>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

TEST(RmatTest, DeterministicAndValid) {
  CsrGraph a = generateRmat(12, 8, 42);
  CsrGraph b = generateRmat(12, 8, 42);
  ASSERT_TRUE(a.validate().isOk()) << a.validate().message();
  EXPECT_TRUE(a.isSortedAndUnique());
  EXPECT_EQ(a.numRows, 4096);
  EXPECT_EQ(a.rowPtr, b.rowPtr);
  EXPECT_EQ(a.colIdx, b.colIdx);
  // Duplicates removed: fewer than the sampled count, but most survive.
  EXPECT_LE(a.nnz(), 8 << 12);
  EXPECT_GT(a.nnz(), (8 << 12) / 2);
  EXPECT_EQ(computeStats(a).selfLoops, 0);
  CsrGraph c = generateRmat(12, 8, 43);
  EXPECT_NE(a.colIdx, c.colIdx);
}

TEST(RmatTest, PowerLawSkew) {
  CsrGraph g = generateRmat(14, 16, 1);
  Stats s = computeStats(g);
  // R-MAT with Graph500 parameters is heavily skewed.
  EXPECT_GT(s.maxDegree, 20 * s.meanDegree) << formatStats(s);
  EXPECT_GT(s.emptyRows, 0);
}

TEST(RmatTest, Symmetrize) {
  CsrGraph g = generateRmat(10, 4, 5, 0.57, 0.19, 0.19, /*symmetrize=*/true,
                            /*removeSelfLoops=*/false);
  ASSERT_TRUE(g.validate().isOk());
  CsrGraph t = transpose(g);
  EXPECT_EQ(t.rowPtr, g.rowPtr);
  EXPECT_EQ(t.colIdx, g.colIdx);
}

TEST(RmatTest, Scale20IsFast) {
  auto start = std::chrono::steady_clock::now();
  CsrGraph g = generateRmat(20, 16, 7);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_EQ(g.numRows, 1 << 20);
  EXPECT_GT(g.nnz(), 10000000);
  EXPECT_LT(seconds, 20.0);
  std::printf("scale 20 R-MAT: nnz %lld in %.2f s\n",
              static_cast<long long>(g.nnz()), seconds);
}

TEST(RmatTest, UniformRandom) {
  CsrGraph g = generateUniformRandom(1000, 500, 7.5, 3);
  ASSERT_TRUE(g.validate().isOk()) << g.validate().message();
  EXPECT_TRUE(g.isSortedAndUnique());
  Stats s = computeStats(g);
  EXPECT_GE(s.minDegree, 7);
  EXPECT_LE(s.maxDegree, 8);
  EXPECT_NEAR(s.meanDegree, 7.5, 0.2);
  CsrGraph again = generateUniformRandom(1000, 500, 7.5, 3);
  EXPECT_EQ(g.colIdx, again.colIdx);
  // Dense rows (degree > numCols / 2) and capping at numCols.
  CsrGraph dense = generateUniformRandom(10, 20, 15, 1);
  EXPECT_EQ(dense.nnz(), 150);
  EXPECT_TRUE(dense.isSortedAndUnique());
  CsrGraph full = generateUniformRandom(4, 3, 10, 1);
  EXPECT_EQ(full.nnz(), 12);
}

TEST(RmatTest, RaggedTestGraph) {
  CsrGraph g = makeRaggedTestGraph(9, 5000, 12000, /*withValues=*/true);
  ASSERT_TRUE(g.validate().isOk()) << g.validate().message();
  EXPECT_TRUE(g.isSortedAndUnique());
  Stats s = computeStats(g);
  EXPECT_EQ(g.numRows, 5000);
  EXPECT_EQ(g.numCols, 12000);
  EXPECT_EQ(s.maxDegree, 12000);
  EXPECT_EQ(g.degree(2500), 12000);
  EXPECT_EQ(g.degree(0), 0);
  EXPECT_EQ(g.degree(4999), 0);
  EXPECT_GT(s.emptyRows, 500);
  int64_t degreeOne = 0;
  for (int64_t r = 0; r < g.numRows; ++r)
    degreeOne += g.degree(r) == 1;
  EXPECT_GT(degreeOne, 500);
  EXPECT_EQ(g.values.size(), static_cast<size_t>(g.nnz()));
  CsrGraph again = makeRaggedTestGraph(9, 5000, 12000, true);
  EXPECT_EQ(g.colIdx, again.colIdx);
  EXPECT_EQ(g.values, again.values);
  // Defaults: square, one row of degree 10,000.
  CsrGraph d = makeRaggedTestGraph(1);
  EXPECT_EQ(d.numRows, d.numCols);
  EXPECT_EQ(computeStats(d).maxDegree, 10000);
}

} // namespace
