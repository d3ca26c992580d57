//===- Harness.cpp - Timing and checking sparse kernels -------------------===//
#include "Harness.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/graph/Parallel.h"
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

TimingStats gnnc::bench::summarizeTimes(std::vector<float> timesMs) {
  TimingStats stats;
  if (timesMs.empty())
    return stats;
  std::sort(timesMs.begin(), timesMs.end());
  size_t n = timesMs.size();
  stats.runs = static_cast<int>(n);
  stats.minMs = timesMs.front();
  stats.maxMs = timesMs.back();
  stats.medianMs = n % 2 ? timesMs[n / 2]
                         : 0.5 * (double(timesMs[n / 2 - 1]) + timesMs[n / 2]);
  return stats;
}

Expected<Bench> Bench::create(const TimingOptions &options,
                              std::string cacheDir) {
  if (options.runs < 1 || options.warmups < 0)
    return Status::error("timing needs at least one run and no negative "
                         "warm-up count");
  auto runtime = rt::Runtime::create(0, std::move(cacheDir));
  if (!runtime)
    return runtime.status();
  auto timer = rt::EventTimer::create();
  if (!timer)
    return timer.status();
  size_t flushBytes =
      std::max<size_t>(2 * runtime->device().l2Bytes(), size_t(8) << 20);
  auto flush = rt::DeviceBuffer::allocate(flushBytes);
  if (!flush)
    return flush.status().withContext("allocating the L2 flush buffer");
  Bench bench(runtime.take(), timer.take(), flush.take(), options);
  bench.sampleMemory();
  return bench;
}

