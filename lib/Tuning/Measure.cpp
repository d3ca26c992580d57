//===- Measure.cpp - Timing schedules and calibrating on a GPU ------------===//
//
// Everything here needs a GPU. It is compiled everywhere but, in this
// repository's CI without a GPU, never run: the tests that call it skip.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Tuning/Autotuner.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/ops/Sddmm.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/reference/Spmm.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Nvrtc.h"
#include "gnnc/runtime/Runtime.h"
#include "gnnc/runtime/Timing.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <random>

using namespace gnnc;
using namespace gnnc::tuning;

namespace {

/// Loads `spec` and, when `options.check`, runs `check` on it: the
/// correctness gate, so that a schedule that computes a wrong result is
/// never timed.
Expected<rt::LoadedKernel> loadChecked(
    rt::Runtime &runtime, const rt::KernelSpec &spec,
    const MeasureOptions &options,
    const std::function<Expected<ops::KernelCheck>(const rt::LoadedKernel &)>
        &check) {
  Expected<rt::LoadedKernel> kernel = runtime.load(spec);
  if (!kernel || !options.check)
    return kernel;
  Expected<ops::KernelCheck> checked = check(*kernel);
  if (!checked)
    return checked.status();
  if (!checked->ok)
    return Status::error("wrong result: " + checked->report);
  return kernel;
}

/// The median milliseconds of `runs` runs of `work` after `warmups`, each
/// timed with CUDA events, without flushing the L2 (rt::KernelTimer).
Expected<double> medianMs(rt::KernelTimer &timer, int warmups, int runs,
                          const std::function<Status()> &work) {
  Expected<rt::TimingStats> stats =
      timer.time({warmups, runs, /*flushL2=*/false}, work);
  if (!stats)
    return stats.status();
  return stats->medianMs;
}

/// The median seconds of `options.runs` runs of `work` (after
/// `options.warmups`), each timed with CUDA events and preceded by a write
/// over twice the L2, so that no run finds the last one's data there.
Expected<double> timeWithFlushedL2(rt::Runtime &runtime,
                                   const MeasureOptions &options,
                                   const std::function<Status()> &work) {
  Expected<rt::KernelTimer> timer = rt::KernelTimer::create(runtime.device());
  if (!timer)
    return timer.status();
  Expected<rt::TimingStats> stats =
      timer->time({options.warmups, options.runs, /*flushL2=*/true}, work);
  if (!stats)
    return stats.status();
  return stats->medianMs * 1e-3;
}

} // namespace

class gnnc::tuning::MeasureInputs {
public:
  explicit MeasureInputs(const graph::CsrGraph &g) : g(g) {}

  /// The graph on the device with 64- or 32-bit offsets and indices.
  Expected<const ops::DeviceGraph *> graph(bool offsets64, bool indices64) {
    auto key = std::make_pair(offsets64, indices64);
    auto hit = graphs.find(key);
    if (hit == graphs.end()) {
      Expected<ops::DeviceGraph> up = ops::uploadGraph(g, offsets64, indices64);
      if (!up)
        return up.status();
      hit = graphs.emplace(key, up.take()).first;
    }
    return &hit->second;
  }

  /// `count` random elements of `type` on the device (ref::randomFeatures
  /// with `seed` the first time: uniform in [-1, 1), drawn on the host's
  /// threads), the same buffer for every caller: kernels only read their
  /// inputs.
  Expected<const rt::DeviceBuffer *> random(ElementType type, int64_t count,
                                            uint64_t seed) {
    auto key = std::make_pair(type, count);
    auto hit = tensors.find(key);
    if (hit == tensors.end()) {
      Expected<rt::DeviceBuffer> up =
          ops::uploadTensor(ref::randomFeatures(count, seed), type);
      if (!up)
        return up.status();
      hit = tensors.emplace(key, up.take()).first;
    }
    return &hit->second;
  }

  /// The graph's column factors deg_in(c)^-exponent on the device.
  Expected<const rt::DeviceBuffer *> columnNorm(double exponent) {
    auto hit = norms.find(exponent);
    if (hit == norms.end()) {
      Expected<rt::DeviceBuffer> up = ops::uploadColumnNorm(g, exponent);
      if (!up)
        return up.status();
      hit = norms.emplace(exponent, up.take()).first;
    }
    return &hit->second;
  }

