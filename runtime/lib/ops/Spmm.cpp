//===- Spmm.cpp - Host side of compiled SpMM kernels ----------------------===//
#include "gnnc/ops/Spmm.h"
#include "CheckSupport.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/ops/KernelInfo.h"
#include "gnnc/reference/Spmm.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <tuple>

using namespace gnnc;
using namespace gnnc::ops;

using checks::uploadVector;

namespace {

template <typename T>
std::vector<T> narrow(const std::vector<int64_t> &values) {
  return std::vector<T>(values.begin(), values.end());
}

} // namespace

Expected<DeviceGraph> gnnc::ops::uploadGraph(const graph::CsrGraph &g,
                                             bool offsets64, bool indices64) {
  DeviceGraph dg;
  dg.numRows = g.numRows;
  dg.hostRowPtr = g.rowPtr;
  dg.numCols = g.numCols;
  dg.nnz = g.nnz();
  dg.offsets64 = offsets64;
  dg.indices64 = indices64;
  // i32 row offsets and column indices fail here when the graph does not
  // fit them.
  auto narrowed = [&](Expected<std::vector<int32_t>> narrow,
                      const char *what) -> Expected<rt::DeviceBuffer> {
    if (!narrow)
      return narrow.status().withContext("graph '" + g.name +
                                         "' for a kernel with i32 " + what);
    return uploadVector(*narrow);
  };
  Expected<rt::DeviceBuffer> rowPtr =
      offsets64 ? uploadVector(g.rowPtr)
                : narrowed(g.rowPtr32(), "row offsets");
  if (!rowPtr)
    return rowPtr.status();
  Expected<rt::DeviceBuffer> colIdx =
      indices64 ? uploadVector(g.colIdx)
                : narrowed(g.colIdx32(), "column indices");
  if (!colIdx)
    return colIdx.status();
  dg.rowPtr = rowPtr.take();
  dg.colIdx = colIdx.take();
  return dg;
}

Expected<DeviceGraph> gnnc::ops::uploadBatch(const graph::BatchedGraph &batch,
                                             bool offsets64, bool indices64) {
  if (Status valid = batch.validate(); !valid)
    return valid;
  Expected<DeviceGraph> dg = uploadGraph(batch.graph, offsets64, indices64);
  if (!dg)
    return dg;
  Expected<rt::DeviceBuffer> graphPtr = uploadVector(batch.graphPtr);
  if (!graphPtr)
    return graphPtr.status();
  dg->graphPtr = graphPtr.take();
  dg->numGraphs = batch.numGraphs();
  dg->batched = true;
  dg->hostGraphPtr = batch.graphPtr;
  return dg;
}

Expected<NeighbourGroups> gnnc::ops::neighbourGroups(const graph::CsrGraph &g,
                                                     int64_t groupSize) {
  return neighbourGroups(g.rowPtr, groupSize, g.name);
}

Expected<NeighbourGroups>
gnnc::ops::neighbourGroups(const std::vector<int64_t> &rowPtr,
                           int64_t groupSize, const std::string &name) {
  const int64_t numRows =
      rowPtr.empty() ? 0 : static_cast<int64_t>(rowPtr.size()) - 1;
  if (groupSize < 1)
    return Status::error("neighbour groups of graph '" + name +
                         "': the group size must be at least 1, got " +
                         std::to_string(groupSize));
  if (numRows > std::numeric_limits<int32_t>::max())
    return Status::error("neighbour groups of graph '" + name +
                         "': " + std::to_string(numRows) +
                         " rows do not fit the 32-bit row of each group");
  NeighbourGroups groups;
  groups.groupPtr.assign(numRows + 1, 0);
  for (int64_t r = 0; r < numRows; ++r)
    groups.groupPtr[r + 1] =
        groups.groupPtr[r] +
        (rowPtr[r + 1] - rowPtr[r] + groupSize - 1) / groupSize;
  groups.groupRows.resize(groups.groupPtr.back());
  groups.groupBegins.resize(groups.groupPtr.back() + 1);
  for (int64_t r = 0; r < numRows; ++r)
    for (int64_t g = groups.groupPtr[r]; g < groups.groupPtr[r + 1]; ++g) {
      groups.groupRows[g] = static_cast<int32_t>(r);
      groups.groupBegins[g] = rowPtr[r] + (g - groups.groupPtr[r]) * groupSize;
    }
  groups.groupBegins.back() = numRows > 0 ? rowPtr[numRows] : 0;
  return groups;
}

