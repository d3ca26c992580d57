//===- Batch.h - Batches of small graphs ------------------------*- C++ -*-===//
//
// A batch of small graphs (molecules, proteins) as one block-diagonal CSR
// graph: graph g owns the nodes [graphPtr[g], graphPtr[g + 1]) and the
// non-zeros [edgeGraphPtr[g], edgeGraphPtr[g + 1]), and every non-zero of
// its rows names one of its own nodes. This is the layout of the TU
// datasets (tu_PROTEINS.npz: `indptr`, `indices`, `num_nodes`, `graph_ptr`,
// `edge_graph_ptr`) and of `!gnn.graph<batched_csr, ...>` kernels, which
// read `graph_ptr` besides the CSR arrays.
//
// The batch is built from a list of graphs (collate), taken apart again
// (graphOf, splitRows), read from a TU .npz with validation, or generated
// (molecule-like batches for tests and benchmarks, with fixed seeds).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_GRAPH_BATCH_H
#define GNNC_GRAPH_BATCH_H

#include "gnnc/Plan/Abi.h"
#include "gnnc/graph/Csr.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::graph {

/// A batch of graphs as one block-diagonal CSR graph.
struct BatchedGraph {
  /// numRows == numCols == the batch's nodes; rows are destinations.
  CsrGraph graph;
  /// The first node of each graph, and the node count (numGraphs + 1).
  std::vector<int64_t> graphPtr;
  /// The first non-zero of each graph, and nnz (numGraphs + 1):
  /// graph.rowPtr[graphPtr[g]].
  std::vector<int64_t> edgeGraphPtr;

  int64_t numGraphs() const {
    return graphPtr.empty() ? 0 : static_cast<int64_t>(graphPtr.size()) - 1;
  }
  int64_t numNodes(int64_t g) const { return graphPtr[g + 1] - graphPtr[g]; }
  int64_t numEdges(int64_t g) const {
    return edgeGraphPtr[g + 1] - edgeGraphPtr[g];
  }
  /// The most nodes of one graph (0 for an empty batch).
  int64_t maxNodes() const;

  /// Checks the batch's rules and reports the first one broken with its
  /// place: the graph's own invariants (CsrGraph::validate), a square
  /// graph, graph_ptr from 0 to the node count and sorted, edge_graph_ptr
  /// consistent with the row offsets, every non-zero inside its graph, and,
  /// unless `allowEmptyGraphs`, no graph without nodes.
  Status validate(bool allowEmptyGraphs = true) const;
};

/// The batch of `graphs` (each square: its rows are its nodes), in order;
/// node n of graph g becomes node graphPtr[g] + n. Empty graphs are kept.
/// Edge values are kept when every graph has them (all ones when none
/// has); fails when only some have them or a graph is not square.
Expected<BatchedGraph> collate(const std::vector<CsrGraph> &graphs);

/// Graph `g` of the batch on its own, nodes renumbered from 0.
CsrGraph graphOf(const BatchedGraph &batch, int64_t g);

/// Per-graph pieces of `rows` (one row of `width` values per node of the
/// batch): the rows of graph g's nodes, in order.
std::vector<std::vector<float>> splitRows(const BatchedGraph &batch,
                                          const std::vector<float> &rows,
                                          int64_t width);

/// The batch with a self loop on every node that has none: GCN's A + I as
/// PyG's add_remaining_self_loops builds it (a node that already has a loop
/// keeps it, once, with its value). The loop goes before the first column
/// above the node, so sorted rows stay sorted; with edge values a new loop
/// has value 1. graphPtr is kept, edgeGraphPtr follows the new row offsets.
/// Fails, naming the rule, on a batch that breaks BatchedGraph::validate.
Expected<BatchedGraph> withSelfLoops(const BatchedGraph &batch);

/// The graph of each node (numNodes entries).
std::vector<int64_t> nodeGraphs(const BatchedGraph &batch);

