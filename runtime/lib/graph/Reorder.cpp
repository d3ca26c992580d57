//===- Reorder.cpp - Node renumbering for locality ------------------------===//

#include "gnnc/graph/Reorder.h"

#include "gnnc/graph/Random.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

using namespace gnnc;
using namespace gnnc::graph;

//===----------------------------------------------------------------------===//
// Permutation
//===----------------------------------------------------------------------===//

/// The error of a new-to-old map whose entry i, `old`, is not a node of
/// [0, n).
static Status newToOldOutOfRange(int64_t i, int64_t old, int64_t n) {
  return Status::error("permutation: newToOld[" + std::to_string(i) +
                       "] = " + std::to_string(old) + " is out of range [0, " +
                       std::to_string(n) + ")");
}

Status Permutation::validate(int64_t n) const {
  if (static_cast<int64_t>(newToOld.size()) != n)
    return Status::error("permutation: newToOld has " +
                         std::to_string(newToOld.size()) +
                         " entries, expected " + std::to_string(n));
  if (static_cast<int64_t>(oldToNew.size()) != n)
    return Status::error("permutation: oldToNew has " +
                         std::to_string(oldToNew.size()) +
                         " entries, expected " + std::to_string(n));
  // Inverse on one side and in range on both implies a bijection.
  for (int64_t i = 0; i < n; ++i) {
    int64_t old = newToOld[i];
    if (old < 0 || old >= n)
      return newToOldOutOfRange(i, old, n);
    if (oldToNew[old] != i)
      return Status::error("permutation: newToOld[" + std::to_string(i) +
                           "] = " + std::to_string(old) + " but oldToNew[" +
                           std::to_string(old) +
                           "] = " + std::to_string(oldToNew[old]));
  }
  return Status::ok();
}

Permutation Permutation::inverse() const {
  Permutation inv;
  inv.newToOld = oldToNew;
  inv.oldToNew = newToOld;
  return inv;
}

Permutation Permutation::identity(int64_t n) {
  Permutation p;
  p.newToOld.resize(n);
  std::iota(p.newToOld.begin(), p.newToOld.end(), int64_t(0));
  p.oldToNew = p.newToOld;
  return p;
}

Expected<Permutation> Permutation::fromNewToOld(std::vector<int64_t> newToOld) {
  Permutation p;
  int64_t n = static_cast<int64_t>(newToOld.size());
  p.oldToNew.assign(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    int64_t old = newToOld[i];
    if (old < 0 || old >= n)
      return newToOldOutOfRange(i, old, n);
    if (p.oldToNew[old] != -1)
      return Status::error("permutation: " + std::to_string(old) +
                           " occurs twice in newToOld (at " +
                           std::to_string(p.oldToNew[old]) + " and " +
                           std::to_string(i) + ")");
    p.oldToNew[old] = i;
  }
  p.newToOld = std::move(newToOld);
  return p;
}

namespace {

/// Completes a permutation from its new-to-old map (known to be valid).
Permutation fromValidNewToOld(std::vector<int64_t> newToOld) {
  Permutation p;
  p.oldToNew.resize(newToOld.size());
  for (size_t i = 0; i < newToOld.size(); ++i)
    p.oldToNew[newToOld[i]] = static_cast<int64_t>(i);
  p.newToOld = std::move(newToOld);
  return p;
}

//===----------------------------------------------------------------------===//
// Symmetrized pattern
//===----------------------------------------------------------------------===//

/// The pattern of A + Aᵀ without the diagonal: sorted, duplicate-free
/// neighbour lists.
struct Adjacency {
  int64_t n = 0;
  std::vector<int64_t> offsets;
  std::vector<int64_t> neighbours;