namespace {

/// Uploads `host` as the neighbour groups of size `groupSize` of `graph`.
Status uploadGroups(const DeviceGraph &graph, int64_t groupSize,
                    const NeighbourGroups &host) {
  auto ptr = uploadVector(host.groupPtr);
  if (!ptr)
    return ptr.status();
  auto rows = uploadVector(host.groupRows);
  if (!rows)
    return rows.status();
  auto begins = uploadVector(host.groupBegins);
  if (!begins)
    return begins.status();
  DeviceNeighbourGroups groups;
  groups.groupPtr = ptr.take();
  groups.groupRows = rows.take();
  groups.groupBegins = begins.take();
  groups.numGroups = host.groupPtr.back();
  graph.groups.emplace(groupSize, std::move(groups));
  return Status::ok();
}

} // namespace

Status gnnc::ops::addNeighbourGroups(DeviceGraph &graph,
                                     const graph::CsrGraph &g,
                                     int64_t groupSize) {
  if (graph.numRows != g.numRows || graph.nnz != g.nnz())
    return Status::error(
        "neighbour groups of graph '" + g.name + "': it has " +
        std::to_string(g.numRows) + " rows and " + std::to_string(g.nnz()) +
        " non-zeros, the uploaded graph " + std::to_string(graph.numRows) +
        " and " + std::to_string(graph.nnz));
  if (graph.groups.count(groupSize))
    return Status::ok();
  auto host = neighbourGroups(g, groupSize);
  if (!host)
    return host.status();
  return uploadGroups(graph, groupSize, *host);
}

Expected<rt::DeviceBuffer>
gnnc::ops::uploadTensor(const std::vector<float> &host, ElementType type) {
  if (type == ElementType::F32)
    return uploadVector(host);
  return uploadVector(ref::encode16(host, type));
}

Expected<std::vector<float>>
gnnc::ops::downloadTensor(const rt::DeviceBuffer &buffer, size_t count,
                          ElementType type) {
  if (count * elementSize(type) > buffer.size())
    return Status::error("downloadTensor: " + std::to_string(count) +
                         " elements of " + elementTypeName(type) +
                         " exceed the buffer of " +
                         std::to_string(buffer.size()) + " bytes");
  if (type == ElementType::F32) {
    std::vector<float> host(count);
    GNNC_RETURN_IF_ERROR(buffer.copyToHost(host.data(), count * 4));
    return host;
  }
  std::vector<uint16_t> bits(count);
  GNNC_RETURN_IF_ERROR(buffer.copyToHost(bits.data(), count * 2));
  return ref::decode16(bits, type);
}

Expected<SpmmSignature> gnnc::ops::spmmSignature(const rt::KernelSpec &spec) {
  Expected<OpDesc> op = kernelOp(spec, OpKind::Spmm);
  if (!op)
    return op.status();
  SpmmSignature sig;
  sig.type = op->type;
  sig.featureWidth = op->width;
  sig.rowStride = op->stride();
  sig.edgeValues = op->edgeValues;
  sig.offsets64 = op->offsets64;
  sig.indices64 = op->indices64;
  sig.reduce = op->reduce;
  sig.scale = op->scale;
  sig.selfWeight = op->selfWeight;
  sig.colNormExponent = op->columnExponent();
  sig.accumulate16 = spec.schedule.accumulate == Accumulate::F16;
  sig.discBatch = spec.schedule.discBatch;
  sig.atomicPieceEdges = spec.atomicPieceEdges;
  if (spec.schedule.strategy == Strategy::NeighborGroup)
    sig.groupSize = spec.schedule.groupSize;
  sig.linearWidth = op->linearWidth;
  sig.linearBias = op->linearBias;
  sig.activation = op->activation;
  sig.transposeWeights = op->transposeWeights;
  sig.attention = op->attention;
  sig.leakyRelu = op->leakyRelu;
  return sig;
}

