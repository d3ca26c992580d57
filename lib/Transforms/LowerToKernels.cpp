//===- LowerToKernels.cpp - Resolve thread mapping, launch and ABI --------===//
//
// After this pass every decision the CUDA printer needs is an attribute,
// copied from the op's kernel plan (gnnc::planKernel, gnnc/Plan/Plan.h):
//   - `gnn.plan` on the op: how threads map onto rows, features and edges;
//   - `gnn.abi` on the kernel: its parameters in launch order, each with a
//     name and a role (gnnc::ParamRole);
//   - `gnn.launch`, `gnn.preludes`, `gnn.follow_ups` and `gnn.workspace` on
//     the kernel: block size, grid (a list of roles), companion kernels and
//     scratch memory.
//
// Parameter names: a graph argument contributes `<p>row_ptr`, `<p>col_idx`
// and `<p>num_rows` (prefix empty for the first graph, `g<i>_` after); 2-D
// tensors are `x`, `x1`, ...; 1-D tensors `values`, `values1`, ...; results
// `y`, `y1`, .... An argument attribute `gnn.name = "..."` overrides the
// name (or the prefix, for a graph). The parameters the plan adds beyond
// the operands follow the results, named after the graph's prefix
// (`<p>col_norm`, `<p>num_edges`, `<p>group_ptr`, ...; the workspace is
// `workspace`).
//
//===----------------------------------------------------------------------===//
#include "gnnc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace gnnc {
#define GEN_PASS_DEF_GNNLOWERTOKERNELS
#include "gnnc/Transforms/Passes.h.inc"
} // namespace gnnc

using namespace mlir;
using namespace gnnc;
using namespace gnnc::gnn;

namespace {

std::string numbered(StringRef base, unsigned index) {
  return index == 0 ? base.str() : (base + Twine(index)).str();
}

/// What a parameter the plan adds beyond the operands is for, in the error
/// about a kernel argument that already has its name.
StringRef purposeOf(ParamRole role) {
  switch (role) {
  case ParamRole::ColumnFactors:
    return "degree scaling (the column factors)";
  case ParamRole::NumEdges:
    return "edge_parallel (the number of edges)";
  case ParamRole::Workspace:
    return "edge_parallel (the split rows)";
  case ParamRole::GraphOffsets:
  case ParamRole::NumGraphs:
  case ParamRole::BatchBlocks:
  case ParamRole::NumBatchBlocks:
    return "batched (the graphs of the batch)";
  case ParamRole::RouteTiles:
  case ParamRole::NumRouteTiles:
  case ParamRole::RouteBlocks:
    return "tile_routed (the routing table)";
  case ParamRole::ExclusiveOffsets:
  case ParamRole::ExclusiveIndices:
    return "a snapshot group (the exclusive edges)";
  case ParamRole::SliceOffsets:
  case ParamRole::SliceRows:
  case ParamRole::NumSlices:
  case ParamRole::NumSplitRows:
    return "sliced (the host's slices)";
  default:
    return "neighbor_group (the host's groups)";
  }
}

/// Builds the kernel's parameter list: names and roles, in launch order.
class AbiBuilder {
public:
  AbiBuilder(KernelOp kernel, ScheduledOpInterface op)
      : kernel(kernel), op(op), ctx(kernel.getContext()) {}

  /// The parameters of the kernel's arguments and results; fails on two of
  /// the same name.
  LogicalResult addOperands() {
    unsigned graphs = 0, matrices = 0, vectors = 0;
    SmallVector<Value> inputs = op.getInputs();
    const OpDesc desc = op.describe();
    Block &entry = kernel.getBody().front();
    for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes())) {
      auto given = kernel.getArgAttrOfType<StringAttr>(i, "gnn.name");
      Value arg = entry.getArgument(i);
      if (isa<GnnGraphType>(type)) {
        std::string prefix =
            given ? (given.getValue() + "_").str()
                  : (graphs == 0 ? std::string()
                                 : "g" + std::to_string(graphs) + "_");
        ++graphs;
        bool read = arg == op.getGraph();
        if (read)
          graphPrefix = prefix;
        const std::pair<const char *, ParamRole> parts[] = {
            {"row_ptr", ParamRole::RowOffsets},
            {"col_idx", ParamRole::ColumnIndices},
            {"num_rows", ParamRole::NumRows}};
        for (auto [part, role] : parts)
          if (failed(add(prefix + part, read ? role : ParamRole::Unused)))
            return failure();
        continue;
      }
      auto tensor = cast<RankedTensorType>(type);
      ParamRole role = ParamRole::Unused;
      int32_t operand = 0;
      if (arg == op.getEdgeValues())
        role = ParamRole::EdgeValues;
      for (auto [k, input] : llvm::enumerate(inputs))
        if (arg == input && role == ParamRole::Unused) {
          operand = static_cast<int32_t>(k);
          role = inputRole(desc, operand);
        }
      // Roles of their own (gnn.segment_matmul's weights and segment
      // offsets) name their parameter after the role.
      if (role != ParamRole::Input)
        operand = 0;
      std::string name =
          given                               ? given.getValue().str()
          : role == ParamRole::SegmentWeights ? "w"
          : role == ParamRole::SegmentOffsets ? "seg"
          : role == ParamRole::LinearWeights  ? "w"
          : role == ParamRole::LinearBias     ? "bias"
          : role == ParamRole::AttentionRows  ? "att_dst"
          : role == ParamRole::AttentionColumns
              ? "att_src"
              : (tensor.getRank() >= 2 ? numbered("x", matrices++)
                                       : numbered("values", vectors++));
      if (failed(add(name, role, operand)))
        return failure();
    }
    for (unsigned i = 0, e = kernel.getResultTypes().size(); i < e; ++i) {
      auto given = kernel.getResultAttrOfType<StringAttr>(i, "gnn.name");
      if (failed(add(given ? given.getValue().str() : numbered("y", i),
                     ParamRole::Result)))
        return failure();
    }
    return success();
  }

  /// The parameters the plan adds after the results; their names must be
  /// free.
  LogicalResult addExtras(ArrayRef<ParamRole> roles) {
    for (ParamRole role : roles) {
      std::string name =
          (role == ParamRole::Workspace ? std::string() : graphPrefix) +
          extraParamStem(role);
      if (seen.contains(name))
        return kernel.emitOpError()
               << "a kernel parameter is named '" << name << "', which "
               << purposeOf(role) << " needs; rename it with gnn.name";
      params.push_back(ParamAttr::get(ctx, name, role, 0));
      seen.insert(name);
    }
    return success();
  }

  ArrayAttr get() const {
    return ArrayAttr::get(ctx,
                          SmallVector<Attribute>(params.begin(), params.end()));
  }

