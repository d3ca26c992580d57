//===- ReadoutTest.cpp - CPU reference of per-graph pooling ---------------===//
#include "gnnc/reference/Readout.h"

#include <gtest/gtest.h>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

/// Three graphs: nodes {0, 1, 2}, none, {3}; edges do not matter.
BatchedGraph threeGraphs() {
  BatchedGraph b;
  b.graph.numRows = b.graph.numCols = 4;
  b.graph.rowPtr = {0, 0, 0, 0, 0};
  b.graphPtr = {0, 3, 3, 4};
  b.edgeGraphPtr = {0, 0, 0, 0};
  return b;
}

// Two features per node.
const float kX[] = {1, -2, 4, 5, 4, -1, -3, 7};

TEST(Readout, SumMeanAndMaxPerGraphWithAnEmptyGraph) {
  BatchedGraph b = threeGraphs();
  std::vector<double> y, mag;
  ref::readout(b, kX, 2, Reduce::Sum, y, &mag);
  EXPECT_EQ(y, (std::vector<double>{9, 2, 0, 0, -3, 7}));
  EXPECT_EQ(mag, (std::vector<double>{9, 8, 0, 0, 3, 7}));
  ref::readout(b, kX, 2, Reduce::Mean, y);
  EXPECT_EQ(y, (std::vector<double>{3, 2.0 / 3, 0, 0, -3, 7}));
  ref::readout(b, kX, 2, Reduce::Max, y, &mag);
  EXPECT_EQ(y, (std::vector<double>{4, 5, 0, 0, -3, 7}));
  EXPECT_EQ(mag, (std::vector<double>{4, 5, 0, 0, 3, 7}));
}

TEST(Readout, GradientGoesToEveryNodeOrToTheFirstMaximum) {
  BatchedGraph b = threeGraphs();
  const float dy[] = {10, 20, 30, 40, 50, 60};
  std::vector<double> dx;
  ref::readoutGrad(b, kX, nullptr, dy, 2, Reduce::Sum, dx);
  EXPECT_EQ(dx, (std::vector<double>{10, 20, 10, 20, 10, 20, 50, 60}));
  ref::readoutGrad(b, kX, nullptr, dy, 2, Reduce::Mean, dx);
  EXPECT_EQ(dx, (std::vector<double>{10.0 / 3, 20.0 / 3, 10.0 / 3, 20.0 / 3,
                                     10.0 / 3, 20.0 / 3, 50, 60}));
  // Feature 0's maximum 4 is reached by nodes 1 and 2: the first takes it.
  const float y[] = {4, 5, 0, 0, -3, 7};
  ref::readoutGrad(b, kX, y, dy, 2, Reduce::Max, dx);
  EXPECT_EQ(dx, (std::vector<double>{0, 0, 10, 20, 0, 0, 50, 60}));
}

} // namespace
