//===- Types.h - What a gnnc kernel computes --------------------*- C++ -*-===//
//
// The typed description of one op (OpDesc): which op, its element type,
// feature width, row stride, graph index widths and options. It is built
// once from the IR (the dialect's GnnKernelOp interface), travels in the
// kernel manifest, and is read by the kernel plans, the CPU references, the
// host ops and the cost models: one set of enums for all of them. Plain C++,
// no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_PLAN_TYPES_H
#define GNNC_PLAN_TYPES_H

#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace gnnc {

/// Element type of feature and value arrays on the device.
enum class ElementType { F32, F16, BF16 };

/// Size in bytes of one element.
inline size_t elementSize(ElementType type) {
  return type == ElementType::F32 ? 4 : 2;
}

/// The short name: "f32", "f16" or "bf16".
const char *elementTypeName(ElementType type);

/// The CUDA C type of one element: "float", "__half" or "__nv_bfloat16"
/// (what generated kernels and the runtime's own CUDA helpers declare).
const char *elementCudaType(ElementType type);

/// Parses "f32", "f16" or "bf16" (also "float32", "float16", "half",
/// "bfloat16").
Expected<ElementType> parseElementType(const std::string &name);

/// The ops gnnc compiles into kernels.
enum class OpKind {
  Spmm,
  Sddmm,
  EdgeSoftmax,
  EdgeSoftmaxGrad,
  Readout,
  ReadoutGrad,
  SegmentMatmul,
  SegmentMatmulWeightGrad
};

/// The op's name in the IR: "gnn.spmm", "gnn.sddmm", "gnn.edge_softmax",
/// "gnn.edge_softmax_grad", "gnn.readout", "gnn.readout_grad",
/// "gnn.segment_matmul", "gnn.segment_matmul_weight_grad".
const char *opKindName(OpKind kind);
/// Its short name in manifests and reports: "spmm", "sddmm", "edge_softmax",
/// "edge_softmax_grad", "readout", "readout_grad", "segment_matmul",
/// "segment_matmul_weight_grad".
const char *opKindKey(OpKind kind);
std::optional<OpKind> parseOpKind(const std::string &key);

/// gnn.spmm's neighbour reduction: a sum, the sum divided by the row's
/// degree, or the largest term (0 for an empty row, in each case).
enum class Reduce { Sum, Mean, Max };

/// gnn.spmm's fused degree scaling: Left multiplies row r by
/// 1/sqrt(deg_out(r)), Right multiplies each term of column c by
/// 1/sqrt(deg_in(c)), Both does both (GCN). A degree of 0 gives factor 0.
enum class DegreeScale { None, Left, Right, Both };

/// How gnn.sddmm forms an edge's value from its endpoints' features.
enum class SddmmForm { Dot, Add };

/// The activation of gnn.spmm's linear epilogue: none or ReLU.
enum class Activation { None, Relu };

/// The IR spellings: "sum", "mean", "max"; "none", "left", "right", "both";
/// "dot", "add".
const char *reduceName(Reduce reduce);
const char *degreeScaleName(DegreeScale scale);
const char *sddmmFormName(SddmmForm form);
/// "none", "relu".
const char *activationName(Activation act);
std::optional<Activation> parseActivation(const std::string &name);
std::optional<Reduce> parseReduce(const std::string &name);
std::optional<DegreeScale> parseDegreeScale(const std::string &name);
std::optional<SddmmForm> parseSddmmForm(const std::string &name);

/// One op as a kernel computes it.
struct OpDesc {
  OpKind kind = OpKind::Spmm;
  ElementType type = ElementType::F32;
  /// Features per row (gnn.spmm, gnn.sddmm); heads (the edge softmax ops,
  /// 1 for one value per edge); columns of the result, M (gnn.segment_matmul).
  int64_t width = 0;
  /// Elements from one row of the features (and result) to the next: the
  /// width, or the stride of padded rows (`#gnn.rows<stride = ...>`,
  /// gnn.spmm only).
  int64_t rowStride = 0;
  /// 64-bit graph row offsets and column indices.
  bool offsets64 = true;
  bool indices64 = false;
  /// The graph is a batch of graphs (`!gnn.graph<batched_csr, ...>`): a
  /// block-diagonal CSR graph whose kernels may also read the first node
  /// of each graph (`graph_ptr`).
  bool batchedGraph = false;
  /// The graph is a group of this many snapshots over one node set
  /// (`!gnn.graph<snapshot_csr, ...>`, 0 otherwise): the CSR of the edges
  /// every snapshot shares (the overlap) plus each snapshot's exclusive
  /// edges. A feature row holds the snapshots' features side by side
  /// (`tensor<?x S x F x ...>`): `width` is S x F, snapshotWidth() F.
  int64_t snapshots = 0;

