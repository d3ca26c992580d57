//===- Plan.cpp - Kernel plans: the rules every op shares -----------------===//
#include "Planners.h"

#include "gnnc/Plan/Checked.h"

#include <algorithm>
#include <cmath>

using namespace gnnc;
using namespace gnnc::plan;
using namespace gnnc::limits;

namespace {

/// alignTo for sizes checkOpSizes has bounded: it cannot overflow.
int64_t alignBounded(int64_t v, int64_t a) { return alignTo(v, a).value_or(0); }

std::string quoted(ElementType type) {
  return std::string("'") + elementTypeName(type) + "'";
}

/// The rules on the vector width of `s` for `op`'s rows.
Status checkVectorWidth(const OpDesc &op, const OpFamily &family,
                        const Schedule &s) {
  int64_t vw = s.vectorWidth;
  if (vw == 0)
    return Status::ok();
  int64_t bytes = vw * static_cast<int64_t>(elementSize(op.type));
  if (bytes > kMaxVectorBytes)
    return Status::error("vector_width " + std::to_string(vw) + " of " +
                         quoted(op.type) + " is " + std::to_string(bytes) +
                         " bytes; a GPU loads at most 16 bytes per thread");
  int64_t width = op.width, stride = op.stride();
  // Every row must start on a vector boundary: the row stride (the width
  // without padding) is a multiple of the vector width.
  if (stride != width && stride % vw != 0)
    return Status::error(
        "vector_width " + std::to_string(vw) +
        " does not divide the row stride " + std::to_string(stride) +
        " (feature width " + std::to_string(width) +
        "); padded rows must start on vector boundaries: use a stride that is "
        "a multiple of " +
        std::to_string(vw) + ", e.g. " +
        std::to_string(alignBounded(width, vw)));
  if (stride == width && width % vw != 0) {
    std::string message = "vector_width " + std::to_string(vw) +
                          " does not divide the feature width " +
                          std::to_string(width);
    if (family.paddedRows)
      message +=
          "; declare a padded row stride, e.g. tensor<?x" +
          std::to_string(width) + "x" + elementTypeName(op.type) +
          ", #gnn.rows<stride = " + std::to_string(alignBounded(width, vw)) +
          ">>";
    else
      message += "; use a vector_width that divides it (padded rows are "
                 "implemented for gnn.spmm only)";
    return Status::error(message);
  }
  return Status::ok();
}

/// The options gnn.spmm's attention excludes: the weights are the row's
/// softmax, so they are neither given (edge values) nor rescaled (mean,
/// degree scaling, a self term), and the rows are plain CSR rows.
Status checkAttentionOptions(const OpDesc &op) {
  const bool spmm = op.kind == OpKind::Spmm;
  if (op.attention && !spmm)
    return Status::error(std::string("attention applies to gnn.spmm only, "
                                     "not ") +
                         opKindName(op.kind));
  if (spmm && op.leakyRelu && !op.attention)
    return Status::error("leaky_relu of gnn.spmm applies to its attention "
                         "logits; give attention(...) too");
  if (op.leakyRelu && !std::isfinite(*op.leakyRelu))
    return Status::error("leaky_relu slope must be finite");
  if (!op.attention)
    return Status::ok();
  if (op.edgeValues || op.reduce != Reduce::Sum ||
      op.scale != DegreeScale::None || op.selfWeight || op.linear() ||
      op.snapshots > 0)
    return Status::error(
        "attention weighs each edge by the softmax of its row; it takes "
        "reduce = sum, no edge values, degree scaling, self_weight, linear "
        "epilogue or snapshot group");
  return Status::ok();
}

} // namespace

