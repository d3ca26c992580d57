//===- SegmentMatmulPlan.cpp - Kernel plans of the segmented matmuls ------===//
//
// tile_routed (FASTEN): the host cuts each type's rows into tiles of at
// most tile_rows rows and lists them in a routing table (type, first row,
// end row), tiles of one type adjacent, in type order. The host launches
// route_blocks persistent blocks (at most one per work item, at most what
// stays resident); block b walks the contiguous run of work items
// [b * items / blocks, (b + 1) * items / blocks), so that runs of one type
// stay on one block. Tensor-core forwards whose W_t streams through the
// pipeline take every blocks-th item from b instead, so that the blocks
// running at once share a type's weights in L2 (gnnc::cuda::RouteRun).
//
// math = simt: a work item is a routing tile; the block stages the type's
// whole K x M weights in shared memory once per run of that type, and
// sub-warps of `lanes` threads take one result row at a time, each lane its
// vector chunks of the M columns, accumulating in f32 over K.
//
// math = tensor_core (SegmentMmaTile): a work item is (routing tile,
// column block); warps multiply 16 x 8 fragments with mma.sync (TF32 for
// f32, f16/bf16 inputs, f32 accumulation) from tiles that cp.async brings
// into a pipeline of `stages` shared-memory buffers.
//
// math = wgmma (sm_90a): the same items, each warpgroup of 128 threads
// 64 rows of them, from 128-byte-swizzled tiles that the tensor cores read
// themselves. TF32 reads W_t K-major only: an f32 forward's prelude first
// leaves each W_tᵀ, rounded to TF32, in the workspace.
//
// gnn.segment_matmul_weight_grad (dW_t = X_tᵀ dY_t): a routing tile is a
// split of a type's rows (tile_rows, 256 by default), a work item a split
// and a block of the K x M result (math = wgmma: f16 and bf16, whose
// instructions read X and dY transposed from shared memory); each split leaves
// its K x M partial in f32 in the workspace, and a follow-up kernel adds the
// partials of each type in a fixed order (deterministic, no atomics) and
// writes dW_t (zero for a type without rows). With several blocks of the
// K x M result, the persistent blocks work in groups that read each split
// together (ops::routeBlockGroup).
//
//===----------------------------------------------------------------------===//
#include "Planners.h"

#include "gnnc/Plan/Checked.h"

#include <algorithm>

using namespace gnnc;
using namespace gnnc::plan;

namespace {

std::string widthText(const OpDesc &op) {
  return "K " + std::to_string(op.inputWidth) + " and M " +
         std::to_string(op.width);
}

} // namespace

SegmentTile gnnc::segmentMatmulTile(const OpDesc &op, const Schedule &s) {
  SegmentTile tile;
  tile.rows = s.tileRows;
  // checkOpSizes bounds K and M by 2^20 each: no overflow.
  tile.weightElements = op.inputWidth * op.width;
  tile.bytes =
      alignTo(tile.weightElements * static_cast<int64_t>(elementSize(op.type)),
              16)
          .value_or(0);
  return tile;
}

namespace {

/// `needed` registers a thread, in the allocation's steps of 8, at least
/// defaults::kSegmentMmaRegisters and at most 255.
int32_t mmaRegistersFor(int64_t needed) {
  return static_cast<int32_t>(std::clamp<int64_t>(
      alignTo(needed, 8).value_or(255), defaults::kSegmentMmaRegisters, 255));
}

} // namespace

int32_t gnnc::segmentMmaRegisters(int32_t fragsM, int32_t fragsN) {
  // Accumulators (4 floats a fragment), one step's A (4 words a fragment)
  // and B (2 words) fragments, and the addressing.
  return mmaRegistersFor(4 * int64_t(fragsM) * fragsN + 4 * int64_t(fragsM) +
                         2 * int64_t(fragsN) + defaults::kMmaAddressRegisters);
}