namespace {

/// Why `linear` cannot serve as the epilogue operands of `kernel` (of
/// signature `sig`) writing `rows` rows into `y`, or ok.
Status checkLinearOperands(const rt::LoadedKernel &kernel,
                           const SpmmSignature &sig, int64_t rows,
                           const rt::DeviceBuffer &y,
                           const LinearOperands *linear) {
  const std::string name = "kernel '" + kernel.spec.name + "'";
  if (!sig.linear()) {
    if (linear && (linear->weight || linear->bias))
      return Status::error(name + " has no linear epilogue; it takes no "
                                  "weights or bias");
    return Status::ok();
  }
  const uint64_t size = elementSize(sig.type);
  auto needs = [&](const rt::DeviceBuffer *buffer, uint64_t elements,
                   const std::string &what) -> Status {
    if (!buffer)
      return Status::error(name + " ends in a linear epilogue and needs its " +
                           what);
    if (buffer->size() < elements * size)
      return Status::error(
          name + ": the " + what + " need " + std::to_string(elements * size) +
          " bytes, the buffer has " + std::to_string(buffer->size()));
    return Status::ok();
  };
  const uint64_t k = static_cast<uint64_t>(sig.featureWidth),
                 m = static_cast<uint64_t>(sig.linearWidth);
  GNNC_RETURN_IF_ERROR(
      needs(linear ? linear->weight : nullptr, k * m,
            "weights (" + std::to_string(k) + " x " + std::to_string(m) + ")"));
  if (sig.linearBias)
    GNNC_RETURN_IF_ERROR(
        needs(linear->bias, m, "bias (" + std::to_string(m) + ")"));
  else if (linear->bias)
    return Status::error(name + "'s linear epilogue has no bias");
  return needs(&y, static_cast<uint64_t>(rows) * m,
               "result (" + std::to_string(rows) + " rows of " +
                   std::to_string(m) + ")");
}

/// Why `attention` cannot serve as the scores of `kernel` (of signature
/// `sig`) over `graph`, or ok.
Status checkAttentionScores(const rt::LoadedKernel &kernel,
                            const SpmmSignature &sig, const DeviceGraph &graph,
                            const AttentionScores *attention) {
  const std::string name = "kernel '" + kernel.spec.name + "'";
  const bool given = attention && (attention->rows || attention->columns);
  if (!sig.attention) {
    if (given)
      return Status::error(name + " has no attention; it takes no scores");
    return Status::ok();
  }
  const uint64_t size = elementSize(sig.type);
  auto needs = [&](const rt::DeviceBuffer *buffer, int64_t count,
                   const char *what) -> Status {
    if (!buffer)
      return Status::error(name +
                           " weighs its edges by attention and needs "
                           "the scores of the " +
                           what);
    const uint64_t bytes = static_cast<uint64_t>(count) * size;
    if (buffer->size() < bytes)
      return Status::error(name + ": the scores of the " + what + " need " +
                           std::to_string(bytes) + " bytes (" +
                           std::to_string(count) + " " +
                           elementTypeName(sig.type) + "), the buffer has " +
                           std::to_string(buffer->size()));
    return Status::ok();
  };
  GNNC_RETURN_IF_ERROR(
      needs(attention ? attention->rows : nullptr, graph.numRows, "rows"));
  return needs(attention ? attention->columns : nullptr, graph.numCols,
               "columns");
}

} // namespace

