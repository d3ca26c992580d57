//===- GnnDialect.h - The gnn dialect ---------------------------*- C++ -*-===//
#ifndef GNNC_DIALECT_GNN_GNNDIALECT_H
#define GNNC_DIALECT_GNN_GNNDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TensorEncoding.h"

#include "gnnc/Plan/Abi.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/Plan/Schedule.h"
#include "gnnc/Plan/Types.h"

#include "llvm/ADT/Hashing.h"

namespace gnnc {
/// Hashes a schedule (the storage of #gnn.schedule).
llvm::hash_code hash_value(const Schedule &schedule);
/// Prints a parameter role by its manifest spelling (#gnn.param).
mlir::AsmPrinter &operator<<(mlir::AsmPrinter &printer, ParamRole role);
} // namespace gnnc

namespace mlir {
/// Parses a parameter role from its manifest spelling (#gnn.param).
template <> struct FieldParser<::gnnc::ParamRole> {
  static FailureOr<::gnnc::ParamRole> parse(AsmParser &parser);
};
} // namespace mlir

namespace gnnc::gnn {
/// `[role, role, ...]`, the grid and workspace counts of #gnn.launch and
/// #gnn.workspace.
void printRoleList(mlir::AsmPrinter &printer, llvm::ArrayRef<ParamRole> roles);
mlir::FailureOr<llvm::SmallVector<ParamRole>>
parseRoleList(mlir::AsmParser &parser);
} // namespace gnnc::gnn

#include "gnnc/Dialect/Gnn/GnnDialect.h.inc"
#include "gnnc/Dialect/Gnn/GnnEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "gnnc/Dialect/Gnn/GnnTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "gnnc/Dialect/Gnn/GnnAttrs.h.inc"

#endif // GNNC_DIALECT_GNN_GNNDIALECT_H
