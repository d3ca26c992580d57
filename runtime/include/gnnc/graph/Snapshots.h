//===- Snapshots.h - Dynamic graphs as sequences of snapshots ---*- C++ -*-===//
//
// A dynamic graph as a series of snapshots over one node set, each a square
// CSR graph (rows are destinations, columns sources, as everywhere in gnnc).
// A series is built from per-snapshot edge lists, cut from a timed edge
// stream (windows, or cumulative prefixes), read from the temporal .npz
// layouts of ../shared/datasets, or generated (an R-MAT graph that loses
// and gains a fixed fraction of its edges at every step).
//
// Consecutive snapshots share most of their edges. Following PiPAD, a group
// of S consecutive snapshots is split into the edges all of them have (the
// overlap, stored and aggregated once) and each snapshot's exclusive edges;
// snapshot s of the group is overlap ∪ exclusive[s], the two disjoint. The
// exclusive parts of a group, stacked into one array of row offsets per
// snapshot over one shared column array, are what the kernels read.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_GRAPH_SNAPSHOTS_H
#define GNNC_GRAPH_SNAPSHOTS_H

#include "gnnc/graph/Csr.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::graph {

/// A sequence of graph snapshots over one node set (rows = destinations, as
/// CsrGraph).
struct SnapshotSeries {
  int64_t numNodes = 0;
  /// Each numNodes x numNodes, rows sorted, no duplicate edges.
  std::vector<CsrGraph> snapshots;
  /// Where the series came from (file, generator and its parameters).
  std::string name;

  /// The number of snapshots.
  int64_t size() const;

  /// Checks that every snapshot is numNodes x numNodes, valid
  /// (CsrGraph::validate), and sorted with no duplicate edges; the error
  /// names the series, the snapshot and the rule: "covid: snapshot 3: row 7
  /// is not sorted and unique: column 5 at non-zero 40 follows column 9".
  Status validate() const;
};

/// The series of one snapshot per edge list: edge i of snapshot s goes from
/// src[s][i] to dst[s][i] (row dst, column src). Duplicate edges inside one
/// snapshot are merged; an edge with an endpoint outside [0, numNodes) is
/// an error naming the snapshot and the position. `weights` is empty (no
/// values) or has one list per snapshot, each empty (all ones) or with one
/// weight per edge; the weights of duplicate edges are summed.
Expected<SnapshotSeries> snapshotsFromEdgeLists(
    int64_t numNodes, const std::vector<std::vector<int64_t>> &src,
    const std::vector<std::vector<int64_t>> &dst,
    const std::vector<std::vector<float>> &weights, const std::string &name);

/// The series of a timed edge stream (edge i from src[i] to dst[i]) cut into
/// windows: window w holds the edges [cuts[w], cuts[w + 1]) of the stream,
/// or with `cumulative` all edges before cuts[w + 1]. `cuts` starts at 0, is
/// sorted and ends at most at the stream's length (later edges belong to no
/// window), so there are cuts.size() - 1 snapshots. Structure only (no
/// values); an edge repeated inside a window is stored once.
Expected<SnapshotSeries>
snapshotsFromEdgeStream(int64_t numNodes, const std::vector<int64_t> &src,
                        const std::vector<int64_t> &dst,
                        const std::vector<int64_t> &cuts, bool cumulative,
                        const std::string &name);

/// Reads a series from a temporal .npz of ../shared/datasets; the layout is
/// detected from the members present:
///  - per-snapshot edge lists (temporal_england_covid.npz): `edge_ptr`
///    (integer, T + 1, from 0, sorted, ending at the edge count), `src` and
///    `dst` (integer, one per edge), optionally `weight` (float or integer,
///    one per edge: the snapshots' values) and `num_snapshots` (scalar, T);
///  - a timed edge stream cut into windows (temporal_bitcoinalpha.npz):
///    `src`, `dst` and one window member `snapshot_ptr` or
///    `snapshot_ptr_<span>` (e.g. `snapshot_ptr_30d`; integer, from 0,
///    sorted, at most the edge count), optionally `time` (integer, one per
///    edge, non-decreasing); snapshot w is window w (not cumulative), no
///    values.
/// In both, `num_nodes` (scalar) gives the node count, else the largest id
/// plus one. Other members (`y`, `rating`, `csr_by_dst_indptr`, ...) are
/// not read. Errors name the file, the member and the rule:
/// "covid.npz: member 'edge_ptr': not sorted: edge_ptr[3] = 10 is below
/// edge_ptr[2] = 12".
Expected<SnapshotSeries> readSnapshotSeries(const std::string &path);
/// readSnapshotSeries on the bytes of a file named `path` in errors.
Expected<SnapshotSeries> parseSnapshotSeries(const std::string &path,
                                             std::vector<uint8_t> bytes);