Status
gnnc::ops::launchSpmm(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                      const DeviceGraph &graph, const rt::DeviceBuffer &x,
                      const rt::DeviceBuffer *values, rt::DeviceBuffer &y,
                      bool synchronize, const rt::DeviceBuffer *colNorm,
                      void *stream, const LinearOperands *linear,
                      const AttentionScores *attention) {
  auto sig = spmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  GNNC_RETURN_IF_ERROR(
      checkLinearOperands(kernel, *sig, graph.numRows, y, linear));
  GNNC_RETURN_IF_ERROR(checkAttentionScores(kernel, *sig, graph, attention));
  if (sig->selfWeight) {
    // The self term reads row r of x for every graph row r.
    if (graph.numRows > graph.numCols)
      return Status::error("kernel '" + kernel.spec.name +
                           "' adds the self term x[r] to "
                           "every row r, but the graph has " +
                           std::to_string(graph.numRows) + " rows and only " +
                           std::to_string(graph.numCols) + " columns");
    uint64_t need = static_cast<uint64_t>(graph.numRows) *
                    static_cast<uint64_t>(sig->rowStride) *
                    elementSize(sig->type);
    if (x.size() < need)
      return Status::error("kernel '" + kernel.spec.name +
                           "' adds the self term x[r] to every row r: x "
                           "needs at least " +
                           std::to_string(need) + " bytes, it has " +
                           std::to_string(x.size()));
  }
  rt::ArgPack args = graphArguments(kernel.spec, graph);
  args.bind(ParamRole::Input, x, 0).bind(ParamRole::Result, y);
  if (values)
    args.bind(ParamRole::EdgeValues, *values);
  if (colNorm)
    args.bind(ParamRole::ColumnFactors, *colNorm);
  if (sig->attention)
    args.bind(ParamRole::AttentionRows, *attention->rows)
        .bind(ParamRole::AttentionColumns, *attention->columns);
  if (sig->linear()) {
    args.bind(ParamRole::LinearWeights, *linear->weight);
    if (sig->linearBias)
      args.bind(ParamRole::LinearBias, *linear->bias);
  }
  // batched kernels take the batch's blocks, cut on first use.
  if (kernel.spec.findRole(ParamRole::BatchBlocks)) {
    if (!graph.batched ||
        graph.hostRowPtr.size() != static_cast<size_t>(graph.numRows) + 1)
      return Status::error("kernel '" + kernel.spec.name +
                           "' runs over a batch of graphs (batched_csr); "
                           "upload the graph with ops::uploadBatch");
    const Schedule &s = kernel.spec.schedule;
    const auto key =
        std::make_tuple(int64_t(s.tileRows), batchedTileEdges(s.tileRows),
                        int64_t(s.graphsPerBlock));
    auto blocks = graph.batchBlocks.find(key);
    if (blocks == graph.batchBlocks.end()) {
      std::vector<int64_t> host = graph::batchBlocks(
          graph.hostGraphPtr, graph.hostRowPtr, std::get<0>(key),
          std::get<1>(key), std::get<2>(key));
      auto device = uploadVector(host);
      if (!device)
        return device.status();
      DeviceGraph::Blocks made;
      made.firstRows = device.take();
      made.count = static_cast<int64_t>(host.size()) / kBatchBlockWords - 1;
      blocks = graph.batchBlocks.emplace(key, std::move(made)).first;
    }
    args.bind(ParamRole::BatchBlocks, blocks->second.firstRows)
        .bind(ParamRole::NumBatchBlocks, blocks->second.count);
  }
  GNNC_RETURN_IF_ERROR(
      bindNeighbourGroups(kernel.spec, graph, sig->groupSize, args));
  return runtime.launch(kernel, args, synchronize, stream);
}

Status gnnc::ops::bindNeighbourGroups(const rt::KernelSpec &spec,
                                      const DeviceGraph &graph,
                                      int64_t groupSize, rt::ArgPack &args) {
  if (!spec.findRole(ParamRole::GroupRows))
    return Status::ok();
  auto groups = graph.groups.find(groupSize);
  if (groups == graph.groups.end() && groupSize >= 1 &&
      graph.hostRowPtr.size() == static_cast<size_t>(graph.numRows) + 1) {
    // Built once per graph and group size, on first use.
    auto host = neighbourGroups(graph.hostRowPtr, groupSize,
                                "for kernel '" + spec.name + "'");
    if (!host)
      return host.status();
    GNNC_RETURN_IF_ERROR(uploadGroups(graph, groupSize, *host));
    groups = graph.groups.find(groupSize);
  }
  if (groupSize < 1 || groups == graph.groups.end())
    return Status::error(
        "kernel '" + spec.name + "' runs neighbour groups of " +
        std::to_string(groupSize) +
        " non-zeros; the graph has no host row offsets to build them from "
        "(add them with ops::addNeighbourGroups)");
  args.bind(ParamRole::GroupRows, groups->second.groupRows)
      .bind(ParamRole::NumGroups, groups->second.numGroups);
  // Groups of one edge need no ranges (gnn.sddmm: group g is edge g).
  if (spec.findRole(ParamRole::GroupBegins))
    args.bind(ParamRole::GroupBegins, groups->second.groupBegins);
  // Only the kernels that find a row's first group take the row table
  // (gnn.spmm's leaders; gnn.sddmm's groups have one output per edge).
  if (spec.findRole(ParamRole::GroupOffsets))
    args.bind(ParamRole::GroupOffsets, groups->second.groupPtr);
  return Status::ok();
}

