//===- Harness.cpp - Timing and checking sparse kernels -------------------===//
#include "gnnc/Bench/Harness.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Tuning/CostModel.h"
#include "gnnc/graph/Parallel.h"
#include "gnnc/ops/EdgeSoftmax.h"
#include "gnnc/ops/Sddmm.h"
#include "gnnc/reference/Spmm.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <sstream>

using namespace gnnc;
using namespace gnnc::bench;

//===----------------------------------------------------------------------===//
// Byte counts and bandwidth
//===----------------------------------------------------------------------===//

namespace {

/// row_ptr + col_idx (+ one value per edge).
double structureBytes(const ProblemShape &s) {
  double bytes = double(s.numRows + 1) * double(s.offsetBytes) +
                 double(s.nnz) * double(s.indexBytes);
  if (s.edgeValues)
    bytes += double(s.nnz) * double(s.elementBytes);
  return bytes;
}

} // namespace

ByteCounts gnnc::bench::spmmBytes(const ProblemShape &s) {
  const double row = double(s.width) * double(s.elementBytes);
  ByteCounts counts;
  counts.compulsory = structureBytes(s) + double(s.numCols) * row + // X once
                      double(s.numRows) * row;                      // Y once
  counts.gather = structureBytes(s) + double(s.nnz) * row + // X per edge
                  double(s.numRows) * row;
  return counts;
}

ByteCounts gnnc::bench::sddmmBytes(const ProblemShape &s) {
  const double row = double(s.width) * double(s.elementBytes);
  // The output values are written once whether or not the shape says the
  // kernel reads edge values.
  ProblemShape withValues = s;
  withValues.edgeValues = true;
  ByteCounts counts;
  counts.compulsory = structureBytes(withValues) + double(s.numRows) * row +
                      double(s.numCols) * row;
  counts.gather = structureBytes(withValues) + double(s.numRows) * row +
                  double(s.nnz) * row;
  return counts;
}

double gnnc::bench::gigabytesPerSecond(double bytes, double ms) {
  return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0.0;
}

//===----------------------------------------------------------------------===//
// Timing
//===----------------------------------------------------------------------===//

Expected<Bench> Bench::create(const TimingOptions &options,
                              std::string cacheDir) {
  if (options.runs < 1 || options.warmups < 0)
    return Status::error("timing needs at least one run and no negative "
                         "warm-up count");
  auto runtime = rt::Runtime::create(0, std::move(cacheDir));
  if (!runtime)
    return runtime.status();
  auto timer = rt::KernelTimer::create(runtime->device());
  if (!timer)
    return timer.status();
  Bench bench(runtime.take(), timer.take(), options);
  bench.sampleMemory();
  return bench;
}

Expected<TimingStats> Bench::time(const std::function<Status()> &work) {
  return timer_.time(options_, work);
}

size_t Bench::sampleMemory() {
  auto info = runtime_.device().memoryInfo();
  if (!info)
    return 0;
  size_t used = info->second - info->first;
  peakUsed_ = std::max(peakUsed_, used);
  return used;
}

size_t Bench::resetPeak() {
  size_t old = peakUsed_;
  peakUsed_ = 0;
  sampleMemory();
  return old;
}

//===----------------------------------------------------------------------===//
// Host helpers
//===----------------------------------------------------------------------===//

void gnnc::bench::parallelFor(int64_t n,
                              const std::function<void(int64_t, int64_t)> &fn) {
  graph::parallelForRange(n, int64_t(1) << 16, /*numThreads=*/0, fn);
}

void gnnc::bench::randomInputsInto(HostVector<float> &out, int64_t n,
                                   uint64_t seed, ElementType type, float lo,
                                   float hi) {
  n = std::max<int64_t>(n, 0);
  resizeForOverwrite(out, static_cast<size_t>(n));
  ref::randomFeaturesInto(out.data(), n, seed, lo, hi);
  if (type == ElementType::F32)
    return;
  parallelFor(n, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      out[i] = roundToElementType(out[i], type);
  });
}

HostVector<float> gnnc::bench::randomInputs(int64_t n, uint64_t seed,
                                            ElementType type) {
  HostVector<float> out;
  randomInputsInto(out, n, seed, type);
  return out;
}

Expected<rt::DeviceBuffer>
gnnc::bench::uploadConverted(const float *host, size_t count, ElementType type,
                             HostVector<uint16_t> *scratch) {
  size_t bytes = count * elementSize(type);
  auto buffer = rt::DeviceBuffer::allocate(std::max<size_t>(bytes, 1));
  if (!buffer)
    return buffer.status();
  if (count == 0)
    return buffer;
  if (type == ElementType::F32) {
    GNNC_RETURN_IF_ERROR(buffer->copyFromHost(host, bytes));
    return buffer;
  }
  HostVector<uint16_t> local;
  HostVector<uint16_t> &bits = scratch ? *scratch : local;
  resizeForOverwrite(bits, count);
  parallelFor(static_cast<int64_t>(count), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      bits[i] = type == ElementType::F16 ? floatToHalf(host[i])
                                         : floatToBf16(host[i]);
  });
  GNNC_RETURN_IF_ERROR(buffer->copyFromHost(bits.data(), bytes));
  return buffer;
}

Expected<rt::DeviceBuffer> gnnc::bench::uploadFilled(size_t count, float value,
                                                     ElementType type) {
  HostVector<float> host;
  resizeForOverwrite(host, count);
  parallelFor(static_cast<int64_t>(count), [&](int64_t lo, int64_t hi) {
    std::fill(host.begin() + lo, host.begin() + hi, value);
  });
  return uploadConverted(host.data(), count, type);
}

Status gnnc::bench::downloadConverted(const rt::DeviceBuffer &buffer,
                                      size_t count, ElementType type,
                                      HostVector<float> &out,
                                      HostVector<uint16_t> *scratch) {
  size_t bytes = count * elementSize(type);
  if (bytes > buffer.size())
    return Status::error("download of " + std::to_string(count) + " " +
                         elementTypeName(type) + " elements exceeds the " +
                         std::to_string(buffer.size()) + "-byte buffer");
  if (count == 0) {
    out.clear();
    return Status::ok();
  }
  if (type == ElementType::F32) {
    // The driver copies on one thread: page the array in on all first.
    resizeForOverwrite(out, count, /*touch=*/true);
    return buffer.copyToHost(out.data(), bytes);
  }
  HostVector<uint16_t> local;
  HostVector<uint16_t> &bits = scratch ? *scratch : local;
  resizeForOverwrite(bits, count, /*touch=*/true);
  GNNC_RETURN_IF_ERROR(buffer.copyToHost(bits.data(), bytes));
  resizeForOverwrite(out, count);
  parallelFor(static_cast<int64_t>(count), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      out[i] = type == ElementType::F16 ? halfToFloat(bits[i])
                                        : bf16ToFloat(bits[i]);
  });
  return Status::ok();
}

