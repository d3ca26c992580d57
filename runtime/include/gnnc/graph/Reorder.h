//===- Reorder.h - Node renumbering for locality ----------------*- C++ -*-===//
//
// Orders of the nodes of a square graph that make sparse aggregation more
// cache friendly, and the plumbing to use them: relabel a graph, and move
// feature matrices between the original and the new numbering.
//
// Convention: node `old` of the input becomes node `oldToNew[old]` of the
// renumbered graph; `newToOld` is the inverse. For a feature matrix X
// (row-major, one row per node), the renumbered matrix is P·X with
// (P·X)[new] = X[newToOld[new]], and the renumbered graph is P·A·Pᵀ, so that
// (P·A·Pᵀ)(P·X) = P·(A·X).
//
// The orders expect a graph that satisfies CsrGraph::validate().
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_GRAPH_REORDER_H
#define GNNC_GRAPH_REORDER_H

#include "gnnc/graph/Csr.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::graph {

/// A renumbering of n nodes, kept in both directions.
struct Permutation {
  /// newToOld[new] = the original id of the node numbered `new`.
  std::vector<int64_t> newToOld;
  /// oldToNew[old] = the new id of original node `old`.
  std::vector<int64_t> oldToNew;

  /// Number of nodes.
  int64_t size() const { return static_cast<int64_t>(newToOld.size()); }

  /// Checks that both maps have n entries, are bijections of [0, n) and are
  /// inverse to each other; reports the first violation.
  Status validate(int64_t n) const;

  /// The inverse renumbering (the two maps swapped).
  Permutation inverse() const;

  /// The identity on n nodes.
  static Permutation identity(int64_t n);

  /// Builds a permutation from its new-to-old map (oldToNew is derived);
  /// fails if the map is not a bijection of [0, size).
  static Expected<Permutation> fromNewToOld(std::vector<int64_t> newToOld);
};

/// Nodes sorted by row length (out-degree), longest first when `descending`;
/// ties keep the original order (stable).
Permutation degreeSortOrder(const CsrGraph &g, bool descending = true);

/// Reverse Cuthill–McKee on the symmetrized pattern (A + Aᵀ, diagonal and
/// values ignored). Each connected component starts from a pseudo-peripheral
/// node (George–Liu search from a node of least degree); the neighbours of a
/// node are numbered in increasing degree (ties by id). Components are
/// numbered in order of their least-degree node, isolated nodes (and empty
/// rows without incoming edges) included; the whole sequence is then
/// reversed. Deterministic. `g` should be square: for a non-square matrix
/// the identity on numRows is returned.
Permutation rcmOrder(const CsrGraph &g);

/// Parameters of communityOrder.
struct CommunityOptions {
  /// Most label-propagation sweeps.
  int maxIterations = 20;
  /// Stop early once a sweep changes the labels of fewer than this fraction
  /// of the nodes.
  double minChangeFraction = 1e-3;
  /// A community grows no larger than this many nodes (0: no limit). A cap
  /// near the cache size in rows keeps hub-dominated graphs from collapsing
  /// into one community.
  int64_t maxCommunitySize = 0;
  /// Seeds the sweep order and the tie-breaking; the result is a function of
  /// the graph and the seed only.
  uint64_t seed = 1;
};

/// What communityOrder found.
struct CommunityInfo {
  /// Number of communities (isolated nodes are communities of one).
  int64_t numCommunities = 0;
  /// Label-propagation sweeps run.
  int iterations = 0;
  /// Community c occupies new ids [communityStart[c], communityStart[c+1]);
  /// numCommunities + 1 entries.
  std::vector<int64_t> communityStart;
};

/// Community-aware order in the spirit of Rabbit order and GNNAdvisor:
/// communities are detected by label propagation on the symmetrized pattern
/// (asynchronous sweeps in a seeded random node order; a node takes the
/// label most frequent among its neighbours, keeping its own on a tie with
/// it, otherwise breaking ties by a seeded hash of the label), communities
/// are placed by decreasing size (ties by least member id), and the nodes of
/// each community are ordered by reverse Cuthill–McKee on the subgraph they
/// induce. Deterministic for a seed. `info`, if non-null, receives the
/// community count and boundaries. For a non-square matrix the identity on
/// numRows is returned (with one community).
Permutation communityOrder(const CsrGraph &g,
                           const CommunityOptions &options = {},
                           CommunityInfo *info = nullptr);

/// Whether `name` is an order orderByName knows: "degree", "rcm" or
/// "community".
bool isKnownOrder(const std::string &name);

/// The order called `name` (degreeSortOrder descending, rcmOrder, or
/// communityOrder with default options, which fills `info` if non-null);
/// an error naming the known orders for any other name.
Expected<Permutation> orderByName(const CsrGraph &g, const std::string &name,
                                  CommunityInfo *info = nullptr);

/// The renumbered graph P·A·Pᵀ: entry (r, c) becomes (oldToNew[r],
/// oldToNew[c]) with its value; rows of the result are sorted by column.
/// Fails if `g` is not square, the permutation's size is not numRows, or it
/// is not a valid permutation.
Expected<CsrGraph> applyPermutation(const CsrGraph &g, const Permutation &perm);

/// A renumbered graph and where each of its edges came from.
struct PermutedGraph {
  /// P·A·Pᵀ, as applyPermutation returns it.
  CsrGraph graph;
  /// edgeOf[e] is the position in the input's colIdx of the renumbered
  /// graph's e-th edge: a permutation of [0, nnz). Per-edge data given in
  /// the input's edge order moves to the renumbered order with
  /// permuteEdgeData(data, edgeOf).
  std::vector<int64_t> edgeOf;
};

/// applyPermutation, keeping the edge map. Entries of a renumbered row are
/// sorted by column; repeated columns keep the input's edge order. Fails as
/// applyPermutation does.
Expected<PermutedGraph> applyPermutationWithEdgeMap(const CsrGraph &g,
                                                    const Permutation &perm);

/// Moves a feature matrix from the new numbering back to the original one:
/// original[old, :] = renumbered[oldToNew[old], :]. Both are perm.size() x
/// width row-major; they must not overlap.
void permuteRowsToOriginal(const Permutation &perm, const float *renumbered,
                           int64_t width, float *original);

/// Moves a feature matrix into the new numbering: renumbered[new, :] =
/// original[newToOld[new], :]. Both are perm.size() x width row-major; they
/// must not overlap.
void permuteRowsToNew(const Permutation &perm, const float *original,
                      int64_t width, float *renumbered);

/// Mean |row - col| over the non-zeros (0 for an empty graph): the average
/// bandwidth, lower when the non-zeros hug the diagonal.
double averageBandwidth(const CsrGraph &g);

/// Largest |row - col| over the non-zeros (0 for an empty graph).
int64_t maxBandwidth(const CsrGraph &g);

} // namespace gnnc::graph

#endif // GNNC_GRAPH_REORDER_H
