//===- LayerBackward.h - The backward of a fused batched layer --*- C++ -*-===//
//
// A GCN or GIN layer over a batch of small graphs runs forward as one
// kernel: gnn.spmm over the batch with a linear epilogue, Y = relu(Â X W +
// b) (Â: the op's aggregation, with its scaling and self term; X of K
// columns, W of K x M, Y of M). Its backward, from dY and the forward's Y,
// is four steps on the GPU:
//  1. H = Â X again (the fused forward keeps no H);
//  2. dZ = dY where Y > 0 (0 elsewhere) and db = the column sums of dZ in
//     f32, one pass (ops::LinearGradKernels);
//  3. dW = Hᵀ dZ: gnn.segment_matmul_weight_grad with one segment, on
//     tensor cores where K and M allow, in splits of plan.splitRows rows;
//  4. dX = Âᵀ dZ Wᵀ over the transposed batch in the form of the forward's
//     feature gradient (ops::spmmFeatureGradForm): one gnn.spmm with a
//     linear epilogue of transposed weights (plan.fusedInputGrad), or
//     gnn.segment_matmul for T = dZ Wᵀ and then the aggregation of T.
// LayerBackward compiles and uploads what these need once per (layer,
// batch); planLayerBackward holds the rules that choose steps 3 and 4.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_LAYER_BACKWARD_H
#define GNNC_TUNING_LAYER_BACKWARD_H

#include "gnnc/Plan/Limits.h"
#include "gnnc/Plan/Schedule.h"
#include "gnnc/Plan/Types.h"
#include "gnnc/graph/Batch.h"
#include "gnnc/ops/LinearGrad.h"
#include "gnnc/ops/SegmentMatmul.h"
#include "gnnc/ops/Spmm.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gnnc::tuning {

/// How steps 3 and 4 run.
struct LayerBackwardPlan {
  /// Rows of each split of dW's sum (one f32 K x M partial per split): one
  /// of layerBackwardSplitRows().
  int32_t splitRows = defaults::kSegmentSplitRows;
  /// dX in one kernel (gnn.spmm with transposed weights); otherwise a
  /// gnn.segment_matmul and then the aggregation.
  bool fusedInputGrad = true;
  bool operator==(const LayerBackwardPlan &o) const {
    return splitRows == o.splitRows && fusedInputGrad == o.fusedInputGrad;
  }
};

/// The splits dW may take, smallest first: the weight gradient's default
/// (defaults::kSegmentSplitRows) and 1024 rows. (Splits of 4096 rows never
/// won on an H100: each block then walks 4096 rows alone.)
const std::vector<int32_t> &layerBackwardSplitRows();

/// The rules, for `forward` over `nodes` nodes on a GPU of `smCount` SMs:
///  - dW in the largest of layerBackwardSplitRows() whose routing table
///    still gives every SM a work item (tiles x the tensor-core tiles of
///    K x M), else the smallest;
///  - dX fused unless the forward's epilogue streams its weights
///    (BatchedLinearTile::streamWeights: every block reads all of W from
///    L2, and the fused form took 1.8x the unfused one at f32 width 256)
///    or the fused kernel has no plan (its epilogue writes K columns on
///    tensor cores: K a multiple of 8).
/// Checked on an H100 against every alternative (bench/NOTES.md).
Expected<LayerBackwardPlan> planLayerBackward(const OpDesc &forward,
                                              int64_t nodes, int smCount);

/// The .gnn module of the backward's kernels under `plan`: @h (step 1),
/// @dw (step 3), and @dx (step 4 fused) or @dxmm and @dxagg (unfused).
/// `aggregateSchedule` as for LayerBackward::create. Fails, naming the
/// rule, on a forward op it cannot differentiate.
Expected<std::string>
layerBackwardModuleText(const OpDesc &forward,
                        const std::optional<Schedule> &aggregateSchedule,
                        const LayerBackwardPlan &plan);

/// The forward's device operands and the backward's results. `colNorm` is
/// the forward graph's column factors (ops::uploadColumnNorm) when the
/// forward scales columns, else null. dx: nodes x K of the op's type; dw:
/// K x M of the op's type; db: M floats.
struct LayerBackwardOperands {
  const ops::DeviceGraph *batch = nullptr;
  const rt::DeviceBuffer *colNorm = nullptr;
  const rt::DeviceBuffer *x = nullptr;
  const rt::DeviceBuffer *weight = nullptr;
  const rt::DeviceBuffer *y = nullptr;
  const rt::DeviceBuffer *dy = nullptr;
  rt::DeviceBuffer *dx = nullptr;
  rt::DeviceBuffer *dw = nullptr;
  rt::DeviceBuffer *db = nullptr;
};