  const graph::CsrGraph &g;

private:
  std::map<std::pair<bool, bool>, ops::DeviceGraph> graphs;
  std::map<std::pair<ElementType, int64_t>, rt::DeviceBuffer> tensors;
  std::map<double, rt::DeviceBuffer> norms;
};

std::shared_ptr<MeasureInputs>
gnnc::tuning::makeMeasureInputs(const graph::CsrGraph &g) {
  return std::make_shared<MeasureInputs>(g);
}

namespace {

/// The calibration kernels: a grid-stride copy of 16-byte vectors, a
/// one-thread pointer chase and an empty kernel.
const char *kCalibrationSource = R"(
extern "C" __global__ void gnnc_copy(const int4 *__restrict__ in,
                                     int4 *__restrict__ out, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = in[i];
}
extern "C" __global__ void gnnc_chase(const unsigned long long *next,
                                      long long steps, int resume,
                                      unsigned long long *sink) {
  unsigned long long p = resume ? *sink : 0ull;
  for (long long i = 0; i < steps; ++i)
    p = next[p];
  *sink = p;
}
extern "C" __global__ void gnnc_empty() {}
)";

} // namespace

namespace {

/// The inputs of a measurement on `g`: the run's shared ones when
/// `options` holds them for this graph, else a set of its own.
std::shared_ptr<MeasureInputs> inputsFor(const graph::CsrGraph &g,
                                         const MeasureOptions &options) {
  if (options.inputs && &options.inputs->g == &g)
    return options.inputs;
  return makeMeasureInputs(g);
}

/// measureSchedule's body for a graph (CsrGraph or BatchedGraph) with its
/// check; `upload(inputs, offsets64, indices64)` gives the graph on the
/// device.
template <typename Graph, typename Upload>
Expected<double> measureSpmmOn(rt::Runtime &runtime, const rt::KernelSpec &spec,
                               const Graph &graph, const graph::CsrGraph &g,
                               const MeasureOptions &options, Upload upload) {
  Expected<rt::LoadedKernel> kernel =
      loadChecked(runtime, spec, options, [&](const rt::LoadedKernel &k) {
        return ops::checkSpmm(runtime, k, graph, options.seed);
      });
  if (!kernel)
    return kernel.status();

  // Rows of x and y are `stride` elements apart (the width unless the
  // kernel has padded rows).
  Expected<ops::SpmmSignature> sig = ops::spmmSignature(kernel->spec);
  if (!sig)
    return sig.status();
  const int64_t stride = sig->rowStride;
  std::shared_ptr<MeasureInputs> inputs = inputsFor(g, options);
  Expected<const ops::DeviceGraph *> dg =
      upload(*inputs, sig->offsets64, sig->indices64);
  if (!dg)
    return dg.status();
  Expected<const rt::DeviceBuffer *> dx =
      inputs->random(sig->type, g.numCols * stride, options.seed);
  if (!dx)
    return dx.status();
  const rt::DeviceBuffer *dv = nullptr;
  if (sig->edgeValues) {
    Expected<const rt::DeviceBuffer *> up =
        inputs->random(sig->type, std::max<int64_t>(1, g.nnz()), options.seed);
    if (!up)
      return up.status();
    dv = *up;
  }
  Expected<rt::DeviceBuffer> dy =
      ops::allocatePoisoned(static_cast<size_t>(g.numRows * stride), sig->type);
  if (!dy)
    return dy.status();
  // Right and both scaling read the graph's column factors.
  const rt::DeviceBuffer *colNorm = nullptr;
  if (sig->needsColumnNorm()) {
    Expected<const rt::DeviceBuffer *> up =
        inputs->columnNorm(sig->colNormExponent);
    if (!up)
      return up.status();
    colNorm = *up;
  }
  // Attention reads a score per row and per column.
  ops::AttentionScores scores;
  if (sig->attention) {
    Expected<const rt::DeviceBuffer *> rows = inputs->random(
        sig->type, std::max<int64_t>(1, g.numRows), options.seed);
    if (!rows)
      return rows.status();
    Expected<const rt::DeviceBuffer *> cols = inputs->random(
        sig->type, std::max<int64_t>(1, g.numCols), options.seed);
    if (!cols)
      return cols.status();
    scores = {*rows, *cols};
  }
  return timeWithFlushedL2(runtime, options, [&] {
    return ops::launchSpmm(runtime, *kernel, **dg, **dx, dv, *dy,
                           /*synchronize=*/false, colNorm,
                           /*stream=*/nullptr,
                           /*linear=*/nullptr,
                           sig->attention ? &scores : nullptr);
  });
}

} // namespace

