//===- Harness.h - Timing and checking sparse kernels -----------*- C++ -*-===//
//
// The reusable part of gnn-bench: the byte counts behind the bandwidth
// bounds, CUDA-event timing with L2 flushes, SpMM, SDDMM and GAT-chain
// problems whose CPU reference is computed once and shared by every kernel
// that solves them, the correctness gate (a kernel whose output is wrong
// gets no timing), the generation of gnn.spmm and gnn.sddmm kernels and
// their schedule variants, and the JSON records of the results. See
// bench/NOTES.md for what is measured and why.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_HARNESS_H
#define GNNC_BENCH_HARNESS_H

#include "gnnc/graph/Csr.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/reference/Sddmm.h"
#include "gnnc/runtime/Float16.h"
#include "gnnc/runtime/Runtime.h"
#include "gnnc/runtime/Status.h"
#include "gnnc/runtime/Timing.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace gnnc::bench {

//===----------------------------------------------------------------------===//
// Byte counts and bandwidth
//===----------------------------------------------------------------------===//

/// The shape of one SpMM (or SDDMM) problem, enough to count its bytes.
struct ProblemShape {
  int64_t numRows = 0;
  int64_t numCols = 0;
  int64_t nnz = 0;
  int64_t width = 0;
  size_t elementBytes = 4;
  size_t offsetBytes = 8;
  size_t indexBytes = 4;
  /// Whether the kernel reads one value per edge (SpMMve, cuSPARSE).
  bool edgeValues = false;
};

/// The two traffic bounds of a problem, in bytes.
struct ByteCounts {
  /// Every input and output touched once: row_ptr + col_idx (+ values) +
  /// X + Y. No kernel can move less.
  double compulsory = 0;
  /// As if every edge read its whole feature row of X from memory (no
  /// reuse through the caches): row_ptr + col_idx (+ values) + nnz rows of
  /// X + Y once.
  double gather = 0;
};

/// Bytes of SpMM: Y (numRows x width) = A (numRows x numCols, CSR) * X
/// (numCols x width).
ByteCounts spmmBytes(const ProblemShape &shape);

/// Bytes of SDDMM on CSR: for every edge (r, c), C[e] = dot(A[r, :], B[c, :])
/// with A numRows x width and B numCols x width. The edge values are
/// written (counted once); compulsory reads A and B once, gather reads A once
/// and one row of B per edge.
ByteCounts sddmmBytes(const ProblemShape &shape);

/// `bytes` moved in `ms` milliseconds, in GB/s (1e9 bytes per second).
double gigabytesPerSecond(double bytes, double ms);

//===----------------------------------------------------------------------===//
// Host arrays
//===----------------------------------------------------------------------===//

/// std::allocator, except that resize() and the size constructor leave new
/// elements of trivial types uninitialized: the large host arrays below are
/// then paged in by the threads that first write them, in parallel, rather
/// than zeroed by one thread first.
template <typename T> struct DefaultInitAllocator : std::allocator<T> {
  template <typename U> struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() noexcept = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U> &) noexcept {}
  template <typename U>
  void
  construct(U *p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void *>(p)) U;
  }
  template <typename U, typename... Args> void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
};

/// A host array whose resize() does not initialize (see
/// DefaultInitAllocator).
template <typename T>
using HostVector = std::vector<T, DefaultInitAllocator<T>>;

/// Gives `v` exactly `n` elements whose values are unspecified (the caller
/// overwrites them all). Never copies the old contents: an array too small
/// is dropped and allocated anew. With `touch`, newly allocated elements are
/// zeroed on all threads (for memory that a single thread, e.g. the CUDA
/// driver, would otherwise page in).
template <typename T>
void resizeForOverwrite(HostVector<T> &v, size_t n, bool touch = false);

