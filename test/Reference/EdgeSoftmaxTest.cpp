//===- EdgeSoftmaxTest.cpp - CPU reference of edge softmax ----------------===//

#include "gnnc/reference/EdgeSoftmax.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/reference/Spmm.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace gnnc;
using namespace gnnc::graph;
using namespace gnnc::ref;

namespace {

TEST(EdgeSoftmaxTest, HandComputedTwoHeads) {
  // Row 0: edges 0, 1; row 1: empty; row 2: edge 2 alone; row 3: edges 3-5.
  CsrGraph g;
  g.numRows = 4;
  g.numCols = 4;
  g.rowPtr = {0, 2, 2, 3, 6};
  g.colIdx = {1, 2, 0, 0, 1, 3};
  // Two heads per edge.
  std::vector<float> logits = {0,  1,  // edge 0
                               0,  3,  // edge 1
                               -5, 7,  // edge 2
                               1,  0,  // edge 3
                               2,  0,  // edge 4
                               3,  0}; // edge 5
  std::vector<double> out;
  edgeSoftmax(g, logits.data(), 2, out);
  ASSERT_EQ(out.size(), 12u);
  const double e = std::exp(1.0);
  const std::vector<double> expected = {0.5,
                                        1 / (1 + e * e), // edge 0
                                        0.5,
                                        e * e / (1 + e * e), // edge 1
                                        1,
                                        1, // edge 2: alone in its row
                                        1 / (1 + e + e * e),
                                        1.0 / 3, // edge 3
                                        e / (1 + e + e * e),
                                        1.0 / 3, // edge 4
                                        e * e / (1 + e + e * e),
                                        1.0 / 3}; // edge 5
  for (size_t i = 0; i < out.size(); ++i)
    EXPECT_NEAR(out[i], expected[i], 1e-15) << "element " << i;
}

TEST(EdgeSoftmaxTest, LargeLogitsAreStable) {
  CsrGraph g;
  g.numRows = g.numCols = 1;
  g.rowPtr = {0, 3};
  g.colIdx = {0, 0, 0};
  std::vector<float> logits = {1000, 1000, -1000};
  std::vector<double> out;
  edgeSoftmax(g, logits.data(), 1, out);
  EXPECT_DOUBLE_EQ(out[0], 0.5);
  EXPECT_DOUBLE_EQ(out[1], 0.5);
  EXPECT_DOUBLE_EQ(out[2], 0.0);
}

TEST(EdgeSoftmaxTest, EachRowAndHeadSumsToOne) {
  CsrGraph g = makeRaggedTestGraph(5, 500, 800);
  const int64_t heads = 4;
  std::vector<float> logits = randomFeatures(g.nnz() * heads, 9, -8, 8);
  std::vector<double> out;
  edgeSoftmax(g, logits.data(), heads, out);
  for (int64_t r = 0; r < g.numRows; ++r) {
    if (g.degree(r) == 0)
      continue;
    for (int64_t h = 0; h < heads; ++h) {
      double sum = 0;
      for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e) {
        EXPECT_GE(out[e * heads + h], 0.0);
        sum += out[e * heads + h];
      }
      EXPECT_NEAR(sum, 1.0, 1e-12) << "row " << r << ", head " << h;
    }
  }
}

} // namespace
