//===- SpmmScaledTest.cpp - CPU reference of mean and degree scaling ------===//

#include "TestUtil.h"

#include "gnnc/graph/Rmat.h"
#include "gnnc/reference/Spmm.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace gnnc;
using namespace gnnc::graph;
using namespace gnnc::ref;

namespace {

/// The three-row graph with a fourth column without non-zeros.
CsrGraph tinyGraph() { return test::threeRowGraph(/*numCols=*/4); }

const std::vector<float> kX = {1, 2,  // node 0
                               3, 4,  // node 1
                               5, -6, // node 2
                               7, 8}; // node 3 (never read)

/// ref::spmm of kX (width 2) on the tiny graph, with its edge values or
/// without; `absRef` receives the magnitudes of the terms.
std::vector<double> tinySpmm(gnnc::Reduce reduce, DegreeScale scale,
                             bool withValues,
                             std::vector<double> *absRef = nullptr) {
  CsrGraph g = tinyGraph();
  if (!withValues)
    g.values.clear();
  std::vector<double> y;
  spmm(g, nullptr, kX.data(), 2, reduce, scale, y, absRef);
  return y;
}

void expectNear(const std::vector<double> &got,
                const std::vector<double> &expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], 1e-12) << "element " << i;
}

TEST(SpmmScaledTest, ColumnNormFactors) {
  std::vector<double> f = columnNormFactors(tinyGraph());
  expectNear(f, {1, 1, 1 / std::sqrt(2.0), 0});
}

TEST(SpmmScaledTest, MeanDividesByTheRowDegree) {
  std::vector<double> absRef;
  std::vector<double> y = tinySpmm(gnnc::Reduce::Mean, DegreeScale::None,
                                   /*withValues=*/false, &absRef);
  // Sums (8, -2), 0, (6, -4); the empty row stays 0.
  expectNear(y, {4, -1, 0, 0, 3, -2});
  expectNear(absRef, {4, 5, 0, 0, 3, 4});
}

TEST(SpmmScaledTest, LeftScalesRows) {
  std::vector<double> y =
      tinySpmm(gnnc::Reduce::Sum, DegreeScale::Left, /*withValues=*/false);
  const double s = 1 / std::sqrt(2.0);
  expectNear(y, {8 * s, -2 * s, 0, 0, 6 * s, -4 * s});
}

TEST(SpmmScaledTest, RightScalesColumnsWithEdgeValues) {
  std::vector<double> y =
      tinySpmm(gnnc::Reduce::Sum, DegreeScale::Right, /*withValues=*/true);
  const double s = 1 / std::sqrt(2.0);
  // Row 0: 2 * x1 - x2 / sqrt(2); row 2: 0.5 * x0 + 3 * x2 / sqrt(2).
  expectNear(y, {6 - 5 * s, 8 + 6 * s, 0, 0, 0.5 + 15 * s, 1 - 18 * s});
}

TEST(SpmmScaledTest, BothIsGcnNormalization) {
  std::vector<double> y =
      tinySpmm(gnnc::Reduce::Sum, DegreeScale::Both, /*withValues=*/false);
  const double s = 1 / std::sqrt(2.0);
  // D_out^-1/2 A D_in^-1/2 x.
  expectNear(y, {(3 + 5 * s) * s, (4 - 6 * s) * s, 0, 0, (1 + 5 * s) * s,
                 (2 - 6 * s) * s});
  // Mean composes with both: one more 1/deg_out per row.
  std::vector<double> mean =
      tinySpmm(gnnc::Reduce::Mean, DegreeScale::Both, /*withValues=*/false);
  expectNear(mean, {y[0] / 2, y[1] / 2, 0, 0, y[4] / 2, y[5] / 2});
}

TEST(SpmmScaledTest, MaxTakesTheLargestTerm) {
  std::vector<double> absRef;
  std::vector<double> y = tinySpmm(gnnc::Reduce::Max, DegreeScale::None,
                                   /*withValues=*/true, &absRef);
  // Row 0: max(2 * (3, 4), -(5, -6)) = (6, 8); row 1: empty, 0;
  // row 2: max(0.5 * (1, 2), 3 * (5, -6)) = (15, 1).
  expectNear(y, {6, 8, 0, 0, 15, 1});
  expectNear(absRef, {6, 8, 0, 0, 15, 1});
  // All-negative terms: the maximum is negative, not 0.
  std::vector<float> negative = {-1, -2, -3, -4, -5, -6, -7, -8};
  CsrGraph g = tinyGraph();
  g.values.clear();
  spmm(g, nullptr, negative.data(), 2, gnnc::Reduce::Max, DegreeScale::Both, y);
  const double s = 1 / std::sqrt(2.0);
  // Row 0: max(x1, x2 / sqrt(2)) / sqrt(2).
  expectNear(y, {-3 * s, -4 * s, 0, 0, -1 * s, -2 * s});
}

TEST(SpmmScaledTest, SumWithoutScalingMatchesSpmmSum) {
  CsrGraph g = makeRaggedTestGraph(3, 2000, 3000, true);
  std::vector<float> x = randomFeatures(g.numCols * 8, 5);
  std::vector<double> a, b, absA, absB;
  spmmSum(g, nullptr, x.data(), 8, a, &absA);
  spmm(g, nullptr, x.data(), 8, gnnc::Reduce::Sum, DegreeScale::None, b, &absB);
  EXPECT_EQ(a, b);
  EXPECT_EQ(absA, absB);
}

} // namespace
