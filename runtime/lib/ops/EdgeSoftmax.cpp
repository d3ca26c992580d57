//===- EdgeSoftmax.cpp - Host side of compiled edge softmax ---------------===//
#include "gnnc/ops/EdgeSoftmax.h"
#include "gnnc/ops/KernelInfo.h"
#include "gnnc/reference/EdgeSoftmax.h"
#include "gnnc/reference/Spmm.h"

using namespace gnnc;
using namespace gnnc::ops;

Status gnnc::ops::launchEdgeSoftmax(rt::Runtime &runtime,
                                    const rt::LoadedKernel &kernel,
                                    const DeviceGraph &graph,
                                    const rt::DeviceBuffer &logits,
                                    rt::DeviceBuffer &out, bool synchronize,
                                    void *stream) {
  rt::ArgPack args = graphArguments(kernel.spec, graph);
  args.bind(ParamRole::Input, logits, 0).bind(ParamRole::Result, out);
  return runtime.launch(kernel, args, synchronize, stream);
}

double gnnc::ops::edgeSoftmaxTolerance(ElementType type) {
  // f32: expf and the reciprocal cost a few ulps of 2^-24 of values <= 1;
  // f16 and bf16: the final rounding costs 2^-12 (2^-9) of values <= 1.
  return spmmTolerance(type);
}

Expected<KernelCheck>
gnnc::ops::checkEdgeSoftmax(rt::Runtime &runtime,
                            const rt::LoadedKernel &kernel,
                            const graph::CsrGraph &g, uint64_t seed) {
  Expected<OpDesc> sig = kernelOp(kernel.spec, OpKind::EdgeSoftmax);
  if (!sig)
    return sig.status();
  const int64_t heads = sig->width;
  const size_t count = static_cast<size_t>(g.nnz() * heads);
  std::vector<float> logits = ref::roundThrough(
      ref::randomFeatures(static_cast<int64_t>(count), seed, -8.0f, 8.0f),
      sig->type);
  auto dg = uploadGraph(g, sig->offsets64, sig->indices64);
  if (!dg)
    return dg.status();
  auto dlogits = uploadTensor(logits, sig->type);
  if (!dlogits)
    return dlogits.status();
  auto dout = allocatePoisoned(count, sig->type);
  if (!dout)
    return dout.status();
  GNNC_RETURN_IF_ERROR(
      launchEdgeSoftmax(runtime, kernel, *dg, *dlogits, *dout));
  auto got = downloadTensor(*dout, count, sig->type);
  if (!got)
    return got.status();

  std::vector<double> expected;
  ref::edgeSoftmax(g, logits.data(), heads, expected);
  std::string report;
  Status cmp = ref::compareToReference(
      *got, expected, heads,
      /*relTol=*/0.0, edgeSoftmaxTolerance(sig->type), &report);
  KernelCheck check;
  check.ok = cmp.isOk();
  check.report = kernel.spec.name + " on '" + g.name + "' (" +
                 std::to_string(g.numRows) + " rows, " +
                 std::to_string(g.nnz()) + " nnz, " + std::to_string(heads) +
                 " heads, " + elementTypeName(sig->type) +
                 "): " + (cmp.isOk() ? report : cmp.message());
  return check;
}
