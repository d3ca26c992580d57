//===- SegmentMatmulTest.cpp - CPU reference of gnn.segment_matmul --------===//
#include "gnnc/reference/SegmentMatmul.h"

#include <gtest/gtest.h>

using namespace gnnc;

namespace {

TEST(SegmentMatmulReference, EachTypeItsOwnWeightsWithAnEmptyType) {
  // Three types: rows {0, 1}, none, {2}; K = 2, M = 3.
  const int64_t seg[] = {0, 2, 2, 3};
  const float x[] = {1, 2, -1, 0.5f, 3, -2};
  const float w[] = {// type 0
                     1, 0, 2, 0, 1, -1,
                     // type 1 (no rows: never read into y)
                     100, 100, 100, 100, 100, 100,
                     // type 2
                     0.5f, 1, 0, 2, -1, 1};
  std::vector<double> y, mag;
  ref::segmentMatmul(x, w, seg, 3, 2, 3, y, &mag);
  EXPECT_EQ(y, (std::vector<double>{1, 2, 0,        // [1 2] W0
                                    -1, 0.5, -2.5,  // [-1 0.5] W0
                                    -2.5, 5, -2})); // [3 -2] W2
  EXPECT_EQ(mag[2], 4.0);                           // |1*2| + |2*-1|
  EXPECT_EQ(mag[8], 2.0);
}

TEST(SegmentMatmulReference, NoRowsGiveNoResult) {
  const int64_t seg[] = {0, 0, 0};
  const float w[] = {1, 2};
  std::vector<double> y = {7};
  ref::segmentMatmul(nullptr, w, seg, 2, 1, 1, y);
  EXPECT_TRUE(y.empty());
}

} // namespace