Expected<rt::DeviceBuffer> gnnc::ops::uploadColumnNorm(const graph::CsrGraph &g,
                                                       double exponent) {
  std::vector<double> factors = ref::columnNormFactors(g, exponent);
  return uploadVector(std::vector<float>(factors.begin(), factors.end()));
}

double gnnc::ops::spmmTolerance(ElementType type) {
  // f32 accumulation error grows like (degree * 2^-24) * sum|terms|; the
  // final rounding to the output type adds 2^-11 (f16) or 2^-8 (bf16) of
  // |result| <= sum|terms|. Each bound below has a margin of about 2x.
  switch (type) {
  case ElementType::F32:
    return 2e-5;
  case ElementType::F16:
    return 2e-3;
  case ElementType::BF16:
    return 1e-2;
  }
  return 0;
}

double gnnc::ops::spmmTolerance(const SpmmSignature &sig, int64_t maxDegree) {
  double tol = spmmTolerance(sig.type);
  if (sig.atomicPieceEdges > 0) {
    // Each atomic piece is rounded to the result's type, then added to the
    // partial row there: two roundings of at most one unit of the type each,
    // relative to a partial sum no larger than the sum of the magnitudes.
    double unit = sig.type == ElementType::F32   ? 0x1p-24
                  : sig.type == ElementType::F16 ? 0x1p-11
                                                 : 0x1p-8;
    int64_t pieces = maxDegree / sig.atomicPieceEdges + 2;
    tol += 2.0 * static_cast<double>(pieces) * unit;
  }
  if (!sig.accumulate16)
    return tol;
  // Each f16 addition rounds by at most 2^-11 of the partial sum, itself at
  // most the sum of the magnitudes of its terms.
  int64_t terms =
      sig.discBatch > 0 ? std::min(sig.discBatch, maxDegree) : maxDegree;
  return tol + static_cast<double>(terms + 1) * 0x1p-11;
}

double gnnc::ops::spmmAbsoluteTolerance(ElementType type) {
  // Results in f16's subnormal range (below 2^-14) are spaced 2^-24 apart, so
  // rounding them costs up to 2^-25 whatever their terms; allow one spacing.
  // f32 and bf16 share f32's exponent range: no floor is needed.
  return type == ElementType::F16 ? 0x1p-24 : 1e-30;
}

Expected<SpmmCheck> gnnc::ops::checkSpmm(rt::Runtime &runtime,
                                         const rt::LoadedKernel &kernel,
                                         const graph::BatchedGraph &batch,
                                         uint64_t seed) {
  return checks::checkSpmmOn(runtime, kernel, batch.graph, seed, &batch);
}

Expected<SpmmCheck> gnnc::ops::checkSpmm(rt::Runtime &runtime,
                                         const rt::LoadedKernel &kernel,
                                         const graph::CsrGraph &g,
                                         uint64_t seed) {
  return checks::checkSpmmOn(runtime, kernel, g, seed, nullptr);
}

