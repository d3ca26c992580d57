//===- Plan.h - Kernel plans: the one place a schedule is resolved -*- C++
//-*-===//
//
// A kernel plan is everything that follows from an op (OpDesc) and its
// schedule: whether the schedule is legal (and if not, why), the defaults
// for what it leaves open, how threads map onto rows, features and edges,
// the block's shared memory, the parameters the kernel needs beyond its
// operands, the launch grid, companion kernels and the workspace. One
// function per (op, strategy) computes it; the verifier and the lowering
// turn its errors into diagnostics, the CUDA printer prints what it says,
// and the cost models, the tuner and the benchmark call it directly.
// Plain C++, no MLIR.
//
// A new op family adds its planners in a file of its own and one line per
// (op, strategy) in the registry (lib/Plan/Registry.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_PLAN_PLAN_H
#define GNNC_PLAN_PLAN_H

#include "gnnc/Plan/Abi.h"
#include "gnnc/Plan/Schedule.h"
#include "gnnc/Plan/Types.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gnnc {

/// How a kernel is launched: `threads` per block, one block per
/// `itemsPerBlock` of the sum of the parameters with the roles `grid` (at
/// least `minBlocks`), `sharedBytes` of dynamic shared memory, and a
/// register cap for `blocksPerSm` resident blocks (0: none).
struct LaunchPlan {
  int32_t threads = 0;
  std::vector<ParamRole> grid;
  int64_t itemsPerBlock = 1;
  int64_t minBlocks = 0;
  int64_t sharedBytes = 0;
  int32_t blocksPerSm = 0;
  bool operator==(const LaunchPlan &o) const;
};

/// A kernel that runs before (a prelude) or after (a follow-up) the main
/// one, with the same parameters: its entry name is the main kernel's plus
/// `suffix`.
struct CompanionPlan {
  std::string suffix;
  LaunchPlan launch;
  bool operator==(const CompanionPlan &o) const;
};

/// Scratch memory: ceil(sum of the parameters with the roles `count` /
/// `itemsPerUnit`), at least `minUnits`, times `bytesPerUnit` bytes, passed
/// in the parameter with the role Workspace.
struct WorkspacePlan {
  std::vector<ParamRole> count;
  int64_t itemsPerUnit = 1;
  int64_t bytesPerUnit = 0;
  int64_t minUnits = 0;
  bool operator==(const WorkspacePlan &o) const;
};

/// How the threads of a kernel map onto its work.
struct ThreadMapping {
  /// Threads that share a row (vertex_parallel), a worker's stretch of the
  /// merge path (edge_parallel) or a group (neighbor_group).
  int32_t lanes = 1;
  /// Rows, workers or groups per block.
  int32_t rowsPerBlock = 1;
  int32_t vectorWidth = 1;
  /// Vector chunks per row, and loop trips per lane.
  int64_t chunks = 1;
  int64_t chunksPerLane = 1;
  /// Neighbours whose feature loads a thread issues before using the first.
  int32_t edgeUnroll = 1;
  /// 16-bit vectors stay packed in 32-bit words until they are added.
  bool packed = false;
  /// edge_parallel: merge-path items per worker; neighbor_group: neighbours
  /// per group.
  int64_t itemsPerWorker = 0;
  int64_t groupSize = 0;
  /// neighbor_group of one edge per group (gnn.sddmm, group_size = 1):
  /// group g is edge g, so its range needs no table and its column index
  /// loads beside its row, not after it.
  bool edgeGroups = false;
  /// Shared memory before the slots of write = shared (the row ends).
  int64_t rowEndsBytes = 0;
  /// batched: vector chunks per column block (0: the whole row); a block
  /// stages and reduces one column block of its graphs at a time.
  int64_t columnChunks = 0;
  /// The chunks a row's lanes share at once: a column block, or the row.
  int64_t laneChunks() const { return columnChunks ? columnChunks : chunks; }
  /// Column blocks per row.
  int64_t columnBlocks() const {
    return (chunks + laneChunks() - 1) / laneChunks();
  }
  /// Whether some lanes of a row (or of the last column block) have a
  /// chunk less than the others, so that chunk loops test their bound.
  bool raggedChunks() const {
    return laneChunks() % lanes != 0 || chunks % laneChunks() != 0;
  }
  /// gnn.sddmm (dot): the warp shuffles a thread issues to sum a batch of
  /// edgeUnroll values across its lanes, as gnnc_lane_sums does
  /// (gnnc/cuda/lane_sums.cuh): log2(lanes) rounds in which it exchanges
  /// half its values (the batch padded to a power of two), one value once
  /// a single one is left.
  int64_t laneSumShuffles() const;
  bool operator==(const ThreadMapping &o) const;
};

