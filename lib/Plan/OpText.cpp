//===- OpText.cpp - One op as .gnn text -----------------------------------===//
#include "gnnc/Plan/OpText.h"

#include <cmath>
#include <cstdio>
#include <cstring>

using namespace gnnc;

namespace {

/// `value` as an f32 attribute that reads back as (float)value: decimal
/// with a point (MLIR reads an integer literal as no float), or the f32's
/// bits in hex when it is not finite, so that the verifier, not the parser,
/// refuses it.
std::string f32Attribute(double value) {
  float f = static_cast<float>(value);
  char buffer[48];
  if (!std::isfinite(f)) {
    uint32_t bits = 0;
    std::memcpy(&bits, &f, sizeof(bits));
    std::snprintf(buffer, sizeof(buffer), "0x%08X : f32", bits);
    return buffer;
  }
  std::snprintf(buffer, sizeof(buffer), "%.9g", static_cast<double>(f));
  std::string text = buffer;
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text + " : f32";
}

/// A rank-2 tensor of `rows` x `width`, with the row layout when given.
std::string matrixType(int64_t width, const char *type, int64_t stride = 0) {
  std::string text = "tensor<?x" + std::to_string(width) + "x" + type;
  if (stride > 0 && stride != width)
    text += ", #gnn.rows<stride = " + std::to_string(stride) + ">";
  return text + ">";
}

/// A group of snapshots' node rows: `snapshots` x `width` features each.
std::string snapshotType(int64_t snapshots, int64_t width, const char *type) {
  return "tensor<?x" + std::to_string(snapshots) + "x" + std::to_string(width) +
         "x" + type + ">";
}

std::string vectorType(const char *type) {
  return std::string("tensor<?x") + type + ">";
}

/// Collects `key = value` pairs into `{...}`.
struct Attributes {
  std::string text;
  /// A unit attribute when `value` is empty.
  void add(const std::string &key, const std::string &value) {
    text +=
        (text.empty() ? "" : ", ") + key + (value.empty() ? "" : " = " + value);
  }
  std::string str() const { return text.empty() ? "" : " {" + text + "}"; }
};

} // namespace

