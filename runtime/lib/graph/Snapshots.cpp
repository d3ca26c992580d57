//===- Snapshots.cpp - Dynamic graphs as sequences of snapshots -----------===//
#include "gnnc/graph/Snapshots.h"

#include "gnnc/graph/Parallel.h"
#include "gnnc/graph/Random.h"
#include "gnnc/graph/Readers.h"
#include "gnnc/graph/Rmat.h"

#include "ReaderSupport.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <limits>
#include <unordered_set>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

/// The series' name for messages.
std::string seriesName(const std::string &name) {
  return name.empty() ? "snapshot series" : name;
}

/// The name of snapshot `t` of the series `name`.
std::string snapshotName(const std::string &name, int64_t t) {
  return seriesName(name) + "[" + std::to_string(t) + "]";
}

/// A real number as %g prints it ("0.1", "1.5").
std::string real(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

std::string nodeRange(int64_t numNodes) {
  return "[0, " + std::to_string(numNodes) + ")";
}

/// The first row of `g` whose columns are not strictly increasing, as an
/// error; ok when there is none.
Status checkSortedRows(const CsrGraph &g) {
  for (int64_t r = 0; r < g.numRows; ++r)
    for (int64_t e = g.rowPtr[r] + 1; e < g.rowPtr[r + 1]; ++e)
      if (g.colIdx[e - 1] >= g.colIdx[e])
        return Status::error(
            "row " + std::to_string(r) + " is not sorted and unique: column " +
            std::to_string(g.colIdx[e]) + " at non-zero " + std::to_string(e) +
            " follows column " + std::to_string(g.colIdx[e - 1]));
  return Status::ok();
}

/// The rules of SnapshotSeries::validate for snapshot `t`.
Status checkSnapshot(const SnapshotSeries &series, int64_t t) {
  const CsrGraph &g = series.snapshots[t];
  std::string where =
      seriesName(series.name) + ": snapshot " + std::to_string(t);
  if (g.numRows != series.numNodes || g.numCols != series.numNodes)
    return Status::error(where + ": is " + std::to_string(g.numRows) + " x " +
                         std::to_string(g.numCols) +
                         "; every snapshot is numNodes x numNodes (" +
                         std::to_string(series.numNodes) + ")");
  if (Status s = g.validate(); !s)
    return s.withContext(where);
  if (Status s = checkSortedRows(g); !s)
    return s.withContext(where);
  return Status::ok();
}

Status checkNumNodes(const std::string &name, int64_t numNodes) {
  if (numNodes < 0)
    return Status::error(seriesName(name) + ": the node count " +
                         std::to_string(numNodes) + " is negative");
  return Status::ok();
}

/// An n x n graph without edges.
CsrGraph emptyGraph(int64_t n) {
  CsrGraph g;
  g.numRows = g.numCols = n;
  g.rowPtr.assign(n + 1, 0);
  return g;
}

/// The union of the edges of two n x n graphs with sorted rows (structure
/// only); rows of the result are sorted and unique.
CsrGraph unionOf(const CsrGraph &a, const CsrGraph &b) {
  CsrGraph g = emptyGraph(a.numRows);
  g.colIdx.reserve(a.nnz() + b.nnz());
  for (int64_t r = 0; r < a.numRows; ++r) {
    std::set_union(
        a.colIdx.begin() + a.rowPtr[r], a.colIdx.begin() + a.rowPtr[r + 1],
        b.colIdx.begin() + b.rowPtr[r], b.colIdx.begin() + b.rowPtr[r + 1],
        std::back_inserter(g.colIdx));
    g.rowPtr[r + 1] = g.nnz();
  }
  return g;
}

} // namespace

//===----------------------------------------------------------------------===//
// Series
//===----------------------------------------------------------------------===//

int64_t SnapshotSeries::size() const {
  return static_cast<int64_t>(snapshots.size());
}

Status SnapshotSeries::validate() const {
  GNNC_RETURN_IF_ERROR(checkNumNodes(name, numNodes));
  for (int64_t t = 0; t < size(); ++t)
    GNNC_RETURN_IF_ERROR(checkSnapshot(*this, t));
  return Status::ok();
}