Status gnnc::checkOpSizes(const OpDesc &op) {
  bool heads =
      op.kind == OpKind::EdgeSoftmax || op.kind == OpKind::EdgeSoftmaxGrad;
  const std::string width = std::to_string(op.width);
  if (op.width < 1)
    return Status::error((heads ? "number of heads " : "feature width ") +
                         width + " is not positive");
  if (op.width > kMaxFeatureWidth)
    return Status::error((heads ? "number of heads " : "feature width ") +
                         width + " is over the limit of the kernel plans, " +
                         std::to_string(kMaxFeatureWidth) +
                         (heads ? " heads" : " features per row"));
  if (isSegmentMatmulKind(op.kind) &&
      (op.inputWidth < 1 || op.inputWidth > kMaxFeatureWidth))
    return Status::error("input width (K) " + std::to_string(op.inputWidth) +
                         " of " + opKindName(op.kind) + " must be from 1 to " +
                         std::to_string(kMaxFeatureWidth));
  if (!isSegmentMatmulKind(op.kind) && op.inputWidth != 0)
    return Status::error(std::string("an input width (K) applies to "
                                     "gnn.segment_matmul only, not ") +
                         opKindName(op.kind));
  if (op.kind != OpKind::SegmentMatmul && op.transposeWeights &&
      !(op.kind == OpKind::Spmm && op.linear()))
    return Status::error(std::string("transposed weights apply to "
                                     "gnn.segment_matmul and gnn.spmm's "
                                     "linear epilogue only, not ") +
                         opKindName(op.kind));
  GNNC_RETURN_IF_ERROR(checkAttentionOptions(op));
  const std::string stride = std::to_string(op.rowStride);
  if (op.rowStride != 0 && op.rowStride < op.width)
    return Status::error("row stride " + stride +
                         " is smaller than the feature width " + width);
  if (op.rowStride > kMaxRowStride)
    return Status::error("row stride " + stride +
                         " is over the limit of the kernel plans, " +
                         std::to_string(kMaxRowStride) + " elements");
  return Status::ok();
}

Status gnnc::checkSchedule(const OpDesc &op, const Schedule &s) {
  GNNC_RETURN_IF_ERROR(checkOpSizes(op));
  GNNC_RETURN_IF_ERROR(checkScheduleFields(s));
  const OpFamily &family = familyOf(op.kind);
  if (family.rules)
    GNNC_RETURN_IF_ERROR(family.rules(op, s));
  const std::string name = opKindName(op.kind);
  if (!findPlanner(op.kind, s.strategy)) {
    std::string implemented;
    for (Strategy strategy : implementedStrategies(op.kind))
      implemented += (implemented.empty() ? "" : ", ") +
                     std::string(strategyName(strategy));
    return Status::error("schedule strategy '" +
                         std::string(strategyName(s.strategy)) +
                         "' is not implemented for " + name +
                         " yet; implemented: " + implemented);
  }
  if (s.edgeBatch != 0 &&
      (op.kind == OpKind::EdgeSoftmax || op.kind == OpKind::EdgeSoftmaxGrad))
    return Status::error("edge_batch applies to the ops that gather rows of "
                         "neighbours (gnn.spmm, gnn.sddmm); " +
                         name + " takes one edge at a time");
  if (!family.accumulates && s.discBatch != 0)
    return Status::error(
        "discretized reduction (disc_batch = " + std::to_string(s.discBatch) +
        ") is not implemented for " + name + "; use disc_batch = 0");
  if (!family.accumulates && s.accumulate != Accumulate::F32)
    return Status::error("accumulate = f16 is not implemented for " + name +
                         "; it accumulates in f32");
  const std::string write = writeModeName(s.write);
  if (s.strategy == Strategy::EdgeParallel) {
    int32_t e = s.edgesPerWarp;
    if (e != 0 && (e < kMinEdgesPerWorker || e > kMaxEdgesPerWorker))
      return Status::error("edges_per_warp must be from 8 to " +
                           std::to_string(kMaxEdgesPerWorker) +
                           " (0 = choose), got " + std::to_string(e));
    if ((s.write == WriteMode::Atomic || s.write == WriteMode::Shared) &&
        !family.splitsRows)
      return Status::error("write = " + write + " applies to gnn.spmm; " +
                           name +
                           " writes each edge's value once (use write = "
                           "staged)");
  } else if (s.strategy == Strategy::NeighborGroup) {
    int32_t g = s.groupSize;
    if (g != 0 && (g < 1 || g > kMaxEdgesPerWorker))
      return Status::error("group_size must be from 1 to " +
                           std::to_string(kMaxEdgesPerWorker) +
                           " (0 = choose), got " + std::to_string(g));
    if (s.write == WriteMode::Staged || s.write == WriteMode::Shared)
      return Status::error("neighbor_group adds the rows that span blocks to "
                           "the result atomically: use write = atomic (or "
                           "leave it out)");
  } else if (s.strategy == Strategy::Sliced) {
    if (s.write == WriteMode::Staged || s.write == WriteMode::Shared)
      return Status::error("sliced adds the slices of a row cut into several "
                           "to the result atomically: use write = atomic (or "
                           "leave it out)");
  } else if (s.write != WriteMode::Direct) {
    return Status::error("write = " + write + " is not implemented yet; " +
                         strategyName(s.strategy) +
                         " writes each row directly");
  }
  return checkVectorWidth(op, family, s);
}