ops::SpmmCheck gnnc::bench::compareScaled(const float *got,
                                          const double *expected,
                                          const double *magnitude, size_t count,
                                          int64_t width, double tol,
                                          double absTol) {
  ops::SpmmCheck check;
  std::mutex mutex;
  int64_t mismatches = 0;
  double worst = 0; // largest |got - ref| / bound among passing elements
  parallelFor(static_cast<int64_t>(count), [&](int64_t lo, int64_t hi) {
    int64_t bad = 0;
    double localWorst = 0;
    for (int64_t i = lo; i < hi; ++i) {
      double g = got[i], r = expected[i];
      bool ok;
      double bound = tol * magnitude[i] + absTol + 1e-30;
      if (std::isnan(g) || std::isnan(r)) {
        ok = false;
      } else if (std::isinf(g) || std::isinf(r)) {
        ok = g == r;
      } else {
        double diff = std::fabs(g - r);
        ok = diff <= bound;
        if (ok)
          localWorst = std::max(localWorst, diff / bound);
      }
      bad += ok ? 0 : 1;
    }
    std::lock_guard<std::mutex> lock(mutex);
    mismatches += bad;
    worst = std::max(worst, localWorst);
  });
  check.ok = mismatches == 0;
  if (check.ok) {
    char text[192];
    std::snprintf(text, sizeof(text),
                  "all %zu elements within %.3g * sum|terms| (largest "
                  "error / allowed = %.3g)",
                  count, tol, worst);
    check.report = text;
    return check;
  }
  // The detailed report (first mismatches, norms) from the reference
  // library; single-threaded and on copies, but only on failure.
  std::string report;
  Status cmp = ref::compareToReferenceScaled(
      std::vector<float>(got, got + count),
      std::vector<double>(expected, expected + count),
      std::vector<double>(magnitude, magnitude + count), width, tol, &report,
      absTol);
  check.report = cmp.isOk() ? report : cmp.message();
  return check;
}

//===----------------------------------------------------------------------===//
// Problems
//===----------------------------------------------------------------------===//

Expected<DeviceGraphs> gnnc::bench::uploadGraphs(const graph::CsrGraph &g,
                                                 bool offsets64) {
  DeviceGraphs graphs;
  graphs.host = &g;
  auto gnncGraph = ops::uploadGraph(g, offsets64, /*indices64=*/false);
  if (!gnncGraph)
    return gnncGraph.status();
  graphs.gnnc = gnncGraph.take();
  auto rowPtr32 = g.rowPtr32();
  if (!rowPtr32)
    return rowPtr32.status().withContext("graph '" + g.name +
                                         "' for cuSPARSE's 32-bit offsets");
  auto buffer = rt::DeviceBuffer::allocate(rowPtr32->size() * 4);
  if (!buffer)
    return buffer.status();
  GNNC_RETURN_IF_ERROR(
      buffer->copyFromHost(rowPtr32->data(), rowPtr32->size() * 4));
  graphs.rowPtr32 = buffer.take();
  graphs.bytes = graphs.gnnc.rowPtr.size() + graphs.gnnc.colIdx.size() +
                 graphs.rowPtr32.size();
  return graphs;
}

Expected<SpmmProblem>
gnnc::bench::makeSpmmProblem(const DeviceGraphs &graphs, ElementType type,
                             int64_t width, bool edgeValues, uint64_t seed,
                             HostBuffers recycled) {
  const graph::CsrGraph &g = *graphs.host;
  SpmmProblem p;
  p.graphs = &graphs;
  p.type = type;
  p.width = width;
  p.seed = seed;
  p.host = std::move(recycled);
  randomInputsInto(p.host.x, g.numCols * width, seed, type);
  auto x =
      uploadConverted(p.host.x.data(), p.host.x.size(), type, &p.host.bits);
  if (!x)
    return x.status();
  p.x = x.take();
  auto y = rt::DeviceBuffer::allocate(
      std::max<size_t>(p.outputCount() * elementSize(type), 1));
  if (!y)
    return y.status();
  p.y = y.take();
  if (edgeValues)
    GNNC_RETURN_IF_ERROR(addEdgeValues(p, seed));
  return p;
}

Status gnnc::bench::addEdgeValues(SpmmProblem &problem, uint64_t seed) {
  HostBuffers &host = problem.host;
  randomInputsInto(host.values, problem.graph().nnz(), seed ^ 0x5eedf00dull,
                   problem.type);
  auto values = uploadConverted(host.values.data(), host.values.size(),
                                problem.type, &host.bits);
  if (!values)
    return values.status();
  problem.values = values.take();
  problem.edgeValues = true;
  problem.seed = seed;
  problem.hasReference = false;
  problem.referenceSeconds = 0;
  return Status::ok();
}

void gnnc::bench::ensureReference(SpmmProblem &problem) {
  if (problem.hasReference)
    return;
  auto start = std::chrono::steady_clock::now();
  HostBuffers &host = problem.host;
  // Overwritten in full, and paged in by the threads that compute the rows.
  resizeForOverwrite(host.expected, problem.outputCount());
  resizeForOverwrite(host.magnitude, problem.outputCount());
  ref::spmmSumInto(problem.graph(),
                   problem.edgeValues ? host.values.data() : nullptr,
                   host.x.data(), problem.width, host.expected.data(),
                   host.magnitude.data(), /*numThreads=*/0);
  problem.referenceSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  problem.hasReference = true;
}

Expected<ops::SpmmCheck> gnnc::bench::checkOutput(SpmmProblem &problem,
                                                  double tolerance) {
  ensureReference(problem);
  HostBuffers &host = problem.host;
  GNNC_RETURN_IF_ERROR(downloadConverted(problem.y, problem.outputCount(),
                                         problem.type, host.got, &host.bits));
  return compareScaled(host.got, host.expected, host.magnitude, problem.width,
                       tolerance > 0 ? tolerance
                                     : ops::spmmTolerance(problem.type),
                       ops::spmmAbsoluteTolerance(problem.type));
}

