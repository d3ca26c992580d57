//===- Sddmm.cpp - Host side of compiled SDDMM kernels --------------------===//
#include "gnnc/ops/Sddmm.h"
#include "gnnc/reference/Spmm.h"

using namespace gnnc;
using namespace gnnc::ops;

Expected<SddmmSignature> gnnc::ops::sddmmSignature(const rt::KernelSpec &spec) {
  auto get = [&](const char *key) -> std::string {
    auto it = spec.info.find(key);
    return it == spec.info.end() ? std::string() : it->second;
  };
  if (get("op") != "sddmm")
    return Status::error("kernel '" + spec.name +
                         "' is not a gnn.sddmm kernel");
  SddmmSignature sig;
  auto type = parseElementType(get("element_type"));
  if (!type)
    return type.status().withContext("kernel '" + spec.name + "'");
  sig.type = *type;
  sig.featureWidth = std::atoll(get("feature_width").c_str());
  if (sig.featureWidth <= 0)
    return Status::error("kernel '" + spec.name + "' has no feature width");
  sig.form = get("form") == "add" ? ref::SddmmForm::Add : ref::SddmmForm::Dot;
  if (std::string slope = get("leaky_relu"); !slope.empty())
    sig.leakyRelu = std::stof(slope);
  sig.offsets64 = get("offset_type") == "i64";
  sig.indices64 = get("index_type") == "i64";
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
