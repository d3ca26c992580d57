//===- SegmentMatmulVariants.h - Segmented matmul kernels to test -*- C++
//-*-===//
//
// The segmented-matmul kernels the NVRTC sweep compiles and the GPU tests
// run.
//  - segmentMatmulModuleText: the SIMT forward (math = simt, and the
//    default, which is SIMT for f32 and for odd K or M): f32, f16 and bf16;
//    odd and even K and M (vector widths 1 to 8, one to four chunks per
//    lane); the default schedule and one of single-element loads, a warp
//    per row and tiles of 16 rows.
//  - segmentMatmulTensorCoreModuleText: the forward on tensor cores (TF32
//    for f32, f16, bf16) for K and M of 8 to 512, tiles of 16, 64 and 128
//    rows, 2 to 4 pipeline stages, warp tiles of 32 and 64 rows; and an
//    unaligned K left to the default (SIMT).
//  - segmentMatmulWgmmaModuleText: the forward and the input gradient on
//    Hopper's warpgroup instructions (math = wgmma; sm_90a), f16, bf16 and
//    f32 (TF32), and the weight gradient in f16 and bf16.
//  - segmentMatmulBackwardModuleText: the input gradient (transposed
//    weights) and the weight gradient, each on tensor cores (warp tiles of
//    32 and 64 rows) and in SIMT, with small and large splits.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TEST_COMPILER_SEGMENT_MATMUL_VARIANTS_H
#define GNNC_TEST_COMPILER_SEGMENT_MATMUL_VARIANTS_H

