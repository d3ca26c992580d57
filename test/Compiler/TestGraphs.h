//===- TestGraphs.h - Graphs the GPU tests of kernels share -----*- C++ -*-===//
//
// Small graphs and graph checks of SpmmGpuTest.cpp and BackwardGpuTest.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TEST_COMPILER_TESTGRAPHS_H
#define GNNC_TEST_COMPILER_TESTGRAPHS_H

#include "gnnc/graph/Csr.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace gnnc::test {

/// `numRows` rows of `numCols` columns and no edges, named `name`.
inline graph::CsrGraph graphWithoutEdges(int64_t numRows, int64_t numCols,
                                         const std::string &name) {
  graph::CsrGraph g;
  g.numRows = numRows;
  g.numCols = numCols;
  g.rowPtr.assign(numRows + 1, 0);
  g.name = name;
  return g;
}

/// Asserts that `g` has an empty row and a row of at least `hub` edges.
inline void expectRagged(const graph::CsrGraph &g, int64_t hub) {
  int64_t maxDegree = 0, empty = 0;
  for (int64_t r = 0; r < g.numRows; ++r) {
    maxDegree = std::max(maxDegree, g.degree(r));
    empty += g.degree(r) == 0;
  }
  ASSERT_GE(maxDegree, hub);
  ASSERT_GT(empty, 0);
}

} // namespace gnnc::test

#endif // GNNC_TEST_COMPILER_TESTGRAPHS_H