/// An evolving R-MAT graph: snapshot 0 is an R-MAT graph (generateRmat with
/// the Graph500 a = 0.57, b = c = 0.19, self loops dropped, duplicates
/// merged, both directions of every edge when `undirected`); each later
/// snapshot removes round(churn x |E|) random edges of the previous one and
/// adds as many R-MAT edges that the previous one does not have (an edge of
/// an undirected series is the pair of both directions). Consecutive
/// snapshots therefore share a 1 - churn fraction of their edges, up to
/// rounding, and all have the same number of edges.
struct EvolvingRmatOptions {
  /// 2^scale nodes; scale in [0, 31].
  int scale = 16;
  /// edgeFactor << scale sampled edges for snapshot 0 (>= 0).
  int edgeFactor = 16;
  /// The number of snapshots (>= 1).
  int64_t snapshots = 8;
  /// The fraction of edges replaced per step, in [0, 1].
  double churn = 0.1;
  /// The same seed gives the same series on every machine.
  uint64_t seed = 1;
  bool undirected = true;
};
/// The series of `options`; fails on options out of range or when a graph
/// this small has too few node pairs left to add the new edges.
Expected<SnapshotSeries>
generateEvolvingRmat(const EvolvingRmatOptions &options);

/// A group of consecutive snapshots split into the edges all of them share
/// (the overlap) and each one's exclusive edges (PiPAD). Snapshot s of the
/// group = overlap ∪ exclusive[s] (disjoint). Structure only: no values.
struct SnapshotGroup {
  /// The index of the group's first snapshot in the series.
  int64_t first = 0;
  int64_t numNodes = 0;
  /// numNodes x numNodes, rows sorted: the edges of every snapshot.
  CsrGraph overlap;
  /// One per snapshot, numNodes x numNodes, rows sorted: its edges outside
  /// the overlap.
  std::vector<CsrGraph> exclusive;

  /// The number of snapshots in the group.
  int64_t size() const;
  /// The overlap rate: overlap.nnz() x S / snapshotEdges(), the fraction of
  /// the snapshots' edges that are shared; 1.0 for identical snapshots, 0
  /// when the snapshots have no edges. (storedEdges() / snapshotEdges() is
  /// what the split stores per edge of the snapshots.)
  double overlapRate() const;
  /// Edges stored: overlap.nnz() + the exclusive parts' nnz summed.
  int64_t storedEdges() const;
  /// The snapshots' edges summed: overlap.nnz() x S + the exclusive parts'.
  int64_t snapshotEdges() const;
  /// Snapshot s of the group rebuilt (overlap merged with exclusive[s],
  /// rows sorted), for references.
  CsrGraph snapshot(int64_t s) const;
};

/// The group of the snapshots' transposes (rows = the original's columns):
/// the overlap and every exclusive part transposed, rows sorted. A pair of
/// nodes is an edge of every transposed snapshot exactly when its reverse
/// is one of every snapshot, so the transposed overlap is again the
/// snapshots' intersection and the result an overlap group, with the same
/// counts. Snapshot s of the result is snapshot s of `group` transposed
/// (named "<snapshot>^T"). The feature gradient of gnn.spmm over a group
/// runs over its transpose.
SnapshotGroup transposeGroup(const SnapshotGroup &group);

/// The group of the `count` snapshots from `first` (first in [0, size),
/// count >= 1, first + count <= size, and those snapshots valid as
/// SnapshotSeries::validate requires). Edges are matched by (row, column);
/// values are not carried. One linear merge per row, rows on
/// hostThreads() threads; the result does not depend on their number.
Expected<SnapshotGroup> overlapGroup(const SnapshotSeries &series,
                                     int64_t first, int64_t count);

/// Every group of `groupSize` (>= 1) consecutive snapshots from the first;
/// the last group is shorter when groupSize does not divide the series.
Expected<std::vector<SnapshotGroup>> overlapGroups(const SnapshotSeries &series,
                                                   int64_t groupSize);

/// A group's exclusive parts stacked for the kernels: `offsets` has
/// S x (numNodes + 1) entries, snapshot s's row offsets at s x (numNodes +
/// 1), each starting at the running total, so that all of them index the
/// one `columns` array; `columns` holds the exclusive column indices of
/// snapshot 0, then of 1, and so on.
struct StackedExclusive {
  std::vector<int64_t> offsets;
  std::vector<int64_t> columns;
};
/// The stacked exclusive parts of `group`.
StackedExclusive stackExclusive(const SnapshotGroup &group);

} // namespace gnnc::graph

#endif // GNNC_GRAPH_SNAPSHOTS_H