class LayerBackward {
public:
  /// Compiles the kernels and uploads the transposed batch, its column
  /// factors and the scratch (H, dZ, T) for the backward of `forward` (a
  /// gnn.spmm over a batch with a linear epilogue, ReLU and a bias; sum or
  /// mean, no edge values, no attention, weights K x M as stored) on
  /// `batch`, the graph its kernel runs on. `aggregateSchedule` runs step 1
  /// and the unfused step 4's aggregation (unset: the default batched
  /// schedule). Fails, naming the rule, on any other op.
  static Expected<LayerBackward>
  create(rt::Runtime &runtime, const OpDesc &forward,
         const graph::BatchedGraph &batch,
         const std::optional<Schedule> &aggregateSchedule,
         const LayerBackwardPlan &plan);

  LayerBackward(LayerBackward &&) noexcept;
  LayerBackward &operator=(LayerBackward &&) noexcept;
  ~LayerBackward();

  /// The four steps, queued on `stream` (a CUstream; null: the default
  /// stream), each checking its operands first.
  Status recompute(rt::Runtime &runtime, const LayerBackwardOperands &o,
                   void *stream = nullptr);
  Status reluBias(rt::Runtime &runtime, const LayerBackwardOperands &o,
                  void *stream = nullptr);
  Status weightGrad(rt::Runtime &runtime, const LayerBackwardOperands &o,
                    void *stream = nullptr);
  Status inputGrad(rt::Runtime &runtime, const LayerBackwardOperands &o,
                   void *stream = nullptr);
  /// All four in order; with `synchronize`, waits for them.
  Status run(rt::Runtime &runtime, const LayerBackwardOperands &o,
             bool synchronize = true, void *stream = nullptr);

  const LayerBackwardPlan &plan() const;
  const OpDesc &forward() const;
  /// H and dZ as the last run left them (nodes x K, nodes x M).
  const rt::DeviceBuffer &h() const;
  const rt::DeviceBuffer &dz() const;
  /// The schedules of the kernels, by step: "h", "dw", "dx" (fused), or
  /// "dx_matmul" and "dx_aggregation".
  std::vector<std::pair<std::string, Schedule>> schedules() const;

private:
  struct State;
  explicit LayerBackward(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

/// The double references of the backward, built on the host from W, dY,
/// the forward's Y and H (nodes x K, as the GPU computed it: dW = Hᵀ dZ is
/// checked on the GPU's H, whose own check is the aggregation's), with the
/// magnitudes of each output's terms.
struct LayerBackwardReference {
  std::vector<float> h;
  std::vector<double> dx, dxAbs, dw, dwAbs, db, dbAbs;
};
Expected<LayerBackwardReference> layerBackwardReference(
    const OpDesc &forward, const graph::BatchedGraph &batch,
    const std::vector<float> &weight, const std::vector<float> &dy,
    const std::vector<float> &y, const std::vector<float> &h);

/// Runs `backward` on the operands with dX, dW and db poisoned first and
/// compares them with `reference` (built for the same inputs): dX within
/// ops::linearTolerance of its terms, dW within segmentMatmulTolerance, db
/// within ops::biasGradTolerance. Fails if this run's H is not the
/// reference's.
Expected<ops::KernelCheck>
checkLayerBackward(rt::Runtime &runtime, LayerBackward &backward,
                   const graph::BatchedGraph &batch,
                   const LayerBackwardReference &reference,
                   const LayerBackwardOperands &o);

/// The same after building the reference from `weight` and `dy` (as
/// uploaded) and the GPU's Y and H; `built` (optional) receives it, for
/// checking other plans of the same layer against it.
Expected<ops::KernelCheck>
checkLayerBackward(rt::Runtime &runtime, LayerBackward &backward,
                   const graph::BatchedGraph &batch,
                   const std::vector<float> &weight,
                   const std::vector<float> &dy, const LayerBackwardOperands &o,
                   LayerBackwardReference *built = nullptr);

} // namespace gnnc::tuning

#endif // GNNC_TUNING_LAYER_BACKWARD_H
