//===- KernelInfo.h - What a compiled kernel computes and takes -*- C++ -*-===//
//
// Every kernel gnnc compiles carries a typed description of its op
// (KernelSpec::op, gnnc::OpDesc) and the role of each parameter. The host
// ops read the description through kernelOp, which says clearly when a
// kernel is of another op, and bind their arguments by role, so that
// renamed parameters work.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_OPS_KERNELINFO_H
#define GNNC_OPS_KERNELINFO_H

#include "gnnc/Plan/Types.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/runtime/KernelSpec.h"
#include "gnnc/runtime/Runtime.h"
#include "gnnc/runtime/Status.h"

namespace gnnc::ops {

/// What `spec` computes, when it is a kernel of `kind`; otherwise an error
/// naming the kernel and what it is.
Expected<OpDesc> kernelOp(const rt::KernelSpec &spec, OpKind kind);

/// The arguments of `spec` that come from `graph`, by role: its row
/// offsets, column indices and number of rows, and its number of edges
/// when the kernel takes it.
rt::ArgPack graphArguments(const rt::KernelSpec &spec,
                           const DeviceGraph &graph);

} // namespace gnnc::ops

#endif // GNNC_OPS_KERNELINFO_H
