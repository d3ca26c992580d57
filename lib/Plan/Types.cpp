//===- Types.cpp - What a gnnc kernel computes ----------------------------===//
#include "gnnc/Plan/Types.h"

using namespace gnnc;

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

/// Looks `name` up in `names` (indexed by the enum's values).
template <typename Enum, size_t N>
std::optional<Enum> lookup(const char *const (&names)[N],
                           const std::string &name) {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i])
      return static_cast<Enum>(i);
  return std::nullopt;
}

const char *const kOpKeys[] = {"spmm", "sddmm", "edge_softmax",
                               "edge_softmax_grad"};
const char *const kOpNames[] = {"gnn.spmm", "gnn.sddmm", "gnn.edge_softmax",
                                "gnn.edge_softmax_grad"};
const char *const kReduceNames[] = {"sum", "mean", "max"};
const char *const kScaleNames[] = {"none", "left", "right", "both"};
const char *const kFormNames[] = {"dot", "add"};

} // namespace

const char *gnnc::opKindName(OpKind kind) {
  return kOpNames[static_cast<int>(kind)];
}
const char *gnnc::opKindKey(OpKind kind) {
  return kOpKeys[static_cast<int>(kind)];
}
std::optional<OpKind> gnnc::parseOpKind(const std::string &key) {
  return lookup<OpKind>(kOpKeys, key);
}
const char *gnnc::reduceName(Reduce reduce) {
  return kReduceNames[static_cast<int>(reduce)];
}
const char *gnnc::degreeScaleName(DegreeScale scale) {
  return kScaleNames[static_cast<int>(scale)];
}
const char *gnnc::sddmmFormName(SddmmForm form) {
  return kFormNames[static_cast<int>(form)];
}
std::optional<Reduce> gnnc::parseReduce(const std::string &name) {
  return lookup<Reduce>(kReduceNames, name);
}
std::optional<DegreeScale> gnnc::parseDegreeScale(const std::string &name) {
  return lookup<DegreeScale>(kScaleNames, name);
}
std::optional<SddmmForm> gnnc::parseSddmmForm(const std::string &name) {
  return lookup<SddmmForm>(kFormNames, name);
}

bool OpDesc::operator==(const OpDesc &o) const {
  return kind == o.kind && type == o.type && width == o.width &&
         stride() == o.stride() && offsets64 == o.offsets64 &&
         indices64 == o.indices64 && edgeValues == o.edgeValues &&
         reduce == o.reduce && scale == o.scale && selfWeight == o.selfWeight &&
         colNormExponent == o.colNormExponent && form == o.form &&
         leakyRelu == o.leakyRelu;
}
