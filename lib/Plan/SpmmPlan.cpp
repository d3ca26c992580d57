//===- SpmmPlan.cpp - Kernel plans of gnn.spmm ----------------------------===//
//
// vertex_parallel (Planners.cpp's planVertexParallel serves every op), and
// gnn.spmm's own strategies: edge_parallel (workers take equal stretches of
// the merge path; rows split between workers are finished by a fix-up
// kernel from a workspace, in shared memory, or atomically after an init
// kernel) and neighbor_group (GNNAdvisor: a worker per group of neighbours,
// partial sums merged in shared memory, rows spanning blocks added
// atomically after an init kernel).
//
//===----------------------------------------------------------------------===//
#include "Planners.h"

#include "gnnc/Plan/Checked.h"

#include <algorithm>

using namespace gnnc;
using namespace gnnc::plan;
using namespace gnnc::limits;

namespace {

/// The kernel that sets every row of the result to its self term (or 0)
/// before the pieces of split rows are added to it: a block per
/// `rowsPerBlock` rows.
CompanionPlan initKernel(const Schedule &s, const ThreadMapping &m) {
  LaunchPlan launch;
  launch.threads = s.threadsPerBlock;
  launch.grid = {ParamRole::NumRows};
  launch.itemsPerBlock = m.rowsPerBlock;
  return {"_init", launch};
}

/// Parameters gnn.spmm reads beyond its operands whatever the strategy:
/// the column factors of right or both scaling.
std::vector<ParamRole> spmmExtras(const OpDesc &op) {
  if (op.scalesColumns())
    return {ParamRole::ColumnFactors};
  return {};
}

} // namespace

namespace {

/// The rules of a linear epilogue (tensor cores on whole aggregated rows)
/// on what `s` says so far.
Status linearRules(const OpDesc &op, const Schedule &s) {
  const int64_t max = limits::kMaxTensorCoreWidth;
  if (op.linearWidth % 8 != 0 || op.linearWidth > max || op.width > max)
    return Status::error(
        "a linear epilogue runs on tensor cores: the weight's columns (M) "
        "must be a multiple of 8 and K and M at most " +
        std::to_string(max) + ", got K " + std::to_string(op.width) +
        " and M " + std::to_string(op.linearWidth));
  if (op.padded())
    return Status::error("a linear epilogue reads unpadded rows");
  if (op.transposeWeights && op.width % 8 != 0)
    return Status::error("transposed weights are read in 16-byte pieces of "
                         "their rows: K must be a multiple of 8, got " +
                         std::to_string(op.width));
  if (s.tileRows == 0)
    return Status::ok();
  if (s.tileRows != 16 && s.tileRows != 32 && s.tileRows != 64 &&
      s.tileRows != 128)
    return Status::error("a linear epilogue takes tile_rows 16, 32, 64 or 128 "
                         "(a block's rows of 16-row fragments), got " +
                         std::to_string(s.tileRows));
  const BatchedLinearTile tile = batchedLinearTile(op, s);
  if (s.threadsPerBlock != 0 && s.threadsPerBlock != tile.threads)
    return Status::error(
        "the linear epilogue's tile of " + std::to_string(tile.rows) + " x " +
        std::to_string(tile.streamWeights ? op.linearWidth : tile.cols) +
        (tile.streamWeights
             ? " runs " + std::to_string(tile.threads) +
                   " threads (warps streaming the weights)"
             : " runs a multiple of " +
                   std::to_string(defaults::kLinearStagedThreads) +
                   " threads up to " +
                   std::to_string(defaults::kLinearStagedMaxThreads) + " (" +
                   std::to_string(tile.warpsM) + " x " +
                   std::to_string(tile.warpsN) + " warps multiply)") +
        ", not threads_per_block " + std::to_string(s.threadsPerBlock) +
        "; leave threads_per_block out");
  return Status::ok();
}

} // namespace