/// The host arrays of one SpmmProblem. A problem takes them from the last
/// one (Bench::spareHost()), so the large arrays are allocated and paged in
/// once per size rather than once per problem.
struct HostBuffers {
  /// Inputs, rounded to the problem's type.
  HostVector<float> x, values;
  /// The reference and the sum of |terms| per output element.
  HostVector<double> expected, magnitude;
  /// Scratch for downloads and 16-bit conversions.
  HostVector<float> got;
  HostVector<uint16_t> bits;
  /// SDDMM: the row features, and the reference and sum of |terms| per
  /// edge (std::vector: what ref::sddmm fills).
  HostVector<float> rowX;
  std::vector<double> edgeExpected, edgeMagnitude;
  /// GAT chain: the per-node attention terms of the rows and the columns.
  HostVector<float> attRow, attCol;
};

//===----------------------------------------------------------------------===//
// Timing
//===----------------------------------------------------------------------===//

// Every timed region is measured by the runtime's timer
// (gnnc/runtime/Timing.h) with the bench's options.
using rt::TimingOptions;
using rt::TimingStats;

/// A device with a kernel cache, a kernel timer (events and an L2 flush
/// buffer), a record of the most device memory seen in use, and spare host
/// arrays.
class Bench {
public:
  /// Opens device 0 (through Runtime::create) and prepares the timer and the
  /// flush buffer.
  static Expected<Bench> create(const TimingOptions &options,
                                std::string cacheDir = "");

  rt::Runtime &runtime() { return runtime_; }
  const rt::Device &device() const { return runtime_.device(); }
  const TimingOptions &options() const { return options_; }

  /// Times `work`, which must only enqueue GPU work on the default stream,
  /// with options() (rt::KernelTimer::time): options().warmups untimed runs,
  /// then options().runs runs each between two events, with the L2 flushed
  /// before each run. Waits for the device at the end and reports errors
  /// raised by the work.
  Expected<TimingStats> time(const std::function<Status()> &work);

  /// Samples the device memory in use (total - free) and returns it; the
  /// largest sample is kept in peakUsedBytes().
  size_t sampleMemory();
  size_t peakUsedBytes() const { return peakUsed_; }
  /// Forgets the samples so far (for per-case peaks); returns the old peak.
  size_t resetPeak();

  /// Host arrays that no problem holds now: makeSpmmProblem takes them,
  /// runCase hands them back.
  HostBuffers &spareHost() { return spareHost_; }

private:
  Bench(rt::Runtime runtime, rt::KernelTimer timer, TimingOptions options)
      : runtime_(std::move(runtime)), timer_(std::move(timer)),
        options_(options) {}
  rt::Runtime runtime_;
  rt::KernelTimer timer_;
  TimingOptions options_;
  size_t peakUsed_ = 0;
  HostBuffers spareHost_;
};

//===----------------------------------------------------------------------===//
// Host helpers
//===----------------------------------------------------------------------===//

/// Runs fn(begin, end) over [0, n) split into contiguous pieces on
/// graph::hostThreads() threads (one piece when n is small).
void parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &fn);

template <typename T>
void resizeForOverwrite(HostVector<T> &v, size_t n, bool touch) {
  if (n > v.capacity())
    HostVector<T>().swap(v);
  size_t old = v.size();
  v.resize(n);
  if (touch && n > old)
    parallelFor(static_cast<int64_t>(n - old), [&](int64_t lo, int64_t hi) {
      std::fill(v.begin() + old + lo, v.begin() + old + hi, T());
    });
}

/// Fills `out` (resized to n) with floats uniform in [lo, hi) (default
/// [-1, 1)), rounded to `type`, deterministic for the seed and independent
/// of the thread count (ref::randomFeaturesInto, then rounding, on all
/// threads).
void randomInputsInto(HostVector<float> &out, int64_t n, uint64_t seed,
                      ElementType type, float lo = -1.0f, float hi = 1.0f);

/// randomInputsInto a new array.
HostVector<float> randomInputs(int64_t n, uint64_t seed, ElementType type);

/// Uploads `count` floats converted to `type` (conversion on all threads,
/// into `scratch` when given); at least one byte is allocated so that empty
/// tensors still have an address.
Expected<rt::DeviceBuffer>
uploadConverted(const float *host, size_t count, ElementType type,
                HostVector<uint16_t> *scratch = nullptr);