  int64_t degree(int64_t v) const { return offsets[v + 1] - offsets[v]; }
  const int64_t *begin(int64_t v) const {
    return neighbours.data() + offsets[v];
  }
  const int64_t *end(int64_t v) const {
    return neighbours.data() + offsets[v + 1];
  }
};

/// Builds the symmetrized pattern of a square graph in O(n + nnz) (plus
/// sorting rows that are not already sorted).
Adjacency symmetrize(const CsrGraph &g) {
  const int64_t n = g.numRows;
  Adjacency adj;
  adj.n = n;

  // The transpose by counting; iterating rows in order leaves its rows
  // sorted.
  std::vector<int64_t> tOffsets(n + 1, 0);
  for (int64_t c : g.colIdx)
    ++tOffsets[c + 1];
  for (int64_t v = 0; v < n; ++v)
    tOffsets[v + 1] += tOffsets[v];
  std::vector<int64_t> tNeighbours(g.colIdx.size());
  {
    std::vector<int64_t> fill(tOffsets.begin(), tOffsets.end() - 1);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e)
        tNeighbours[fill[g.colIdx[e]]++] = r;
  }

  // Merge row r of A (sorted if needed) with row r of Aᵀ into a buffer with
  // room for both, then compact in place.
  std::vector<int64_t> upper(n + 1, 0);
  for (int64_t v = 0; v < n; ++v)
    upper[v + 1] = upper[v] + g.degree(v) + (tOffsets[v + 1] - tOffsets[v]);
  adj.neighbours.resize(upper[n]);
  adj.offsets.assign(n + 1, 0);
  std::vector<int64_t> scratch;
  int64_t out = 0;
  for (int64_t v = 0; v < n; ++v) {
    const int64_t *a = g.colIdx.data() + g.rowPtr[v];
    const int64_t *aEnd = g.colIdx.data() + g.rowPtr[v + 1];
    if (!std::is_sorted(a, aEnd)) {
      scratch.assign(a, aEnd);
      std::sort(scratch.begin(), scratch.end());
      a = scratch.data();
      aEnd = a + scratch.size();
    }
    const int64_t *t = tNeighbours.data() + tOffsets[v];
    const int64_t *tEnd = tNeighbours.data() + tOffsets[v + 1];
    // Writing at `out` <= upper[v] never overtakes unread input (the inputs
    // live in other arrays).
    int64_t last = -1;
    auto emit = [&](int64_t u) {
      if (u != v && u != last)
        adj.neighbours[out++] = u;
      last = u;
    };
    while (a != aEnd && t != tEnd) {
      if (*a <= *t)
        emit(*a++);
      else
        emit(*t++);
    }
    while (a != aEnd)
      emit(*a++);
    while (t != tEnd)
      emit(*t++);
    adj.offsets[v + 1] = out;
  }
  adj.neighbours.resize(out);
  adj.neighbours.shrink_to_fit();
  return adj;
}

//===----------------------------------------------------------------------===//
// Reverse Cuthill–McKee on a node subset
//===----------------------------------------------------------------------===//

/// Most breadth-first searches spent looking for a pseudo-peripheral node per
/// component.
constexpr int kMaxPeripheralSearches = 8;

/// Cuthill–McKee numbering of a set of nodes closed under adjacency (a union
/// of connected components).
class CuthillMcKee {
public:
  explicit CuthillMcKee(const Adjacency &adj)
      : adj(adj), degree(adj.n, 0), numbered(adj.n, 0), seen(adj.n, 0) {}