Status gnnc::plan::spmmRules(const OpDesc &op, const Schedule &s) {
  bool f16Accumulate = s.accumulate == Accumulate::F16;
  bool max = op.reduce == Reduce::Max;
  if (f16Accumulate && op.type != ElementType::F16)
    return Status::error(std::string("accumulate = f16 needs f16 features; '") +
                         elementTypeName(op.type) +
                         "' features accumulate in f32");
  if ((f16Accumulate || s.discBatch != 0) && max)
    return Status::error("accumulate = f16 and disc_batch apply to reduce = "
                         "sum or mean; max takes the largest term and "
                         "accumulates in f32");
  if (op.attention && s.strategy != Strategy::VertexParallel &&
      s.strategy != Strategy::NeighborGroup)
    return Status::error(
        std::string("attention takes the softmax over whole rows: it runs "
                    "with strategy = vertex_parallel (a row's threads find "
                    "its maximum and sum first) or neighbor_group (two first "
                    "kernels leave them in a workspace), not ") +
        strategyName(s.strategy));
  if (s.strategy == Strategy::Batched && !op.batchedGraph)
    return Status::error("strategy = batched runs over a batch of graphs; "
                         "the graph must be a !gnn.graph<batched_csr, ...>");
  const bool sliced = s.strategy == Strategy::Sliced;
  if (sliced != (op.snapshots > 0))
    return Status::error(
        sliced ? "strategy = sliced aggregates a group of snapshots at once; "
                 "the graph must be a !gnn.graph<snapshot_csr, ...>"
               : std::string("a group of snapshots (snapshot_csr) is "
                             "aggregated by strategy = sliced, not ") +
                     strategyName(s.strategy));
  if (sliced) {
    if (op.edgeValues || max || op.selfWeight || op.padded())
      return Status::error(
          "a group of snapshots is aggregated with reduce = sum or mean and "
          "degree scaling; edge values, reduce = max, self_weight and padded "
          "rows are not implemented for it");
    if (f16Accumulate || s.discBatch != 0)
      return Status::error("sliced accumulates in f32; accumulate = f16 and "
                           "disc_batch are not implemented for it");
    if (s.vectorWidth != 0 && op.snapshotWidth() % s.vectorWidth != 0)
      return Status::error("vector_width " + std::to_string(s.vectorWidth) +
                           " does not divide the features of one snapshot (" +
                           std::to_string(op.snapshotWidth()) +
                           "); a vector load must not straddle two snapshots");
  }
  if (op.linear() && s.strategy != Strategy::Batched)
    return Status::error(
        std::string("a linear epilogue (weight) runs only with strategy = "
                    "batched, not ") +
        strategyName(s.strategy));
  if (op.linear())
    GNNC_RETURN_IF_ERROR(linearRules(op, s));
  if (s.strategy == Strategy::NeighborGroup && max)
    return Status::error("neighbor_group adds the rows that span blocks with "
                         "atomicAdd, which cannot take a maximum; use "
                         "vertex_parallel or edge_parallel with reduce = max");
  if (s.write == WriteMode::Atomic && max)
    return Status::error("write = atomic adds the pieces of split rows with "
                         "atomicAdd, which cannot take a maximum; use write = "
                         "staged with reduce = max");
  return Status::ok();
}

Expected<KernelPlan> gnnc::plan::planVertexParallel(const OpDesc &op,
                                                    const Schedule &s) {
  Expected<KernelPlan> plan =
      rowPlan(op, s, /*wideBatch=*/op.kind == OpKind::Spmm);
  if (plan && op.kind == OpKind::Spmm)
    plan->extraParams = spmmExtras(op);
  return plan;
}