template <typename Alloc>
Expected<rt::DeviceBuffer>
uploadConverted(const std::vector<float, Alloc> &host, ElementType type) {
  return uploadConverted(host.data(), host.size(), type);
}

/// Uploads `count` copies of `value` converted to `type`.
Expected<rt::DeviceBuffer> uploadFilled(size_t count, float value,
                                        ElementType type);

/// Downloads `count` elements of `type` as floats into `out` (resized;
/// decoding on all threads, through `scratch` when given).
Status downloadConverted(const rt::DeviceBuffer &buffer, size_t count,
                         ElementType type, HostVector<float> &out,
                         HostVector<uint16_t> *scratch = nullptr);

/// Compares `got` with a reference the way ops::checkSpmm does (element i
/// passes when |got - ref| <= tol * magnitude[i] + absTol; NaN never
/// passes), on all threads. On failure the report lists the first
/// mismatches (from ref::compareToReferenceScaled).
ops::SpmmCheck compareScaled(const float *got, const double *expected,
                             const double *magnitude, size_t count,
                             int64_t width, double tol, double absTol);
template <typename GotAlloc, typename RefAlloc, typename MagAlloc>
ops::SpmmCheck compareScaled(const std::vector<float, GotAlloc> &got,
                             const std::vector<double, RefAlloc> &expected,
                             const std::vector<double, MagAlloc> &magnitude,
                             int64_t width, double tol, double absTol) {
  if (got.size() != expected.size() || magnitude.size() != expected.size()) {
    ops::SpmmCheck check;
    check.report = "size mismatch: got " + std::to_string(got.size()) +
                   " elements, expected " + std::to_string(expected.size());
    return check;
  }
  return compareScaled(got.data(), expected.data(), magnitude.data(),
                       got.size(), width, tol, absTol);
}

//===----------------------------------------------------------------------===//
// Problems
//===----------------------------------------------------------------------===//

/// A graph on the device in the layouts the kernels need.
struct DeviceGraphs {
  const graph::CsrGraph *host = nullptr;
  /// For gnnc kernels: 64- or 32-bit offsets, 32-bit indices.
  ops::DeviceGraph gnnc;
  /// 32-bit row offsets for cuSPARSE (its column indices are gnnc.colIdx).
  rt::DeviceBuffer rowPtr32;
  /// Total bytes allocated above.
  size_t bytes = 0;
};

/// The group sizes of the neighbor_group schedules gnn-bench runs.
constexpr int kBenchGroupSizes[] = {32, 8};

/// Uploads `g` (which must outlive the result). (Neighbour groups are built
/// by the first launch of a neighbor_group kernel.)
Expected<DeviceGraphs> uploadGraphs(const graph::CsrGraph &g, bool offsets64);

/// One SpMM problem: a graph, random features (and edge values) of one type
/// and width on the device and on the host, an output buffer, and the
/// double-precision CPU reference (computed on first use).
struct SpmmProblem {
  const DeviceGraphs *graphs = nullptr;
  ElementType type = ElementType::F32;
  int64_t width = 0;
  bool edgeValues = false;
  uint64_t seed = 0;
  /// Host inputs (already rounded to `type`), the reference and scratch.
  HostBuffers host;
  rt::DeviceBuffer x, values, y;
  bool hasReference = false;
  /// Seconds spent on the CPU reference.
  double referenceSeconds = 0;

  const graph::CsrGraph &graph() const { return *graphs->host; }
  size_t outputCount() const {
    return static_cast<size_t>(graphs->host->numRows * width);
  }
  /// Bytes of x, values and y on the device.
  size_t deviceBytes() const { return x.size() + values.size() + y.size(); }
};

/// Makes a problem with fresh random inputs drawn from `seed` (edge values
/// from a seed derived from it), in the host arrays of `recycled` (moved
/// from; see HostBuffers).
Expected<SpmmProblem> makeSpmmProblem(const DeviceGraphs &graphs,
                                      ElementType type, int64_t width,
                                      bool edgeValues, uint64_t seed,
                                      HostBuffers recycled = {});

