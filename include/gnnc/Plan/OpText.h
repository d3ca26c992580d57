//===- OpText.h - One op as .gnn text ---------------------------*- C++ -*-===//
//
// The `.gnn` text of a kernel holding one op described by an OpDesc (and,
// optionally, its schedule): what a host that starts from a typed
// description (the C interface, the host ops) hands to the compiler. The
// text says only what the OpDesc says; whether it is legal is for the
// compiler's verifiers and the kernel plans to decide. Plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_PLAN_OPTEXT_H
#define GNNC_PLAN_OPTEXT_H

#include "gnnc/Plan/Schedule.h"
#include "gnnc/Plan/Types.h"

#include <optional>
#include <string>

namespace gnnc {

/// The names `opKernelText` gives the kernel's parameters (without `%`),
/// in the order the op takes its operands: the graph, then the inputs
/// (spmm: features, edge values; sddmm: row features, column features; edge
/// softmax: logits; its gradient: the softmax output and the gradient of
/// the loss with respect to it; segment_matmul, which takes no graph: the
/// input rows, the weights, then `%seg`, the segment offsets).
struct OpTextNames {
  std::string graph = "g";
  std::string input0 = "x";
  std::string input1 = "w";
};

/// `gnn.kernel @name(...) { ... }` computing `op` over a CSR graph with the
/// op's offset and index widths (lines indented for a gnn.module body), with
/// `#gnn.schedule<...>` set to `schedule` when given. A spmm's padded rows
/// (`rowStride` other than 0 and the width) become `#gnn.rows<stride = ...>`
/// on its features and result. A spmm over a group of snapshots
/// (`snapshots` > 0; `width` is snapshots x F) takes a
/// `!gnn.graph<snapshot_csr, ...>` and features `tensor<?x S x F x ...>`.
/// Floating-point attributes are printed so that they read back as the same
/// f32.
std::string opKernelText(const std::string &name, const OpDesc &op,
                         const std::optional<Schedule> &schedule,
                         const OpTextNames &names = {});

/// `gnn.module @moduleName { <opKernelText> }`.
std::string opModuleText(const std::string &moduleName,
                         const std::string &kernelName, const OpDesc &op,
                         const std::optional<Schedule> &schedule);

} // namespace gnnc

#endif // GNNC_PLAN_OPTEXT_H