Expected<KernelPlan> gnnc::plan::planSpmmEdgeParallel(const OpDesc &op,
                                                      const Schedule &s) {
  Expected<KernelPlan> edge = edgeParallelPlan(op, s, /*rowEnds=*/true);
  if (!edge)
    return edge;
  KernelPlan &plan = *edge;
  const ThreadMapping &m = plan.mapping;
  const int64_t workers = m.rowsPerBlock;
  bool atomic = s.write == WriteMode::Atomic;
  plan.extraParams = spmmExtras(op);
  plan.extraParams.push_back(ParamRole::NumEdges);
  if (!atomic)
    plan.extraParams.push_back(ParamRole::Workspace);
  // write = shared: after the row ends, two f32 rows (of the row stride) per
  // worker for the pieces of rows split inside the block.
  if (s.write == WriteMode::Shared) {
    int64_t pieces = workers * 2 * op.stride() * 4;
    int64_t shared = m.rowEndsBytes + pieces;
    if (shared > kMaxSharedBytes)
      return Status::error(
          "write = shared keeps two f32 rows per worker in shared memory "
          "besides the row ends: " +
          std::to_string(workers) + " workers x 2 x " +
          std::to_string(op.stride()) + " x 4 bytes = " +
          std::to_string(pieces) + " bytes, " + std::to_string(shared) +
          " in all, over " + std::to_string(kMaxSharedBytes) +
          "; lower edges_per_warp or threads_per_block, or use write = "
          "staged");
    plan.launch.sharedBytes = shared;
  }
  if (atomic) {
    // The pieces of split rows are added to the result, which a first
    // kernel sets to the self term (or 0).
    plan.preludes.push_back(initKernel(s, m));
    plan.atomicPieceEdges = m.itemsPerWorker;
    return edge;
  }
  // Split rows are finished by a second kernel with the same grid; each
  // worker has two f32 rows of workspace and the index of the row it leaves
  // to that kernel.
  plan.followUps.push_back({"_fixup", plan.launch});
  plan.followUps.back().launch.blocksPerSm = 0;
  WorkspacePlan workspace;
  workspace.count = plan.launch.grid;
  workspace.itemsPerUnit = m.itemsPerWorker;
  workspace.bytesPerUnit = op.stride() * 2 * 4 + 8;
  workspace.minUnits = 1;
  plan.workspace = workspace;
  return edge;
}

Expected<KernelPlan> gnnc::plan::planSpmmNeighbourGroups(const OpDesc &op,
                                                         const Schedule &s) {
  Expected<KernelPlan> groups = rowPlan(op, s, /*wideBatch=*/true);
  if (!groups)
    return groups;
  KernelPlan &plan = *groups;
  ThreadMapping &m = plan.mapping;
  // The host splits each row into groups of `group_size` neighbours. One
  // block takes `rowsPerBlock` consecutive groups and merges their partial
  // sums in shared memory, one f32 row (of the row stride: the last chunk
  // may run into the padding) per group.
  plan.extraParams = spmmExtras(op);
  // A group finds the first group of its row (the leader that merges the
  // block's pieces, whether the row lies within the block) in group_ptr.
  plan.extraParams.push_back(ParamRole::GroupOffsets);
  planGroupWorkers(plan, s);
  int64_t shared = int64_t(m.rowsPerBlock) * op.stride() * 4;
  GNNC_RETURN_IF_ERROR(checkSharedBytes(
      shared,
      "neighbor_group merges the partial sums of a block's groups in shared "
      "memory: " +
          std::to_string(m.rowsPerBlock) + " groups x " +
          std::to_string(op.stride()) + " features x 4 bytes",
      "raise dim_workers or lower threads_per_block"));
  plan.launch.sharedBytes = shared;
  // The first kernel: a thread per row asks whether the main kernel stores
  // it; its warp sets the rest.
  CompanionPlan init = initKernel(s, m);
  init.launch.itemsPerBlock = s.threadsPerBlock;
  plan.preludes.push_back(init);
  if (op.attention) {
    // The rows' softmax statistics, two f32 per row in the workspace (the
    // largest logit, then the sum of exp(logit - largest)), which the first
    // kernel initializes and two more kernels over the same groups make:
    // the maxima (an atomic maximum per group), then the sums (an atomic
    // addition per group). The main kernel reads them for each group's row.
    plan.extraParams.push_back(ParamRole::Workspace);
    WorkspacePlan workspace;
    workspace.count = {ParamRole::NumRows};
    workspace.bytesPerUnit = kAttentionWorkspaceBytesPerRow;
    workspace.minUnits = 1;
    plan.workspace = workspace;
    LaunchPlan statistics;
    statistics.threads = kAttentionStatisticsThreads;
    statistics.grid = {ParamRole::NumGroups};
    statistics.itemsPerBlock =
        kAttentionStatisticsThreads / kAttentionStatisticsLanes;
    plan.preludes.push_back({"_att_max", statistics});
    plan.preludes.push_back({"_att_sum", statistics});
  }
  // A row that spans blocks gets one piece per block.
  plan.atomicPieceEdges =
      int64_t(s.groupSize) * s.threadsPerBlock / s.dimWorkers;
  return groups;
}