  /// Appends the Cuthill–McKee sequence (not yet reversed) of `nodes`
  /// (ascending ids; every neighbour of a node in the set is in the set) to
  /// `out`.
  void run(const std::vector<int64_t> &nodes, std::vector<int64_t> &out) {
    for (int64_t v : nodes)
      degree[v] = adj.degree(v);
    // Start components at nodes of least degree, ties by id.
    candidates = nodes;
    std::stable_sort(
        candidates.begin(), candidates.end(),
        [&](int64_t x, int64_t y) { return degree[x] < degree[y]; });
    for (int64_t start : candidates) {
      if (numbered[start])
        continue;
      int64_t root = peripheralNode(start);
      number(root, out);
    }
  }

private:
  /// Breadth-first search from `root` over unnumbered nodes; leaves the nodes
  /// in `queue` and returns the number of levels. `lastLevelBegin` receives
  /// where the last level starts in `queue`.
  int64_t levelStructure(int64_t root, size_t &lastLevelBegin) {
    if (++stamp == 0) {
      std::fill(seen.begin(), seen.end(), 0);
      stamp = 1;
    }
    queue.clear();
    queue.push_back(root);
    seen[root] = stamp;
    size_t levelBegin = 0;
    int64_t levels = 0;
    while (levelBegin < queue.size()) {
      size_t levelEnd = queue.size();
      lastLevelBegin = levelBegin;
      ++levels;
      for (size_t i = levelBegin; i < levelEnd; ++i) {
        int64_t v = queue[i];
        for (const int64_t *u = adj.begin(v); u != adj.end(v); ++u) {
          if (seen[*u] == stamp || numbered[*u])
            continue;
          seen[*u] = stamp;
          queue.push_back(*u);
        }
      }
      levelBegin = levelEnd;
    }
    return levels;
  }

  /// George–Liu pseudo-peripheral node search starting at `start`: move to a
  /// least-degree node of the last level while that increases the
  /// eccentricity.
  int64_t peripheralNode(int64_t start) {
    size_t lastBegin = 0;
    int64_t root = start;
    int64_t levels = levelStructure(root, lastBegin);
    for (int search = 1; search < kMaxPeripheralSearches; ++search) {
      if (levels <= 1)
        break;
      int64_t best = queue[lastBegin];
      for (size_t i = lastBegin; i < queue.size(); ++i) {
        int64_t v = queue[i];
        if (degree[v] < degree[best] || (degree[v] == degree[best] && v < best))
          best = v;
      }
      size_t candidateLastBegin = 0;
      int64_t candidateLevels = levelStructure(best, candidateLastBegin);
      if (candidateLevels <= levels)
        break;
      root = best;
      levels = candidateLevels;
      lastBegin = candidateLastBegin;
    }
    return root;
  }

  /// Numbers the component of `root` breadth first, children by increasing
  /// degree (ties by id), appending to `out`.
  void number(int64_t root, std::vector<int64_t> &out) {
    size_t head = out.size();
    out.push_back(root);
    numbered[root] = 1;
    while (head < out.size()) {
      int64_t v = out[head++];
      size_t childBegin = out.size();
      for (const int64_t *u = adj.begin(v); u != adj.end(v); ++u) {
        if (numbered[*u])
          continue;
        numbered[*u] = 1;
        out.push_back(*u);
      }
      std::sort(out.begin() + childBegin, out.end(), [&](int64_t x, int64_t y) {
        return degree[x] < degree[y] || (degree[x] == degree[y] && x < y);
      });
    }
  }

  const Adjacency &adj;
  std::vector<int64_t> degree;
  std::vector<uint8_t> numbered;
  std::vector<uint32_t> seen;
  uint32_t stamp = 0;
  std::vector<int64_t> queue;
  std::vector<int64_t> candidates;
};

} // namespace

//===----------------------------------------------------------------------===//
// Orders
//===----------------------------------------------------------------------===//

Permutation gnnc::graph::degreeSortOrder(const CsrGraph &g, bool descending) {
  std::vector<int64_t> order(g.numRows);
  std::iota(order.begin(), order.end(), int64_t(0));
  if (descending)
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      return g.degree(x) > g.degree(y);
    });
  else
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      return g.degree(x) < g.degree(y);
    });
  return fromValidNewToOld(std::move(order));
}

