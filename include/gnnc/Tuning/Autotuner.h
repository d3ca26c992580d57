//===- Autotuner.h - Enumerate, rank and measure schedules ------*- C++ -*-===//
//
// The search space is every legal vertex_parallel schedule of a gnn.spmm or
// gnn.sddmm and a few edge_parallel (and, for gnn.spmm, neighbor_group)
// ones (enumerateSchedules); the cost model ranks it (rankSchedules); with a
// GPU the leaders are compiled, checked against the CPU reference and timed
// (measureSchedule and measureSddmmSchedule, Measure.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_AUTOTUNER_H
#define GNNC_TUNING_AUTOTUNER_H

#include "gnnc/Tuning/CostModel.h"
#include "gnnc/graph/Csr.h"
#include "gnnc/runtime/Status.h"

#include <optional>
#include <string>
#include <vector>

namespace gnnc::rt {
class KernelCache;
class Runtime;
} // namespace gnnc::rt

namespace gnnc::tuning {

/// Every legal vertex_parallel schedule for `problem`: vector widths the
/// verifier allows, dim_workers a power of two up to 32 and up to the
/// chunks of a row rounded up to a power of two (no lane idles beyond one
/// trip), threads_per_block in {64, 128, 256, 512}; ordered by preference
/// (wider vectors, more lanes, 256 threads first), which breaks ties. Then
/// the legal edge_parallel schedules with each vector width's default
/// dim_workers (one trip), 256 threads and 256, 128 or 64 merge-path items
/// per worker; for gnn.spmm, neighbor_group schedules with groups of 32, 16
/// and 64 neighbours.
std::vector<Schedule> enumerateSchedules(const Problem &problem);

/// A schedule with its prediction and, if measured, its time.
struct Candidate {
  Schedule schedule;
  Prediction prediction;
  /// Median measured seconds; unset when not measured (or it failed).
  std::optional<double> measuredSeconds;
  /// Why it was not measured or what failed ("wrong result: ...").
  std::string note;
};

/// Predicts every schedule (predictFor: the gnn.spmm or the gnn.sddmm
/// model, by `problem.op`) and sorts by predicted time; equal times are
/// ordered by the sum of all terms, then by the enumeration's order.
std::vector<Candidate> rankSchedules(const GpuModel &gpu,
                                     const graph::GraphProfile &profile,
                                     const Problem &problem,
                                     const std::vector<Schedule> &schedules);

/// Indices (into `ranked`, in rank order) of the `k` candidates to measure:
/// the best-ranked schedule of each strategy (vertex-parallel,
/// edge-parallel, neighbour groups) whose prediction is within 2x of the
/// leader's first,
/// then the best-ranked of the rest. When the model puts two strategies
/// close together it is least reliable between them, so a measurement of
/// `k` >= 2 then compares them.
std::vector<size_t> measurementOrder(const std::vector<Candidate> &ranked,
                                     size_t k);

/// Index of the chosen candidate: the fastest measured one if any was
/// measured, else the first (best predicted).
size_t chooseCandidate(const std::vector<Candidate> &ranked);

/// Timing parameters of measureSchedule.
struct MeasureOptions {
  int warmups = 3;
  int runs = 10;
  uint64_t seed = 1;
};

/// Compiles `kernelText` (a .gnn module whose kernel `entryName` is the
/// gnn.spmm to time, already carrying the schedule), loads it, runs
/// ops::checkSpmm on `g` (a wrong result is an error), then times it with
/// CUDA events on random inputs, flushing the L2 before each run. Returns
/// the median seconds. Needs a GPU; untested without one.
Expected<double>
measureSchedule(rt::Runtime &runtime, const std::string &kernelText,
                const std::string &entryName, const graph::CsrGraph &g,
                const Problem &problem, const MeasureOptions &options = {});

/// measureSchedule for a gnn.sddmm kernel: compiles `kernelText`, loads the
/// kernel `entryName`, runs ops::checkSddmm on `g` (a wrong result is an
/// error), then times it with CUDA events on random row and column features
/// and a NaN-poisoned output, flushing the L2 before each run. Returns the
/// median seconds. Needs a GPU; untested without one.
Expected<double> measureSddmmSchedule(rt::Runtime &runtime,
                                      const std::string &kernelText,
                                      const std::string &entryName,
                                      const graph::CsrGraph &g,
                                      const Problem &problem,
                                      const MeasureOptions &options = {});

/// Compiles the kernel `entryName` of `kernelText` (a .gnn module carrying
/// its schedule) for `arch` with NVRTC into `cache`, exactly as measureFor
/// compiles it on a GPU of that architecture, so that a later measurement
/// loads the cubin instead of compiling it. Needs no GPU. `hit` (optional)
/// says whether the cache already held it.
Status precompileKernel(const std::string &kernelText,
                        const std::string &entryName, const std::string &arch,
                        const rt::KernelCache &cache, bool *hit = nullptr);

/// measureSddmmSchedule for a gnn.sddmm `problem`, measureSchedule
/// otherwise.
Expected<double> measureFor(rt::Runtime &runtime, const std::string &kernelText,
                            const std::string &entryName,
                            const graph::CsrGraph &g, const Problem &problem,
                            const MeasureOptions &options = {});

/// Measures the copy bandwidth (an NVRTC copy kernel over 1 GiB, bytes read
/// plus written), the DRAM and L2 dependent-load latencies (a one-thread
/// pointer chase over a random cycle, larger and smaller than the L2) and
/// the launch overhead (an empty kernel) on the runtime's device, over
/// fromDevice(). Needs a GPU; untested without one.
Expected<GpuModel> calibrate(rt::Runtime &runtime);

} // namespace gnnc::tuning

#endif // GNNC_TUNING_AUTOTUNER_H