Expected<KernelPlan> gnnc::plan::planSpmmSliced(const OpDesc &op,
                                                const Schedule &s) {
  // PiPAD: a worker of `lanes` threads per work item of the host
  // (ops::snapshotSlices): a slice of at most slice_size of a row's shared
  // edges (every row has at least one) over the node's whole row of S x F
  // features, all snapshots at once, whose row's first slice also adds the
  // first slice_size exclusive edges of each snapshot; or a slice of one
  // snapshot's remaining exclusive edges. A row of one item is stored; the
  // items of a row with several are added atomically to the zeros a first
  // kernel left in it (a worker per row with several items, the first
  // items of the host's list; no launch when there are none).
  Expected<KernelPlan> sliced = rowPlan(op, s, /*wideBatch=*/true);
  if (!sliced)
    return sliced;
  KernelPlan &plan = *sliced;
  ThreadMapping &m = plan.mapping;
  m.groupSize = s.sliceSize;
  plan.extraParams = spmmExtras(op);
  for (ParamRole role :
       {ParamRole::ExclusiveOffsets, ParamRole::ExclusiveIndices,
        ParamRole::SliceOffsets, ParamRole::SliceRows, ParamRole::NumSlices,
        ParamRole::NumSplitRows})
    plan.extraParams.push_back(role);
  plan.launch.grid = {ParamRole::NumSlices};
  CompanionPlan zero = initKernel(s, m);
  zero.launch.grid = {ParamRole::NumSplitRows};
  plan.preludes.push_back(zero);
  // A slice of shared edges adds one piece of at most slice_size edges; a
  // slice of one snapshot's exclusive edges, S pieces (one per lane group)
  // of at most slice_size / S.
  plan.atomicPieceEdges = std::max<int64_t>(1, s.sliceSize / op.snapshots);
  return sliced;
}

int64_t gnnc::plan::batchedColumnChunks(const OpDesc &op, int64_t vw,
                                        int64_t tileRows) {
  const int64_t chunks = ceilDiv(op.width, vw);
  // Unstaged rows are reduced whole from global memory.
  if (!batchedStagesFeatures(op))
    return chunks;
  const int64_t chunkBytes =
      tileRows * vw * static_cast<int64_t>(elementSize(op.type));
  const int64_t fit = std::max<int64_t>(
      1, defaults::kBatchedTileBytes / std::max<int64_t>(chunkBytes, 1));
  if (fit >= chunks)
    return chunks;
  // The fewest column blocks that fit, of (nearly) equal size.
  return ceilDiv(chunks, ceilDiv(chunks, fit));
}

int64_t gnnc::batchedTileEdges(int64_t tileRows) {
  return defaults::kBatchedEdgesPerTileRow * tileRows;
}

namespace {

/// Shared-memory offsets: tile sizes, far from overflow.
int64_t align16(int64_t v) { return ceilDiv(v, 16) * 16; }

/// The staged indices of a block of `rows` rows, from byte `at` on.
BatchedIndices placeIndices(const OpDesc &op, int64_t rows, int64_t at) {
  BatchedIndices i;
  i.edges = batchedTileEdges(rows);
  i.offsetsAt = align16(at);
  i.columnsAt = align16(i.offsetsAt + (rows + 1) * 8);
  i.end = align16(i.columnsAt + i.edges * (op.indices64 ? 8 : 4));
  return i;
}

} // namespace

BatchedTile gnnc::batchedTile(const OpDesc &op, const Schedule &s,
                              int64_t columnChunks) {
  BatchedTile t;
  t.rows = s.tileRows;
  t.featureBytes = t.rows * columnChunks * s.vectorWidth *
                   static_cast<int64_t>(elementSize(op.type));
  t.indices = placeIndices(op, t.rows, t.featureBytes);
  t.bytes = t.indices.end;
  return t;
}