Expected<SpmmCheck> checks::checkSpmmOn(rt::Runtime &runtime,
                                        const rt::LoadedKernel &kernel,
                                        const graph::CsrGraph &g, uint64_t seed,
                                        const graph::BatchedGraph *batch) {
  auto sig = spmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  const int64_t width = sig->featureWidth;
  const int64_t stride = sig->rowStride;
  checks::SpmmInputs in =
      checks::randomSpmmInputs(*sig, g.numCols, g.nnz(), seed);
  if (sig->attention) {
    // Scores in [-4, 4): logits up to +-8, so each row's softmax is far
    // from uniform and a wrong maximum or sum shows.
    for (auto [scores, count, salt] :
         {std::make_tuple(&in.rowScores, g.numRows, 0xa77du),
          std::make_tuple(&in.colScores, g.numCols, 0x5c0eu)}) {
      *scores = ref::randomFeatures(count, seed ^ salt);
      for (float &v : *scores)
        v *= 4.0f;
      *scores = ref::roundThrough(*scores, sig->type);
    }
  }
  // Padded rows: x's padding holds NaN, which would reach any output that
  // used it.
  auto out = checks::runSpmm(runtime, kernel, *sig, g,
                             padRows(in.x, g.numCols, width, stride), in.values,
                             batch, &in);
  if (!out)
    return out.status();
  std::vector<float> &got = out->got;
  if (sig->linear())
    return checks::compareSpmmLinear(kernel.spec, g, *sig, in, got);
  // Padded rows: the padding of y belongs to the caller and must still hold
  // its poison bytes; the features of each row are compared below.
  std::string paddingReport;
  if (sig->padded()) {
    const size_t bytes = elementSize(sig->type);
    std::vector<unsigned char> raw(got.size() * bytes);
    if (!raw.empty())
      GNNC_RETURN_IF_ERROR(out->y.copyToHost(raw.data(), raw.size()));
    int64_t written = 0;
    for (int64_t r = 0; r < g.numRows; ++r)
      for (int64_t c = width; c < stride; ++c) {
        const unsigned char *e = raw.data() + (r * stride + c) * bytes;
        if (std::all_of(e, e + bytes,
                        [](unsigned char b) { return b == 0xff; }))
          continue;
        if (written++ == 0)
          paddingReport = "; the kernel wrote padding of y (row " +
                          std::to_string(r) + ", column " + std::to_string(c) +
                          " of row stride " + std::to_string(stride) + ")";
      }
    if (written > 0)
      paddingReport +=
          ", " + std::to_string(written) + " padding elements in all";
    got = checks::unpadRows(got, g.numRows, width, stride);
  }

  KernelCheck check = checks::compareSpmm(kernel.spec, g, *sig, in, got);
  if (sig->padded())
    check.report += " (row stride " + std::to_string(stride) + ")";
  if (!paddingReport.empty()) {
    check.ok = false;
    check.report += paddingReport;
  }
  return check;
}

checks::SpmmInputs checks::randomSpmmInputs(const SpmmSignature &sig,
                                            int64_t xRows, int64_t nnz,
                                            uint64_t seed) {
  SpmmInputs in;
  in.x = ref::roundThrough(ref::randomFeatures(xRows * sig.featureWidth, seed),
                           sig.type);
  in.edgeValues = sig.edgeValues;
  if (sig.edgeValues)
    in.values =
        ref::roundThrough(ref::randomFeatures(nnz, seed ^ 0x5eed), sig.type);
  if (sig.linear()) {
    // Weights of about 1/sqrt(K) (a layer's initial scale) keep the
    // results of the features' magnitude.
    const int64_t k = sig.featureWidth, m = sig.linearWidth;
    const float scale = 1.0f / std::sqrt(static_cast<float>(k));
    in.weight = ref::randomFeatures(k * m, seed ^ 0x3e1);
    for (float &v : in.weight)
      v *= scale;
    in.weight = ref::roundThrough(in.weight, sig.type);
    if (sig.linearBias)
      in.bias =
          ref::roundThrough(ref::randomFeatures(m, seed ^ 0xb1a5), sig.type);
  }
  return in;
}

