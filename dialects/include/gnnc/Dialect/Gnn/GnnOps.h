//===- GnnOps.h - Operations of the gnn dialect -----------------*- C++ -*-===//
#ifndef GNNC_DIALECT_GNN_GNNOPS_H
#define GNNC_DIALECT_GNN_GNNOPS_H

#include "gnnc/Dialect/Gnn/GnnDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "gnnc/Dialect/Gnn/GnnOps.h.inc"

namespace gnnc::gnn {

/// Whether kernels keep loaded feature vectors of `elementType` packed (raw
/// 16-bit words, `vectorWidth` >= 2) until they use them, instead of
/// widening them to floats on arrival. The lowering sizes what depends on
/// it (an edge-parallel sddmm's shared row ends); the CUDA printer prints
/// it.
bool keepsVectorsPacked(mlir::Type elementType, int64_t vectorWidth);

/// The row stride of a 2-D tensor `type`: the stride of its `#gnn.rows`
/// encoding, or its width (dimension 1) without one.
int64_t rowStride(mlir::RankedTensorType type);

/// Whether `type` is a ranked tensor with a `#gnn.rows` encoding.
bool hasRowsLayout(mlir::Type type);

} // namespace gnnc::gnn

#endif // GNNC_DIALECT_GNN_GNNOPS_H