/// Everything that follows from an op and its complete schedule.
struct KernelPlan {
  /// The complete schedule the plan was made from.
  Schedule schedule;
  ThreadMapping mapping;
  /// The parameters the kernel takes after its operands and results, in
  /// order.
  std::vector<ParamRole> extraParams;
  LaunchPlan launch;
  std::vector<CompanionPlan> preludes;
  std::vector<CompanionPlan> followUps;
  std::optional<WorkspacePlan> workspace;
  /// write = atomic: a row split between workers reaches the result in
  /// pieces of at most this many edges, each rounded to the result's type
  /// (the host's error bound needs it); 0 when every row is written once.
  int64_t atomicPieceEdges = 0;

  Strategy strategy() const { return schedule.strategy; }
};

/// A batched gnn.spmm block's staged indices in its shared memory: its
/// rows' offsets (i64, rows + 1) at offsetsAt, then their column indices
/// (of the index type, `edges` of them) at columnsAt, each 16-byte aligned;
/// they end at `end`. Every batched block stages them when they fit.
struct BatchedIndices {
  int64_t edges = 0;
  int64_t offsetsAt = 0;
  int64_t columnsAt = 0;
  int64_t end = 0;
};

/// The shared memory of a batched gnn.spmm block: the staged feature rows
/// (tile_rows rows of one column block, in the element type), then the
/// staged indices.
struct BatchedTile {
  int64_t rows = 0;
  int64_t featureBytes = 0;
  BatchedIndices indices;
  int64_t bytes = 0;
};
/// Whether a batched gnn.spmm's blocks stage their feature rows, offsets
/// and column indices in shared memory (batchedTile); a linear epilogue's
/// blocks reduce their rows from global memory instead, keeping shared
/// memory for the aggregated rows and the weights (BatchedLinearTile).
inline bool batchedStagesFeatures(const OpDesc &op) { return !op.linear(); }

/// The column indices a batched tile of `tileRows` rows holds:
/// defaults::kBatchedEdgesPerTileRow x tileRows.
int64_t batchedTileEdges(int64_t tileRows);
/// The tile of `op` under `s` (tile_rows set): columnChunks chunks of
/// vector_width elements per row, batchedTileEdges column indices.
BatchedTile batchedTile(const OpDesc &op, const Schedule &s,
                        int64_t columnChunks);
/// The staged indices of `op`'s batched blocks under `s`: after the feature
/// tile (batchedTile), or after H with a linear epilogue
/// (BatchedLinearTile).
BatchedIndices batchedIndices(const OpDesc &op, const Schedule &s,
                              int64_t columnChunks);

/// The linear epilogue of a batched gnn.spmm (OpDesc::linear): a block
/// stages its row offsets and column indices (when they fit `edges`, at
/// offsetsAt and columnsAt, after H) but not its features, and reduces its
/// rows from global memory into the tile H
/// (rows x K, in shared memory, in the element type, zero columns up to
/// kPadded), then multiplies H by W on tensor cores, `cols` result columns
/// at a time (a pass), with warpsM x warpsN warps of fragsM x fragsN 16 x 8
/// fragments. A pass's weights are staged whole (kPadded x cols, rows of
/// bStride; transposed weights cols x kPadded), the first pass's with
/// cp.async at the kernel's start, while the block aggregates. Shared
/// memory: the weights at wAt (0), H at hAt, then the offsets and columns.
///
/// Weights that need more than kLinearMaxStagedPasses passes
/// (streamWeights) are not staged whole: each warp of the block takes
/// items of fragsM x fragsN fragments (all of the block's rows when they
/// are at most 64, by 8 x fragsN
/// columns) in turn and streams its columns of W, one mma step (depth) at
/// a time, through a ring of `stages` buffers of its own (stageBytes each,
/// rows of bStride) with cp.async; L2 keeps W for the blocks that follow,
/// and no barrier separates the items. `cols` is then an item's columns;
/// the rings lie at wAt (0), H at hAt.
struct BatchedLinearTile {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t depth = 0;
  /// K rounded up to a multiple of depth.
  int64_t kPadded = 0;
  bool streamWeights = false;
  /// streamWeights: the buffers of a warp's ring.
  int32_t stages = 1;
  int32_t warpsM = 1, warpsN = 1, fragsM = 1, fragsN = 1;
  /// The block's threads: four warps staging (those beyond the tile's only
  /// aggregate), kLinearStreamWarps streaming.
  int32_t threads = 0;
  int64_t hStride = 0, bStride = 0;
  /// The bytes of one pass's weights (streamWeights: of one buffer of a
  /// warp's ring).
  int64_t stageBytes = 0;
  int64_t wAt = 0;
  int64_t hAt = 0;
  BatchedIndices indices;
  int64_t bytes = 0;
};
/// The epilogue tile of `op` (a gnn.spmm with a linear epilogue) under `s`
/// (tile_rows set).
BatchedLinearTile batchedLinearTile(const OpDesc &op, const Schedule &s);

