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
// default), which leaves none of their bytes to cross to the GPU; a build
// queued on one stream behind 100 ms of busy work and a sliced kernel
// launched on another, which must wait for it on the GPU, with a negative
// control (the build's event dropped) showing that the check sees a
// missing wait. The test's kernels compile for sm_80 and sm_90 through
// NVRTC without a GPU.
//
// The rest skips, saying why, when no GPU is present.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"
#include "SnapshotSliceGroups.h"
#include "SnapshotVariants.h"

#include "gnnc/cuda/snapshot_slices.cuh"
#include "gnnc/graph/Snapshots.h"
#include "gnnc/ops/Snapshots.h"
#include "gnnc/reference/Spmm.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

/// The GPU (or why there is none); `kernels` stays empty.
using Gpu = test::GpuKernels;

Gpu &gpu() {
  static Gpu *g = [] {
    auto *g = new Gpu;
    test::openGpuRuntime(*g);
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

//===----------------------------------------------------------------------===//
// A launch on another stream waits for the build
//===----------------------------------------------------------------------===//

/// The kernels that keep a stream busy and watch it, test-only. The busy
/// wait is bounded by the GPU's global timer and, should that timer stand
/// still, by a count of its reads (each takes more than a nanosecond).
const char *waitKernelSource() {
  return R"cuda(
// One thread keeps its stream busy for `ns` nanoseconds, then sets *done.
extern "C" __global__ void gnnc_test_busy(long long ns,
                                          unsigned long long *done) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (long long i = 0; i < ns; ++i) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start >= static_cast<unsigned long long>(ns))
      break;
  }
  *static_cast<volatile unsigned long long *>(done) = 1;
}

// Copies *done to *seen: whether gnnc_test_busy had ended when it ran.
extern "C" __global__ void gnnc_test_probe(const unsigned long long *done,
                                           unsigned long long *seen) {
  *seen = *static_cast<const volatile unsigned long long *>(done);
}
)cuda";
}

/// How long the busy wait keeps stream A busy: 100 ms, far longer than the
/// host takes to queue the build and the launch on B, and than a sliced
/// kernel over the test groups runs.
constexpr long long kBusyNs = 100'000'000;

class SnapshotSlicesGpuCompile : public ::testing::TestWithParam<std::string> {
};

// The test's kernels, through NVRTC: no GPU needed (the build's compile in
// SnapshotSliceKernels.CompileThroughNvrtc).
TEST_P(SnapshotSlicesGpuCompile, WaitKernels) {
  rt::CompileOptions options;
  options.arch = GetParam();
  auto binary = rt::compileCuda(waitKernelSource(), "wait_test.cu", options);
  ASSERT_TRUE(binary) << binary.message();
  EXPECT_EQ(binary->binary.substr(0, 4), "\x7f"
                                         "ELF");
  for (const char *name : {"gnnc_test_busy", "gnnc_test_probe"})
    EXPECT_NE(binary->binary.find(name), std::string::npos) << name;
}

INSTANTIATE_TEST_SUITE_P(Arch, SnapshotSlicesGpuCompile,
                         ::testing::Values("sm_80", "sm_90"));

/// The busy wait and the probe, loaded on the runtime's GPU; with the
/// streams the tests queue them on (rt::Stream: CU_STREAM_NON_BLOCKING, so
/// none waits for another, nor for the default stream) and the flags: `done`
/// (set when the busy wait ends), `seen` (probed on B, after the work under
/// test) and `early` (probed on a third stream, after everything was queued).
struct WaitRig {
  rt::Function busy, probe;
  rt::Stream a, b, watch;
  rt::DeviceBuffer done, seen, early;
};