Expected<SnapshotSeries> gnnc::graph::snapshotsFromEdgeLists(
    int64_t numNodes, const std::vector<std::vector<int64_t>> &src,
    const std::vector<std::vector<int64_t>> &dst,
    const std::vector<std::vector<float>> &weights, const std::string &name) {
  const std::string who = seriesName(name);
  GNNC_RETURN_IF_ERROR(checkNumNodes(name, numNodes));
  if (src.size() != dst.size())
    return Status::error(who + ": " + std::to_string(src.size()) +
                         " source lists but " + std::to_string(dst.size()) +
                         " destination lists; give one of each per snapshot");
  if (!weights.empty() && weights.size() != src.size())
    return Status::error(who + ": " + std::to_string(weights.size()) +
                         " weight lists for " + std::to_string(src.size()) +
                         " snapshots; give none or one per snapshot");
  SnapshotSeries series;
  series.numNodes = numNodes;
  series.name = name;
  series.snapshots.reserve(src.size());
  static const std::vector<float> noWeights;
  for (size_t t = 0; t < src.size(); ++t) {
    const std::string where = who + ": snapshot " + std::to_string(t);
    const std::vector<float> &w = weights.empty() ? noWeights : weights[t];
    if (src[t].size() != dst[t].size())
      return Status::error(where + ": " + std::to_string(src[t].size()) +
                           " sources but " + std::to_string(dst[t].size()) +
                           " destinations");
    if (!w.empty() && w.size() != src[t].size())
      return Status::error(where + ": " + std::to_string(w.size()) +
                           " weights for " + std::to_string(src[t].size()) +
                           " edges; give none or one per edge");
    for (size_t i = 0; i < src[t].size(); ++i)
      for (int64_t node : {src[t][i], dst[t][i]})
        if (node < 0 || node >= numNodes)
          return Status::error(where + ": edge " + std::to_string(i) + " (" +
                               std::to_string(src[t][i]) + " -> " +
                               std::to_string(dst[t][i]) + ") names node " +
                               std::to_string(node) + ", outside the nodes " +
                               nodeRange(numNodes));
    // Row = destination: the row aggregates from its sources.
    Expected<CsrGraph> g =
        fromCoo(numNodes, numNodes, dst[t], src[t], w,
                w.empty() ? Duplicates::KeepFirst : Duplicates::Sum);
    if (!g)
      return g.status().withContext(where);
    g->name = snapshotName(name, static_cast<int64_t>(t));
    series.snapshots.push_back(g.take());
  }
  return series;
}

Expected<SnapshotSeries> gnnc::graph::snapshotsFromEdgeStream(
    int64_t numNodes, const std::vector<int64_t> &src,
    const std::vector<int64_t> &dst, const std::vector<int64_t> &cuts,
    bool cumulative, const std::string &name) {
  const std::string who = seriesName(name);
  GNNC_RETURN_IF_ERROR(checkNumNodes(name, numNodes));
  if (src.size() != dst.size())
    return Status::error(who + ": the stream has " +
                         std::to_string(src.size()) + " sources but " +
                         std::to_string(dst.size()) + " destinations");
  const int64_t edges = static_cast<int64_t>(src.size());
  if (cuts.empty())
    return Status::error(who + ": no cuts; they need one entry more than the "
                               "windows (0 for no windows)");
  if (cuts.front() != 0)
    return Status::error(who + ": the cuts start at " +
                         std::to_string(cuts.front()) +
                         "; the first window starts at edge 0");
  for (size_t w = 1; w < cuts.size(); ++w)
    if (cuts[w] < cuts[w - 1])
      return Status::error(who + ": the cuts are not sorted: cut " +
                           std::to_string(w) + " = " + std::to_string(cuts[w]) +
                           " is below cut " + std::to_string(w - 1) + " = " +
                           std::to_string(cuts[w - 1]));
  if (cuts.back() > edges)
    return Status::error(who + ": the last cut " + std::to_string(cuts.back()) +
                         " is beyond the stream's " + std::to_string(edges) +
                         " edges");
  for (int64_t i = 0; i < edges; ++i)
    for (int64_t node : {src[i], dst[i]})
      if (node < 0 || node >= numNodes)
        return Status::error(who + ": edge " + std::to_string(i) +
                             " of the stream (" + std::to_string(src[i]) +
                             " -> " + std::to_string(dst[i]) + ") names node " +
                             std::to_string(node) + ", outside the nodes " +
                             nodeRange(numNodes));
  SnapshotSeries series;
  series.numNodes = numNodes;
  series.name = name;
  const int64_t windows = static_cast<int64_t>(cuts.size()) - 1;
  series.snapshots.reserve(windows);
  for (int64_t w = 0; w < windows; ++w) {
    std::vector<int64_t> rows(dst.begin() + cuts[w], dst.begin() + cuts[w + 1]);
    std::vector<int64_t> cols(src.begin() + cuts[w], src.begin() + cuts[w + 1]);
    Expected<CsrGraph> window =
        fromCoo(numNodes, numNodes, rows, cols, {}, Duplicates::KeepFirst);
    if (!window)
      return window.status().withContext(who + ": window " + std::to_string(w));
    // A cumulative snapshot is the previous one with this window's edges.
    CsrGraph g = cumulative && w > 0 ? unionOf(series.snapshots.back(), *window)
                                     : window.take();
    g.name = snapshotName(name, w);
    series.snapshots.push_back(std::move(g));
  }
  return series;
}

