//===- Limits.h - Limits and defaults of gnnc's kernels ---------*- C++ -*-===//
//
// Every limit and default of the generated kernels, once. The kernel plans
// (Plan.h) enforce them; the verifier, the lowering, the cost models, the
// tuner and the benchmark learn them from the plans.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_PLAN_LIMITS_H
#define GNNC_PLAN_LIMITS_H

#include <cstdint>

namespace gnnc::limits {

/// Most features per row (gnn.spmm, gnn.sddmm), or heads (the edge softmax
/// ops), and the largest row stride (`#gnn.rows<stride = ...>`) a kernel
/// plan accepts. Sizes beyond them are refused first (checkOpSizes in
/// Plan.h), before any arithmetic on them, so that every product a plan,
/// a cost model or the CUDA printer forms from them fits in 64 bits (see
/// the static_asserts below). Far more than registers hold: with 32 lanes
/// of 8-element vectors, kMaxAccumulatorsPerThread allows 4096 features.
constexpr int64_t kMaxFeatureWidth = int64_t(1) << 20;
constexpr int64_t kMaxRowStride = int64_t(1) << 20;

/// Most accumulators (floats) one thread keeps in registers.
constexpr int64_t kMaxAccumulatorsPerThread = 128;
/// Most neighbours whose feature loads a thread keeps in flight, and most
/// registers (floats) those loads may occupy.
constexpr int64_t kMaxEdgeBatch = 8;
constexpr int64_t kMaxPrefetchRegisters = 64;
/// Most heads gnn.edge_softmax keeps (a running maximum and sum each) per
/// thread.
constexpr int64_t kMaxSoftmaxHeads = 64;
/// Most bytes one vector load moves.
constexpr int64_t kMaxVectorBytes = 16;
/// Most dynamic shared memory per block a kernel may ask for.
constexpr int64_t kMaxSharedBytes = 96 * 1024;
/// What one SM holds on sm_80 and sm_90 (sm_90 has 228 KiB of shared
/// memory per SM, sm_80 164 KiB; 1 KiB of it per block is reserved).
constexpr int64_t kMaxThreadsPerSm = 2048;
/// 32-bit registers of one SM (sm_80 and sm_90).
constexpr int64_t kRegistersPerSm = 65536;
constexpr int64_t kMaxSharedBytesPerSm = 160 * 1024;
/// The same two for kernels only sm_90 runs (math = wgmma, compiled for
/// sm_90a): a block may opt in to 227 KiB, and an SM holds 228 KiB less 1
/// KiB a block (two blocks of 113 KiB).
constexpr int64_t kMaxSharedBytesSm90 = 227 * 1024;
constexpr int64_t kMaxSharedBytesPerSmSm90 = 226 * 1024;
/// Threads per block: a multiple of the warp, at most 1024.
constexpr int32_t kWarpSize = 32;
constexpr int32_t kMaxThreadsPerBlock = 1024;
/// Most merge-path items per edge_parallel worker (`edges_per_warp`), and
/// the fewest, and most neighbours per group (`group_size`).
constexpr int32_t kMinEdgesPerWorker = 8;
constexpr int32_t kMaxEdgesPerWorker = 1 << 20;
/// Most blocks per SM a schedule may ask for (`blocks_per_sm`).
constexpr int32_t kMaxBlocksPerSm = 32;
/// Most neighbours one batch of a discretized reduction may hold.
constexpr int32_t kMaxDiscBatch = 1024;
/// batched: most nodes a block stages (`tile_rows`) and most graphs a
/// block takes (`graphs_per_block`).
constexpr int32_t kMaxTileRows = 1 << 16;
constexpr int32_t kMaxGraphsPerBlock = 1024;
/// tile_routed with tensor cores: the buffers of the cp.async pipeline
/// (`stages`), and the largest K and M (multiples of 8) its tiles take.
constexpr int32_t kMinPipelineStages = 2;
constexpr int32_t kMaxPipelineStages = 4;
constexpr int64_t kMaxTensorCoreWidth = 512;
/// Snapshots of one snapshot group (`!gnn.graph<snapshot_csr, ...>`): the
/// exclusive row offsets of a group take snapshots x (rows + 1) words.
constexpr int64_t kMaxSnapshots = 64;
/// sliced: the largest slice_size (non-zeros per slice of the overlap; a
/// slice's word holds its edge count in 13 bits, gnnc/Plan/Abi.h).
constexpr int32_t kMaxSliceSize = 4096;

// The largest products the plans form stay far below 2^63: shared memory of
// a block (threads x stride x 8 bytes), a worker's workspace (stride x 8
// bytes), a row's element offset in the CUDA code (a 32-bit column index
// times the stride) and the row ends of a block (threads x edges x 4).
static_assert(kMaxRowStride >= kMaxFeatureWidth);
static_assert(kMaxRowStride * kMaxThreadsPerBlock * 8 < (int64_t(1) << 40));
static_assert((int64_t(1) << 32) * kMaxRowStride < (int64_t(1) << 62));
static_assert(int64_t(kMaxEdgesPerWorker) * kMaxThreadsPerBlock * 4 <
              (int64_t(1) << 40));

} // namespace gnnc::limits