/// Turns an SpMMv problem into the SpMMve problem on the same features:
/// adds random edge values drawn from `seed` and drops the reference (its
/// arrays are reused). On failure the problem is left without values.
Status addEdgeValues(SpmmProblem &problem, uint64_t seed);

/// Computes the CPU reference of `problem` (multithreaded) unless present.
void ensureReference(SpmmProblem &problem);

/// Downloads problem.y and compares it with the reference (computing it if
/// needed) at `tolerance`, or when 0 at the tolerance of the problem's type.
Expected<ops::SpmmCheck> checkOutput(SpmmProblem &problem,
                                     double tolerance = 0.0);

/// Poisons problem.y with NaN, runs `kernel` on the problem's inputs and
/// compares every output element with the reference.
Expected<ops::SpmmCheck> checkOnProblem(Bench &bench,
                                        const rt::LoadedKernel &kernel,
                                        SpmmProblem &problem);

/// An SDDMM (dot form) problem on the graph and column features of an SpMM
/// problem: out[e] = dot(rowX[r, :], x[c, :]) for every edge e = (r, c),
/// with rowX (numRows x width) drawn fresh. The host arrays live in the
/// SpMM problem's HostBuffers (rowX, edgeExpected, edgeMagnitude, got).
struct SddmmProblem {
  SpmmProblem *base = nullptr;
  rt::DeviceBuffer rowX, out;
  bool hasReference = false;
  double referenceSeconds = 0;

  const graph::CsrGraph &graph() const { return base->graph(); }
  size_t outputCount() const {
    return static_cast<size_t>(base->graph().nnz());
  }
  size_t deviceBytes() const { return rowX.size() + out.size(); }
};

/// Draws the row features from `seed` and allocates the output.
Expected<SddmmProblem> makeSddmmProblem(SpmmProblem &base, uint64_t seed);

/// Computes the per-edge reference (ref::sddmm, multithreaded) unless
/// present.
void ensureSddmmReference(SddmmProblem &problem);

/// Poisons the output with NaN, runs the gnn.sddmm `kernel` and compares
/// every edge's value with the reference (tolerance as ops::checkSddmm:
/// spmmTolerance of the sum of |terms|).
Expected<ops::KernelCheck> checkSddmmOnProblem(Bench &bench,
                                               const rt::LoadedKernel &kernel,
                                               SddmmProblem &problem);

/// The GAT attention chain with one head, on the graph, features `x` and
/// output `y` of an SpMM problem:
///   logits[e] = leaky_relu(attRow[r] + attCol[c], slope)   (gnn.sddmm add)
///   alpha = edge_softmax(logits) over each row's edges     (gnn.edge_softmax)
///   y[r, :] = sum over edges e = (r, c) of alpha[e] x[c, :] (gnn.spmm)
/// attRow (numRows) and attCol (numCols) are uniform in [-4, 4) (logits up
/// to +-8, so the softmax is far from uniform). Host arrays live in the SpMM
/// problem's HostBuffers; the reference uses its expected and magnitude
/// arrays (the SpMM reference there is dropped).
struct GatProblem {
  SpmmProblem *base = nullptr;
  rt::DeviceBuffer attRow, attCol, logits, alpha;
  bool hasReference = false;
  double referenceSeconds = 0;

  const graph::CsrGraph &graph() const { return base->graph(); }
  size_t deviceBytes() const {
    return attRow.size() + attCol.size() + logits.size() + alpha.size();
  }
};

/// Draws the attention terms from `seed` and allocates the intermediates.
Expected<GatProblem> makeGatProblem(SpmmProblem &base, uint64_t seed);

/// The chain in double precision, rounding each intermediate tensor (the
/// logits, the softmax weights) to `type` as the program's types say: for
/// each row, logits[e] = round(leaky(attRow[r] + attCol[c])), alpha[e] =
/// round(exp(logits[e] - max) / sum of exp over the row), out[r, f] = sum of
/// alpha[e] x[c, f], and magnitude[r, f] the sum of alpha[e] |x[c, f]|.
/// `out` and `magnitude` hold numRows x width values; every one is written
/// (0 for an empty row). Runs on all host threads; the result does not
/// depend on their number.
void gatChainReference(const graph::CsrGraph &g, const float *attRow,
                       const float *attCol, const float *x, int64_t width,
                       float slope, ElementType type, double *out,
                       double *magnitude);

