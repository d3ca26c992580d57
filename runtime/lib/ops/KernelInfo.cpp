//===- KernelInfo.cpp - What a compiled kernel computes and takes ---------===//
#include "gnnc/ops/KernelInfo.h"

using namespace gnnc;
using namespace gnnc::ops;

Expected<OpDesc> gnnc::ops::kernelOp(const rt::KernelSpec &spec, OpKind kind) {
  if (!spec.op)
    return Status::error("kernel '" + spec.name +
                         "' has no op description; is it a " +
                         opKindName(kind) + " kernel compiled by gnnc?");
  if (spec.op->kind != kind)
    return Status::error("kernel '" + spec.name + "' is a " +
                         opKindName(spec.op->kind) + " kernel, not a " +
                         opKindName(kind) + " kernel");
  return *spec.op;
}

rt::ArgPack gnnc::ops::graphArguments(const rt::KernelSpec &spec,
                                      const DeviceGraph &graph) {
  rt::ArgPack args;
  args.bind(ParamRole::RowOffsets, graph.rowPtr)
      .bind(ParamRole::ColumnIndices, graph.colIdx)
      .bind(ParamRole::NumRows, static_cast<int64_t>(graph.numRows));
  if (spec.findRole(ParamRole::NumEdges))
    args.bind(ParamRole::NumEdges, static_cast<int64_t>(graph.nnz));
  return args;
}
