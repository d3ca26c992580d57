//===- GnnOps.h - Operations of the gnn dialect -----------------*- C++ -*-===//
#ifndef GNNC_DIALECT_GNN_GNNOPS_H
#define GNNC_DIALECT_GNN_GNNOPS_H

#include "dialects/gnn/GnnDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/gnn/GnnOps.h.inc"

#endif // GNNC_DIALECT_GNN_GNNOPS_H
