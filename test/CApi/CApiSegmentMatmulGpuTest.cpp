//===- CApiSegmentMatmulGpuTest.cpp - Segmented matmul in C on a GPU ------===//
//
// The segmented matmuls through libgnnc_c.so's C functions only (segment
// layout, kernel, launch) on device memory the test allocates, as a host
// like PyTorch would: the forward, the input gradient and the weight
// gradient, for exact f32, TF32, f16 and bf16, on segments of 0, 1 and
// many rows with a type without rows, one type, and no rows at all;
// outputs poisoned with NaN, launched on a created stream, compared with
// the double-precision reference (gnnc/reference/SegmentMatmul.h) within
// the tolerance of the kernel's arithmetic (ops::segmentMatmulTolerance).
// Also: a second request returns the same kernel; launches with short
// buffers, overlapping outputs or the wrong entry point are refused.
//
// Skips, saying why, when no GPU is present.
//
//===----------------------------------------------------------------------===//
#include "gnnc-c/Gnnc.h"

#include "gnnc/Plan/Plan.h"
#include "gnnc/Plan/Schedule.h"
#include "gnnc/Plan/Types.h"
#include "gnnc/ops/SegmentMatmul.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/reference/SegmentMatmul.h"
#include "gnnc/reference/Spmm.h"
#include "gnnc/runtime/Driver.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace gnnc;

