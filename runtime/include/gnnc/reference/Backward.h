//===- Backward.h - CPU reference for the backward of gnn ops ---*- C++ -*-===//
//
// Double-precision gradients of gnn.edge_softmax, gnn.spmm and gnn.sddmm,
// computed directly from the forward graph (no transpose), so that kernels
// run over a transposed graph are checked against an independent result.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_REFERENCE_BACKWARD_H
#define GNNC_REFERENCE_BACKWARD_H

#include "gnnc/graph/Csr.h"
#include "gnnc/reference/Sddmm.h"
#include "gnnc/reference/Spmm.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace gnnc::ref {

/// The gradient of edge softmax with respect to its logits: for each row r,
/// head h and edge e of row r, dx[e, h] = out[e, h] * (gradOut[e, h] - s)
/// with s = sum over e' of row r of out[e', h] * gradOut[e', h]. `out`,
/// `gradOut` and `dx` hold nnz x heads values. `magnitude` (optional)
/// receives |out[e,h]| * (|gradOut[e,h]| + sum |out * gradOut| over the
/// row), the scale of the rounding error of dx[e, h].
void edgeSoftmaxGrad(const graph::CsrGraph &g, const float *out,
                     const float *gradOut, int64_t heads,
                     std::vector<double> &dx,
                     std::vector<double> *magnitude = nullptr);

/// The factors gnn.spmm applies: y[r] = rowFactor[r] * sum over e = (r, c)
/// of w[e] * colFactor[c] * x[c] (reduce sum or mean; see ref::spmm), with
/// column factors deg_in(c)^-colNormExponent (gnn.spmm's
/// col_norm_exponent) under scale = right or both.
void spmmFactors(const graph::CsrGraph &g, gnnc::Reduce reduce,
                 DegreeScale scale, std::vector<double> &rowFactor,
                 std::vector<double> &colFactor, double colNormExponent = 0.5);

/// The gradient of gnn.spmm (reduce sum or mean) with respect to its
/// features: dX[c, :] = colFactor[c] * sum over e = (r, c) of w[e] *
/// rowFactor[r] * dY[r, :]. `edgeValues` may be null (all ones); dY is
/// numRows x width, dX numCols x width. `absRef` (optional) receives the sum
/// of the magnitudes of each output's terms. Fails for reduce = max (its
/// backward needs the argmax of every output).
Status spmmGradFeatures(const graph::CsrGraph &g, const float *edgeValues,
                        const float *dY, int64_t width, gnnc::Reduce reduce,
                        DegreeScale scale, std::vector<double> &dX,
                        std::vector<double> *absRef = nullptr);

/// The gradient of gnn.spmm (reduce sum or mean) with respect to its edge
/// values: dW[e] = rowFactor[r] * colFactor[c] * dot(dY[r, :], X[c, :]) for
/// e = (r, c). `magnitude` (optional) receives the sum of the magnitudes of
/// the terms. Fails for reduce = max.
Status spmmGradValues(const graph::CsrGraph &g, const float *x, const float *dY,
                      int64_t width, gnnc::Reduce reduce, DegreeScale scale,
                      std::vector<double> &dW,
                      std::vector<double> *magnitude = nullptr);

/// The gradients of gnn.sddmm with respect to its row features `a` and
/// column features `b` (numRows x width and numCols x width), given the
/// gradient of its output `gradOut` (nnz values for dot, nnz x width for
/// add). With a leaky ReLU, gradOut is first multiplied by `slope` where the
/// pre-activation was negative. Dot: dA[r] = sum over e = (r, c) of
/// gradOut[e] * b[c], dB[c] = sum over e = (r, c) of gradOut[e] * a[r]. Add:
/// dA[r, h] = sum over e of row r of gradOut[e, h], dB[c, h] = sum over the
/// edges of column c. `absA`, `absB` (optional) receive the sums of the
/// magnitudes of the terms.
void sddmmGrad(const graph::CsrGraph &g, const float *a, const float *b,
               int64_t width, SddmmForm form, std::optional<float> slope,
               const float *gradOut, std::vector<double> &dA,
               std::vector<double> &dB, std::vector<double> *absA = nullptr,
               std::vector<double> *absB = nullptr);

} // namespace gnnc::ref

#endif // GNNC_REFERENCE_BACKWARD_H
