//===- Batched.h - gnn-bench's cases on batches of small graphs -*- C++ -*-===//
//
// One case is a batch of small graphs (TU PROTEINS, or generated
// molecule-like batches), an element type and a feature width. In one run
// it times, after checking each against the CPU reference: the fastest
// cuSPARSE CSR algorithm on the block-diagonal graph, gnnc's general
// schedules (vertex_parallel, edge_parallel, neighbor_group) on the same
// block-diagonal graph, and gnnc's batched schedules; and reports the
// fraction of the copy bandwidth each reaches on the compulsory bytes (X
// read once, Y written once, the graph read once).
//
// Around the aggregation, per batch, type and width: the unfused GCN and
// GIN layers (gnnc's batched gnn.spmm writing H, then cuBLASLt's H W with
// the bias and ReLU epilogue, checked against a double reference), the
// per-graph readout (gnn.readout and gnn.readout_grad), and the batch
// itself written as a TU .npz for the PyTorch side.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_BATCHED_H
#define GNNC_BENCH_BATCHED_H

#include "gnnc/Bench/Bench.h"
#include "gnnc/Bench/CublasLt.h"
#include "gnnc/Bench/Cusparse.h"
#include "gnnc/Plan/Types.h"
#include "gnnc/graph/Batch.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::bench {

/// A named batch: "tu_PROTEINS" (read from `datasets`), "mol<N>" (N
/// molecule-like graphs) or "prot<N>" (N graphs of PROTEINS' sizes), with
/// generated batches drawn from `seed`.
Expected<graph::BatchedGraph>
loadBatch(const std::string &name, const std::string &datasets, uint64_t seed);

/// The schedules a batched case times: the general ones (on the
/// block-diagonal graph, as `!gnn.graph<csr, ...>`) and the batched ones,
/// each a `#gnn.schedule<...>` that the plans accept for the op.
std::vector<std::string> generalBatchSchedules(ElementType type, int64_t width);
std::vector<std::string> batchedSchedules(ElementType type, int64_t width);
/// The batched schedules above that the plans accept for `op` (a batched
/// gnn.spmm with any reduce, scale or self term).
std::vector<std::string> batchedSchedulesFor(const OpDesc &op);

/// Runs one case (see the file comment) and returns its record; a kernel
/// that fails its check is recorded as wrong and not timed, and counts in
/// `failures`. `copyGbs` is the copy bandwidth (read + write) the fractions
/// are taken of; `libraries` may be null (no cuSPARSE).
nlohmann::json runBatchedCase(Bench &bench, CudaLibraries *libraries,
                              const std::string &name,
                              const graph::BatchedGraph &batch,
                              ElementType type, int64_t width, double copyGbs,
                              uint64_t seed, int &failures);

//===----------------------------------------------------------------------===//
// The batch on disk
//===----------------------------------------------------------------------===//

/// Writes `batch` as <dir>/<name>.npz in the TU layout graph::readTuBatch
/// reads: `indptr` (int64), `indices` (int32), `num_nodes` (int64 scalar),
/// `graph_ptr` and `edge_graph_ptr` (int64), and `data` (float32) when the
/// graph has edge values; uncompressed. Refuses to replace a file, a name
/// holding '/' and an index past int32.
Status dumpBatch(const graph::BatchedGraph &batch, const std::string &dir,
                 const std::string &name);

//===----------------------------------------------------------------------===//
// Layers: Y = ReLU(aggregate(X) W + b)
//===----------------------------------------------------------------------===//

/// The layer around a batched aggregation.
enum class LayerKind {
  /// Y = ReLU(Â X W + b), Â = D^-1/2 (A + I) D^-1/2: gnn.spmm sum with
  /// scale = both on the batch with a self loop on every node
  /// (graph::withSelfLoops).
  Gcn,
  /// Y = ReLU(((1 + eps) X + sum of the neighbours' X) W + b), eps = 0:
  /// gnn.spmm sum with self_weight = 0.0 on the batch as it is.
  Gin
};

/// "gcn" or "gin".
const char *layerKindName(LayerKind kind);
/// Parses "gcn" or "gin".
Expected<LayerKind> parseLayerKind(const std::string &text);

/// The aggregation's op: a batched gnn.spmm (sum) of `type` and `width`
/// with the layer's scale or self term.
OpDesc layerAggregateOp(LayerKind kind, ElementType type, int64_t width);

/// The layer's fused form: its aggregation with a linear epilogue of
/// width x width weights, the bias and ReLU (gnn.spmm's weight(...)).
OpDesc layerFusedOp(LayerKind kind, ElementType type, int64_t width);

/// The .gnn text of gnn.kernel `@name` holding the layer's aggregation (or,
/// `fused`, the whole layer) under `schedule` (none: no schedule written),
/// through opKernelText.
std::string layerKernelText(const std::string &name, LayerKind kind,
                            ElementType type, int64_t width,
                            const std::optional<Schedule> &schedule,
                            bool fused = false);

/// The relative tolerance of a layer output against the double reference,
/// of its magnitude (see LayerInputs::magnitude): ops::linearTolerance, the
/// rule of gnn.spmm's fused linear epilogue (H rounded to the type, TF32
/// products for f32, Y's rounding), which the unfused layer shares.
double layerTolerance(ElementType type);

