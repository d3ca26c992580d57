//===- TestGraphs.h - Graphs the GPU tests of kernels share -----*- C++ -*-===//
//
// Small graphs and graph checks of the GPU tests of kernels.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TEST_COMPILER_TESTGRAPHS_H
#define GNNC_TEST_COMPILER_TESTGRAPHS_H

#include "gnnc/graph/Csr.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

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

/// Runs of rows without edges: runs[i] empty rows, then (for i <
/// degrees.size()) a row of degrees[i] neighbours; runs may be one longer
/// than degrees, to end the graph with a run. Square, columns spread over
/// the graph.
inline graph::CsrGraph graphWithEmptyRuns(const std::vector<int64_t> &runs,
                                          const std::vector<int64_t> &degrees,
                                          const std::string &name) {
  graph::CsrGraph g;
  g.rowPtr.push_back(0);
  std::vector<int64_t> rowDegrees;
  for (size_t i = 0; i < runs.size(); ++i) {
    rowDegrees.insert(rowDegrees.end(), runs[i], 0);
    if (i < degrees.size())
      rowDegrees.push_back(degrees[i]);
  }
  g.numRows = g.numCols = static_cast<int64_t>(rowDegrees.size());
  for (int64_t r = 0; r < g.numRows; ++r) {
    const int64_t degree = std::min(rowDegrees[r], g.numCols);
    for (int64_t j = 0; j < degree; ++j)
      g.colIdx.push_back(static_cast<int32_t>((r * 7 + j) % g.numCols));
    std::sort(g.colIdx.end() - degree, g.colIdx.end());
    g.rowPtr.push_back(static_cast<int64_t>(g.colIdx.size()));
  }
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