//===----------------------------------------------------------------------===//
// Temporal .npz files
//===----------------------------------------------------------------------===//

namespace {

/// Whether `member` names the windows of a timed edge stream.
bool isWindowMember(const std::string &member) {
  return member == "snapshot_ptr" || member.rfind("snapshot_ptr_", 0) == 0;
}

std::string at(const std::string &member, int64_t i, int64_t value) {
  return member + "[" + std::to_string(i) + "] = " + std::to_string(value);
}

/// Reads the members of one temporal archive, each checked as it is read;
/// errors read "path: member 'name': what is wrong".
class TemporalReader {
public:
  TemporalReader(const std::string &path, const NpzFile &npz)
      : path(path), npz(npz) {}

  Status memberError(const std::string &member, const std::string &msg) const {
    return Status::error(path + ": member '" + member + "': " + msg);
  }

  /// The integer 1-d member `member` (`role` says what it holds, for the
  /// error when it is missing).
  Status integers(const std::string &member, const std::string &role,
                  std::vector<int64_t> &out) const {
    if (!npz.has(member))
      return Status::error(path + ": no member '" + member + "' (" + role +
                           ")");
    Expected<std::vector<int64_t>> v = detail::npzIntegers(path, npz, member);
    if (!v)
      return v.status();
    out = v.take();
    return Status::ok();
  }

  /// The integer scalar `member`, at least 0.
  Status count(const std::string &member, int64_t &out) const {
    Expected<NpyArray> a = npz.get(member);
    if (!a)
      return a.status();
    Expected<int64_t> n = a->scalarInt64();
    if (!n)
      return n.status().withContext(path + ": member '" + member + "'");
    if (*n < 0)
      return memberError(member, "is negative (" + std::to_string(*n) + ")");
    out = *n;
    return Status::ok();
  }

  /// Checks the offsets `ptr` of the member `member`: from 0, sorted, and
  /// ending at `edges` (exactly, or at most when `!exact`); `what` names
  /// their pieces ("snapshot", "window").
  Status offsets(const std::string &member, const std::vector<int64_t> &ptr,
                 int64_t edges, bool exact, const std::string &what) const {
    if (ptr.empty())
      return memberError(member, "is empty; it needs one entry more than the " +
                                     what + "s (0 for no " + what + "s)");
    if (ptr.front() != 0)
      return memberError(member, "starts at " + std::to_string(ptr.front()) +
                                     "; the first " + what +
                                     " starts at edge 0");
    for (size_t i = 1; i < ptr.size(); ++i)
      if (ptr[i] < ptr[i - 1])
        return memberError(
            member,
            "not sorted: " + at(member, static_cast<int64_t>(i), ptr[i]) +
                " is below " +
                at(member, static_cast<int64_t>(i) - 1, ptr[i - 1]));
    if (exact && ptr.back() != edges)
      return memberError(member, "ends at " + std::to_string(ptr.back()) +
                                     ", but 'src' and 'dst' hold " +
                                     std::to_string(edges) + " edges");
    if (ptr.back() > edges)
      return memberError(member, "ends at " + std::to_string(ptr.back()) +
                                     ", beyond the " + std::to_string(edges) +
                                     " edges of 'src' and 'dst'");
    return Status::ok();
  }

  /// Checks that the ids of `ids` (the member `member`) are nodes of [0,
  /// numNodes); `ptr` places an entry in its snapshot or window for the
  /// message.
  Status nodes(const std::string &member, const std::vector<int64_t> &ids,
               int64_t numNodes, const std::vector<int64_t> &ptr,
               const std::string &what) const {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] >= 0 && ids[i] < numNodes)
        continue;
      int64_t e = static_cast<int64_t>(i);
      auto after = std::upper_bound(ptr.begin(), ptr.end(), e);
      std::string place =
          after == ptr.end()
              ? "after the last " + what
              : what + " " + std::to_string(after - ptr.begin() - 1);
      return memberError(member, at(member, e, ids[i]) + " (an edge of " +
                                     place + ") is outside the nodes " +
                                     nodeRange(numNodes));
    }
    return Status::ok();
  }

private:
  const std::string &path;
  const NpzFile &npz;
};

