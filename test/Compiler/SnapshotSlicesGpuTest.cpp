//===- SnapshotSlicesGpuTest.cpp - Work items of sliced kernels on a GPU --===//
//
// The work items of sliced gnn.spmm kernels built on a GPU
// (ops::buildSnapshotSlicesOnGpu: count, scan, fill) against the host's
// table (ops::snapshotSlices), item by item, on the groups of
// SnapshotSliceGroups.h (evolving R-MAT groups of 1-8 snapshots, no
// exclusive edges, no overlap with an empty snapshot, a row of 6,000
// edges, no rows) cut with slice sizes 1 to 4096, from 32- and 64-bit row
// offsets, into tables poisoned first; a group of more than 2^20 rows, whose
// scan takes three levels of tiles; and sliced kernels checked against the
// CPU reference with the items built on the GPU (launchSnapshotSpmm's
// default), which leaves none of their bytes to cross to the GPU.
//
// Skips, saying why, when no GPU is present.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"
#include "SnapshotSliceGroups.h"
#include "SnapshotVariants.h"

#include "gnnc/cuda/snapshot_slices.cuh"
#include "gnnc/graph/Snapshots.h"
#include "gnnc/ops/Snapshots.h"
#include "gnnc/runtime/Driver.h"

#include <gtest/gtest.h>

#include <memory>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

/// The GPU (or why there is none).
struct Gpu {
  std::unique_ptr<rt::Runtime> runtime;
  std::string skipReason, error;
};

Gpu &gpu() {
  static Gpu *g = [] {
    auto *g = new Gpu;
    std::string why;
    if (!rt::gpuAvailable(&why)) {
      g->skipReason = "no GPU: " + why;
      return g;
    }
    auto runtime = rt::Runtime::create();
    if (!runtime)
      g->error = runtime.message();
    else
      g->runtime = std::make_unique<rt::Runtime>(runtime.take());
    return g;
  }();
  return *g;
}

std::vector<int64_t> download(const rt::DeviceBuffer &buffer, int64_t count) {
  std::vector<int64_t> out(count);
  Status st = buffer.copyToHost(out.data(), count * sizeof(int64_t));
  EXPECT_TRUE(st.isOk()) << st.message();
  return out;
}

/// Builds `group`'s items on the GPU from `offsets64` row offsets and
/// compares them with the host's, item by item.
void compareBuilds(rt::Runtime &runtime, const SnapshotGroup &group,
                   bool offsets64, int64_t sliceSize) {
  SCOPED_TRACE(std::string(offsets64 ? "i64" : "i32") + " offsets, slice " +
               std::to_string(sliceSize));
  StackedExclusive stacked = stackExclusive(group);
  auto want = ops::snapshotSlices(group.overlap.rowPtr, stacked.offsets,
                                  group.size(), sliceSize, "host");
  ASSERT_TRUE(want) << want.message();
  auto dg = ops::uploadSnapshotGroup(group, offsets64, false);
  ASSERT_TRUE(dg) << dg.message();
  auto got = ops::buildSnapshotSlicesOnGpu(runtime, *dg, sliceSize, "gpu",
                                           nullptr, /*poison=*/true);
  ASSERT_TRUE(got) << got.message();
  EXPECT_EQ(got->builtBy, ops::SliceBuilder::Gpu);
  EXPECT_EQ(got->uploadedBytes, 0);
  ASSERT_EQ(got->count, want->count());
  ASSERT_EQ(got->splitRows, want->splitRows);
  std::vector<int64_t> begin = download(got->begin, got->count);
  std::vector<int64_t> words = download(got->words, got->count);
  int64_t wrong = 0;
  for (int64_t i = 0; i < got->count; ++i)
    if (begin[i] != want->begin[i] || words[i] != want->words[i]) {
      if (++wrong <= 5)
        ADD_FAILURE() << "item " << i << ": begin " << begin[i] << " word "
                      << words[i] << ", host: begin " << want->begin[i]
                      << " word " << want->words[i];
    }
  EXPECT_EQ(wrong, 0) << "of " << got->count << " items";
}

