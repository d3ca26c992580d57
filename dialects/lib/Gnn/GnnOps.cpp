//===- GnnOps.cpp - Operations of the gnn dialect -------------------------===//
#include "gnnc/Dialect/Gnn/GnnOps.h"
#include "gnnc/Dialect/Gnn/KernelLimits.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
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
    if (!tensor || tensor.getRank() < 1 || tensor.getRank() > 2)
      return emitOpError() << "argument #" << i
                           << " must be a !gnn.graph or a ranked tensor of "
                              "rank 1 or 2, got "
                           << type;
  }
  for (auto [i, type] : llvm::enumerate(getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || tensor.getRank() < 1 || tensor.getRank() > 2)
      return emitOpError() << "result #" << i
                           << " must be a ranked tensor of rank 1 or 2, got "
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
  return cast<RankedTensorType>(getFeatures().getType()).getDimSize(1);
}

int64_t SpmmOp::getRowStride() {
  return rowStride(cast<RankedTensorType>(getFeatures().getType()));
}

Type SpmmOp::getElementType() {
  return cast<RankedTensorType>(getFeatures().getType()).getElementType();
}

/// Most edges one edge-parallel worker may take.

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

/// Checks that `schedule` is one `op` can run today on `elementType`
/// features of width `width` stored with row stride `stride` (the width
/// unless the op has padded rows), and says why not otherwise. gnn.spmm
/// (`spmm`) and gnn.sddmm (`edgeParallel`) have an edge_parallel schedule;
/// only gnn.spmm has f16 accumulation, discretized reduction (SpmmOp::verify
/// checks those two) and padded rows.
static LogicalResult verifyVertexSchedule(Operation *op, ScheduleAttr schedule,
                                          Type elementType, int64_t width,
                                          int64_t stride, bool spmm = false,
                                          bool edgeParallel = false) {
  Strategy strategy = schedule.getStrategy();
  edgeParallel |= spmm;
  bool edge = edgeParallel && strategy == Strategy::edge_parallel;
  bool groups = spmm && strategy == Strategy::neighbor_group;
  if (strategy != Strategy::vertex_parallel && !edge && !groups)
    return op->emitOpError()
           << "schedule strategy '" << stringifyStrategy(strategy)
           << "' is not implemented for " << op->getName()
           << " yet; implemented: vertex_parallel"
           << (edgeParallel ? ", edge_parallel" : "")
           << (spmm ? ", neighbor_group" : "");
  if (!spmm && schedule.getDiscBatch() != 0)
    return op->emitOpError()
           << "discretized reduction (disc_batch = " << schedule.getDiscBatch()
           << ") is not implemented for " << op->getName()
           << "; use disc_batch = 0";
  if (!spmm && schedule.getAccumulate() != Accumulate::f32)
    return op->emitOpError() << "accumulate = f16 is not implemented for "
                             << op->getName() << "; it accumulates in f32";
  if (edge) {
    int32_t e = schedule.getEdgesPerWarp();
    if (e != 0 && (e < 8 || e > gnnc::limits::kMaxEdgesPerWorker))
      return op->emitOpError()
             << "edges_per_warp must be from 8 to "
             << gnnc::limits::kMaxEdgesPerWorker << " (0 = choose), got " << e;
    if ((schedule.getWrite() == WriteMode::atomic ||
         schedule.getWrite() == WriteMode::shared) &&
        !spmm)
      return op->emitOpError()
             << "write = " << stringifyWriteMode(schedule.getWrite())
             << " applies to gnn.spmm; " << op->getName()
             << " writes each edge's value once (use write = staged)";
  } else if (groups) {
    int32_t g = schedule.getGroupSize();
    if (g != 0 && (g < 1 || g > gnnc::limits::kMaxEdgesPerWorker))
      return op->emitOpError()
             << "group_size must be from 1 to "
             << gnnc::limits::kMaxEdgesPerWorker << " (0 = choose), got " << g;
    if (schedule.getWrite() == WriteMode::staged ||
        schedule.getWrite() == WriteMode::shared)
      return op->emitOpError()
             << "neighbor_group adds the rows that span blocks to the result "
                "atomically: use write = atomic (or leave it out)";
  } else if (schedule.getWrite() != WriteMode::direct) {
    return op->emitOpError()
           << "write = " << stringifyWriteMode(schedule.getWrite())
           << " is not implemented yet; vertex_parallel "
              "writes each row directly";
  }
  int64_t vw = schedule.getVectorWidth();
  if (vw != 0) {
    int64_t bytes = vw * elementType.getIntOrFloatBitWidth() / 8;
    if (bytes > 16)
      return op->emitOpError()
             << "vector_width " << vw << " of " << elementType << " is "
             << bytes << " bytes; a GPU loads at most 16 bytes per thread";
    // Every row must start on a vector boundary: the row stride (the width
    // without padding) is a multiple of the vector width.
    if (stride != width && stride % vw != 0)
      return op->emitOpError()
             << "vector_width " << vw << " does not divide the row stride "
             << stride << " (feature width " << width
             << "); padded rows must start on vector boundaries: use a "
                "stride that is a multiple of "
             << vw << ", e.g. " << llvm::alignTo(width, vw);
    if (stride == width && width % vw != 0) {
      InFlightDiagnostic diag =
          op->emitOpError() << "vector_width " << vw
                            << " does not divide the feature width " << width;
      if (spmm) {
        std::string padded;
        llvm::raw_string_ostream(padded) << RankedTensorType::get(
            {ShapedType::kDynamic, width}, elementType,
            RowsAttr::get(op->getContext(), llvm::alignTo(width, vw)));
        diag << "; declare a padded row stride, e.g. " << padded;
      } else {
        diag << "; use a vector_width that divides it (padded rows are "
                "implemented for gnn.spmm only)";
      }
      return diag;
    }
  }
  return success();
}

