//===- LayerBackward.cpp - The backward of a fused batched layer ----------===//
#include "gnnc/Tuning/LayerBackward.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/OpText.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/graph/Parallel.h"
#include "gnnc/ops/Backward.h"
#include "gnnc/reference/Spmm.h"

#include <cmath>

using namespace gnnc;
using namespace gnnc::tuning;

namespace {

/// The forward's aggregation alone (no epilogue): step 1's op.
OpDesc aggregationOf(const OpDesc &forward) {
  OpDesc op = forward;
  op.linearWidth = 0;
  op.linearBias = false;
  op.activation = Activation::None;
  op.transposeWeights = false;
  return op;
}

/// The rules create() checks, with the reason for the first one broken.
Status checkForward(const OpDesc &f) {
  const std::string what = "the backward of a fused batched layer: ";
  if (f.kind != OpKind::Spmm || !f.batchedGraph || !f.linear())
    return Status::error(what + "the forward must be a gnn.spmm over a batch "
                                "(batched_csr) with a linear epilogue");
  if (f.activation != Activation::Relu || !f.linearBias)
    return Status::error(what + "the epilogue must have a bias and ReLU");
  if (f.transposeWeights)
    return Status::error(what + "the forward's weights must be K x M as "
                                "stored (not transpose_weights)");
  if (f.reduce == Reduce::Max)
    return Status::error(what + "reduce = max has no feature gradient here "
                                "(it needs the forward's argmax)");
  if (f.edgeValues || f.attention)
    return Status::error(what + "edge values and attention are not supported "
                                "(their transposed order is not kept)");
  if (f.padded() || f.snapshots != 0)
    return Status::error(what + "padded rows and snapshot groups are not "
                                "supported");
  return Status::ok();
}

/// A tile_routed schedule of `op` (tile_rows `tileRows`, 0: the default)
/// on tensor cores when their plan takes it, else SIMT.
Schedule tileRoutedOf(const OpDesc &op, int32_t tileRows) {
  Schedule s;
  s.strategy = Strategy::TileRouted;
  s.tileRows = tileRows;
  s.math = MathMode::TensorCore;
  if (!planWithDefaults(op, s))
    s.math = MathMode::Simt;
  return s;
}

/// Step 3's op.
OpDesc weightGradOf(const OpDesc &forward) {
  return segmentMatmulWeightGradOp(forward.type, forward.width,
                                   forward.linearWidth);
}

/// Step 4's aggregation over the transposed batch, in the form of the
/// forward's feature gradient (the unfused form's second kernel, and the
/// fused kernel's before its epilogue).
OpDesc inputGradAggregation(const OpDesc &forward,
                            const ops::SpmmGradForm &form) {
  OpDesc op = aggregationOf(forward);
  op.reduce = Reduce::Sum;
  op.scale = form.scale;
  op.colNormExponent.reset();
  if (op.scalesColumns())
    op.colNormExponent = form.colNormExponent;
  return op;
}

/// Step 4's fused op: dZ (M columns) aggregated over the transposed batch,
/// then multiplied by the weights read transposed (K columns out).
OpDesc fusedInputGradOp(const OpDesc &forward, const ops::SpmmGradForm &form) {
  OpDesc op = inputGradAggregation(forward, form);
  op.width = forward.linearWidth;
  op.rowStride = 0;
  op.linearWidth = forward.width;
  op.transposeWeights = true;
  return op;
}

std::string rowsText(const char *name, int64_t rows, int64_t cols) {
  return std::string(name) + " (" + std::to_string(rows) + " x " +
         std::to_string(cols) + ")";
}

/// The routing table's tiles for `nodes` rows of one segment in splits of
/// `splitRows` (ops::buildRouteTable's rule).
Expected<int64_t> oneSegmentTiles(int64_t nodes, int32_t splitRows) {
  const int64_t seg[] = {0, nodes};
  Expected<std::vector<int64_t>> table =
      ops::buildRouteTable(seg, 2, nodes, splitRows);
  if (!table)
    return table.status();
  return static_cast<int64_t>(table->size()) / kRouteTileWords;
}

} // namespace

