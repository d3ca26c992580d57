//===- GnnDialect.h - The gnn dialect ---------------------------*- C++ -*-===//
#ifndef GNNC_DIALECT_GNN_GNNDIALECT_H
#define GNNC_DIALECT_GNN_GNNDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TensorEncoding.h"

#include "gnnc/Dialect/Gnn/GnnDialect.h.inc"
#include "gnnc/Dialect/Gnn/GnnEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "gnnc/Dialect/Gnn/GnnTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "gnnc/Dialect/Gnn/GnnAttrs.h.inc"

#endif // GNNC_DIALECT_GNN_GNNDIALECT_H
