//===- TestUtil.h - Helpers for the reference tests -------------*- C++ -*-===//
//
// Small graphs and comparisons shared by the tests of gnnc_reference and by
// the tests of the ops that compose it (test/Graph/BackwardTest.cpp, which
// includes this as "Reference/TestUtil.h").
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TEST_REFERENCE_TESTUTIL_H
#define GNNC_TEST_REFERENCE_TESTUTIL_H

#include "gnnc/graph/Csr.h"
#include "gnnc/reference/Spmm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::test {

/// Three rows with edge values, 0 <- {1 (w 2), 2 (w -1)}, 1 <- {},
/// 2 <- {0 (w 0.5), 2 (w 3)}, and `numCols` columns (3 or more):
/// deg_out = (2, 0, 2), deg_in = (1, 1, 2), columns from 3 on have no
/// non-zeros.
inline graph::CsrGraph threeRowGraph(int64_t numCols = 3) {
  graph::CsrGraph g;
  g.numRows = 3;
  g.numCols = numCols;
  g.rowPtr = {0, 2, 2, 4};
  g.colIdx = {1, 2, 0, 2};
  g.values = {2, -1, 0.5f, 3};
  return g;
}

/// 6 x 5: an empty first row, a row of one edge, a row of every column, an
/// empty column (3) and an empty last row; values in [-1, 1).
inline graph::CsrGraph backwardTestGraph() {
  auto g = graph::fromCoo(6, 5, {1, 2, 2, 2, 2, 3, 3, 4},
                          {2, 0, 1, 2, 4, 4, 0, 1}, ref::randomFeatures(8, 99));
  EXPECT_TRUE(g) << g.message();
  g->name = "tiny";
  return g.take();
}

/// Every element of `got` within tol * (1 + |expected|) of `expected`.
inline void expectNear(const std::vector<double> &got,
                       const std::vector<double> &expected, double tol,
                       const std::string &what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], tol * (1 + std::fabs(expected[i])))
        << what << " at " << i;
}

/// The reductions that have gradients, and every degree scaling.
inline const gnnc::Reduce kGradReduces[] = {gnnc::Reduce::Sum,
                                               gnnc::Reduce::Mean};
inline const gnnc::DegreeScale kDegreeScales[] = {
    gnnc::DegreeScale::None, gnnc::DegreeScale::Left, gnnc::DegreeScale::Right,
    gnnc::DegreeScale::Both};

} // namespace gnnc::test

#endif // GNNC_TEST_REFERENCE_TESTUTIL_H
