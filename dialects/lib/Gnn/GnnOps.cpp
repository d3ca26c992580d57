//===- GnnOps.cpp - Operations of the gnn dialect -------------------------===//
#include "gnnc/Dialect/Gnn/GnnOps.h"
#include "gnnc/Plan/Limits.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace gnnc;
using namespace gnnc::gnn;

#define GET_OP_CLASSES
#include "gnnc/Dialect/Gnn/GnnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// ModuleOp
//===----------------------------------------------------------------------===//

void GnnModuleOp::build(OpBuilder &builder, OperationState &state,
                        StringRef name) {
  state.addAttribute(mlir::SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  Region *body = state.addRegion();
  body->push_back(new Block());
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildType = [](Builder &builder, ArrayRef<Type> argTypes,
                      ArrayRef<Type> results,
                      function_interface_impl::VariadicFlag, std::string &) {
    return builder.getFunctionType(argTypes, results);
  };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void KernelOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult KernelOp::verify() {
  for (auto [i, type] : llvm::enumerate(getArgumentTypes())) {
    if (isa<GnnGraphType>(type))
      continue;
    auto tensor = dyn_cast<RankedTensorType>(type);
    // Rank 3: gnn.segment_matmul's weights, one matrix per type.
    if (!tensor || tensor.getRank() < 1 || tensor.getRank() > 3)
      return emitOpError() << "argument #" << i
                           << " must be a !gnn.graph or a ranked tensor of "
                              "rank 1, 2 or 3, got "
                           << type;
  }
  for (auto [i, type] : llvm::enumerate(getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    // Rank 3: gnn.segment_matmul_weight_grad's result, one matrix per type.
    if (!tensor || tensor.getRank() < 1 || tensor.getRank() > 3)
      return emitOpError() << "result #" << i
                           << " must be a ranked tensor of rank 1, 2 or 3, got "
                           << type;
  }
  Block &entry = getBody().front();
  if (entry.getNumArguments() != getArgumentTypes().size())
    return emitOpError() << "entry block has " << entry.getNumArguments()
                         << " arguments, the signature "
                         << getArgumentTypes().size();
  return success();
}

//===----------------------------------------------------------------------===//
// ReturnOp
//===----------------------------------------------------------------------===//

LogicalResult ReturnOp::verify() {
  auto kernel = (*this)->getParentOfType<KernelOp>();
  ArrayRef<Type> expected = kernel.getResultTypes();
  if (getOperands().size() != expected.size())
    return emitOpError() << "returns " << getOperands().size()
                         << " values, but kernel @" << kernel.getSymName()
                         << " declares " << expected.size() << " results";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(getOperands(), expected))) {
    auto [value, type] = pair;
    if (value.getType() != type)
      return emitOpError() << "result #" << i << " has type " << value.getType()
                           << ", but kernel @" << kernel.getSymName()
                           << " declares " << type;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SpmmOp
//===----------------------------------------------------------------------===//

int64_t SpmmOp::getFeatureWidth() {
  auto features = cast<RankedTensorType>(getFeatures().getType());
  // A snapshot group's node row: S snapshots of F features side by side.
  if (features.getRank() == 3)
    return features.getDimSize(1) * features.getDimSize(2);
  return features.getDimSize(1);
}

int64_t SpmmOp::getRowStride() {
  auto features = cast<RankedTensorType>(getFeatures().getType());
  if (features.getRank() == 3)
    return getFeatureWidth();
  return rowStride(features);
}

int64_t SpmmOp::getSnapshots() {
  auto features = cast<RankedTensorType>(getFeatures().getType());
  return features.getRank() == 3 ? features.getDimSize(1) : 0;
}

Type SpmmOp::getElementType() {
  return cast<RankedTensorType>(getFeatures().getType()).getElementType();
}

/// Fails on `op` (an op without padded rows) when one of its tensors has a
/// `#gnn.rows` layout.
static LogicalResult verifyNoRowsLayout(Operation *op) {
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (Type type : types)
    if (hasRowsLayout(type))
      return op->emitOpError()
             << "padded rows (#gnn.rows) are not implemented for "
             << op->getName() << "; got " << type
             << " (use the tensor without the encoding)";
  return success();
}

/// Checks the sizes of `op` against the plans' limits (gnnc::checkOpSizes),
/// scheduled or not, and its schedule (if any) through its kernel plans
/// (gnnc::checkSchedule).
static LogicalResult verifySchedule(ScheduledOpInterface op) {
  OpDesc desc = op.describe();
  if (Status sizes = checkOpSizes(desc); !sizes)
    return op->emitOpError() << sizes.message();
  ScheduleAttr schedule = op.getScheduleAttr();
  if (!schedule)
    return success();
  Status status = checkSchedule(desc, schedule.getValue());
  if (!status)
    return op->emitOpError() << status.message();
  return success();
}

FailureOr<gnnc::ElementType> gnnc::gnn::elementTypeOf(Type type) {
  if (type.isF32())
    return gnnc::ElementType::F32;
  if (type.isF16())
    return gnnc::ElementType::F16;
  if (type.isBF16())
    return gnnc::ElementType::BF16;
  return failure();
}

// The IR's enums of op attributes (#gnn<reduce mean>) and the plans' enums
// (gnnc/Plan/Types.h) number their cases alike; describe() converts by value.
static_assert(static_cast<int>(gnn::Reduce::max) ==
                  static_cast<int>(gnnc::Reduce::Max) &&
              static_cast<int>(gnn::Reduce::mean) ==
                  static_cast<int>(gnnc::Reduce::Mean));
static_assert(static_cast<int>(gnn::DegreeScale::both) ==
                  static_cast<int>(gnnc::DegreeScale::Both) &&
              static_cast<int>(gnn::DegreeScale::right) ==
                  static_cast<int>(gnnc::DegreeScale::Right) &&
              static_cast<int>(gnn::DegreeScale::left) ==
                  static_cast<int>(gnnc::DegreeScale::Left));
static_assert(static_cast<int>(gnn::SddmmForm::add) ==
              static_cast<int>(gnnc::SddmmForm::Add));
static_assert(static_cast<int>(gnn::Activation::relu) ==
              static_cast<int>(gnnc::Activation::Relu));

/// The OpDesc fields every op shares: its graph's index widths, element
/// type and width.
static OpDesc describeCommon(OpKind kind, Value graph, Type elementType,
                             int64_t width) {
  OpDesc desc;
  desc.kind = kind;
  auto graphType = cast<GnnGraphType>(graph.getType());
  desc.offsets64 = graphType.getOffsetType().getWidth() == 64;
  desc.batchedGraph = graphType.getFormat() == GraphFormat::batched_csr;
  desc.indices64 = graphType.getIndexType().getWidth() == 64;
  // The verifier of each op restricts its tensors to f32, f16 and bf16.
  FailureOr<gnnc::ElementType> type = elementTypeOf(elementType);
  desc.type = succeeded(type) ? *type : gnnc::ElementType::F32;
  desc.width = width;
  desc.rowStride = width;
  return desc;
}

LogicalResult SpmmOp::verify() {
  auto graphType = cast<GnnGraphType>(getGraph().getType());
  const GraphFormat format = graphType.getFormat();
  if (format != GraphFormat::csr && format != GraphFormat::batched_csr &&
      format != GraphFormat::snapshot_csr)
    return emitOpError() << "graph format '" << stringifyGraphFormat(format)
                         << "' is not supported by gnn.spmm yet; use csr, "
                            "batched_csr or snapshot_csr";
  auto features = cast<RankedTensorType>(getFeatures().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if ((getBias() || getActivationAttr() || getTransposeWeights()) &&
      !getWeight())
    return emitOpError() << "bias, activation and transpose_weights belong to "
                            "a linear epilogue; give its weight(...) too";
  if (getWeight() && format != GraphFormat::batched_csr)
    return emitOpError() << "a linear epilogue (weight) runs over a batch of "
                            "graphs; the graph must be a "
                            "!gnn.graph<batched_csr, ...>";
  if (format == GraphFormat::snapshot_csr) {
    // A group of snapshots: nodes x snapshots x features of one snapshot.
    if (features.getRank() != 3 || features.isDynamicDim(1) ||
        features.isDynamicDim(2) || features.getDimSize(1) < 1 ||
        features.getDimSize(2) < 1)
      return emitOpError() << "features over a group of snapshots must be a "
                              "3-D tensor (nodes x snapshots x feature width) "
                              "with static positive snapshots and width, got "
                           << features;
    if (features.getDimSize(1) > limits::kMaxSnapshots)
      return emitOpError() << "a group of snapshots holds at most "
                           << limits::kMaxSnapshots << " snapshots, got "
                           << features.getDimSize(1);
    if (result.getRank() != 3 ||
        result.getElementType() != features.getElementType() ||
        result.getDimSize(1) != features.getDimSize(1) ||
        result.getDimSize(2) != features.getDimSize(2))
      return emitOpError() << "result " << result
                           << " must be a 3-D tensor with the element type, "
                              "snapshots and feature width of the features "
                           << features;
    if (features.getEncoding() || result.getEncoding())
      return emitOpError() << "features over a group of snapshots take no "
                              "encoding (their rows are unpadded)";
    if (getValues())
      return emitOpError() << "edge values over a group of snapshots are not "
                              "implemented";
    return verifySchedule(*this);
  }
  if (features.getRank() != 2)
    return emitOpError() << "features must be a 2-D tensor (nodes x feature "
                            "width), got "
                         << features
                         << (features.getRank() == 3
                                 ? " (3-D features take a "
                                   "!gnn.graph<snapshot_csr, ...>)"
                                 : "");
  if (features.isDynamicDim(1) || features.getDimSize(1) < 1)
    return emitOpError() << "feature width must be static and positive, got "
                         << features;
  if (Value weight = getWeight()) {
    // act(spmm(x) W + b): W is K x M (transposed: M x K), b M, the result
    // M wide.
    auto w = cast<RankedTensorType>(weight.getType());
    const int64_t k = features.getDimSize(1);
    const bool transposed = getTransposeWeights();
    const unsigned kDim = transposed ? 1 : 0;
    if (w.getRank() != 2 || !w.hasStaticShape() || w.getDimSize(kDim) != k ||
        w.getElementType() != features.getElementType() || w.getEncoding())
      return emitOpError() << "weight " << w << " must be a static 2-D tensor "
                           << (transposed ? "M x " + std::to_string(k)
                                          : std::to_string(k) + " x M")
                           << " of the features' element type "
                           << features.getElementType()
                           << (transposed ? " (transpose_weights)" : "");
    const int64_t m = w.getDimSize(1 - kDim);
    if (result.getRank() != 2 ||
        result.getElementType() != features.getElementType() ||
        result.getDimSize(1) != m)
      return emitOpError() << "result " << result
                           << " must be a 2-D tensor of the features' element "
                              "type and the weight's "
                           << m << " columns";
    if (Value bias = getBias()) {
      auto b = cast<RankedTensorType>(bias.getType());
      if (b.getRank() != 1 || b.getDimSize(0) != m ||
          b.getElementType() != features.getElementType())
        return emitOpError() << "bias " << b << " must be a 1-D tensor of " << m
                             << " " << features.getElementType();
    }
    if (features.getEncoding() || result.getEncoding())
      return emitOpError() << "a linear epilogue reads and writes unpadded "
                              "rows; drop the #gnn.rows encoding";
  } else if (result.getRank() != 2 ||
             result.getElementType() != features.getElementType() ||
             result.getDimSize(1) != features.getDimSize(1)) {
    return emitOpError() << "result " << result
                         << " must be a 2-D tensor with the element type "
                            "and feature width of the features "
                         << features;
  }
  for (RankedTensorType t : {features, result})
    if (t.getEncoding() && !isa<RowsAttr>(t.getEncoding()))
      return emitOpError() << "the only tensor encoding gnn.spmm knows is "
                              "#gnn.rows<stride = ...>, got "
                           << t;
  if (!getWeight() && rowStride(result) != rowStride(features))
    return emitOpError() << "result row stride " << rowStride(result)
                         << " differs from the features' row stride "
                         << rowStride(features)
                         << "; a gnn.spmm kernel has one row stride: give the "
                            "features and the result the same #gnn.rows "
                            "layout";
  if (Value values = getValues()) {
    auto valuesType = cast<RankedTensorType>(values.getType());
    if (valuesType.getRank() != 1 ||
        valuesType.getElementType() != features.getElementType())
      return emitOpError() << "edge values must be a 1-D tensor of "
                           << features.getElementType() << ", got "
                           << valuesType;
  }
  if (Value dst = getAttentionRows()) {
    for (Value scores : {dst, Value(getAttentionCols())}) {
      auto t = cast<RankedTensorType>(scores.getType());
      if (t.getRank() != 1 || t.getElementType() != features.getElementType() ||
          t.getEncoding())
        return emitOpError() << "attention scores must be 1-D tensors of "
                             << features.getElementType()
                             << " (one per row, one per column), got " << t;
    }
    if (format != GraphFormat::csr)
      return emitOpError() << "attention runs over a csr graph";
  }
  if (auto self = getSelfWeightAttr()) {
    if (getReduce() == Reduce::max)
      return emitOpError() << "self_weight applies to reduce = sum or mean, "
                              "not max";
    if (!std::isfinite(self.getValueAsDouble()))
      return emitOpError() << "self_weight must be finite";
  }
  if (auto exponent = getColNormExponentAttr()) {
    if (getScale() != DegreeScale::right && getScale() != DegreeScale::both)
      return emitOpError() << "col_norm_exponent sets the column factors of "
                              "scale = right or both, but scale is "
                           << stringifyDegreeScale(getScale());
    double p = exponent.getValueAsDouble();
    if (!std::isfinite(p) || p <= 0)
      return emitOpError() << "col_norm_exponent must be finite and positive, "
                              "got "
                           << p;
  }
  return verifySchedule(*this);
}

OpDesc SpmmOp::describe() {
  OpDesc desc = describeCommon(OpKind::Spmm, getGraph(), getElementType(),
                               getFeatureWidth());
  desc.rowStride = getRowStride();
  desc.snapshots = getSnapshots();
  desc.edgeValues = static_cast<bool>(getValues());
  desc.attention = static_cast<bool>(getAttentionRows());
  if (FloatAttr slope = getLeakyReluAttr())
    desc.leakyRelu = slope.getValueAsDouble();
  desc.reduce = static_cast<gnnc::Reduce>(getReduce());
  desc.scale = static_cast<gnnc::DegreeScale>(getScale());
  if (FloatAttr self = getSelfWeightAttr())
    desc.selfWeight = self.getValueAsDouble();
  if (FloatAttr exponent = getColNormExponentAttr())
    desc.colNormExponent = exponent.getValueAsDouble();
  if (Value weight = getWeight()) {
    desc.transposeWeights = getTransposeWeights();
    desc.linearWidth = cast<RankedTensorType>(weight.getType())
                           .getDimSize(desc.transposeWeights ? 0 : 1);
    desc.linearBias = static_cast<bool>(getBias());
    if (getActivation())
      desc.activation = static_cast<gnnc::Activation>(*getActivation());
  }
  return desc;
}

SmallVector<Value> SpmmOp::getInputs() {
  // The roles follow the positions (gnnc::inputRole).
  SmallVector<Value> inputs = {getFeatures()};
  if (Value dst = getAttentionRows()) {
    inputs.push_back(dst);
    inputs.push_back(getAttentionCols());
  }
  if (Value weight = getWeight())
    inputs.push_back(weight);
  if (Value bias = getBias())
    inputs.push_back(bias);
  return inputs;
}

//===----------------------------------------------------------------------===//
// SddmmOp
//===----------------------------------------------------------------------===//

int64_t SddmmOp::getFeatureWidth() {
  return cast<RankedTensorType>(getRowFeatures().getType()).getDimSize(1);
}

Type SddmmOp::getElementType() {
  return cast<RankedTensorType>(getRowFeatures().getType()).getElementType();
}

LogicalResult SddmmOp::verify() {
  auto graphType = cast<GnnGraphType>(getGraph().getType());
  if (graphType.getFormat() != GraphFormat::csr)
    return emitOpError() << "graph format '"
                         << stringifyGraphFormat(graphType.getFormat())
                         << "' is not supported by gnn.sddmm yet; use csr";
  auto a = cast<RankedTensorType>(getRowFeatures().getType());
  auto b = cast<RankedTensorType>(getColFeatures().getType());
  for (RankedTensorType t : {a, b})
    if (t.getRank() != 2 || t.isDynamicDim(1) || t.getDimSize(1) < 1)
      return emitOpError() << "features must be 2-D tensors with a static, "
                              "positive width, got "
                           << t;
  if (a.getElementType() != b.getElementType() ||
      a.getDimSize(1) != b.getDimSize(1))
    return emitOpError() << "row features " << a << " and column features " << b
                         << " must have the same element type and width";
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getElementType() != a.getElementType())
    return emitOpError() << "result element type " << result.getElementType()
                         << " differs from the features' "
                         << a.getElementType();
  if (getForm() == SddmmForm::dot && result.getRank() != 1)
    return emitOpError() << "form = dot gives one value per edge: the result "
                            "must be 1-D, got "
                         << result;
  if (getForm() == SddmmForm::add &&
      (result.getRank() != 2 || result.getDimSize(1) != a.getDimSize(1)))
    return emitOpError() << "form = add gives one value per edge and column: "
                            "the result must be 2-D with width "
                         << a.getDimSize(1) << ", got " << result;
  // (A slope that is not finite is refused by checkOpSizes, through
  // verifySchedule.)
  if (failed(verifyNoRowsLayout(*this)))
    return failure();
  return verifySchedule(*this);
}

OpDesc SddmmOp::describe() {
  OpDesc desc = describeCommon(OpKind::Sddmm, getGraph(), getElementType(),
                               getFeatureWidth());
  desc.form = static_cast<gnnc::SddmmForm>(getForm());
  if (FloatAttr slope = getLeakyReluAttr())
    desc.leakyRelu = slope.getValueAsDouble();
  return desc;
}

SmallVector<Value> SddmmOp::getInputs() {
  return {getRowFeatures(), getColFeatures()};
}

//===----------------------------------------------------------------------===//
// EdgeSoftmaxOp
//===----------------------------------------------------------------------===//

int64_t EdgeSoftmaxOp::getNumHeads() {
  auto logits = cast<RankedTensorType>(getLogits().getType());
  return logits.getRank() == 2 ? logits.getDimSize(1) : 1;
}

Type EdgeSoftmaxOp::getElementType() {
  return cast<RankedTensorType>(getLogits().getType()).getElementType();
}

LogicalResult EdgeSoftmaxOp::verify() {
  auto graphType = cast<GnnGraphType>(getGraph().getType());
  if (graphType.getFormat() != GraphFormat::csr)
    return emitOpError() << "graph format '"
                         << stringifyGraphFormat(graphType.getFormat())
                         << "' is not supported by gnn.edge_softmax yet; use "
                            "csr";
  auto logits = cast<RankedTensorType>(getLogits().getType());
  if (logits.getRank() < 1 || logits.getRank() > 2 ||
      (logits.getRank() == 2 &&
       (logits.isDynamicDim(1) || logits.getDimSize(1) < 1)))
    return emitOpError() << "logits must be a 1-D tensor (one value per edge) "
                            "or a 2-D tensor with a static, positive number "
                            "of heads, got "
                         << logits;
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getRank() != logits.getRank() ||
      result.getElementType() != logits.getElementType() ||
      (logits.getRank() == 2 && result.getDimSize(1) != logits.getDimSize(1)))
    return emitOpError() << "result " << result
                         << " must have the rank, element type and number of "
                            "heads of the logits "
                         << logits;
  if (failed(verifyNoRowsLayout(*this)))
    return failure();
  return verifySchedule(*this);
}

OpDesc EdgeSoftmaxOp::describe() {
  return describeCommon(OpKind::EdgeSoftmax, getGraph(), getElementType(),
                        getNumHeads());
}

SmallVector<Value> EdgeSoftmaxOp::getInputs() { return {getLogits()}; }

//===----------------------------------------------------------------------===//
// EdgeSoftmaxGradOp
//===----------------------------------------------------------------------===//

int64_t EdgeSoftmaxGradOp::getNumHeads() {
  auto out = cast<RankedTensorType>(getOutput().getType());
  return out.getRank() == 2 ? out.getDimSize(1) : 1;
}

Type EdgeSoftmaxGradOp::getElementType() {
  return cast<RankedTensorType>(getOutput().getType()).getElementType();
}

LogicalResult EdgeSoftmaxGradOp::verify() {
  auto graphType = cast<GnnGraphType>(getGraph().getType());
  if (graphType.getFormat() != GraphFormat::csr)
    return emitOpError() << "graph format '"
                         << stringifyGraphFormat(graphType.getFormat())
                         << "' is not supported by gnn.edge_softmax_grad yet; "
                            "use csr";
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (out.getRank() < 1 || out.getRank() > 2 ||
      (out.getRank() == 2 && (out.isDynamicDim(1) || out.getDimSize(1) < 1)))
    return emitOpError() << "the softmax output must be a 1-D tensor (one "
                            "value per edge) or a 2-D tensor with a static, "
                            "positive number of heads, got "
                         << out;
  if (getGradOutput().getType() != out)
    return emitOpError() << "the output gradient " << getGradOutput().getType()
                         << " must have the type of the softmax output " << out;
  if (getResult().getType() != out)
    return emitOpError() << "result " << getResult().getType()
                         << " must have the type of the softmax output " << out;
  if (failed(verifyNoRowsLayout(*this)))
    return failure();
  return verifySchedule(*this);
}

OpDesc EdgeSoftmaxGradOp::describe() {
  return describeCommon(OpKind::EdgeSoftmaxGrad, getGraph(), getElementType(),
                        getNumHeads());
}

SmallVector<Value> EdgeSoftmaxGradOp::getInputs() {
  return {getOutput(), getGradOutput()};
}

//===----------------------------------------------------------------------===//
// ReadoutOp, ReadoutGradOp
//===----------------------------------------------------------------------===//

/// The rules gnn.readout and gnn.readout_grad share: a batch of graphs, and
/// 2-D tensors of one element type and static width (`tensors`, the first
/// the features).
static LogicalResult verifyReadoutTypes(Operation *op, Value graph,
                                        ArrayRef<Type> tensors) {
  auto graphType = cast<GnnGraphType>(graph.getType());
  if (graphType.getFormat() != GraphFormat::batched_csr)
    return op->emitOpError() << "pools each graph of a batch: the graph must "
                                "be a !gnn.graph<batched_csr, ...>, got "
                             << graphType;
  auto features = cast<RankedTensorType>(tensors.front());
  for (Type type : tensors) {
    auto t = cast<RankedTensorType>(type);
    if (t.getRank() != 2 || t.isDynamicDim(1) || t.getDimSize(1) < 1)
      return op->emitOpError() << "tensors must be 2-D with a static, "
                                  "positive width, got "
                               << t;
    if (t.getElementType() != features.getElementType() ||
        t.getDimSize(1) != features.getDimSize(1))
      return op->emitOpError()
             << t << " must have the element type and width of the features "
             << features;
  }
  return verifyNoRowsLayout(op);
}

LogicalResult ReadoutOp::verify() {
  if (failed(verifyReadoutTypes(
          *this, getGraph(), {getFeatures().getType(), getResult().getType()})))
    return failure();
  return verifySchedule(*this);
}

OpDesc ReadoutOp::describe() {
  auto features = cast<RankedTensorType>(getFeatures().getType());
  OpDesc desc =
      describeCommon(OpKind::Readout, getGraph(), features.getElementType(),
                     features.getDimSize(1));
  desc.reduce = static_cast<gnnc::Reduce>(getReduce());
  return desc;
}

SmallVector<Value> ReadoutOp::getInputs() { return {getFeatures()}; }

LogicalResult ReadoutGradOp::verify() {
  if (failed(verifyReadoutTypes(*this, getGraph(),
                                {getFeatures().getType(), getOutput().getType(),
                                 getGradOutput().getType(),
                                 getResult().getType()})))
    return failure();
  return verifySchedule(*this);
}

OpDesc ReadoutGradOp::describe() {
  auto features = cast<RankedTensorType>(getFeatures().getType());
  OpDesc desc =
      describeCommon(OpKind::ReadoutGrad, getGraph(), features.getElementType(),
                     features.getDimSize(1));
  desc.reduce = static_cast<gnnc::Reduce>(getReduce());
  return desc;
}

SmallVector<Value> ReadoutGradOp::getInputs() {
  return {getFeatures(), getOutput(), getGradOutput()};
}

//===----------------------------------------------------------------------===//
// PlanAttr
//===----------------------------------------------------------------------===//

PlanAttr gnnc::gnn::getPlanAttr(MLIRContext *context, const KernelPlan &plan) {
  const ThreadMapping &m = plan.mapping;
  return PlanAttr::get(context, m.lanes, m.rowsPerBlock, m.vectorWidth,
                       m.chunks, m.chunksPerLane, m.edgeUnroll, m.packed,
                       m.itemsPerWorker, m.groupSize, m.edgeGroups,
                       m.rowEndsBytes, plan.atomicPieceEdges, m.columnChunks);
}

ThreadMapping gnnc::gnn::threadMapping(PlanAttr attr) {
  ThreadMapping m;
  m.lanes = attr.getLanes();
  m.rowsPerBlock = attr.getRowsPerBlock();
  m.vectorWidth = attr.getVectorWidth();
  m.chunks = attr.getChunks();
  m.chunksPerLane = attr.getChunksPerLane();
  m.edgeUnroll = attr.getEdgeUnroll();
  m.packed = attr.getPacked();
  m.itemsPerWorker = attr.getItemsPerWorker();
  m.groupSize = attr.getGroupSize();
  m.edgeGroups = attr.getEdgeGroups();
  m.rowEndsBytes = attr.getRowEndsBytes();
  m.columnChunks = attr.getColumnChunks();
  return m;
}
