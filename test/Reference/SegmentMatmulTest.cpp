//===- SegmentMatmulTest.cpp - CPU references of the segmented matmuls ----===//
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

TEST(SegmentMatmulReference, InputGradientReadsTheWeightsTransposed) {
  // The forward's types, K = 2, M = 3: dx[r] = dy[r] W_tᵀ.
  const int64_t seg[] = {0, 2, 2, 3};
  const float dy[] = {1, 0, -1, 2, 1, 0, 1, 1, 1};
  const float w[] = {1,    0,   2,   0,   1,   -1,  // type 0
                     100,  100, 100, 100, 100, 100, // type 1 (no rows)
                     0.5f, 1,   0,   2,   -1,  1};  // type 2
  std::vector<double> dx, mag;
  ref::segmentMatmulInputGrad(dy, w, seg, 3, 2, 3, dx, &mag);
  EXPECT_EQ(dx, (std::vector<double>{-1, 1,     // [1 0 -1] W0ᵀ
                                     2, 1,      // [2 1 0] W0ᵀ
                                     1.5, 2})); // [1 1 1] W2ᵀ
  EXPECT_EQ(mag[0], 3.0);                       // |1*1| + |-1*2|
  EXPECT_EQ(mag[5], 4.0);
}

TEST(SegmentMatmulReference, WeightGradientSumsEachTypesRows) {
  // K = 2, M = 1: dw[t] = X_tᵀ dY_t; the type without rows gets zeros.
  const int64_t seg[] = {0, 2, 2, 3};
  const float x[] = {1, 2, -1, 0.5f, 3, -2};
  const float dy[] = {2, 4, -1};
  std::vector<double> dw, mag;
  ref::segmentMatmulWeightGrad(x, dy, seg, 3, 2, 1, dw, &mag);
  EXPECT_EQ(dw, (std::vector<double>{1 * 2 + -1 * 4, 2 * 2 + 0.5 * 4, // type 0
                                     0, 0,                            // type 1
                                     -3, 2}));                        // type 2
  EXPECT_EQ(mag[0], 6.0);
  EXPECT_EQ(mag[2], 0.0);
}

} // namespace