Expected<ops::SpmmCheck>
gnnc::bench::checkOnProblem(Bench &bench, const rt::LoadedKernel &kernel,
                            SpmmProblem &problem) {
  auto sig = ops::spmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  const ops::DeviceGraph &dg = problem.graphs->gnnc;
  if (sig->type != problem.type || sig->featureWidth != problem.width ||
      sig->padded() || sig->edgeValues != problem.edgeValues ||
      sig->offsets64 != dg.offsets64 || sig->indices64 != dg.indices64)
    return Status::error("kernel '" + kernel.spec.name +
                         "' does not match the problem (type, width, unpadded "
                         "rows, edge values or index widths)");
  ensureReference(problem);
  // All-ones bytes are NaN in f32, f16 and bf16: an unwritten output fails.
  GNNC_RETURN_IF_ERROR(problem.y.fill(0xff));
  GNNC_RETURN_IF_ERROR(
      ops::launchSpmm(bench.runtime(), kernel, dg, problem.x,
                      problem.edgeValues ? &problem.values : nullptr, problem.y,
                      /*synchronize=*/true));
  // Atomic pieces of 16-bit results round once more each: the bound of the
  // graph's longest row applies (ops::checkSpmm bounds each row alone).
  int64_t maxDegree = 0;
  if (sig->atomicPieceEdges > 0)
    for (int64_t r = 0; r < problem.graph().numRows; ++r)
      maxDegree = std::max(maxDegree, problem.graph().degree(r));
  auto checked = checkOutput(problem, ops::spmmTolerance(*sig, maxDegree));
  if (!checked)
    return checked.status();
  ops::SpmmCheck check = checked.take();
  const graph::CsrGraph &g = problem.graph();
  check.report = kernel.spec.name + " on '" + g.name + "' (" +
                 std::to_string(g.numRows) + " rows, " +
                 std::to_string(g.nnz()) + " nnz, width " +
                 std::to_string(problem.width) + ", " +
                 elementTypeName(problem.type) + "): " + check.report;
  return check;
}

Expected<SddmmProblem> gnnc::bench::makeSddmmProblem(SpmmProblem &base,
                                                     uint64_t seed) {
  const graph::CsrGraph &g = base.graph();
  SddmmProblem p;
  p.base = &base;
  HostBuffers &host = base.host;
  randomInputsInto(host.rowX, g.numRows * base.width, seed, base.type);
  auto rowX = uploadConverted(host.rowX.data(), host.rowX.size(), base.type,
                              &host.bits);
  if (!rowX)
    return rowX.status();
  p.rowX = rowX.take();
  auto out = rt::DeviceBuffer::allocate(
      std::max<size_t>(p.outputCount() * elementSize(base.type), 1));
  if (!out)
    return out.status();
  p.out = out.take();
  return p;
}

void gnnc::bench::ensureSddmmReference(SddmmProblem &problem) {
  if (problem.hasReference)
    return;
  auto start = std::chrono::steady_clock::now();
  SpmmProblem &base = *problem.base;
  ref::sddmm(base.graph(), base.host.rowX.data(), base.host.x.data(),
             base.width, ref::SddmmForm::Dot, std::nullopt,
             base.host.edgeExpected, &base.host.edgeMagnitude,
             /*numThreads=*/0);
  problem.referenceSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  problem.hasReference = true;
}

Expected<ops::KernelCheck>
gnnc::bench::checkSddmmOnProblem(Bench &bench, const rt::LoadedKernel &kernel,
                                 SddmmProblem &problem) {
  auto sig = ops::sddmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  SpmmProblem &base = *problem.base;
  const ops::DeviceGraph &dg = base.graphs->gnnc;
  if (sig->type != base.type || sig->featureWidth != base.width ||
      sig->form != ref::SddmmForm::Dot || sig->leakyRelu ||
      sig->offsets64 != dg.offsets64 || sig->indices64 != dg.indices64)
    return Status::error("kernel '" + kernel.spec.name +
                         "' does not match the SDDMM problem (type, width, "
                         "form, leaky ReLU or index widths)");
  ensureSddmmReference(problem);
  GNNC_RETURN_IF_ERROR(problem.out.fill(0xff)); // NaN in every type
  GNNC_RETURN_IF_ERROR(ops::launchSddmm(bench.runtime(), kernel, dg,
                                        problem.rowX, base.x, problem.out,
                                        /*synchronize=*/true));
  HostBuffers &host = base.host;
  GNNC_RETURN_IF_ERROR(downloadConverted(problem.out, problem.outputCount(),
                                         base.type, host.got, &host.bits));
  ops::KernelCheck check =
      compareScaled(host.got.data(), host.edgeExpected.data(),
                    host.edgeMagnitude.data(), problem.outputCount(),
                    /*width=*/1, ops::spmmTolerance(base.type),
                    ops::spmmAbsoluteTolerance(base.type));
  const graph::CsrGraph &g = base.graph();
  check.report = kernel.spec.name + " on '" + g.name + "' (" +
                 std::to_string(g.numRows) + " rows, " +
                 std::to_string(g.nnz()) + " edge values, width " +
                 std::to_string(base.width) + ", " +
                 elementTypeName(base.type) + "): " + check.report;
  return check;
}

Expected<GatProblem> gnnc::bench::makeGatProblem(SpmmProblem &base,
                                                 uint64_t seed) {
  const graph::CsrGraph &g = base.graph();
  GatProblem p;
  p.base = &base;
  HostBuffers &host = base.host;
  randomInputsInto(host.attRow, g.numRows, seed, base.type, -4.0f, 4.0f);
  randomInputsInto(host.attCol, g.numCols, seed ^ 0xa77c01ull, base.type, -4.0f,
                   4.0f);
  auto attRow = uploadConverted(host.attRow.data(), host.attRow.size(),
                                base.type, &host.bits);
  if (!attRow)
    return attRow.status();
  p.attRow = attRow.take();
  auto attCol = uploadConverted(host.attCol.data(), host.attCol.size(),
                                base.type, &host.bits);
  if (!attCol)
    return attCol.status();
  p.attCol = attCol.take();
  const size_t edgeBytes = std::max<size_t>(
      static_cast<size_t>(g.nnz()) * elementSize(base.type), 1);
  auto logits = rt::DeviceBuffer::allocate(edgeBytes);
  if (!logits)
    return logits.status();
  p.logits = logits.take();
  auto alpha = rt::DeviceBuffer::allocate(edgeBytes);
  if (!alpha)
    return alpha.status();
  p.alpha = alpha.take();
  return p;
}