  // gnn.spmm (and gnn.readout, gnn.readout_grad: reduce)
  /// The op reads one value per edge (`values(...)`).
  bool edgeValues = false;
  /// gnn.spmm with attention (`attention(%dst, %src : ...)`, GAT's fused
  /// aggregation): each edge e = (r, c) of row r weighs x[c] by the softmax
  /// over row r of leaky_relu(dst[r] + src[c]) (leakyRelu's slope; none:
  /// the plain sum), computed in the kernel from one score per row and one
  /// per column; no logits or weights reach memory.
  bool attention = false;
  Reduce reduce = Reduce::Sum;
  DegreeScale scale = DegreeScale::None;
  /// GIN's eps: (1 + eps) * x[r] is added to row r.
  std::optional<double> selfWeight;
  /// The column factors are deg_in(c)^-p (unset: p = 1/2).
  std::optional<double> colNormExponent;
  /// gnn.spmm with a linear epilogue (`weight(...)`, a batch's fused GCN or
  /// GIN layer): the result is act(H W + b) for the aggregation H (rows of
  /// `width`), W of width x linearWidth, b of linearWidth; 0 without one.
  /// With transposeWeights W is stored linearWidth x width (torch.nn.Linear's
  /// (out, in) layout) and read transposed.
  int64_t linearWidth = 0;
  bool linearBias = false;
  Activation activation = Activation::None;

  // gnn.segment_matmul: Y_t = X_t W_t, X of K columns, W_t of K x M
  // (`width` is M). With transposeWeights, Y_t = X_t W_tᵀ (the input
  // gradient): the input rows have `inputWidth` columns, the results
  // `width`, and each W_t is stored `width` x `inputWidth` (the forward's
  // K x M), read transposed. gnn.segment_matmul_weight_grad: dW_t = X_tᵀ
  // dY_t, X of `inputWidth` (K) columns, dY of `width` (M), dW_t K x M.
  /// Columns of the input rows, K (0 for every other op).
  int64_t inputWidth = 0;
  bool transposeWeights = false;

  // gnn.sddmm (leakyRelu also gnn.spmm's attention logits)
  SddmmForm form = SddmmForm::Dot;
  std::optional<double> leakyRelu;

  /// The row stride, or the width when no stride is set.
  int64_t stride() const { return rowStride > 0 ? rowStride : width; }
  bool padded() const { return stride() != width; }
  /// The features of one snapshot (the width when the graph is no snapshot
  /// group).
  int64_t snapshotWidth() const {
    return snapshots > 0 ? width / snapshots : width;
  }
  /// gnn.spmm reads the column factors `col_norm` (scale right or both).
  bool scalesColumns() const {
    return scale == DegreeScale::Right || scale == DegreeScale::Both;
  }
  /// gnn.spmm multiplies a row by a factor of its degree (mean, left or
  /// both scaling).
  bool hasRowFactor() const {
    return reduce == Reduce::Mean || scale == DegreeScale::Left ||
           scale == DegreeScale::Both;
  }
  /// Whether gnn.spmm ends in a linear epilogue.
  bool linear() const { return linearWidth > 0; }
  /// Elements of one result row: linearWidth with a linear epilogue, else
  /// the width.
  int64_t resultWidth() const { return linear() ? linearWidth : width; }
  /// The column factors' exponent: colNormExponent, or 1/2.
  double columnExponent() const { return colNormExponent.value_or(0.5); }
  /// The slope of attention's leaky ReLU (attentionSlope(leakyRelu)).
  double attentionSlope() const;

  bool operator==(const OpDesc &o) const;
  bool operator!=(const OpDesc &o) const { return !(*this == o); }
};

/// A gnn.segment_matmul of `type` with inputs of `k` columns and results
/// of `m` columns.
OpDesc segmentMatmulOp(ElementType type, int64_t k, int64_t m);
/// The input gradient of that op: dX_t = dY_t W_tᵀ, rows of `m` columns in,
/// rows of `k` out, the weights K x M read transposed.
OpDesc segmentMatmulInputGradOp(ElementType type, int64_t k, int64_t m);
/// Its weight gradient: dW_t = X_tᵀ dY_t, X of `k` columns, dY of `m`.
OpDesc segmentMatmulWeightGradOp(ElementType type, int64_t k, int64_t m);
/// Whether `kind` is one of the segmented-matmul ops (which read no graph
/// and have an input width).
inline bool isSegmentMatmulKind(OpKind kind) {
  return kind == OpKind::SegmentMatmul ||
         kind == OpKind::SegmentMatmulWeightGrad;
}

/// The slope of the leaky ReLU of gnn.spmm's attention logits given its
/// `leaky_relu`: that slope, or 1 without one (the identity: the plain sum
/// dst[r] + src[c]).
inline double attentionSlope(const std::optional<double> &leakyRelu) {
  return leakyRelu.value_or(1.0);
}
inline double OpDesc::attentionSlope() const {
  return gnnc::attentionSlope(leakyRelu);
}

/// A gnn.spmm (sum) of `type` features of `width` per row, unpadded, over a
/// graph with 64-bit row offsets and 32-bit column indices.
OpDesc spmmOp(ElementType type, int64_t width);

} // namespace gnnc

#endif // GNNC_PLAN_TYPES_H