/// The shared memory of a tile_routed gnn.segment_matmul block: the
/// weights of the type of its current tile, K x M elements of the op's
/// type (row-major, one K row of M after the other), staged whole.
struct SegmentTile {
  /// Result rows per tile (tile_rows).
  int64_t rows = 0;
  int64_t weightElements = 0;
  int64_t bytes = 0;
};
/// The tile of `op` (a gnn.segment_matmul) under `s` (tile_rows set).
SegmentTile segmentMatmulTile(const OpDesc &op, const Schedule &s);

/// The k of one mma.sync instruction on `type`: 8 for TF32 (f32), 16 for
/// f16 and bf16 (Mma<T>::kDepth of gnnc/cuda/mma_tile.cuh, which asserts
/// that a tile's reduction holds whole instructions).
inline int64_t mmaInstructionDepth(ElementType type) {
  return type == ElementType::F32 ? 8 : 16;
}

/// The block tile of a tile_routed segmented matmul on tensor cores
/// (math = tensor_core). A block computes `rows` x `cols` of a result with
/// warpsM x warpsN warps, each holding fragsM x fragsN accumulator
/// fragments of 16 x 8 (register blocking), and walks the reduction in
/// steps of `depth` through a pipeline of `stages` shared-memory buffers,
/// each holding an A tile and a B tile (rows of aStride and bStride
/// elements of the op's type, padded against bank conflicts).
///  - gnn.segment_matmul: rows = tile_rows of a routing tile, cols from M
///    (8 to 128), the reduction over K; A = X rows x K steps, B = W_t steps
///    x columns (with transposeWeights stored columns x K steps, read
///    transposed).
///  - gnn.segment_matmul_weight_grad: rows and cols from K and M (16 to
///    128), the reduction over the rows of one split (tile_rows); A = X
///    stored steps x K columns (read transposed), B = dY steps x columns.
/// Extents above 64 are taken only where the pipeline still fits a
/// block's shared memory (columns first narrowed, then the weight
/// gradient's rows), so that a schedule that fitted 64 still fits. The
/// forward keeps W_t resident (residentWeights) where one column block
/// holds all of M, it fits and two blocks still share an SM. A step
/// (depth) is 128 bytes of each input row (64 halves; the weight
/// gradient: 64 of a split's rows in 16-bit types) where that tile fits,
/// else 32. A warp tile is 32 rows by default; threads_per_block may
/// choose fewer warps of up to 64 rows (segmentMmaThreadChoices).
struct SegmentMmaTile {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t depth = 0;
  int32_t warpsM = 1, warpsN = 1, fragsM = 1, fragsN = 1;
  int32_t stages = 0;
  int32_t threads = 0;
  /// The registers a thread is given (segmentMmaRegisters): the default
  /// blocks_per_sm holds as many blocks as these allow.
  int32_t registers = 0;
  /// A tile rows are contiguous along the reduction (X, dY rows) or along
  /// the result rows (X read transposed: the weight gradient).
  bool aReductionMajor = true;
  /// B tile rows are contiguous along the result columns (W_t, dY) or
  /// along the reduction (W_t read transposed: the input gradient).
  bool bReductionMajor = false;
  int64_t aStride = 0, bStride = 0;
  int64_t aElements = 0, bElements = 0;
  /// gnn.segment_matmul: W_t's column block (the whole reduction) stays in
  /// shared memory, staged when a block's item changes type or column
  /// block, weightElements elements with rows of bStride; the stages then
  /// hold A tiles alone (bElements 0).
  bool residentWeights = false;
  int64_t weightElements = 0;
  /// One stage's bytes; bytes = the resident weights and every stage.
  int64_t stageBytes = 0;
  int64_t bytes = 0;
  /// Result tiles per routing tile: column blocks of the result (forward)
  /// or tiles of the K x M weight gradient. Blocks walk (routing tile,
  /// result tile) pairs.
  int64_t itemsPerRouteTile = 1;
  /// math = wgmma: warpgroups of 64 rows (warpsM counts warps of 16 rows,
  /// fragsN the 8-column fragments of a row), steps of one 128-byte
  /// swizzled row per operand, W_t's step as 64-column panels (or, read
  /// transposed, rows of the reduction); the weight gradient's steps are
  /// `depth` rows of a split, X and dY both as 64-column panels; bytes
  /// include the 1024 the kernel may skip to align its tiles.
  bool warpgroups = false;
  /// math = wgmma on f32 (TF32) without transposeWeights: TF32 reads B
  /// K-major only, so a prelude leaves each W_tᵀ, rounded to TF32, in the
  /// workspace, and B is read from that copy (bReductionMajor).
  bool weightsCopied = false;
};
/// The tensor-core tile of `op` (a segmented matmul) under `s` (tile_rows
/// set; stages open means the default). Meaningful when
/// segmentTensorCoreFits accepts them.
SegmentMmaTile segmentMmaTile(const OpDesc &op, const Schedule &s);
/// The bytes at which every tensor a segmented matmul kernel of `op` under
/// `s` (a complete schedule, as a compiled kernel's; an open math counts as
/// tensor cores) reads or writes must start: 16 on tensor cores, whose
/// kernels copy rows into shared memory and store results 16 bytes at a
/// time; an element on SIMT. A caller's buffer that starts elsewhere would
/// fault on the GPU, so the launch refuses it.
int64_t segmentOperandAlignment(const OpDesc &op, const Schedule &s);
/// Why `op` under `s` cannot run on tensor cores, or ok: K and M must be
/// multiples of 8 up to kMaxTensorCoreWidth, gnn.segment_matmul's
/// tile_rows 16, 32, 64 or 128, the pipeline must fit a block's shared
/// memory, and threads_per_block (when set) must be one of
/// segmentMmaThreadChoices. math = wgmma: gnn.segment_matmul (f16, bf16,
/// or f32 as TF32), K a multiple of one 128-byte step and M of 64,
/// tile_rows 64 or 128; the weight gradient in f16 or bf16 (TF32 cannot
/// read X and dY transposed), K and M multiples of 8; threads_per_block
/// 128 per 64 rows, the pipeline within sm_90's shared memory
/// (maxSharedBytes).
Status segmentTensorCoreFits(const OpDesc &op, const Schedule &s);
/// The most dynamic shared memory a block of schedule `s` may ask for, and
/// what one SM holds for the model's and the launch's occupancy:
/// kMaxSharedBytes and kMaxSharedBytesPerSm, or their sm_90 figures for
/// math = wgmma (a kernel only sm_90 runs).
int64_t maxSharedBytes(const Schedule &s);
int64_t sharedBytesPerSm(const Schedule &s);
/// The threads_per_block a tensor-core tile of `op` under `s` may run, the
/// default first: one warp per 32 rows and two along the columns, then
/// halving the warps along the rows (taller warp tiles, each fragment of B
/// read from shared memory for more rows) while a warp holds at most four
/// fragments of 16 rows. threads_per_block in `s` is ignored.
std::vector<int32_t> segmentMmaThreadChoices(const OpDesc &op,
                                             const Schedule &s);