void gnnc::bench::gatChainReference(const graph::CsrGraph &g,
                                    const float *attRow, const float *attCol,
                                    const float *x, int64_t width, float slope,
                                    ElementType type, double *out,
                                    double *magnitude) {
  auto rows = [&](int64_t first, int64_t last) {
    std::vector<double> alpha;
    for (int64_t r = first; r < last; ++r) {
      double *y = out + r * width;
      double *mag = magnitude + r * width;
      std::fill(y, y + width, 0.0);
      std::fill(mag, mag + width, 0.0);
      const int64_t begin = g.rowPtr[r], end = g.rowPtr[r + 1];
      if (begin == end)
        continue;
      // The logits tensor, in the element type.
      alpha.resize(static_cast<size_t>(end - begin));
      double max = -HUGE_VAL;
      for (int64_t e = begin; e < end; ++e) {
        double v = double(attRow[r]) + double(attCol[g.colIdx[e]]);
        if (v < 0)
          v *= double(slope);
        double rounded = roundToElementType(static_cast<float>(v), type);
        alpha[e - begin] = rounded;
        max = std::max(max, rounded);
      }
      // The softmax weights, in the element type.
      double sum = 0;
      for (double &a : alpha) {
        a = std::exp(a - max);
        sum += a;
      }
      for (double &a : alpha)
        a = roundToElementType(static_cast<float>(a / sum), type);
      // The weighted sum of the neighbours' features.
      for (int64_t e = begin; e < end; ++e) {
        const double a = alpha[e - begin];
        const float *xc = x + int64_t(g.colIdx[e]) * width;
        for (int64_t f = 0; f < width; ++f) {
          double term = a * double(xc[f]);
          y[f] += term;
          mag[f] += std::fabs(term);
        }
      }
    }
  };
  const int threads = graph::hostThreads();
  if (threads == 1 || g.nnz() * width < (int64_t(1) << 20)) {
    rows(0, g.numRows);
    return;
  }
  // Pieces of about equal work; each output row belongs to one piece, so the
  // result ignores the thread count.
  std::vector<int64_t> bounds = graph::splitRowsByWork(
      g.rowPtr.data(), g.numRows, static_cast<int64_t>(threads) * 16);
  graph::parallelForEach(
      static_cast<int64_t>(bounds.size()) - 1, threads,
      [&](int64_t piece) { rows(bounds[piece], bounds[piece + 1]); });
}

double gnnc::bench::gatChainTolerance(ElementType type) {
  return 4 * ops::spmmTolerance(type);
}

void gnnc::bench::ensureGatReference(GatProblem &problem) {
  if (problem.hasReference)
    return;
  auto start = std::chrono::steady_clock::now();
  SpmmProblem &base = *problem.base;
  HostBuffers &host = base.host;
  // The SpMM problem's reference arrays now hold the chain's.
  base.hasReference = false;
  resizeForOverwrite(host.expected, base.outputCount());
  resizeForOverwrite(host.magnitude, base.outputCount());
  gatChainReference(base.graph(), host.attRow.data(), host.attCol.data(),
                    host.x.data(), base.width, kGatLeakySlope, base.type,
                    host.expected.data(), host.magnitude.data());
  problem.referenceSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  problem.hasReference = true;
}

//===----------------------------------------------------------------------===//
// gnnc kernels
//===----------------------------------------------------------------------===//

std::string ScheduleChoice::attribute() const {
  std::vector<std::string> parts;
  if (edgesPerWorker)
    parts.push_back("strategy = edge_parallel, edges_per_warp = " +
                    std::to_string(edgesPerWorker));
  if (groupSize)
    parts.push_back("strategy = neighbor_group, group_size = " +
                    std::to_string(groupSize));
  if (atomic)
    parts.push_back("write = atomic");
  if (sharedMerge)
    parts.push_back("write = shared");
  if (vectorWidth)
    parts.push_back("vector_width = " + std::to_string(vectorWidth));
  if (dimWorkers)
    parts.push_back("dim_workers = " + std::to_string(dimWorkers));
  if (threadsPerBlock)
    parts.push_back("threads_per_block = " + std::to_string(threadsPerBlock));
  if (blocksPerSm)
    parts.push_back("blocks_per_sm = " + std::to_string(blocksPerSm));
  if (parts.empty())
    return "";
  std::string text = "#gnn.schedule<";
  for (size_t i = 0; i < parts.size(); ++i)
    text += (i ? ", " : "") + parts[i];
  return text + ">";
}

namespace {

/// The integer after "key = " in `text`, or -1.
int findScheduleInt(const std::string &text, const std::string &key) {
  size_t at = text.find(key + " = ");
  if (at == std::string::npos)
    return -1;
  at += key.size() + 3;
  size_t end = at;
  while (end < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[end])))
    ++end;
  if (end == at || end - at > 6)
    return -1;
  return std::stoi(text.substr(at, end - at));
}

/// What gnn-default-schedule picks for dim_workers given a vector width.
int defaultDimWorkers(int64_t width, int vectorWidth) {
  int64_t chunks = (width + vectorWidth - 1) / vectorWidth;
  int workers = 1;
  while (workers < chunks && workers < 32)
    workers *= 2;
  return workers;
}

} // namespace

Expected<ScheduleChoice> gnnc::bench::parseSchedule(const std::string &text) {
  ScheduleChoice s;
  s.vectorWidth = findScheduleInt(text, "vector_width");
  s.dimWorkers = findScheduleInt(text, "dim_workers");
  s.threadsPerBlock = findScheduleInt(text, "threads_per_block");
  s.edgesPerWorker = std::max(0, findScheduleInt(text, "edges_per_warp"));
  s.blocksPerSm = std::max(0, findScheduleInt(text, "blocks_per_sm"));
  s.groupSize = std::max(0, findScheduleInt(text, "group_size"));
  s.atomic =
      s.edgesPerWorker > 0 && text.find("write = atomic") != std::string::npos;
  s.sharedMerge =
      s.edgesPerWorker > 0 && text.find("write = shared") != std::string::npos;
  if (s.vectorWidth <= 0 || s.dimWorkers <= 0 || s.threadsPerBlock <= 0)
    return Status::error("cannot read vector_width, dim_workers and "
                         "threads_per_block from the schedule '" +
                         text + "'");
  return s;
}