namespace {

/// The tensor-core tile of `op` under `s` with `rows` x `cols` results,
/// W_t's column block resident in shared memory or streamed.
SegmentMmaTile mmaTileOf(const OpDesc &op, const Schedule &s, int64_t depth,
                         int64_t rows, int64_t cols, bool residentWeights) {
  SegmentMmaTile t;
  const bool weightGrad = op.kind == OpKind::SegmentMatmulWeightGrad;
  const int64_t size = static_cast<int64_t>(elementSize(op.type));
  t.depth = depth;
  t.rows = rows;
  t.cols = cols;
  // Two warps along the columns (one below 32), and along the rows one
  // per kSegmentWarpRows rows unless threads_per_block asks for fewer,
  // taller warp tiles (segmentTensorCoreFits checks that they cover the
  // tile in whole fragments).
  t.warpsN = t.cols >= 32 ? 2 : 1;
  t.fragsN = static_cast<int32_t>(t.cols / t.warpsN / 8);
  const int64_t warpsM = s.threadsPerBlock > 0
                             ? s.threadsPerBlock / 32 / t.warpsN
                             : t.rows / kSegmentWarpRows;
  t.warpsM = static_cast<int32_t>(std::max<int64_t>(1, warpsM));
  t.fragsM = static_cast<int32_t>(std::max<int64_t>(1, t.rows / t.warpsM / 16));
  t.threads = 32 * t.warpsM * t.warpsN;
  t.registers = segmentMmaRegisters(t.fragsM, t.fragsN);
  t.stages = s.stages != 0 ? s.stages : defaults::kPipelineStages;
  t.aReductionMajor = !weightGrad;
  t.bReductionMajor = op.transposeWeights;
  t.aStride = t.aReductionMajor ? t.depth + reductionRowPad(op.type)
                                : t.rows + kResultRowPad;
  t.bStride = t.bReductionMajor ? t.depth + reductionRowPad(op.type)
                                : t.cols + kResultRowPad;
  t.aElements = t.aReductionMajor ? t.rows * t.aStride : t.depth * t.aStride;
  t.bElements = t.bReductionMajor ? t.cols * t.bStride : t.depth * t.bStride;
  t.residentWeights = residentWeights;
  if (residentWeights) {
    // The whole reduction of the column block: rows of K + pad (read
    // transposed) or K rows of cols + pad; no B tile in the stages.
    // K is rounded up to whole steps (the kernel zero-fills the rest).
    const int64_t reduction = ceilDiv(op.inputWidth, t.depth) * t.depth;
    if (t.bReductionMajor)
      t.bStride = reduction + reductionRowPad(op.type);
    t.weightElements =
        t.bReductionMajor ? t.cols * t.bStride : reduction * t.bStride;
    t.bElements = 0;
  }
  t.stageBytes = (t.aElements + t.bElements) * size;
  t.bytes = t.weightElements * size + t.stageBytes * t.stages;
  const int64_t colBlocks = ceilDiv(op.width, t.cols);
  t.itemsPerRouteTile =
      weightGrad ? ceilDiv(op.inputWidth, t.rows) * colBlocks : colBlocks;
  return t;
}

} // namespace

