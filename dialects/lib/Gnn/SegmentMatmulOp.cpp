//===- SegmentMatmulOp.cpp - gnn.segment_matmul ---------------------------===//
//
// Y_t = X_t W_t: the verifier of gnn.segment_matmul's shapes and element
// types, and its description for the kernel plans.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Dialect/Gnn/GnnOps.h"

using namespace mlir;
using namespace gnnc;
using namespace gnnc::gnn;

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
  if (w.getDimSize(1) != x.getDimSize(1))
    return emitOpError() << "weights' K (" << w.getDimSize(1)
                         << ") differs from the input's K (" << x.getDimSize(1)
                         << ")";
  if (y.getDimSize(1) != w.getDimSize(2))
    return emitOpError() << "result's width (" << y.getDimSize(1)
                         << ") differs from the weights' M (" << w.getDimSize(2)
                         << ")";
  if (!x.isDynamicDim(0) && !y.isDynamicDim(0) &&
      x.getDimSize(0) != y.getDimSize(0))
    return emitOpError() << "result has " << y.getDimSize(0)
                         << " rows, the input " << x.getDimSize(0);
  if (!seg.isDynamicDim(0) && seg.getDimSize(0) < 1)
    return emitOpError() << "segment offsets need num_types + 1 >= 1 entries, "
                            "got "
                         << seg;
  if (!seg.isDynamicDim(0) && !w.isDynamicDim(0) &&
      seg.getDimSize(0) != w.getDimSize(0) + 1)
    return emitOpError() << "segment offsets must hold num_types + 1 = "
                         << w.getDimSize(0) + 1 << " entries (one weight "
                         << "matrix per type), got " << seg.getDimSize(0);
  OpDesc desc = describe();
  if (Status sizes = checkOpSizes(desc); !sizes)
    return emitOpError() << sizes.message();
  if (ScheduleAttr schedule = getScheduleAttr())
    if (Status status = checkSchedule(desc, schedule.getValue()); !status)
      return emitOpError() << status.message();
  return success();
}

OpDesc SegmentMatmulOp::describe() {
  auto x = cast<RankedTensorType>(getInput().getType());
  auto y = cast<RankedTensorType>(getResult().getType());
  // The verifier restricts the tensors to f32, f16 and bf16.
  FailureOr<gnnc::ElementType> type = elementTypeOf(x.getElementType());
  return segmentMatmulOp(succeeded(type) ? *type : gnnc::ElementType::F32,
                         x.getDimSize(1), y.getDimSize(1));
}
