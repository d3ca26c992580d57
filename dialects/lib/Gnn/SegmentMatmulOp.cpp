//===- SegmentMatmulOp.cpp - gnn.segment_matmul and its weight gradient ---===//
//
// Y_t = X_t W_t (or X_t W_tᵀ) and dW_t = X_tᵀ dY_t: the verifiers of
// gnn.segment_matmul's and gnn.segment_matmul_weight_grad's shapes and
// element types, and their descriptions for the kernel plans.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Dialect/Gnn/GnnOps.h"

using namespace mlir;
using namespace gnnc;
using namespace gnnc::gnn;

namespace {

/// What both ops check last: the segment offsets hold one entry per type of
/// `perType` (types x K x M) plus one, the sizes fit a kernel, and a written
/// schedule is legal for the op.
LogicalResult verifySegmentsAndPlan(Operation *op, RankedTensorType seg,
                                    RankedTensorType perType,
                                    const char *matrix, const OpDesc &desc,
                                    ScheduleAttr schedule) {
  if (!seg.isDynamicDim(0) && seg.getDimSize(0) < 1)
    return op->emitOpError()
           << "segment offsets need num_types + 1 >= 1 entries, got " << seg;
  if (!seg.isDynamicDim(0) && !perType.isDynamicDim(0) &&
      seg.getDimSize(0) != perType.getDimSize(0) + 1)
    return op->emitOpError()
           << "segment offsets must hold num_types + 1 = "
           << perType.getDimSize(0) + 1 << " entries (one " << matrix
           << " matrix per type), got " << seg.getDimSize(0);
  if (Status sizes = checkOpSizes(desc); !sizes)
    return op->emitOpError() << sizes.message();
  if (schedule)
    if (Status status = checkSchedule(desc, schedule.getValue()); !status)
      return op->emitOpError() << status.message();
  return success();
}

} // namespace

LogicalResult SegmentMatmulOp::verify() {
  auto x = cast<RankedTensorType>(getInput().getType());
  auto w = cast<RankedTensorType>(getWeights().getType());
  auto seg = cast<RankedTensorType>(getSegments().getType());
  auto y = cast<RankedTensorType>(getResult().getType());
  for (Type type : {Type(x), Type(w), Type(seg), Type(y)})
    if (hasRowsLayout(type))
      return emitOpError() << "padded rows (#gnn.rows) are not implemented for "
                              "gnn.segment_matmul; got "
                           << type;
  if (x.getRank() != 2 || x.isDynamicDim(1))
    return emitOpError() << "input must be 2-D (rows x K) with a static K, got "
                         << x;
  if (w.getRank() != 3 || w.isDynamicDim(1) || w.isDynamicDim(2))
    return emitOpError() << "weights must be 3-D (types x K x M) with static K "
                            "and M, got "
                         << w;
  if (seg.getRank() != 1)
    return emitOpError() << "segment offsets must be 1-D (types + 1), got "
                         << seg;
  if (y.getRank() != 2 || y.isDynamicDim(1))
    return emitOpError()
           << "result must be 2-D (rows x M) with a static M, got " << y;
  if (w.getElementType() != x.getElementType() ||
      y.getElementType() != x.getElementType())
    return emitOpError() << "input, weights and result must have one element "
                            "type, got "
                         << x.getElementType() << ", " << w.getElementType()
                         << " and " << y.getElementType();
  // Y = X W: X has K columns, Y M; Y = X Wᵀ: X has M columns, Y K.
  const bool transposed = getTransposeWeights();
  const int64_t in = w.getDimSize(transposed ? 2 : 1);
  const int64_t out = w.getDimSize(transposed ? 1 : 2);
  const char *inName = transposed ? "M" : "K",
             *outName = transposed ? "K" : "M";
  if (in != x.getDimSize(1))
    return emitOpError() << "weights' " << inName << " (" << in
                         << ") differs from the input's width ("
                         << x.getDimSize(1) << ")"
                         << (transposed ? " (transpose_weights)" : "");
  if (y.getDimSize(1) != out)
    return emitOpError() << "result's width (" << y.getDimSize(1)
                         << ") differs from the weights' " << outName << " ("
                         << out << ")"
                         << (transposed ? " (transpose_weights)" : "");
  if (!x.isDynamicDim(0) && !y.isDynamicDim(0) &&
      x.getDimSize(0) != y.getDimSize(0))
    return emitOpError() << "result has " << y.getDimSize(0)
                         << " rows, the input " << x.getDimSize(0);
  return verifySegmentsAndPlan(*this, seg, w, "weight", describe(),
                               getScheduleAttr());
}