namespace {

/// The tile of `op` under `s` with reduction steps of `depth`.
SegmentMmaTile mmaTileWithDepth(const OpDesc &op, const Schedule &s,
                                int64_t depth) {
  const bool weightGrad = op.kind == OpKind::SegmentMatmulWeightGrad;
  int64_t rows = weightGrad
                     ? blockExtent(op.inputWidth, 16, kSegmentMmaMaxExtent)
                     : s.tileRows;
  int64_t cols = blockExtent(op.width, 8, kSegmentMmaMaxExtent);
  // The forward keeps W_t resident where one column block holds all of M
  // (M up to 128), it fits, and it still leaves kSegmentResidentBlocks
  // blocks an SM: a block then reads W_t from L2 once per run of one type
  // rather than once per tile, and its pipeline carries X alone. (One
  // block an SM starved the tensor cores: f16 at K = M = 256 ran at a
  // quarter of cuBLAS's speed on an H200.) With several column blocks a
  // block's consecutive items alternate between them, so a resident block
  // would be restaged, and the pipeline drained, at every item: W_t's
  // steps stream with X's instead (f16 at K = M = 256: 1.17-1.27x on five
  // sets on an H200).
  if (!weightGrad && cols >= op.width) {
    SegmentMmaTile resident = mmaTileOf(op, s, depth, rows, cols, true);
    if (resident.bytes <= limits::kMaxSharedBytes &&
        resident.bytes * kSegmentResidentBlocks <= limits::kMaxSharedBytesPerSm)
      return resident;
  }
  SegmentMmaTile t = mmaTileOf(op, s, depth, rows, cols, false);
  // Wide extents only where they fit: columns first, then the weight
  // gradient's rows, down to the extents of 64 that bound the rules.
  while (t.bytes > limits::kMaxSharedBytes &&
         (cols > kBlockExtent || (weightGrad && rows > kBlockExtent))) {
    if (cols > kBlockExtent)
      cols /= 2;
    else
      rows /= 2;
    t = mmaTileOf(op, s, depth, rows, cols, false);
  }
  return t;
}

} // namespace