Expected<SnapshotSeries> seriesOf(const std::string &path,
                                  std::vector<uint8_t> bytes) {
  Expected<NpzFile> npz = parseNpz(path, std::move(bytes));
  if (!npz)
    return npz.status();
  Expected<detail::GraphBudget> budget = detail::GraphBudget::current(path);
  if (!budget)
    return budget.status();
  TemporalReader read(path, *npz);

  // The layout, from the members present.
  std::vector<std::string> windowMembers;
  for (const std::string &member : npz->names())
    if (isWindowMember(member))
      windowMembers.push_back(member);
  const bool lists = npz->has("edge_ptr");
  if (lists && !windowMembers.empty())
    return Status::error(path +
                         ": both 'edge_ptr' (per-snapshot edge lists) "
                         "and '" +
                         windowMembers.front() +
                         "' (windows of an edge stream); expected one layout");
  if (!lists && windowMembers.empty())
    return Status::error(
        path + ": no member 'edge_ptr' (per-snapshot edge lists) or "
               "'snapshot_ptr_<span>' (windows of a timed edge stream); not a "
               "series of snapshots");
  if (windowMembers.size() > 1)
    return Status::error(path + ": several window members ('" +
                         windowMembers[0] + "', '" + windowMembers[1] +
                         "', ...); expected one");
  const std::string ptrMember = lists ? "edge_ptr" : windowMembers.front();
  const std::string what = lists ? "snapshot" : "window";

  std::vector<int64_t> src, dst, ptr;
  GNNC_RETURN_IF_ERROR(read.integers("src", "the source of each edge", src));
  GNNC_RETURN_IF_ERROR(
      read.integers("dst", "the destination of each edge", dst));
  if (dst.size() != src.size())
    return read.memberError("dst", "has " + std::to_string(dst.size()) +
                                       " entries, but 'src' has " +
                                       std::to_string(src.size()) +
                                       "; one of each per edge");
  const int64_t edges = static_cast<int64_t>(src.size());
  GNNC_RETURN_IF_ERROR(
      read.integers(ptrMember, "the first edge of each " + what, ptr));
  GNNC_RETURN_IF_ERROR(read.offsets(ptrMember, ptr, edges, lists, what));
  const int64_t numSnapshots = static_cast<int64_t>(ptr.size()) - 1;
  if (lists && npz->has("num_snapshots")) {
    int64_t declared = 0;
    GNNC_RETURN_IF_ERROR(read.count("num_snapshots", declared));
    if (declared != numSnapshots)
      return read.memberError("num_snapshots",
                              "is " + std::to_string(declared) +
                                  ", but 'edge_ptr' has " +
                                  std::to_string(ptr.size()) + " entries (" +
                                  std::to_string(numSnapshots) + " snapshots)");
  }

  int64_t numNodes = 0;
  if (npz->has("num_nodes")) {
    GNNC_RETURN_IF_ERROR(read.count("num_nodes", numNodes));
    if (numNodes > kMaxReaderDimension)
      return read.memberError("num_nodes",
                              "makes " + std::to_string(numNodes) +
                                  " nodes, more than the supported maximum " +
                                  std::to_string(kMaxReaderDimension));
  } else {
    // The largest id names the last node.
    for (const auto &[member, ids] : {std::pair{"src", &src}, {"dst", &dst}})
      for (int64_t id : *ids) {
        if (id >= kMaxReaderDimension)
          return read.memberError(
              member, "node id " + std::to_string(id) +
                          " makes more nodes than the supported maximum " +
                          std::to_string(kMaxReaderDimension) +
                          " (and no member 'num_nodes' gives the count)");
        numNodes = std::max(numNodes, id + 1);
      }
  }
  GNNC_RETURN_IF_ERROR(read.nodes("src", src, numNodes, ptr, what));
  GNNC_RETURN_IF_ERROR(read.nodes("dst", dst, numNodes, ptr, what));
  // Every snapshot has its own row offsets.
  int64_t rows =
      numSnapshots > 0 &&
              numNodes > std::numeric_limits<int64_t>::max() / numSnapshots
          ? std::numeric_limits<int64_t>::max()
          : numNodes * numSnapshots;
  std::string over =
      budget->check(rows, numNodes, ptr.back(), "series of snapshots");
  if (!over.empty())
    return Status::error(path + ": " + over);

  std::string name =
      detail::withoutSuffix(path.substr(path.find_last_of('/') + 1), ".npz");
  if (!lists) {
    if (npz->has("time")) {
      std::vector<int64_t> time;
      GNNC_RETURN_IF_ERROR(
          read.integers("time", "the time of each edge", time));
      if (static_cast<int64_t>(time.size()) != edges)
        return read.memberError("time", "has " + std::to_string(time.size()) +
                                            " entries, but 'src' has " +
                                            std::to_string(edges) +
                                            "; one time per edge");
      for (int64_t i = 1; i < edges; ++i)
        if (time[i] < time[i - 1])
          return read.memberError(
              "time", "not sorted: " + at("time", i, time[i]) + " is below " +
                          at("time", i - 1, time[i - 1]) +
                          "; the stream is in time order");
    }
    Expected<SnapshotSeries> series =
        snapshotsFromEdgeStream(numNodes, src, dst, ptr, false, name);
    if (!series)
      return series.status().withContext(path);
    return series;
  }

  std::vector<float> weight;
  if (npz->has("weight")) {
    Expected<NpyArray> a = npz->get("weight");
    if (!a)
      return a.status();
    if (a->kind() != 'f' && !a->isInteger())
      return read.memberError("weight",
                              "dtype '" + a->dtype + "' is not a number type");
    if (a->shape.size() != 1 || a->numElements() != edges)
      return read.memberError("weight",
                              "has shape " + detail::shapeString(a->shape) +
                                  ", expected (" + std::to_string(edges) +
                                  ",): one weight per edge");
    Expected<std::vector<float>> v = a->asFloat32();
    if (!v)
      return v.status().withContext(path + ": member 'weight'");
    weight = v.take();
  }
  std::vector<std::vector<int64_t>> srcs(numSnapshots), dsts(numSnapshots);
  std::vector<std::vector<float>> weights(weight.empty() ? 0 : numSnapshots);
  for (int64_t t = 0; t < numSnapshots; ++t) {
    srcs[t].assign(src.begin() + ptr[t], src.begin() + ptr[t + 1]);
    dsts[t].assign(dst.begin() + ptr[t], dst.begin() + ptr[t + 1]);
    if (!weight.empty())
      weights[t].assign(weight.begin() + ptr[t], weight.begin() + ptr[t + 1]);
  }
  Expected<SnapshotSeries> series =
      snapshotsFromEdgeLists(numNodes, srcs, dsts, weights, name);
  if (!series)
    return series.status().withContext(path);
  return series;
}

} // namespace

