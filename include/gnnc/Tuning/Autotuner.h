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
#include "gnnc/graph/Batch.h"
#include "gnnc/graph/Csr.h"
#include "gnnc/runtime/KernelSpec.h"
#include "gnnc/runtime/Status.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gnnc::rt {
class KernelCache;
class Runtime;
} // namespace gnnc::rt

namespace gnnc::tuning {

/// A cost model: the predicted time of `op` run as `plan` on a graph with
/// profile `profile`.
using CostModel = Prediction (*)(const GpuModel &gpu,
                                 const graph::GraphProfile &profile,
                                 const OpDesc &op, const KernelPlan &plan);

/// The cost model of `kind` (one line per op family in Autotuner.cpp's
/// registry), or null for an op no model knows.
CostModel costModelFor(OpKind kind);

/// Every schedule the tuner considers for `op`, complete and legal
/// (planKernel accepts each): the vertex_parallel ones with every vector
/// width the op allows, dim_workers a power of two from the default (one
/// trip over the row, completeSchedule's rule) down to 1, and
/// threads_per_block in {256, 128, 512, 64}; ordered by preference (wider
/// vectors, more lanes, 256 threads first), which breaks ties. Then the
/// edge_parallel schedules with each vector width's default dim_workers,
/// 256 threads and defaults::kTunedEdgesPerWorker merge-path items per
/// worker (staged writes); then the neighbor_group ones with groups of
/// defaults::kTunedGroupSizes neighbours, for the ops that have that
/// strategy (gnn.sddmm also defaults::kTunedSddmmGroupSizes).
std::vector<Schedule> enumerateSchedules(const OpDesc &op);

/// `s` with each of defaults::kTunedEdgeBatches that is below the edge
/// batch its plan would take (none when `s` does not plan): the schedules
/// with fewer neighbour loads in flight that the tuner also tries.
std::vector<Schedule> smallerEdgeBatches(const OpDesc &op, const Schedule &s);

/// A schedule with its prediction and, if measured, its time.
struct Candidate {
  Schedule schedule;
  Prediction prediction;
  /// Median measured seconds; unset when not measured (or it failed).
  std::optional<double> measuredSeconds;
  /// Why it was not measured or what failed ("wrong result: ...").
  std::string note;
  /// The plan runs neighbour groups of one edge (ThreadMapping::edgeGroups):
  /// a chain of loads of its own, measured as a strategy of its own.
  bool edgeGroups = false;
};

/// Plans and predicts every schedule with the op's cost model (skipping
/// those planKernel refuses) and sorts by predicted time; equal times are
/// ordered by the sum of all terms, then by the enumeration's order. Empty
/// when no model knows the op.
std::vector<Candidate> rankSchedules(const GpuModel &gpu,
                                     const graph::GraphProfile &profile,
                                     const OpDesc &op,
                                     const std::vector<Schedule> &schedules);

/// Indices (into `ranked`, in rank order) of the `k` candidates to measure:
/// the best-ranked schedule of each strategy (vertex-parallel,
/// edge-parallel, neighbour groups, gnn.sddmm's groups of one edge) whose
/// prediction is within 2x of the
/// leader's first, then the best-ranked of the rest. When the model puts
/// two strategies close together it is least reliable between them, so a
/// measurement of `k` >= 2 then compares them. With `everyStrategy`, each
/// strategy's best is measured however far behind the leader the model puts
/// it (beyond `k` if need be): for callers that measure once per graph and
/// op, where a model that is wrong by more than 2x between strategies costs
/// more than a few extra timings.
std::vector<size_t> measurementOrder(const std::vector<Candidate> &ranked,
                                     size_t k, bool everyStrategy = false);

/// Index of the chosen candidate: the fastest measured one if any was
/// measured, else the first (best predicted).
size_t chooseCandidate(const std::vector<Candidate> &ranked);

/// Device inputs that the measurements of one tuning run on one graph
/// share (defined in Measure.cpp): the graph uploaded with each index
/// width, random features per element type and count, the column factors
/// per exponent. The candidates of an op differ only in their schedules,
/// so each input is made once per run instead of once per candidate (at
/// R-MAT 20, width 128, a feature tensor is 134M random elements, about a
/// second of host work). Needs a GPU once used.
class MeasureInputs;

/// Inputs for the measurements on `g` (which must outlive them).
std::shared_ptr<MeasureInputs> makeMeasureInputs(const graph::CsrGraph &g);

/// Timing parameters of measureSchedule.
struct MeasureOptions {
  int warmups = 3;
  int runs = 10;
  uint64_t seed = 1;
  /// Check the kernel's result against the CPU reference before timing it
  /// (gnn-tune). Off where the candidates are gnnc's tested kernels and a
  /// reference over the whole graph would cost seconds each
  /// (compileForGraph's measuring).
  bool check = true;
  /// Inputs shared with the other measurements of the run (made for the
  /// graph being measured); null: this measurement makes its own.
  std::shared_ptr<MeasureInputs> inputs;
};

/// Loads the compiled gnn.spmm kernel `spec`, runs ops::checkSpmm on `g`
/// (a wrong result is an error), then times it with CUDA events on random
/// inputs, flushing the L2 before each run. Returns the median seconds.
/// Needs a GPU; untested without one.
Expected<double> measureSchedule(rt::Runtime &runtime,
                                 const rt::KernelSpec &spec,
                                 const graph::CsrGraph &g,
                                 const MeasureOptions &options = {});

/// measureSchedule on a batch (ops::uploadBatch; the check is
/// ops::checkSpmm on the batch): general kernels and batched ones alike.
Expected<double> measureSchedule(rt::Runtime &runtime,
                                 const rt::KernelSpec &spec,
                                 const graph::BatchedGraph &batch,
                                 const MeasureOptions &options = {});

/// measureSchedule for a gnn.sddmm kernel: runs ops::checkSddmm on `g` (a
/// wrong result is an error), then times it with CUDA events on random row
/// and column features and a NaN-poisoned output, flushing the L2 before
/// each run. Returns the median seconds. Needs a GPU; untested without one.
Expected<double> measureSddmmSchedule(rt::Runtime &runtime,
                                      const rt::KernelSpec &spec,
                                      const graph::CsrGraph &g,
                                      const MeasureOptions &options = {});

/// measureSddmmSchedule for a gnn.sddmm kernel, measureSchedule for a
/// gnn.spmm one; an error for others.
Expected<double> measureFor(rt::Runtime &runtime, const rt::KernelSpec &spec,
                            const graph::CsrGraph &g,
                            const MeasureOptions &options = {});

/// Measures the copy bandwidth (an NVRTC copy kernel over 1 GiB, bytes read
/// plus written), the DRAM and L2 dependent-load latencies (a one-thread
/// pointer chase over a random cycle, larger and smaller than the L2) and
/// the launch overhead (an empty kernel) on the runtime's device, over
/// fromDevice(). Needs a GPU; untested without one.
Expected<GpuModel> calibrate(rt::Runtime &runtime);

} // namespace gnnc::tuning

#endif // GNNC_TUNING_AUTOTUNER_H
