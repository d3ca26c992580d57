//===- Renumber.h - Renumbered graphs in the user's order -------*- C++ -*-===//
//
// Node renumbering (gnnc/graph/Reorder.h) makes sparse aggregation more cache
// friendly, but it changes the numbering of the nodes and the order of the
// edges. This API renumbers a graph once, keeps the maps between the user's
// order and the internal (renumbered) one, and moves features and per-edge
// values between the two orders on the GPU, so that callers give and get
// data in their own node and edge order:
//
//   auto rg = ops::renumberGraph(g, ops::NodeOrder::Rcm);  // host, once
//   auto sig = ops::spmmSignature(kernel.spec);
//   auto dg = ops::uploadRenumberedGraph(runtime, *rg, *sig);
//   // x, values, y in the user's order:
//   ops::launchSpmmInUserOrder(runtime, kernel, *dg, x, &values, y);
//
// launchSpmmInUserOrder pays two feature moves per call (x in, y out) plus
// one of the edge values. For a model of several layers, move the features
// into the internal order once (DeviceRenumberedGraph::rowsToInternal), run
// every layer there with launchSpmm on DeviceRenumberedGraph::graph (edge
// values moved once with edgeValuesToInternal), and move the result back
// once (rowsToUser): node-wise operations (dense layers, activations) do not
// care about the order of the rows.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_OPS_RENUMBER_H
#define GNNC_OPS_RENUMBER_H

#include "gnnc/graph/Csr.h"
#include "gnnc/graph/Reorder.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/runtime/Runtime.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gnnc::ops {

/// The node orders renumberGraph knows (see gnnc/graph/Reorder.h).
enum class NodeOrder {
  Degree,   ///< degreeSortOrder: longest rows first.
  Rcm,      ///< rcmOrder: reverse Cuthill–McKee.
  Community ///< communityOrder: label propagation, RCM inside communities.
};

/// "degree", "rcm" or "community".
const char *nodeOrderName(NodeOrder order);

/// Parses an order name; the error lists the known names.
Expected<NodeOrder> parseNodeOrder(const std::string &name);

/// Options of the orders.
struct RenumberOptions {
  /// Degree: longest rows first (otherwise shortest first).
  bool degreeDescending = true;
  /// Community: passed to communityOrder.
  graph::CommunityOptions community;
};

/// A user's graph renumbered for a kernel, with the maps between the user's
/// order and the internal one.
struct RenumberedGraph {
  /// The renumbered graph P·A·Pᵀ (the internal order).
  graph::CsrGraph graph;
  /// Internal node `new` is user node perm.newToOld[new]; user node `old`
  /// is internal node perm.oldToNew[old].
  graph::Permutation perm;
  /// edgeOf[e] is the user's edge (its position in the user graph's colIdx)
  /// that is edge e of the renumbered graph.
  std::vector<int64_t> edgeOf;
  /// The order used (for reports).
  std::string orderName;
  /// Community order: the communities found (empty otherwise).
  graph::CommunityInfo community;
  /// Host seconds spent computing the order and applying it (relabelling the
  /// graph and building the edge map).
  double orderSeconds = 0;
  double applySeconds = 0;
  /// The whole host cost of renumbering.
  double seconds() const { return orderSeconds + applySeconds; }

  int64_t numNodes() const { return graph.numRows; }
  int64_t nnz() const { return graph.nnz(); }
};

/// Renumbers `g` (which must be square and satisfy CsrGraph::validate())
/// with `order`; times the order and its application.
Expected<RenumberedGraph> renumberGraph(const graph::CsrGraph &g,
                                        NodeOrder order,
                                        const RenumberOptions &options = {});

/// renumberGraph with an order given by name ("degree", "rcm",
/// "community").
Expected<RenumberedGraph> renumberGraph(const graph::CsrGraph &g,
                                        const std::string &orderName,
                                        const RenumberOptions &options = {});

/// Renumbers `g` with a permutation the caller computed (named `orderName`
/// in reports); fails on a permutation of the wrong size or that is not a
/// bijection.
Expected<RenumberedGraph> renumberGraph(const graph::CsrGraph &g,
                                        graph::Permutation perm,
                                        const std::string &orderName);

//===----------------------------------------------------------------------===//
// Moves on the GPU
//===----------------------------------------------------------------------===//

/// The CUDA source of the row-gather kernels: for word sizes of 16, 4, 2
/// and 1 bytes, `gnnc_gather_rows_<bytes>(in, out, map, num_rows,
/// row_words, num_words)` sets out row i to in row map[i] (i64 map), rows
/// of row_words words, num_words = num_rows * row_words.
std::string gatherKernelSource();

/// The KernelSpecs of the gather kernels, one per word size (16, 4, 2, 1),
/// all from gatherKernelSource().
std::vector<rt::KernelSpec> gatherKernelSpecs();

/// The gather kernels, loaded for one runtime.
struct GatherKernels {
  /// By word size in bytes: 16, 4, 2, 1.
  std::map<size_t, rt::LoadedKernel> byWordBytes;

  /// Compiles (through the runtime's cache) and loads them.
  static Expected<GatherKernels> load(rt::Runtime &runtime);

