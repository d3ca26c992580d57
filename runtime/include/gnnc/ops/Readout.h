//===- Readout.h - Host side of per-graph pooling ---------------*- C++ -*-===//
//
// Launches and checks the compiled gnn.readout and gnn.readout_grad kernels
// on a batch uploaded with ops::uploadBatch. What a kernel expects is its
// op description: kernelOp(spec, OpKind::Readout) (gnnc/ops/KernelInfo.h).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_OPS_READOUT_H
#define GNNC_OPS_READOUT_H

#include "gnnc/ops/Spmm.h"

namespace gnnc::ops {

/// Launches a gnn.readout kernel: `x` (a row per node) to `y` (a row per
/// graph). Fails, without launching, on a graph that is no batch.
Status launchReadout(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                     const DeviceGraph &batch, const rt::DeviceBuffer &x,
                     rt::DeviceBuffer &y, bool synchronize = true,
                     void *stream = nullptr);

/// Launches a gnn.readout_grad kernel: the forward's `x` and `y` (read for
/// max) and the output gradient `dy` (a row per graph) to `dx` (a row per
/// node).
Status launchReadoutGrad(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                         const DeviceGraph &batch, const rt::DeviceBuffer &x,
                         const rt::DeviceBuffer &y, const rt::DeviceBuffer &dy,
                         rt::DeviceBuffer &dx, bool synchronize = true,
                         void *stream = nullptr);

/// Runs a gnn.readout or gnn.readout_grad kernel on `batch` with random
/// inputs drawn from `seed` (for the gradient of max, `y` is the forward's
/// exact maximum) and a NaN-poisoned output, and compares every output with
/// the double-precision reference.
Expected<KernelCheck> checkReadout(rt::Runtime &runtime,
                                   const rt::LoadedKernel &kernel,
                                   const graph::BatchedGraph &batch,
                                   uint64_t seed);

} // namespace gnnc::ops

#endif // GNNC_OPS_READOUT_H