Status makeWaitRig(const rt::Runtime &runtime, WaitRig &rig) {
  rt::CompileOptions options;
  options.arch = runtime.device().archString();
  auto binary = rt::compileCuda(waitKernelSource(), "wait_test.cu", options);
  if (!binary)
    return binary.status();
  auto module = rt::Module::load(binary->binary);
  if (!module)
    return module.status();
  for (auto [name, slot] : {std::pair{"gnnc_test_busy", &rig.busy},
                            std::pair{"gnnc_test_probe", &rig.probe}}) {
    auto function = module->function(name);
    if (!function)
      return function.status();
    *slot = function.take();
  }
  for (rt::Stream *stream : {&rig.a, &rig.b, &rig.watch}) {
    auto made = rt::Stream::create();
    if (!made)
      return made.status();
    *stream = made.take();
  }
  for (rt::DeviceBuffer *flag : {&rig.done, &rig.seen, &rig.early}) {
    auto made = rt::DeviceBuffer::allocate(sizeof(uint64_t));
    if (!made)
      return made.status();
    *flag = made.take();
  }
  return Status::ok();
}

/// Clears `done`, poisons the probes' flags (an unrun probe reads neither 0
/// nor 1) and waits for the GPU, so that nothing queued before is still
/// running; then starts the busy wait on A.
Status startBusy(const rt::Runtime &runtime, WaitRig &rig) {
  GNNC_RETURN_IF_ERROR(rig.done.fill(0));
  GNNC_RETURN_IF_ERROR(rig.seen.fill(0xff));
  GNNC_RETURN_IF_ERROR(rig.early.fill(0xff));
  GNNC_RETURN_IF_ERROR(runtime.synchronize());
  long long ns = kBusyNs;
  uint64_t done = rig.done.address();
  void *args[] = {&ns, &done};
  return rt::launch(rig.busy, {1, 1, 1}, {1, 1, 1}, 0, args, false,
                    rig.a.handle());
}

/// Queues the probe of `done` into `flag` on `stream`.
Status probe(WaitRig &rig, const rt::DeviceBuffer &flag, void *stream) {
  uint64_t done = rig.done.address(), into = flag.address();
  void *args[] = {&done, &into};
  return rt::launch(rig.probe, {1, 1, 1}, {1, 1, 1}, 0, args, false, stream);
}

uint64_t readFlag(const rt::DeviceBuffer &flag) {
  uint64_t value = ~uint64_t(0);
  Status st = flag.copyToHost(&value, sizeof(value));
  EXPECT_TRUE(st.isOk()) << st.message();
  return value;
}

/// The sliced kernels of the test (two of slicedVariants', which pass on
/// the same groups launched on the default stream), run on the groups with
/// rows of their snapshot counts: 32- and 64-bit row offsets, column
/// factors or none.
std::vector<SlicedVariant> streamVariants() {
  const std::vector<SlicedVariant> all = slicedVariants();
  return {all[1], all[2]};
}

