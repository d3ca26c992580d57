//===- Backward.cpp - Host side of the backward of gnn ops ----------------===//
#include "gnnc/ops/Backward.h"
#include "CheckSupport.h"
#include "gnnc/Plan/OpText.h"
#include "gnnc/ops/KernelInfo.h"
#include "gnnc/ops/Sddmm.h"
#include "gnnc/reference/EdgeSoftmax.h"

#include <cmath>

using namespace gnnc;
using namespace gnnc::ops;

//===----------------------------------------------------------------------===//
// gnn.edge_softmax_grad
//===----------------------------------------------------------------------===//

Status gnnc::ops::launchEdgeSoftmaxGrad(rt::Runtime &runtime,
                                        const rt::LoadedKernel &kernel,
                                        const DeviceGraph &graph,
                                        const rt::DeviceBuffer &out,
                                        const rt::DeviceBuffer &gradOut,
                                        rt::DeviceBuffer &dx, bool synchronize,
                                        void *stream) {
  rt::ArgPack args = graphArguments(kernel.spec, graph);
  args.bind(ParamRole::Input, out, 0)
      .bind(ParamRole::Input, gradOut, 1)
      .bind(ParamRole::Result, dx);
  return runtime.launch(kernel, args, synchronize, stream);
}

/// Compares `got` (groups of `groupWidth` outputs) with the reference,
/// allowing `toleranceFactor * spmmTolerance(type)` of each output's term
/// `magnitude`, and reports the kernel, the graph and `what` was compared.
static KernelCheck compareGrad(const rt::KernelSpec &spec,
                               const graph::CsrGraph &g,
                               const std::string &what, ElementType type,
                               const std::vector<float> &got,
                               const std::vector<double> &expected,
                               const std::vector<double> &magnitude,
                               int64_t groupWidth, double toleranceFactor = 1) {
  std::string report;
  Status cmp =
      ref::compareToReferenceScaled(got, expected, magnitude, groupWidth,
                                    toleranceFactor * spmmTolerance(type),
                                    &report, spmmAbsoluteTolerance(type));
  KernelCheck check;
  check.ok = cmp.isOk();
  check.report = spec.name + " (" + what + ") on '" + g.name + "' (" +
                 std::to_string(g.numRows) + " rows, " +
                 std::to_string(g.nnz()) + " nnz, " + elementTypeName(type) +
                 "): " + (cmp.isOk() ? report : cmp.message());
  return check;
}

/// Refuses a kernel with padded rows: the backward checks use unpadded
/// features.
static Status requireUnpadded(const rt::KernelSpec &spec,
                              const SpmmSignature &sig) {
  if (!sig.padded())
    return Status::ok();
  return Status::error("kernel '" + spec.name +
                       "' has padded rows (row stride " +
                       std::to_string(sig.rowStride) +
                       "); the backward checks use unpadded features");
}

Expected<KernelCheck>
gnnc::ops::checkEdgeSoftmaxGrad(rt::Runtime &runtime,
                                const rt::LoadedKernel &kernel,
                                const graph::CsrGraph &g, uint64_t seed) {
  Expected<OpDesc> sig = kernelOp(kernel.spec, OpKind::EdgeSoftmaxGrad);
  if (!sig)
    return sig.status();
  const int64_t heads = sig->width;
  const size_t count = static_cast<size_t>(g.nnz() * heads);
  std::vector<float> logits =
      ref::randomFeatures(static_cast<int64_t>(count), seed, -4.0f, 4.0f);
  std::vector<double> softmax;
  ref::edgeSoftmax(g, logits.data(), heads, softmax);
  std::vector<float> out = ref::roundThrough(
      std::vector<float>(softmax.begin(), softmax.end()), sig->type);
  std::vector<float> gradOut = ref::roundThrough(
      ref::randomFeatures(static_cast<int64_t>(count), seed ^ 0x9e3779b9),
      sig->type);
  auto dg = uploadGraph(g, sig->offsets64, sig->indices64);
  if (!dg)
    return dg.status();
  auto dout = uploadTensor(out, sig->type);
  if (!dout)
    return dout.status();
  auto dgrad = uploadTensor(gradOut, sig->type);
  if (!dgrad)
    return dgrad.status();
  auto ddx = allocatePoisoned(count, sig->type);
  if (!ddx)
    return ddx.status();
  GNNC_RETURN_IF_ERROR(
      launchEdgeSoftmaxGrad(runtime, kernel, *dg, *dout, *dgrad, *ddx));
  auto got = downloadTensor(*ddx, count, sig->type);
  if (!got)
    return got.status();
  std::vector<double> expected, magnitude;
  ref::edgeSoftmaxGrad(g, out.data(), gradOut.data(), heads, expected,
                       &magnitude);
  return compareGrad(kernel.spec, g,
                     "edge softmax gradient, " + std::to_string(heads) +
                         " heads",
                     sig->type, *got, expected, magnitude, heads);
}