std::string gnnc::opKernelText(const std::string &name, const OpDesc &op,
                               const std::optional<Schedule> &schedule,
                               const OpTextNames &names) {
  const char *t = elementTypeName(op.type);
  const bool group = op.kind == OpKind::Spmm && op.snapshots > 0;
  const std::string graph = std::string("!gnn.graph<") +
                            (group             ? "snapshot_csr, "
                             : op.batchedGraph ? "batched_csr, "
                                               : "csr, ") +
                            (op.offsets64 ? "i64" : "i32") + ", " +
                            (op.indices64 ? "i64" : "i32") + ">";
  const std::string g = "%" + names.graph, in0 = "%" + names.input0,
                    in1 = "%" + names.input1;
  Attributes attrs;
  std::string operands, types, result, body;
  switch (op.kind) {
  case OpKind::Spmm: {
    const std::string x =
        group ? snapshotType(op.snapshots, op.snapshotWidth(), t)
              : matrixType(op.width, t, op.rowStride);
    const std::string w = vectorType(t);
    operands = in0 + ": " + x + (op.edgeValues ? ", " + in1 + ": " + w : "");
    result = x;
    body = "gnn.spmm " + g + ", " + in0;
    if (op.edgeValues)
      body += " values(" + in1 + " : " + w + ")";
    if (op.attention) {
      operands += ", %att_dst: " + w + ", %att_src: " + w;
      body += " attention(%att_dst, %att_src : " + w + ", " + w + ")";
      if (op.leakyRelu)
        attrs.add("leaky_relu", f32Attribute(*op.leakyRelu));
    }
    if (op.linear()) {
      // The epilogue's weights (width x linearWidth) and bias.
      const int64_t rows = op.transposeWeights ? op.linearWidth : op.width;
      const int64_t cols = op.transposeWeights ? op.width : op.linearWidth;
      const std::string weights = "tensor<" + std::to_string(rows) + "x" +
                                  std::to_string(cols) + "x" + t + ">";
      const std::string bias =
          "tensor<" + std::to_string(op.linearWidth) + "x" + t + ">";
      operands += ", %w: " + weights;
      body += " weight(%w : " + weights + ")";
      if (op.linearBias) {
        operands += ", %b: " + bias;
        body += " bias(%b : " + bias + ")";
      }
      if (op.activation != Activation::None)
        attrs.add("activation", std::string("#gnn<activation ") +
                                    activationName(op.activation) + ">");
      if (op.transposeWeights)
        attrs.add("transpose_weights", "");
      result = matrixType(op.linearWidth, t);
    }
    if (op.reduce != Reduce::Sum)
      attrs.add("reduce",
                std::string("#gnn<reduce ") + reduceName(op.reduce) + ">");
    if (op.scale != DegreeScale::None)
      attrs.add("scale",
                std::string("#gnn<scale ") + degreeScaleName(op.scale) + ">");
    if (op.selfWeight)
      attrs.add("self_weight", f32Attribute(*op.selfWeight));
    if (op.colNormExponent)
      attrs.add("col_norm_exponent", f32Attribute(*op.colNormExponent));
    types = graph + ", " + x;
    break;
  }
  case OpKind::Sddmm: {
    const std::string x = matrixType(op.width, t);
    operands = in0 + ": " + x + ", " + in1 + ": " + x;
    result = op.form == SddmmForm::Dot ? vectorType(t) : x;
    body = "gnn.sddmm " + g + ", " + in0 + ", " + in1;
    if (op.form != SddmmForm::Dot)
      attrs.add("form",
                std::string("#gnn<sddmm_form ") + sddmmFormName(op.form) + ">");
    if (op.leakyRelu)
      attrs.add("leaky_relu", f32Attribute(*op.leakyRelu));
    types = graph + ", " + x + ", " + x;
    break;
  }
  case OpKind::Readout:
  case OpKind::ReadoutGrad: {
    const std::string x = matrixType(op.width, t);
    const bool grad = op.kind == OpKind::ReadoutGrad;
    operands =
        in0 + ": " + x +
        (grad ? ", " + in0 + "_out: " + x + ", " + in0 + "_grad: " + x : "");
    result = x;
    body = std::string(opKindName(op.kind)) + " " + g + ", " + in0 +
           (grad ? ", " + in0 + "_out, " + in0 + "_grad" : "");
    if (op.reduce != Reduce::Sum)
      attrs.add("reduce",
                std::string("#gnn<reduce ") + reduceName(op.reduce) + ">");
    types = graph + ", " + x + (grad ? ", " + x + ", " + x : "");
    break;
  }
  case OpKind::SegmentMatmul:
  case OpKind::SegmentMatmulWeightGrad: {
    // No graph: rows of x grouped by type, one weight matrix per type
    // (K x M as the forward stores it).
    const bool weightGrad = op.kind == OpKind::SegmentMatmulWeightGrad;
    const int64_t k = op.transposeWeights ? op.width : op.inputWidth;
    const int64_t m = op.transposeWeights ? op.inputWidth : op.width;
    const std::string x = matrixType(op.inputWidth, t);
    const std::string w = "tensor<?x" + std::to_string(k) + "x" +
                          std::to_string(m) + "x" + t + ">";
    const std::string dy = matrixType(op.width, t);
    const std::string seg = "tensor<?xi64>";
    const std::string second = weightGrad ? dy : w;
    operands = in0 + ": " + x + ", " + in1 + ": " + second + ", %seg: " + seg;
    result = weightGrad ? w : matrixType(op.width, t);
    body = std::string(opKindName(op.kind)) + " " + in0 + ", " + in1 + ", %seg";
    if (op.transposeWeights)
      attrs.add("transpose_weights", "");
    types = x + ", " + second + ", " + seg;
    break;
  }
  case OpKind::EdgeSoftmax:
  case OpKind::EdgeSoftmaxGrad: {
    // One value per edge is a 1-D tensor, several heads a 2-D one.
    const std::string e =
        op.width == 1 ? vectorType(t) : matrixType(op.width, t);
    const bool grad = op.kind == OpKind::EdgeSoftmaxGrad;
    operands = in0 + ": " + e + (grad ? ", " + in1 + ": " + e : "");
    result = e;
    body = std::string(opKindName(op.kind)) + " " + g + ", " + in0 +
           (grad ? ", " + in1 : "");
    types = graph + ", " + e + (grad ? ", " + e : "");
    break;
  }
  }
  if (schedule)
    attrs.add("schedule", schedule->str());
  const std::string params = isSegmentMatmulKind(op.kind)
                                 ? operands
                                 : g + ": " + graph + ", " + operands;
  std::string text =
      "  gnn.kernel @" + name + "(" + params + ") -> " + result + " {\n";
  text += "    %out = " + body + attrs.str() + " : " + types + " -> " + result +
          "\n";
  text += "    gnn.return %out : " + result + "\n  }\n";
  return text;
}

std::string gnnc::opModuleText(const std::string &moduleName,
                               const std::string &kernelName, const OpDesc &op,
                               const std::optional<Schedule> &schedule) {
  return "gnn.module @" + moduleName + " {\n" +
         opKernelText(kernelName, op, schedule) + "}\n";
}