Expected<TimingStats> Bench::time(const std::function<Status()> &work) {
  std::vector<float> times;
  times.reserve(options_.runs);
  for (int i = 0; i < options_.warmups + options_.runs; ++i) {
    if (options_.flushL2)
      GNNC_RETURN_IF_ERROR(
          flush_.fill(static_cast<uint8_t>(0x40 + (++flushCount_ % 64))));
    GNNC_RETURN_IF_ERROR(timer_.start());
    GNNC_RETURN_IF_ERROR(work());
    GNNC_RETURN_IF_ERROR(timer_.stop());
    auto ms = timer_.elapsedMs();
    if (!ms)
      return ms.status();
    if (i >= options_.warmups)
      times.push_back(*ms);
  }
  GNNC_RETURN_IF_ERROR(runtime_.synchronize());
  return summarizeTimes(std::move(times));
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
                                   uint64_t seed, ElementType type) {
  n = std::max<int64_t>(n, 0);
  resizeForOverwrite(out, static_cast<size_t>(n));
  ref::randomFeaturesInto(out.data(), n, seed);
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

Expected<ops::SpmmCheck> gnnc::bench::checkOutput(SpmmProblem &problem) {
  ensureReference(problem);
  HostBuffers &host = problem.host;
  GNNC_RETURN_IF_ERROR(downloadConverted(problem.y, problem.outputCount(),
                                         problem.type, host.got, &host.bits));
  return compareScaled(host.got, host.expected, host.magnitude, problem.width,
                       ops::spmmTolerance(problem.type),
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
      sig->edgeValues != problem.edgeValues || sig->offsets64 != dg.offsets64 ||
      sig->indices64 != dg.indices64)
    return Status::error("kernel '" + kernel.spec.name +
                         "' does not match the problem (type, width, edge "
                         "values or index widths)");
  ensureReference(problem);
  // All-ones bytes are NaN in f32, f16 and bf16: an unwritten output fails.
  GNNC_RETURN_IF_ERROR(problem.y.fill(0xff));
  GNNC_RETURN_IF_ERROR(
      ops::launchSpmm(bench.runtime(), kernel, dg, problem.x,
                      problem.edgeValues ? &problem.values : nullptr, problem.y,
                      /*synchronize=*/true));
  auto checked = checkOutput(problem);
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

//===----------------------------------------------------------------------===//
// gnnc kernels
//===----------------------------------------------------------------------===//

std::string ScheduleChoice::attribute() const {
  std::vector<std::string> parts;
  if (edgesPerWorker)
    parts.push_back("strategy = edge_parallel, edges_per_warp = " +
                    std::to_string(edgesPerWorker));
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

bool isPowerOfTwoUpTo(int value, int limit) {
  return value >= 1 && value <= limit && (value & (value - 1)) == 0;
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
  if (s.vectorWidth <= 0 || s.dimWorkers <= 0 || s.threadsPerBlock <= 0)
    return Status::error("cannot read vector_width, dim_workers and "
                         "threads_per_block from the schedule '" +
                         text + "'");
  return s;
}

bool gnnc::bench::isLegalSchedule(const ScheduleChoice &s, ElementType type,
                                  int64_t width) {
  const int bits = static_cast<int>(elementSize(type)) * 8;
  if (!isPowerOfTwoUpTo(s.vectorWidth, 8) || s.vectorWidth * bits > 128 ||
      width % s.vectorWidth != 0)
    return false;
  if (!isPowerOfTwoUpTo(s.dimWorkers, 32))
    return false;
  if (s.threadsPerBlock < 32 || s.threadsPerBlock > 1024 ||
      s.threadsPerBlock % 32 || s.dimWorkers > s.threadsPerBlock)
    return false;
  if (s.edgesPerWorker != 0 &&
      (s.edgesPerWorker < 8 || s.edgesPerWorker > (1 << 20)))
    return false;
  if (s.blocksPerSm < 0 || s.blocksPerSm * s.threadsPerBlock > 2048)
    return false;
  // An edge-parallel block keeps (items + 1) row ends per worker in shared
  // memory; a register cap is only legal if that many blocks fit too.
  if (s.blocksPerSm != 0 && s.edgesPerWorker != 0) {
    int64_t workers = s.threadsPerBlock / s.dimWorkers;
    int64_t shared = workers * (s.edgesPerWorker + 1) * 4;
    if (s.blocksPerSm * shared > 160 * 1024)
      return false;
  }
  // The lowering keeps every accumulator of a thread in registers.
  int64_t chunks = width / s.vectorWidth;
  int64_t chunksPerLane = (chunks + s.dimWorkers - 1) / s.dimWorkers;
  return chunksPerLane * s.vectorWidth <= 128;
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
  // Edge-parallel: rows split between workers of equal edge counts.
  // Then the same with registers capped so that 4 blocks fit on an SM
  // (the kernels are latency-bound: more rows in flight per SM; this wins
  // on some graphs and loses on others).
  auto edgeParallel = [&](int edges, int blocksPerSm) {
    ScheduleChoice s = base;
    s.label = "ep" + std::to_string(edges) +
              (blocksPerSm ? "b" + std::to_string(blocksPerSm) : "");
    s.edgesPerWorker = edges;
    s.blocksPerSm = blocksPerSm;
    candidates.push_back(s);
  };
  edgeParallel(256, 0);
  edgeParallel(128, 0);
  edgeParallel(256, 4);
  edgeParallel(128, 4);
  edgeParallel(64, 0);
  edgeParallel(32, 0);
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
      duplicate |= c.vectorWidth == s.vectorWidth &&
                   c.dimWorkers == s.dimWorkers &&
                   c.threadsPerBlock == s.threadsPerBlock &&
                   c.edgesPerWorker == s.edgesPerWorker &&
                   c.blocksPerSm == s.blocksPerSm;
    if (!duplicate)
      chosen.push_back(s);
  }
  return chosen;
}

std::string SpmmKernelRequest::symbol() const {
  std::string label;
  for (char c : schedule.label) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      label += c;
    else if (c == '*')
      label += "_x";
    else if (c == '/')
      label += "_d";
    else
      label += '_';
  }
  return std::string(elementTypeName(type)) + "_w" + std::to_string(width) +
         (edgeValues ? "_ve_" : "_v_") + (offsets64 ? "o64_" : "o32_") + label;
}

std::string
gnnc::bench::spmmModuleText(const std::string &moduleName,
                            const std::vector<SpmmKernelRequest> &requests) {
  std::ostringstream os;
  os << "gnn.module @" << moduleName << " {\n";
  for (const SpmmKernelRequest &r : requests) {
    const std::string type = elementTypeName(r.type);
    const std::string graph = std::string("!gnn.graph<csr, ") +
                              (r.offsets64 ? "i64" : "i32") + ", i32>";
    const std::string x =
        "tensor<?x" + std::to_string(r.width) + "x" + type + ">";
    const std::string w = "tensor<?x" + type + ">";
    os << "  gnn.kernel @" << r.symbol() << "(%g: " << graph << ", %x: " << x;
    if (r.edgeValues)
      os << ", %w: " << w;
    os << ") -> " << x << " {\n    %y = gnn.spmm %g, %x";
    if (r.edgeValues)
      os << " values(%w : " << w << ")";
    std::string attribute = r.schedule.attribute();
    if (!attribute.empty())
      os << " {schedule = " << attribute << "}";
    os << " : " << graph << ", " << x << " -> " << x << "\n";
    os << "    gnn.return %y : " << x << "\n  }\n";
  }
  os << "}\n";
  return os.str();
}

Expected<std::vector<BenchKernel>>
gnnc::bench::compileSpmmKernels(ElementType type, int64_t width,
                                size_t maxSchedules, bool edgeValues,
                                bool offsets64) {
  // Kernel symbols already name the type and width: entry points read
  // "bench_f16_w64_v_o64_default".
  const std::string moduleName = "bench";
  SpmmKernelRequest base;
  base.type = type;
  base.width = width;
  base.offsets64 = offsets64;
  // 1. The default schedule, as gnnc resolves it.
  auto probe = compileGnn(spmmModuleText(moduleName, {base}), moduleName);
  if (!probe)
    return probe.status();
  if (probe->kernels.size() != 1)
    return Status::error("expected one kernel from the probe module, got " +
                         std::to_string(probe->kernels.size()));
  auto resolved = parseSchedule(probe->kernels.front().schedule);
  if (!resolved)
    return resolved.status();

  // 2. The default (left to gnnc, so it tracks the compiler's choice), the
  // variants (explicit), and the SpMMve default, in one translation unit.
  std::vector<SpmmKernelRequest> requests;
  for (const ScheduleChoice &s : scheduleVariants(
           *resolved, type, width, std::max<size_t>(1, maxSchedules))) {
    SpmmKernelRequest r = base;
    r.schedule = s;
    if (s.label == "default")
      r.schedule = ScheduleChoice();
    requests.push_back(r);
  }
  if (edgeValues) {
    SpmmKernelRequest r = base;
    r.edgeValues = true;
    requests.push_back(r);
  }
  auto compiled = compileGnn(spmmModuleText(moduleName, requests), moduleName);
  if (!compiled)
    return compiled.status();
  std::vector<BenchKernel> kernels;
  for (const SpmmKernelRequest &r : requests) {
    auto spec = findKernel(*compiled, r.symbol());
    if (!spec)
      return spec.status();
    kernels.push_back({r, spec.take()});
  }
  return kernels;
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