/// The tolerance of a chain output, relative to its magnitude: 4x
/// spmmTolerance, since an intermediate value the GPU rounds may land one
/// unit in the last place away from the reference's (expf vs exp).
double gatChainTolerance(ElementType type);

/// Computes the chain reference unless present.
void ensureGatReference(GatProblem &problem);

//===----------------------------------------------------------------------===//
// gnnc kernels
//===----------------------------------------------------------------------===//

/// A vertex_parallel schedule; zeros leave the choice to gnnc (the default
/// schedule is all zeros).
struct ScheduleChoice {
  /// "default", "ep256", "dw*2", "dw/2", "vw=2", ...
  std::string label = "default";
  int vectorWidth = 0;
  int dimWorkers = 0;
  int threadsPerBlock = 0;
  /// Edges per worker of an edge_parallel schedule; 0: vertex_parallel.
  int edgesPerWorker = 0;
  /// blocks_per_sm (0: no register cap).
  int blocksPerSm = 0;
  /// Neighbours per group of a neighbor_group schedule (GNNAdvisor); 0:
  /// another strategy.
  int groupSize = 0;
  /// write = atomic for an edge_parallel schedule (rows split between
  /// workers added atomically rather than staged).
  bool atomic = false;
  /// write = shared for an edge_parallel schedule (rows split inside a block
  /// merged in shared memory, the others staged).
  bool sharedMerge = false;

  /// The #gnn.schedule attribute text; empty for the default.
  std::string attribute() const;
};

/// Reads vector_width, dim_workers and threads_per_block from a complete
/// schedule as KernelSpec::schedule prints it.
Expected<ScheduleChoice> parseSchedule(const std::string &text);

/// Whether a complete schedule is legal for the element type and width
/// (the verifier's and the lowering's rules).
bool isLegalSchedule(const ScheduleChoice &s, ElementType type, int64_t width);

/// The default (which must be complete, read back from a compiled kernel)
/// followed by legal variants in order of preference: dim_workers x2 and /2,
/// then vector_width 2 and 1 (each with enough dim_workers to cover a row).
/// At most `maxCount` entries, without duplicates.
std::vector<ScheduleChoice> scheduleVariants(const ScheduleChoice &resolved,
                                             ElementType type, int64_t width,
                                             size_t maxCount);

/// The leaky ReLU slope of the GAT chain (GAT's 0.2).
constexpr float kGatLeakySlope = 0.2f;

/// Which op a generated kernel runs.
enum class BenchOp {
  /// gnn.spmm (sum; edge values when asked).
  Spmm,
  /// gnn.sddmm, dot form.
  SddmmDot,
  /// The GAT chain: gnn.sddmm add form with leaky_relu 0.2 on one head.
  GatLogits,
  /// The GAT chain: gnn.edge_softmax of one value per edge.
  GatSoftmax,
  /// The GAT chain: gnn.spmm with the softmax weights as edge values.
  GatAggregate
};

/// One kernel to generate.
struct KernelRequest {
  BenchOp op = BenchOp::Spmm;
  ElementType type = ElementType::F32;
  /// The feature width (GatLogits and GatSoftmax ignore it: one head).
  int64_t width = 64;
  bool edgeValues = false;
  bool offsets64 = true;
  ScheduleChoice schedule;

  /// The kernel's symbol in the module, e.g. "f16_w64_v_o64_dw_x2" (SpMM),
  /// "sddmm_f16_w64_o64_default", "gat_softmax_f16_o64".
  std::string symbol() const;
};

/// The .gnn text of a module `@moduleName` holding the requested kernels.
std::string benchModuleText(const std::string &moduleName,
                            const std::vector<KernelRequest> &requests);

/// A compiled kernel and how it was asked for.
struct BenchKernel {
  KernelRequest request;
  rt::KernelSpec spec;
};

