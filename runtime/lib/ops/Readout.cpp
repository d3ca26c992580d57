//===- Readout.cpp - Host side of per-graph pooling -----------------------===//
#include "gnnc/ops/Readout.h"

#include "gnnc/ops/KernelInfo.h"
#include "gnnc/reference/Readout.h"

#include <cmath>

using namespace gnnc;
using namespace gnnc::ops;

namespace {

rt::ArgPack batchArguments(const rt::LoadedKernel &kernel,
                           const DeviceGraph &batch) {
  rt::ArgPack args = graphArguments(kernel.spec, batch);
  args.bind(ParamRole::GraphOffsets, batch.graphPtr)
      .bind(ParamRole::NumGraphs, batch.numGraphs);
  return args;
}

Status needBatch(const rt::LoadedKernel &kernel, const DeviceGraph &batch) {
  if (batch.batched)
    return Status::ok();
  return Status::error("kernel '" + kernel.spec.name +
                       "' pools each graph of a batch (batched_csr); upload "
                       "the graph with ops::uploadBatch");
}

} // namespace

Status gnnc::ops::launchReadout(rt::Runtime &runtime,
                                const rt::LoadedKernel &kernel,
                                const DeviceGraph &batch,
                                const rt::DeviceBuffer &x, rt::DeviceBuffer &y,
                                bool synchronize, void *stream) {
  GNNC_RETURN_IF_ERROR(needBatch(kernel, batch));
  rt::ArgPack args = batchArguments(kernel, batch);
  args.bind(ParamRole::Input, x, 0).bind(ParamRole::Result, y);
  return runtime.launch(kernel, args, synchronize, stream);
}

Status gnnc::ops::launchReadoutGrad(
    rt::Runtime &runtime, const rt::LoadedKernel &kernel,
    const DeviceGraph &batch, const rt::DeviceBuffer &x,
    const rt::DeviceBuffer &y, const rt::DeviceBuffer &dy, rt::DeviceBuffer &dx,
    bool synchronize, void *stream) {
  GNNC_RETURN_IF_ERROR(needBatch(kernel, batch));
  rt::ArgPack args = batchArguments(kernel, batch);
  args.bind(ParamRole::Input, x, 0)
      .bind(ParamRole::Input, y, 1)
      .bind(ParamRole::Input, dy, 2)
      .bind(ParamRole::Result, dx);
  return runtime.launch(kernel, args, synchronize, stream);
}

Expected<KernelCheck> gnnc::ops::checkReadout(rt::Runtime &runtime,
                                              const rt::LoadedKernel &kernel,
                                              const graph::BatchedGraph &batch,
                                              uint64_t seed) {
  if (!kernel.spec.op)
    return Status::error("kernel '" + kernel.spec.name +
                         "' has no op description");
  const OpDesc op = *kernel.spec.op;
  if (op.kind != OpKind::Readout && op.kind != OpKind::ReadoutGrad)
    return Status::error("kernel '" + kernel.spec.name +
                         "' is no gnn.readout or gnn.readout_grad");
  const bool grad = op.kind == OpKind::ReadoutGrad;
  const int64_t width = op.width, nodes = batch.graph.numRows,
                graphs = batch.numGraphs();
  std::vector<float> x =
      ref::roundThrough(ref::randomFeatures(nodes * width, seed), op.type);
  auto dg = uploadBatch(batch, op.offsets64, op.indices64);
  if (!dg)
    return dg.status();
  auto dx = uploadTensor(x, op.type);
  if (!dx)
    return dx.status();
  std::vector<double> expected, magnitude;
  const int64_t outRows = grad ? nodes : graphs;
  auto out = allocatePoisoned(static_cast<size_t>(outRows * width), op.type);
  if (!out)
    return out.status();
  if (!grad) {
    GNNC_RETURN_IF_ERROR(launchReadout(runtime, kernel, *dg, *dx, *out));
    ref::readout(batch, x.data(), width, op.reduce, expected, &magnitude);
  } else {
    // y: the forward's result as the forward kernel stores it (rounded to
    // the type; the maximum is one of the inputs, exactly).
    std::vector<double> forward;
    ref::readout(batch, x.data(), width, op.reduce, forward);
    std::vector<float> y = ref::roundThrough(
        std::vector<float>(forward.begin(), forward.end()), op.type);
    std::vector<float> dy = ref::roundThrough(
        ref::randomFeatures(graphs * width, seed ^ 0x5eed), op.type);
    auto dyDev = uploadTensor(y, op.type);
    auto dgradDev = uploadTensor(dy, op.type);
    if (!dyDev)
      return dyDev.status();
    if (!dgradDev)
      return dgradDev.status();
    GNNC_RETURN_IF_ERROR(
        launchReadoutGrad(runtime, kernel, *dg, *dx, *dyDev, *dgradDev, *out));
    ref::readoutGrad(batch, x.data(), y.data(), dy.data(), width, op.reduce,
                     expected);
    magnitude.resize(expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
      magnitude[i] = std::fabs(expected[i]);
  }
  auto got =
      downloadTensor(*out, static_cast<size_t>(outRows * width), op.type);
  if (!got)
    return got.status();
  return compareWithReference(kernel.spec, batch.graph, width, op.type, *got,
                              expected, magnitude, width);
}