OpDesc SegmentMatmulOp::describe() {
  auto x = cast<RankedTensorType>(getInput().getType());
  auto y = cast<RankedTensorType>(getResult().getType());
  // The verifier restricts the tensors to f32, f16 and bf16.
  FailureOr<gnnc::ElementType> type = elementTypeOf(x.getElementType());
  OpDesc desc =
      segmentMatmulOp(succeeded(type) ? *type : gnnc::ElementType::F32,
                      x.getDimSize(1), y.getDimSize(1));
  desc.transposeWeights = getTransposeWeights();
  return desc;
}

LogicalResult SegmentMatmulWeightGradOp::verify() {
  auto x = cast<RankedTensorType>(getInput().getType());
  auto dy = cast<RankedTensorType>(getOutputGrad().getType());
  auto seg = cast<RankedTensorType>(getSegments().getType());
  auto dw = cast<RankedTensorType>(getResult().getType());
  for (Type type : {Type(x), Type(dy), Type(seg), Type(dw)})
    if (hasRowsLayout(type))
      return emitOpError() << "padded rows (#gnn.rows) are not implemented for "
                              "gnn.segment_matmul_weight_grad; got "
                           << type;
  if (x.getRank() != 2 || x.isDynamicDim(1))
    return emitOpError() << "input must be 2-D (rows x K) with a static K, got "
                         << x;
  if (dy.getRank() != 2 || dy.isDynamicDim(1))
    return emitOpError() << "output gradient must be 2-D (rows x M) with a "
                            "static M, got "
                         << dy;
  if (seg.getRank() != 1)
    return emitOpError() << "segment offsets must be 1-D (types + 1), got "
                         << seg;
  if (dw.getRank() != 3 || dw.isDynamicDim(1) || dw.isDynamicDim(2))
    return emitOpError() << "result must be 3-D (types x K x M) with static K "
                            "and M, got "
                         << dw;
  if (dy.getElementType() != x.getElementType() ||
      dw.getElementType() != x.getElementType())
    return emitOpError() << "input, output gradient and result must have one "
                            "element type, got "
                         << x.getElementType() << ", " << dy.getElementType()
                         << " and " << dw.getElementType();
  if (dw.getDimSize(1) != x.getDimSize(1) ||
      dw.getDimSize(2) != dy.getDimSize(1))
    return emitOpError() << "result must be types x " << x.getDimSize(1)
                         << " x " << dy.getDimSize(1)
                         << " (the input's and the output gradient's widths), "
                            "got "
                         << dw;
  if (!x.isDynamicDim(0) && !dy.isDynamicDim(0) &&
      x.getDimSize(0) != dy.getDimSize(0))
    return emitOpError() << "output gradient has " << dy.getDimSize(0)
                         << " rows, the input " << x.getDimSize(0);
  return verifySegmentsAndPlan(*this, seg, dw, "result", describe(),
                               getScheduleAttr());
}

OpDesc SegmentMatmulWeightGradOp::describe() {
  auto x = cast<RankedTensorType>(getInput().getType());
  auto dy = cast<RankedTensorType>(getOutputGrad().getType());
  // The verifier restricts the tensors to f32, f16 and bf16.
  FailureOr<gnnc::ElementType> type = elementTypeOf(x.getElementType());
  return segmentMatmulWeightGradOp(succeeded(type) ? *type
                                                   : gnnc::ElementType::F32,
                                   x.getDimSize(1), dy.getDimSize(1));
}