const std::vector<int32_t> &gnnc::tuning::layerBackwardSplitRows() {
  static const std::vector<int32_t> rows = {defaults::kSegmentSplitRows, 1024};
  return rows;
}

Expected<LayerBackwardPlan>
gnnc::tuning::planLayerBackward(const OpDesc &forward, int64_t nodes,
                                int smCount) {
  GNNC_RETURN_IF_ERROR(checkForward(forward));
  LayerBackwardPlan plan;
  plan.splitRows = layerBackwardSplitRows().front();
  // dW: the largest split whose work items still reach every SM.
  const OpDesc dwOp = weightGradOf(forward);
  for (int32_t rows : layerBackwardSplitRows()) {
    Expected<KernelPlan> p = planWithDefaults(dwOp, tileRoutedOf(dwOp, rows));
    Expected<int64_t> tiles = oneSegmentTiles(nodes, rows);
    if (!p || !tiles)
      continue;
    if (*tiles * segmentRouteItemsPerTile(dwOp, p->schedule) >=
        std::max(smCount, 1))
      plan.splitRows = rows;
  }
  // dX: fused unless the forward's epilogue streams its weights, or the
  // fused kernel has no plan (its epilogue writes K columns on tensor
  // cores: K a multiple of 8).
  Schedule batched;
  batched.strategy = Strategy::Batched;
  Expected<KernelPlan> fwd = planWithDefaults(forward, batched);
  if (!fwd)
    return fwd.status().withContext("planning the forward's epilogue");
  Expected<ops::SpmmGradForm> form =
      ops::spmmFeatureGradForm(forward.reduce, forward.scale);
  if (!form)
    return form.status();
  plan.fusedInputGrad =
      !batchedLinearTile(forward, fwd->schedule).streamWeights &&
      planWithDefaults(fusedInputGradOp(forward, *form), batched);
  return plan;
}

Expected<std::string> gnnc::tuning::layerBackwardModuleText(
    const OpDesc &forward, const std::optional<Schedule> &aggregateSchedule,
    const LayerBackwardPlan &plan) {
  GNNC_RETURN_IF_ERROR(checkForward(forward));
  Expected<ops::SpmmGradForm> form =
      ops::spmmFeatureGradForm(forward.reduce, forward.scale);
  if (!form)
    return form.status();
  const int64_t k = forward.width, m = forward.linearWidth;
  const ElementType type = forward.type;
  const OpDesc aggT = inputGradAggregation(forward, *form);
  const OpDesc dxOp = fusedInputGradOp(forward, *form);
  OpDesc aggTk = aggT;
  aggTk.width = k;
  aggTk.rowStride = 0;
  const OpDesc tOp = segmentMatmulInputGradOp(type, k, m);
  const OpDesc dwOp = weightGradOf(forward);
  std::string text =
      "gnn.module @layer_backward {\n" +
      opKernelText("h", aggregationOf(forward), aggregateSchedule) +
      opKernelText("dw", dwOp, tileRoutedOf(dwOp, plan.splitRows));
  if (plan.fusedInputGrad)
    text += opKernelText("dx", dxOp, std::nullopt);
  else
    text += opKernelText("dxmm", tOp, tileRoutedOf(tOp, 0)) +
            opKernelText("dxagg", aggTk, aggregateSchedule);
  return text + "}\n";
}

struct LayerBackward::State {
  OpDesc forward;
  LayerBackwardPlan plan;
  int64_t nodes = 0;
  ops::DeviceGraph transposed;
  rt::DeviceBuffer transposedNorm;
  bool scalesColumns = false;
  rt::LoadedKernel h, dw, dx, dxMatmul, dxAggregation;
  ops::DeviceRouteTable dwTable, dxTable;
  rt::DeviceBuffer seg, hBuf, dzBuf, tBuf;
  ops::LinearGradKernels tail;
};

LayerBackward::LayerBackward(std::unique_ptr<State> state)
    : state_(std::move(state)) {}