bool gnnc::bench::isLegalSchedule(const ScheduleChoice &s, ElementType type,
                                  int64_t width) {
  // The tuner's mirror of the verifier and the lowering: an illegal
  // schedule would fail the whole translation unit of its (type, width).
  if (s.groupSize > 0) {
    // The lowering's rule: one f32 row of shared memory per group in a
    // block; otherwise the vertex-parallel rules.
    if (s.dimWorkers <= 0 || s.threadsPerBlock % s.dimWorkers != 0 ||
        int64_t(s.threadsPerBlock / s.dimWorkers) * width * 4 > 96 * 1024 ||
        s.edgesPerWorker != 0 || s.atomic || s.sharedMerge)
      return false;
    ScheduleChoice vertex = s;
    vertex.groupSize = 0;
    return isLegalSchedule(vertex, type, width);
  }
  tuning::Problem problem;
  problem.type = type;
  problem.width = width;
  tuning::Schedule schedule;
  schedule.vectorWidth = s.vectorWidth;
  schedule.dimWorkers = s.dimWorkers;
  schedule.threadsPerBlock = s.threadsPerBlock;
  schedule.edgesPerWorker = s.edgesPerWorker;
  schedule.blocksPerSm = s.blocksPerSm;
  if (s.sharedMerge) {
    // The lowering's rule: two f32 rows per worker besides the row ends.
    int64_t workers = s.dimWorkers > 0 ? s.threadsPerBlock / s.dimWorkers : 0;
    int64_t bytes =
        workers * (s.edgesPerWorker + 1) * 4 + workers * 2 * width * 4;
    if (workers <= 0 || bytes > 96 * 1024 ||
        (s.blocksPerSm > 0 && s.blocksPerSm * bytes > 160 * 1024))
      return false;
  }
  return tuning::isLegal(problem, schedule);
}

std::vector<ScheduleChoice>
gnnc::bench::scheduleVariants(const ScheduleChoice &resolved, ElementType type,
                              int64_t width, size_t maxCount) {
  ScheduleChoice base = resolved;
  base.label = "default";
  std::vector<ScheduleChoice> candidates{base};
  auto variant = [&](const std::string &label, int vw, int dw) {
    ScheduleChoice s = base;
    s.label = label;
    s.vectorWidth = vw;
    s.dimWorkers = dw;
    candidates.push_back(s);
  };
  // Edge-parallel: rows split between workers of equal edge counts; 512
  // items per worker with 128-thread blocks (the row ends of a block's
  // workers stay within the same shared memory as 256 items at 256).
  auto edgeParallel = [&](int edges, int blocksPerSm, int threads = 0) {
    ScheduleChoice s = base;
    s.label = "ep" + std::to_string(edges) +
              (blocksPerSm ? "b" + std::to_string(blocksPerSm) : "") +
              (threads ? "t" + std::to_string(threads) : "");
    s.edgesPerWorker = edges;
    s.blocksPerSm = blocksPerSm;
    if (threads)
      s.threadsPerBlock = threads;
    candidates.push_back(s);
  };
  // Twice the threads per worker, half the elements per load: more loads
  // in flight for the short stretches of small, cache-resident graphs.
  auto halfVector = [&](int edges) {
    if (base.vectorWidth <= 1)
      return;
    ScheduleChoice s = base;
    s.label = "ep" + std::to_string(edges) + "vw" +
              std::to_string(base.vectorWidth / 2);
    s.edgesPerWorker = edges;
    s.vectorWidth = base.vectorWidth / 2;
    s.dimWorkers = defaultDimWorkers(width, s.vectorWidth);
    candidates.push_back(s);
  };
  edgeParallel(256, 0);
  edgeParallel(128, 0);
  halfVector(256);
  halfVector(128);
  edgeParallel(512, 0, 128);
  halfVector(64);
  edgeParallel(64, 0);
  edgeParallel(32, 0);
  // For comparison: split rows added atomically instead of staged, and
  // GNNAdvisor's neighbour groups (partial sums merged in shared memory,
  // rows that span blocks added atomically).
  {
    ScheduleChoice s = base;
    s.label = "ep256a";
    s.edgesPerWorker = 256;
    s.atomic = true;
    candidates.push_back(s);
    s.label = "ep256s";
    s.atomic = false;
    s.sharedMerge = true;
    candidates.push_back(s);
  }
  for (int groupSize : kBenchGroupSizes) {
    ScheduleChoice s = base;
    s.label = "ng" + std::to_string(groupSize);
    s.groupSize = groupSize;
    candidates.push_back(s);
  }
  // The same with registers capped so that 4 blocks fit on an SM (more
  // rows in flight per SM; since the kernels keep the current row's end in
  // a register this has lost everywhere it was measured).
  edgeParallel(256, 4);
  edgeParallel(128, 4);
  variant("dw*2", base.vectorWidth, base.dimWorkers * 2);
  variant("dw/2", base.vectorWidth, base.dimWorkers / 2);
  for (int vw : {2, 1})
    if (vw < base.vectorWidth)
      variant("vw=" + std::to_string(vw), vw, defaultDimWorkers(width, vw));

  std::vector<ScheduleChoice> chosen;
  for (const ScheduleChoice &s : candidates) {
    if (chosen.size() >= maxCount)
      break;
    if (!isLegalSchedule(s, type, width))
      continue;
    bool duplicate = false;
    for (const ScheduleChoice &c : chosen)
      duplicate |=
          c.vectorWidth == s.vectorWidth && c.dimWorkers == s.dimWorkers &&
          c.threadsPerBlock == s.threadsPerBlock &&
          c.edgesPerWorker == s.edgesPerWorker &&
          c.blocksPerSm == s.blocksPerSm && c.groupSize == s.groupSize &&
          c.atomic == s.atomic && c.sharedMerge == s.sharedMerge;
    if (!duplicate)
      chosen.push_back(s);
  }
  return chosen;
}

