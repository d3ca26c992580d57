//===- SddmmPlan.cpp - Kernel plans of gnn.sddmm and the edge softmax -----===//
//
// gnn.sddmm's edge_parallel strategy (workers take equal stretches of the
// merge path; every edge has its own output, so no row is split between
// writers) and its neighbor_group strategy (a worker per group of a row's
// neighbours, found from the group's row: no search, no walk over row
// ends), and the edge softmax ops, whose threads share a row's edges
// rather than its features.
//
//===----------------------------------------------------------------------===//
#include "Planners.h"

#include "gnnc/Plan/Checked.h"

using namespace gnnc;
using namespace gnnc::plan;
using namespace gnnc::limits;

Expected<KernelPlan> gnnc::plan::planSddmmEdgeParallel(const OpDesc &op,
                                                       const Schedule &s) {
  // With packed 16-bit vectors both endpoints' features of an edge are
  // loaded in one batch (the batch of gnn.spmm), and each edge finds its
  // row among its stretch's row ends in shared memory; the other kernels
  // read row_ptr as they go.
  return edgeParallelPlan(
      op, s,
      /*rowEnds=*/keepsVectorsPacked(op.type, s.vectorWidth));
}

Expected<KernelPlan> gnnc::plan::planSddmmNeighbourGroups(const OpDesc &op,
                                                          const Schedule &s) {
  // A worker of `lanes` threads takes one of the host's groups and walks
  // it as vertex_parallel walks a row. Every edge has its own
  // output, so nothing is merged: no shared memory, no first kernel.
  Expected<KernelPlan> groups = rowPlan(op, s, /*wideBatch=*/false);
  if (!groups)
    return groups;
  planGroupWorkers(*groups, s);
  ThreadMapping &m = groups->mapping;
  // Groups of one edge: group g is edge g. Its range needs no table, so its
  // column index loads beside its row (two dependent loads before the
  // features instead of three: the chain of a small graph).
  if (s.groupSize == 1) {
    m.edgeGroups = true;
    std::vector<ParamRole> &params = groups->extraParams;
    params.erase(
        std::remove(params.begin(), params.end(), ParamRole::GroupBegins),
        params.end());
  }
  return groups;
}

Expected<KernelPlan> gnnc::plan::planEdgeSoftmax(const OpDesc &op,
                                                 const Schedule &s) {
  // The threads of a row share its edges; one thread holds every head.
  // (checkOpSizes bounds the heads: the counts below cannot overflow.)
  const int64_t heads = op.width;
  if (heads > kMaxSoftmaxHeads) {
    bool grad = op.kind == OpKind::EdgeSoftmaxGrad;
    return Status::error(
        std::to_string(heads) + " heads need " +
        std::to_string((grad ? 3 : 2) * heads) +
        (grad ? " values per thread (a running sum and two loads per head)"
              : " running values per thread") +
        "; at most " + std::to_string(kMaxSoftmaxHeads) +
        " heads fit in registers");
  }
  KernelPlan plan;
  ThreadMapping &m = plan.mapping;
  m.lanes = s.dimWorkers;
  m.rowsPerBlock = s.threadsPerBlock / s.dimWorkers;
  m.vectorWidth = s.vectorWidth;
  m.chunks = ceilDiv(heads, s.vectorWidth);
  m.chunksPerLane = m.chunks;
  m.edgeUnroll = 1;
  m.packed = keepsVectorsPacked(op.type, s.vectorWidth);
  plan.launch = rowLaunch(s, m);
  return plan;
}