Permutation gnnc::graph::rcmOrder(const CsrGraph &g) {
  if (g.numRows != g.numCols)
    return Permutation::identity(g.numRows);
  Adjacency adj = symmetrize(g);
  std::vector<int64_t> nodes(adj.n);
  std::iota(nodes.begin(), nodes.end(), int64_t(0));
  std::vector<int64_t> order;
  order.reserve(adj.n);
  CuthillMcKee(adj).run(nodes, order);
  std::reverse(order.begin(), order.end());
  return fromValidNewToOld(std::move(order));
}

namespace {

/// Drops the edges between nodes of different labels (in place).
Adjacency keepInnerEdges(Adjacency adj, const std::vector<int64_t> &label) {
  int64_t out = 0;
  int64_t begin = 0;
  for (int64_t v = 0; v < adj.n; ++v) {
    int64_t end = adj.offsets[v + 1];
    for (int64_t e = begin; e < end; ++e)
      if (label[adj.neighbours[e]] == label[v])
        adj.neighbours[out++] = adj.neighbours[e];
    begin = end;
    adj.offsets[v + 1] = out;
  }
  adj.neighbours.resize(out);
  return adj;
}

/// A label's rank for breaking ties between equally frequent labels: a
/// seeded hash, so no region of the id space is favoured.
inline uint64_t tieRank(int64_t label, uint64_t salt) {
  uint64_t state = static_cast<uint64_t>(label) ^ salt;
  return splitMix64(state);
}

/// Asynchronous label propagation; returns a label per node (a node id of
/// the community) and the number of sweeps run.
std::vector<int64_t> propagateLabels(const Adjacency &adj,
                                     const CommunityOptions &options,
                                     int &sweeps) {
  const int64_t n = adj.n;
  std::vector<int64_t> label(n), size(n, 1);
  std::iota(label.begin(), label.end(), int64_t(0));

  // Seeded sweep order (Fisher–Yates with the portable generator).
  Rng rng(options.seed);
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), int64_t(0));
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(order[i], order[rng.nextBelow(static_cast<uint64_t>(i) + 1)]);
  uint64_t salt = deriveSeed(options.seed, 0x6c7061);

  std::vector<int64_t> count(n, 0);
  std::vector<int64_t> touched;
  const int64_t cap = options.maxCommunitySize;
  sweeps = 0;
  for (int sweep = 0; sweep < options.maxIterations; ++sweep) {
    ++sweeps;
    int64_t changes = 0;
    for (int64_t v : order) {
      if (adj.degree(v) == 0)
        continue;
      touched.clear();
      for (const int64_t *u = adj.begin(v); u != adj.end(v); ++u) {
        int64_t l = label[*u];
        if (count[l]++ == 0)
          touched.push_back(l);
      }
      int64_t own = label[v];
      int64_t best = own, bestCount = count[own];
      uint64_t bestRank = 0;
      bool bestIsOwn = true;
      for (int64_t l : touched) {
        int64_t c = count[l];
        count[l] = 0;
        if (l == own || c < bestCount)
          continue;
        if (cap > 0 && size[l] >= cap)
          continue;
        uint64_t rank = tieRank(l, salt);
        if (c > bestCount || (!bestIsOwn && rank < bestRank)) {
          best = l;
          bestCount = c;
          bestRank = rank;
          bestIsOwn = false;
        }
      }
      count[own] = 0;
      if (best != own) {
        --size[own];
        ++size[best];
        label[v] = best;
        ++changes;
      }
    }
    if (static_cast<double>(changes) <
        options.minChangeFraction * static_cast<double>(n))
      break;
  }
  return label;
}

} // namespace

