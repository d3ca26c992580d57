//===- Backward.h - Host side of the backward of gnn ops --------*- C++ -*-===//
//
// Gradients for training with gnn kernels:
//  - gnn.edge_softmax_grad has its own kernel (launchEdgeSoftmaxGrad);
//  - gnn.spmm (reduce sum or mean) with respect to its features is a
//    gnn.spmm over the transposed graph (spmmFeatureGradForm says which,
//    spmmFeatureGradKernelText writes it), with the edge values permuted
//    to the transpose's edge order (graph::transposeWithEdgeMap);
//  - gnn.spmm with respect to its edge values is the dot form of
//    gnn.sddmm of the output gradient (row features) and the features
//    (column features), each edge's value then multiplied by the forward's
//    row and column factors (scaleEdgeGrad, on the host; nothing to do
//    without reduce = mean or scaling);
//  - gnn.sddmm, dot form: dA = spmm(g, B, values = dS) and dB =
//    spmm(g^T, A, values = dS in g^T's edge order); add form: dA and dB sum
//    the edge gradients of each row and column: a gnn.spmm without values
//    of dS over rowEdgeGraph(g) and columnEdgeGraph(g). A leaky ReLU first
//    multiplies dS by its slope where the pre-activation was negative (on
//    the host: leakyReluGrad).
// Each check* runs the kernels on fresh random inputs with NaN-poisoned
// outputs and compares with the double-precision reference of
// gnnc/reference/Backward.h, which works on the forward graph directly.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_OPS_BACKWARD_H
#define GNNC_OPS_BACKWARD_H

#include "gnnc/ops/Spmm.h"
#include "gnnc/reference/Backward.h"

#include <optional>
#include <string>

namespace gnnc::ops {

//===----------------------------------------------------------------------===//
// gnn.edge_softmax_grad
//===----------------------------------------------------------------------===//

// What a compiled gnn.edge_softmax_grad kernel expects is its op
// description: kernelOp(spec, OpKind::EdgeSoftmaxGrad) (gnnc/ops/KernelInfo.h),
// whose width is the number of heads.

/// Launches a compiled gnn.edge_softmax_grad kernel: dx from the softmax
/// output `out` and the gradient `gradOut` of a loss with respect to it,
/// on `stream` (a CUstream; null: the default stream).
Status
launchEdgeSoftmaxGrad(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                      const DeviceGraph &graph, const rt::DeviceBuffer &out,
                      const rt::DeviceBuffer &gradOut, rt::DeviceBuffer &dx,
                      bool synchronize = true, void *stream = nullptr);

/// Runs `kernel` on `g` with the softmax (reference, rounded to the kernel's
/// type) of random logits, a random output gradient in [-1, 1] and a
/// NaN-poisoned result, and checks every value against ref::edgeSoftmaxGrad.
Expected<KernelCheck> checkEdgeSoftmaxGrad(rt::Runtime &runtime,
                                           const rt::LoadedKernel &kernel,
                                           const graph::CsrGraph &g,
                                           uint64_t seed);

//===----------------------------------------------------------------------===//
// gnn.spmm
//===----------------------------------------------------------------------===//

/// The gnn.spmm over the transposed graph that gives the feature gradient
/// of a forward gnn.spmm: reduce = sum, this scale and (when the scale
/// reads column factors) this col_norm_exponent.
struct SpmmGradForm {
  gnnc::DegreeScale scale = gnnc::DegreeScale::None;
  double colNormExponent = 0.5;
};

/// The backward form of a forward gnn.spmm with `reduce` and `scale`; fails
/// for reduce = max.
Expected<SpmmGradForm> spmmFeatureGradForm(gnnc::Reduce reduce,
                                           gnnc::DegreeScale scale);

/// A `gnn.kernel @name` (to be placed in a gnn.module) computing the
/// feature gradient of a forward gnn.spmm with `reduce` and `scale` on
/// `type` features of `width`, with or without edge values, over the
/// transposed graph (`offsets`, `indices`: i32 or i64). `schedule` is the
/// body of a #gnn.schedule<...> or empty for the default.
Expected<std::string> spmmFeatureGradKernelText(
    const std::string &name, ElementType type, int64_t width, bool edgeValues,
    gnnc::Reduce reduce, gnnc::DegreeScale scale,
    const std::string &offsets = "i64", const std::string &indices = "i32",
    const std::string &schedule = "");

/// Runs a feature-gradient kernel (from spmmFeatureGradKernelText for
/// `reduce` and `scale`) over the transpose of `g` with a random output
/// gradient (and random edge values, permuted to the transpose's order) and
/// checks dX against ref::spmmGradFeatures on `g`.
Expected<KernelCheck>
checkSpmmFeatureGrad(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                     const graph::CsrGraph &g, gnnc::Reduce reduce,
                     gnnc::DegreeScale scale, uint64_t seed);

/// Multiplies the value of each edge e = (r, c) of `g` in `grad` by the
/// factors rowFactor[r] * colFactor[c] of a forward gnn.spmm with `reduce`
/// and `scale` (ref::spmmFactors). The factors are applied to the f32 copy
/// of the sddmm result rather than folded into its f16/bf16 operands: a
/// factor like deg^-3/2 of a hub row would push the operands into f16's
/// subnormal range.
void scaleEdgeGrad(const graph::CsrGraph &g, gnnc::Reduce reduce,
                   gnnc::DegreeScale scale, std::vector<float> &grad);

/// Runs a dot-form gnn.sddmm kernel (without leaky ReLU) as the edge-value
/// gradient of a forward gnn.spmm with `reduce` and `scale` on `g`: row
/// features dY and column features X, then scaleEdgeGrad, and checks dW
/// against ref::spmmGradValues.
Expected<KernelCheck>
checkSpmmValueGrad(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                   const graph::CsrGraph &g, gnnc::Reduce reduce,
                   gnnc::DegreeScale scale, uint64_t seed);

//===----------------------------------------------------------------------===//
// gnn.sddmm
//===----------------------------------------------------------------------===//

/// The graph whose row r reads the edges of row r of `g` as columns
/// (numRows x nnz, column indices rowPtr[r] .. rowPtr[r+1]-1): a gnn.spmm
/// of per-edge data over it sums each row's edges.
graph::CsrGraph rowEdgeGraph(const graph::CsrGraph &g);

/// The graph whose row c reads, as columns, the edges of `g` in column c
/// (numCols x nnz): a gnn.spmm of per-edge data over it sums each column's
/// edges.
graph::CsrGraph columnEdgeGraph(const graph::CsrGraph &g);

/// Multiplies gradOut (nnz x perEdge values) by `slope` where the sddmm
/// pre-activation (ref::sddmm without leaky ReLU) was negative.
void leakyReluGrad(const graph::CsrGraph &g, const float *a, const float *b,
                   int64_t width, gnnc::SddmmForm form, float slope,
                   std::vector<float> &gradOut);

/// Which gradient of gnn.sddmm a gnn.spmm kernel computes.
enum class SddmmGradSide { Rows, Columns };

/// Runs `kernel`, a plain gnn.spmm (reduce sum, no scaling; with edge
/// values for the dot form, without for the add form), as the `side`
/// gradient of a forward gnn.sddmm of `form` (with leaky ReLU `slope` when
/// given) of width equal to the kernel's, on random features and output
/// gradient, and checks it against ref::sddmmGrad.
Expected<KernelCheck>
checkSddmmGrad(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
               const graph::CsrGraph &g, gnnc::SddmmForm form,
               std::optional<float> slope, SddmmGradSide side, uint64_t seed);

} // namespace gnnc::ops

#endif // GNNC_OPS_BACKWARD_H