namespace {

#define SKIP_WITHOUT_GPU()                                                     \
  do {                                                                         \
    char why[512] = "";                                                        \
    if (!gnnc_gpu_available(why, sizeof(why)))                                 \
      GTEST_SKIP() << "no GPU: " << why;                                       \
  } while (false)

gnnc_buffer bufferOf(const rt::DeviceBuffer &b) {
  return {b.address(), static_cast<uint64_t>(b.size())};
}

/// The device, a stream and a context, shared by the tests.
struct Fixture {
  std::optional<rt::Device> device;
  std::optional<rt::Stream> stream;
  gnnc_context ctx = nullptr;
  std::string error;
};

Fixture &fixture() {
  static Fixture *f = [] {
    auto *f = new Fixture;
    auto device = rt::Device::open(0);
    if (!device) {
      f->error = device.message();
      return f;
    }
    f->device.emplace(device.take());
    auto stream = rt::Stream::create();
    if (!stream) {
      f->error = stream.message();
      return f;
    }
    f->stream.emplace(stream.take());
    if (gnnc_context_create(0, nullptr, "off", &f->ctx) != GNNC_OK)
      f->error = gnnc_last_error();
    return f;
  }();
  return *f;
}

uint64_t streamHandle() {
  return reinterpret_cast<uintptr_t>(fixture().stream->handle());
}

rt::DeviceBuffer upload(const std::vector<float> &host, ElementType type) {
  auto b =
      ops::uploadTensor(host.empty() ? std::vector<float>{0.f} : host, type);
  EXPECT_TRUE(b) << b.message();
  return b ? b.take() : rt::DeviceBuffer();
}

rt::DeviceBuffer poisoned(size_t count, ElementType type) {
  auto b = ops::allocatePoisoned(std::max<size_t>(count, 1), type);
  EXPECT_TRUE(b) << b.message();
  return b ? b.take() : rt::DeviceBuffer();
}

/// The buffer the kernel sees for `count` elements of `type` at `b` (an
/// empty tensor is {address, 0}).
gnnc_buffer elements(const rt::DeviceBuffer &b, size_t count,
                     ElementType type) {
  return {b.address(), static_cast<uint64_t>(count * elementSize(type))};
}

std::vector<float> download(const rt::DeviceBuffer &b, size_t count,
                            ElementType type) {
  if (count == 0)
    return {};
  auto got = ops::downloadTensor(b, count, type);
  EXPECT_TRUE(got) << got.message();
  return got ? got.take() : std::vector<float>(count, NAN);
}

/// One math: the element type and whether TF32 is allowed.
struct Math {
  ElementType type;
  bool tf32;
  const char *name;
};
const Math kMaths[] = {{ElementType::F32, false, "f32"},
                       {ElementType::F32, true, "tf32"},
                       {ElementType::F16, false, "f16"},
                       {ElementType::BF16, false, "bf16"}};

gnnc_segment_desc descOf(const Math &math, int64_t k, int64_t m,
                         gnnc_segment_pass pass) {
  gnnc_segment_desc d;
  gnnc_segment_desc_init(&d);
  d.dtype = static_cast<gnnc_dtype>(math.type);
  d.k = k;
  d.m = m;
  d.pass = pass;
  d.allow_tf32 = math.tf32;
  return d;
}

/// The layout of `seg` on the fixture's context (destroyed by the caller).
gnnc_segments layoutOf(const std::vector<int64_t> &seg) {
  gnnc_segments s = nullptr;
  EXPECT_EQ(gnnc_segments_create(fixture().ctx, "test", seg.back(),
                                 int64_t(seg.size()) - 1, seg.data(), &s),
            GNNC_OK)
      << gnnc_last_error();
  return s;
}

/// The kernel of `d` on `s`, the schedule it runs (parsed), checked to be
/// returned again by a second request.
gnnc_segment_kernel kernelFor(gnnc_segments s, const gnnc_segment_desc &d,
                              Schedule &schedule) {
  gnnc_segment_kernel kernel = nullptr;
  EXPECT_EQ(gnnc_segment_kernel_get(s, &d, nullptr, &kernel), GNNC_OK)
      << gnnc_last_error();
  if (!kernel)
    return nullptr;
  gnnc_segment_kernel again = nullptr;
  EXPECT_EQ(gnnc_segment_kernel_get(s, &d, nullptr, &again), GNNC_OK);
  EXPECT_EQ(again, kernel) << "a second request compiled again";
  char text[512], source[32];
  EXPECT_EQ(gnnc_segment_kernel_schedule(kernel, text, sizeof(text), source,
                                         sizeof(source)),
            GNNC_OK)
      << gnnc_last_error();
  EXPECT_EQ(std::string(source), "default");
  auto parsed = parseSchedule(text);
  EXPECT_TRUE(parsed) << parsed.message();
  if (parsed)
    schedule = *parsed;
  return kernel;
}

/// Every output within `tolerance` of its term magnitude of the reference.
void expectClose(const std::vector<float> &got,
                 const std::vector<double> &expected,
                 const std::vector<double> &magnitude, double tolerance,
                 const std::string &what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double allowed = tolerance * magnitude[i] + 1e-30;
    if (!(std::fabs(double(got[i]) - expected[i]) <= allowed)) {
      if (++bad <= 5)
        ADD_FAILURE() << what << ": element " << i << " is " << got[i]
                      << ", expected " << expected[i] << " (allowed " << allowed
                      << ")";
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << got.size()
                    << " elements differ";
}

/// The forward, the input gradient and the weight gradient of `math` with
/// K and M on the segments `seg`, each against the reference.
void checkAllPasses(const std::vector<int64_t> &seg, const Math &math,
                    int64_t k, int64_t m, uint64_t seed) {
  const int64_t rows = seg.back(), types = int64_t(seg.size()) - 1;
  const ElementType t = math.type;
  SCOPED_TRACE(std::string(math.name) + " K " + std::to_string(k) + " M " +
               std::to_string(m) + ", " + std::to_string(types) + " types, " +
               std::to_string(rows) + " rows");
  gnnc_segments s = layoutOf(seg);
  ASSERT_NE(s, nullptr);
  auto random = [&](int64_t count, uint64_t salt) {
    return ref::roundThrough(
        ref::randomFeatures(std::max<int64_t>(count, 1), seed ^ salt), t);
  };
  std::vector<float> x = random(rows * k, 1), w = random(types * k * m, 2),
                     dy = random(rows * m, 3);
  x.resize(size_t(rows * k));
  w.resize(size_t(types * k * m));
  dy.resize(size_t(rows * m));
  rt::DeviceBuffer dX = upload(x, t), dW = upload(w, t), dDy = upload(dy, t);
  const uint64_t stream = streamHandle();

  // Forward: y = x W_t.
  {
    Schedule schedule;
    gnnc_segment_kernel kernel =
        kernelFor(s, descOf(math, k, m, GNNC_SEGMENT_FORWARD), schedule);
    ASSERT_NE(kernel, nullptr);
    // Tensor cores whenever the precision allows them and the plan's rule
    // (segmentTensorCoreFits: K and M multiples of 8, ...) accepts the
    // chosen tile; exact SIMT otherwise.
    Schedule onTensorCores = schedule;
    onTensorCores.math = MathMode::TensorCore;
    onTensorCores.threadsPerBlock = 0;
    const bool fits =
        segmentTensorCoreFits(segmentMatmulOp(t, k, m), onTensorCores).isOk();
    // (mma.sync or, on compute capability 9.0, wgmma: the model's pick.)
    EXPECT_EQ(gnnc::onTensorCores(schedule.math),
              (t != ElementType::F32 || math.tf32) && fits)
        << schedule.str();
    rt::DeviceBuffer y = poisoned(size_t(rows * m), t);
    ASSERT_EQ(gnnc_segment_matmul(kernel, elements(dX, x.size(), t),
                                  elements(dW, w.size(), t),
                                  elements(y, size_t(rows * m), t), stream),
              GNNC_OK)
        << gnnc_last_error();
    ASSERT_TRUE(fixture().stream->synchronize());
    std::vector<double> expected, magnitude;
    ref::segmentMatmul(x.data(), w.data(), seg.data(), types, k, m, expected,
                       &magnitude);
    expectClose(download(y, size_t(rows * m), t), expected, magnitude,
                ops::segmentMatmulTolerance(segmentMatmulOp(t, k, m), schedule),
                "forward");
  }
  // Input gradient: dx = dy W_t^T.
  {
    Schedule schedule;
    gnnc_segment_kernel kernel =
        kernelFor(s, descOf(math, k, m, GNNC_SEGMENT_INPUT_GRAD), schedule);
    ASSERT_NE(kernel, nullptr);
    rt::DeviceBuffer dx = poisoned(size_t(rows * k), t);
    ASSERT_EQ(gnnc_segment_matmul(kernel, elements(dDy, dy.size(), t),
                                  elements(dW, w.size(), t),
                                  elements(dx, size_t(rows * k), t), stream),
              GNNC_OK)
        << gnnc_last_error();
    ASSERT_TRUE(fixture().stream->synchronize());
    std::vector<double> expected, magnitude;
    ref::segmentMatmulInputGrad(dy.data(), w.data(), seg.data(), types, k, m,
                                expected, &magnitude);
    expectClose(download(dx, size_t(rows * k), t), expected, magnitude,
                ops::segmentMatmulTolerance(segmentMatmulInputGradOp(t, k, m),
                                            schedule),
                "input gradient");
  }
  // Weight gradient: dW_t = x_t^T dy_t (zeros for a type without rows).
  {
    Schedule schedule;
    gnnc_segment_kernel kernel =
        kernelFor(s, descOf(math, k, m, GNNC_SEGMENT_WEIGHT_GRAD), schedule);
    ASSERT_NE(kernel, nullptr);
    rt::DeviceBuffer dw = poisoned(size_t(types * k * m), t);
    ASSERT_EQ(gnnc_segment_matmul_weight_grad(
                  kernel, elements(dX, x.size(), t),
                  elements(dDy, dy.size(), t),
                  elements(dw, size_t(types * k * m), t), stream),
              GNNC_OK)
        << gnnc_last_error();
    ASSERT_TRUE(fixture().stream->synchronize());
    std::vector<double> expected, magnitude;
    ref::segmentMatmulWeightGrad(x.data(), dy.data(), seg.data(), types, k, m,
                                 expected, &magnitude);
    expectClose(download(dw, size_t(types * k * m), t), expected, magnitude,
                ops::segmentMatmulTolerance(segmentMatmulWeightGradOp(t, k, m),
                                            schedule),
                "weight gradient");
  }
  gnnc_segments_destroy(s);
}

/// Types of 0, 1, many (300: several tiles) and 2 rows, an empty type
/// between them, and a last type of 0 rows.
const std::vector<int64_t> kRagged = {0, 0, 1, 301, 301, 303, 303};

/// 150 types of 0 to 40 rows (fixed seed).
std::vector<int64_t> manyTypes() {
  std::mt19937_64 rng(3);
  std::vector<int64_t> seg = {0};
  for (int t = 0; t < 150; ++t)
    seg.push_back(seg.back() + int64_t(rng() % 41));
  return seg;
}

TEST(CApiSegmentMatmulGpu, RaggedSegmentsEveryMath) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(fixture().error.empty()) << fixture().error;
  uint64_t seed = 1;
  for (const Math &math : kMaths) {
    checkAllPasses(kRagged, math, 64, 32, seed++);
    checkAllPasses(kRagged, math, 33, 17, seed++);
  }
}

TEST(CApiSegmentMatmulGpu, ManyTypesAndWideWeights) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(fixture().error.empty()) << fixture().error;
  uint64_t seed = 100;
  for (const Math &math : kMaths)
    checkAllPasses(manyTypes(), math, 128, 128, seed++);
  // 256 x 256: tensor cores only (exact f32 does not fit a block).
  for (const Math &math : kMaths)
    if (math.type != ElementType::F32 || math.tf32)
      checkAllPasses(kRagged, math, 256, 256, seed++);
}

