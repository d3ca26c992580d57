//===- SnapshotSliceGroups.h - Groups whose work items tests compare -*- C++
//-*-===//
//
// The snapshot groups on which the tests compare the work items of sliced
// kernels built two ways (ops::snapshotSlices on the host against an
// independent walk of the rows, and the GPU build against the host's):
// evolving R-MAT groups of 1, 2, 4 and 8 snapshots, identical snapshots
// (no exclusive edges), complete churn (no overlap) with an empty
// snapshot, a row of 6,000 edges, and a group of no rows; and the slice
// sizes they are cut with.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TEST_COMPILER_SNAPSHOTSLICEGROUPS_H
#define GNNC_TEST_COMPILER_SNAPSHOTSLICEGROUPS_H

#include "gnnc/graph/Rmat.h"
#include "gnnc/graph/Snapshots.h"

#include <string>
#include <vector>

namespace gnnc::test {

struct NamedGroup {
  std::string name;
  graph::SnapshotGroup group;
};

/// The slice sizes the tests cut every group with.
inline std::vector<int64_t> sliceTestSizes() { return {1, 7, 32, 128, 4096}; }

/// The groups of the first `sizes` snapshots of `series`; an error status
/// in `error` on failure.
inline void addGroups(std::vector<NamedGroup> &out,
                      const graph::SnapshotSeries &series,
                      const std::string &name,
                      const std::vector<int64_t> &sizes, std::string &error) {
  for (int64_t s : sizes) {
    Expected<graph::SnapshotGroup> g = graph::overlapGroup(series, 0, s);
    if (!g) {
      error += name + ": " + g.message() + "\n";
      continue;
    }
    out.push_back({name + ", S = " + std::to_string(s), g.take()});
  }
}

inline graph::SnapshotSeries
seriesFromLists(int64_t n, const std::vector<std::vector<int64_t>> &src,
                const std::vector<std::vector<int64_t>> &dst,
                const std::string &name, std::string &error) {
  Expected<graph::SnapshotSeries> s =
      graph::snapshotsFromEdgeLists(n, src, dst, {}, name);
  if (!s) {
    error += name + ": " + s.message() + "\n";
    return {};
  }
  return s.take();
}

/// Every test group; `error` collects what could not be made.
inline std::vector<NamedGroup> sliceTestGroups(std::string &error) {
  std::vector<NamedGroup> out;
  {
    graph::EvolvingRmatOptions o;
    o.scale = 10;
    o.edgeFactor = 8;
    o.snapshots = 8;
    o.churn = 0.15;
    o.seed = 11;
    Expected<graph::SnapshotSeries> s = graph::generateEvolvingRmat(o);
    if (s)
      addGroups(out, *s, "evolving R-MAT", {1, 2, 4, 8}, error);
    else
      error += "evolving R-MAT: " + s.message() + "\n";
  }
  {
    graph::CsrGraph g = graph::generateRmat(8, 8, 5);
    graph::SnapshotSeries s;
    s.numNodes = g.numRows;
    s.snapshots.assign(4, g);
    s.name = "identical";
    addGroups(out, s, "identical snapshots", {2, 4}, error);
  }
  {
    // Snapshot t holds edges r <- (r + 8j + t + 1) mod n only: no two
    // share an edge; snapshot 2 is empty.
    const int64_t n = 200;
    std::vector<std::vector<int64_t>> src(8), dst(8);
    for (int t = 0; t < 8; ++t)
      for (int64_t r = 0; r < n && t != 2; ++r)
        for (int64_t j = 0; j < 1 + (r * 7 + t) % 40; ++j) {
          dst[t].push_back(r);
          src[t].push_back((r + 8 * j + t + 1) % n);
        }
    addGroups(out, seriesFromLists(n, src, dst, "churn", error),
              "complete churn, an empty snapshot", {2, 4, 8}, error);
  }
  {
    // Row 0 aggregates 6,000 nodes in every snapshot, each dropping a few
    // and row 3 gaining 5,000 exclusive edges in snapshot 1; other rows
    // sparse, most empty.
    const int64_t n = 6001;
    std::vector<std::vector<int64_t>> src(8), dst(8);
    for (int t = 0; t < 8; ++t) {
      for (int64_t c = 1; c < n; ++c)
        if ((c + t) % 97 != 0) {
          dst[t].push_back(0);
          src[t].push_back(c);
        }
      for (int64_t c = 0; c < 5000 && t == 1; ++c) {
        dst[t].push_back(3);
        src[t].push_back(c);
      }
      for (int64_t r = 1; r < n; r += 37) {
        dst[t].push_back(r);
        src[t].push_back((r * 7 + t) % n);
      }
    }
    addGroups(out, seriesFromLists(n, src, dst, "hub", error),
              "a row of 6,000 edges", {1, 2, 8}, error);
  }
  for (int64_t s : {1, 3}) {
    graph::SnapshotGroup g;
    g.numNodes = 0;
    g.overlap.numRows = g.overlap.numCols = 0;
    g.overlap.rowPtr = {0};
    g.overlap.name = "no rows";
    g.exclusive.assign(s, g.overlap);
    out.push_back({"no rows, S = " + std::to_string(s), g});
  }
  return out;
}

} // namespace gnnc::test

#endif // GNNC_TEST_COMPILER_SNAPSHOTSLICEGROUPS_H
