//===- GpuTest.cpp - Runtime tests that need a GPU ------------------------===//
//
// Every test skips, saying why, when no GPU is present.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "gnnc/runtime/Runtime.h"
#include "gnnc/runtime/Timing.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <vector>

using namespace gnnc;
using namespace gnnc::rt;

namespace {

#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    std::string why;                                                           \
    if (!gpuAvailable(&why))                                                   \
      GTEST_SKIP() << "no GPU: " << why;                                       \
  } while (false)

using test::saxpySpec;

class Gpu : public ::testing::Test {
protected:
  test::TempDir cacheDir;
};

/// The saxpy kernel loaded through a runtime, its arguments bound to x (all
/// ones) and y (zeros) of `n` floats and a = 1: every launch adds 1 to y.
struct BoundSaxpy {
  Runtime runtime;
  LoadedKernel kernel;
  DeviceBuffer x, y;
  ArgPack args;
};

Expected<BoundSaxpy> bindSaxpy(const std::string &cacheDir, int64_t n) {
  Expected<Runtime> runtime = Runtime::create(0, cacheDir);
  if (!runtime)
    return runtime.status();
  Expected<LoadedKernel> kernel = runtime->load(saxpySpec());
  if (!kernel)
    return kernel.status();
  std::vector<float> ones(n, 1.0f);
  Expected<DeviceBuffer> x = DeviceBuffer::allocate(n * sizeof(float));
  if (!x)
    return x.status();
  Expected<DeviceBuffer> y = DeviceBuffer::allocate(n * sizeof(float));
  if (!y)
    return y.status();
  GNNC_RETURN_IF_ERROR(x->copyFromHost(ones.data(), n * sizeof(float)));
  GNNC_RETURN_IF_ERROR(y->fill(0));
  ArgPack args;
  args.bind("x", *x).bind("y", *y).bind("a", 1.0f).bind("n", n);
  return BoundSaxpy{runtime.take(), kernel.take(), x.take(), y.take(), args};
}

TEST_F(Gpu, DeviceProperties) {
  REQUIRE_GPU();
  Expected<Device> device = Device::open(0);
  ASSERT_TRUE(device) << device.message();
  EXPECT_FALSE(device->name().empty());
  EXPECT_GE(device->computeCapability().first, 7);
  EXPECT_EQ(device->archString().rfind("sm_", 0), 0u);
  EXPECT_GT(device->smCount(), 0);
  EXPECT_GT(device->l2Bytes(), 0u);
  EXPECT_GE(device->maxSharedPerBlock(), 48u * 1024);
  EXPECT_GT(device->totalMemory(), 0u);
  Expected<std::pair<size_t, size_t>> memory = device->memoryInfo();
  ASSERT_TRUE(memory) << memory.message();
  EXPECT_LE(memory->first, memory->second);
  Expected<int> version = driverVersion();
  ASSERT_TRUE(version) << version.message();
  std::cout << "device: " << device->name() << " (" << device->archString()
            << ", " << device->smCount() << " SMs, driver " << *version
            << ")\n";
  EXPECT_FALSE(Device::open(1000));
}

TEST_F(Gpu, SaxpyThroughRuntime) {
  REQUIRE_GPU();
  Expected<Runtime> runtime = Runtime::create(0, cacheDir.path());
  ASSERT_TRUE(runtime) << runtime.message();
  Expected<LoadedKernel> kernel = runtime->load(saxpySpec());
  ASSERT_TRUE(kernel) << kernel.message();

  const int64_t n = 100003;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = float(i % 97);
    y[i] = float(i % 13) - 6.0f;
  }
  Expected<DeviceBuffer> dx = DeviceBuffer::allocate(n * sizeof(float));
  Expected<DeviceBuffer> dy = DeviceBuffer::allocate(n * sizeof(float));
  ASSERT_TRUE(dx && dy);
  ASSERT_TRUE(dx->copyFromHost(x.data(), n * sizeof(float)));
  ASSERT_TRUE(dy->copyFromHost(y.data(), n * sizeof(float)));

  ArgPack args;
  args.bind("x", *dx).bind("y", *dy).bind("a", 2.5f).bind("n", n);
  Status launched = runtime->launch(*kernel, args);
  ASSERT_TRUE(launched) << launched.message();
  std::vector<float> out(n);
  ASSERT_TRUE(dy->copyToHost(out.data(), n * sizeof(float)));
  for (int64_t i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(out[i], 2.5f * x[i] + y[i]) << "at " << i;

  // Zero items: the launch is skipped and y is untouched.
  args.bind("n", int64_t(0));
  ASSERT_TRUE(runtime->launch(*kernel, args));
  std::vector<float> unchanged(n);
  ASSERT_TRUE(dy->copyToHost(unchanged.data(), n * sizeof(float)));
  EXPECT_EQ(unchanged, out);

  // Poisoning with fill.
  ASSERT_TRUE(dy->fill(0xff));
  ASSERT_TRUE(dy->copyToHost(out.data(), sizeof(float)));
  EXPECT_TRUE(std::isnan(out[0]));
}