ParamRole gnnc::inputRole(const OpDesc &op, int32_t operand) {
  const OpKind kind = op.kind;
  // gnn.spmm's inputs: the features, then the attention scores or a linear
  // epilogue's weights and bias.
  if (kind == OpKind::Spmm && op.attention && operand == 1)
    return ParamRole::AttentionRows;
  if (kind == OpKind::Spmm && op.attention && operand == 2)
    return ParamRole::AttentionColumns;
  if (kind == OpKind::Spmm && operand == 1)
    return ParamRole::LinearWeights;
  if (kind == OpKind::Spmm && operand == 2)
    return ParamRole::LinearBias;
  if (kind == OpKind::SegmentMatmul && operand == 1)
    return ParamRole::SegmentWeights;
  if (isSegmentMatmulKind(kind) && operand == 2)
    return ParamRole::SegmentOffsets;
  return ParamRole::Input;
}

bool gnnc::isCompleteSchedule(const Schedule &s) {
  bool common =
      s.vectorWidth != 0 && s.dimWorkers != 0 && s.threadsPerBlock != 0;
  if (s.strategy == Strategy::EdgeParallel)
    return common && s.edgesPerWarp != 0 && s.write != WriteMode::Direct;
  if (s.strategy == Strategy::NeighborGroup)
    return common && s.groupSize != 0 && s.write == WriteMode::Atomic;
  if (s.strategy == Strategy::Batched)
    return common && s.graphsPerBlock != 0;
  if (s.strategy == Strategy::Sliced)
    return common && s.sliceSize != 0 && s.write == WriteMode::Atomic;
  if (s.strategy == Strategy::TileRouted)
    return common && s.tileRows != 0 && s.tileRouting &&
           s.math != MathMode::Auto &&
           (!onTensorCores(s.math) || s.stages != 0);
  return common;
}