LayerBackward::LayerBackward(LayerBackward &&) noexcept = default;
LayerBackward &LayerBackward::operator=(LayerBackward &&) noexcept = default;
LayerBackward::~LayerBackward() = default;

const LayerBackwardPlan &LayerBackward::plan() const { return state_->plan; }
const OpDesc &LayerBackward::forward() const { return state_->forward; }
const rt::DeviceBuffer &LayerBackward::h() const { return state_->hBuf; }
const rt::DeviceBuffer &LayerBackward::dz() const { return state_->dzBuf; }

std::vector<std::pair<std::string, Schedule>> LayerBackward::schedules() const {
  const State &s = *state_;
  std::vector<std::pair<std::string, Schedule>> out = {
      {"h", s.h.spec.schedule}, {"dw", s.dw.spec.schedule}};
  if (s.plan.fusedInputGrad) {
    out.push_back({"dx", s.dx.spec.schedule});
  } else {
    out.push_back({"dx_matmul", s.dxMatmul.spec.schedule});
    out.push_back({"dx_aggregation", s.dxAggregation.spec.schedule});
  }
  return out;
}

Expected<LayerBackward>
LayerBackward::create(rt::Runtime &runtime, const OpDesc &forward,
                      const graph::BatchedGraph &batch,
                      const std::optional<Schedule> &aggregateSchedule,
                      const LayerBackwardPlan &plan) {
  GNNC_RETURN_IF_ERROR(checkForward(forward));
  auto state = std::make_unique<State>();
  State &s = *state;
  s.forward = forward;
  s.plan = plan;
  s.nodes = batch.graph.numRows;
  const int64_t k = forward.width, m = forward.linearWidth, n = s.nodes;
  const ElementType type = forward.type;

  // The transposed batch: the same graphs, each one's edges reversed.
  graph::BatchedGraph transposed;
  transposed.graph = graph::transpose(batch.graph);
  transposed.graph.name = batch.graph.name + "^T";
  transposed.graphPtr = batch.graphPtr;
  for (int64_t first : transposed.graphPtr)
    transposed.edgeGraphPtr.push_back(transposed.graph.rowPtr[first]);
  Expected<ops::SpmmGradForm> form =
      ops::spmmFeatureGradForm(forward.reduce, forward.scale);
  if (!form)
    return form.status();
  const OpDesc aggT = inputGradAggregation(forward, *form);
  Expected<ops::DeviceGraph> tGraph =
      ops::uploadBatch(transposed, forward.offsets64, forward.indices64);
  if (!tGraph)
    return tGraph.status().withContext("uploading the transposed batch");
  s.transposed = tGraph.take();
  s.scalesColumns = aggT.scalesColumns();
  if (s.scalesColumns) {
    Expected<rt::DeviceBuffer> norm =
        ops::uploadColumnNorm(transposed.graph, aggT.columnExponent());
    if (!norm)
      return norm.status();
    s.transposedNorm = norm.take();
  }

  // The kernels.
  Expected<std::string> text =
      layerBackwardModuleText(forward, aggregateSchedule, plan);
  if (!text)
    return text.status();
  Expected<CompiledModule> compiled = compileGnn(*text, "layer_backward.gnn");
  if (!compiled)
    return compiled.status().withContext("compiling the layer's backward");
  std::vector<std::pair<const char *, rt::LoadedKernel *>> kernels = {
      {"h", &s.h}, {"dw", &s.dw}};
  if (plan.fusedInputGrad)
    kernels.push_back({"dx", &s.dx});
  else
    kernels.insert(kernels.end(),
                   {{"dxmm", &s.dxMatmul}, {"dxagg", &s.dxAggregation}});
  for (auto [name, slot] : kernels) {
    Expected<rt::KernelSpec> spec = findKernel(*compiled, name);
    if (!spec)
      return spec.status().withContext("the layer's backward");
    Expected<rt::LoadedKernel> loaded = runtime.load(*spec);
    if (!loaded)
      return loaded.status();
    *slot = loaded.take();
  }

  // Segments, routing tables, scratch and the tail's kernels.
  const std::vector<int64_t> seg = {0, n};
  Expected<rt::DeviceBuffer> segDev =
      rt::DeviceBuffer::allocate(seg.size() * sizeof(int64_t));
  if (!segDev)
    return segDev.status();
  s.seg = segDev.take();
  GNNC_RETURN_IF_ERROR(
      s.seg.copyFromHost(seg.data(), seg.size() * sizeof(int64_t)));
  Expected<ops::DeviceRouteTable> dwTable =
      ops::uploadRouteTable(runtime, s.dw, seg, n);
  if (!dwTable)
    return dwTable.status();
  s.dwTable = dwTable.take();
  if (!plan.fusedInputGrad) {
    Expected<ops::DeviceRouteTable> dxTable =
        ops::uploadRouteTable(runtime, s.dxMatmul, seg, n);
    if (!dxTable)
      return dxTable.status();
    s.dxTable = dxTable.take();
  }
  const size_t esize = elementSize(type);
  for (auto [buffer, elements] :
       {std::pair{&s.hBuf, n * k}, std::pair{&s.dzBuf, n * m},
        std::pair{&s.tBuf, plan.fusedInputGrad ? int64_t(1) : n * k}}) {
    Expected<rt::DeviceBuffer> b = rt::DeviceBuffer::allocate(
        static_cast<size_t>(std::max<int64_t>(elements, 1)) * esize);
    if (!b)
      return b.status();
    *buffer = b.take();
  }
  Expected<ops::LinearGradKernels> tail = ops::LinearGradKernels::load(runtime);
  if (!tail)
    return tail.status();
  s.tail = tail.take();
  return LayerBackward(std::move(state));
}

