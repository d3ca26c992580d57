//===- Types.cpp - What a gnnc kernel computes ----------------------------===//
#include "gnnc/Plan/Types.h"

#include "EnumNames.h"

using namespace gnnc;
using namespace gnnc::plan;

const char *gnnc::elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F16:
    return "f16";
  case ElementType::BF16:
    return "bf16";
  }
  return "unknown";
}

const char *gnnc::elementCudaType(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "float";
  case ElementType::F16:
    return "__half";
  case ElementType::BF16:
    return "__nv_bfloat16";
  }
  return "float";
}

Expected<ElementType> gnnc::parseElementType(const std::string &name) {
  if (name == "f32" || name == "float32" || name == "float")
    return ElementType::F32;
  if (name == "f16" || name == "float16" || name == "half")
    return ElementType::F16;
  if (name == "bf16" || name == "bfloat16")
    return ElementType::BF16;
  return Status::error("unknown element type '" + name +
                       "' (expected f32, f16 or bf16)");
}

namespace {

const char *const kOpKeys[] = {
    "spmm",    "sddmm",        "edge_softmax",   "edge_softmax_grad",
    "readout", "readout_grad", "segment_matmul", "segment_matmul_weight_grad"};
const char *const kOpNames[] = {
    "gnn.spmm",           "gnn.sddmm",
    "gnn.edge_softmax",   "gnn.edge_softmax_grad",
    "gnn.readout",        "gnn.readout_grad",
    "gnn.segment_matmul", "gnn.segment_matmul_weight_grad"};
const char *const kReduceNames[] = {"sum", "mean", "max"};
const char *const kScaleNames[] = {"none", "left", "right", "both"};
const char *const kFormNames[] = {"dot", "add"};
const char *const kActivationNames[] = {"none", "relu"};

} // namespace

const char *gnnc::opKindName(OpKind kind) { return nameOf(kOpNames, kind); }
const char *gnnc::opKindKey(OpKind kind) { return nameOf(kOpKeys, kind); }
std::optional<OpKind> gnnc::parseOpKind(const std::string &key) {
  return lookupName<OpKind>(kOpKeys, key);
}
const char *gnnc::reduceName(Reduce reduce) {
  return nameOf(kReduceNames, reduce);
}
const char *gnnc::degreeScaleName(DegreeScale scale) {
  return nameOf(kScaleNames, scale);
}
const char *gnnc::sddmmFormName(SddmmForm form) {
  return nameOf(kFormNames, form);
}
const char *gnnc::activationName(Activation act) {
  return nameOf(kActivationNames, act);
}
std::optional<Activation> gnnc::parseActivation(const std::string &name) {
  return lookupName<Activation>(kActivationNames, name);
}
std::optional<Reduce> gnnc::parseReduce(const std::string &name) {
  return lookupName<Reduce>(kReduceNames, name);
}
std::optional<DegreeScale> gnnc::parseDegreeScale(const std::string &name) {
  return lookupName<DegreeScale>(kScaleNames, name);
}
std::optional<SddmmForm> gnnc::parseSddmmForm(const std::string &name) {
  return lookupName<SddmmForm>(kFormNames, name);
}

OpDesc gnnc::segmentMatmulOp(ElementType type, int64_t k, int64_t m) {
  OpDesc op;
  op.kind = OpKind::SegmentMatmul;
  op.type = type;
  op.width = op.rowStride = m;
  op.inputWidth = k;
  return op;
}

OpDesc gnnc::segmentMatmulInputGradOp(ElementType type, int64_t k, int64_t m) {
  OpDesc op = segmentMatmulOp(type, m, k);
  op.transposeWeights = true;
  return op;
}

OpDesc gnnc::segmentMatmulWeightGradOp(ElementType type, int64_t k, int64_t m) {
  OpDesc op = segmentMatmulOp(type, k, m);
  op.kind = OpKind::SegmentMatmulWeightGrad;
  return op;
}

OpDesc gnnc::spmmOp(ElementType type, int64_t width) {
  OpDesc op;
  op.kind = OpKind::Spmm;
  op.type = type;
  op.width = op.rowStride = width;
  return op;
}

bool OpDesc::operator==(const OpDesc &o) const {
  return kind == o.kind && type == o.type && width == o.width &&
         stride() == o.stride() && offsets64 == o.offsets64 &&
         indices64 == o.indices64 && batchedGraph == o.batchedGraph &&
         snapshots == o.snapshots && edgeValues == o.edgeValues &&
         attention == o.attention && reduce == o.reduce && scale == o.scale &&
         selfWeight == o.selfWeight && colNormExponent == o.colNormExponent &&
         form == o.form && leakyRelu == o.leakyRelu &&
         inputWidth == o.inputWidth && transposeWeights == o.transposeWeights &&
         linearWidth == o.linearWidth && linearBias == o.linearBias &&
         activation == o.activation;
}