/// What to generate for one (type, width).
struct KernelSetOptions {
  /// SpMMv schedules: the default plus up to spmmSchedules - 1 variants.
  size_t spmmSchedules = 4;
  /// The default SpMMve kernel.
  bool edgeValues = false;
  /// SDDMM (dot) schedules: the default plus variants (0: none).
  size_t sddmmSchedules = 0;
  /// The three kernels of the GAT chain (one head, this width).
  bool gatChain = false;
  bool offsets64 = true;
};

/// Compiles the default kernels for (type, width), reads back their
/// schedules, and compiles everything `options` asks for as one module (one
/// NVRTC translation unit): SpMMv variants, then the SpMMve default, then
/// the SDDMM variants, then the GAT chain (logits, softmax, aggregate).
Expected<std::vector<BenchKernel>>
compileBenchKernels(ElementType type, int64_t width,
                    const KernelSetOptions &options);

/// compileBenchKernels with SpMM kernels only.
Expected<std::vector<BenchKernel>>
compileSpmmKernels(ElementType type, int64_t width, size_t maxSchedules,
                   bool edgeValues, bool offsets64);

/// The SDDMM schedules for a resolved default: scheduleVariants without the
/// edge_parallel ones (vertex_parallel is all gnn.sddmm implements).
std::vector<ScheduleChoice>
sddmmScheduleVariants(const ScheduleChoice &resolved, ElementType type,
                      int64_t width, size_t maxCount);

/// How the correctness gate checks a kernel.
enum class CheckMode {
  /// Against the problem's shared reference (checkOnProblem).
  Shared,
  /// With ops::checkSpmm (its own inputs and reference, per kernel).
  PerKernel
};

/// What happened to one gnnc kernel.
struct KernelResult {
  std::string label;
  std::string kernelName;
  std::string schedule;
  bool edgeValues = false;
  /// "spmm", "sddmm" or "gat_chain".
  std::string op = "spmm";
  /// "ok" (checked and timed), "wrong" (failed the check: no timing) or
  /// "error" (could not be compiled, loaded or run).
  std::string status;
  /// The check report or the error.
  std::string report;
  std::optional<TimingStats> timing;
  double loadMs = 0;
};

/// Loads `spec`, checks it on `problem` (the gate), and times it only if it
/// passed. Never fails: problems are recorded in the result.
KernelResult runGnncKernel(Bench &bench, const rt::KernelSpec &spec,
                           SpmmProblem &problem, CheckMode mode,
                           const std::string &label = "");

/// The same gate for a gnn.sddmm kernel on a shared SDDMM problem.
KernelResult runGnncSddmm(Bench &bench, const rt::KernelSpec &spec,
                          SddmmProblem &problem, const std::string &label = "");

/// The GAT chain's three kernels, as compiled.
struct GatKernels {
  const rt::KernelSpec *logits = nullptr;
  const rt::KernelSpec *softmax = nullptr;
  const rt::KernelSpec *aggregate = nullptr;
};

/// Loads the chain, runs it once with every intermediate and the output
/// poisoned with NaN, compares the output with gatChainReference, and only
/// if it passed times the three launches as one region (Bench::time). The
/// result's kernelName and schedule list the three kernels.
KernelResult runGatChain(Bench &bench, const GatKernels &kernels,
                         GatProblem &problem);

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

/// {"median": .., "min": .., "max": .., "runs": ..} in ms.
nlohmann::json toJson(const TimingStats &stats);

/// Bandwidth figures of one timing against a problem's bounds and the
/// measured copy bandwidth (GB/s; copyGbs <= 0 leaves the fractions out).
nlohmann::json bandwidthJson(const ByteCounts &bytes, double medianMs,
                             double copyGbs);

/// The record of one gnnc kernel, with its bandwidth figures and, when the
/// cuSPARSE times are positive, its speedups over them.
nlohmann::json toJson(const KernelResult &result, const ByteCounts &bytes,
                      double copyGbs, double cusparseDefaultMs,
                      double cusparseFastestMs);

/// The current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utcTimestamp();

} // namespace gnnc::bench

#endif // GNNC_BENCH_HARNESS_H