Expected<SnapshotSeries>
gnnc::graph::parseSnapshotSeries(const std::string &path,
                                 std::vector<uint8_t> bytes) {
  return detail::guardAllocation<SnapshotSeries>(
      path, [&]() -> Expected<SnapshotSeries> {
        return seriesOf(path, std::move(bytes));
      });
}

Expected<SnapshotSeries>
gnnc::graph::readSnapshotSeries(const std::string &path) {
  return detail::guardAllocation<SnapshotSeries>(
      path, [&]() -> Expected<SnapshotSeries> {
        Expected<std::vector<uint8_t>> bytes = detail::readBinaryFile(path);
        if (!bytes)
          return bytes.status();
        return seriesOf(path, bytes.take());
      });
}

//===----------------------------------------------------------------------===//
// Evolving R-MAT graphs
//===----------------------------------------------------------------------===//

namespace {

/// An edge (row, col) as one sortable key.
uint64_t edgeKey(uint64_t row, uint64_t col) { return (row << 32) | col; }
uint64_t keyRow(uint64_t key) { return key >> 32; }
uint64_t keyCol(uint64_t key) { return key & 0xffffffffu; }

/// One R-MAT edge of 2^scale nodes with the Graph500 quadrant probabilities
/// (the convention of generateRmat: the row bit from the bottom half, the
/// column bit from the right half).
uint64_t rmatEdge(Rng &rng, int scale) {
  constexpr double a = 0.57, b = 0.19, c = 0.19;
  uint64_t row = 0, col = 0;
  for (int level = scale - 1; level >= 0; --level) {
    double u = rng.nextDouble();
    if (u >= a + b)
      row |= uint64_t(1) << level;
    if ((u >= a && u < a + b) || u >= a + b + c)
      col |= uint64_t(1) << level;
  }
  return edgeKey(row, col);
}

/// The graph of `units`, sorted edge keys; with `undirected`, each key (r,
/// c) with r < c stands for both directions.
CsrGraph graphOfUnits(int64_t n, const std::vector<uint64_t> &units,
                      bool undirected) {
  CsrGraph g = emptyGraph(n);
  for (uint64_t key : units) {
    ++g.rowPtr[keyRow(key) + 1];
    if (undirected)
      ++g.rowPtr[keyCol(key) + 1];
  }
  for (int64_t r = 0; r < n; ++r)
    g.rowPtr[r + 1] += g.rowPtr[r];
  g.colIdx.resize(g.rowPtr[n]);
  std::vector<int64_t> next(g.rowPtr.begin(), g.rowPtr.end() - 1);
  // Row r receives the rows of the keys (x, r), x < r, in increasing x, all
  // before the columns of its own keys (r, c), c > r, in increasing c: the
  // keys' order sorts every row.
  for (uint64_t key : units) {
    uint64_t r = keyRow(key), c = keyCol(key);
    g.colIdx[next[r]++] = static_cast<int64_t>(c);
    if (undirected)
      g.colIdx[next[c]++] = static_cast<int64_t>(r);
  }
  return g;
}

} // namespace

