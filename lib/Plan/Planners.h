//===- Planners.h - The planners of each op and strategy --------*- C++ -*-===//
//
// Internal to lib/Plan: the per-(op, strategy) planners the registry lists,
// the per-op schedule rules, and the pieces they share.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_LIB_PLAN_PLANNERS_H
#define GNNC_LIB_PLAN_PLANNERS_H

#include "gnnc/Plan/Limits.h"
#include "gnnc/Plan/Plan.h"

#include <algorithm>
#include <string>

namespace gnnc::plan {

using Planner = Expected<KernelPlan> (*)(const OpDesc &, const Schedule &);
using ScheduleRule = Status (*)(const OpDesc &, const Schedule &);

/// What an op family brings: the rules its schedules follow beyond the
/// common ones, and how its threads share a row.
struct OpFamily {
  OpKind kind;
  /// Rules of this op only (run before the common ones), or null.
  ScheduleRule rules = nullptr;
  /// f16 accumulation and discretized reduction.
  bool accumulates = false;
  /// Rows split between workers (edge_parallel write = atomic or shared).
  bool splitsRows = false;
  /// Padded rows (`#gnn.rows`).
  bool paddedRows = false;
  /// Threads of a row when the schedule leaves dim_workers open and the
  /// threads share the row's edges rather than its features (0: features).
  int32_t edgeWorkers = 0;
  /// The strategy of an op that gives no schedule.
  Strategy defaultStrategy = Strategy::VertexParallel;
};

/// The registry (Registry.cpp).
const OpFamily &familyOf(OpKind kind);
Planner findPlanner(OpKind kind, Strategy strategy);

// Planners.
Expected<KernelPlan> planVertexParallel(const OpDesc &op, const Schedule &s);
Expected<KernelPlan> planSpmmEdgeParallel(const OpDesc &op, const Schedule &s);
Expected<KernelPlan> planSpmmNeighbourGroups(const OpDesc &op,
                                             const Schedule &s);
Expected<KernelPlan> planSddmmEdgeParallel(const OpDesc &op, const Schedule &s);
Expected<KernelPlan> planSddmmNeighbourGroups(const OpDesc &op,
                                              const Schedule &s);
Expected<KernelPlan> planEdgeSoftmax(const OpDesc &op, const Schedule &s);
Expected<KernelPlan> planSpmmBatched(const OpDesc &op, const Schedule &s);
Expected<KernelPlan> planSpmmSliced(const OpDesc &op, const Schedule &s);
Expected<KernelPlan> planReadout(const OpDesc &op, const Schedule &s);
Expected<KernelPlan> planSegmentMatmulTileRouted(const OpDesc &op,
                                                 const Schedule &s);
Expected<KernelPlan> planSegmentMatmulWeightGrad(const OpDesc &op,
                                                 const Schedule &s);

// Tensor-core tiles (the segmented matmul and the batched linear epilogue).
/// The reduction step of a tensor-core tile (two k16 or four k8 mma steps).
constexpr int64_t kMmaDepth = 32;
/// A segmented matmul's deeper reduction step: 128 bytes of each row that
/// runs along the reduction (one cache line: 64 halves), at least
/// kMmaDepth.
inline int64_t segmentMmaLineDepth(ElementType type) {
  return std::max<int64_t>(128 / static_cast<int64_t>(elementSize(type)),
                           kMmaDepth);
}
/// Padding of a shared tile row, in elements: 16 bytes where the row runs
/// along the reduction (fragment rows then start 4 banks apart), 8
/// elements where it runs along the result (k rows 8 banks apart in f32).
inline int64_t reductionRowPad(ElementType type) {
  return 16 / static_cast<int64_t>(elementSize(type));
}
constexpr int64_t kResultRowPad = 8;
/// A block tile's widest extent unless its kind allows more.
constexpr int64_t kBlockExtent = 64;
/// The smallest power of two from `least` on that holds `n`, at most
/// `most` (`most` for anything wider): a block tile's extent.
inline int64_t blockExtent(int64_t n, int64_t least,
                           int64_t most = kBlockExtent) {
  int64_t extent = least;
  while (extent < n && extent < most)
    extent *= 2;
  return extent;
}
/// The segmented matmuls' widest block tile, result columns (and the
/// weight gradient's rows of K): at M up to 128 a block computes whole
/// rows of Y, so each X tile is read once rather than once per 64 columns.
constexpr int64_t kSegmentMmaMaxExtent = 128;
/// The blocks an SM must still hold for the segmented matmul to keep W_t
/// resident (segmentMmaTile); fewer, and the weights stream instead.
constexpr int64_t kSegmentResidentBlocks = 2;
/// The rows of a segmented-matmul warp tile by default (2 fragments of
/// 16); threads_per_block may ask for fewer warps of up to
/// kSegmentMaxFragsM fragments each.
constexpr int64_t kSegmentWarpRows = 32;
constexpr int32_t kSegmentMaxFragsM = 4;
/// math = wgmma (gnnc/cuda/wgmma_tile.cuh): a reduction step is one
/// 128-byte swizzled row of each operand; a warpgroup of
/// kWgmmaGroupThreads threads owns kWgmmaGroupRows result rows, and one
/// instruction kWgmmaColumns columns (M and K come in whole steps and
/// panels); the tiles start on kWgmmaAlignBytes, which the plan's shared
/// bytes leave room for.
constexpr int64_t kWgmmaRowBytes = 128;
constexpr int64_t kWgmmaGroupThreads = 128;
constexpr int64_t kWgmmaGroupRows = 64;
constexpr int64_t kWgmmaColumns = 64;
constexpr int64_t kWgmmaAlignBytes = 1024;
/// The weight gradient's wgmma step: rows of a split (four k16
/// instructions a panel).
constexpr int64_t kWgmmaWeightGradDepth = 64;
/// The widest wgmma column block: W_t stays resident where one block of
/// at most this many columns holds all of M, fits, and still leaves an SM
/// kWgmmaResidentGroups warpgroups (one alone waits for each step's
/// instructions with the tensor cores idle: a 64-row tile of K = M = 256
/// f16, resident at one block an SM, ran 1.08x slower on an H200 than
/// streamed at two).
constexpr int64_t kWgmmaMaxColumns = 256;
constexpr int64_t kWgmmaResidentGroups = 2;
/// The fewest blocks of the segmented matmuls' grid-striding companions (a
/// TF32 wgmma forward's prelude, the transposed copy of the weights; the
/// weight gradient's reduction): enough to keep every SM's loads in
/// flight. On the persistent blocks alone (one or two an SM, a load
/// latency per tile) the copy of 100 types of 256 x 256 took about 0.1 ms
/// on an H200, as long as the matmul after it.
constexpr int64_t kSegmentCompanionBlocks = 1024;

// Per-op rules.
Status spmmRules(const OpDesc &op, const Schedule &s);
Status readoutRules(const OpDesc &op, const Schedule &s);
/// The segmented matmuls: math = tensor_core only where
/// segmentTensorCoreFits accepts the op.
Status segmentMatmulRules(const OpDesc &op, const Schedule &s);

// Shared pieces.
/// The thread mapping every strategy starts from: lanes = dim_workers,
/// rows per block = threads / lanes, chunks = ceil(width / vw) (the last
/// chunk of a padded row runs into the padding), chunks per lane =
/// ceil(chunks / lanes), and the neighbour batch: as many feature loads in
/// flight as kMaxPrefetchRegisters allow, at most kMaxEdgeBatch (and at
/// most the lanes unless `wideBatch`: gnn.spmm, and edge_parallel gnn.sddmm
/// whose workers load both endpoints). Fails when a lane would need more
/// than kMaxAccumulatorsPerThread accumulators.
/// With `laneChunks` > 0 the lanes share that many chunks at a time (a
/// column block of the batched strategy) rather than the whole row.
Expected<ThreadMapping> featureMapping(const OpDesc &op, const Schedule &s,
                                       bool wideBatch, int64_t laneChunks = 0);
/// batched: the vector chunks of one column block when a block stages
/// `tileRows` rows of `vw`-element chunks: the whole row when the tile fits
/// defaults::kBatchedTileBytes, else the row cut into the fewest column
/// blocks of equal size that do (at least one chunk each).
int64_t batchedColumnChunks(const OpDesc &op, int64_t vw, int64_t tileRows);
/// A plan holding featureMapping's mapping and a block per `rowsPerBlock`
/// rows (rowLaunch).
Expected<KernelPlan> rowPlan(const OpDesc &op, const Schedule &s,
                             bool wideBatch);
/// Turns a row plan into one worker per neighbour group of
/// `s.groupSize` (neighbor_group): the host's group tables (group_rows,
/// the row of each group; group_begins, the first edge of each group;
/// their number) appended to the parameters, a grid over the groups, and
/// an edge batch of at most a group.
void planGroupWorkers(KernelPlan &plan, const Schedule &s);
/// The plan every edge_parallel kernel starts from: workers of `lanes`
/// threads take `edges_per_warp` items of the merge path (row ends and
/// edges) each, the grid counts rows plus edges (at least one block, so a
/// graph without rows or edges still gets its launch), the kernel takes the
/// number of edges, and with `rowEnds` each worker's row ends live in
/// shared memory.
Expected<KernelPlan> edgeParallelPlan(const OpDesc &op, const Schedule &s,
                                      bool rowEnds);
/// The launch of a kernel with a block per `rowsPerBlock` rows.
LaunchPlan rowLaunch(const Schedule &s, const ThreadMapping &m);
/// Fails when `shared` bytes per block exceed `limit` (kMaxSharedBytes
/// unless given): "<what> = <shared> bytes, over <limit>; <fix>".
Status checkSharedBytes(int64_t shared, const std::string &what,
                        const std::string &fix,
                        int64_t limit = limits::kMaxSharedBytes);
/// Whether 16-bit vectors of `vw` elements stay packed in 32-bit words.
bool keepsVectorsPacked(ElementType type, int64_t vw);

} // namespace gnnc::plan

#endif // GNNC_LIB_PLAN_PLANNERS_H
