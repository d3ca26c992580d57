//===- CompileSweepTest.cpp - Every generated kernel compiles -------------===//
//
// Compiles the whole schedule x type x width space of gnn.spmm (sum, mean,
// degree scaling, the self term, f16 and discretized accumulation),
// gnn.sddmm and gnn.edge_softmax, gnn.segment_matmul, gnn.spmm over groups
// of snapshots (sliced), and every backward
// kernel
// (gnn.edge_softmax_grad, the gradient forms of gnn.spmm and gnn.sddmm),
// through the compiler and NVRTC, for sm_80 and sm_90. Needs no GPU.
//
//===----------------------------------------------------------------------===//
#include "BackwardVariants.h"
#include "BatchedVariants.h"
#include "SegmentMatmulVariants.h"
#include "SnapshotVariants.h"
#include "SpmmVariants.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace gnnc;

namespace {

class CompileSweep : public ::testing::TestWithParam<std::string> {};

TEST_P(CompileSweep, EveryVariantCompiles) {
  std::vector<test::SpmmVariant> variants = test::allVariants();
  for (const test::SpmmVariant &v : test::compileOnlyVariants())
    variants.push_back(v);
  // In translation units of kSweepUnit kernels: NVRTC's memory grows with
  // the unit (the whole list in one unit took about 12 GB per
  // architecture, and the two architectures run side by side).
  constexpr size_t kSweepUnit = 256;
  rt::CompileOptions options;
  options.arch = GetParam();
  for (size_t first = 0; first < variants.size(); first += kSweepUnit) {
    std::vector<test::SpmmVariant> unit(
        variants.begin() + first,
        variants.begin() + std::min(variants.size(), first + kSweepUnit));
    auto compiled = compileGnn(test::spmmModuleText(unit), "sweep.gnn");
    ASSERT_TRUE(compiled) << compiled.message();
    ASSERT_EQ(compiled->kernels.size(), unit.size());
    auto binary = rt::compileCuda(compiled->source, "sweep.cu", options);
    ASSERT_TRUE(binary) << binary.message();
    // A cubin is an ELF image holding every kernel's entry point.
    ASSERT_GE(binary->binary.size(), 4u);
    EXPECT_EQ(binary->binary.substr(0, 4), "\x7f"
                                           "ELF");
    for (const rt::KernelSpec &spec : compiled->kernels)
      EXPECT_NE(binary->binary.find(spec.name), std::string::npos)
          << spec.name << " is missing from the cubin";
  }
}

INSTANTIATE_TEST_SUITE_P(Arch, CompileSweep,
                         ::testing::Values("sm_80", "sm_90"));

class SnapshotCompileSweep : public ::testing::TestWithParam<std::string> {};

TEST_P(SnapshotCompileSweep, EverySlicedVariantCompiles) {
  std::vector<test::SnapshotVariant> variants = test::snapshotVariants();
  auto compiled =
      compileGnn(test::snapshotModuleText(variants), "snapshots.gnn");
  ASSERT_TRUE(compiled) << compiled.message();
  ASSERT_EQ(compiled->kernels.size(), variants.size());
  rt::CompileOptions options;
  options.arch = GetParam();
  auto binary = rt::compileCuda(compiled->source, "snapshots.cu", options);
  ASSERT_TRUE(binary) << binary.message();
  for (const rt::KernelSpec &spec : compiled->kernels)
    EXPECT_NE(binary->binary.find(spec.name), std::string::npos)
        << spec.name << " is missing from the cubin";
}

INSTANTIATE_TEST_SUITE_P(Arch, SnapshotCompileSweep,
                         ::testing::Values("sm_80", "sm_90"));

class BatchedCompileSweep : public ::testing::TestWithParam<std::string> {};

TEST_P(BatchedCompileSweep, EveryBatchedVariantCompiles) {
  std::vector<test::BatchedVariant> variants = test::batchedVariants();
  auto compiled = compileGnn(test::batchedModuleText(variants), "batched.gnn");
  ASSERT_TRUE(compiled) << compiled.message();
  ASSERT_EQ(compiled->kernels.size(), variants.size());
  rt::CompileOptions options;
  options.arch = GetParam();
  auto binary = rt::compileCuda(compiled->source, "batched.cu", options);
  ASSERT_TRUE(binary) << binary.message();
  for (const rt::KernelSpec &spec : compiled->kernels)
    EXPECT_NE(binary->binary.find(spec.name), std::string::npos)
        << spec.name << " is missing from the cubin";
  size_t count = 0;
  std::string readouts = test::readoutModuleText(&count);
  auto pooled = compileGnn(readouts, "readout.gnn");
  ASSERT_TRUE(pooled) << pooled.message();
  ASSERT_EQ(pooled->kernels.size(), count);
  auto pooledBinary = rt::compileCuda(pooled->source, "readout.cu", options);
  ASSERT_TRUE(pooledBinary) << pooledBinary.message();
}

INSTANTIATE_TEST_SUITE_P(Arch, BatchedCompileSweep,
                         ::testing::Values("sm_80", "sm_90"));

class SegmentMatmulCompileSweep : public ::testing::TestWithParam<std::string> {
};

// gnn.segment_matmul, tile_routed (SegmentMatmulVariants.h).
TEST_P(SegmentMatmulCompileSweep, EverySegmentMatmulVariantCompiles) {
  size_t count = 0;
  const std::string text = test::segmentMatmulModuleText(&count);
  auto compiled = compileGnn(text, "segment.gnn");
  ASSERT_TRUE(compiled) << compiled.message();
  ASSERT_EQ(compiled->kernels.size(), count);
  rt::CompileOptions options;
  options.arch = GetParam();
  auto binary = rt::compileCuda(compiled->source, "segment.cu", options);
  ASSERT_TRUE(binary) << binary.message();
  for (const rt::KernelSpec &spec : compiled->kernels)
    EXPECT_NE(binary->binary.find(spec.name), std::string::npos)
        << spec.name << " is missing from the cubin";
}

// The tensor-core forward and the backward (input and weight gradients).
TEST_P(SegmentMatmulCompileSweep, EveryTensorCoreAndBackwardVariantCompiles) {
  for (auto [make, file] :
       {std::pair{test::segmentMatmulTensorCoreModuleText, "segment_tc"},
        std::pair{test::segmentMatmulBackwardModuleText, "segment_bwd"}}) {
    size_t count = 0;
    const std::string text = make(&count);
    auto compiled = compileGnn(text, std::string(file) + ".gnn");
    ASSERT_TRUE(compiled) << compiled.message();
    ASSERT_EQ(compiled->kernels.size(), count);
    rt::CompileOptions options;
    options.arch = GetParam();
    auto binary =
        rt::compileCuda(compiled->source, std::string(file) + ".cu", options);
    ASSERT_TRUE(binary) << binary.message();
    for (const rt::KernelSpec &spec : compiled->kernels) {
      EXPECT_NE(binary->binary.find(spec.name), std::string::npos)
          << spec.name << " is missing from the cubin";
      for (const rt::FollowUpKernel &next : spec.followUps)
        EXPECT_NE(binary->binary.find(next.name), std::string::npos)
            << next.name << " is missing from the cubin";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Arch, SegmentMatmulCompileSweep,
                         ::testing::Values("sm_80", "sm_90"));

// math = wgmma compiles for sm_90a, and for sm_90 (no wgmma) NVRTC stops
// with the rule in its log.
TEST(SegmentMatmulWgmmaCompile, CompilesForSm90aAndNamesTheTargetElsewhere) {
  size_t count = 0;
  const std::string text = test::segmentMatmulWgmmaModuleText(&count);
  auto compiled = compileGnn(text, "segment_wg.gnn");
  ASSERT_TRUE(compiled) << compiled.message();
  ASSERT_EQ(compiled->kernels.size(), count);
  rt::CompileOptions options;
  options.arch = "sm_90a";
  auto binary = rt::compileCuda(compiled->source, "segment_wg.cu", options);
  ASSERT_TRUE(binary) << binary.message();
  size_t preludes = 0;
  for (const rt::KernelSpec &spec : compiled->kernels) {
    EXPECT_NE(binary->binary.find(spec.name), std::string::npos)
        << spec.name << " is missing from the cubin";
    // TF32 forwards: the transposed copy of the weights first.
    for (const rt::FollowUpKernel &before : spec.preludes) {
      EXPECT_NE(binary->binary.find(before.name), std::string::npos)
          << before.name << " is missing from the cubin";
      ++preludes;
    }
  }
  EXPECT_EQ(preludes, 7u);
  options.arch = "sm_90";
  auto plain = rt::compileCuda(compiled->source, "segment_wg.cu", options);
  ASSERT_FALSE(plain);
  EXPECT_NE(plain.message().find("math = wgmma needs Hopper's arch-specific "
                                 "target sm_90a"),
            std::string::npos)
      << plain.message();
}

class BackwardCompileSweep : public ::testing::TestWithParam<std::string> {};

TEST_P(BackwardCompileSweep, EveryBackwardKernelCompiles) {
  test::BackwardSuite suite = test::backwardSuite();
  auto compiled = compileGnn(suite.text, "backward.gnn");
  ASSERT_TRUE(compiled) << compiled.message();
  ASSERT_EQ(compiled->kernels.size(), suite.kernels.size());
  rt::CompileOptions options;
  options.arch = GetParam();
  auto binary = rt::compileCuda(compiled->source, "backward.cu", options);
  ASSERT_TRUE(binary) << binary.message();
  for (const rt::KernelSpec &spec : compiled->kernels)
    EXPECT_NE(binary->binary.find(spec.name), std::string::npos)
        << spec.name << " is missing from the cubin";
}

INSTANTIATE_TEST_SUITE_P(Arch, BackwardCompileSweep,
                         ::testing::Values("sm_80", "sm_90"));

TEST(Compiler, ReportsDiagnosticsWithLocations) {
  auto compiled = compileGnn("gnn.module @m {\n  gnn.bogus\n}\n", "bad.gnn");
  ASSERT_FALSE(compiled);
  EXPECT_NE(compiled.message().find("bad.gnn:2:3: error"), std::string::npos)
      << compiled.message();
}

TEST(Compiler, FindsKernelsBySymbolOrEntryName) {
  std::vector<test::SpmmVariant> variants = {{"f32", 8, false, "i64", ""}};
  auto compiled = compileGnn(test::spmmModuleText(variants), "one.gnn");
  ASSERT_TRUE(compiled) << compiled.message();
  EXPECT_TRUE(findKernel(*compiled, "t_spmm_f32_w8_v_i64"));
  EXPECT_TRUE(findKernel(*compiled, "spmm_f32_w8_v_i64"));
  auto missing = findKernel(*compiled, "nope");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("t_spmm_f32_w8_v_i64"), std::string::npos);
}

} // namespace