KernelCheck checks::compareSpmmLinear(const rt::KernelSpec &spec,
                                      const graph::CsrGraph &g,
                                      const SpmmSignature &sig,
                                      const SpmmInputs &in,
                                      const std::vector<float> &got) {
  const int64_t k = sig.featureWidth, m = sig.linearWidth;
  std::vector<double> h, hAbs, expected, magnitude;
  ref::spmm(g, in.valuesOrNull(), in.x.data(), k, sig.options(), h, &hAbs);
  // Each row's aggregation error (its degree's bound) and the epilogue's
  // roundings (linearTolerance) both scale with the magnitudes of the
  // terms; the rows' own bounds scale their magnitudes.
  const double extra = linearTolerance(sig.type);
  const double base = spmmTolerance(sig.type) + extra;
  for (int64_t r = 0; r < g.numRows; ++r) {
    double factor = (spmmTolerance(sig, g.degree(r)) + extra) / base;
    if (factor != 1.0)
      for (int64_t c = 0; c < k; ++c)
        hAbs[r * k + c] *= factor;
  }
  ref::linearEpilogue(h, g.numRows, k, in.weight.data(), m,
                      sig.linearBias ? in.bias.data() : nullptr,
                      sig.activation == Activation::Relu, expected, &hAbs,
                      &magnitude, sig.transposeWeights);
  KernelCheck check = compareWithReference(spec, g, m, sig.type, got, expected,
                                           magnitude, m, base);
  check.report += " (linear epilogue " + std::to_string(k) + " x " +
                  std::to_string(m) + (sig.linearBias ? ", bias" : "") +
                  (sig.activation == Activation::Relu ? ", relu" : "") +
                  (sig.transposeWeights ? ", transposed weights" : "") + ")";
  return check;
}

double gnnc::ops::linearTolerance(ElementType type) {
  // The aggregated rows are rounded to the element type in shared memory
  // (2^-24 f32, 2^-11 f16, 2^-8 bf16 of each term's magnitude) and, in
  // f32, both they and the weights to TF32 (2^-11 each); products add in
  // f32; the result is rounded to its type once more. About 2x margin.
  switch (type) {
  case ElementType::F32:
    return 0x1p-9;
  case ElementType::F16:
    return 0x1p-9;
  case ElementType::BF16:
    return 0x1p-6;
  }
  return 0;
}

Expected<checks::SpmmOutput>
checks::runSpmm(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                const SpmmSignature &sig, const graph::CsrGraph &g,
                const std::vector<float> &x, const std::vector<float> &values,
                const graph::BatchedGraph *batch,
                const SpmmInputs *linearFrom) {
  auto dg = batch ? uploadBatch(*batch, sig.offsets64, sig.indices64)
                  : uploadGraph(g, sig.offsets64, sig.indices64);
  if (!dg)
    return dg.status();
  auto dx = uploadTensor(x, sig.type);
  if (!dx)
    return dx.status();
  Expected<rt::DeviceBuffer> dv = Status::error("unused");
  if (sig.edgeValues) {
    dv = uploadTensor(values, sig.type);
    if (!dv)
      return dv.status();
  }
  Expected<rt::DeviceBuffer> dn = Status::error("unused");
  if (sig.needsColumnNorm()) {
    dn = uploadColumnNorm(g, sig.colNormExponent);
    if (!dn)
      return dn.status();
  }
  Expected<rt::DeviceBuffer> dw = Status::error("unused"),
                             db = Status::error("unused");
  LinearOperands linear;
  if (sig.linear()) {
    if (!linearFrom)
      return Status::error("kernel '" + kernel.spec.name +
                           "' ends in a linear epilogue; this check does not "
                           "give it weights");
    dw = uploadTensor(linearFrom->weight, sig.type);
    if (!dw)
      return dw.status();
    linear.weight = &*dw;
    if (sig.linearBias) {
      db = uploadTensor(linearFrom->bias, sig.type);
      if (!db)
        return db.status();
      linear.bias = &*db;
    }
  }
  Expected<rt::DeviceBuffer> dd = Status::error("unused"),
                             ds = Status::error("unused");
  AttentionScores scores;
  if (sig.attention) {
    if (!linearFrom)
      return Status::error("kernel '" + kernel.spec.name +
                           "' weighs its edges by attention; this check does "
                           "not give it scores");
    dd = uploadTensor(linearFrom->rowScores, sig.type);
    if (!dd)
      return dd.status();
    ds = uploadTensor(linearFrom->colScores, sig.type);
    if (!ds)
      return ds.status();
    scores = {&*dd, &*ds};
  }
  const size_t outCount = static_cast<size_t>(g.numRows * sig.resultStride());
  auto dy = allocatePoisoned(outCount, sig.type);
  if (!dy)
    return dy.status();
  GNNC_RETURN_IF_ERROR(launchSpmm(
      runtime, kernel, *dg, *dx, sig.edgeValues ? &*dv : nullptr, *dy,
      /*synchronize=*/true, sig.needsColumnNorm() ? &*dn : nullptr,
      /*stream=*/nullptr, sig.linear() ? &linear : nullptr,
      sig.attention ? &scores : nullptr));
  auto got = downloadTensor(*dy, outCount, sig.type);
  if (!got)
    return got.status();
  return SpmmOutput{dy.take(), got.take()};
}