//===----------------------------------------------------------------------===//
// gnn.spmm
//===----------------------------------------------------------------------===//

Expected<SpmmGradForm> gnnc::ops::spmmFeatureGradForm(gnnc::Reduce reduce,
                                                      gnnc::DegreeScale scale) {
  if (reduce == gnnc::Reduce::Max)
    return Status::error("the backward of gnn.spmm with reduce = max is not "
                         "implemented (it needs the argmax of every output)");
  bool left =
      scale == gnnc::DegreeScale::Left || scale == gnnc::DegreeScale::Both;
  bool right =
      scale == gnnc::DegreeScale::Right || scale == gnnc::DegreeScale::Both;
  bool mean = reduce == gnnc::Reduce::Mean;
  // A's column factor 1/sqrt(deg_in_A(c)) is A^T's left factor; A's row
  // factor deg_out_A(r)^-p is a column factor of A^T, whose column degrees
  // are A's row degrees.
  double exponent = (mean ? 1.0 : 0.0) + (left ? 0.5 : 0.0);
  bool transposedRight = exponent > 0;
  SpmmGradForm form;
  form.scale = right && transposedRight ? gnnc::DegreeScale::Both
               : right                  ? gnnc::DegreeScale::Left
               : transposedRight        ? gnnc::DegreeScale::Right
                                        : gnnc::DegreeScale::None;
  if (transposedRight)
    form.colNormExponent = exponent;
  return form;
}

Expected<std::string> gnnc::ops::spmmFeatureGradKernelText(
    const std::string &name, ElementType type, int64_t width, bool edgeValues,
    gnnc::Reduce reduce, gnnc::DegreeScale scale, const std::string &offsets,
    const std::string &indices, const std::string &schedule) {
  auto form = spmmFeatureGradForm(reduce, scale);
  if (!form)
    return form.status();
  for (const std::string *bits : {&offsets, &indices})
    if (*bits != "i32" && *bits != "i64")
      return Status::error("spmm feature gradient kernel '" + name +
                           "': graph index type '" + *bits +
                           "' is not i32 or i64");
  OpDesc op = spmmOp(type, width);
  op.offsets64 = offsets == "i64";
  op.indices64 = indices == "i64";
  op.edgeValues = edgeValues;
  op.scale = form->scale;
  if (op.scalesColumns() && form->colNormExponent != 0.5)
    op.colNormExponent = form->colNormExponent;
  std::optional<Schedule> parsed;
  if (!schedule.empty()) {
    Expected<Schedule> s = parseSchedule(schedule);
    if (!s)
      return s.status().withContext("spmm feature gradient kernel '" + name +
                                    "'");
    parsed = *s;
  }
  OpTextNames names;
  names.graph = "gt";
  names.input0 = "dy";
  names.input1 = "wt";
  return "  // The feature gradient of a gnn.spmm, over the transposed "
         "graph.\n" +
         opKernelText(name, op, parsed, names);
}