/// A layer's inputs on the host and its double reference. X, W and b are
/// drawn from the seed and rounded to the type (what the GPU reads).
struct LayerInputs {
  LayerKind kind = LayerKind::Gcn;
  ElementType type = ElementType::F32;
  int64_t width = 0;
  /// The graph the aggregation runs on (the batch with self loops for GCN).
  graph::BatchedGraph graph;
  /// X (nodes x width), W (width x width, row-major: in x out), b (width).
  std::vector<float> x, weight, bias;
  /// H = aggregate(X) and the sum of its terms' magnitudes, per element.
  std::vector<double> aggregate, aggregateMagnitude;
  /// Y = ReLU(H W + b), and sum_k magnitude(H[r, k]) |W[k, j]| + |b[j]|,
  /// the scale of Y[r, j]'s rounding error (ref::linearEpilogue).
  std::vector<double> expected, magnitude;

  int64_t nodes() const { return graph.graph.numRows; }
};

/// Builds the graph and inputs and computes the reference (host only).
Expected<LayerInputs> makeLayerInputs(const graph::BatchedGraph &batch,
                                      LayerKind kind, ElementType type,
                                      int64_t width, uint64_t seed);

/// Compares `got` (nodes x width) with inputs.expected at
/// layerTolerance(type) of the magnitudes (plus the type's absolute floor);
/// the report says what was compared and the first mismatches.
ops::KernelCheck compareLayerOutput(const LayerInputs &inputs,
                                    const std::vector<float> &got);

/// A layer case's inputs on the GPU, made once and shared by every way of
/// computing the layer: the graph (with the column factors for GCN), X, W,
/// b, and the outputs H (the aggregation) and Y (the layer), both
/// poisoned before each check.
struct LayerProblem {
  LayerInputs host;
  ops::DeviceGraph graph;
  /// deg_in(c)^-1/2 for GCN's scale = both (empty for GIN).
  rt::DeviceBuffer colNorm;
  rt::DeviceBuffer x, weight, bias, h, y;

  const rt::DeviceBuffer *columnNorm() const {
    return host.kind == LayerKind::Gcn ? &colNorm : nullptr;
  }
};

/// Uploads `inputs` (moved into the result) and allocates H and Y.
Expected<LayerProblem> uploadLayerProblem(LayerInputs inputs);

/// Downloads problem.y and compares it with the reference
/// (compareLayerOutput).
Expected<ops::KernelCheck> checkLayerOutput(const LayerProblem &problem);

/// Runs one layer case on `batch`: builds the LayerProblem once; checks
/// and times gnnc's batched aggregation under the model's schedule and
/// every schedule of batchedSchedulesFor (the fastest that passed writes
/// H); checks the unfused layer (that aggregation, then cuBLASLt's GEMM
/// with the bias and ReLU) against the reference, then times the GEMM
/// alone and both back to back in one region. The record (batch, type,
/// width, layer, graphs, nodes, edges, spmm_ms, gemm_ms, unfused_ms,
/// check, fused_ms, ...) has `fused_ms` null until a fused kernel is
/// timed. A failure is recorded, counts in `failures`, and is not timed.
/// `lt` may be null (no GEMM: only the aggregation is timed). Without
/// `backward`, the fused layer's backward is neither checked nor timed.
nlohmann::json runBatchedLayerCase(Bench &bench, const CublasLt *lt,
                                   const std::string &name,
                                   const graph::BatchedGraph &batch,
                                   LayerKind kind, ElementType type,
                                   int64_t width, double copyGbs, uint64_t seed,
                                   int &failures, bool backward = true);

//===----------------------------------------------------------------------===//
// Readout: gnn.readout and gnn.readout_grad
//===----------------------------------------------------------------------===//

/// The .gnn text of gnn.kernel `@name`: gnn.readout (or, with `grad`,
/// gnn.readout_grad) of `reduce` over a batch of `type` rows of `width`.
std::string readoutKernelText(const std::string &name, ElementType type,
                              int64_t width, Reduce reduce, bool grad);

/// The compulsory bytes of a readout: the forward reads X and writes a row
/// per graph; the gradient reads dY and writes dX, and for max also reads
/// X and Y; both read graph_ptr.
double readoutBytes(int64_t nodes, int64_t graphs, int64_t width,
                    ElementType type, Reduce reduce, bool grad);

/// For each of `reduces`: checks gnn.readout and gnn.readout_grad
/// (ops::checkReadout) on `batch`, then times each that passed (the
/// gradient with Y the forward's result). Returns one record per reduce
/// (batch, type, width, reduce, forward_ms, backward_ms, forward_check,
/// backward_check, compulsory bytes and copy fractions).
nlohmann::json runBatchedReadoutCases(Bench &bench, const std::string &name,
                                      const graph::BatchedGraph &batch,
                                      ElementType type, int64_t width,
                                      const std::vector<Reduce> &reduces,
                                      double copyGbs, uint64_t seed,
                                      int &failures);

} // namespace gnnc::bench

#endif // GNNC_BENCH_BATCHED_H