std::vector<ScheduleChoice>
gnnc::bench::sddmmScheduleVariants(const ScheduleChoice &resolved,
                                   ElementType type, int64_t width,
                                   size_t maxCount) {
  std::vector<ScheduleChoice> chosen;
  for (const ScheduleChoice &s :
       scheduleVariants(resolved, type, width, size_t(64)))
    if (s.blocksPerSm == 0 && s.groupSize == 0 && !s.atomic && !s.sharedMerge &&
        chosen.size() < maxCount)
      chosen.push_back(s);
  return chosen;
}

namespace {

/// `label` as part of a symbol: "dw*2" -> "dw_x2", "dw/2" -> "dw_d2".
std::string symbolPart(const std::string &label) {
  std::string part;
  for (char c : label) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      part += c;
    else if (c == '*')
      part += "_x";
    else if (c == '/')
      part += "_d";
    else
      part += '_';
  }
  return part;
}

} // namespace

std::string KernelRequest::symbol() const {
  const std::string type = elementTypeName(this->type);
  const std::string offsets = offsets64 ? "o64" : "o32";
  const std::string w = "_w" + std::to_string(width);
  switch (op) {
  case BenchOp::Spmm:
    return type + w + (edgeValues ? "_ve_" : "_v_") + offsets + "_" +
           symbolPart(schedule.label);
  case BenchOp::SddmmDot:
    return "sddmm_" + type + w + "_" + offsets + "_" +
           symbolPart(schedule.label);
  case BenchOp::GatLogits:
    return "gat_logits_" + type + "_" + offsets + "_" +
           symbolPart(schedule.label);
  case BenchOp::GatSoftmax:
    return "gat_softmax_" + type + "_" + offsets;
  case BenchOp::GatAggregate:
    return "gat_spmm_" + type + w + "_" + offsets + "_" +
           symbolPart(schedule.label);
  }
  return "unknown";
}

std::string
gnnc::bench::benchModuleText(const std::string &moduleName,
                             const std::vector<KernelRequest> &requests) {
  std::ostringstream os;
  os << "gnn.module @" << moduleName << " {\n";
  for (const KernelRequest &r : requests) {
    const std::string type = elementTypeName(r.type);
    const std::string graph = std::string("!gnn.graph<csr, ") +
                              (r.offsets64 ? "i64" : "i32") + ", i32>";
    const std::string x =
        "tensor<?x" + std::to_string(r.width) + "x" + type + ">";
    const std::string w = "tensor<?x" + type + ">";
    const std::string head = "tensor<?x1x" + type + ">";
    std::string attribute = r.schedule.attribute();
    os << "  gnn.kernel @" << r.symbol() << "(%g: " << graph;
    switch (r.op) {
    case BenchOp::SddmmDot:
      os << ", %a: " << x << ", %b: " << x << ") -> " << w << " {\n"
         << "    %e = gnn.sddmm %g, %a, %b";
      if (!attribute.empty())
        os << " {schedule = " << attribute << "}";
      os << " : " << graph << ", " << x << ", " << x << " -> " << w << "\n"
         << "    gnn.return %e : " << w << "\n  }\n";
      continue;
    case BenchOp::GatLogits: {
      char slope[32];
      std::snprintf(slope, sizeof(slope), "%.9g", double(kGatLeakySlope));
      os << ", %a: " << head << ", %b: " << head << ") -> " << head << " {\n"
         << "    %e = gnn.sddmm %g, %a, %b {form = #gnn<sddmm_form add>, "
         << "leaky_relu = " << slope << " : f32"
         << (attribute.empty() ? "" : ", schedule = " + attribute)
         << "} : " << graph << ", " << head << ", " << head << " -> " << head
         << "\n"
         << "    gnn.return %e : " << head << "\n  }\n";
      continue;
    }
    case BenchOp::GatSoftmax:
      os << ", %e: " << w << ") -> " << w << " {\n"
         << "    %a = gnn.edge_softmax %g, %e : " << graph << ", " << w
         << " -> " << w << "\n"
         << "    gnn.return %a : " << w << "\n  }\n";
      continue;
    case BenchOp::Spmm:
    case BenchOp::GatAggregate:
      break;
    }
    const bool values = r.edgeValues || r.op == BenchOp::GatAggregate;
    os << ", %x: " << x;
    if (values)
      os << ", %w: " << w;
    os << ") -> " << x << " {\n    %y = gnn.spmm %g, %x";
    if (values)
      os << " values(%w : " << w << ")";
    if (!attribute.empty())
      os << " {schedule = " << attribute << "}";
    os << " : " << graph << ", " << x << " -> " << x << "\n";
    os << "    gnn.return %y : " << x << "\n  }\n";
  }
  os << "}\n";
  return os.str();
}

