//===- DefaultSchedule.cpp - Fill in schedule parameters ------------------===//
//
// Chooses a value for every schedule parameter an op leaves at 0. The
// choices are simple rules, not tuning: the widest vector load that divides
// the feature width (the row stride, for a gnn.spmm with padded rows),
// enough dimension workers to cover a row in one trip,
// 256 threads per block. gnn.edge_softmax (and gnn.edge_softmax_grad)
// spreads a row's edges (not its
// features) over the threads of the row: its default is a warp per row,
// with the widest load of heads that divides the number of heads. An
// edge_parallel schedule gets 64 merge-path items per worker and staged
// writes.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Transforms/Passes.h"

#include "llvm/Support/MathExtras.h"

namespace gnnc {
#define GEN_PASS_DEF_GNNDEFAULTSCHEDULE
#include "gnnc/Transforms/Passes.h.inc"
} // namespace gnnc

using namespace mlir;
using namespace gnnc;
using namespace gnnc::gnn;

namespace {

/// Edges per worker of an edge_parallel schedule that leaves it open.
constexpr int32_t kDefaultEdgesPerWorker = 64;
/// Neighbours per group of a neighbor_group schedule without one
/// (GNNAdvisor's default).
constexpr int32_t kDefaultGroupSize = 32;

/// The widest vector (in elements) of at most 16 bytes that divides `width`.
int32_t chooseVectorWidth(int64_t width, unsigned elementBits) {
  for (int32_t vw : {8, 4, 2}) {
    if (vw * elementBits <= 128 && width % vw == 0)
      return vw;
  }
  return 1;
}

/// Completes `s` for features of `width` elements of `elementBits` bits,
/// rows `stride` elements apart; `edgeWorkers`, when non-zero, is the
/// default number of threads per row for ops whose threads share a row's
/// edges rather than its features.
ScheduleAttr completeVertexParallel(ScheduleAttr s, int64_t width,
                                    int64_t stride, unsigned elementBits,
                                    int32_t edgeWorkers = 0) {
  int32_t vw = s.getVectorWidth();
  if (vw == 0)
    vw = chooseVectorWidth(stride, elementBits);
  int32_t workers = s.getDimWorkers();
  if (workers == 0 && edgeWorkers != 0) {
    workers = edgeWorkers;
  } else if (workers == 0) {
    int64_t chunks = (width + vw - 1) / vw;
    workers = static_cast<int32_t>(
        std::min<uint64_t>(32, llvm::PowerOf2Ceil(chunks)));
  }
  int32_t threads = s.getThreadsPerBlock();
  if (threads == 0)
    threads = std::max(256, workers);
  return ScheduleAttr::get(
      s.getContext(), s.getStrategy(), vw, s.getDiscBatch(), s.getGroupSize(),
      workers, threads, s.getEdgesPerWarp(), s.getSliceSize(),
      s.getTileRouting(), s.getAccumulate(), s.getWrite(), s.getBlocksPerSm());
}

/// Fills what edge_parallel adds: `kDefaultEdgesPerWorker` edges per
/// worker and staged writes of the rows split between workers.
ScheduleAttr completeEdgeParallel(ScheduleAttr s) {
  int32_t edges =
      s.getEdgesPerWarp() ? s.getEdgesPerWarp() : kDefaultEdgesPerWorker;
  WriteMode write =
      s.getWrite() == WriteMode::direct ? WriteMode::staged : s.getWrite();
  return ScheduleAttr::get(s.getContext(), s.getStrategy(), s.getVectorWidth(),
                           s.getDiscBatch(), s.getGroupSize(),
                           s.getDimWorkers(), s.getThreadsPerBlock(), edges,
                           s.getSliceSize(), s.getTileRouting(),
                           s.getAccumulate(), write, s.getBlocksPerSm());
}

/// Fills what neighbor_group adds: `kDefaultGroupSize` neighbours per
/// group and atomic additions of the rows that span blocks.
ScheduleAttr completeNeighbourGroup(ScheduleAttr s) {
  int32_t group = s.getGroupSize() ? s.getGroupSize() : kDefaultGroupSize;
  return ScheduleAttr::get(
      s.getContext(), s.getStrategy(), s.getVectorWidth(), s.getDiscBatch(),
      group, s.getDimWorkers(), s.getThreadsPerBlock(), s.getEdgesPerWarp(),
      s.getSliceSize(), s.getTileRouting(), s.getAccumulate(),
      WriteMode::atomic, s.getBlocksPerSm());
}

} // namespace
namespace gnnc {
namespace {
struct GnnDefaultSchedulePass
    : public impl::GnnDefaultScheduleBase<GnnDefaultSchedulePass> {
  /// Fills the schedule of `op`, an op with an optional `schedule`.
  template <typename OpTy>
  WalkResult complete(OpTy op, int64_t width, int64_t stride, Type elementType,
                      int32_t edgeWorkers = 0) {
    ScheduleAttr schedule = op.getScheduleAttr();
    if (!schedule)
      schedule = ScheduleAttr::get(op.getContext(), Strategy::vertex_parallel,
                                   0, 0, 0, 0, 0, 0, 0, false, Accumulate::f32,
                                   WriteMode::direct, 0);
    Strategy strategy = schedule.getStrategy();
    if (strategy != Strategy::vertex_parallel &&
        strategy != Strategy::edge_parallel &&
        strategy != Strategy::neighbor_group) {
      op.emitOpError() << "no default for strategy '"
                       << stringifyStrategy(strategy) << "'";
      return WalkResult::interrupt();
    }
    schedule = completeVertexParallel(schedule, width, stride,
                                      elementType.getIntOrFloatBitWidth(),
                                      edgeWorkers);
    if (strategy == Strategy::edge_parallel)
      schedule = completeEdgeParallel(schedule);
    if (strategy == Strategy::neighbor_group)
      schedule = completeNeighbourGroup(schedule);
    op.setScheduleAttr(schedule);
    return WalkResult::advance();
  }

  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](Operation *op) {
      if (auto spmm = dyn_cast<SpmmOp>(op))
        return complete(spmm, spmm.getFeatureWidth(), spmm.getRowStride(),
                        spmm.getElementType());
      if (auto sddmm = dyn_cast<SddmmOp>(op))
        return complete(sddmm, sddmm.getFeatureWidth(), sddmm.getFeatureWidth(),
                        sddmm.getElementType());
      if (auto softmax = dyn_cast<EdgeSoftmaxOp>(op))
        return complete(softmax, softmax.getNumHeads(), softmax.getNumHeads(),
                        softmax.getElementType(), /*edgeWorkers=*/32);
      if (auto grad = dyn_cast<EdgeSoftmaxGradOp>(op))
        return complete(grad, grad.getNumHeads(), grad.getNumHeads(),
                        grad.getElementType(), /*edgeWorkers=*/32);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace gnnc