Expected<KernelCheck>
gnnc::ops::checkSpmmFeatureGrad(rt::Runtime &runtime,
                                const rt::LoadedKernel &kernel,
                                const graph::CsrGraph &g, gnnc::Reduce reduce,
                                gnnc::DegreeScale scale, uint64_t seed) {
  auto sig = spmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  auto form = spmmFeatureGradForm(reduce, scale);
  if (!form)
    return form.status();
  if (sig->reduce != gnnc::Reduce::Sum || sig->scale != form->scale ||
      (sig->needsColumnNorm() && sig->colNormExponent != form->colNormExponent))
    return Status::error("kernel '" + kernel.spec.name +
                         "' is not the feature gradient of this gnn.spmm; "
                         "write it with spmmFeatureGradKernelText");
  GNNC_RETURN_IF_ERROR(requireUnpadded(kernel.spec, *sig));
  const int64_t width = sig->featureWidth;
  graph::TransposedGraph t = graph::transposeWithEdgeMap(g);
  checks::SpmmInputs in =
      checks::randomSpmmInputs(*sig, g.numRows, g.nnz(), seed);
  std::vector<float> valuesT;
  if (sig->edgeValues)
    valuesT = graph::permuteEdgeData(in.values, t.edgeOf);
  auto out = checks::runSpmm(runtime, kernel, *sig, t.graph, in.x, valuesT);
  if (!out)
    return out.status();
  std::vector<double> expected, magnitude;
  GNNC_RETURN_IF_ERROR(ref::spmmGradFeatures(g, in.valuesOrNull(), in.x.data(),
                                             width, reduce, scale, expected,
                                             &magnitude));
  return compareGrad(kernel.spec, g,
                     "spmm feature gradient, width " + std::to_string(width),
                     sig->type, out->got, expected, magnitude, width);
}

void gnnc::ops::scaleEdgeGrad(const graph::CsrGraph &g, gnnc::Reduce reduce,
                              gnnc::DegreeScale scale,
                              std::vector<float> &grad) {
  std::vector<double> rowFactor, colFactor;
  ref::spmmFactors(g, reduce, scale, rowFactor, colFactor);
  for (int64_t r = 0; r < g.numRows; ++r)
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e)
      grad[e] = static_cast<float>(static_cast<double>(grad[e]) * rowFactor[r] *
                                   colFactor[g.colIdx[e]]);
}

Expected<KernelCheck>
gnnc::ops::checkSpmmValueGrad(rt::Runtime &runtime,
                              const rt::LoadedKernel &kernel,
                              const graph::CsrGraph &g, gnnc::Reduce reduce,
                              gnnc::DegreeScale scale, uint64_t seed) {
  auto sig = sddmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  if (sig->form != gnnc::SddmmForm::Dot || sig->leakyRelu)
    return Status::error("kernel '" + kernel.spec.name +
                         "' must be a dot-form gnn.sddmm without leaky ReLU");
  const int64_t width = sig->featureWidth;
  // The gnn.sddmm of dY (rows) and X (columns).
  checks::SddmmInputs in =
      checks::randomSddmmInputs(sig->type, width, g.numRows, g.numCols, seed);
  const std::vector<float> &dy = in.a, &x = in.b;
  std::vector<double> expected, magnitude;
  GNNC_RETURN_IF_ERROR(ref::spmmGradValues(
      g, x.data(), dy.data(), width, reduce, scale, expected, &magnitude));
  auto got = checks::runSddmm(runtime, kernel, *sig, g, dy, x);
  if (!got)
    return got.status();
  scaleEdgeGrad(g, reduce, scale, *got);
  return compareGrad(kernel.spec, g,
                     "spmm edge-value gradient, width " + std::to_string(width),
                     sig->type, *got, expected, magnitude, 1);
}

//===----------------------------------------------------------------------===//
// gnn.sddmm
//===----------------------------------------------------------------------===//

graph::CsrGraph gnnc::ops::rowEdgeGraph(const graph::CsrGraph &g) {
  graph::CsrGraph e;
  e.numRows = g.numRows;
  e.numCols = g.nnz();
  e.rowPtr = g.rowPtr;
  e.colIdx.resize(static_cast<size_t>(g.nnz()));
  for (int64_t i = 0; i < g.nnz(); ++i)
    e.colIdx[i] = i;
  e.name = g.name.empty() ? std::string() : g.name + " row edges";
  return e;
}