Status LayerBackward::recompute(rt::Runtime &runtime,
                                const LayerBackwardOperands &o, void *stream) {
  if (!o.batch || !o.x)
    return Status::error("the layer's backward needs the forward's batch and "
                         "X");
  return ops::launchSpmm(runtime, state_->h, *o.batch, *o.x, nullptr,
                         state_->hBuf, false, o.colNorm, stream);
}

Status LayerBackward::reluBias(rt::Runtime &runtime,
                               const LayerBackwardOperands &o, void *stream) {
  if (!o.y || !o.dy || !o.db)
    return Status::error("the layer's backward needs Y, dY and db");
  State &s = *state_;
  return s.tail.reluBiasGrad(runtime, s.forward.type, *o.y, *o.dy, s.dzBuf,
                             o.db, s.nodes, s.forward.linearWidth, false,
                             stream);
}

Status LayerBackward::weightGrad(rt::Runtime &runtime,
                                 const LayerBackwardOperands &o, void *stream) {
  State &s = *state_;
  if (!o.dw)
    return Status::error("the layer's backward needs dW");
  const uint64_t need = static_cast<uint64_t>(s.forward.width) *
                        s.forward.linearWidth * elementSize(s.forward.type);
  if (o.dw->size() < need)
    return Status::error(
        "the layer's backward: " +
        rowsText("dW", s.forward.width, s.forward.linearWidth) + " needs " +
        std::to_string(need) + " bytes, " + std::to_string(o.dw->size()) +
        " given");
  return ops::launchSegmentMatmulWeightGrad(runtime, s.dw, s.hBuf, s.dzBuf,
                                            s.seg, 1, s.dwTable, *o.dw, false,
                                            stream);
}

Status LayerBackward::inputGrad(rt::Runtime &runtime,
                                const LayerBackwardOperands &o, void *stream) {
  State &s = *state_;
  if (!o.weight || !o.dx)
    return Status::error("the layer's backward needs W and dX");
  const rt::DeviceBuffer *norm = s.scalesColumns ? &s.transposedNorm : nullptr;
  if (s.plan.fusedInputGrad) {
    const ops::LinearOperands weights{o.weight, nullptr};
    return ops::launchSpmm(runtime, s.dx, s.transposed, s.dzBuf, nullptr, *o.dx,
                           false, norm, stream, &weights);
  }
  GNNC_RETURN_IF_ERROR(ops::launchSegmentMatmul(runtime, s.dxMatmul, s.dzBuf,
                                                *o.weight, s.seg, s.dxTable,
                                                s.tBuf, false, stream));
  return ops::launchSpmm(runtime, s.dxAggregation, s.transposed, s.tBuf,
                         nullptr, *o.dx, false, norm, stream);
}

