//===- Spmm.h - Host side of compiled SpMM kernels --------------*- C++ -*-===//
//
// Moves graphs and feature matrices to the GPU in the layout a compiled
// gnn.spmm kernel expects, launches it, and checks it against the CPU
// reference. Shared by the GPU tests, the examples and gnn-bench.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_OPS_SPMM_H
#define GNNC_OPS_SPMM_H

#include "gnnc/graph/Batch.h"
#include "gnnc/graph/Csr.h"
#include "gnnc/reference/Spmm.h"
#include "gnnc/runtime/Float16.h"
#include "gnnc/runtime/Runtime.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace gnnc::ops {

/// The neighbour groups of a graph (GNNAdvisor): each row's non-zeros cut
/// into groups of at most `groupSize`, numbered row by row. `groupPtr`
/// (i64, numRows + 1 entries) holds the first group of each row, `groupRows`
/// (i32) the row of each group, `groupBegins` (i64, numGroups + 1 entries)
/// the first edge of each group and, last, the number of edges.
struct DeviceNeighbourGroups {
  rt::DeviceBuffer groupPtr;
  rt::DeviceBuffer groupRows;
  rt::DeviceBuffer groupBegins;
  int64_t numGroups = 0;
};

/// A CSR graph on the GPU with the offset and index widths of a kernel.
struct DeviceGraph {
  rt::DeviceBuffer rowPtr;
  rt::DeviceBuffer colIdx;
  int64_t numRows = 0;
  int64_t numCols = 0;
  int64_t nnz = 0;
  bool offsets64 = true;
  bool indices64 = false;
  /// The row offsets on the host (kept by uploadGraph), from which
  /// launchSpmm and launchSddmm build the neighbour groups a kernel needs
  /// on first use.
  std::vector<int64_t> hostRowPtr;
  /// Neighbour groups by group size, for neighbor_group kernels (see
  /// addNeighbourGroups; launchSpmm and launchSddmm add missing ones, so a
  /// DeviceGraph is not safe to launch from two threads at once).
  mutable std::map<int64_t, DeviceNeighbourGroups> groups;
  /// A batch of graphs (uploadBatch): the first node of each graph (i64,
  /// numGraphs + 1 entries), which the pooling kernels read, and on the
  /// host, from which launchSpmm cuts the blocks of batched gnn.spmm
  /// kernels (graph::batchBlocks) on first use, once per tile.
  rt::DeviceBuffer graphPtr;
  int64_t numGraphs = 0;
  bool batched = false;
  std::vector<int64_t> hostGraphPtr;
  struct Blocks {
    rt::DeviceBuffer firstRows;
    int64_t count = 0;
  };
  /// By (tile rows, tile edges, graphs per block).
  mutable std::map<std::tuple<int64_t, int64_t, int64_t>, Blocks> batchBlocks;
};

/// Uploads `g` with 64- or 32-bit row offsets and column indices; fails if
/// the graph does not fit the 32-bit form.
Expected<DeviceGraph> uploadGraph(const graph::CsrGraph &g, bool offsets64,
                                  bool indices64);

/// Uploads a batch: its block-diagonal graph as uploadGraph does, and its
/// graph offsets, for kernels over `!gnn.graph<batched_csr, ...>` (every
/// other spmm kernel runs on it too, as on any CSR graph). Fails on a batch
/// that breaks BatchedGraph::validate's rules.
Expected<DeviceGraph> uploadBatch(const graph::BatchedGraph &batch,
                                  bool offsets64, bool indices64);

/// The neighbour groups of `g` on the host (see DeviceNeighbourGroups):
/// `groupPtr` (numRows + 1 entries), `groupRows` (one per group) and
/// `groupBegins` (one per group, then the number of edges). A row without
/// non-zeros has no group.
struct NeighbourGroups {
  std::vector<int64_t> groupPtr;
  std::vector<int32_t> groupRows;
  std::vector<int64_t> groupBegins;
};
/// Fails on a group size below 1 or more rows than an i32 can name.
Expected<NeighbourGroups> neighbourGroups(const graph::CsrGraph &g,
                                          int64_t groupSize);
/// The same from a graph's row offsets (numRows + 1 entries); `name` for
/// messages.
Expected<NeighbourGroups> neighbourGroups(const std::vector<int64_t> &rowPtr,
                                          int64_t groupSize,
                                          const std::string &name);

/// Computes the neighbour groups of `g` (the graph `graph` was uploaded
/// from) of at most `groupSize` non-zeros and uploads them into
/// `graph.groups[groupSize]` (once: a second call for the same size does
/// nothing). Fails on a mismatched graph, a group size below 1, or more rows
/// than 32-bit group rows can name.
Status addNeighbourGroups(DeviceGraph &graph, const graph::CsrGraph &g,
                          int64_t groupSize);