namespace gnnc::defaults {

/// Threads per block of a schedule that leaves it open.
constexpr int32_t kThreadsPerBlock = 256;
/// Merge-path items per edge_parallel worker.
constexpr int32_t kEdgesPerWorker = 64;
/// Neighbours per group of a neighbor_group schedule (GNNAdvisor's).
constexpr int32_t kGroupSize = 32;
/// Threads of a row for the ops whose threads share a row's edges rather
/// than its features (the edge softmax ops): a warp.
constexpr int32_t kEdgeWorkers = 32;
/// The group sizes the tuner tries for neighbor_group, in its order of
/// preference (graph::kProfileGroupSizes counts the groups of each).
constexpr int32_t kTunedGroupSizes[] = {32, 16, 64, 8, 4};
/// gnn.sddmm also tries groups of one edge (each edge is its own output,
/// so a group of one needs no range: the shortest chain of loads, for
/// small graphs).
constexpr int32_t kTunedSddmmGroupSizes[] = {1};
/// The merge-path items per worker the tuner tries for edge_parallel.
constexpr int32_t kTunedEdgesPerWorker[] = {512, 256, 128, 64};
/// The edge batches the tuner also tries below a schedule's default: for
/// every gnn.spmm with attention, whose weights cost registers per batch
/// slot (on an H100 batches of 4 and 2 beat 8 by 8-27% on graphs with 1M
/// edges or more and on tu_PROTEINS, and lost 18-26% on cora and
/// citeseer), and for gnn.spmm's neighbour groups (on an H200 a batch of 4
/// took f32 groups of 32 at width 32 from 62 registers to 40 and made them
/// 7-12% faster on the graphs with 1M edges or more).
constexpr int32_t kTunedEdgeBatches[] = {4, 2};
/// batched: the shared memory a block's staged tile may take by default
/// (a column block is as wide as fits), the nodes a tile holds and the
/// threads of a block. 32 KiB keeps several blocks on an SM (an H100 SM
/// holds 228 KiB), so that staging one graph overlaps the others' gathers.
constexpr int64_t kBatchedTileBytes = 32 * 1024;
/// batched with a linear epilogue: the most bytes of weights a block stages
/// for one pass (their columns are chosen to fit), so that with the tile
/// of aggregated rows (kBatchedTileBytes or less) several blocks share an
/// SM.
constexpr int64_t kLinearWeightBytes = 24 * 1024;
/// batched with a linear epilogue: the most passes of staged weights (each
/// at most kLinearWeightBytes) a block makes; wider weights stream through
/// each warp's ring instead. On an H200, two staged passes beat streaming
/// (f16, K = M = 128) and four lost to it (f32, K = M = 128).
constexpr int64_t kLinearMaxStagedPasses = 2;
/// batched with a linear epilogue whose weights stream: the warps of a
/// block, each taking items of the result tile in turn.
constexpr int32_t kLinearStreamWarps = 8;
/// batched with a linear epilogue whose weights are staged: the block's
/// threads by default (four warps multiply), and the most it may run
/// (threads_per_block a multiple of the default: the warps beyond the four
/// aggregate rows and wait while the four multiply).
constexpr int32_t kLinearStagedThreads = 128;
constexpr int32_t kLinearStagedMaxThreads = 512;
/// batched with a linear epilogue: the vector loads of a row each of its
/// lanes makes by default (dim_workers the row's chunks over this). Its
/// blocks hold H, W and 80-90 registers a thread, so 4-5 share an SM and
/// the gathers wait on latency; two loads a lane keep twice as many in
/// flight with the same warps (H200: 1.1-1.2x over one at widths 64-128).
constexpr int64_t kLinearTripsPerLane = 2;
/// The buffers of each such warp's ring of weights: the warp multiplies
/// one mma step while the next kLinearStreamStages - 1 are on their way.
constexpr int32_t kLinearStreamStages = 4;
constexpr int32_t kBatchedTileRows = 64;
constexpr int32_t kBatchedThreadsPerBlock = 128;
/// batched: the column indices a tile holds per staged row (a segment of
/// graphs with more edges is not staged whole).
constexpr int64_t kBatchedEdgesPerTileRow = 8;
/// batched: the neighbours a row's threads take at once when the schedule
/// leaves edge_batch open. A staged tile's loads wait on shared memory
/// only, and rows of small graphs have few neighbours; the registers'
/// choice (8 at most) doubled the registers a thread holds. On an H200 (30
/// batches of TU PROTEINS and molecules, f32 and f16, widths 16-256) 4 was
/// the fastest or within 3% of it, and 1.10x faster than the registers'
/// choice (geomean). A linear epilogue's kernel (80 -> 54-71 registers)
/// gained 1.05x over 5 layer cases (0.96-1.15x).
constexpr int32_t kBatchedEdgeBatch = 4;
/// tile_routed (gnn.segment_matmul): result rows per tile of the routing
/// table.
constexpr int32_t kSegmentTileRows = 64;
/// tile_routed gnn.segment_matmul_weight_grad: input rows per split (each
/// split leaves one K x M partial in the workspace).
constexpr int32_t kSegmentSplitRows = 256;
/// tile_routed gnn.segment_matmul_weight_grad on tensor cores: the host
/// shares the splits among the groups of blocks by their work
/// (ops::partitionRouteTable) only where that cuts the largest group's
/// work by at least 1 / kSegmentPartitionMinGain against runs of equal
/// split counts; for less, the extra splits and partials cost about as
/// much (widths 32 and 64 ran 2-4% slower partitioned on an H200).
constexpr int64_t kSegmentPartitionMinGain = 10;
/// ... and a cut there leaves no piece of a split shorter than its cost
/// (segmentSplitCostRows), nor than kSegmentMinCutRows rows.
constexpr int64_t kSegmentMinCutRows = 16;
/// tile_routed gnn.segment_matmul_weight_grad's reduction: the outputs a
/// block adds at a time, one 32-byte sector of f32 partials; its threads
/// take the splits in kThreadsPerBlock / kSegmentReduceColumns lanes.
constexpr int32_t kSegmentReduceColumns = 8;
/// ... and each thread's loads in flight, over every kSegmentReduceLoads
/// of its splits at once.
constexpr int32_t kSegmentReduceLoads = 4;
/// tile_routed with math = tensor_core: the cp.async pipeline's buffers.
constexpr int32_t kPipelineStages = 2;
/// tile_routed with math = tensor_core: the fewest registers per thread
/// the default blocks_per_sm allows (a warp's 2 x 8 fragments hold 64 f32
/// accumulators; uncapped, 16-bit tiles took 145 and left a 256-thread
/// block alone on an SM). Taller warp tiles get more
/// (segmentMmaRegisters in Plan.h).
constexpr int64_t kSegmentMmaRegisters = 128;
/// What a tensor-core thread needs beyond its accumulators and fragments
/// (addresses, loop state, the pipeline's bookkeeping): 2 x 8 fragments
/// then come to kSegmentMmaRegisters.
constexpr int64_t kMmaAddressRegisters = 40;
/// sliced: non-zeros per slice of a group of S snapshots: kSliceSizePerSnapshot
/// x S, from kSliceSize to kMaxDefaultSliceSize (32, 64, 128 for S = 2, 4, 8:
/// the fastest of 8-128 on evolving R-MAT 16-20 on an H200, within 2% but for
/// R-MAT 16 at S = 8, 15-19%; bench/NOTES.md).
constexpr int32_t kSliceSize = 32;
constexpr int32_t kSliceSizePerSnapshot = 16;
constexpr int32_t kMaxDefaultSliceSize = 128;

} // namespace gnnc::defaults

#endif // GNNC_PLAN_LIMITS_H