LogicalResult SpmmOp::verify() {
  auto graphType = cast<GnnGraphType>(getGraph().getType());
  if (graphType.getFormat() != GraphFormat::csr)
    return emitOpError() << "graph format '"
                         << stringifyGraphFormat(graphType.getFormat())
                         << "' is not supported by gnn.spmm yet; use csr";
  auto features = cast<RankedTensorType>(getFeatures().getType());
  if (features.getRank() != 2)
    return emitOpError() << "features must be a 2-D tensor (nodes x feature "
                            "width), got "
                         << features;
  if (features.isDynamicDim(1) || features.getDimSize(1) < 1)
    return emitOpError() << "feature width must be static and positive, got "
                         << features;
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getRank() != 2 ||
      result.getElementType() != features.getElementType() ||
      result.getDimSize(1) != features.getDimSize(1))
    return emitOpError() << "result " << result
                         << " must be a 2-D tensor with the element type "
                            "and feature width of the features "
                         << features;
  for (RankedTensorType t : {features, result})
    if (t.getEncoding() && !isa<RowsAttr>(t.getEncoding()))
      return emitOpError() << "the only tensor encoding gnn.spmm knows is "
                              "#gnn.rows<stride = ...>, got "
                           << t;
  if (rowStride(result) != rowStride(features))
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
  ScheduleAttr schedule = getScheduleAttr();
  if (!schedule)
    return success();
  bool f16Acc = schedule.getAccumulate() == Accumulate::f16;
  if (f16Acc && !features.getElementType().isF16())
    return emitOpError() << "accumulate = f16 needs f16 features; "
                         << features.getElementType()
                         << " features accumulate in f32";
  if ((f16Acc || schedule.getDiscBatch() != 0) && getReduce() == Reduce::max)
    return emitOpError() << "accumulate = f16 and disc_batch apply to reduce "
                            "= sum or mean; max takes the largest term and "
                            "accumulates in f32";
  if (schedule.getStrategy() == Strategy::neighbor_group &&
      getReduce() == Reduce::max)
    return emitOpError() << "neighbor_group adds the rows that span blocks "
                            "with atomicAdd, which cannot take a maximum; use "
                            "vertex_parallel or edge_parallel with reduce = "
                            "max";
  if (schedule.getWrite() == WriteMode::atomic && getReduce() == Reduce::max)
    return emitOpError() << "write = atomic adds the pieces of split rows with "
                            "atomicAdd, which cannot take a maximum; use "
                            "write = staged with reduce = max";
  return verifyVertexSchedule(*this, schedule, features.getElementType(),
                              features.getDimSize(1), rowStride(features),
                              /*spmm=*/true);
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
  if (auto slope = getLeakyReluAttr())
    if (!std::isfinite(slope.getValueAsDouble()))
      return emitOpError() << "leaky_relu slope must be finite";
  if (failed(verifyNoRowsLayout(*this)))
    return failure();
  if (ScheduleAttr schedule = getScheduleAttr())
    return verifyVertexSchedule(*this, schedule, a.getElementType(),
                                a.getDimSize(1), a.getDimSize(1),
                                /*spmm=*/false,
                                /*edgeParallel=*/true);
  return success();
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
  if (ScheduleAttr schedule = getScheduleAttr())
    return verifyVertexSchedule(*this, schedule, logits.getElementType(),
                                getNumHeads(), getNumHeads());
  return success();
}

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
  if (ScheduleAttr schedule = getScheduleAttr())
    return verifyVertexSchedule(*this, schedule, out.getElementType(),
                                getNumHeads(), getNumHeads());
  return success();
}

bool gnnc::gnn::keepsVectorsPacked(Type elementType, int64_t vectorWidth) {
  return elementType.getIntOrFloatBitWidth() == 16 && vectorWidth >= 2;
}