// The work items built on a GPU on stream A, queued behind 100 ms of busy
// work, and a sliced kernel launched on stream B through launchSnapshotSpmm
// right after: B must wait for the build on the GPU (the build's
// rt::StreamEvent, DeviceSlices::ready). The items are poisoned (0xff bytes)
// at once while the build waits, and the outputs with NaN; the features are
// fresh random ones. Were the wait missing, the kernel on B would run during
// the busy wait and read the poisoned items: begin -1, rows 2^32 - 1, which
// shows as a CUDA error (an address out of range) or as outputs that are
// NaN or wrong; and the probe of `done` queued on B after it would read 0,
// which the test checks first (ProbeSeesAMissingWait shows the probe does
// see a launch that skips the wait). The probe on a third stream, queued
// last, shows the busy wait was still running when B's work was queued:
// otherwise the test proves nothing and fails saying so.
TEST(SnapshotSlicesGpu, LaunchOnAnotherStreamWaitsForTheBuild) {
  const std::vector<SlicedVariant> variants = streamVariants();
  test::GpuKernels k;
  test::loadGpuKernels(k, slicedModuleText(variants), "streams.gnn",
                       variants.size());
  if (!k.skipReason.empty())
    GTEST_SKIP() << k.skipReason;
  ASSERT_TRUE(k.error.empty()) << k.error;
  rt::Runtime &runtime = *k.runtime;
  WaitRig rig;
  Status made = makeWaitRig(runtime, rig);
  ASSERT_TRUE(made.isOk()) << made.message();
  std::string error;
  std::vector<test::NamedGroup> groups = test::sliceTestGroups(error);
  ASSERT_TRUE(error.empty()) << error;
  uint64_t seed = 101;
  int ran = 0;
  for (size_t i = 0; i < k.kernels.size(); ++i) {
    const rt::LoadedKernel &kernel = k.kernels[i];
    SCOPED_TRACE(kernel.spec.name + " " + kernel.spec.schedule.str());
    auto sig = ops::spmmSignature(kernel.spec);
    ASSERT_TRUE(sig) << sig.message();
    const int64_t sliceSize = kernel.spec.schedule.sliceSize;
    for (const test::NamedGroup &named : groups) {
      const SnapshotGroup &group = named.group;
      if (group.size() != variants[i].v.snapshots || group.numNodes == 0)
        continue;
      SCOPED_TRACE(named.name);
      const int64_t rowLen = group.size() * variants[i].v.width;
      const size_t count = static_cast<size_t>(group.numNodes * rowLen);
      std::vector<float> x = ref::roundThrough(
          ref::randomFeatures(static_cast<int64_t>(count), seed++), sig->type);
      auto dx = ops::uploadTensor(x, sig->type);
      ASSERT_TRUE(dx) << dx.message();
      auto dy = ops::allocatePoisoned(count, sig->type);
      ASSERT_TRUE(dy) << dy.message();
      std::optional<rt::DeviceBuffer> colNorm;
      if (sig->needsColumnNorm()) {
        auto factors =
            ops::uploadSnapshotColumnNorm(group, sig->colNormExponent);
        ASSERT_TRUE(factors) << factors.message();
        colNorm = factors.take();
      }
      const rt::DeviceBuffer *norm = colNorm ? &*colNorm : nullptr;
      // Once on B with a group of its own first: the build's kernels are
      // loaded and B's scratch allocated, so that nothing in the timed part
      // waits for the GPU.
      {
        auto warm =
            ops::uploadSnapshotGroup(group, sig->offsets64, sig->indices64);
        ASSERT_TRUE(warm) << warm.message();
        Status st = ops::launchSnapshotSpmm(runtime, kernel, *warm, *dx, *dy,
                                            norm, true, rig.b.handle());
        ASSERT_TRUE(st.isOk()) << st.message();
        ASSERT_TRUE(dy->fill(0xff).isOk());
      }
      auto dg = ops::uploadSnapshotGroup(group, sig->offsets64, sig->indices64);
      ASSERT_TRUE(dg) << dg.message();
      Status st = startBusy(runtime, rig);
      ASSERT_TRUE(st.isOk()) << st.message();
      // The build, queued on A behind the busy wait; kept with the group
      // as snapshotSlicesOf keeps the items it builds.
      auto built = ops::buildSnapshotSlicesOnGpu(runtime, *dg, sliceSize,
                                                 "on stream A", rig.a.handle(),
                                                 /*poison=*/true);
      ASSERT_TRUE(built) << built.message();
      ASSERT_EQ(built->builtBy, ops::SliceBuilder::Gpu);
      ASSERT_TRUE(built->ready) << "a GPU build without its event";
      ASSERT_EQ(built->builtOn, rig.a.handle());
      dg->slices.emplace(sliceSize, built.take());
      // B waits for the default stream's work (the poison): only for that,
      // never for A.
      auto poisoned = rt::StreamEvent::create();
      ASSERT_TRUE(poisoned) << poisoned.message();
      ASSERT_TRUE(poisoned->record(nullptr).isOk());
      ASSERT_TRUE(poisoned->waitOn(rig.b.handle()).isOk());
      st = ops::launchSnapshotSpmm(runtime, kernel, *dg, *dx, *dy, norm, false,
                                   rig.b.handle());
      ASSERT_TRUE(st.isOk()) << st.message();
      ASSERT_TRUE(probe(rig, rig.seen, rig.b.handle()).isOk());
      ASSERT_TRUE(probe(rig, rig.early, rig.watch.handle()).isOk());
      const char *missedWait = " (a kernel on B that did not wait for the "
                               "build reads the poisoned items)";
      st = rig.watch.synchronize();
      ASSERT_TRUE(st.isOk()) << st.message() << missedWait;
      EXPECT_EQ(readFlag(rig.early), 0u)
          << "the busy wait on A had ended before the launch on B was "
             "queued: the test shows nothing (lengthen kBusyNs)";
      st = rig.b.synchronize();
      ASSERT_TRUE(st.isOk()) << st.message() << missedWait;
      EXPECT_EQ(readFlag(rig.seen), 1u)
          << "the kernel on B ran before the build on A had ended";
      st = rig.a.synchronize();
      ASSERT_TRUE(st.isOk()) << st.message();
      auto got = ops::downloadTensor(*dy, count, sig->type);
      ASSERT_TRUE(got) << got.message();
      auto check = ops::compareSnapshotSpmm(kernel, group, x, *got);
      ASSERT_TRUE(check) << check.message();
      EXPECT_TRUE(check->ok) << check->report;
      ++ran;
    }
  }
  EXPECT_EQ(ran, 6) << "groups run (3 of 4 snapshots, 3 of 8)";
}