/// Binds the neighbour groups of `groupSize` to `args` when `spec` takes
/// them (a neighbor_group gnn.spmm or gnn.sddmm kernel), building them from
/// graph.hostRowPtr on first use; nothing for other kernels. Fails when the
/// groups are missing and the graph has no host row offsets.
Status bindNeighbourGroups(const rt::KernelSpec &spec, const DeviceGraph &graph,
                           int64_t groupSize, rt::ArgPack &args);

/// Uploads `host` converted (rounded to nearest even) to `type`.
Expected<rt::DeviceBuffer> uploadTensor(const std::vector<float> &host,
                                        ElementType type);

/// Downloads `count` elements of `type` and widens them to float.
Expected<std::vector<float>> downloadTensor(const rt::DeviceBuffer &buffer,
                                            size_t count, ElementType type);

/// What a compiled spmm kernel expects, read from its description.
struct SpmmSignature {
  ElementType type = ElementType::F32;
  int64_t featureWidth = 0;
  /// Elements from one row of x (and of y) to the next: featureWidth, or
  /// the stride of padded rows (`row_stride` in the description, from
  /// `#gnn.rows<stride = ...>`). Only the first featureWidth elements of a
  /// row are features; the kernel may read the rest of x's row and never
  /// writes the rest of y's.
  int64_t rowStride = 0;
  /// Whether rows are padded (rowStride > featureWidth).
  bool padded() const { return rowStride != featureWidth; }
  bool edgeValues = false;
  bool offsets64 = true;
  bool indices64 = false;
  /// `reduce` and `scale` of the op (absent from `spec.info`: sum, none).
  /// For max, the reference comparison scales by |result| rather than by the
  /// sum of the magnitudes of the terms.
  gnnc::Reduce reduce = gnnc::Reduce::Sum;
  gnnc::DegreeScale scale = gnnc::DegreeScale::None;
  /// GIN's self weight eps, when the kernel adds (1 + eps) * x[r].
  std::optional<double> selfWeight;
  /// `accumulate = f16` (terms added in f16) and the schedule's
  /// `disc_batch` (0: none).
  bool accumulate16 = false;
  int64_t discBatch = 0;
  /// `write = atomic`: a row split between workers reaches the result in
  /// pieces of about this many edges, each rounded to the result's type and
  /// added atomically (0: every row is written once).
  int64_t atomicPieceEdges = 0;
  /// neighbor_group: the neighbours per group (0: another strategy).
  int64_t groupSize = 0;
  /// The column factors are deg_in(c)^-colNormExponent (the op's
  /// `col_norm_exponent`, 1/2 by default).
  double colNormExponent = 0.5;
  /// A linear epilogue (OpDesc::linear): the result is act(H W + b), rows
  /// of linearWidth (0: none), with or without the bias.
  int64_t linearWidth = 0;
  bool linearBias = false;
  gnnc::Activation activation = gnnc::Activation::None;
  /// The weights are stored M x K (transpose_weights).
  bool transposeWeights = false;
  /// Attention (OpDesc::attention): the weights are the row softmax of
  /// leaky_relu(dst[r] + src[c]) with the slope leakyRelu (unset: 1, the
  /// plain sum), from the scores launchSpmm gets (AttentionScores).
  bool attention = false;
  std::optional<double> leakyRelu;
  bool linear() const { return linearWidth > 0; }
  /// Elements of a result row: linearWidth, or the row stride.
  int64_t resultStride() const { return linear() ? linearWidth : rowStride; }
  /// Whether the kernel reads the column factors `col_norm`.
  bool needsColumnNorm() const {
    return scale == gnnc::DegreeScale::Right ||
           scale == gnnc::DegreeScale::Both;
  }
  /// The reference options of the op.
  ref::SpmmOptions options() const {
    ref::SpmmOptions o;
    o.reduce = reduce;
    o.scale = scale;
    o.selfWeight = selfWeight;
    o.colNormExponent = colNormExponent;
    return o;
  }
};

/// Reads the signature of a gnn.spmm kernel from `spec.info`.
Expected<SpmmSignature> spmmSignature(const rt::KernelSpec &spec);

/// Uploads the `col_norm` factors of `g` that a gnn.spmm kernel with
/// scale = right or both reads: deg_in(c)^-exponent (by default
/// 1/sqrt(deg_in(c))) as f32 for every column c (deg_in(c): the non-zeros in
/// column c), 0 for a column without any. Pass the kernel's
/// SpmmSignature::colNormExponent.
Expected<rt::DeviceBuffer> uploadColumnNorm(const graph::CsrGraph &g,
                                            double exponent = 0.5);

/// The operands of a linear epilogue: the weights (K x M, row-major, of
/// the kernel's element type) and the bias (M), null when the kernel takes
/// none.
struct LinearOperands {
  const rt::DeviceBuffer *weight = nullptr;
  const rt::DeviceBuffer *bias = nullptr;
};

/// The scores of a kernel with attention (SpmmSignature::attention): one
/// per graph row (`rows`, GAT's destination term) and one per column
/// (`columns`, its source term), of the kernel's element type.
struct AttentionScores {
  const rt::DeviceBuffer *rows = nullptr;
  const rt::DeviceBuffer *columns = nullptr;
};

