//===- LowerToKernels.cpp - Resolve thread mapping, launch and ABI --------===//
//
// After this pass every decision the CUDA printer needs is an attribute:
//   - `gnn.plan` on each op: how threads map onto rows and features;
//   - `gnn.launch` on each kernel: block size and the grid rule;
//   - `gnn.params` on each kernel: parameter names in launch order.
//
// Kernel parameters: a graph argument contributes `<p>row_ptr`,
// `<p>col_idx` and `<p>num_rows` (prefix empty for the first graph, `g<i>_`
// after); 2-D tensors are `x`, `x1`, ...; 1-D tensors `values`, `values1`,
// ...; results `y`, `y1`, .... An argument attribute `gnn.name = "..."`
// overrides the name (or the prefix, for a graph). Parameters the op needs
// beyond its operands follow the results: a gnn.spmm with scale = right or
// both reads `<p>col_norm` (const float *, 1/sqrt(deg_in(c)) per column c of
// graph `<p>`, 0 for an empty column), computed by the host.
//
// A gnn.spmm with padded rows (`#gnn.rows<stride = s>`) has
// `chunks = ceil(width / vector_width)`: its last chunk of each row reads
// into the padding, and the CUDA printer stores only its first
// `width % vector_width` elements.
//
// gnn.edge_softmax and gnn.edge_softmax_grad map the `dim_workers` threads of a
// row onto its edges; each thread holds all H heads of an edge: its plan has
// `chunks_per_lane = chunks = H / vector_width` and `edge_unroll = 1`.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Dialect/Gnn/KernelLimits.h"
#include "gnnc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace gnnc {
#define GEN_PASS_DEF_GNNLOWERTOKERNELS
#include "gnnc/Transforms/Passes.h.inc"
} // namespace gnnc

using namespace mlir;
using namespace gnnc;
using namespace gnnc::gnn;

namespace {

using namespace gnnc::limits;

std::string numbered(StringRef base, unsigned index) {
  return index == 0 ? base.str() : (base + Twine(index)).str();
}

/// Computes the parameter list of `kernel`, or fails with a diagnostic.
FailureOr<SmallVector<Attribute>> computeParams(KernelOp kernel) {
  Builder b(kernel.getContext());
  SmallVector<Attribute> names;
  llvm::StringSet<> seen;
  unsigned graphs = 0, matrices = 0, vectors = 0;
  auto add = [&](const std::string &name) -> LogicalResult {
    if (!seen.insert(name).second)
      return kernel.emitOpError()
             << "two kernel parameters are named '" << name
             << "'; give them distinct gnn.name attributes";
    names.push_back(b.getStringAttr(name));
    return success();
  };
  for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes())) {
    auto given = kernel.getArgAttrOfType<StringAttr>(i, "gnn.name");
    if (isa<GnnGraphType>(type)) {
      std::string prefix =
          given ? (given.getValue() + "_").str()
                : (graphs == 0 ? std::string()
                               : "g" + std::to_string(graphs) + "_");
      ++graphs;
      for (const char *part : {"row_ptr", "col_idx", "num_rows"})
        if (failed(add(prefix + part)))
          return failure();
      continue;
    }
    auto tensor = cast<RankedTensorType>(type);
    std::string name =
        given ? given.getValue().str()
              : (tensor.getRank() == 2 ? numbered("x", matrices++)
                                       : numbered("values", vectors++));
    if (failed(add(name)))
      return failure();
  }
  for (unsigned i = 0, e = kernel.getResultTypes().size(); i < e; ++i) {
    auto given = kernel.getResultAttrOfType<StringAttr>(i, "gnn.name");
    if (failed(add(given ? given.getValue().str() : numbered("y", i))))
      return failure();
  }
  return names;
}

/// What lowering needs to know of an op the CUDA printer can emit.
struct EmittableOp {
  Operation *op = nullptr;
  Value graph;
  int64_t width = 0;
  ScheduleAttr schedule;
};