Expected<double> gnnc::tuning::measureSchedule(rt::Runtime &runtime,
                                               const rt::KernelSpec &spec,
                                               const graph::CsrGraph &g,
                                               const MeasureOptions &options) {
  return measureSpmmOn(
      runtime, spec, g, g, options,
      [](MeasureInputs &inputs, bool offsets64, bool indices64) {
        return inputs.graph(offsets64, indices64);
      });
}

Expected<double> gnnc::tuning::measureSchedule(rt::Runtime &runtime,
                                               const rt::KernelSpec &spec,
                                               const graph::BatchedGraph &batch,
                                               const MeasureOptions &options) {
  // A batch's upload carries its graph offsets: it is this measurement's.
  std::optional<ops::DeviceGraph> own;
  return measureSpmmOn(runtime, spec, batch, batch.graph, options,
                       [&](MeasureInputs &, bool offsets64, bool indices64)
                           -> Expected<const ops::DeviceGraph *> {
                         Expected<ops::DeviceGraph> up =
                             ops::uploadBatch(batch, offsets64, indices64);
                         if (!up)
                           return up.status();
                         own = up.take();
                         return &*own;
                       });
}

Expected<GpuModel> gnnc::tuning::calibrate(rt::Runtime &runtime) {
  const rt::Device &device = runtime.device();
  GpuModel model = fromDevice(device);
  rt::CompileOptions options;
  options.arch = device.archString();
  Expected<rt::CompiledKernel> binary =
      rt::compileCuda(kCalibrationSource, "gnnc_calibration.cu", options);
  if (!binary)
    return binary.status();
  Expected<rt::Module> module = rt::Module::load(binary->binary);
  if (!module)
    return module.status();
  Expected<rt::Function> copy = module->function("gnnc_copy");
  Expected<rt::Function> chase = module->function("gnnc_chase");
  Expected<rt::Function> empty = module->function("gnnc_empty");
  if (!copy || !chase || !empty)
    return Status::error("calibration kernels missing from the module");
  Expected<rt::KernelTimer> timer = rt::KernelTimer::create(device);
  if (!timer)
    return timer.status();

  // Copy bandwidth: 1 GiB in, 1 GiB out; bytes read plus written.
  const size_t copyBytes = size_t(1) << 30;
  Expected<rt::DeviceBuffer> in = rt::DeviceBuffer::allocate(copyBytes);
  Expected<rt::DeviceBuffer> out = rt::DeviceBuffer::allocate(copyBytes);
  if (!in || !out)
    return (!in ? in.status() : out.status());
  GNNC_RETURN_IF_ERROR(in->fill(1));
  {
    uint64_t inAddr = in->address(), outAddr = out->address();
    long long n = static_cast<long long>(copyBytes / 16);
    void *args[] = {&inAddr, &outAddr, &n};
    unsigned grid = static_cast<unsigned>(device.smCount() * 8);
    Expected<double> ms = medianMs(*timer, 3, 10, [&] {
      return rt::launch(*copy, {grid, 1, 1}, {256, 1, 1}, 0, args, false);
    });
    if (!ms)
      return ms.status();
    model.dramBytesPerSecond = 2.0 * copyBytes / (*ms * 1e-3);
  }

  // Dependent-load latency: one thread follows a random cycle. Over 4x the
  // L2, each run resumes where the last one stopped, so every step reads a
  // slot no earlier run touched and misses; over 1/4 of the L2, every run
  // restarts at slot 0 and (after a warm-up pass) every step hits.
  auto chaseLatency = [&](size_t bytes, long long steps,
                          int resume) -> Expected<double> {
    size_t n = bytes / 8;
    std::vector<uint64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    // A random cycle over all 8-byte slots: consecutive steps rarely share
    // a sector.
    std::mt19937_64 rng(7);
    std::shuffle(order.begin() + 1, order.end(), rng);
    std::vector<uint64_t> next(n);
    for (size_t i = 0; i < n; ++i)
      next[order[i]] = order[(i + 1) % n];
    Expected<rt::DeviceBuffer> buf = rt::DeviceBuffer::allocate(n * 8);
    Expected<rt::DeviceBuffer> sink = rt::DeviceBuffer::allocate(8);
    if (!buf || !sink)
      return !buf ? buf.status() : sink.status();
    GNNC_RETURN_IF_ERROR(buf->copyFromHost(next.data(), n * 8));
    GNNC_RETURN_IF_ERROR(sink->fill(0));
    uint64_t addr = buf->address(), sinkAddr = sink->address();
    void *args[] = {&addr, &steps, &resume, &sinkAddr};
    Expected<double> ms = medianMs(*timer, 1, 3, [&] {
      return rt::launch(*chase, {1, 1, 1}, {1, 1, 1}, 0, args, false);
    });
    if (!ms)
      return ms.status();
    return *ms * 1e-3 / static_cast<double>(steps);
  };
  Expected<double> dram =
      chaseLatency(static_cast<size_t>(4 * model.l2Bytes), 100000, 1);
  if (!dram)
    return dram.status();
  model.loadLatencySeconds = *dram;
  Expected<double> l2 =
      chaseLatency(static_cast<size_t>(model.l2Bytes / 4), 100000, 0);
  if (!l2)
    return l2.status();
  model.l2LatencySeconds = *l2;

  // Launch overhead: an empty kernel between two events.
  Expected<double> ms = medianMs(*timer, 10, 50, [&] {
    return rt::launch(*empty, {1, 1, 1}, {32, 1, 1}, 0, nullptr, false);
  });
  if (!ms)
    return ms.status();
  model.launchSeconds = *ms * 1e-3;
  model.source = "calibrated on " + device.name();
  return model;
}