BatchedIndices gnnc::batchedIndices(const OpDesc &op, const Schedule &s,
                                    int64_t columnChunks) {
  return op.linear() ? batchedLinearTile(op, s).indices
                     : batchedTile(op, s, columnChunks).indices;
}

BatchedLinearTile gnnc::batchedLinearTile(const OpDesc &op, const Schedule &s) {
  const int64_t size = static_cast<int64_t>(elementSize(op.type));
  BatchedLinearTile t;
  t.rows = s.tileRows;
  // After H: the block's row offsets and column indices, staged together
  // so that a row's chain is one gather, not three dependent loads.
  auto placeCsr = [&] {
    t.indices = placeIndices(op, t.rows, t.hAt + t.rows * t.hStride * size);
    t.bytes = t.indices.end;
  };
  t.depth = kMmaDepth;
  t.kPadded = ceilDiv(op.width, t.depth) * t.depth;
  t.hStride = t.kPadded + reductionRowPad(op.type);
  // A pass's weights (K x cols) are staged whole, the first pass's while
  // the block aggregates: as many columns (8 to 64) as keep them within
  // defaults::kLinearWeightBytes, so that several blocks share an SM.
  auto shape = [&](int64_t cols) {
    t.cols = cols;
    // W's staged rows run along the result, or (transposed) along the
    // reduction.
    t.bStride = op.transposeWeights ? t.kPadded + reductionRowPad(op.type)
                                    : t.cols + kResultRowPad;
    t.stageBytes =
        (op.transposeWeights ? t.cols : t.kPadded) * t.bStride * size;
  };
  int64_t cols = 8;
  while (cols < op.linearWidth && cols < 64)
    cols *= 2;
  shape(cols);
  while (t.stageBytes > defaults::kLinearWeightBytes && t.cols > 8)
    shape(t.cols / 2);
  if (ceilDiv(op.linearWidth, t.cols) > defaults::kLinearMaxStagedPasses ||
      t.stageBytes > defaults::kLinearWeightBytes) {
    // Too many passes: the warps stream W through rings of their own.
    // An item spans up to 64 rows (4 fragments) and 32 columns, narrower
    // while the block's warps would outnumber the items.
    t.streamWeights = true;
    const int32_t warps = defaults::kLinearStreamWarps;
    t.fragsM = static_cast<int32_t>(std::min<int64_t>(t.rows / 16, 4));
    const int64_t rowGroups = t.rows / (16 * t.fragsM);
    t.fragsN = 4;
    while (t.fragsN > 1 &&
           rowGroups * ceilDiv(op.linearWidth, 8 * t.fragsN) < warps)
      t.fragsN /= 2;
    t.warpsM = t.warpsN = 0;
    t.depth = mmaInstructionDepth(op.type);
    t.kPadded = ceilDiv(op.width, t.depth) * t.depth;
    t.hStride = t.kPadded + reductionRowPad(op.type);
    t.cols = 8 * t.fragsN;
    // A warp's ring: stages of one mma step of its item's columns, rows
    // along the result (or, transposed, along the reduction) padded as the
    // staged passes' are.
    t.stages = defaults::kLinearStreamStages;
    t.bStride = op.transposeWeights ? t.depth + reductionRowPad(op.type)
                                    : t.cols + kResultRowPad;
    t.stageBytes = (op.transposeWeights ? t.cols : t.depth) * t.bStride * size;
    t.wAt = 0;
    t.hAt = align16(warps * t.stages * t.stageBytes);
    placeCsr();
    t.threads = 32 * warps;
    return t;
  }
  t.wAt = 0;
  t.hAt = align16(t.stageBytes);
  placeCsr();
  // Four warps: a block's registers (about 96 a thread, for the gathers)
  // then leave room for several blocks an SM, whose gathers overlap. They
  // split the tile two by two where it is 32 columns or more and 32 rows
  // or more; each holds fragsM x fragsN accumulators (at most 4 x 4).
  t.warpsN = static_cast<int32_t>(std::clamp<int64_t>(t.cols / 32, 1, 2));
  t.warpsM =
      static_cast<int32_t>(std::clamp<int64_t>(t.rows / 16, 1, 4 / t.warpsN));
  t.fragsM = static_cast<int32_t>(t.rows / t.warpsM / 16);
  t.fragsN = static_cast<int32_t>(t.cols / t.warpsN / 8);
  // More warps gather more rows at once; the four multiply.
  t.threads = defaults::kLinearStagedThreads;
  if (s.threadsPerBlock > t.threads &&
      s.threadsPerBlock <= defaults::kLinearStagedMaxThreads &&
      s.threadsPerBlock % defaults::kLinearStagedThreads == 0)
    t.threads = s.threadsPerBlock;
  return t;
}