namespace {

/// A wgmma tile's threads: a warpgroup per 64 of its `rows` (warpsM warps
/// of 16 rows, fragsN fragments of 8 of its `cols`), steps of `depth`,
/// registers for the accumulators and the addressing (A and B stay in
/// shared memory).
void setWarpgroups(SegmentMmaTile &t, const Schedule &s, int64_t depth,
                   int64_t rows, int64_t cols) {
  t.warpgroups = true;
  t.depth = depth;
  t.rows = rows;
  t.cols = cols;
  t.warpsM = static_cast<int32_t>(t.rows / 16);
  t.warpsN = 1;
  t.fragsM = 1;
  t.fragsN = static_cast<int32_t>(t.cols / 8);
  t.threads = kWgmmaGroupThreads * (t.rows / kWgmmaGroupRows);
  t.registers =
      mmaRegistersFor(4 * int64_t(t.fragsN) + defaults::kMmaAddressRegisters);
  t.stages = s.stages != 0 ? s.stages : defaults::kPipelineStages;
}

/// The math = wgmma tile of `op` under `s` with column blocks of `cols`,
/// W_t's column block resident in shared memory or streamed.
SegmentMmaTile wgmmaTileOf(const OpDesc &op, const Schedule &s, int64_t cols,
                           bool residentWeights) {
  SegmentMmaTile t;
  const int64_t size = static_cast<int64_t>(elementSize(op.type));
  setWarpgroups(t, s, kWgmmaRowBytes / size, s.tileRows, cols);
  t.aReductionMajor = true;
  t.weightsCopied = op.type == ElementType::F32 && !op.transposeWeights;
  t.bReductionMajor = op.transposeWeights || t.weightsCopied;
  t.aStride = t.depth;
  t.bStride = t.bReductionMajor ? t.depth : kWgmmaColumns;
  t.aElements = t.rows * t.depth;
  t.bElements = t.cols * t.depth;
  t.residentWeights = residentWeights;
  if (residentWeights) {
    t.weightElements = ceilDiv(op.inputWidth, t.depth) * t.bElements;
    t.bElements = 0;
  }
  t.stageBytes = (t.aElements + t.bElements) * size;
  t.bytes =
      t.weightElements * size + t.stageBytes * t.stages + kWgmmaAlignBytes;
  t.itemsPerRouteTile = ceilDiv(op.width, t.cols);
  return t;
}

/// The math = wgmma tile of the weight gradient (f16, bf16): blocks of the
/// K x M result of up to kSegmentMmaMaxExtent x kSegmentMmaMaxExtent (64
/// where K or M is), a warpgroup per 64 of its rows, steps of
/// kWgmmaWeightGradDepth of a split's rows; a stage holds the X and dY
/// panels (64 columns of 128 bytes each) the instructions read transposed.
SegmentMmaTile wgmmaWeightGradTile(const OpDesc &op, const Schedule &s) {
  SegmentMmaTile t;
  const int64_t size = static_cast<int64_t>(elementSize(op.type));
  setWarpgroups(
      t, s, kWgmmaWeightGradDepth,
      op.inputWidth > kWgmmaGroupRows ? kSegmentMmaMaxExtent : kWgmmaGroupRows,
      op.width > kWgmmaColumns ? kSegmentMmaMaxExtent : kWgmmaColumns);
  t.aReductionMajor = false;
  t.bReductionMajor = false;
  t.aStride = kWgmmaColumns;
  t.bStride = kWgmmaColumns;
  t.aElements = t.rows * t.depth;
  t.bElements = t.cols * t.depth;
  t.stageBytes = (t.aElements + t.bElements) * size;
  t.bytes = t.stageBytes * t.stages + kWgmmaAlignBytes;
  t.itemsPerRouteTile =
      ceilDiv(op.inputWidth, t.rows) * ceilDiv(op.width, t.cols);
  return t;
}

/// W_t resident where one column block of at most kWgmmaMaxColumns holds
/// all of M, it fits sm_90's shared memory and an SM still holds
/// kWgmmaResidentGroups warpgroups of such blocks (a block then reads each
/// X tile once and W_t once per run of a type), else streamed with X in
/// column blocks of 128 (64 where M is 64).
SegmentMmaTile wgmmaTile(const OpDesc &op, const Schedule &s) {
  if (op.kind == OpKind::SegmentMatmulWeightGrad)
    return wgmmaWeightGradTile(op, s);
  if (op.width <= kWgmmaMaxColumns) {
    SegmentMmaTile resident =
        wgmmaTileOf(op, s, std::max<int64_t>(op.width, kWgmmaColumns), true);
    const int64_t groups = resident.rows / kWgmmaGroupRows *
                           (sharedBytesPerSm(s) / resident.bytes);
    if (resident.bytes <= maxSharedBytes(s) && groups >= kWgmmaResidentGroups)
      return resident;
  }
  return wgmmaTileOf(
      op, s, op.width > kWgmmaColumns ? kSegmentMmaMaxExtent : kWgmmaColumns,
      false);
}

/// Why the mma.sync tiles (and the weight gradient's wgmma) cannot take
/// `op`'s K and M, or ok: multiples of 8 up to kMaxTensorCoreWidth.
Status mmaWidthsFit(const OpDesc &op) {
  const int64_t max = limits::kMaxTensorCoreWidth;
  if (op.inputWidth % 8 != 0 || op.width % 8 != 0 || op.inputWidth > max ||
      op.width > max)
    return Status::error("tensor cores take K and M in multiples of 8 up to " +
                         std::to_string(max) + ", got " + widthText(op));
  return Status::ok();
}

/// Why math = wgmma cannot run `op` under `s`, or ok.
Status wgmmaFits(const OpDesc &op, const Schedule &s) {
  const int64_t step = kWgmmaRowBytes / elementSize(op.type);
  const int64_t max = limits::kMaxTensorCoreWidth;
  if (op.kind == OpKind::SegmentMatmulWeightGrad) {
    if (op.type == ElementType::F32)
      return Status::error(
          "the weight gradient reads X and dY transposed, and TF32 wgmma "
          "reads its operands K-major only: f32 takes math = tensor_core");
    GNNC_RETURN_IF_ERROR(mmaWidthsFit(op));
  } else if (op.inputWidth % step != 0 || op.width % kWgmmaColumns != 0 ||
             op.inputWidth > max || op.width > max) {
    return Status::error("wgmma takes K in multiples of " +
                         std::to_string(step) + " and M in multiples of " +
                         std::to_string(kWgmmaColumns) + ", each up to " +
                         std::to_string(max) + ", got " + widthText(op));
  }
  if (op.kind == OpKind::SegmentMatmul && s.tileRows != 64 && s.tileRows != 128)
    return Status::error("wgmma takes tile_rows 64 or 128 (one or two "
                         "warpgroups of 64 rows), got " +
                         std::to_string(s.tileRows));
  const SegmentMmaTile tile = wgmmaTile(op, s);
  GNNC_RETURN_IF_ERROR(checkSharedBytes(
      tile.bytes,
      "the wgmma pipeline of " + std::to_string(tile.stages) + " stages of " +
          std::to_string(tile.stageBytes) + " bytes",
      tile.rows > kWgmmaGroupRows ? "use fewer stages or tile_rows = 64"
                                  : "use fewer stages",
      maxSharedBytes(s)));
  if (s.threadsPerBlock != 0 && s.threadsPerBlock != tile.threads)
    return Status::error("the wgmma tile of " + std::to_string(tile.rows) +
                         " rows runs " + std::to_string(tile.threads) +
                         " threads (a warpgroup per 64 rows), not "
                         "threads_per_block " +
                         std::to_string(s.threadsPerBlock) +
                         "; leave threads_per_block out for the default");
  return Status::ok();
}

} // namespace