TEST_F(Gpu, ArgumentErrorsNameTheParameter) {
  REQUIRE_GPU();
  Expected<Runtime> runtime = Runtime::create(0, cacheDir.path());
  ASSERT_TRUE(runtime) << runtime.message();
  Expected<LoadedKernel> kernel = runtime->load(saxpySpec());
  ASSERT_TRUE(kernel) << kernel.message();
  Expected<DeviceBuffer> buffer = DeviceBuffer::allocate(1024);
  ASSERT_TRUE(buffer);

  ArgPack missing;
  missing.bind("x", *buffer).bind("y", *buffer).bind("n", int64_t(4));
  Status status = runtime->launch(*kernel, missing);
  EXPECT_EQ(status.message(),
            "kernel 'saxpy': parameter 'a' (f32) is not bound");

  ArgPack wrongKind;
  wrongKind.bind("x", *buffer)
      .bind("y", *buffer)
      .bind("a", 1.0f)
      .bind("n", int32_t(4));
  status = runtime->launch(*kernel, wrongKind);
  EXPECT_EQ(status.message(), "kernel 'saxpy': parameter 'n' is i64 but was "
                              "bound to a i32 value");

  ArgPack extra;
  extra.bind("x", *buffer)
      .bind("y", *buffer)
      .bind("a", 1.0f)
      .bind("n", int64_t(4))
      .bind("z", 1.0f);
  status = runtime->launch(*kernel, extra);
  EXPECT_NE(status.message().find("'z'"), std::string::npos);
}

TEST_F(Gpu, BadLaunchNamesTheKernel) {
  REQUIRE_GPU();
  Expected<Runtime> runtime = Runtime::create(0, cacheDir.path());
  ASSERT_TRUE(runtime) << runtime.message();
  KernelSpec spec = saxpySpec("saxpy_wide");
  spec.launch.blockX = 4096;
  spec.launch.itemsPerBlock = 4096;
  Expected<LoadedKernel> kernel = runtime->load(spec);
  ASSERT_TRUE(kernel) << kernel.message();
  Expected<DeviceBuffer> buffer = DeviceBuffer::allocate(4096 * sizeof(float));
  ASSERT_TRUE(buffer);
  ArgPack args;
  args.bind("x", *buffer)
      .bind("y", *buffer)
      .bind("a", 1.0f)
      .bind("n", int64_t(4096));
  Status status = runtime->launch(*kernel, args);
  ASSERT_FALSE(status);
  std::cout << "bad launch: " << status.message() << "\n";
  EXPECT_NE(status.message().find("kernel 'saxpy_wide'"), std::string::npos);
  EXPECT_NE(status.message().find("block 4096x1x1"), std::string::npos);
  EXPECT_NE(status.message().find("CUDA_ERROR"), std::string::npos);

  // The context is still usable afterwards.
  ArgPack fine = args;
  KernelSpec good = saxpySpec("saxpy_after");
  Expected<LoadedKernel> after = runtime->load(good);
  ASSERT_TRUE(after) << after.message();
  Status ok = runtime->launch(*after, fine);
  EXPECT_TRUE(ok) << ok.message();
}

TEST_F(Gpu, LargeDynamicSharedMemory) {
  REQUIRE_GPU();
  Expected<Runtime> runtime = Runtime::create(0, cacheDir.path());
  ASSERT_TRUE(runtime) << runtime.message();
  unsigned shared = 96 * 1024;
  if (runtime->device().maxSharedPerBlock() < shared)
    GTEST_SKIP() << "device allows only "
                 << runtime->device().maxSharedPerBlock() << " shared bytes";
  KernelSpec spec;
  spec.name = "shared_sum";
  spec.source = "extern \"C\" __global__ void shared_sum(float *out, int n) {\n"
                "  extern __shared__ float tile[];\n"
                "  for (int i = threadIdx.x; i < n; i += blockDim.x)\n"
                "    tile[i] = 1.0f;\n"
                "  __syncthreads();\n"
                "  if (threadIdx.x == 0) {\n"
                "    float s = 0;\n"
                "    for (int i = 0; i < n; ++i) s += tile[i];\n"
                "    out[0] = s;\n"
                "  }\n"
                "}\n";
  spec.params = {{"out", ParamKind::Pointer}, {"n", ParamKind::Int32}};
  spec.launch.sharedBytes = shared;
  Expected<LoadedKernel> kernel = runtime->load(spec);
  ASSERT_TRUE(kernel) << kernel.message();
  Expected<DeviceBuffer> out = DeviceBuffer::allocate(sizeof(float));
  ASSERT_TRUE(out);
  ArgPack args;
  int32_t n = int32_t(shared / sizeof(float));
  args.bind("out", *out).bind("n", n);
  Status status = runtime->launch(*kernel, args);
  ASSERT_TRUE(status) << status.message();
  float sum = 0;
  ASSERT_TRUE(out->copyToHost(&sum, sizeof(sum)));
  EXPECT_EQ(sum, float(n));
}