TEST(CApiSegmentMatmulGpu, OneTypeAndNoRows) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(fixture().error.empty()) << fixture().error;
  uint64_t seed = 200;
  for (const Math &math : kMaths) {
    checkAllPasses({0, 777}, math, 64, 64, seed++);
    checkAllPasses({0, 1}, math, 32, 32, seed++);
    // No rows: nothing to compute, and the weight gradient is all zeros.
    checkAllPasses({0, 0, 0}, math, 32, 32, seed++);
  }
}

TEST(CApiSegmentMatmulGpu, BadLaunchesAreRefused) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(fixture().error.empty()) << fixture().error;
  const std::vector<int64_t> seg = {0, 10, 20};
  gnnc_segments s = layoutOf(seg);
  ASSERT_NE(s, nullptr);
  const Math &math = kMaths[0];
  Schedule schedule;
  gnnc_segment_kernel fwd =
      kernelFor(s, descOf(math, 16, 8, GNNC_SEGMENT_FORWARD), schedule);
  gnnc_segment_kernel dw =
      kernelFor(s, descOf(math, 16, 8, GNNC_SEGMENT_WEIGHT_GRAD), schedule);
  ASSERT_NE(fwd, nullptr);
  ASSERT_NE(dw, nullptr);
  const ElementType t = math.type;
  rt::DeviceBuffer x = poisoned(20 * 16, t), w = poisoned(2 * 16 * 8, t),
                   y = poisoned(20 * 8, t);
  std::string message;
  auto refused = [&](gnnc_status status) {
    message = gnnc_last_error();
    return status == GNNC_ERROR;
  };
  EXPECT_TRUE(refused(gnnc_segment_matmul(fwd, elements(x, 20 * 16 - 1, t),
                                          bufferOf(w), bufferOf(y), 0)));
  EXPECT_NE(message.find("x has 1276 bytes, the kernel reads 1280"),
            std::string::npos)
      << message;
  EXPECT_TRUE(refused(gnnc_segment_matmul(
      fwd, bufferOf(x), elements(w, 16 * 8, t), bufferOf(y), 0)));
  EXPECT_NE(message.find("w has"), std::string::npos) << message;
  EXPECT_TRUE(refused(
      gnnc_segment_matmul(fwd, bufferOf(x), bufferOf(w), bufferOf(x), 0)));
  EXPECT_NE(message.find("overlap"), std::string::npos) << message;
  EXPECT_TRUE(refused(
      gnnc_segment_matmul(dw, bufferOf(x), bufferOf(y), bufferOf(w), 0)));
  EXPECT_NE(message.find("gnnc_segment_matmul_weight_grad"), std::string::npos)
      << message;
  EXPECT_TRUE(refused(gnnc_segment_matmul_weight_grad(
      fwd, bufferOf(x), bufferOf(y), bufferOf(w), 0)));
  EXPECT_NE(message.find("launch it with gnnc_segment_matmul"),
            std::string::npos)
      << message;

  // Tensor-core kernels copy and store 16 bytes at a time: an operand one
  // f16 element past a 16-byte boundary is refused, not launched.
  const Math &half = kMaths[2];
  gnnc_segment_kernel tc =
      kernelFor(s, descOf(half, 16, 8, GNNC_SEGMENT_FORWARD), schedule);
  gnnc_segment_kernel tcDw =
      kernelFor(s, descOf(half, 16, 8, GNNC_SEGMENT_WEIGHT_GRAD), schedule);
  ASSERT_NE(tc, nullptr);
  ASSERT_NE(tcDw, nullptr);
  rt::DeviceBuffer hx = poisoned(20 * 16 + 8, half.type),
                   hw = poisoned(2 * 16 * 8, half.type),
                   hy = poisoned(20 * 8 + 8, half.type);
  const gnnc_buffer xAt16 = elements(hx, 20 * 16, half.type),
                    yAt16 = elements(hy, 20 * 8, half.type);
  const gnnc_buffer xOff = {xAt16.address + 2, xAt16.bytes},
                    yOff = {yAt16.address + 2, yAt16.bytes};
  EXPECT_TRUE(refused(gnnc_segment_matmul(tc, xOff, bufferOf(hw), yAt16, 0)));
  EXPECT_NE(message.find("x starts at address 0x"), std::string::npos)
      << message;
  EXPECT_NE(message.find("not a multiple of 16 bytes"), std::string::npos)
      << message;
  EXPECT_TRUE(refused(gnnc_segment_matmul(tc, xAt16, bufferOf(hw), yOff, 0)));
  EXPECT_NE(message.find("y starts at address 0x"), std::string::npos)
      << message;
  EXPECT_TRUE(refused(
      gnnc_segment_matmul_weight_grad(tcDw, xAt16, yOff, bufferOf(hw), 0)));
  EXPECT_NE(message.find("dy starts at address 0x"), std::string::npos)
      << message;
  // The same buffers from their 16-byte starts launch.
  EXPECT_EQ(gnnc_segment_matmul(tc, xAt16, bufferOf(hw), yAt16, streamHandle()),
            GNNC_OK)
      << gnnc_last_error();
  EXPECT_TRUE(fixture().stream->synchronize());
  gnnc_segments_destroy(s);
}

} // namespace