/// Launches a compiled spmm kernel whose parameters carry the default names
/// (row_ptr, col_idx, num_rows, x, values, y, col_norm, and for
/// edge-parallel kernels num_edges; their workspace comes from the runtime;
/// neighbor_group kernels read `graph`'s neighbour groups of their size,
/// built and uploaded on first use from the host row offsets).
/// `x` and `y` hold rows of SpmmSignature::rowStride elements.
/// `values` may be null when the kernel takes no edge values; `colNorm` (from
/// uploadColumnNorm) must be given exactly when the kernel scales columns.
/// A kernel with a self term reads x[r] for every row r: it fails, without
/// launching, on a graph with more rows than columns or an `x` too small.
/// The kernel is queued on `stream` (a CUstream; null: the default stream);
/// the neighbour groups it may build first are copied synchronously.
/// A kernel with a linear epilogue takes `linear` (its weights, and its
/// bias when it has one) and writes rows of SpmmSignature::resultStride();
/// it fails, without launching, when an operand is missing or too small.
/// A kernel with attention takes `attention` (both scores), checked the
/// same way.
Status launchSpmm(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                  const DeviceGraph &graph, const rt::DeviceBuffer &x,
                  const rt::DeviceBuffer *values, rt::DeviceBuffer &y,
                  bool synchronize = true,
                  const rt::DeviceBuffer *colNorm = nullptr,
                  void *stream = nullptr,
                  const LinearOperands *linear = nullptr,
                  const AttentionScores *attention = nullptr);

/// The tolerance used for `type` outputs, relative to the sum of the
/// magnitudes of each output's terms (the scale of its rounding error).
double spmmTolerance(ElementType type);

/// The tolerance for the outputs of a kernel of signature `sig` in a row of
/// `maxDegree` non-zeros (or on a graph whose longest row has that many):
/// spmmTolerance(type), plus, with f16 accumulation, the worst-case error of
/// an f16 sum of n terms, (n + 1) * 2^-11 of their magnitudes, with n =
/// disc_batch, or the row's degree without discretized reduction; plus, with
/// atomic pieces, two roundings to the result's type per piece. checkSpmm
/// allows each row its own.
double spmmTolerance(const SpmmSignature &sig, int64_t maxDegree);

/// The error a linear epilogue adds, relative to the magnitude of its
/// terms (sum_k |h_k| |w_kn| + |b_n|): the aggregated rows rounded to
/// `type` (and to TF32 with the weights, for f32) and the result's rounding.
double linearTolerance(ElementType type);

/// The absolute error always allowed for `type` outputs (f16 subnormals).
double spmmAbsoluteTolerance(ElementType type);

/// The outcome of checking a kernel against the CPU reference.
struct KernelCheck {
  bool ok = false;
  /// What was compared and, on failure, the first mismatches.
  std::string report;
};
using SpmmCheck = KernelCheck;

/// `numRows` rows of `width` values laid out `stride` apart, the padding
/// NaN (so a kernel that used it would show it); `rows` itself when the
/// stride is the width.
std::vector<float> padRows(const std::vector<float> &rows, int64_t numRows,
                           int64_t width, int64_t stride);

/// Allocates room for `count` elements of `type` filled with NaN (all-ones
/// bytes are NaN in f32, f16 and bf16), so an unwritten output fails a check.
Expected<rt::DeviceBuffer> allocatePoisoned(size_t count, ElementType type);

/// Compares a kernel's output `got` (groups of `groupWidth` elements) with
/// the reference `expected`, allowing `spmmTolerance(type)` of each output's
/// term `magnitude` plus `spmmAbsoluteTolerance(type)`, and says what was
/// compared (kernel, graph, width) and the first mismatches.
/// `tolerance`, when positive, replaces spmmTolerance(type).
KernelCheck compareWithReference(const rt::KernelSpec &spec,
                                 const graph::CsrGraph &g, int64_t width,
                                 ElementType type,
                                 const std::vector<float> &got,
                                 const std::vector<double> &expected,
                                 const std::vector<double> &magnitude,
                                 int64_t groupWidth, double tolerance = 0.0);

/// Runs `kernel` on `g` with fresh random features (and edge values, if the
/// kernel takes them) drawn from `seed`, the output poisoned with NaN first,
/// and compares every element with the double-precision CPU reference.
/// With padded rows, x's padding holds NaN (a kernel that used it would
/// fail) and every padding element of y must keep its poison bytes.
Expected<SpmmCheck> checkSpmm(rt::Runtime &runtime,
                              const rt::LoadedKernel &kernel,
                              const graph::CsrGraph &g, uint64_t seed);
/// checkSpmm on a batch (uploadBatch): the reference is gnn.spmm on its
/// block-diagonal graph.
Expected<SpmmCheck> checkSpmm(rt::Runtime &runtime,
                              const rt::LoadedKernel &kernel,
                              const graph::BatchedGraph &batch, uint64_t seed);

} // namespace gnnc::ops

#endif // GNNC_OPS_SPMM_H