std::optional<EmittableOp> asEmittable(Operation &op) {
  if (auto spmm = dyn_cast<SpmmOp>(op))
    return EmittableOp{&op, spmm.getGraph(), spmm.getFeatureWidth(),
                       spmm.getScheduleAttr()};
  if (auto sddmm = dyn_cast<SddmmOp>(op))
    return EmittableOp{&op, sddmm.getGraph(), sddmm.getFeatureWidth(),
                       sddmm.getScheduleAttr()};
  if (auto softmax = dyn_cast<EdgeSoftmaxOp>(op))
    return EmittableOp{&op, softmax.getGraph(), softmax.getNumHeads(),
                       softmax.getScheduleAttr()};
  if (auto grad = dyn_cast<EdgeSoftmaxGradOp>(op))
    return EmittableOp{&op, grad.getGraph(), grad.getNumHeads(),
                       grad.getScheduleAttr()};
  return std::nullopt;
}

LogicalResult lowerKernel(KernelOp kernel) {
  Block &body = kernel.getBody().front();
  auto ops = body.without_terminator();
  std::optional<EmittableOp> found;
  for (Operation &op : ops) {
    std::optional<EmittableOp> e = asEmittable(op);
    if (found || !e)
      return op.emitOpError()
             << "cannot be emitted: a kernel currently holds exactly one "
                "gnn.spmm or gnn.sddmm (fusing several ops is not implemented "
                "yet)";
    found = e;
  }
  if (!found)
    return kernel.emitOpError() << "has no op to emit";
  Operation *target = found->op;
  auto ret = cast<ReturnOp>(body.getTerminator());
  if (ret.getNumOperands() != 1 || ret.getOperand(0) != target->getResult(0))
    return ret.emitOpError()
           << "must return exactly the result of " << target->getName();
  for (Value operand : target->getOperands())
    if (!isa<BlockArgument>(operand))
      return target->emitOpError() << "operands must be kernel arguments";

  ScheduleAttr schedule = found->schedule;
  if (!schedule || !schedule.isComplete())
    return target->emitOpError()
           << "has no complete schedule; run gnn-default-schedule first";

  int64_t width = found->width;
  int32_t vw = schedule.getVectorWidth();
  int32_t lanes = schedule.getDimWorkers();
  int32_t threads = schedule.getThreadsPerBlock();
  // With padded rows (gnn.spmm) the width need not be a multiple of vw: the
  // last chunk of a row runs into the padding.
  int64_t chunks = (width + vw - 1) / vw;
  int64_t chunksPerLane = 0, edgeBatch = 1;
  if (isa<EdgeSoftmaxOp, EdgeSoftmaxGradOp>(target)) {
    // The threads of a row share its edges; one thread holds every head.
    if (width > kMaxSoftmaxHeads && isa<EdgeSoftmaxOp>(target))
      return target->emitOpError()
             << width << " heads need " << 2 * width
             << " running values per thread; at most " << kMaxSoftmaxHeads
             << " heads fit in registers";
    if (width > kMaxSoftmaxHeads)
      return target->emitOpError()
             << width << " heads need " << 3 * width
             << " values per thread (a running sum and two loads per head); "
                "at most "
             << kMaxSoftmaxHeads << " heads fit in registers";
    chunksPerLane = chunks;
  } else {
    chunksPerLane = (chunks + lanes - 1) / lanes;
    if (chunksPerLane * vw > kMaxAccumulatorsPerThread)
      return target->emitOpError()
             << "feature width " << width << " needs " << chunksPerLane * vw
             << " accumulators per thread with vector_width " << vw
             << " and dim_workers " << lanes << "; at most "
             << kMaxAccumulatorsPerThread
             << " fit in registers (raise dim_workers or vector_width)";
    // A long row costs one dependent load chain per neighbour batch: issue
    // as many loads as the registers allow before using the first. (The
    // row's threads fetch `lanes` times as many indices at once.) Ops whose
    // threads keep one value per edge (sddmm) take one neighbour at a time
    // from `lanes` shared indices.
    edgeBatch = std::clamp<int64_t>(
        kMaxPrefetchRegisters / (chunksPerLane * vw), 1, kMaxEdgeBatch);
    // Edge-parallel sddmm keeps SpMM's batch: with 16-bit vectors both
    // endpoints' features of an edge are loaded, packed (two elements per
    // register); otherwise only the column side (the row's features stay in
    // registers).
    bool edgeParallelSddmm = isa<SddmmOp>(target) &&
                             schedule.getStrategy() == Strategy::edge_parallel;
    if (!isa<SpmmOp>(target) && !edgeParallelSddmm)
      edgeBatch = std::min<int64_t>(edgeBatch, lanes);
  }

  MLIRContext *ctx = kernel.getContext();
  target->setAttr(kPlanAttrName,
                  VertexPlanAttr::get(ctx, lanes, threads / lanes, vw,
                                      static_cast<int32_t>(chunks),
                                      static_cast<int32_t>(chunksPerLane),
                                      static_cast<int32_t>(edgeBatch)));

  FailureOr<SmallVector<Attribute>> params = computeParams(kernel);
  if (failed(params))
    return failure();
  // The grid counts rows of the graph the op aggregates over.
  auto graphArg = cast<BlockArgument>(found->graph);
  unsigned graphIndex = 0;
  for (unsigned i = 0; i < graphArg.getArgNumber(); ++i)
    graphIndex += isa<GnnGraphType>(kernel.getArgumentTypes()[i]) ? 3 : 1;
  auto numRows = cast<StringAttr>((*params)[graphIndex + 2]);
  StringRef rowPtr = cast<StringAttr>((*params)[graphIndex]).getValue();
  StringRef graphPrefix = rowPtr.drop_back(strlen("row_ptr"));
  // Parameters the op needs beyond its operands; their names must be free.
  auto addExtra = [&](const std::string &name, StringRef why) -> LogicalResult {
    for (Attribute existing : *params)
      if (cast<StringAttr>(existing).getValue() == name)
        return kernel.emitOpError()
               << "a kernel parameter is named '" << name << "', which " << why
               << " needs; rename it with gnn.name";
    params->push_back(StringAttr::get(ctx, name));
    return success();
  };
  // Right degree scaling reads precomputed column factors of the graph.
  auto spmm = dyn_cast<SpmmOp>(target);
  if (spmm && (spmm.getScale() == DegreeScale::right ||
               spmm.getScale() == DegreeScale::both))
    if (failed(addExtra((graphPrefix + "col_norm").str(),
                        "degree scaling (the column factors)")))
      return failure();
  // An edge-parallel kernel runs over the graph's edges: it takes their
  // number, and a workspace for the partial rows of split rows.
  bool edgeParallel = schedule.getStrategy() == Strategy::edge_parallel;
  std::string gridParam = numRows.getValue().str();
  int64_t perBlock = threads / lanes;
  int64_t minBlocks = 0, shared = 0;
  if (schedule.getStrategy() == Strategy::neighbor_group) {
    // The host splits each row into groups of `group_size` neighbours:
    // `group_ptr` (i64, the first group of each row, num_rows + 1 entries)
    // and `group_rows` (i32, the row of each group). One block takes
    // `threads / lanes` consecutive groups and merges their partial sums in
    // shared memory (one f32 row per group).
    std::string groupParams[] = {(graphPrefix + "group_ptr").str(),
                                 (graphPrefix + "group_rows").str(),
                                 (graphPrefix + "num_groups").str()};
    for (const std::string &name : groupParams)
      if (failed(addExtra(name, "neighbor_group (the host's groups)")))
        return failure();
    gridParam = groupParams[2];
    // (Rows of the row stride: the last chunk may run into the padding.)
    int64_t slotWidth = cast<SpmmOp>(target).getRowStride();
    shared = perBlock * slotWidth * 4;
    if (shared > kMaxSharedBytes)
      return target->emitOpError()
             << "neighbor_group merges the partial sums of a block's groups "
                "in shared memory: "
             << perBlock << " groups x " << slotWidth
             << " features x 4 bytes = " << shared << " bytes, over "
             << kMaxSharedBytes
             << "; raise dim_workers or lower threads_per_block";
  }
  if (edgeParallel) {
    // An sddmm writes every edge's own value, so no row is ever split
    // between writers: no workspace. Nor does a gnn.spmm with write =
    // atomic: its workers add the pieces of split rows to the result.
    std::string numEdges = (graphPrefix + "num_edges").str();
    if (failed(addExtra(numEdges, "edge_parallel (the number of edges)")) ||
        (isa<SpmmOp>(target) && schedule.getWrite() != WriteMode::atomic &&
         failed(addExtra("workspace", "edge_parallel (the split rows)"))))
      return failure();
    // Workers take equal stretches of the merge path (row ends and edges),
    // and keep the row ends of their stretch in shared memory.
    int64_t items = schedule.getEdgesPerWarp();
    int64_t workersPerBlock = threads / lanes;
    // (An sddmm needs them only with packed 16-bit vectors, where each
    // edge finds its row there; otherwise it reads row_ptr as it goes.)
    auto sddmm = dyn_cast<SddmmOp>(target);
    bool rowEnds = !sddmm || keepsVectorsPacked(sddmm.getElementType(), vw);
    shared = rowEnds ? workersPerBlock * (items + 1) * 4 : 0;
    if (shared > kMaxSharedBytes)
      return target->emitOpError()
             << "edge_parallel keeps each worker's row ends in shared "
                "memory: "
             << workersPerBlock << " workers per block x (" << items
             << " + 1) x 4 bytes = " << shared << " bytes, over "
             << kMaxSharedBytes
             << "; lower edges_per_warp or threads_per_block";
    // write = shared: after them, two f32 rows (of the row stride) per
    // worker for the pieces of rows split inside the block.
    if (schedule.getWrite() == WriteMode::shared) {
      int64_t stride = cast<SpmmOp>(target).getRowStride();
      int64_t pieces = workersPerBlock * 2 * stride * 4;
      shared += pieces;
      if (shared > kMaxSharedBytes)
        return target->emitOpError()
               << "write = shared keeps two f32 rows per worker in shared "
                  "memory besides the row ends: "
               << workersPerBlock << " workers x 2 x " << stride
               << " x 4 bytes = " << pieces << " bytes, " << shared
               << " in all, over " << kMaxSharedBytes
               << "; lower edges_per_warp or threads_per_block, or use write "
                  "= staged";
    }
    gridParam = numRows.getValue().str() + "+" + numEdges;
    perBlock = workersPerBlock * items;
    // A graph without rows or edges still gets its (empty) launch.
    minBlocks = 1;
  }
  int32_t blocksPerSm = schedule.getBlocksPerSm();
  if (blocksPerSm != 0 && blocksPerSm * threads > kMaxThreadsPerSm)
    return target->emitOpError()
           << "blocks_per_sm = " << blocksPerSm << " blocks of " << threads
           << " threads exceed the " << kMaxThreadsPerSm
           << " threads an SM holds";
  if (blocksPerSm != 0 && blocksPerSm * shared > kMaxSharedBytesPerSm)
    return target->emitOpError()
           << "blocks_per_sm = " << blocksPerSm << " blocks of " << shared
           << " bytes of shared memory exceed the " << kMaxSharedBytesPerSm
           << " bytes an SM holds";
  kernel->setAttr(kLaunchAttrName,
                  LaunchAttr::get(ctx, threads, gridParam, perBlock,
                                  static_cast<int32_t>(shared), minBlocks,
                                  blocksPerSm));
  kernel->setAttr(kParamsAttrName, ArrayAttr::get(ctx, *params));
  kernel->setAttr(
      kEntryAttrName,
      StringAttr::get(
          ctx,
          kernelEntryName(kernel->getParentOfType<GnnModuleOp>(), kernel)));
  return success();
}

} // namespace
namespace gnnc {
namespace {
struct GnnLowerToKernelsPass
    : public impl::GnnLowerToKernelsBase<GnnLowerToKernelsPass> {
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](KernelOp kernel) {
      if (mlir::failed(lowerKernel(kernel)))
        failed = true;
    });
    // Entry names share one CUDA translation unit: they must differ.
    llvm::StringMap<KernelOp> entries;
    getOperation().walk([&](KernelOp kernel) {
      auto entry = kernel->getAttrOfType<StringAttr>(kEntryAttrName);
      if (!entry)
        return;
      auto [it, inserted] = entries.try_emplace(entry.getValue(), kernel);
      if (!inserted) {
        kernel.emitOpError() << "has the CUDA entry name '" << entry.getValue()
                             << "', like the kernel at " << it->second.getLoc()
                             << "; rename one";
        failed = true;
      }
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
} // namespace gnnc

std::string gnnc::kernelEntryName(gnn::GnnModuleOp module,
                                  gnn::KernelOp kernel) {
  std::string name = (module.getSymName() + "_" + kernel.getSymName()).str();
  for (char &c : name)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  return name;
}