/// The registers a thread of a warp tile of fragsM x fragsN fragments of
/// 16 x 8 needs: its f32 accumulators, one step's A and B fragments and
/// the addressing, at least defaults::kSegmentMmaRegisters and at most 255
/// (the register cap of the default blocks_per_sm).
int32_t segmentMmaRegisters(int32_t fragsM, int32_t fragsN);
/// The math a tile_routed schedule with math = auto gets: tensor cores for
/// f16 and bf16 when segmentTensorCoreFits accepts them, SIMT otherwise;
/// f32 keeps exact SIMT arithmetic (TF32 rounds the inputs to 10 bits of
/// mantissa) unless the schedule asks for tensor cores.
MathMode chooseSegmentMath(const OpDesc &op, const Schedule &s);
/// The work items the blocks of a tile_routed kernel of `op` under the
/// complete schedule `s` walk per routing tile (the host launches
/// min(tiles x items, resident) blocks): the tensor-core tile's
/// itemsPerRouteTile, 1 for SIMT kernels.
int64_t segmentRouteItemsPerTile(const OpDesc &op, const Schedule &s);
/// The cost of one more split of a weight gradient on tensor cores, in
/// rows of the split's work: each of its blocks stores a rows x cols f32
/// partial that the follow-up reads back, against (rows + cols) elements
/// read per row, plus one pipeline step (depth rows) to start it. The
/// host's partition of the splits among groups of blocks
/// (ops::partitionRouteTable) and the cost model weigh splits by it; 0 for
/// other kernels.
int64_t segmentSplitCostRows(const OpDesc &op, const Schedule &s);