Permutation gnnc::graph::communityOrder(const CsrGraph &g,
                                        const CommunityOptions &options,
                                        CommunityInfo *info) {
  if (g.numRows != g.numCols) {
    if (info) {
      info->numCommunities = g.numRows > 0 ? 1 : 0;
      info->iterations = 0;
      info->communityStart = {0};
      if (g.numRows > 0)
        info->communityStart.push_back(g.numRows);
    }
    return Permutation::identity(g.numRows);
  }
  Adjacency adj = symmetrize(g);
  const int64_t n = adj.n;
  int sweeps = 0;
  std::vector<int64_t> label = propagateLabels(adj, options, sweeps);

  // Communities by decreasing size, ties by least member (the first node
  // seen in id order).
  std::vector<int64_t> size(n, 0), labels;
  for (int64_t v = 0; v < n; ++v)
    if (size[label[v]]++ == 0)
      labels.push_back(label[v]);
  std::stable_sort(labels.begin(), labels.end(),
                   [&](int64_t x, int64_t y) { return size[x] > size[y]; });
  const int64_t numCommunities = static_cast<int64_t>(labels.size());
  std::vector<int64_t> start(numCommunities + 1, 0);
  std::vector<int64_t> rankOfLabel(n, -1);
  for (int64_t c = 0; c < numCommunities; ++c) {
    rankOfLabel[labels[c]] = c;
    start[c + 1] = start[c] + size[labels[c]];
  }
  // Members of each community in id order.
  std::vector<int64_t> members(n);
  {
    std::vector<int64_t> fill(start.begin(), start.end() - 1);
    for (int64_t v = 0; v < n; ++v)
      members[fill[rankOfLabel[label[v]]]++] = v;
  }

  // Reverse Cuthill–McKee inside each community, on the edges inside
  // communities only.
  Adjacency inner = keepInnerEdges(std::move(adj), label);
  std::vector<int64_t> order;
  order.reserve(n);
  CuthillMcKee cm(inner);
  std::vector<int64_t> subset;
  for (int64_t c = 0; c < numCommunities; ++c) {
    size_t begin = order.size();
    if (start[c + 1] - start[c] == 1) {
      order.push_back(members[start[c]]);
      continue;
    }
    subset.assign(members.begin() + start[c], members.begin() + start[c + 1]);
    cm.run(subset, order);
    std::reverse(order.begin() + begin, order.end());
  }

  if (info) {
    info->numCommunities = numCommunities;
    info->iterations = sweeps;
    info->communityStart = std::move(start);
  }
  return fromValidNewToOld(std::move(order));
}

//===----------------------------------------------------------------------===//
// Applying permutations
//===----------------------------------------------------------------------===//

Expected<CsrGraph> gnnc::graph::applyPermutation(const CsrGraph &g,
                                                 const Permutation &perm) {
  if (g.numRows != g.numCols)
    return Status::error(
        "applyPermutation: graph is " + std::to_string(g.numRows) + " x " +
        std::to_string(g.numCols) + ", a renumbering needs a square graph");
  if (perm.size() != g.numRows)
    return Status::error("applyPermutation: permutation of " +
                         std::to_string(perm.size()) +
                         " nodes for a graph of " + std::to_string(g.numRows));
  GNNC_RETURN_IF_ERROR(
      perm.validate(g.numRows).withContext("applyPermutation"));
  GNNC_RETURN_IF_ERROR(g.validate().withContext("applyPermutation"));
  return permute(g, perm.oldToNew, perm.oldToNew);
}