TEST(SnapshotSlicesGpu, SameTableAsTheHost) {
  Gpu &g = gpu();
  if (!g.skipReason.empty())
    GTEST_SKIP() << g.skipReason;
  ASSERT_TRUE(g.error.empty()) << g.error;
  std::string error;
  std::vector<test::NamedGroup> groups = test::sliceTestGroups(error);
  ASSERT_TRUE(error.empty()) << error;
  for (const test::NamedGroup &named : groups) {
    SCOPED_TRACE(named.name);
    for (int64_t size : test::sliceTestSizes())
      for (bool offsets64 : {false, true})
        compareBuilds(*g.runtime, named.group, offsets64, size);
  }
}

TEST(SnapshotSlicesGpu, ThreeLevelsOfScan) {
  Gpu &g = gpu();
  if (!g.skipReason.empty())
    GTEST_SKIP() << g.skipReason;
  ASSERT_TRUE(g.error.empty()) << g.error;
  // More rows than one tile of tiles holds: the scan's totals take a third
  // level. A few rows with edges, shared and exclusive, spread over them.
  constexpr int64_t tile = cuda::slices::kSliceScanTile;
  const int64_t n = tile * tile + 3 * tile + 5;
  std::vector<std::vector<int64_t>> src(2), dst(2);
  for (int t = 0; t < 2; ++t)
    for (int64_t r = 0; r < n; r += 997)
      for (int64_t j = 0; j < 1 + (r + t) % 11; ++j) {
        dst[t].push_back(r);
        src[t].push_back((r + j * (t + 1)) % n);
      }
  Expected<SnapshotSeries> s = snapshotsFromEdgeLists(n, src, dst, {}, "big");
  ASSERT_TRUE(s) << s.message();
  Expected<SnapshotGroup> group = overlapGroup(*s, 0, 2);
  ASSERT_TRUE(group) << group.message();
  for (int64_t size : {1, 4})
    compareBuilds(*g.runtime, *group, false, size);
}

TEST(SnapshotSlicesGpu, RefusesBadShapes) {
  Gpu &g = gpu();
  if (!g.skipReason.empty())
    GTEST_SKIP() << g.skipReason;
  ASSERT_TRUE(g.error.empty()) << g.error;
  std::string error;
  std::vector<test::NamedGroup> groups = test::sliceTestGroups(error);
  ASSERT_TRUE(error.empty()) << error;
  auto dg = ops::uploadSnapshotGroup(groups[1].group, true, false);
  ASSERT_TRUE(dg) << dg.message();
  auto zero = ops::buildSnapshotSlicesOnGpu(*g.runtime, *dg, 0, "t");
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.message().find("must be from 1 to 4096"), std::string::npos)
      << zero.message();
  // A group that claims more rows than its offsets on the GPU hold.
  dg->overlap.numRows *= 2;
  auto short_ = ops::buildSnapshotSlicesOnGpu(*g.runtime, *dg, 8, "t");
  ASSERT_FALSE(short_);
  EXPECT_NE(short_.message().find("bytes on the GPU"), std::string::npos)
      << short_.message();
}

/// A sliced kernel over `offsets` row offsets.
struct SlicedVariant {
  test::SnapshotVariant v;
  std::string offsets;
};

std::vector<SlicedVariant> slicedVariants() {
  return {{{"f32", 2, 16, "sum", "none", 1}, "i32"},
          {{"f32", 4, 8, "mean", "both", 7}, "i32"},
          {{"f32", 8, 4, "sum", "left", 32}, "i64"},
          {{"f16", 4, 16, "sum", "both", 128}, "i64"},
          {{"f32", 1, 16, "mean", "right", 0}, "i32"},
          {{"bf16", 2, 8, "sum", "none", 4096}, "i64"}};
}