SegmentMmaTile gnnc::segmentMmaTile(const OpDesc &op, const Schedule &s) {
  if (s.math == MathMode::Wgmma)
    return wgmmaTile(op, s);
  // Steps of a cache line of each input row (64 halves; f32's 32 are one
  // already) where K is whole lines, and for the weight gradient, whose
  // steps run over rows (any count: the last step is zero-filled), as
  // many rows; only where that tile still fits a block, else the fixed
  // step (deeper pipelines of taller tiles). Half the steps, barriers and
  // copy bookkeeping.
  const int64_t line = segmentMmaLineDepth(op.type);
  const bool wholeLines =
      op.kind == OpKind::SegmentMatmulWeightGrad || op.inputWidth % line == 0;
  if (line != kMmaDepth && wholeLines) {
    SegmentMmaTile t = mmaTileWithDepth(op, s, line);
    if (t.bytes <= limits::kMaxSharedBytes)
      return t;
  }
  return mmaTileWithDepth(op, s, kMmaDepth);
}

Status gnnc::segmentTensorCoreFits(const OpDesc &op, const Schedule &s) {
  if (s.math == MathMode::Wgmma)
    return wgmmaFits(op, s);
  GNNC_RETURN_IF_ERROR(mmaWidthsFit(op));
  if (op.kind == OpKind::SegmentMatmul && s.tileRows != 16 &&
      s.tileRows != 32 && s.tileRows != 64 && s.tileRows != 128)
    return Status::error("tensor cores take tile_rows 16, 32, 64 or 128 (a "
                         "block's rows of 16-row fragments), got " +
                         std::to_string(s.tileRows));
  const SegmentMmaTile tile = segmentMmaTile(op, s);
  GNNC_RETURN_IF_ERROR(checkSharedBytes(
      tile.bytes,
      "the tensor-core pipeline of " + std::to_string(tile.stages) +
          " stages of " + std::to_string(tile.stageBytes) + " bytes",
      "use fewer stages or a smaller tile_rows"));
  const std::vector<int32_t> choices = segmentMmaThreadChoices(op, s);
  if (s.threadsPerBlock != 0 && std::find(choices.begin(), choices.end(),
                                          s.threadsPerBlock) == choices.end()) {
    std::string takes;
    for (int32_t threads : choices)
      takes += (takes.empty() ? "" : " or ") + std::to_string(threads);
    return Status::error(
        "the tensor-core tile of " + std::to_string(tile.rows) + " x " +
        std::to_string(tile.cols) + " runs " + takes +
        " threads (warp tiles of " + std::to_string(tile.cols / tile.warpsN) +
        " columns and " + std::to_string(kSegmentWarpRows) +
        " rows, or up to " + std::to_string(16 * kSegmentMaxFragsM) +
        "), not threads_per_block " + std::to_string(s.threadsPerBlock) +
        "; leave threads_per_block out for the default");
  }
  return Status::ok();
}

