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
// numbers come from a GpuModel (datasheets and micro-benchmarks). See bench/NOTES.md, section
// "Cost model".
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_COSTMODEL_H
#define GNNC_TUNING_COSTMODEL_H

#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/runtime/Float16.h"

#include <cstdint>
#include <string>

namespace gnnc::tuning {

/// What is computed: one gnn.spmm (sum) or one gnn.sddmm over a CSR graph.
struct Problem {
  /// "spmm" or "sddmm" (see SddmmModel.h for the latter).
  std::string op = "spmm";
  ElementType type = ElementType::F32;
  int64_t width = 64;
  /// Elements from one feature row to the next when the rows are padded
  /// (`#gnn.rows<stride = ...>`); 0: unpadded, the width.
  int64_t rowStride = 0;
  int64_t stride() const { return rowStride > 0 ? rowStride : width; }
  /// Whether the kernel reads one value per edge (SpMMve).
  bool edgeValues = false;
  /// Bytes of a row offset and of a column index.
  int offsetBytes = 8;
  int indexBytes = 4;
  /// gnn.sddmm only: form = add (width values per edge) rather than dot
  /// (one value per edge), and whether a leaky_relu follows.
  bool sddmmAdd = false;
  bool leakyRelu = false;
  bool isSddmm() const { return op == "sddmm"; }
};

/// A complete gnn.spmm schedule: vertex_parallel, edge_parallel when
/// `edgesPerWorker` is set, or neighbor_group when `groupSize` is.
struct Schedule {
  int vectorWidth = 0;
  int dimWorkers = 0;
  int threadsPerBlock = 0;
  /// Merge-path items per worker (`edges_per_warp`); 0 = vertex_parallel.
  int edgesPerWorker = 0;
  /// Blocks that must fit on an SM (`blocks_per_sm`, a register cap); 0 =
  /// no cap.
  int blocksPerSm = 0;
  /// Neighbours per group (`group_size`); 0 = not neighbor_group.
  int groupSize = 0;

  bool isEdgeParallel() const { return edgesPerWorker > 0; }
  bool isNeighbourGroup() const { return groupSize > 0; }
  /// 0 vertex_parallel, 1 edge_parallel, 2 neighbor_group.
  int strategyIndex() const {
    return isEdgeParallel() ? 1 : isNeighbourGroup() ? 2 : 0;
  }
  /// `#gnn.schedule<strategy = vertex_parallel, vector_width = .., ...>`;
  /// edge_parallel adds `edges_per_warp` and `write = staged`,
  /// neighbor_group `group_size` and `write = atomic`.
  std::string attribute() const;
  /// `vw=4 dw=16 tpb=256`, then ` ep=256`, ` gs=32` and ` bps=4` when set,
  /// for tables.
  std::string shortText() const;
  bool operator==(const Schedule &o) const {
    return vectorWidth == o.vectorWidth && dimWorkers == o.dimWorkers &&
           threadsPerBlock == o.threadsPerBlock &&
           edgesPerWorker == o.edgesPerWorker && blocksPerSm == o.blocksPerSm &&
           groupSize == o.groupSize;
  }
};

/// The kernel plan the lowering derives from a schedule (mirrors
/// lib/Transforms/LowerToKernels.cpp).
struct Plan {
  int lanes = 1;
  /// Rows (vertex_parallel) or workers (edge_parallel) per block.
  int rowsPerBlock = 1;
  int64_t chunks = 1;
  int64_t chunksPerLane = 1;
  int edgeBatch = 1;
  /// edge_parallel: merge-path items per worker, and the dynamic shared
  /// memory of a block (workers x (items + 1) row ends x 4 bytes;
  /// neighbor_group: groups x row stride x 4 bytes of partial sums).
  int64_t itemsPerWorker = 0;
  int64_t sharedBytes = 0;
};

/// The plan of `s` for `problem`: lanes = dim_workers, rows_per_block =
/// threads / lanes, chunks = ceil(width / vw), chunks_per_lane = ceil(chunks /
/// lanes), edge batch = clamp(min(64 / (chunks_per_lane * vw), lanes), 1, 8)
/// (edge_parallel: clamp(64 / (chunks_per_lane * vw), 1, 8), no min with
/// the lanes). A gnn.sddmm `problem` gets sddmmPlanFor (SddmmModel.h).
Plan planFor(const Problem &problem, const Schedule &s);

/// Whether `s` passes the verifier and the lowering for `problem`:
/// vw in {1,2,4,8}, vw * element bytes <= 16, vw divides the row stride
/// (the width, without padding);
/// dim_workers a power of two <= 32 and <= threads; threads a multiple of 32
/// in [32, 1024]; chunks_per_lane * vw <= 128 accumulators; edge_parallel:
/// edges_per_warp from 8 to 2^20 and workers x (items + 1) x 4 bytes of
/// shared memory <= 96 KiB; blocks_per_sm from 0 to 32 with blocks_per_sm x
/// threads <= 2048 and blocks_per_sm x shared memory <= 160 KiB. On failure
/// `why` (when given) says which rule. A gnn.sddmm `problem` is checked by
/// isSddmmLegal (SddmmModel.h).
bool isLegal(const Problem &problem, const Schedule &s,
             std::string *why = nullptr);

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
  Plan plan;
  /// The largest term's name: "bandwidth", "latency", "waves" or "issue".
  std::string bound;
  /// One line: the bound and the numbers behind it.
  std::string why;
};

/// Analysis options whose reuse window is the share of the L2 that feature
/// rows of `problem` can use (the L2 minus the streamed CSR arrays' working
/// set, at most 3/4 of it) in rows of width * element bytes.
graph::AnalysisOptions profileOptionsFor(const GpuModel &gpu,
                                         const Problem &problem);

/// Predicts the time of the gnn.spmm with schedule `s` on a
/// graph with profile `profile` (best made with profileOptionsFor; without
/// a reuse estimate every gather is assumed to miss).
Prediction predict(const GpuModel &gpu, const graph::GraphProfile &profile,
                   const Problem &problem, const Schedule &s);

} // namespace gnnc::tuning

#endif // GNNC_TUNING_COSTMODEL_H