Expected<std::vector<BenchKernel>>
gnnc::bench::compileBenchKernels(ElementType type, int64_t width,
                                 const KernelSetOptions &options) {
  // Kernel symbols already name the type and width: entry points read
  // "bench_f16_w64_v_o64_default".
  const std::string moduleName = "bench";
  KernelRequest spmm;
  spmm.type = type;
  spmm.width = width;
  spmm.offsets64 = options.offsets64;
  KernelRequest sddmm = spmm;
  sddmm.op = BenchOp::SddmmDot;
  // 1. The default schedules, as gnnc resolves them.
  std::vector<KernelRequest> probes{spmm};
  if (options.sddmmSchedules > 0)
    probes.push_back(sddmm);
  auto probe = compileGnn(benchModuleText(moduleName, probes), moduleName);
  if (!probe)
    return probe.status();
  if (probe->kernels.size() != probes.size())
    return Status::error("expected " + std::to_string(probes.size()) +
                         " kernels from the probe module, got " +
                         std::to_string(probe->kernels.size()));
  std::vector<ScheduleChoice> resolved;
  for (const KernelRequest &r : probes) {
    auto spec = findKernel(*probe, r.symbol());
    if (!spec)
      return spec.status();
    auto s = parseSchedule(spec->schedule);
    if (!s)
      return s.status();
    resolved.push_back(*s);
  }

  // 2. The defaults (left to gnnc, so they track the compiler's choice), the
  // variants (explicit), the SpMMve default and the chain, in one
  // translation unit.
  std::vector<KernelRequest> requests;
  auto addVariants = [&](const KernelRequest &base,
                         const std::vector<ScheduleChoice> &schedules) {
    for (const ScheduleChoice &s : schedules) {
      KernelRequest r = base;
      r.schedule = s;
      if (s.label == "default")
        r.schedule = ScheduleChoice();
      requests.push_back(r);
    }
  };
  addVariants(spmm,
              scheduleVariants(resolved[0], type, width,
                               std::max<size_t>(1, options.spmmSchedules)));
  if (options.edgeValues) {
    KernelRequest r = spmm;
    r.edgeValues = true;
    requests.push_back(r);
  }
  if (options.sddmmSchedules > 0)
    addVariants(sddmm, sddmmScheduleVariants(resolved[1], type, width,
                                             options.sddmmSchedules));
  if (options.gatChain) {
    // Two chains: every kernel with its default schedule, and the logits
    // and the aggregation edge-parallel, labelled "ep" (the aggregation
    // with 256 merge-path items per worker, the best SpMM schedule on most
    // large graphs; the logits with 64 per one-thread worker, as the row
    // ends of 256 such workers fit in shared memory; edge softmax has only
    // its vertex-parallel schedule).
    for (BenchOp op :
         {BenchOp::GatLogits, BenchOp::GatSoftmax, BenchOp::GatAggregate}) {
      KernelRequest r = spmm;
      r.op = op;
      requests.push_back(r);
      if (op == BenchOp::GatSoftmax)
        continue;
      r.schedule = resolved[0];
      r.schedule.label = "ep";
      r.schedule.edgesPerWorker = 256;
      if (op == BenchOp::GatLogits) {
        // One head: one thread per worker.
        r.schedule.vectorWidth = 1;
        r.schedule.dimWorkers = 1;
        r.schedule.edgesPerWorker = 64;
      }
      if (isLegalSchedule(r.schedule, type,
                          op == BenchOp::GatLogits ? 1 : width))
        requests.push_back(r);
    }
  }
  auto compiled = compileGnn(benchModuleText(moduleName, requests), moduleName);
  if (!compiled)
    return compiled.status();
  std::vector<BenchKernel> kernels;
  for (const KernelRequest &r : requests) {
    auto spec = findKernel(*compiled, r.symbol());
    if (!spec)
      return spec.status();
    kernels.push_back({r, spec.take()});
  }
  return kernels;
}

Expected<std::vector<BenchKernel>>
gnnc::bench::compileSpmmKernels(ElementType type, int64_t width,
                                size_t maxSchedules, bool edgeValues,
                                bool offsets64) {
  KernelSetOptions options;
  options.spmmSchedules = maxSchedules;
  options.edgeValues = edgeValues;
  options.offsets64 = offsets64;
  return compileBenchKernels(type, width, options);
}

KernelResult gnnc::bench::runGnncKernel(Bench &bench,
                                        const rt::KernelSpec &spec,
                                        SpmmProblem &problem, CheckMode mode,
                                        const std::string &label) {
  KernelResult result;
  result.label = label;
  result.kernelName = spec.name;
  result.schedule = spec.schedule;
  result.edgeValues = problem.edgeValues;
  rt::LoadStats stats;
  auto kernel = bench.runtime().load(spec, &stats);
  if (!kernel) {
    result.status = "error";
    result.report = kernel.message();
    return result;
  }
  result.loadMs = stats.totalMs;
  // The problem's x and y hold unpadded rows.
  if (auto sig = ops::spmmSignature(spec); sig && sig->padded()) {
    result.status = "error";
    result.report = "kernel '" + spec.name + "' has padded rows (row stride " +
                    std::to_string(sig->rowStride) +
                    "); gnn-bench problems hold unpadded rows";
    return result;
  }

  // The gate: no timing for a kernel that has not shown a right answer.
  Expected<ops::SpmmCheck> check = Status::error("unchecked");
  if (mode == CheckMode::PerKernel)
    check =
        ops::checkSpmm(bench.runtime(), *kernel, problem.graph(), problem.seed);
  else
    check = checkOnProblem(bench, *kernel, problem);
  if (!check) {
    result.status = "error";
    result.report = check.message();
    return result;
  }
  result.report = check->report;
  if (!check->ok) {
    result.status = "wrong";
    return result;
  }

  const ops::DeviceGraph &dg = problem.graphs->gnnc;
  const rt::LoadedKernel &loaded = *kernel;
  auto timing = bench.time([&]() {
    return ops::launchSpmm(bench.runtime(), loaded, dg, problem.x,
                           problem.edgeValues ? &problem.values : nullptr,
                           problem.y, /*synchronize=*/false);
  });
  if (!timing) {
    result.status = "error";
    result.report = timing.message();
    return result;
  }
  result.status = "ok";
  result.timing = *timing;
  return result;
}

KernelResult gnnc::bench::runGnncSddmm(Bench &bench, const rt::KernelSpec &spec,
                                       SddmmProblem &problem,
                                       const std::string &label) {
  KernelResult result;
  result.label = label;
  result.kernelName = spec.name;
  result.schedule = spec.schedule;
  result.op = "sddmm";
  rt::LoadStats stats;
  auto kernel = bench.runtime().load(spec, &stats);
  if (!kernel) {
    result.status = "error";
    result.report = kernel.message();
    return result;
  }
  result.loadMs = stats.totalMs;
  auto check = checkSddmmOnProblem(bench, *kernel, problem);
  if (!check) {
    result.status = "error";
    result.report = check.message();
    return result;
  }
  result.report = check->report;
  if (!check->ok) {
    result.status = "wrong";
    return result;
  }
  const ops::DeviceGraph &dg = problem.base->graphs->gnnc;
  const rt::LoadedKernel &loaded = *kernel;
  auto timing = bench.time([&]() {
    return ops::launchSddmm(bench.runtime(), loaded, dg, problem.rowX,
                            problem.base->x, problem.out,
                            /*synchronize=*/false);
  });
  if (!timing) {
    result.status = "error";
    result.report = timing.message();
    return result;
  }
  result.status = "ok";
  result.timing = *timing;
  return result;
}