// The negative control: the same build on A behind the busy wait, its event
// dropped, so that snapshotSlicesOf (what launchSnapshotSpmm calls first)
// has nothing to wait for on B. The probe queued next on B then runs during
// the busy wait and reads 0: LaunchOnAnotherStreamWaitsForTheBuild's check
// of that probe fails when the wait is missing. (No sliced kernel runs
// here: it would read items not written yet, whatever that memory holds.)
TEST(SnapshotSlicesGpu, ProbeSeesAMissingWait) {
  Gpu &g = gpu();
  if (!g.skipReason.empty())
    GTEST_SKIP() << g.skipReason;
  ASSERT_TRUE(g.error.empty()) << g.error;
  rt::Runtime &runtime = *g.runtime;
  WaitRig rig;
  Status made = makeWaitRig(runtime, rig);
  ASSERT_TRUE(made.isOk()) << made.message();
  std::string error;
  std::vector<test::NamedGroup> groups = test::sliceTestGroups(error);
  ASSERT_TRUE(error.empty()) << error;
  const test::NamedGroup *named = nullptr;
  for (const test::NamedGroup &candidate : groups)
    if (!named && candidate.group.size() == 4 && candidate.group.numNodes > 0)
      named = &candidate;
  ASSERT_NE(named, nullptr) << "no group of 4 snapshots with rows";
  const SnapshotGroup &group = named->group;
  auto dg = ops::uploadSnapshotGroup(group, false, false);
  ASSERT_TRUE(dg) << dg.message();
  {
    // Loads the build's kernels.
    auto warm = ops::buildSnapshotSlicesOnGpu(runtime, *dg, 7, "warm-up");
    ASSERT_TRUE(warm) << warm.message();
  }
  Status st = startBusy(runtime, rig);
  ASSERT_TRUE(st.isOk()) << st.message();
  auto built = ops::buildSnapshotSlicesOnGpu(runtime, *dg, 7, "on stream A",
                                             rig.a.handle());
  ASSERT_TRUE(built) << built.message();
  ASSERT_TRUE(built->ready);
  built->ready.reset();
  dg->slices.emplace(7, built.take());
  auto slices =
      ops::snapshotSlicesOf(runtime, *dg, 7, "on stream B", rig.b.handle());
  ASSERT_TRUE(slices) << slices.message();
  ASSERT_TRUE(probe(rig, rig.seen, rig.b.handle()).isOk());
  ASSERT_TRUE(probe(rig, rig.early, rig.watch.handle()).isOk());
  for (const rt::Stream *stream : {&rig.watch, &rig.b, &rig.a}) {
    st = stream->synchronize();
    ASSERT_TRUE(st.isOk()) << st.message();
  }
  EXPECT_EQ(readFlag(rig.early), 0u)
      << "the busy wait on A had ended before the probes were queued";
  EXPECT_EQ(readFlag(rig.seen), 0u)
      << "B waited for A without the build's event";
}

} // namespace