Expected<Schedule> gnnc::completeSchedule(const OpDesc &op, Schedule s) {
  GNNC_RETURN_IF_ERROR(checkOpSizes(op));
  if (s.strategy != Strategy::VertexParallel &&
      s.strategy != Strategy::EdgeParallel &&
      s.strategy != Strategy::NeighborGroup &&
      s.strategy != Strategy::Batched && s.strategy != Strategy::TileRouted &&
      s.strategy != Strategy::Sliced)
    return Status::error(std::string("no default for strategy '") +
                         strategyName(s.strategy) + "'");
  if (s.vectorWidth == 0) {
    s.vectorWidth = 1;
    for (int32_t vw : {8, 4, 2})
      if (vw * static_cast<int64_t>(elementSize(op.type)) <= kMaxVectorBytes &&
          (op.snapshots > 0 ? op.snapshotWidth() : op.stride()) % vw == 0) {
        s.vectorWidth = vw;
        break;
      }
  }
  bool batched = s.strategy == Strategy::Batched;
  if (batched) {
    // gnn.spmm stages tiles; the pooling ops stage nothing.
    if (s.tileRows == 0 && op.kind == OpKind::Spmm) {
      s.tileRows = defaults::kBatchedTileRows;
      // A linear epilogue keeps its aggregated rows in shared memory, and
      // with them a pass's weights (staged: rows and pass within
      // kBatchedTileBytes + kLinearWeightBytes, so that several blocks
      // share an SM) or its warps' rings (streamed: as many rows as the
      // shared-memory limit allows, each tile reading all of W from L2; on
      // an H200 the largest legal tile was the fastest at widths 128 and
      // 256). Fewer rows for wide ones, down to one 16-row fragment.
      if (op.linear()) {
        auto budget = [&] {
          return batchedLinearTile(op, s).streamWeights
                     ? kMaxSharedBytes
                     : defaults::kBatchedTileBytes +
                           defaults::kLinearWeightBytes;
        };
        while (s.tileRows > 16 && batchedLinearTile(op, s).bytes > budget())
          s.tileRows /= 2;
      }
    }
    // gnn.spmm: a block takes as many whole graphs as fit its tile; the
    // pooling ops: a graph per block.
    if (s.graphsPerBlock == 0)
      s.graphsPerBlock = op.kind == OpKind::Spmm ? kMaxGraphsPerBlock : 1;
    // A linear epilogue's tensor-core tile fixes the block's threads.
    if (op.kind == OpKind::Spmm && op.linear()) {
      if (s.threadsPerBlock == 0)
        s.threadsPerBlock = batchedLinearTile(op, s).threads;
    }
  }
  if (s.strategy == Strategy::TileRouted) {
    if (s.tileRows == 0)
      s.tileRows = op.kind == OpKind::SegmentMatmulWeightGrad
                       ? defaults::kSegmentSplitRows
                       : defaults::kSegmentTileRows;
    s.tileRouting = true;
    // The one place the math is chosen; a tensor-core tile fixes the
    // block's threads.
    s.math = chooseSegmentMath(op, s);
    if (onTensorCores(s.math)) {
      if (s.stages == 0)
        s.stages = defaults::kPipelineStages;
      const SegmentMmaTile tile = segmentMmaTile(op, s);
      if (s.threadsPerBlock == 0)
        s.threadsPerBlock = tile.threads;
      // Persistent blocks: as many per SM as the tile's registers a
      // thread and the shared memory allow.
      if (s.blocksPerSm == 0 && tile.threads > 0) {
        int64_t blocks = kRegistersPerSm / (tile.registers * tile.threads);
        if (tile.bytes > 0)
          blocks = std::min(blocks, sharedBytesPerSm(s) / tile.bytes);
        s.blocksPerSm = static_cast<int32_t>(std::clamp<int64_t>(
            blocks, 1,
            std::min<int64_t>(kMaxBlocksPerSm,
                              kMaxThreadsPerSm / tile.threads)));
      }
    }
  }
  if (s.dimWorkers == 0) {
    int32_t edgeWorkers = familyOf(op.kind).edgeWorkers;
    // A sub-warp of a power of two lanes shares a row's chunks (of one
    // column block, for batched): enough for one trip, or for
    // kLinearTripsPerLane under a linear epilogue, whose gathers are
    // latency-bound at the occupancy its tile leaves.
    int64_t chunks = batched && s.tileRows != 0
                         ? batchedColumnChunks(op, s.vectorWidth, s.tileRows)
                         : ceilDiv(op.width, s.vectorWidth);
    if (batched && op.kind == OpKind::Spmm && op.linear())
      chunks = ceilDiv(chunks, defaults::kLinearTripsPerLane);
    s.dimWorkers =
        edgeWorkers != 0
            ? edgeWorkers
            : static_cast<int32_t>(std::min<int64_t>(
                  kWarpSize, powerOfTwoCeil(chunks).value_or(kWarpSize)));
  }
  if (s.threadsPerBlock == 0)
    s.threadsPerBlock = std::max(batched ? defaults::kBatchedThreadsPerBlock
                                         : defaults::kThreadsPerBlock,
                                 s.dimWorkers);
  if (s.strategy == Strategy::EdgeParallel) {
    if (s.edgesPerWarp == 0)
      s.edgesPerWarp = defaults::kEdgesPerWorker;
    if (s.write == WriteMode::Direct)
      s.write = WriteMode::Staged;
  }
  if (s.strategy == Strategy::NeighborGroup) {
    if (s.groupSize == 0)
      s.groupSize = defaults::kGroupSize;
    s.write = WriteMode::Atomic;
  }
  if (s.strategy == Strategy::Sliced) {
    if (s.sliceSize == 0)
      s.sliceSize = static_cast<int32_t>(std::clamp<int64_t>(
          defaults::kSliceSizePerSnapshot * op.snapshots, defaults::kSliceSize,
          defaults::kMaxDefaultSliceSize));
    s.write = WriteMode::Atomic;
  }
  // What the defaults chose must keep the fields' own rules (256 threads
  // and blocks_per_sm = 16 do not fit an SM): a #gnn.schedule may hold
  // nothing else.
  GNNC_RETURN_IF_ERROR(checkScheduleFields(s));
  return s;
}