std::vector<float> checks::unpadRows(const std::vector<float> &rows,
                                     int64_t numRows, int64_t width,
                                     int64_t stride) {
  std::vector<float> out(static_cast<size_t>(numRows * width));
  for (int64_t r = 0; r < numRows; ++r)
    std::copy(rows.begin() + r * stride, rows.begin() + r * stride + width,
              out.begin() + r * width);
  return out;
}

KernelCheck checks::compareSpmm(const rt::KernelSpec &spec,
                                const graph::CsrGraph &g,
                                const SpmmSignature &sig, const SpmmInputs &in,
                                const std::vector<float> &got) {
  const int64_t width = sig.featureWidth;
  std::vector<double> expected, magnitude;
  if (sig.attention)
    ref::attentionSpmm(g, in.rowScores.data(), in.colScores.data(), in.x.data(),
                       width, attentionSlope(sig.leakyRelu), expected,
                       &magnitude);
  else
    ref::spmm(g, in.valuesOrNull(), in.x.data(), width, sig.options(), expected,
              &magnitude);
  // The error bounds of f16 accumulation and of atomic pieces grow with the
  // row's degree: each row gets its own, by scaling its magnitudes (the
  // comparison allows `tolerance` times an output's magnitude).
  const double base = spmmTolerance(sig.type);
  for (int64_t r = 0; r < g.numRows; ++r) {
    double factor = spmmTolerance(sig, g.degree(r)) / base;
    if (factor != 1.0)
      for (int64_t c = 0; c < width; ++c)
        magnitude[r * width + c] *= factor;
  }
  return compareWithReference(spec, g, width, sig.type, got, expected,
                              magnitude, width, base);
}

std::vector<float> gnnc::ops::padRows(const std::vector<float> &rows,
                                      int64_t numRows, int64_t width,
                                      int64_t stride) {
  if (stride == width)
    return rows;
  std::vector<float> padded(static_cast<size_t>(numRows * stride),
                            std::numeric_limits<float>::quiet_NaN());
  for (int64_t r = 0; r < numRows; ++r)
    std::copy(rows.begin() + r * width, rows.begin() + (r + 1) * width,
              padded.begin() + r * stride);
  return padded;
}

Expected<rt::DeviceBuffer> gnnc::ops::allocatePoisoned(size_t count,
                                                       ElementType type) {
  auto buffer = rt::DeviceBuffer::allocate(
      std::max<size_t>(count * elementSize(type), 1));
  if (!buffer)
    return buffer.status();
  GNNC_RETURN_IF_ERROR(buffer->fill(0xff));
  return buffer;
}

KernelCheck gnnc::ops::compareWithReference(
    const rt::KernelSpec &spec, const graph::CsrGraph &g, int64_t width,
    ElementType type, const std::vector<float> &got,
    const std::vector<double> &expected, const std::vector<double> &magnitude,
    int64_t groupWidth, double tolerance) {
  std::string report;
  Status cmp = ref::compareToReferenceScaled(
      got, expected, magnitude, groupWidth,
      tolerance > 0 ? tolerance : spmmTolerance(type), &report,
      spmmAbsoluteTolerance(type));
  KernelCheck check;
  check.ok = cmp.isOk();
  check.report = spec.name + " on '" + g.name + "' (" +
                 std::to_string(g.numRows) + " rows, " +
                 std::to_string(g.nnz()) + " nnz, width " +
                 std::to_string(width) + ", " + elementTypeName(type) +
                 "): " + (cmp.isOk() ? report : cmp.message());
  return check;
}