Expected<SnapshotSeries>
gnnc::graph::generateEvolvingRmat(const EvolvingRmatOptions &o) {
  if (o.scale < 0 || o.scale > 31)
    return Status::error("evolving R-MAT: scale " + std::to_string(o.scale) +
                         " is outside [0, 31]");
  if (o.edgeFactor < 0)
    return Status::error("evolving R-MAT: the edge factor " +
                         std::to_string(o.edgeFactor) + " is negative");
  if (o.snapshots < 1)
    return Status::error("evolving R-MAT: " + std::to_string(o.snapshots) +
                         " snapshots; a series has at least one");
  if (!(o.churn >= 0.0 && o.churn <= 1.0))
    return Status::error("evolving R-MAT: churn " + real(o.churn) +
                         " is outside [0, 1]");
  char name[160];
  std::snprintf(
      name, sizeof(name), "evolving-rmat-s%d-ef%d-t%lld-churn%g-seed%llu%s",
      o.scale, o.edgeFactor, static_cast<long long>(o.snapshots), o.churn,
      static_cast<unsigned long long>(o.seed), o.undirected ? "-sym" : "");
  SnapshotSeries series;
  series.name = name;
  CsrGraph first = generateRmat(o.scale, o.edgeFactor, o.seed, 0.57, 0.19, 0.19,
                                o.undirected, /*removeSelfLoops=*/true);
  const int64_t n = first.numRows;
  series.numNodes = n;

  // The edges as sorted keys; an undirected edge once, as (low, high).
  std::vector<uint64_t> units;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t e = first.rowPtr[r]; e < first.rowPtr[r + 1]; ++e)
      if (!o.undirected || r < first.colIdx[e])
        units.push_back(edgeKey(r, first.colIdx[e]));
  first.name = snapshotName(series.name, 0);
  series.snapshots.push_back(std::move(first));

  const uint64_t un = static_cast<uint64_t>(n);
  const uint64_t pairs = un == 0        ? 0
                         : o.undirected ? un * (un - 1) / 2
                                        : un * (un - 1);
  const uint64_t replaced =
      static_cast<uint64_t>(std::llround(o.churn * double(units.size())));
  if (o.snapshots > 1 && replaced > pairs - units.size())
    return Status::error(
        "evolving R-MAT: every step replaces " + std::to_string(replaced) +
        " of the " + std::to_string(units.size()) + " edges, but only " +
        std::to_string(pairs - units.size()) +
        " node pairs are not edges; scale " + std::to_string(o.scale) +
        " is too small for edge factor " + std::to_string(o.edgeFactor) +
        " and churn " + real(o.churn));
  // Streams apart from generateRmat's (deriveSeed(seed, block)).
  const uint64_t stepSeed = deriveSeed(o.seed, 0x65766f6c7665ull);
  for (int64_t t = 1; t < o.snapshots; ++t) {
    Rng rng(deriveSeed(stepSeed, static_cast<uint64_t>(t)));
    // Remove: the first `replaced` keys of a partial Fisher-Yates shuffle.
    std::vector<uint64_t> next = units;
    for (uint64_t i = 0; i < replaced; ++i)
      std::swap(next[i], next[i + rng.nextBelow(next.size() - i)]);
    next.erase(next.begin(), next.begin() + replaced);
    // Add: R-MAT edges absent from the previous snapshot (which still holds
    // the removed ones) and not drawn yet. If R-MAT keeps hitting edges
    // (small graphs, heavy churn), uniform pairs finish the step: there are
    // enough absent pairs (checked above).
    std::unordered_set<uint64_t> added;
    const uint64_t rmatTries = 64 * replaced + 4096;
    for (uint64_t tries = 0; added.size() < replaced; ++tries) {
      uint64_t key = tries < rmatTries
                         ? rmatEdge(rng, o.scale)
                         : edgeKey(rng.nextBelow(un), rng.nextBelow(un));
      uint64_t r = keyRow(key), c = keyCol(key);
      if (r == c)
        continue;
      if (o.undirected && r > c)
        key = edgeKey(c, r);
      if (std::binary_search(units.begin(), units.end(), key) ||
          !added.insert(key).second)
        continue;
      next.push_back(key);
    }
    std::sort(next.begin(), next.end());
    units = std::move(next);
    CsrGraph g = graphOfUnits(n, units, o.undirected);
    g.name = snapshotName(series.name, t);
    series.snapshots.push_back(std::move(g));
  }
  return series;
}