TEST_F(Gpu, ColdAndCachedLoadTimes) {
  REQUIRE_GPU();
  Expected<Runtime> runtime = Runtime::create(0, cacheDir.path());
  ASSERT_TRUE(runtime) << runtime.message();
  // A source no earlier test compiled, so that the first load is cold.
  KernelSpec spec = saxpySpec("saxpy_timed");
  spec.source +=
      "// " +
      std::to_string(
          std::chrono::steady_clock::now().time_since_epoch().count()) +
      "\n";
  LoadStats cold, cached;
  Expected<LoadedKernel> first = runtime->load(spec, &cold);
  ASSERT_TRUE(first) << first.message();
  Expected<LoadedKernel> second = runtime->load(spec, &cached);
  ASSERT_TRUE(second) << second.message();
  EXPECT_FALSE(cold.cacheHit);
  EXPECT_TRUE(cached.cacheHit);
  std::cout << "load, cold:   " << cold.totalMs << " ms (compile "
            << cold.compileMs << " ms, module " << cold.moduleLoadMs << " ms)\n"
            << "load, cached: " << cached.totalMs << " ms (cache "
            << cached.compileMs << " ms, module " << cached.moduleLoadMs
            << " ms)\n";
  RecordProperty("cold_ms", std::to_string(cold.totalMs));
  RecordProperty("cached_ms", std::to_string(cached.totalMs));
}

TEST_F(Gpu, EventTimerMeasuresAKernel) {
  REQUIRE_GPU();
  const int64_t n = 1 << 22;
  Expected<BoundSaxpy> saxpy = bindSaxpy(cacheDir.path(), n);
  ASSERT_TRUE(saxpy) << saxpy.message();
  Expected<EventTimer> timer = EventTimer::create();
  ASSERT_TRUE(timer) << timer.message();
  ASSERT_TRUE(timer->start());
  ASSERT_TRUE(saxpy->runtime.launch(saxpy->kernel, saxpy->args,
                                    /*synchronize=*/false));
  ASSERT_TRUE(timer->stop());
  Expected<float> ms = timer->elapsedMs();
  ASSERT_TRUE(ms) << ms.message();
  EXPECT_GT(*ms, 0.0f);
  std::cout << "saxpy over " << n << " floats: " << *ms << " ms\n";
}

TEST_F(Gpu, KernelTimerTimesEveryRunAfterTheWarmups) {
  REQUIRE_GPU();
  const int64_t n = 1 << 22;
  Expected<BoundSaxpy> bound = bindSaxpy(cacheDir.path(), n);
  ASSERT_TRUE(bound) << bound.message();
  const Device &device = bound->runtime.device();
  Expected<KernelTimer> timer = KernelTimer::create(device);
  ASSERT_TRUE(timer) << timer.message();
  EXPECT_EQ(timer->flushBytes(), l2FlushBytes(device.l2Bytes()));
  int launches = 0;
  auto saxpy = [&] {
    ++launches;
    return bound->runtime.launch(bound->kernel, bound->args,
                                 /*synchronize=*/false);
  };
  TimingOptions options;
  options.warmups = 2;
  options.runs = 5;
  Expected<std::vector<float>> times = timer->timeRuns(options, saxpy);
  ASSERT_TRUE(times) << times.message();
  EXPECT_EQ(launches, 7);
  ASSERT_EQ(times->size(), 5u);
  for (float ms : *times)
    EXPECT_GT(ms, 0.0f);

  options.flushL2 = false;
  Expected<TimingStats> stats = timer->time(options, saxpy);
  ASSERT_TRUE(stats) << stats.message();
  EXPECT_EQ(launches, 14);
  EXPECT_EQ(stats->runs, 5);
  EXPECT_GT(stats->minMs, 0.0);
  EXPECT_LE(stats->minMs, stats->medianMs);
  EXPECT_LE(stats->medianMs, stats->maxMs);
  // Every launch ran once: y = 14 * x.
  std::vector<float> got(n);
  ASSERT_TRUE(bound->y.copyToHost(got.data(), n * sizeof(float)));
  for (int64_t i = 0; i < n; i += 4099)
    ASSERT_EQ(got[i], 14.0f) << "element " << i;

  // Without the flush, back to back: each of the 7 runs launches 3 times.
  options.backToBack = 3;
  Expected<TimingStats> batched = timer->time(options, saxpy);
  ASSERT_TRUE(batched) << batched.message();
  EXPECT_EQ(launches, 35);
  EXPECT_EQ(batched->runs, 5);
  EXPECT_GT(batched->minMs, 0.0);
  options.backToBack = 1;

  // A launch that fails ends the timing with its error.
  Expected<TimingStats> failed =
      timer->time(options, [] { return Status::error("launch refused"); });
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.message(), "launch refused");
  std::cout << "saxpy over " << n << " floats: median " << stats->medianMs
            << " ms (min " << stats->minMs << ", max " << stats->maxMs << ")\n";
}

} // namespace