std::vector<int32_t> gnnc::segmentMmaThreadChoices(const OpDesc &op,
                                                   const Schedule &s) {
  Schedule open = s;
  open.threadsPerBlock = 0;
  const SegmentMmaTile base = segmentMmaTile(op, open);
  std::vector<int32_t> out{static_cast<int32_t>(base.threads)};
  if (base.warpgroups)
    return out;
  // Taller warp tiles: half the warps along the rows, as long as a warp
  // holds at most kSegmentMaxFragsM fragments of 16 rows.
  for (int64_t warpsM = base.warpsM / 2;
       warpsM >= 1 && base.rows / warpsM / 16 <= kSegmentMaxFragsM; warpsM /= 2)
    out.push_back(static_cast<int32_t>(32 * warpsM * base.warpsN));
  return out;
}

MathMode gnnc::chooseSegmentMath(const OpDesc &op, const Schedule &s) {
  if (s.math != MathMode::Auto)
    return s.math;
  if (op.type == ElementType::F32)
    return MathMode::Simt;
  return segmentTensorCoreFits(op, s) ? MathMode::TensorCore : MathMode::Simt;
}

int64_t gnnc::segmentOperandAlignment(const OpDesc &op, const Schedule &s) {
  // Tensor cores copy and store whole vectors (cp.async of 16 bytes,
  // storeFragmentsWide); an open math may still become tensor cores.
  return s.math == MathMode::Simt ? static_cast<int64_t>(elementSize(op.type))
                                  : limits::kMaxVectorBytes;
}

int64_t gnnc::segmentRouteItemsPerTile(const OpDesc &op, const Schedule &s) {
  return onTensorCores(s.math) ? segmentMmaTile(op, s).itemsPerRouteTile : 1;
}

int64_t gnnc::segmentSplitCostRows(const OpDesc &op, const Schedule &s) {
  if (op.kind != OpKind::SegmentMatmulWeightGrad || !onTensorCores(s.math))
    return 0;
  const SegmentMmaTile t = segmentMmaTile(op, s);
  const int64_t rowBytes = (t.rows + t.cols) * elementSize(op.type);
  const int64_t partialBytes = 2 * t.rows * t.cols * int64_t(sizeof(float));
  return (partialBytes + rowBytes - 1) / std::max<int64_t>(1, rowBytes) +
         t.depth;
}

Status gnnc::plan::segmentMatmulRules(const OpDesc &op, const Schedule &s) {
  if (!onTensorCores(s.math))
    return Status::ok();
  // Open fields take the values completeSchedule gives them.
  Schedule filled = s;
  if (filled.tileRows == 0)
    filled.tileRows = op.kind == OpKind::SegmentMatmulWeightGrad
                          ? defaults::kSegmentSplitRows
                          : defaults::kSegmentTileRows;
  if (Status fits = segmentTensorCoreFits(op, filled); !fits)
    return Status::error(std::string(opKindName(op.kind)) +
                         " with math = " + mathModeName(s.math) + ": " +
                         fits.message() + " (math = simt takes any K and M)");
  return Status::ok();
}

namespace {

/// The launch every tile_routed kernel shares: route_blocks persistent
/// blocks; tensor-core kernels take their tile's threads and pipeline.
Expected<KernelPlan> routedPlan(const OpDesc &op, const Schedule &s) {
  Expected<KernelPlan> plan = rowPlan(op, s, /*wideBatch=*/false);
  if (!plan)
    return plan;
  plan->extraParams = {ParamRole::RouteTiles, ParamRole::NumRouteTiles,
                       ParamRole::RouteBlocks};
  LaunchPlan &launch = plan->launch;
  launch.grid = {ParamRole::RouteBlocks};
  launch.itemsPerBlock = 1;
  launch.minBlocks = 1;
  if (onTensorCores(s.math)) {
    const SegmentMmaTile tile = segmentMmaTile(op, s);
    GNNC_RETURN_IF_ERROR(segmentTensorCoreFits(op, s));
    launch.threads = tile.threads;
    launch.sharedBytes = tile.bytes;
  }
  return plan;
}

} // namespace