//===----------------------------------------------------------------------===//
// Overlap groups
//===----------------------------------------------------------------------===//

int64_t SnapshotGroup::size() const {
  return static_cast<int64_t>(exclusive.size());
}

int64_t SnapshotGroup::storedEdges() const {
  int64_t stored = overlap.nnz();
  for (const CsrGraph &g : exclusive)
    stored += g.nnz();
  return stored;
}

int64_t SnapshotGroup::snapshotEdges() const {
  int64_t total = overlap.nnz() * size();
  for (const CsrGraph &g : exclusive)
    total += g.nnz();
  return total;
}

double SnapshotGroup::overlapRate() const {
  int64_t total = snapshotEdges();
  if (total == 0)
    return 0.0;
  return double(overlap.nnz()) * double(size()) / double(total);
}

CsrGraph SnapshotGroup::snapshot(int64_t s) const {
  const CsrGraph &own = exclusive[s];
  CsrGraph g = emptyGraph(numNodes);
  g.colIdx.reserve(overlap.nnz() + own.nnz());
  for (int64_t r = 0; r < numNodes; ++r) {
    std::merge(overlap.colIdx.begin() + overlap.rowPtr[r],
               overlap.colIdx.begin() + overlap.rowPtr[r + 1],
               own.colIdx.begin() + own.rowPtr[r],
               own.colIdx.begin() + own.rowPtr[r + 1],
               std::back_inserter(g.colIdx));
    g.rowPtr[r + 1] = g.nnz();
  }
  g.name = detail::withoutSuffix(own.name, " exclusive");
  return g;
}

namespace {

/// The columns that row `r` has in all `count` graphs from `graphs`, into
/// `common` (`scratch` is working space).
void commonColumns(const CsrGraph *graphs, int64_t count, int64_t r,
                   std::vector<int64_t> &common,
                   std::vector<int64_t> &scratch) {
  const CsrGraph &g0 = graphs[0];
  common.assign(g0.colIdx.begin() + g0.rowPtr[r],
                g0.colIdx.begin() + g0.rowPtr[r + 1]);
  for (int64_t s = 1; s < count && !common.empty(); ++s) {
    const CsrGraph &g = graphs[s];
    scratch.clear();
    std::set_intersection(
        common.begin(), common.end(), g.colIdx.begin() + g.rowPtr[r],
        g.colIdx.begin() + g.rowPtr[r + 1], std::back_inserter(scratch));
    common.swap(scratch);
  }
}

/// overlapGroup on snapshots known to be valid.
SnapshotGroup groupOf(const SnapshotSeries &series, int64_t first,
                      int64_t count) {
  const int64_t n = series.numNodes;
  const CsrGraph *graphs = series.snapshots.data() + first;
  SnapshotGroup group;
  group.first = first;
  group.numNodes = n;
  // The work of a row: its edges in all the snapshots.
  std::vector<int64_t> work(n + 1, 0);
  for (int64_t r = 0; r < n; ++r) {
    work[r + 1] = work[r];
    for (int64_t s = 0; s < count; ++s)
      work[r + 1] += graphs[s].degree(r);
  }
  // Threads pay off only on larger groups.
  const int threads = n + work[n] < (int64_t(1) << 16) ? 1 : 0;
  auto forRows = [&](const std::function<void(int64_t, int64_t)> &fn) {
    parallelForRowsByWork(work.data(), n, threads, fn);
  };

  // 1. The overlap's degrees; each exclusive part has the rest of its row.
  std::vector<int64_t> common(n, 0);
  forRows([&](int64_t begin, int64_t end) {
    std::vector<int64_t> cols, scratch;
    for (int64_t r = begin; r < end; ++r) {
      commonColumns(graphs, count, r, cols, scratch);
      common[r] = static_cast<int64_t>(cols.size());
    }
  });
  const std::string range = seriesName(series.name) + "[" +
                            std::to_string(first) + ".." +
                            std::to_string(first + count - 1) + "]";
  group.overlap = emptyGraph(n);
  group.overlap.name = range + " overlap";
  for (int64_t r = 0; r < n; ++r)
    group.overlap.rowPtr[r + 1] = group.overlap.rowPtr[r] + common[r];
  group.overlap.colIdx.resize(group.overlap.rowPtr[n]);
  group.exclusive.reserve(count);
  for (int64_t s = 0; s < count; ++s) {
    CsrGraph part = emptyGraph(n);
    part.name = snapshotName(series.name, first + s) + " exclusive";
    for (int64_t r = 0; r < n; ++r)
      part.rowPtr[r + 1] = part.rowPtr[r] + graphs[s].degree(r) - common[r];
    part.colIdx.resize(part.rowPtr[n]);
    group.exclusive.push_back(std::move(part));
  }

  // 2. The columns: every row writes only its own places.
  forRows([&](int64_t begin, int64_t end) {
    std::vector<int64_t> cols, scratch;
    for (int64_t r = begin; r < end; ++r) {
      commonColumns(graphs, count, r, cols, scratch);
      std::copy(cols.begin(), cols.end(),
                group.overlap.colIdx.begin() + group.overlap.rowPtr[r]);
      for (int64_t s = 0; s < count; ++s) {
        const CsrGraph &g = graphs[s];
        CsrGraph &part = group.exclusive[s];
        std::set_difference(g.colIdx.begin() + g.rowPtr[r],
                            g.colIdx.begin() + g.rowPtr[r + 1], cols.begin(),
                            cols.end(), part.colIdx.begin() + part.rowPtr[r]);
      }
    }
  });
  return group;
}

} // namespace

