//===- CostModel.h - Predicted time of a gnn.spmm schedule ------*- C++ -*-===//
//
// A first-principles model of gnnc's gnn.spmm kernels.
//
// vertex_parallel: each
// row is processed by one group of `dim_workers` lanes, each lane owns
// `chunks_per_lane` vectors of `vector_width` features, and the group issues
// the feature loads of `edge batch` neighbours before using the first. The
// predicted time is the largest of four lower bounds (memory traffic, the
// longest row's dependent load chain, waves of resident blocks, load-issue
// throughput including warp divergence) plus the launch overhead.
//
// edge_parallel (merge path): workers of `dim_workers` lanes take equal
// stretches of `edges_per_warp` items (row ends and edges) of the merge
// path, keep their row ends in shared memory and walk their edges in
// batches across row boundaries; rows split between workers leave two f32
// partial rows per worker in a workspace that a second kernel adds up. The
// bounds are the same four, but no row sets the time: the latency term is
// one worker's dependent chain (the merge-path search, about log2(rows)
// loads since the two searches overlap; one index load per window of
// lanes * batch edges; one feature batch per `edge batch` edges), which does
// not depend on the degrees; waves count workers over the workers resident
// on the GPU (limited by threads, shared memory and registers); the
// bandwidth term adds the workspace written and read back; the launch term
// counts two launches. On top of the largest bound come the loop's
// instructions between its loads: per warp step and chunk a lane owns, and
// per row end for each worker sharing the warp (edgeStepCycles and
// rowEndCycles, fitted to edge-parallel kernels measured on R-MAT graphs,
// as loadedLatencyFactor was to vertex-parallel ones; Fit.h). The other GPU
// numbers come from a GpuModel (datasheets and micro-benchmarks). See
// bench/NOTES.md, section "Cost model".
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_COSTMODEL_H
#define GNNC_TUNING_COSTMODEL_H

#include "gnnc/Plan/Plan.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/runtime/Float16.h"

#include <cstdint>
#include <string>

namespace gnnc::tuning {

/// A schedule in the compact form of the tuner's tables, `vw=4 dw=16
/// tpb=256`, then ` ep=256`, ` gs=32` and ` bps=4` when set. For reading
/// only: schedules are stored and passed as Schedule or its text form.
std::string shortText(const Schedule &s);

/// The tuning database's name of what `op` computes: "spmm" (a plain sum),
/// "spmm" with its options appended ("spmm_mean", "spmm_max_scale_both",
/// "spmm_self", ...), "sddmm" (form = dot) or "sddmm_add".
std::string tuningOpName(const OpDesc &op);

/// `op` in words for reports: "" for gnn.spmm, else ", sddmm dot" or
/// ", sddmm add", with ", leaky_relu" when it has one.
std::string opDescription(const OpDesc &op);

/// The predicted time and its parts, in seconds.
struct Prediction {
  /// max(bandwidth, latency, waves, issue) + instructions + launch.
  double seconds = 0;
  /// Bytes from DRAM (compulsory + missed feature gathers) / DRAM bandwidth.
  double bandwidthSeconds = 0;
  /// The longest row's chain of dependent neighbour batches (edge_parallel:
  /// the chain of a worker whose items are all edges).
  double latencySeconds = 0;
  /// Waves of resident blocks, each as long as a typical warp's chain
  /// (edge_parallel: waves of resident workers, each a typical worker's
  /// chain).
  double wavesSeconds = 0;
  /// Load instructions (with divergence) over the SMs' L1 throughput.
  double issueSeconds = 0;
  /// edge_parallel: the workers' instructions between their loads (the
  /// fitted edgeStepCycles and rowEndCycles terms), added to the largest
  /// bound rather than overlapped with it; 0 for the other strategies.
  double instructionSeconds = 0;
  /// One launch, or two (edge_parallel: the kernel and its fix-up).
  double launchSeconds = 0;
  /// Segmented matmuls: the SMs' share of the waves (the tensor pipe and
  /// fragment loads), the last tie-break between schedules whose memory
  /// pipeline bounds them alike.
  double smSeconds = 0;

  // Inputs behind the terms, for reports and tests.
  double dramBytes = 0;
  /// edge_parallel: workspace bytes written and read back (in dramBytes).
  double workspaceBytes = 0;
  double gatherHitRate = 0;
  double waves = 0;
  int blocksPerSm = 0;
  /// edge_parallel: the number of workers.
  double workers = 0;
  /// E[max degree among the rows of one warp] / mean degree (>= 1).
  double warpImbalance = 1;
  /// The kernel plan the prediction is for.
  KernelPlan plan;
  /// The largest term's name: "bandwidth", "latency", "waves" or "issue".
  std::string bound;
  /// One line: the bound and the numbers behind it.
  std::string why;
};

/// Analysis options whose reuse window is the share of the L2 that feature
/// rows of `op` can use (the L2 minus the streamed CSR arrays' working set,
/// at most 3/4 of it) in rows of width * element bytes.
graph::AnalysisOptions profileOptionsFor(const GpuModel &gpu, const OpDesc &op);

/// Predicts the time of the gnn.spmm `op` run as `plan` (planKernel of `op`
/// and a schedule) on a graph with profile `profile` (best made with
/// profileOptionsFor; without a reuse estimate every gather is assumed to
/// miss).
Prediction predictSpmm(const GpuModel &gpu, const graph::GraphProfile &profile,
                       const OpDesc &op, const KernelPlan &plan);

} // namespace gnnc::tuning

#endif // GNNC_TUNING_COSTMODEL_H