/// neighbor_group gnn.spmm with attention: the workspace bytes per graph
/// row, the row's largest logit and its sum of exp(logit - largest) (two
/// f32, in that order).
constexpr int64_t kAttentionWorkspaceBytesPerRow = 8;
/// Threads per group in the two kernels that make those statistics (a
/// group's edges are few: each thread takes several, keeping their loads
/// in flight, rather than one each), and their threads per block.
constexpr int32_t kAttentionStatisticsLanes = 4;
constexpr int32_t kAttentionStatisticsThreads = 256;

/// The role of the op's tensor input `operand` (in the order of the op's
/// getInputs()): ParamRole::Input, except gnn.segment_matmul's weights
/// (SegmentWeights, operand 1) and the segment offsets of the segmented
/// matmul ops (SegmentOffsets, 2), and gnn.spmm's linear weights
/// (LinearWeights, 1) and bias (LinearBias, 2), or with attention its
/// scores of the rows (AttentionRows, 1) and of the columns
/// (AttentionColumns, 2).
ParamRole inputRole(const OpDesc &op, int32_t operand);

/// The strategies implemented for `kind`, in the order messages list them.
std::vector<Strategy> implementedStrategies(OpKind kind);

/// The schedule of `op` when it gives none (before completeSchedule): every
/// field open, the op's default strategy (vertex_parallel; sliced for
/// gnn.spmm over a group of snapshots; batched for gnn.readout and
/// gnn.readout_grad; tile_routed for the segmented matmuls).
Schedule defaultSchedule(const OpDesc &op);

/// The sizes of `op` against the plans' limits (gnnc/Plan/Limits.h): a
/// feature width (or number of heads) from 1 to kMaxFeatureWidth, a row
/// stride (0: the width) from the width to kMaxRowStride; and the options
/// no kernel combines (gnn.spmm's attention with edge values, mean, degree
/// scaling, a self term, a linear epilogue or snapshots). checkSchedule,
/// completeSchedule and planKernel check them first, before any arithmetic
/// on them; the op verifiers check them for every op, scheduled or not; the
/// manifest reader for every op it reads.
Status checkOpSizes(const OpDesc &op);

/// The rules a schedule (complete or not: 0 fields are not checked) must
/// follow for `op`, beyond checkOpSizes and checkScheduleFields: an implemented
/// strategy, options the op supports, vector widths the features allow. The
/// error says which rule failed.
Status checkSchedule(const OpDesc &op, const Schedule &schedule);

/// Whether every field the strategy of `s` uses has a value: vector width,
/// dim_workers and threads per block; edge_parallel also its items per
/// worker and a write mode other than direct, neighbor_group its group size
/// and write = atomic.
bool isCompleteSchedule(const Schedule &s);

/// `schedule` with every field it leaves open chosen: the widest vector
/// load that divides the row stride, enough lanes for one trip over a row
/// (a warp for the edge softmax ops), 256 threads per block, and the
/// strategy's own defaults. Fails for a strategy with no planner, and when
/// the schedule it completes breaks checkScheduleFields (blocks_per_sm = 16
/// with the default 256 threads).
Expected<Schedule> completeSchedule(const OpDesc &op, Schedule schedule);

/// The plan of `op` under the complete schedule `schedule`, or why there is
/// none: checkSchedule's rules, then the plan's own limits (accumulators
/// per thread, shared memory per block and per SM).
Expected<KernelPlan> planKernel(const OpDesc &op, const Schedule &schedule);

/// completeSchedule, then planKernel.
Expected<KernelPlan> planWithDefaults(const OpDesc &op,
                                      const Schedule &schedule);

} // namespace gnnc

#endif // GNNC_PLAN_PLAN_H