Expected<SnapshotGroup> gnnc::graph::overlapGroup(const SnapshotSeries &series,
                                                  int64_t first,
                                                  int64_t count) {
  const std::string who = seriesName(series.name);
  GNNC_RETURN_IF_ERROR(checkNumNodes(series.name, series.numNodes));
  if (first < 0 || first >= series.size())
    return Status::error(who + ": a group from snapshot " +
                         std::to_string(first) + ", outside the snapshots " +
                         nodeRange(series.size()));
  if (count < 1)
    return Status::error(who + ": a group of " + std::to_string(count) +
                         " snapshots; a group has at least one");
  if (count > series.size() - first)
    return Status::error(who + ": a group of " + std::to_string(count) +
                         " snapshots from snapshot " + std::to_string(first) +
                         " goes past the series' " +
                         std::to_string(series.size()) + " snapshots");
  for (int64_t t = first; t < first + count; ++t)
    GNNC_RETURN_IF_ERROR(checkSnapshot(series, t));
  return groupOf(series, first, count);
}

Expected<std::vector<SnapshotGroup>>
gnnc::graph::overlapGroups(const SnapshotSeries &series, int64_t groupSize) {
  if (groupSize < 1)
    return Status::error(seriesName(series.name) + ": groups of " +
                         std::to_string(groupSize) +
                         " snapshots; a group has at least one");
  GNNC_RETURN_IF_ERROR(series.validate());
  std::vector<SnapshotGroup> groups;
  for (int64_t first = 0; first < series.size(); first += groupSize)
    groups.push_back(
        groupOf(series, first, std::min(groupSize, series.size() - first)));
  return groups;
}

SnapshotGroup gnnc::graph::transposeGroup(const SnapshotGroup &group) {
  SnapshotGroup t;
  t.first = group.first;
  t.numNodes = group.numNodes;
  t.overlap = transpose(group.overlap);
  t.exclusive.reserve(group.exclusive.size());
  for (const CsrGraph &part : group.exclusive) {
    CsrGraph flipped = transpose(part);
    // "<snapshot>^T exclusive", so that snapshot(s) is "<snapshot>^T".
    flipped.name =
        part.name.empty()
            ? std::string()
            : detail::withoutSuffix(part.name, " exclusive") + "^T exclusive";
    t.exclusive.push_back(std::move(flipped));
  }
  return t;
}

StackedExclusive gnnc::graph::stackExclusive(const SnapshotGroup &group) {
  StackedExclusive stacked;
  const int64_t n = group.numNodes;
  stacked.offsets.reserve(group.size() * (n + 1));
  stacked.columns.reserve(group.storedEdges() - group.overlap.nnz());
  for (const CsrGraph &part : group.exclusive) {
    const int64_t base = static_cast<int64_t>(stacked.columns.size());
    for (int64_t r = 0; r <= n; ++r)
      stacked.offsets.push_back(base + part.rowPtr[r]);
    stacked.columns.insert(stacked.columns.end(), part.colIdx.begin(),
                           part.colIdx.end());
  }
  return stacked;
}
