//===- Sddmm.cpp - Host side of compiled SDDMM kernels --------------------===//
#include "gnnc/ops/Sddmm.h"
#include "gnnc/ops/KernelInfo.h"
#include "gnnc/reference/Spmm.h"

using namespace gnnc;
using namespace gnnc::ops;

Expected<SddmmSignature> gnnc::ops::sddmmSignature(const rt::KernelSpec &spec) {
  auto info = KernelInfo::read(spec, "sddmm");
  if (!info)
    return info.status();
  SddmmSignature sig;
  auto type = info->elementType();
  auto width = info->integer("feature_width", 1);
  auto slope = info->number("leaky_relu");
  if (!type || !width || !slope)
    return !type ? type.status() : !width ? width.status() : slope.status();
  sig.type = *type;
  sig.featureWidth = *width;
  sig.form =
      info->find("form") == "add" ? ref::SddmmForm::Add : ref::SddmmForm::Dot;
  if (*slope)
    sig.leakyRelu = static_cast<float>(**slope);
  sig.offsets64 = info->offsets64();
  sig.indices64 = info->indices64();
  return sig;
}

Status gnnc::ops::launchSddmm(rt::Runtime &runtime,
                              const rt::LoadedKernel &kernel,
                              const DeviceGraph &graph,
                              const rt::DeviceBuffer &rowFeatures,
                              const rt::DeviceBuffer &colFeatures,
                              rt::DeviceBuffer &out, bool synchronize) {
  rt::ArgPack args;
  args.bind("row_ptr", graph.rowPtr)
      .bind("col_idx", graph.colIdx)
      .bind("num_rows", static_cast<int64_t>(graph.numRows))
      .bind("x", rowFeatures)
      .bind("x1", colFeatures)
      .bind("y", out);
  // Edge-parallel kernels walk the merge path of rows and edges.
  if (kernel.spec.findParam("num_edges"))
    args.bind("num_edges", static_cast<int64_t>(graph.nnz));
  return runtime.launch(kernel, args, synchronize);
}

Expected<KernelCheck> gnnc::ops::checkSddmm(rt::Runtime &runtime,
                                            const rt::LoadedKernel &kernel,
                                            const graph::CsrGraph &g,
                                            uint64_t seed) {
  auto sig = sddmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  const int64_t width = sig->featureWidth;
  std::vector<float> a = ref::roundThrough(
      ref::randomFeatures(g.numRows * width, seed), sig->type);
  std::vector<float> b = ref::roundThrough(
      ref::randomFeatures(g.numCols * width, seed ^ 0xb0b), sig->type);
  auto dg = uploadGraph(g, sig->offsets64, sig->indices64);
  if (!dg)
    return dg.status();
  auto da = uploadTensor(a, sig->type);
  if (!da)
    return da.status();
  auto db = uploadTensor(b, sig->type);
  if (!db)
    return db.status();
  const size_t outCount = static_cast<size_t>(g.nnz() * sig->outputsPerEdge());
  auto dout = allocatePoisoned(outCount, sig->type);
  if (!dout)
    return dout.status();
  GNNC_RETURN_IF_ERROR(launchSddmm(runtime, kernel, *dg, *da, *db, *dout));
  auto got = downloadTensor(*dout, outCount, sig->type);
  if (!got)
    return got.status();

  std::vector<double> expected, magnitude;
  ref::sddmm(g, a.data(), b.data(), width, sig->form, sig->leakyRelu, expected,
             &magnitude);
  return compareWithReference(kernel.spec, g, width, sig->type, *got, expected,
                              magnitude, sig->outputsPerEdge());
}