private:
  LogicalResult add(const std::string &name, ParamRole role,
                    int32_t operand = 0) {
    if (!seen.insert(name).second)
      return kernel.emitOpError()
             << "two kernel parameters are named '" << name
             << "'; give them distinct gnn.name attributes";
    params.push_back(ParamAttr::get(ctx, name, role, operand));
    return success();
  }

  KernelOp kernel;
  ScheduledOpInterface op;
  MLIRContext *ctx;
  SmallVector<ParamAttr> params;
  llvm::StringSet<> seen;
  /// The prefix of the parameters of the graph the op reads.
  std::string graphPrefix;
};

LaunchAttr getLaunchAttr(MLIRContext *ctx, const LaunchPlan &launch) {
  return LaunchAttr::get(ctx, launch.threads, launch.grid, launch.itemsPerBlock,
                         launch.sharedBytes, launch.minBlocks,
                         launch.blocksPerSm);
}

ArrayAttr getCompanionsAttr(MLIRContext *ctx,
                            ArrayRef<CompanionPlan> companions) {
  SmallVector<Attribute> attrs;
  for (const CompanionPlan &c : companions)
    attrs.push_back(
        CompanionAttr::get(ctx, c.suffix, getLaunchAttr(ctx, c.launch)));
  return ArrayAttr::get(ctx, attrs);
}

LogicalResult lowerKernel(KernelOp kernel) {
  Block &body = kernel.getBody().front();
  ScheduledOpInterface target;
  for (Operation &op : body.without_terminator()) {
    auto scheduled = dyn_cast<ScheduledOpInterface>(op);
    if (target || !scheduled)
      return op.emitOpError()
             << "cannot be emitted: a kernel currently holds exactly one "
                "gnn.spmm or gnn.sddmm (fusing several ops is not implemented "
                "yet)";
    target = scheduled;
  }
  if (!target)
    return kernel.emitOpError() << "has no op to emit";
  auto ret = cast<ReturnOp>(body.getTerminator());
  if (ret.getNumOperands() != 1 || ret.getOperand(0) != target->getResult(0))
    return ret.emitOpError()
           << "must return exactly the result of " << target->getName();
  for (Value operand : target->getOperands())
    if (!isa<BlockArgument>(operand))
      return target->emitOpError() << "operands must be kernel arguments";

  ScheduleAttr schedule = target.getScheduleAttr();
  if (!schedule || !isCompleteSchedule(schedule.getValue()))
    return target->emitOpError()
           << "has no complete schedule; run gnn-default-schedule first";
  Expected<KernelPlan> plan =
      planKernel(target.describe(), schedule.getValue());
  if (!plan)
    return target->emitOpError() << plan.message();

  MLIRContext *ctx = kernel.getContext();
  target->setAttr(kPlanAttrName, getPlanAttr(ctx, *plan));
  AbiBuilder abi(kernel, target);
  if (failed(abi.addOperands()) || failed(abi.addExtras(plan->extraParams)))
    return failure();
  kernel->setAttr(kAbiAttrName, abi.get());
  kernel->setAttr(kLaunchAttrName, getLaunchAttr(ctx, plan->launch));
  if (!plan->preludes.empty())
    kernel->setAttr(kPreludesAttrName, getCompanionsAttr(ctx, plan->preludes));
  if (!plan->followUps.empty())
    kernel->setAttr(kFollowUpsAttrName,
                    getCompanionsAttr(ctx, plan->followUps));
  if (const std::optional<WorkspacePlan> &w = plan->workspace)
    kernel->setAttr(kWorkspaceAttrName,
                    WorkspaceAttr::get(ctx, w->count, w->itemsPerUnit,
                                       w->bytesPerUnit, w->minUnits));
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