namespace {

/// The kernel takes the type count and a workspace of one K x M block of
/// floats per unit of `count`.
void addWeightBlocksWorkspace(KernelPlan &plan, const OpDesc &op,
                              ParamRole count) {
  plan.extraParams.push_back(ParamRole::NumSegments);
  plan.extraParams.push_back(ParamRole::Workspace);
  WorkspacePlan workspace;
  workspace.count = {count};
  workspace.itemsPerUnit = 1;
  workspace.bytesPerUnit = op.inputWidth * op.width * 4;
  workspace.minUnits = 1;
  plan.workspace = workspace;
}

/// A companion kernel `suffix` of the default threads whose blocks, one
/// per unit of `grid` and at least `minBlocks`, stride over its work.
CompanionPlan gridStridingCompanion(const std::string &suffix, ParamRole grid,
                                    int64_t minBlocks) {
  CompanionPlan companion;
  companion.suffix = suffix;
  companion.launch.threads = defaults::kThreadsPerBlock;
  companion.launch.grid = {grid};
  companion.launch.itemsPerBlock = 1;
  companion.launch.minBlocks = minBlocks;
  return companion;
}

} // namespace

Expected<KernelPlan>
gnnc::plan::planSegmentMatmulTileRouted(const OpDesc &op, const Schedule &s) {
  if (op.kind != OpKind::SegmentMatmul)
    return Status::error(std::string("tile_routed plans gnn.segment_matmul, "
                                     "not ") +
                         opKindName(op.kind));
  Expected<KernelPlan> plan = routedPlan(op, s);
  if (plan && onTensorCores(s.math) && segmentMmaTile(op, s).weightsCopied) {
    // The prelude leaves each type's W_tᵀ (TF32) in the workspace, K x M
    // floats a type, grid-striding over 32 x 64 tiles with at least
    // kSegmentCompanionBlocks blocks (a few types still fill the GPU).
    addWeightBlocksWorkspace(*plan, op, ParamRole::NumSegments);
    plan->preludes.push_back(gridStridingCompanion(
        "_transpose", ParamRole::NumSegments, kSegmentCompanionBlocks));
  }
  if (!plan || onTensorCores(s.math))
    return plan;
  const SegmentTile tile = segmentMatmulTile(op, s);
  GNNC_RETURN_IF_ERROR(checkSharedBytes(
      tile.bytes,
      "gnn.segment_matmul (tile_routed) stages a type's whole weight matrix "
      "in shared memory: K " +
          std::to_string(op.transposeWeights ? op.width : op.inputWidth) +
          " x M " +
          std::to_string(op.transposeWeights ? op.inputWidth : op.width) +
          " x " + std::to_string(elementSize(op.type)) + " bytes",
      "splitting K over several passes is not implemented yet; use a "
      "smaller K or M, 16-bit weights, or math = tensor_core (K and M "
      "multiples of 8)"));
  plan->launch.sharedBytes = tile.bytes;
  return plan;
}

Expected<KernelPlan>
gnnc::plan::planSegmentMatmulWeightGrad(const OpDesc &op, const Schedule &s) {
  if (op.kind != OpKind::SegmentMatmulWeightGrad)
    return Status::error(std::string("this planner plans "
                                     "gnn.segment_matmul_weight_grad, not ") +
                         opKindName(op.kind));
  Expected<KernelPlan> plan = routedPlan(op, s);
  if (!plan)
    return plan;
  // The type count (types without rows get zeros) and the partials: one
  // K x M block of f32 per split.
  addWeightBlocksWorkspace(*plan, op, ParamRole::NumRouteTiles);
  // The follow-up adds the partials of each type over num_types x K x M
  // outputs, on at least kSegmentCompanionBlocks blocks: its loads are
  // independent, and the persistent blocks alone (one or two an SM) keep
  // too few in flight.
  plan->followUps.push_back(gridStridingCompanion(
      "_reduce", ParamRole::RouteBlocks, kSegmentCompanionBlocks));
  return plan;
}