Expected<PermutedGraph>
gnnc::graph::applyPermutationWithEdgeMap(const CsrGraph &g,
                                         const Permutation &perm) {
  const char *what = "applyPermutationWithEdgeMap";
  if (g.numRows != g.numCols)
    return Status::error(
        std::string(what) + ": graph is " + std::to_string(g.numRows) + " x " +
        std::to_string(g.numCols) + ", a renumbering needs a square graph");
  if (perm.size() != g.numRows)
    return Status::error(std::string(what) + ": permutation of " +
                         std::to_string(perm.size()) +
                         " nodes for a graph of " + std::to_string(g.numRows));
  GNNC_RETURN_IF_ERROR(perm.validate(g.numRows).withContext(what));
  GNNC_RETURN_IF_ERROR(g.validate().withContext(what));

  const int64_t n = g.numRows;
  PermutedGraph out;
  CsrGraph &p = out.graph;
  p.numRows = n;
  p.numCols = n;
  p.name = g.name;
  p.rowPtr.assign(n + 1, 0);
  for (int64_t r = 0; r < n; ++r)
    p.rowPtr[perm.oldToNew[r] + 1] = g.degree(r);
  for (int64_t r = 0; r < n; ++r)
    p.rowPtr[r + 1] += p.rowPtr[r];
  p.colIdx.resize(g.colIdx.size());
  if (g.hasValues())
    p.values.resize(g.values.size());
  out.edgeOf.resize(g.colIdx.size());
  // (new column, input edge) pairs of one row; sorting them orders the row
  // by column and keeps repeated columns in the input's order.
  std::vector<std::pair<int64_t, int64_t>> row;
  for (int64_t r = 0; r < n; ++r) {
    row.clear();
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e)
      row.emplace_back(perm.oldToNew[g.colIdx[e]], e);
    std::sort(row.begin(), row.end());
    int64_t pos = p.rowPtr[perm.oldToNew[r]];
    for (const auto &[c, e] : row) {
      p.colIdx[pos] = c;
      out.edgeOf[pos] = e;
      if (g.hasValues())
        p.values[pos] = g.values[e];
      ++pos;
    }
  }
  return out;
}

namespace {

/// Row i of `to` = row map[i] of `from`, for the `rows` rows of `to`; rows
/// of `width` floats.
void gatherRowsByMap(const int64_t *map, int64_t rows, const float *from,
                     int64_t width, float *to) {
  const size_t rowBytes = static_cast<size_t>(width) * sizeof(float);
  for (int64_t i = 0; i < rows; ++i)
    std::memcpy(to + i * width, from + map[i] * width, rowBytes);
}

/// The sum and the largest of |c - r| over the non-zeros (r, c) of row r.
std::pair<int64_t, int64_t> rowBandwidth(const CsrGraph &g, int64_t r) {
  int64_t sum = 0, largest = 0;
  for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e) {
    int64_t c = g.colIdx[e];
    int64_t distance = c > r ? c - r : r - c;
    sum += distance;
    largest = std::max(largest, distance);
  }
  return {sum, largest};
}

} // namespace

void gnnc::graph::permuteRowsToOriginal(const Permutation &perm,
                                        const float *renumbered, int64_t width,
                                        float *original) {
  gatherRowsByMap(perm.oldToNew.data(), perm.size(), renumbered, width,
                  original);
}

void gnnc::graph::permuteRowsToNew(const Permutation &perm,
                                   const float *original, int64_t width,
                                   float *renumbered) {
  gatherRowsByMap(perm.newToOld.data(), perm.size(), original, width,
                  renumbered);
}

double gnnc::graph::averageBandwidth(const CsrGraph &g) {
  if (g.nnz() == 0)
    return 0;
  double sum = 0;
  for (int64_t r = 0; r < g.numRows; ++r)
    sum += static_cast<double>(rowBandwidth(g, r).first);
  return sum / static_cast<double>(g.nnz());
}

int64_t gnnc::graph::maxBandwidth(const CsrGraph &g) {
  int64_t band = 0;
  for (int64_t r = 0; r < g.numRows; ++r)
    band = std::max(band, rowBandwidth(g, r).second);
  return band;
}

bool gnnc::graph::isKnownOrder(const std::string &name) {
  return name == "degree" || name == "rcm" || name == "community";
}

Expected<Permutation> gnnc::graph::orderByName(const CsrGraph &g,
                                               const std::string &name,
                                               CommunityInfo *info) {
  if (name == "degree")
    return degreeSortOrder(g);
  if (name == "rcm")
    return rcmOrder(g);
  if (name == "community")
    return communityOrder(g, {}, info);
  return Status::error("unknown order '" + name +
                       "' (expected degree, rcm or community)");
}