Expected<KernelPlan> gnnc::planKernel(const OpDesc &op, const Schedule &s) {
  GNNC_RETURN_IF_ERROR(checkSchedule(op, s));
  if (!isCompleteSchedule(s))
    return Status::error("the schedule " + s.str() +
                         " leaves parameters open; complete it first (the "
                         "gnn-default-schedule pass)");
  Expected<KernelPlan> plan = findPlanner(op.kind, s.strategy)(op, s);
  if (!plan)
    return plan;
  plan->schedule = s;
  const LaunchPlan &launch = plan->launch;
  // (Blocks of threads per SM are checkScheduleFields' rule.)
  int64_t bps = s.blocksPerSm;
  if (bps != 0 && bps * launch.sharedBytes > sharedBytesPerSm(s))
    return Status::error("blocks_per_sm = " + std::to_string(bps) +
                         " blocks of " + std::to_string(launch.sharedBytes) +
                         " bytes of shared memory exceed the " +
                         std::to_string(sharedBytesPerSm(s)) +
                         " bytes an SM holds");
  return plan;
}

Expected<KernelPlan> gnnc::planWithDefaults(const OpDesc &op,
                                            const Schedule &schedule) {
  GNNC_RETURN_IF_ERROR(checkSchedule(op, schedule));
  Expected<Schedule> complete = completeSchedule(op, schedule);
  if (!complete)
    return complete.status();
  return planKernel(op, *complete);
}

//===----------------------------------------------------------------------===//
// Pieces the planners share
//===----------------------------------------------------------------------===//

bool gnnc::plan::keepsVectorsPacked(ElementType type, int64_t vw) {
  return elementSize(type) == 2 && vw >= 2;
}

Expected<ThreadMapping> gnnc::plan::featureMapping(const OpDesc &op,
                                                   const Schedule &s,
                                                   bool wideBatch,
                                                   int64_t laneChunks) {
  ThreadMapping m;
  m.lanes = s.dimWorkers;
  m.rowsPerBlock = s.threadsPerBlock / s.dimWorkers;
  m.vectorWidth = s.vectorWidth;
  m.chunks = ceilDiv(op.width, s.vectorWidth);
  if (laneChunks > 0 && laneChunks < m.chunks)
    m.columnChunks = laneChunks;
  m.chunksPerLane = ceilDiv(m.laneChunks(), m.lanes);
  int64_t accumulators = m.chunksPerLane * s.vectorWidth;
  if (accumulators > kMaxAccumulatorsPerThread)
    return Status::error(
        "feature width " + std::to_string(op.width) + " needs " +
        std::to_string(accumulators) +
        " accumulators per thread with vector_width " +
        std::to_string(s.vectorWidth) + " and dim_workers " +
        std::to_string(m.lanes) + "; at most " +
        std::to_string(kMaxAccumulatorsPerThread) +
        " fit in registers (raise dim_workers or vector_width)");
  // A long row costs one dependent load chain per neighbour batch: issue as
  // many loads as the registers allow before using the first. (The row's
  // threads fetch `lanes` times as many indices at once.) Kernels whose
  // threads keep one value per edge take one neighbour at a time from
  // `lanes` shared indices.
  // The schedule's edge_batch replaces that choice (fewer loads in flight,
  // fewer registers).
  int64_t batch =
      s.edgeBatch > 0
          ? s.edgeBatch
          : std::clamp<int64_t>(kMaxPrefetchRegisters / accumulators, 1,
                                kMaxEdgeBatch);
  if (!wideBatch)
    batch = std::min<int64_t>(batch, m.lanes);
  m.edgeUnroll = static_cast<int32_t>(batch);
  m.packed = keepsVectorsPacked(op.type, s.vectorWidth);
  return m;
}

LaunchPlan gnnc::plan::rowLaunch(const Schedule &s, const ThreadMapping &m) {
  LaunchPlan launch;
  launch.threads = s.threadsPerBlock;
  launch.grid = {ParamRole::NumRows};
  launch.itemsPerBlock = m.rowsPerBlock;
  launch.blocksPerSm = s.blocksPerSm;
  return launch;
}

