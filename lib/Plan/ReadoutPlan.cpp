//===- ReadoutPlan.cpp - Kernel plans of gnn.readout and its backward -----===//
//
// batched: a block per `graphs_per_block` graphs, taken one after the
// other; sub-warps of `lanes` threads walk the graph's nodes, each lane
// its vector chunks of the features. gnn.readout combines the sub-warps'
// partial results in shared memory (one f32 row of the row stride per
// sub-warp); gnn.readout_grad with max finds, per feature, the first node
// that attains the maximum (one i32 per feature in shared memory).
//
//===----------------------------------------------------------------------===//
#include "Planners.h"

using namespace gnnc;
using namespace gnnc::plan;

Status gnnc::plan::readoutRules(const OpDesc &op, const Schedule &s) {
  if (s.tileRows != 0)
    return Status::error(std::string("tile_rows applies to gnn.spmm; ") +
                         opKindName(op.kind) +
                         " reads each node's features once and stages "
                         "nothing");
  return Status::ok();
}

Expected<KernelPlan> gnnc::plan::planReadout(const OpDesc &op,
                                             const Schedule &s) {
  Expected<KernelPlan> plan = rowPlan(op, s, /*wideBatch=*/false);
  if (!plan)
    return plan;
  const ThreadMapping &m = plan->mapping;
  const bool grad = op.kind == OpKind::ReadoutGrad;
  int64_t shared = 0;
  if (!grad) {
    shared = int64_t(m.rowsPerBlock) * op.stride() * 4;
    GNNC_RETURN_IF_ERROR(checkSharedBytes(
        shared,
        "gnn.readout combines its sub-warps' partial rows in shared memory: " +
            std::to_string(m.rowsPerBlock) + " sub-warps x " +
            std::to_string(op.stride()) + " features x 4 bytes",
        "raise dim_workers or lower threads_per_block"));
  } else if (op.reduce == Reduce::Max) {
    shared = op.stride() * 4;
    GNNC_RETURN_IF_ERROR(checkSharedBytes(
        shared,
        "gnn.readout_grad with max keeps the first node of each feature's "
        "maximum in shared memory: " +
            std::to_string(op.stride()) + " features x 4 bytes",
        "use fewer features"));
  }
  plan->extraParams = {ParamRole::GraphOffsets, ParamRole::NumGraphs};
  LaunchPlan &launch = plan->launch;
  launch.grid = {ParamRole::NumGraphs};
  launch.itemsPerBlock = s.graphsPerBlock;
  launch.minBlocks = 1;
  launch.sharedBytes = shared;
  return plan;
}