std::string slicedModuleText(const std::vector<SlicedVariant> &variants) {
  std::string text = "gnn.module @sliced {\n";
  for (size_t i = 0; i < variants.size(); ++i) {
    const test::SnapshotVariant &v = variants[i].v;
    const std::string t = "tensor<?x" + std::to_string(v.snapshots) + "x" +
                          std::to_string(v.width) + "x" + v.type + ">";
    const std::string g =
        "!gnn.graph<snapshot_csr, " + variants[i].offsets + ", i32>";
    text += "gnn.kernel @k" + std::to_string(i) + "(%g: " + g + ", %x: " + t +
            ") -> " + t + " {\n  %y = gnn.spmm %g, %x {reduce = #gnn<reduce " +
            v.reduce + ">, scale = #gnn<scale " + v.scale +
            ">, schedule = #gnn.schedule<strategy = sliced" +
            (v.sliceSize ? ", slice_size = " + std::to_string(v.sliceSize)
                         : std::string()) +
            ">} : " + g + ", " + t + " -> " + t + "\n  gnn.return %y : " + t +
            "\n}\n";
  }
  return text + "}\n";
}

TEST(SnapshotSlicesGpu, KernelsPassWithItemsBuiltOnTheGpu) {
  const std::vector<SlicedVariant> variants = slicedVariants();
  test::GpuKernels k;
  test::loadGpuKernels(k, slicedModuleText(variants), "sliced.gnn",
                       variants.size());
  if (!k.skipReason.empty())
    GTEST_SKIP() << k.skipReason;
  ASSERT_TRUE(k.error.empty()) << k.error;
  std::string error;
  std::vector<test::NamedGroup> groups = test::sliceTestGroups(error);
  ASSERT_TRUE(error.empty()) << error;
  uint64_t seed = 1;
  for (size_t i = 0; i < k.kernels.size(); ++i) {
    const rt::LoadedKernel &kernel = k.kernels[i];
    SCOPED_TRACE(kernel.spec.name + " " + kernel.spec.schedule.str());
    for (const test::NamedGroup &named : groups) {
      if (named.group.size() != variants[i].v.snapshots)
        continue;
      SCOPED_TRACE(named.name);
      // The default build: on the GPU, nothing of the items uploaded.
      auto dg = ops::uploadSnapshotGroup(named.group,
                                         variants[i].offsets == "i64", false);
      ASSERT_TRUE(dg) << dg.message();
      auto slices = ops::snapshotSlicesOf(
          *k.runtime, *dg, kernel.spec.schedule.sliceSize, "test");
      ASSERT_TRUE(slices) << slices.message();
      EXPECT_EQ((*slices)->builtBy, ops::SliceBuilder::Gpu);
      EXPECT_EQ((*slices)->uploadedBytes, 0);
      EXPECT_EQ((*slices)->fallback, "");
      auto check =
          ops::checkSnapshotSpmm(*k.runtime, kernel, named.group, seed++);
      ASSERT_TRUE(check) << check.message();
      EXPECT_TRUE(check->ok) << check->report;
    }
  }
}

TEST(SnapshotSlicesGpu, HostBuilderOnRequest) {
  Gpu &g = gpu();
  if (!g.skipReason.empty())
    GTEST_SKIP() << g.skipReason;
  ASSERT_TRUE(g.error.empty()) << g.error;
  std::string error;
  std::vector<test::NamedGroup> groups = test::sliceTestGroups(error);
  ASSERT_TRUE(error.empty()) << error;
  auto dg = ops::uploadSnapshotGroup(groups[0].group, true, false);
  ASSERT_TRUE(dg) << dg.message();
  dg->builder = ops::SliceBuilder::Host;
  auto slices = ops::snapshotSlicesOf(*g.runtime, *dg, 32, "test");
  ASSERT_TRUE(slices) << slices.message();
  EXPECT_EQ((*slices)->builtBy, ops::SliceBuilder::Host);
  EXPECT_EQ((*slices)->uploadedBytes, (*slices)->count * 16);
}

} // namespace