Expected<KernelPlan> gnnc::plan::rowPlan(const OpDesc &op, const Schedule &s,
                                         bool wideBatch) {
  Expected<ThreadMapping> mapping = featureMapping(op, s, wideBatch);
  if (!mapping)
    return mapping.status();
  KernelPlan plan;
  plan.mapping = *mapping;
  plan.launch = rowLaunch(s, plan.mapping);
  return plan;
}

void gnnc::plan::planGroupWorkers(KernelPlan &plan, const Schedule &s) {
  plan.mapping.groupSize = s.groupSize;
  // A batch never holds more edges than a group has.
  plan.mapping.edgeUnroll = std::min(plan.mapping.edgeUnroll, s.groupSize);
  for (ParamRole role :
       {ParamRole::GroupRows, ParamRole::GroupBegins, ParamRole::NumGroups})
    plan.extraParams.push_back(role);
  plan.launch.grid = {ParamRole::NumGroups};
}

Expected<KernelPlan> gnnc::plan::edgeParallelPlan(const OpDesc &op,
                                                  const Schedule &s,
                                                  bool rowEnds) {
  Expected<KernelPlan> plan = rowPlan(op, s, /*wideBatch=*/true);
  if (!plan)
    return plan;
  ThreadMapping &m = plan->mapping;
  const int64_t items = s.edgesPerWarp, workers = m.rowsPerBlock;
  m.itemsPerWorker = items;
  if (rowEnds) {
    m.rowEndsBytes = workers * (items + 1) * 4;
    GNNC_RETURN_IF_ERROR(checkSharedBytes(
        m.rowEndsBytes,
        "edge_parallel keeps each worker's row ends in shared memory: " +
            std::to_string(workers) + " workers per block x (" +
            std::to_string(items) + " + 1) x 4 bytes",
        "lower edges_per_warp or threads_per_block"));
  }
  plan->extraParams = {ParamRole::NumEdges};
  LaunchPlan &launch = plan->launch;
  launch.grid = {ParamRole::NumRows, ParamRole::NumEdges};
  launch.itemsPerBlock = workers * items;
  launch.minBlocks = 1;
  launch.sharedBytes = m.rowEndsBytes;
  return plan;
}

Status gnnc::plan::checkSharedBytes(int64_t shared, const std::string &what,
                                    const std::string &fix, int64_t limit) {
  if (shared <= limit)
    return Status::ok();
  return Status::error(what + " = " + std::to_string(shared) + " bytes, over " +
                       std::to_string(limit) + "; " + fix);
}

int64_t gnnc::maxSharedBytes(const Schedule &s) {
  return s.math == MathMode::Wgmma ? kMaxSharedBytesSm90 : kMaxSharedBytes;
}

int64_t gnnc::sharedBytesPerSm(const Schedule &s) {
  return s.math == MathMode::Wgmma ? kMaxSharedBytesPerSmSm90
                                   : kMaxSharedBytesPerSm;
}

bool LaunchPlan::operator==(const LaunchPlan &o) const {
  return threads == o.threads && grid == o.grid &&
         itemsPerBlock == o.itemsPerBlock && minBlocks == o.minBlocks &&
         sharedBytes == o.sharedBytes && blocksPerSm == o.blocksPerSm;
}

bool CompanionPlan::operator==(const CompanionPlan &o) const {
  return suffix == o.suffix && launch == o.launch;
}

bool WorkspacePlan::operator==(const WorkspacePlan &o) const {
  return count == o.count && itemsPerUnit == o.itemsPerUnit &&
         bytesPerUnit == o.bytesPerUnit && minUnits == o.minUnits;
}

int64_t ThreadMapping::laneSumShuffles() const {
  int64_t half = 1;
  while (half < edgeUnroll)
    half *= 2;
  int64_t shuffles = 0;
  for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
    half /= 2;
    shuffles += std::max<int64_t>(half, 1);
  }
  return shuffles;
}

bool ThreadMapping::operator==(const ThreadMapping &o) const {
  return lanes == o.lanes && rowsPerBlock == o.rowsPerBlock &&
         vectorWidth == o.vectorWidth && chunks == o.chunks &&
         chunksPerLane == o.chunksPerLane && edgeUnroll == o.edgeUnroll &&
         packed == o.packed && itemsPerWorker == o.itemsPerWorker &&
         groupSize == o.groupSize && edgeGroups == o.edgeGroups &&
         rowEndsBytes == o.rowEndsBytes && columnChunks == o.columnChunks;
}
