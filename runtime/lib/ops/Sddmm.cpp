//===- Sddmm.cpp - Host side of compiled SDDMM kernels --------------------===//
#include "gnnc/ops/Sddmm.h"
#include "CheckSupport.h"
#include "gnnc/ops/KernelInfo.h"
#include "gnnc/reference/Spmm.h"

using namespace gnnc;
using namespace gnnc::ops;

Expected<SddmmSignature> gnnc::ops::sddmmSignature(const rt::KernelSpec &spec) {
  Expected<OpDesc> op = kernelOp(spec, OpKind::Sddmm);
  if (!op)
    return op.status();
  SddmmSignature sig;
  sig.type = op->type;
  sig.featureWidth = op->width;
  sig.form = op->form;
  if (op->leakyRelu)
    sig.leakyRelu = static_cast<float>(*op->leakyRelu);
  sig.offsets64 = op->offsets64;
  sig.indices64 = op->indices64;
  return sig;
}

Status gnnc::ops::launchSddmm(rt::Runtime &runtime,
                              const rt::LoadedKernel &kernel,
                              const DeviceGraph &graph,
                              const rt::DeviceBuffer &rowFeatures,
                              const rt::DeviceBuffer &colFeatures,
                              rt::DeviceBuffer &out, bool synchronize,
                              void *stream) {
  rt::ArgPack args = graphArguments(kernel.spec, graph);
  args.bind(ParamRole::Input, rowFeatures, 0)
      .bind(ParamRole::Input, colFeatures, 1)
      .bind(ParamRole::Result, out);
  GNNC_RETURN_IF_ERROR(bindNeighbourGroups(
      kernel.spec, graph, kernel.spec.schedule.groupSize, args));
  return runtime.launch(kernel, args, synchronize, stream);
}

Expected<KernelCheck> gnnc::ops::checkSddmm(rt::Runtime &runtime,
                                            const rt::LoadedKernel &kernel,
                                            const graph::CsrGraph &g,
                                            uint64_t seed) {
  auto sig = sddmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  const int64_t width = sig->featureWidth;
  checks::SddmmInputs in =
      checks::randomSddmmInputs(sig->type, width, g.numRows, g.numCols, seed);
  auto got = checks::runSddmm(runtime, kernel, *sig, g, in.a, in.b);
  if (!got)
    return got.status();

  std::vector<double> expected, magnitude;
  ref::sddmm(g, in.a.data(), in.b.data(), width, sig->form, sig->leakyRelu,
             expected, &magnitude);
  return compareWithReference(kernel.spec, g, width, sig->type, *got, expected,
                              magnitude, sig->outputsPerEdge());
}

checks::SddmmInputs checks::randomSddmmInputs(ElementType type, int64_t width,
                                              int64_t rows, int64_t cols,
                                              uint64_t seed) {
  SddmmInputs in;
  in.a = ref::roundThrough(ref::randomFeatures(rows * width, seed), type);
  in.b =
      ref::roundThrough(ref::randomFeatures(cols * width, seed ^ 0xb0b), type);
  return in;
}

Expected<std::vector<float>>
checks::runSddmm(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                 const SddmmSignature &sig, const graph::CsrGraph &g,
                 const std::vector<float> &a, const std::vector<float> &b) {
  auto dg = uploadGraph(g, sig.offsets64, sig.indices64);
  if (!dg)
    return dg.status();
  auto da = uploadTensor(a, sig.type);
  if (!da)
    return da.status();
  auto db = uploadTensor(b, sig.type);
  if (!db)
    return db.status();
  const size_t outCount = static_cast<size_t>(g.nnz() * sig.outputsPerEdge());
  auto dout = allocatePoisoned(outCount, sig.type);
  if (!dout)
    return dout.status();
  GNNC_RETURN_IF_ERROR(launchSddmm(runtime, kernel, *dg, *da, *db, *dout));
  return downloadTensor(*dout, outCount, sig.type);
}