graph::CsrGraph gnnc::ops::columnEdgeGraph(const graph::CsrGraph &g) {
  graph::TransposedGraph t = graph::transposeWithEdgeMap(g);
  graph::CsrGraph e;
  e.numRows = g.numCols;
  e.numCols = g.nnz();
  e.rowPtr = std::move(t.graph.rowPtr);
  e.colIdx = std::move(t.edgeOf);
  e.name = g.name.empty() ? std::string() : g.name + " column edges";
  return e;
}

void gnnc::ops::leakyReluGrad(const graph::CsrGraph &g, const float *a,
                              const float *b, int64_t width,
                              gnnc::SddmmForm form, float slope,
                              std::vector<float> &gradOut) {
  std::vector<double> pre;
  ref::sddmm(g, a, b, width, form, std::nullopt, pre);
  for (size_t i = 0; i < pre.size(); ++i)
    if (pre[i] < 0)
      gradOut[i] *= slope;
}

Expected<KernelCheck>
gnnc::ops::checkSddmmGrad(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                          const graph::CsrGraph &g, gnnc::SddmmForm form,
                          std::optional<float> slope, SddmmGradSide side,
                          uint64_t seed) {
  auto sig = spmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  const bool dot = form == gnnc::SddmmForm::Dot;
  if (sig->reduce != gnnc::Reduce::Sum ||
      sig->scale != gnnc::DegreeScale::None || sig->edgeValues != dot)
    return Status::error("kernel '" + kernel.spec.name +
                         "' must be a gnn.spmm with reduce = sum, no scaling "
                         "and edge values exactly for the dot form");
  GNNC_RETURN_IF_ERROR(requireUnpadded(kernel.spec, *sig));
  const int64_t width = sig->featureWidth;
  const int64_t perEdge = dot ? 1 : width;
  checks::SddmmInputs in =
      checks::randomSddmmInputs(sig->type, width, g.numRows, g.numCols, seed);
  const std::vector<float> &a = in.a, &b = in.b;
  std::vector<float> gradOut = ref::roundThrough(
      ref::randomFeatures(g.nnz() * perEdge, seed ^ 0xd5), sig->type);
  std::vector<double> dA, dB, absA, absB;
  ref::sddmmGrad(g, a.data(), b.data(), width, form, slope, gradOut.data(), dA,
                 dB, &absA, &absB);
  // The composition: the leaky ReLU's slope on the host, then a gnn.spmm.
  std::vector<float> grad = gradOut;
  if (slope) {
    leakyReluGrad(g, a.data(), b.data(), width, form, *slope, grad);
    ref::roundThroughInPlace(grad, sig->type);
  }
  const bool rows = side == SddmmGradSide::Rows;
  graph::CsrGraph graph;
  std::vector<float> x, values;
  if (dot) {
    if (rows) {
      graph = g;
      values = grad;
      x = b;
    } else {
      graph::TransposedGraph t = graph::transposeWithEdgeMap(g);
      graph = std::move(t.graph);
      values = graph::permuteEdgeData(grad, t.edgeOf);
      x = a;
    }
  } else {
    graph = rows ? rowEdgeGraph(g) : columnEdgeGraph(g);
    x = grad;
  }
  graph.values.clear();
  auto out = checks::runSpmm(runtime, kernel, *sig, graph, x, values);
  if (!out)
    return out.status();
  // The slope, applied to rounded gradients and rounded again, costs one
  // more rounding per term.
  return compareGrad(kernel.spec, g,
                     std::string("sddmm ") + (dot ? "dot" : "add") +
                         (slope ? " leaky ReLU" : "") + " gradient of the " +
                         (rows ? "row" : "column") + " features, width " +
                         std::to_string(width),
                     sig->type, out->got, rows ? dA : dB, rows ? absA : absB,
                     width, slope ? 2 : 1);
}