/// The blocks of a batched gnn.spmm kernel (ParamRole::BatchBlocks) over a
/// batch with graph offsets `graphPtr` and row offsets `rowPtr`:
/// consecutive row ranges that cover every row in order. A run of
/// consecutive whole graphs with at most `tileRows` nodes, `tileEdges`
/// non-zeros and `graphsPerBlock` graphs (0: any number) is one block,
/// which stages them; a graph larger than a tile is cut into pieces of
/// `tileRows` rows, marked kBatchBlockFromGlobal (reduced from global
/// memory). Holds kBatchBlockWords words per block, its first row (with the
/// mark) and its first edge, and then the node count and the edge count; a
/// batch without rows has one empty block.
std::vector<int64_t> batchBlocks(const std::vector<int64_t> &graphPtr,
                                 const std::vector<int64_t> &rowPtr,
                                 int64_t tileRows, int64_t tileEdges,
                                 int64_t graphsPerBlock);

/// How a TU batch is read.
struct BatchReadOptions {
  /// Accept graphs without nodes (a TU dataset has none: by default one is
  /// an error).
  bool allowEmptyGraphs = false;
};

/// Reads a TU batch from a .npz archive: the CSR members of readNpzCsr
/// (`indptr`, `indices`, `num_nodes`) and `graph_ptr` (integer, G + 1),
/// `edge_graph_ptr` (integer, G + 1; optional, derived from the row
/// offsets when absent). Errors name the file, the member, the place and
/// the rule: "tu.npz: member 'graph_ptr': not sorted: graph_ptr[3] = 10 is
/// below graph_ptr[2] = 12".
Expected<BatchedGraph> readTuBatch(const std::string &path,
                                   const BatchReadOptions &options = {});
/// readTuBatch on the bytes of a file named `path` in errors.
Expected<BatchedGraph> parseTuBatch(const std::string &path,
                                    std::vector<uint8_t> bytes,
                                    const BatchReadOptions &options = {});

/// Molecule-like batches: graph sizes drawn from a log-normal distribution
/// with the mean and standard deviation of a TU set, clamped to
/// [minNodes, maxNodes]; each graph is a random tree of node degree at most
/// maxDegree (a chain with branches) with ring closures (bonds back to the
/// node ringSize - 1 places before, like the 5- and 6-rings of molecules)
/// on a fraction of its nodes; every bond is stored both ways, no self
/// loops, rows sorted.
struct MoleculeBatchOptions {
  int64_t numGraphs = 1000;
  /// Nodes per graph: defaults close to TU molecule sets (NCI1: mean 29.9,
  /// standard deviation 13.6).
  double meanNodes = 30.0;
  double stddevNodes = 13.0;
  int64_t minNodes = 4;
  int64_t maxNodes = 120;
  int32_t maxDegree = 4;
  /// Probability that a node closes a ring.
  double ringFraction = 0.12;
  int32_t ringSize = 6;
};
/// A batch drawn from `seed` (the same batch for the same options and seed
/// on every machine).
BatchedGraph generateMoleculeBatch(const MoleculeBatchOptions &options,
                                   uint64_t seed);

/// One molecule-like graph of exactly `nodes` nodes (a batch of one drawn
/// from `seed`, at most `maxDegree` bonds a node, rings on half of them).
CsrGraph moleculeGraph(int64_t nodes, int32_t maxDegree, uint64_t seed);

/// A batch with what breaks batched kernels, the same on every machine:
/// empty graphs at the start, in the middle and at the end, single nodes
/// with and without a self loop, a graph of 300 nodes and one of 40 (both
/// larger than small tiles) among 40 small graphs of 2 to 12 nodes.
BatchedGraph raggedBatch();

/// The same sizes as PROTEINS (mean 39.1, standard deviation 45.8, 4 to
/// 620 nodes): a batch whose largest graphs do not fit a block's shared
/// memory at wide features.
MoleculeBatchOptions proteinLikeOptions(int64_t numGraphs);

} // namespace gnnc::graph

#endif // GNNC_GRAPH_BATCH_H
