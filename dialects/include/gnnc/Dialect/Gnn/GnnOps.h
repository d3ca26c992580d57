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

#include "gnnc/Dialect/Gnn/GnnInterfaces.h.inc"

#define GET_OP_CLASSES
#include "gnnc/Dialect/Gnn/GnnOps.h.inc"

namespace gnnc::gnn {

/// The element type of `type` (f32, f16 or bf16) as the kernel plans name
/// it; fails for any other type.
mlir::FailureOr<ElementType> elementTypeOf(mlir::Type type);

/// The #gnn.plan attribute of `plan`'s thread mapping, and back.
PlanAttr getPlanAttr(mlir::MLIRContext *context, const KernelPlan &plan);
ThreadMapping threadMapping(PlanAttr attr);

/// The row stride of a 2-D tensor `type`: the stride of its `#gnn.rows`
/// encoding, or its width (dimension 1) without one.
int64_t rowStride(mlir::RankedTensorType type);

/// Whether `type` is a ranked tensor with a `#gnn.rows` encoding.
bool hasRowsLayout(mlir::Type type);

} // namespace gnnc::gnn

#endif // GNNC_DIALECT_GNN_GNNOPS_H