Status LayerBackward::run(rt::Runtime &runtime, const LayerBackwardOperands &o,
                          bool synchronize, void *stream) {
  GNNC_RETURN_IF_ERROR(recompute(runtime, o, stream));
  GNNC_RETURN_IF_ERROR(reluBias(runtime, o, stream));
  GNNC_RETURN_IF_ERROR(weightGrad(runtime, o, stream));
  GNNC_RETURN_IF_ERROR(inputGrad(runtime, o, stream));
  return synchronize ? runtime.synchronize() : Status::ok();
}

Expected<LayerBackwardReference> gnnc::tuning::layerBackwardReference(
    const OpDesc &forward, const graph::BatchedGraph &batch,
    const std::vector<float> &weight, const std::vector<float> &dy,
    const std::vector<float> &y, const std::vector<float> &h) {
  GNNC_RETURN_IF_ERROR(checkForward(forward));
  const int64_t n = batch.graph.numRows, k = forward.width,
                m = forward.linearWidth;
  if (static_cast<int64_t>(weight.size()) != k * m ||
      static_cast<int64_t>(dy.size()) != n * m ||
      static_cast<int64_t>(y.size()) != n * m ||
      static_cast<int64_t>(h.size()) != n * k)
    return Status::error(
        "the layer backward's reference: W must hold " + std::to_string(k * m) +
        " values, dY and Y " + std::to_string(n * m) + ", H " +
        std::to_string(n * k) + "; got " + std::to_string(weight.size()) +
        ", " + std::to_string(dy.size()) + ", " + std::to_string(y.size()) +
        ", " + std::to_string(h.size()));
  LayerBackwardReference r;
  r.h = h;
  std::vector<double> dzRef;
  ops::reluBiasGradReference(y, dy, n, m, dzRef, r.db, r.dbAbs);
  const std::vector<float> dz(dzRef.begin(), dzRef.end());
  // dW[a, b] = sum over rows of H[r, a] dZ[r, b], one a per task.
  r.dw.assign(static_cast<size_t>(k * m), 0.0);
  r.dwAbs.assign(r.dw.size(), 0.0);
  graph::parallelForEach(k, 0, [&](int64_t a) {
    double *out = r.dw.data() + a * m, *mag = r.dwAbs.data() + a * m;
    for (int64_t row = 0; row < n; ++row) {
      const double ha = h[row * k + a];
      if (ha == 0)
        continue;
      const float *g = dz.data() + row * m;
      for (int64_t b = 0; b < m; ++b) {
        out[b] += ha * g[b];
        mag[b] += std::fabs(ha * g[b]);
      }
    }
  });
  // dX = (Âᵀ dZ) Wᵀ on the transposed graph in the gradient's form.
  Expected<ops::SpmmGradForm> form =
      ops::spmmFeatureGradForm(forward.reduce, forward.scale);
  if (!form)
    return form.status();
  ref::SpmmOptions options;
  options.scale = form->scale;
  options.colNormExponent = form->colNormExponent;
  options.selfWeight = forward.selfWeight;
  std::vector<double> gathered, gatheredAbs;
  ref::spmm(graph::transpose(batch.graph), nullptr, dz.data(), m, options,
            gathered, &gatheredAbs);
  ref::linearEpilogue(gathered, n, m, weight.data(), k, nullptr,
                      /*relu=*/false, r.dx, &gatheredAbs, &r.dxAbs,
                      /*transposed=*/true);
  return r;
}