Expected<KernelPlan> gnnc::plan::planSpmmBatched(const OpDesc &op,
                                                 const Schedule &s) {
  // The host cuts the batch into blocks (graph::batchBlocks): segments of
  // consecutive whole graphs of at most tile_rows nodes and tile edges
  // (and graphs_per_block graphs), and pieces of tile_rows rows of a graph
  // too large for one. A block of a segment stages its feature rows (one
  // column block at a time), row offsets and column indices in shared
  // memory, and its sub-warps of `lanes` threads reduce each row from
  // there; a block of a piece stages its offsets and column indices when
  // they fit the tile and gathers its neighbours' rows from global memory.
  if (s.tileRows == 0)
    return Status::error("the schedule " + s.str() +
                         " leaves tile_rows open; complete it first (the "
                         "gnn-default-schedule pass)");
  const int64_t columnChunks =
      batchedColumnChunks(op, s.vectorWidth, s.tileRows);
  // Rows of small graphs have few neighbours (kBatchedEdgeBatch).
  Schedule mapped = s;
  if (mapped.edgeBatch == 0)
    mapped.edgeBatch = defaults::kBatchedEdgeBatch;
  Expected<ThreadMapping> mapping =
      featureMapping(op, mapped, /*wideBatch=*/true, columnChunks);
  if (!mapping)
    return mapping.status();
  KernelPlan plan;
  plan.mapping = *mapping;
  const BatchedTile tile = batchedTile(op, s, columnChunks);
  int64_t sharedBytes = tile.bytes;
  if (op.linear()) {
    // Rows are reduced from global memory: no feature tile.
    const BatchedLinearTile linear = batchedLinearTile(op, s);
    GNNC_RETURN_IF_ERROR(checkSharedBytes(
        linear.bytes,
        "a linear epilogue keeps the aggregated rows (" +
            std::to_string(linear.rows) + " x " +
            std::to_string(linear.hStride) + " elements), " +
            std::to_string(linear.stageBytes) + " bytes of weights (" +
            std::to_string(linear.cols) + " columns) and the tile's " +
            std::to_string(linear.indices.edges) +
            " column indices in shared memory",
        "lower tile_rows"));
    sharedBytes = linear.bytes;
  }
  if (batchedStagesFeatures(op))
    GNNC_RETURN_IF_ERROR(checkSharedBytes(
        tile.bytes,
        "batched stages tile_rows rows of a column block, their offsets and " +
            std::to_string(tile.indices.edges) +
            " column indices in shared memory: " + std::to_string(s.tileRows) +
            " rows x " + std::to_string(columnChunks * s.vectorWidth) +
            " features x " + std::to_string(elementSize(op.type)) +
            " bytes and the rest",
        "lower tile_rows"));
  plan.extraParams = spmmExtras(op);
  plan.extraParams.push_back(ParamRole::BatchBlocks);
  plan.extraParams.push_back(ParamRole::NumBatchBlocks);
  LaunchPlan &launch = plan.launch;
  launch.threads = s.threadsPerBlock;
  launch.grid = {ParamRole::NumBatchBlocks};
  launch.itemsPerBlock = 1;
  launch.minBlocks = 1;
  launch.sharedBytes = sharedBytes;
  launch.blocksPerSm = s.blocksPerSm;
  return plan;
}
