//===- SddmmPlan.cpp - Kernel plans of gnn.sddmm and the edge softmax -----===//
//
// gnn.sddmm's edge_parallel strategy (workers take equal stretches of the
// merge path; every edge has its own output, so no row is split between
// writers), and the edge softmax ops, whose threads share a row's edges
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
  // loaded in one batch: the batch of gnn.spmm.
  Expected<ThreadMapping> mapping = featureMapping(op, s, /*wideBatch=*/true);
  if (!mapping)
    return mapping.status();
  KernelPlan plan;
  ThreadMapping &m = plan.mapping = *mapping;
  const int64_t items = s.edgesPerWarp, workers = m.rowsPerBlock;
  m.itemsPerWorker = items;
  plan.extraParams = {ParamRole::NumEdges};
  // Packed kernels keep their stretch's row ends in shared memory, where
  // each edge finds its row; the others read row_ptr as they go.
  if (m.packed) {
    m.rowEndsBytes = workers * (items + 1) * 4;
    GNNC_RETURN_IF_ERROR(checkSharedBytes(
        m.rowEndsBytes,
        "edge_parallel keeps each worker's row ends in shared memory: " +
            std::to_string(workers) + " workers per block x (" +
            std::to_string(items) + " + 1) x 4 bytes",
        "lower edges_per_warp or threads_per_block"));
  }
  LaunchPlan &launch = plan.launch;
  launch.threads = s.threadsPerBlock;
  launch.grid = {ParamRole::NumRows, ParamRole::NumEdges};
  launch.itemsPerBlock = workers * items;
  launch.minBlocks = 1;
  launch.sharedBytes = m.rowEndsBytes;
  launch.blocksPerSm = s.blocksPerSm;
  return plan;
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
