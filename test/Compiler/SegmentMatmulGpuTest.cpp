//===- SegmentMatmulGpuTest.cpp - gnn.segment_matmul on a GPU -------------===//
//
// Every gnn.segment_matmul variant (SegmentMatmulVariants.h) on ragged
// segments (an empty type among others, a type of many tiles beside types
// of a few rows, a last tile shorter than the others, no rows at all), with
// fresh random inputs and weights and NaN-poisoned outputs, against the
// double-precision CPU reference.
//
// Skips, saying why, when no GPU is present.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"
#include "SegmentMatmulVariants.h"

#include "gnnc/ops/SegmentMatmul.h"

#include <gtest/gtest.h>

using namespace gnnc;

namespace {

test::GpuKernels &kernels() {
  static test::GpuKernels *k = [] {
    auto *k = new test::GpuKernels;
    size_t count = 0;
    std::string text = test::segmentMatmulModuleText(&count);
    test::loadGpuKernels(*k, text, "segment.gnn", count);
    return k;
  }();
  return *k;
}

void checkAll(const std::vector<int64_t> &seg, uint64_t seed) {
  test::GpuKernels &k = kernels();
  if (!k.skipReason.empty())
    GTEST_SKIP() << k.skipReason;
  ASSERT_TRUE(k.error.empty()) << k.error;
  for (const rt::LoadedKernel &kernel : k.kernels) {
    auto check = ops::checkSegmentMatmul(*k.runtime, kernel, seg, seed++);
    ASSERT_TRUE(check) << kernel.spec.name << ": " << check.message();
    EXPECT_TRUE(check->ok) << check->report;
  }
}

TEST(SegmentMatmulGpu, RaggedSegmentsWithAnEmptyType) {
  // Types of 1, 0, 17, 64 and 100 rows: tiles of 64 (16) rows end early.
  checkAll({0, 1, 1, 18, 82, 182}, 1);
}

TEST(SegmentMatmulGpu, OneHugeTypeAmongSmallOnes) {
  // 20,000 rows of type 1: far more tiles than resident blocks, so each
  // block walks a run of them with the same weights.
  checkAll({0, 3, 20003, 20005, 20005}, 2);
}

TEST(SegmentMatmulGpu, OneTypeAndNoRows) {
  checkAll({0, 777}, 3);
  checkAll({0, 0, 0}, 4);
}

} // namespace
