//===- EdgeSoftmax.h - Host side of compiled edge softmax -------*- C++ -*-===//
#ifndef GNNC_OPS_EDGESOFTMAX_H
#define GNNC_OPS_EDGESOFTMAX_H

#include "gnnc/ops/Spmm.h"

namespace gnnc::ops {

// What a compiled gnn.edge_softmax kernel expects is its op description:
// kernelOp(spec, OpKind::EdgeSoftmax) (gnnc/ops/KernelInfo.h), whose width
// is the number of values per edge (1 for 1-D logits).

/// Launches a compiled edge softmax kernel: graph parameters with the default
/// names, then the logits and output parameters of its signature, on
/// `stream` (a CUstream; null: the default stream).
Status launchEdgeSoftmax(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                         const DeviceGraph &graph,
                         const rt::DeviceBuffer &logits, rt::DeviceBuffer &out,
                         bool synchronize = true, void *stream = nullptr);

/// The largest error allowed in an edge softmax output of `type`. Outputs
/// lie in [0, 1]: the bound is absolute (relative to 1), the tolerance of
/// `type` (spmmTolerance).
double edgeSoftmaxTolerance(ElementType type);

/// Runs `kernel` on `g` with random logits in [-8, 8] drawn from `seed` (and
/// rounded to the kernel's type) and a NaN-poisoned output, and checks every
/// output against the double-precision reference within
/// edgeSoftmaxTolerance.
Expected<KernelCheck> checkEdgeSoftmax(rt::Runtime &runtime,
                                       const rt::LoadedKernel &kernel,
                                       const graph::CsrGraph &g, uint64_t seed);

} // namespace gnnc::ops

#endif // GNNC_OPS_EDGESOFTMAX_H