  /// out[i * rowBytes ..] = in[map[i] * rowBytes ..] for i in [0, numRows):
  /// `map` holds numRows i64 entries, each below the number of rows of `in`
  /// (the caller guarantees it; the kernel does not check). Copies 16-, 4-
  /// or 2-byte words when rowBytes and both buffers' addresses allow it,
  /// else bytes. With `copyBytes` (0 < copyBytes <= rowBytes) only the
  /// first copyBytes of each row are copied: the rest of each row of `out`
  /// (padding) is left as it was. Fails, without launching, when a buffer
  /// is too small or `in` and `out` are the same buffer.
  Status gatherRows(rt::Runtime &runtime, const rt::DeviceBuffer &in,
                    int64_t inRows, rt::DeviceBuffer &out,
                    const rt::DeviceBuffer &map, int64_t numRows,
                    size_t rowBytes, bool synchronize = true,
                    size_t copyBytes = 0) const;
};

/// The word size gatherRows uses for rows of `rowBytes` between buffers at
/// addresses `inAddress` and `outAddress` (copying `copyBytes` of each row;
/// 0: all): 16, 4, 2 or 1.
size_t gatherWordBytes(size_t rowBytes, uint64_t inAddress, uint64_t outAddress,
                       size_t copyBytes = 0);

/// Device buffers launchSpmmInUserOrder moves data through (grown as
/// needed, reused by later calls).
struct RenumberScratch {
  rt::DeviceBuffer x, values, y;
};

/// A renumbered graph on the GPU: the internal graph, ready for launchSpmm,
/// plus the maps between the orders and the kernels that move data.
struct DeviceRenumberedGraph {
  /// The renumbered graph (internal order).
  DeviceGraph graph;
  /// i64 maps: newToOld and oldToNew (numNodes entries), edgeOf (nnz).
  rt::DeviceBuffer newToOld, oldToNew, edgeOf;
  int64_t numNodes = 0;
  int64_t nnz = 0;
  GatherKernels gather;
  /// Column factors of the renumbered graph (uploadColumnNorm), by exponent.
  std::map<double, rt::DeviceBuffer> columnNorms;
  /// launchSpmmInUserOrder's buffers when the caller passes none.
  RenumberScratch scratch;

  /// Makes the graph ready for kernels of signature `sig`: the column
  /// factors of its exponent (once; neighbour groups are built by the first
  /// launch). `host` must be the graph this one was uploaded from.
  Status prepare(const RenumberedGraph &host, const SpmmSignature &sig);

  /// Moves rows (features) from the user's order to the internal one:
  /// internal[new] = user[newToOld[new]], numNodes rows of `rowBytes`
  /// (rowStride * element size for padded rows: whole rows are copied).
  Status rowsToInternal(rt::Runtime &runtime, const rt::DeviceBuffer &user,
                        rt::DeviceBuffer &internal, size_t rowBytes,
                        bool synchronize = true) const;
  /// Moves rows back to the user's order: user[old] =
  /// internal[oldToNew[old]]; with `copyBytes`, only the first copyBytes of
  /// each row (the features of a padded row, whose padding is the user's).
  Status rowsToUser(rt::Runtime &runtime, const rt::DeviceBuffer &internal,
                    rt::DeviceBuffer &user, size_t rowBytes,
                    bool synchronize = true, size_t copyBytes = 0) const;
  /// Moves per-edge data (`edgeBytes` per edge: the element size for edge
  /// values, times the heads for multi-head data) from the user's edge
  /// order to the internal one: internal[e] = user[edgeOf[e]].
  Status edgeValuesToInternal(rt::Runtime &runtime,
                              const rt::DeviceBuffer &user,
                              rt::DeviceBuffer &internal, size_t edgeBytes,
                              bool synchronize = true) const;
};

/// Uploads `host` with the offset and index widths of `sig`, its maps, and
/// what kernels of `sig` need (DeviceRenumberedGraph::prepare); loads the
/// gather kernels into `runtime`.
Expected<DeviceRenumberedGraph>
uploadRenumberedGraph(rt::Runtime &runtime, const RenumberedGraph &host,
                      const SpmmSignature &sig);

/// Runs a compiled spmm kernel on the renumbered graph with data in the
/// user's order: moves `x` (user rows, rowStride elements each) and `values`
/// (user edge order; null when the kernel takes none) into the internal
/// order, launches the kernel on the renumbered graph (with its column
/// factors when it scales columns; see DeviceRenumberedGraph::prepare, done
/// by uploadRenumberedGraph for the signature given there) and moves the result
/// back into `y` (user rows; the padding of padded rows is not written).
///
/// Each call pays two feature moves (and one of the edge values); a
/// multi-layer model should move once and run its layers in the internal
/// order (see the top of this file). `scratch` holds the internal copies
/// (null: the graph's own buffers).
Status launchSpmmInUserOrder(rt::Runtime &runtime,
                             const rt::LoadedKernel &kernel,
                             DeviceRenumberedGraph &graph,
                             const rt::DeviceBuffer &x,
                             const rt::DeviceBuffer *values,
                             rt::DeviceBuffer &y, bool synchronize = true,
                             RenumberScratch *scratch = nullptr);

/// checkSpmm through the renumbering: runs `kernel` with
/// launchSpmmInUserOrder on `renumbered` (the renumbering of `user`) with
/// fresh random features (and edge values) in the user's order drawn from
/// `seed`, y poisoned with NaN first (and x's row padding NaN), and compares
/// the features of every row with the double-precision CPU reference on
/// `user`.
Expected<KernelCheck> checkSpmmInUserOrder(rt::Runtime &runtime,
                                           const rt::LoadedKernel &kernel,
                                           const graph::CsrGraph &user,
                                           const RenumberedGraph &renumbered,
                                           uint64_t seed);

} // namespace gnnc::ops

#endif // GNNC_OPS_RENUMBER_H