KernelResult gnnc::bench::runGatChain(Bench &bench, const GatKernels &kernels,
                                      GatProblem &problem) {
  KernelResult result;
  result.label = "gat";
  result.op = "gat_chain";
  result.edgeValues = true;
  if (!kernels.logits || !kernels.softmax || !kernels.aggregate) {
    result.status = "error";
    result.report = "the chain's kernels are missing";
    return result;
  }
  result.kernelName = kernels.logits->name + " + " + kernels.softmax->name +
                      " + " + kernels.aggregate->name;
  result.schedule = kernels.logits->schedule + " | " +
                    kernels.softmax->schedule + " | " +
                    kernels.aggregate->schedule;
  auto fail = [&](const std::string &status, const std::string &why) {
    result.status = status;
    result.report = why;
    return result;
  };
  std::vector<rt::LoadedKernel> loaded;
  for (const rt::KernelSpec *spec :
       {kernels.logits, kernels.softmax, kernels.aggregate}) {
    rt::LoadStats stats;
    auto kernel = bench.runtime().load(*spec, &stats);
    if (!kernel)
      return fail("error", kernel.message());
    result.loadMs += stats.totalMs;
    loaded.push_back(kernel.take());
  }
  SpmmProblem &base = *problem.base;
  const ops::DeviceGraph &dg = base.graphs->gnnc;
  // The kernels must fit the problem (and each other).
  auto logitsSig = ops::sddmmSignature(loaded[0].spec);
  auto softmaxSig = ops::edgeSoftmaxSignature(loaded[1].spec);
  auto spmmSig = ops::spmmSignature(loaded[2].spec);
  if (!logitsSig || !softmaxSig || !spmmSig)
    return fail("error",
                "not a GAT chain: " + (!logitsSig    ? logitsSig.message()
                                       : !softmaxSig ? softmaxSig.message()
                                                     : spmmSig.message()));
  if (logitsSig->type != base.type || logitsSig->featureWidth != 1 ||
      logitsSig->form != ref::SddmmForm::Add ||
      logitsSig->leakyRelu != std::optional<float>(kGatLeakySlope) ||
      softmaxSig->type != base.type || softmaxSig->heads != 1 ||
      spmmSig->type != base.type || spmmSig->featureWidth != base.width ||
      spmmSig->padded() || !spmmSig->edgeValues ||
      spmmSig->reduce != ref::SpmmReduce::Sum ||
      spmmSig->scale != ref::DegreeScale::None ||
      logitsSig->offsets64 != dg.offsets64 ||
      softmaxSig->offsets64 != dg.offsets64 ||
      spmmSig->offsets64 != dg.offsets64)
    return fail("error", "the chain's kernels do not match the problem "
                         "(type, width, form, slope, heads or offsets)");

  auto run = [&](bool synchronize) -> Status {
    GNNC_RETURN_IF_ERROR(ops::launchSddmm(bench.runtime(), loaded[0], dg,
                                          problem.attRow, problem.attCol,
                                          problem.logits, false));
    GNNC_RETURN_IF_ERROR(ops::launchEdgeSoftmax(
        bench.runtime(), loaded[1], dg, problem.logits, problem.alpha, false));
    return ops::launchSpmm(bench.runtime(), loaded[2], dg, base.x,
                           &problem.alpha, base.y, synchronize);
  };

  // The gate: every intermediate and the output poisoned, one run, every
  // output element compared.
  ensureGatReference(problem);
  for (rt::DeviceBuffer *b : {&problem.logits, &problem.alpha, &base.y})
    if (Status st = b->fill(0xff); !st)
      return fail("error", st.message());
  if (Status st = run(/*synchronize=*/true); !st)
    return fail("error", st.message());
  HostBuffers &host = base.host;
  if (Status st = downloadConverted(base.y, base.outputCount(), base.type,
                                    host.got, &host.bits);
      !st)
    return fail("error", st.message());
  ops::KernelCheck check = compareScaled(
      host.got, host.expected, host.magnitude, base.width,
      gatChainTolerance(base.type), ops::spmmAbsoluteTolerance(base.type));
  const graph::CsrGraph &g = base.graph();
  result.report = "GAT chain on '" + g.name + "' (" +
                  std::to_string(g.numRows) + " rows, " +
                  std::to_string(g.nnz()) + " nnz, 1 head, width " +
                  std::to_string(base.width) + ", " +
                  elementTypeName(base.type) + "): " + check.report;
  if (!check.ok) {
    result.status = "wrong";
    return result;
  }
  auto timing = bench.time([&]() { return run(/*synchronize=*/false); });
  if (!timing)
    return fail("error", timing.message());
  result.status = "ok";
  result.timing = *timing;
  return result;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

nlohmann::json gnnc::bench::toJson(const TimingStats &stats) {
  return {{"median", stats.medianMs},
          {"min", stats.minMs},
          {"max", stats.maxMs},
          {"runs", stats.runs}};
}

nlohmann::json gnnc::bench::bandwidthJson(const ByteCounts &bytes,
                                          double medianMs, double copyGbs) {
  nlohmann::json j;
  j["bytes_compulsory"] = bytes.compulsory;
  j["bytes_gather"] = bytes.gather;
  double compulsory = gigabytesPerSecond(bytes.compulsory, medianMs);
  double gather = gigabytesPerSecond(bytes.gather, medianMs);
  j["gbs_compulsory"] = compulsory;
  j["gbs_gather"] = gather;
  if (copyGbs > 0) {
    j["frac_copy_compulsory"] = compulsory / copyGbs;
    j["frac_copy_gather"] = gather / copyGbs;
  }
  return j;
}

nlohmann::json gnnc::bench::toJson(const KernelResult &r,
                                   const ByteCounts &bytes, double copyGbs,
                                   double cusparseDefaultMs,
                                   double cusparseFastestMs) {
  nlohmann::json j;
  j["label"] = r.label;
  j["kernel"] = r.kernelName;
  j["schedule"] = r.schedule;
  j["edge_values"] = r.edgeValues;
  j["op"] = r.op;
  j["status"] = r.status;
  j["report"] = r.report;
  j["load_ms"] = r.loadMs;
  if (!r.timing) {
    j["time_ms"] = nullptr;
    return j;
  }
  j["time_ms"] = toJson(*r.timing);
  j.update(bandwidthJson(bytes, r.timing->medianMs, copyGbs));
  double ms = r.timing->medianMs;
  if (cusparseDefaultMs > 0 && ms > 0)
    j["speedup_vs_cusparse_default"] = cusparseDefaultMs / ms;
  if (cusparseFastestMs > 0 && ms > 0)
    j["speedup_vs_cusparse_fastest"] = cusparseFastestMs / ms;
  return j;
}

std::string gnnc::bench::utcTimestamp() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}