Expected<double> gnnc::tuning::measureSddmmSchedule(
    rt::Runtime &runtime, const rt::KernelSpec &spec, const graph::CsrGraph &g,
    const MeasureOptions &options) {
  Expected<rt::LoadedKernel> kernel =
      loadChecked(runtime, spec, options, [&](const rt::LoadedKernel &k) {
        return ops::checkSddmm(runtime, k, g, options.seed);
      });
  if (!kernel)
    return kernel.status();

  Expected<ops::SddmmSignature> sig = ops::sddmmSignature(kernel->spec);
  if (!sig)
    return sig.status();
  const int64_t width = sig->featureWidth;
  std::shared_ptr<MeasureInputs> inputs = inputsFor(g, options);
  Expected<const ops::DeviceGraph *> dg =
      inputs->graph(sig->offsets64, sig->indices64);
  if (!dg)
    return dg.status();
  // Random features for both sides (at least one element each, so that a
  // graph without rows still gets buffers), a NaN-poisoned output.
  Expected<const rt::DeviceBuffer *> rowFeatures = inputs->random(
      sig->type, std::max<int64_t>(1, g.numRows * width), options.seed);
  if (!rowFeatures)
    return rowFeatures.status();
  Expected<const rt::DeviceBuffer *> colFeatures = inputs->random(
      sig->type, std::max<int64_t>(1, g.numCols * width), options.seed);
  if (!colFeatures)
    return colFeatures.status();
  Expected<rt::DeviceBuffer> out =
      ops::allocatePoisoned(static_cast<size_t>(std::max<int64_t>(
                                1, g.nnz() * sig->outputsPerEdge())),
                            sig->type);
  if (!out)
    return out.status();
  return timeWithFlushedL2(runtime, options, [&] {
    return ops::launchSddmm(runtime, *kernel, **dg, **rowFeatures,
                            **colFeatures, *out, /*synchronize=*/false);
  });
}

Expected<double> gnnc::tuning::measureFor(rt::Runtime &runtime,
                                          const rt::KernelSpec &spec,
                                          const graph::CsrGraph &g,
                                          const MeasureOptions &options) {
  if (spec.op && spec.op->kind == OpKind::Sddmm)
    return measureSddmmSchedule(runtime, spec, g, options);
  if (spec.op && spec.op->kind == OpKind::Spmm)
    return measureSchedule(runtime, spec, g, options);
  return Status::error("kernel '" + spec.name +
                       "': the tuner measures gnn.spmm and gnn.sddmm kernels");
}