#include "gnnc/Plan/OpText.h"
#include "gnnc/Plan/Types.h"

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace gnnc::test {

/// One kernel: its name, op and schedule (none: the op's defaults).
struct SegmentVariant {
  std::string name;
  OpDesc op;
  std::optional<Schedule> schedule;
};

/// The element types every list covers, and their short names.
inline constexpr ElementType kSegmentTypes[] = {
    ElementType::F32, ElementType::F16, ElementType::BF16};

/// A gnn.module of `variants`; `count` receives their number.
inline std::string
segmentModuleText(const std::string &module,
                  const std::vector<SegmentVariant> &variants, size_t *count) {
  std::string text = "gnn.module @" + module + " {\n";
  for (const SegmentVariant &v : variants)
    text += opKernelText(v.name, v.op, v.schedule);
  *count = variants.size();
  return text + "}\n";
}

/// "<prefix>_<type>_k<K>_m<M><suffix>".
inline std::string segmentVariantName(const std::string &prefix,
                                      ElementType type, int64_t k, int64_t m,
                                      const std::string &suffix = "") {
  return prefix + "_" + elementTypeName(type) + "_k" + std::to_string(k) +
         "_m" + std::to_string(m) + suffix;
}

/// A tile_routed schedule with `math`, and tile_rows, stages and
/// threads_per_block when not 0.
inline Schedule segmentSchedule(MathMode math, int32_t tileRows = 0,
                                int32_t stages = 0, int32_t threads = 0) {
  Schedule s;
  s.strategy = Strategy::TileRouted;
  s.math = math;
  s.tileRows = tileRows;
  s.stages = stages;
  s.threadsPerBlock = threads;
  return s;
}

/// The SIMT forward variants.
inline std::string segmentMatmulModuleText(size_t *count) {
  std::vector<SegmentVariant> variants;
  Schedule narrow;
  narrow.strategy = Strategy::TileRouted;
  narrow.vectorWidth = 1;
  narrow.dimWorkers = 32;
  narrow.tileRows = 16;
  for (ElementType type : kSegmentTypes)
    for (auto [k, m] : {std::pair<int64_t, int64_t>{1, 1},
                        {3, 5},
                        {16, 32},
                        {64, 64},
                        {33, 128},
                        {128, 96}})
      for (bool defaults : {true, false}) {
        // 16-bit types with K and M multiples of 8 default to tensor
        // cores: ask for SIMT.
        Schedule simt = defaults ? segmentSchedule(MathMode::Simt) : narrow;
        if (!defaults)
          simt.math = MathMode::Simt;
        variants.push_back(
            {segmentVariantName("sm", type, k, m, defaults ? "" : "_w1"),
             segmentMatmulOp(type, k, m), simt});
      }
  return segmentModuleText("segment", variants, count);
}

/// The tensor-core forward variants.
inline std::string segmentMatmulTensorCoreModuleText(size_t *count) {
  std::vector<SegmentVariant> variants;
  for (ElementType type : kSegmentTypes) {
    for (auto [k, m] : {std::pair<int64_t, int64_t>{8, 8},
                        {32, 32},
                        {64, 64},
                        {128, 128},
                        {256, 256},
                        {512, 512},
                        {8, 512},
                        {512, 24},
                        {40, 72}})
      variants.push_back({segmentVariantName("tc", type, k, m),
                          segmentMatmulOp(type, k, m),
                          segmentSchedule(MathMode::TensorCore)});
    // Small tiles with a deeper pipeline, and large tiles.
    variants.push_back({segmentVariantName("tc", type, 64, 128, "_t16_s3"),
                        segmentMatmulOp(type, 64, 128),
                        segmentSchedule(MathMode::TensorCore, 16, 3)});
    variants.push_back({segmentVariantName("tc", type, 256, 64, "_t128_s3"),
                        segmentMatmulOp(type, 256, 64),
                        segmentSchedule(MathMode::TensorCore, 128, 3)});
    variants.push_back({segmentVariantName("tc", type, 128, 32, "_t32_s4"),
                        segmentMatmulOp(type, 128, 32),
                        segmentSchedule(MathMode::TensorCore, 32, 4)});
    // Blocks of 128 x 128 results through four stages (f32: two),
    // and a second column block of 128 that is partly past M.
    const int32_t deep = type == ElementType::F32 ? 2 : 4;
    variants.push_back({segmentVariantName("tc", type, 128, 128, "_t128_deep"),
                        segmentMatmulOp(type, 128, 128),
                        segmentSchedule(MathMode::TensorCore, 128, deep)});
    variants.push_back({segmentVariantName("tc", type, 64, 200, "_t64_s3"),
                        segmentMatmulOp(type, 64, 200),
                        segmentSchedule(MathMode::TensorCore, 64, 3)});
    // Warp tiles of 64 rows (threads_per_block below the default): K = M
    // = 256 with one 128-row tile per two warps, a partial column block
    // (M = 200), and 64-row tiles of one warp along the rows.
    const Schedule tall = segmentSchedule(MathMode::TensorCore, 128, 3, 128);
    variants.push_back({segmentVariantName("tc", type, 256, 256, "_t128_w64"),
                        segmentMatmulOp(type, 256, 256), tall});
    variants.push_back({segmentVariantName("tc", type, 96, 200, "_t128_w64"),
                        segmentMatmulOp(type, 96, 200), tall});
    variants.push_back({segmentVariantName("tc", type, 128, 128, "_t64_w64"),
                        segmentMatmulOp(type, 128, 128),
                        segmentSchedule(MathMode::TensorCore, 64, 2, 64)});
    // Unaligned K: the default is the SIMT kernel.
    variants.push_back({segmentVariantName("tc", type, 36, 64, "_default"),
                        segmentMatmulOp(type, 36, 64), std::nullopt});
  }
  return segmentModuleText("segment_tc", variants, count);
}

/// The forward and input gradient on Hopper's warpgroup instructions
/// (math = wgmma, f16 and bf16; sm_90a only): K and M of 64 to 512 (one
/// and several column blocks, resident and streamed weights, a partial
/// last column block), tiles of 64 and 128 rows, 2 to 4 stages, the
/// input gradient (W_t read transposed) and the weight gradient.
inline std::string segmentMatmulWgmmaModuleText(size_t *count) {
  std::vector<SegmentVariant> variants;
  for (ElementType type : {ElementType::F16, ElementType::BF16}) {
    for (auto [k, m] : {std::pair<int64_t, int64_t>{64, 64},
                        {128, 128},
                        {256, 256},
                        {512, 512},
                        {128, 64},
                        {64, 192},
                        {192, 320}})
      variants.push_back({segmentVariantName("wg", type, k, m),
                          segmentMatmulOp(type, k, m),
                          segmentSchedule(MathMode::Wgmma)});
    variants.push_back({segmentVariantName("wg", type, 128, 128, "_t128_s3"),
                        segmentMatmulOp(type, 128, 128),
                        segmentSchedule(MathMode::Wgmma, 128, 3)});
    variants.push_back({segmentVariantName("wg", type, 256, 256, "_t128"),
                        segmentMatmulOp(type, 256, 256),
                        segmentSchedule(MathMode::Wgmma, 128)});
    variants.push_back({segmentVariantName("wg", type, 256, 128, "_t64_s3"),
                        segmentMatmulOp(type, 256, 128),
                        segmentSchedule(MathMode::Wgmma, 64, 3)});
    variants.push_back({segmentVariantName("wg", type, 64, 128, "_t64_s4"),
                        segmentMatmulOp(type, 64, 128),
                        segmentSchedule(MathMode::Wgmma, 64, 4)});
    for (auto [k, m] :
         {std::pair<int64_t, int64_t>{64, 64}, {128, 256}, {256, 128}})
      variants.push_back({segmentVariantName("dx_wg", type, k, m),
                          segmentMatmulInputGradOp(type, k, m),
                          segmentSchedule(MathMode::Wgmma, 128)});
    // The weight gradient (X and dY read transposed): one warpgroup
    // (K = 32, M = 64), 2 x 2 blocks of 128 x 128, partial panels and
    // blocks (K = 200, M = 72), splits of 64 to 2048 rows, 2 to 4 stages.
    for (auto [k, m, split, stages] :
         {std::tuple<int64_t, int64_t, int32_t, int32_t>{32, 64, 256, 2},
          {256, 256, 1024, 3},
          {128, 128, 64, 4},
          {200, 72, 2048, 3},
          {512, 512, 512, 2}})
      variants.push_back({segmentVariantName("dw_wg", type, k, m,
                                             "_s" + std::to_string(split)),
                          segmentMatmulWeightGradOp(type, k, m),
                          segmentSchedule(MathMode::Wgmma, split, stages)});
  }
  // TF32: the forward reads its prelude's transposed copy of W_t (resident
  // at 128 x 128 and below, streamed above); the input gradient reads W_t
  // as stored.
  const ElementType f32 = ElementType::F32;
  for (auto [k, m] : {std::pair<int64_t, int64_t>{32, 64},
                      {128, 128},
                      {256, 256},
                      {512, 512},
                      {96, 192}})
    variants.push_back({segmentVariantName("wg", f32, k, m),
                        segmentMatmulOp(f32, k, m),
                        segmentSchedule(MathMode::Wgmma)});
  variants.push_back({segmentVariantName("wg", f32, 256, 256, "_t128_s3"),
                      segmentMatmulOp(f32, 256, 256),
                      segmentSchedule(MathMode::Wgmma, 128, 3)});
  variants.push_back({segmentVariantName("wg", f32, 128, 128, "_t128_s2"),
                      segmentMatmulOp(f32, 128, 128),
                      segmentSchedule(MathMode::Wgmma, 128, 2)});
  for (auto [k, m] :
       {std::pair<int64_t, int64_t>{64, 64}, {128, 256}, {256, 128}})
    variants.push_back({segmentVariantName("dx_wg", f32, k, m),
                        segmentMatmulInputGradOp(f32, k, m),
                        segmentSchedule(MathMode::Wgmma, 128)});
  return segmentModuleText("segment_wg", variants, count);
}

/// The backward variants: input and weight gradients.
inline std::string segmentMatmulBackwardModuleText(size_t *count) {
  std::vector<SegmentVariant> variants;
  for (ElementType type : kSegmentTypes) {
    for (auto [k, m] : {std::pair<int64_t, int64_t>{8, 8},
                        {64, 32},
                        {128, 256},
                        {512, 512}}) {
      variants.push_back({segmentVariantName("dx_tc", type, k, m),
                          segmentMatmulInputGradOp(type, k, m),
                          segmentSchedule(MathMode::TensorCore)});
      variants.push_back({segmentVariantName("dw_tc", type, k, m),
                          segmentMatmulWeightGradOp(type, k, m),
                          segmentSchedule(MathMode::TensorCore)});
    }
    // Warp tiles of 64 rows: the input gradient (W_t read transposed) and
    // the weight gradient (X read transposed).
    variants.push_back({segmentVariantName("dx_tc", type, 256, 128, "_w64"),
                        segmentMatmulInputGradOp(type, 256, 128),
                        segmentSchedule(MathMode::TensorCore, 128, 3, 128)});
    variants.push_back({segmentVariantName("dw_tc", type, 128, 128, "_w64"),
                        segmentMatmulWeightGradOp(type, 128, 128),
                        segmentSchedule(MathMode::TensorCore, 256, 2, 128)});
    // Splits of 32 rows: many partials per type.
    variants.push_back({segmentVariantName("dw_tc", type, 32, 64, "_s32"),
                        segmentMatmulWeightGradOp(type, 32, 64),
                        segmentSchedule(MathMode::TensorCore, 32, 3)});
    // SIMT: odd and small sizes, and exact f32.
    for (auto [k, m] :
         {std::pair<int64_t, int64_t>{3, 5}, {33, 16}, {64, 64}}) {
      variants.push_back({segmentVariantName("dx_simt", type, k, m),
                          segmentMatmulInputGradOp(type, k, m),
                          segmentSchedule(MathMode::Simt)});
      variants.push_back({segmentVariantName("dw_simt", type, k, m),
                          segmentMatmulWeightGradOp(type, k, m),
                          segmentSchedule(MathMode::Simt)});
    }
    variants.push_back({segmentVariantName("dw_simt", type, 16, 8, "_s7"),
                        segmentMatmulWeightGradOp(type, 16, 8),
                        segmentSchedule(MathMode::Simt, 7)});
  }
  return segmentModuleText("segment_bwd", variants, count);
}

} // namespace gnnc::test

#endif // GNNC_TEST_COMPILER_SEGMENT_MATMUL_VARIANTS_H