Expected<ops::KernelCheck>
gnnc::tuning::checkLayerBackward(rt::Runtime &runtime, LayerBackward &backward,
                                 const graph::BatchedGraph &batch,
                                 const LayerBackwardReference &reference,
                                 const LayerBackwardOperands &o) {
  const OpDesc &f = backward.forward();
  const int64_t n = batch.graph.numRows, k = f.width, m = f.linearWidth;
  const ElementType type = f.type;
  if (!o.dx || !o.dw || !o.db)
    return Status::error("checkLayerBackward: dX, dW and db are needed");
  for (rt::DeviceBuffer *out : {o.dx, o.dw, o.db})
    GNNC_RETURN_IF_ERROR(out->fill(0xff));
  GNNC_RETURN_IF_ERROR(backward.run(runtime, o, true));
  auto h = ops::downloadTensor(backward.h(), static_cast<size_t>(n * k), type);
  auto dx = ops::downloadTensor(*o.dx, static_cast<size_t>(n * k), type);
  auto dw = ops::downloadTensor(*o.dw, static_cast<size_t>(k * m), type);
  auto db =
      ops::downloadTensor(*o.db, static_cast<size_t>(m), ElementType::F32);
  for (const Status &s : {h.status(), dx.status(), dw.status(), db.status()})
    if (!s)
      return s;
  // The reference's dW holds for the H it was built from.
  if (*h != reference.h)
    return Status::error("checkLayerBackward: this run's H differs from the "
                         "H the reference was built from (another "
                         "aggregation schedule or other inputs)");

  std::string reports;
  bool ok = true;
  auto compare = [&](const char *what, const std::vector<float> &got,
                     const std::vector<double> &want,
                     const std::vector<double> &magnitude, int64_t width,
                     double tol, double absTol) {
    std::string report;
    Status s = ref::compareToReferenceScaled(got, want, magnitude, width, tol,
                                             &report, absTol);
    reports += std::string(reports.empty() ? "" : "; ") + what + ": " +
               (s ? report : s.message());
    ok = ok && s;
  };
  compare("dX", *dx, reference.dx, reference.dxAbs, k,
          ops::linearTolerance(type), ops::spmmAbsoluteTolerance(type));
  Schedule dwSchedule;
  for (const auto &[step, schedule] : backward.schedules())
    if (step == "dw")
      dwSchedule = schedule;
  compare("dW", *dw, reference.dw, reference.dwAbs, m,
          ops::segmentMatmulTolerance(weightGradOf(f), dwSchedule),
          ops::spmmAbsoluteTolerance(type));
  compare("db", *db, reference.db, reference.dbAbs, m,
          ops::biasGradTolerance(n), 1e-30);
  return ops::KernelCheck{
      ok, "layer backward on '" + batch.graph.name + "' (" + std::to_string(n) +
              " nodes, " + elementTypeName(type) + ", K " + std::to_string(k) +
              ", M " + std::to_string(m) + "): " + reports};
}

Expected<ops::KernelCheck> gnnc::tuning::checkLayerBackward(
    rt::Runtime &runtime, LayerBackward &backward,
    const graph::BatchedGraph &batch, const std::vector<float> &weight,
    const std::vector<float> &dy, const LayerBackwardOperands &o,
    LayerBackwardReference *built) {
  const OpDesc &f = backward.forward();
  const int64_t n = batch.graph.numRows, k = f.width, m = f.linearWidth;
  if (!o.y)
    return Status::error("checkLayerBackward: Y is needed");
  // One run for the GPU's H, then the reference, then the check.
  GNNC_RETURN_IF_ERROR(backward.recompute(runtime, o));
  GNNC_RETURN_IF_ERROR(runtime.synchronize());
  auto y = ops::downloadTensor(*o.y, static_cast<size_t>(n * m), f.type);
  auto h =
      ops::downloadTensor(backward.h(), static_cast<size_t>(n * k), f.type);
  if (!y)
    return y.status();
  if (!h)
    return h.status();
  Expected<LayerBackwardReference> reference =
      layerBackwardReference(f, batch, weight, dy, *y, *h);
  if (!reference)
    return reference.status();
  Expected<ops::KernelCheck> check =
      checkLayerBackward(runtime, backward, batch, *reference, o);
  if (built)
    *built = reference.take();
  return check;
}
