//===- SegmentMatmulGpuTest.cpp - The segmented matmuls on a GPU ----------===//
//
// Every segmented-matmul variant (SegmentMatmulVariants.h): the SIMT
// forward, the forward on tensor cores and the backward (the input
// gradient with transposed weights, the weight gradient with split rows
// and its deterministic reduction), each on ragged segments: a type
// without rows among others, types of 1 and of many rows, a last tile
// shorter than the others, many tiny types, one type, no rows at all. Each
// check draws fresh random inputs, poisons the output with NaN and compares
// every element with the double-precision CPU reference, within the
// tolerance of the kernel's arithmetic (ops::segmentMatmulTolerance: TF32's
// is 2^-9 of each output's term magnitude, justified there).
//
// Skips, saying why, when no GPU is present.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"
#include "SegmentMatmulVariants.h"

#include "gnnc/ops/SegmentMatmul.h"

#include <gtest/gtest.h>

#include <random>

using namespace gnnc;

namespace {

using ModuleText = std::string (*)(size_t *);

test::GpuKernels &load(ModuleText make, const char *name) {
  auto *k = new test::GpuKernels;
  size_t count = 0;
  std::string text = make(&count);
  test::loadGpuKernels(*k, text, name, count);
  return *k;
}

test::GpuKernels &simtKernels() {
  static test::GpuKernels &k =
      load(test::segmentMatmulModuleText, "segment.gnn");
  return k;
}
test::GpuKernels &tensorCoreKernels() {
  static test::GpuKernels &k =
      load(test::segmentMatmulTensorCoreModuleText, "segment_tc.gnn");
  return k;
}
test::GpuKernels &wgmmaKernels() {
  static test::GpuKernels &k =
      load(test::segmentMatmulWgmmaModuleText, "segment_wg.gnn");
  return k;
}
test::GpuKernels &backwardKernels() {
  static test::GpuKernels &k =
      load(test::segmentMatmulBackwardModuleText, "segment_bwd.gnn");
  return k;
}

/// The multiply-adds of the CPU reference on `rows` rows: kernels larger
/// than `maxWork` skip the case (the reference is single-threaded).
int64_t referenceWork(const OpDesc &op, int64_t rows) {
  return rows * op.inputWidth * op.width;
}

/// Checks every kernel of `k` on `seg` whose reference stays under
/// `maxWork` multiply-adds (0: no limit).
void checkAll(test::GpuKernels &k, const std::vector<int64_t> &seg,
              uint64_t seed, int64_t maxWork = 0) {
  if (!k.skipReason.empty())
    GTEST_SKIP() << k.skipReason;
  ASSERT_TRUE(k.error.empty()) << k.error;
  const int64_t rows = seg.empty() ? 0 : seg.back();
  size_t checked = 0;
  for (const rt::LoadedKernel &kernel : k.kernels) {
    ASSERT_TRUE(kernel.spec.op) << kernel.spec.name;
    if (maxWork > 0 && referenceWork(*kernel.spec.op, rows) > maxWork)
      continue;
    auto check =
        kernel.spec.op->kind == OpKind::SegmentMatmulWeightGrad
            ? ops::checkSegmentMatmulWeightGrad(*k.runtime, kernel, seg, seed++)
            : ops::checkSegmentMatmul(*k.runtime, kernel, seg, seed++);
    ASSERT_TRUE(check) << kernel.spec.name << ": " << check.message();
    EXPECT_TRUE(check->ok) << check->report;
    ++checked;
  }
  EXPECT_GT(checked, 0u);
}

/// Types of 1, 0, 17, 64 and 100 rows: tiles of 64 (16, 128) rows end
/// early, splits of 7 or 32 rows cut types in several.
const std::vector<int64_t> kRagged = {0, 1, 1, 18, 82, 182};
/// 20,000 rows of type 1 among types of 3, 2 and 0 rows: far more tiles
/// than resident blocks, so each block walks a run of them with the same
/// weights (and the weight gradient adds many partials).
const std::vector<int64_t> kHuge = {0, 3, 20003, 20005, 20005};
/// 2,000 rows of one type between two types of one row.
const std::vector<int64_t> kLarge = {0, 1, 2001, 2002};

/// 400 types of 0 to 3 rows each (fixed seed): many tiny tiles, many
/// weight matrices, many empty types.
std::vector<int64_t> manyTinyTypes() {
  std::mt19937_64 rng(7);
  std::vector<int64_t> seg = {0};
  for (int t = 0; t < 400; ++t)
    seg.push_back(seg.back() + int64_t(rng() % 4));
  return seg;
}

// The reference's work limits: 20,000 rows of up to 128 x 128; 2,000 rows
// of anything (512 x 512 is 0.5 G multiply-adds).
constexpr int64_t kHugeWork = 20005ll * 128 * 128;

TEST(SegmentMatmulGpu, RaggedSegmentsWithAnEmptyType) {
  checkAll(simtKernels(), kRagged, 1);
}

TEST(SegmentMatmulGpu, OneHugeTypeAmongSmallOnes) {
  checkAll(simtKernels(), kHuge, 2);
}

TEST(SegmentMatmulGpu, OneTypeAndNoRows) {
  checkAll(simtKernels(), {0, 777}, 3);
  checkAll(simtKernels(), {0, 0, 0}, 4);
}

TEST(SegmentMatmulGpu, ManyTinyTypes) {
  checkAll(simtKernels(), manyTinyTypes(), 5);
}

TEST(SegmentMatmulTensorCoreGpu, RaggedSegmentsWithAnEmptyType) {
  checkAll(tensorCoreKernels(), kRagged, 11);
}

TEST(SegmentMatmulTensorCoreGpu, OneHugeTypeAmongSmallOnes) {
  checkAll(tensorCoreKernels(), kHuge, 12, kHugeWork);
  checkAll(tensorCoreKernels(), kLarge, 13);
}

TEST(SegmentMatmulTensorCoreGpu, OneTypeAndNoRows) {
  checkAll(tensorCoreKernels(), {0, 777}, 14);
  checkAll(tensorCoreKernels(), {0, 1}, 15);
  checkAll(tensorCoreKernels(), {0, 0, 0}, 16);
}

TEST(SegmentMatmulTensorCoreGpu, ManyTinyTypes) {
  checkAll(tensorCoreKernels(), manyTinyTypes(), 17);
}

// math = wgmma needs compute capability 9.0 (sm_90a): the tests skip,
// saying so, on other GPUs.
void checkWgmma(const std::vector<int64_t> &seg, uint64_t seed,
                int64_t maxWork = 0) {
  test::GpuKernels &k = wgmmaKernels();
  if (k.skipReason.empty() && k.runtime &&
      k.runtime->device().computeCapability() != std::make_pair(9, 0))
    GTEST_SKIP() << "math = wgmma runs on compute capability 9.0 only";
  checkAll(k, seg, seed, maxWork);
}

TEST(SegmentMatmulWgmmaGpu, RaggedSegmentsWithAnEmptyType) {
  checkWgmma(kRagged, 31);
}

TEST(SegmentMatmulWgmmaGpu, OneHugeTypeAmongSmallOnes) {
  checkWgmma(kHuge, 32, kHugeWork);
  checkWgmma(kLarge, 33);
}

TEST(SegmentMatmulWgmmaGpu, OneTypeAndNoRows) {
  checkWgmma({0, 777}, 34);
  checkWgmma({0, 1}, 35);
  checkWgmma({0, 0, 0}, 36);
}

TEST(SegmentMatmulWgmmaGpu, ManyTinyTypes) { checkWgmma(manyTinyTypes(), 37); }

TEST(SegmentMatmulBackwardGpu, RaggedSegmentsWithAnEmptyType) {
  checkAll(backwardKernels(), kRagged, 21);
}

TEST(SegmentMatmulBackwardGpu, OneHugeTypeAmongSmallOnes) {
  checkAll(backwardKernels(), kHuge, 22, kHugeWork);
  checkAll(backwardKernels(), kLarge, 23);
}

TEST(SegmentMatmulBackwardGpu, OneTypeAndNoRows) {
  checkAll(backwardKernels(), {0, 777}, 24);
  checkAll(backwardKernels(), {0, 1}, 25);
  // No rows: the weight gradient is all zeros (not the poison).
  checkAll(backwardKernels(), {0, 0, 0}, 26);
}

TEST(SegmentMatmulBackwardGpu, ManyTinyTypes) {
  checkAll(backwardKernels(), manyTinyTypes(), 27);
}

} // namespace
