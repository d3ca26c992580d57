//===- SnapshotsTest.cpp - Series of snapshots and overlap groups ---------===//
//
// Building series (edge lists, stream windows, evolving R-MAT) and their
// rules; the PiPAD split of a group into overlap and exclusive edges
// against a set computation; the stacked layout the kernels read; the
// temporal .npz reader's errors (each names the file and the member); and
// the two temporal datasets when ../shared/datasets is present.
//
//===----------------------------------------------------------------------===//
#include "NpzBuilder.h"
#include "TestUtil.h"

#include "gnnc/graph/Random.h"
#include "gnnc/graph/Readers.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/graph/Snapshots.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>

using namespace gnnc;
using namespace gnnc::graph;
using namespace gnnc::test::npz;

namespace {

using EdgeSet = std::set<std::pair<int64_t, int64_t>>;

/// The (row, column) pairs of `g`.
EdgeSet edgesOf(const CsrGraph &g) {
  EdgeSet edges;
  for (int64_t r = 0; r < g.numRows; ++r)
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e)
      edges.insert({r, g.colIdx[e]});
  return edges;
}

EdgeSet intersect(const EdgeSet &a, const EdgeSet &b) {
  EdgeSet out;
  for (const auto &edge : a)
    if (b.count(edge))
      out.insert(edge);
  return out;
}

/// A random series: a base edge set of `edges` edges, and snapshots that
/// each keep an edge of it with probability `keep` and add `extra` random
/// edges of their own.
SnapshotSeries randomSeries(uint64_t seed, int64_t nodes, int64_t snapshots,
                            int64_t edges, double keep, int64_t extra) {
  Rng rng(seed);
  std::vector<int64_t> baseSrc, baseDst;
  for (int64_t i = 0; i < edges; ++i) {
    baseSrc.push_back(static_cast<int64_t>(rng.nextBelow(nodes)));
    baseDst.push_back(static_cast<int64_t>(rng.nextBelow(nodes)));
  }
  std::vector<std::vector<int64_t>> src(snapshots), dst(snapshots);
  for (int64_t t = 0; t < snapshots; ++t) {
    for (int64_t i = 0; i < edges; ++i)
      if (rng.nextDouble() < keep) {
        src[t].push_back(baseSrc[i]);
        dst[t].push_back(baseDst[i]);
      }
    for (int64_t i = 0; i < extra; ++i) {
      src[t].push_back(static_cast<int64_t>(rng.nextBelow(nodes)));
      dst[t].push_back(static_cast<int64_t>(rng.nextBelow(nodes)));
    }
  }
  Expected<SnapshotSeries> series =
      snapshotsFromEdgeLists(nodes, src, dst, {}, "random");
  EXPECT_TRUE(series) << series.message();
  return series.take();
}

/// The group of `count` snapshots from `first`, or an empty group and a
/// failure.
SnapshotGroup groupOf(const SnapshotSeries &series, int64_t first,
                      int64_t count) {
  Expected<SnapshotGroup> g = overlapGroup(series, first, count);
  if (!g) {
    ADD_FAILURE() << g.message();
    return SnapshotGroup();
  }
  return g.take();
}

/// Checks the split of `group` against the series: overlap == the
/// snapshots' intersection, overlap ∪ exclusive[s] == snapshot s, disjoint.
void expectSplitOf(const SnapshotSeries &series, const SnapshotGroup &group) {
  ASSERT_GE(group.size(), 1);
  EXPECT_TRUE(group.overlap.validate()) << group.overlap.validate().message();
  EXPECT_TRUE(group.overlap.isSortedAndUnique());
  EdgeSet common = edgesOf(series.snapshots[group.first]);
  for (int64_t s = 1; s < group.size(); ++s)
    common = intersect(common, edgesOf(series.snapshots[group.first + s]));
  EdgeSet overlap = edgesOf(group.overlap);
  EXPECT_EQ(overlap, common);
  int64_t total = 0;
  for (int64_t s = 0; s < group.size(); ++s) {
    const CsrGraph &part = group.exclusive[s];
    ASSERT_TRUE(part.validate()) << part.validate().message();
    EXPECT_TRUE(part.isSortedAndUnique());
    EXPECT_EQ(part.numRows, series.numNodes);
    EdgeSet own = edgesOf(part);
    EXPECT_TRUE(intersect(own, overlap).empty()) << "snapshot " << s;
    EdgeSet merged = own;
    merged.insert(overlap.begin(), overlap.end());
    const CsrGraph &snapshot = series.snapshots[group.first + s];
    EXPECT_EQ(merged, edgesOf(snapshot)) << "snapshot " << s;
    CsrGraph rebuilt = group.snapshot(s);
    EXPECT_EQ(rebuilt.rowPtr, snapshot.rowPtr) << "snapshot " << s;
    EXPECT_EQ(rebuilt.colIdx, snapshot.colIdx) << "snapshot " << s;
    total += snapshot.nnz();
  }
  EXPECT_EQ(group.snapshotEdges(), total);
  EXPECT_EQ(group.storedEdges(),
            total - group.overlap.nnz() * (group.size() - 1));
  if (total > 0)
    EXPECT_DOUBLE_EQ(group.overlapRate(), double(common.size()) *
                                              double(group.size()) /
                                              double(total));
}

TEST(Snapshots, EdgeListsMergeDuplicatesAndSumWeights) {
  // Snapshot 0: 0 -> 1 twice, 2 -> 1; snapshot 1: 1 -> 0.
  Expected<SnapshotSeries> s = snapshotsFromEdgeLists(
      3, {{0, 0, 2}, {1}}, {{1, 1, 1}, {0}}, {{1.5f, 2.0f, 4.0f}, {}}, "lists");
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(s->size(), 2);
  EXPECT_TRUE(s->validate());
  const CsrGraph &g = s->snapshots[0];
  EXPECT_EQ(g.rowPtr, (std::vector<int64_t>{0, 0, 2, 2})); // row = dst
  EXPECT_EQ(g.colIdx, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(g.values, (std::vector<float>{3.5f, 4.0f}));
  EXPECT_FALSE(s->snapshots[1].hasValues());
  EXPECT_EQ(s->snapshots[1].name, "lists[1]");
  // Without weights, duplicates merge and no values appear.
  Expected<SnapshotSeries> plain =
      snapshotsFromEdgeLists(3, {{0, 0}}, {{1, 1}}, {}, "plain");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->snapshots[0].nnz(), 1);
  EXPECT_FALSE(plain->snapshots[0].hasValues());
}

TEST(Snapshots, EdgeListsNameTheSnapshotAndThePosition) {
  EXPECT_EQ(snapshotsFromEdgeLists(4, {{0}, {1, 4}}, {{1}, {2, 0}}, {}, "bad")
                .message(),
            "bad: snapshot 1: edge 1 (4 -> 0) names node 4, outside the nodes "
            "[0, 4)");
  EXPECT_EQ(snapshotsFromEdgeLists(4, {{0, 1}}, {{1, -1}}, {}, "bad").message(),
            "bad: snapshot 0: edge 1 (1 -> -1) names node -1, outside the "
            "nodes [0, 4)");
  EXPECT_EQ(snapshotsFromEdgeLists(4, {{0}, {1}}, {{1}}, {}, "bad").message(),
            "bad: 2 source lists but 1 destination lists; give one of each "
            "per snapshot");
  EXPECT_EQ(snapshotsFromEdgeLists(4, {{0, 1}}, {{1}}, {}, "bad").message(),
            "bad: snapshot 0: 2 sources but 1 destinations");
  EXPECT_EQ(
      snapshotsFromEdgeLists(4, {{0, 1}}, {{1, 2}}, {{1.0f}}, "bad").message(),
      "bad: snapshot 0: 1 weights for 2 edges; give none or one per "
      "edge");
  EXPECT_EQ(snapshotsFromEdgeLists(4, {{0}}, {{1}}, {{}, {}}, "bad").message(),
            "bad: 2 weight lists for 1 snapshots; give none or one per "
            "snapshot");
  EXPECT_EQ(snapshotsFromEdgeLists(-1, {}, {}, {}, "bad").message(),
            "bad: the node count -1 is negative");
}

TEST(Snapshots, ValidateNamesTheSeriesTheSnapshotAndTheRule) {
  SnapshotSeries s =
      snapshotsFromEdgeLists(3, {{0, 1}, {2}}, {{1, 2}, {0}}, {}, "v").take();
  EXPECT_TRUE(s.validate());
  SnapshotSeries wide = s;
  wide.snapshots[1].numCols = 4;
  EXPECT_EQ(wide.validate().message(),
            "v: snapshot 1: is 3 x 4; every snapshot is numNodes x numNodes "
            "(3)");
  SnapshotSeries unsorted = s;
  unsorted.snapshots[0] = snapshotsFromEdgeLists(3, {{0, 2}}, {{1, 1}}, {}, "u")
                              .take()
                              .snapshots[0];
  std::swap(unsorted.snapshots[0].colIdx[0], unsorted.snapshots[0].colIdx[1]);
  EXPECT_EQ(unsorted.validate().message(),
            "v: snapshot 0: row 1 is not sorted and unique: column 0 at "
            "non-zero 1 follows column 2");
  SnapshotSeries broken = s;
  broken.snapshots[1].colIdx[0] = 7;
  EXPECT_EQ(broken.validate().message(),
            "v: snapshot 1: v[1]: colIdx[0] = 7 (row 0) is out of range [0, "
            "3)");
}

TEST(Snapshots, StreamWindowsAndCumulativeSnapshots) {
  // Edges: 0->1, 1->2, 0->1 (again), 2->0, 1->0.
  std::vector<int64_t> src = {0, 1, 0, 2, 1}, dst = {1, 2, 1, 0, 0};
  Expected<SnapshotSeries> w =
      snapshotsFromEdgeStream(3, src, dst, {0, 2, 4}, false, "stream");
  ASSERT_TRUE(w) << w.message();
  ASSERT_EQ(w->size(), 2);
  EXPECT_TRUE(w->validate());
  EXPECT_EQ(edgesOf(w->snapshots[0]), (EdgeSet{{1, 0}, {2, 1}}));
  EXPECT_EQ(edgesOf(w->snapshots[1]), (EdgeSet{{1, 0}, {0, 2}}));
  Expected<SnapshotSeries> c =
      snapshotsFromEdgeStream(3, src, dst, {0, 2, 4, 5}, true, "cumulative");
  ASSERT_TRUE(c) << c.message();
  ASSERT_EQ(c->size(), 3);
  EXPECT_TRUE(c->validate());
  EXPECT_EQ(edgesOf(c->snapshots[0]), (EdgeSet{{1, 0}, {2, 1}}));
  EXPECT_EQ(edgesOf(c->snapshots[1]), (EdgeSet{{1, 0}, {2, 1}, {0, 2}}));
  EXPECT_EQ(edgesOf(c->snapshots[2]),
            (EdgeSet{{1, 0}, {2, 1}, {0, 2}, {0, 1}}));
  // Empty windows, and no windows at all.
  Expected<SnapshotSeries> empty =
      snapshotsFromEdgeStream(3, src, dst, {0, 0, 1, 1}, false, "e");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->snapshots[0].nnz(), 0);
  EXPECT_EQ(empty->snapshots[2].nnz(), 0);
  EXPECT_EQ(snapshotsFromEdgeStream(3, src, dst, {0}, false, "e")->size(), 0);

  auto why = [&](std::vector<int64_t> cuts) {
    return snapshotsFromEdgeStream(3, src, dst, cuts, false, "s").message();
  };
  EXPECT_EQ(why({0, 3, 2}),
            "s: the cuts are not sorted: cut 2 = 2 is below cut 1 = 3");
  EXPECT_EQ(why({1, 3}), "s: the cuts start at 1; the first window starts at "
                         "edge 0");
  EXPECT_EQ(why({0, 6}), "s: the last cut 6 is beyond the stream's 5 edges");
  EXPECT_EQ(why({}), "s: no cuts; they need one entry more than the windows "
                     "(0 for no windows)");
  EXPECT_EQ(snapshotsFromEdgeStream(2, src, dst, {0, 1}, false, "s").message(),
            "s: edge 1 of the stream (1 -> 2) names node 2, outside the nodes "
            "[0, 2)");
}

TEST(SnapshotGroups, SplitMatchesSetsOnRandomSeries) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SnapshotSeries series = randomSeries(seed, 40 + 10 * seed, 7, 300, 0.8, 40);
    ASSERT_TRUE(series.validate()) << series.validate().message();
    for (int64_t groupSize : {1, 2, 3, 7}) {
      Expected<std::vector<SnapshotGroup>> groups =
          overlapGroups(series, groupSize);
      ASSERT_TRUE(groups) << groups.message();
      ASSERT_EQ(static_cast<int64_t>(groups->size()),
                (7 + groupSize - 1) / groupSize);
      int64_t covered = 0;
      for (const SnapshotGroup &g : *groups) {
        EXPECT_EQ(g.first, covered);
        covered += g.size();
        expectSplitOf(series, g);
      }
      EXPECT_EQ(covered, 7);
      EXPECT_EQ(groups->back().size(), 7 - (groups->size() - 1) * groupSize);
    }
  }
}

TEST(SnapshotGroups, SplitDoesNotDependOnTheThreads) {
  SnapshotSeries series = randomSeries(9, 5000, 4, 60000, 0.7, 8000);
  auto run = [&](const char *threads) {
    setenv("GNNC_HOST_THREADS", threads, 1);
    Expected<SnapshotGroup> g = overlapGroup(series, 0, 4);
    unsetenv("GNNC_HOST_THREADS");
    EXPECT_TRUE(g) << g.message();
    return g.take();
  };
  SnapshotGroup one = run("1"), four = run("4");
  EXPECT_EQ(one.overlap.rowPtr, four.overlap.rowPtr);
  EXPECT_EQ(one.overlap.colIdx, four.overlap.colIdx);
  for (int64_t s = 0; s < 4; ++s)
    EXPECT_EQ(one.exclusive[s].colIdx, four.exclusive[s].colIdx);
  expectSplitOf(series, four);
}

TEST(SnapshotGroups, IdenticalSnapshotsShareEverything) {
  std::vector<std::vector<int64_t>> src(4, {0, 1, 2, 3}), dst(4, {1, 2, 3, 0});
  SnapshotSeries series =
      snapshotsFromEdgeLists(4, src, dst, {}, "same").take();
  Expected<SnapshotGroup> g = overlapGroup(series, 0, 4);
  ASSERT_TRUE(g) << g.message();
  EXPECT_EQ(g->overlap.nnz(), 4);
  for (const CsrGraph &part : g->exclusive)
    EXPECT_EQ(part.nnz(), 0);
  EXPECT_DOUBLE_EQ(g->overlapRate(), 1.0);
  EXPECT_EQ(g->storedEdges(), 4);
  EXPECT_EQ(g->snapshot(2).name, "same[2]");
  EXPECT_EQ(g->snapshotEdges(), 16);
}

TEST(SnapshotGroups, DisjointSnapshotsShareNothing) {
  // Complete churn: no edge lives in two snapshots.
  SnapshotSeries series =
      snapshotsFromEdgeLists(4, {{0, 1}, {2, 3}, {0}}, {{1, 2}, {3, 0}, {2}},
                             {}, "churn")
          .take();
  Expected<SnapshotGroup> g = overlapGroup(series, 0, 3);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->overlap.nnz(), 0);
  EXPECT_EQ(g->overlap.numRows, 4);
  EXPECT_DOUBLE_EQ(g->overlapRate(), 0.0);
  EXPECT_EQ(g->storedEdges(), 5);
  expectSplitOf(series, *g);
}

TEST(SnapshotGroups, EmptySnapshotsAndOneSnapshotGroups) {
  SnapshotSeries series =
      snapshotsFromEdgeLists(3, {{}, {}, {0, 1}}, {{}, {}, {1, 2}}, {}, "e")
          .take();
  Expected<SnapshotGroup> empty = overlapGroup(series, 0, 2);
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->snapshotEdges(), 0);
  EXPECT_DOUBLE_EQ(empty->overlapRate(), 0.0);
  expectSplitOf(series, *empty);
  Expected<SnapshotGroup> mixed = overlapGroup(series, 1, 2);
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->overlap.nnz(), 0);
  EXPECT_EQ(mixed->exclusive[1].nnz(), 2);
  // A group of one: everything is overlap.
  Expected<SnapshotGroup> one = overlapGroup(series, 2, 1);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->size(), 1);
  EXPECT_EQ(one->overlap.nnz(), 2);
  EXPECT_EQ(one->exclusive[0].nnz(), 0);
  EXPECT_DOUBLE_EQ(one->overlapRate(), 1.0);
  expectSplitOf(series, *one);
  // A series of no nodes.
  SnapshotSeries none =
      snapshotsFromEdgeLists(0, {{}, {}}, {{}, {}}, {}, "0").take();
  Expected<SnapshotGroup> nothing = overlapGroup(none, 0, 2);
  ASSERT_TRUE(nothing);
  EXPECT_EQ(nothing->overlap.rowPtr, (std::vector<int64_t>{0}));
  EXPECT_EQ(stackExclusive(*nothing).offsets, (std::vector<int64_t>{0, 0}));
  // A default group has no snapshots and no edges.
  EXPECT_DOUBLE_EQ(SnapshotGroup().overlapRate(), 0.0);
}

TEST(SnapshotGroups, OutOfRangeGroupsAreErrors) {
  SnapshotSeries series = randomSeries(3, 10, 4, 20, 0.5, 2);
  EXPECT_EQ(overlapGroup(series, 4, 1).message(),
            "random: a group from snapshot 4, outside the snapshots [0, 4)");
  EXPECT_EQ(overlapGroup(series, -1, 1).message(),
            "random: a group from snapshot -1, outside the snapshots [0, 4)");
  EXPECT_EQ(overlapGroup(series, 1, 0).message(),
            "random: a group of 0 snapshots; a group has at least one");
  EXPECT_EQ(overlapGroup(series, 2, 3).message(),
            "random: a group of 3 snapshots from snapshot 2 goes past the "
            "series' 4 snapshots");
  EXPECT_EQ(overlapGroups(series, 0).message(),
            "random: groups of 0 snapshots; a group has at least one");
  EXPECT_TRUE(overlapGroups(SnapshotSeries(), 2)->empty());
  // The group's snapshots are checked: one of them unsorted.
  SnapshotSeries bad = series;
  CsrGraph &g = bad.snapshots[3];
  int64_t r = 0;
  while (g.degree(r) < 2)
    ++r;
  std::swap(g.colIdx[g.rowPtr[r]], g.colIdx[g.rowPtr[r] + 1]);
  EXPECT_TRUE(overlapGroup(bad, 0, 3));
  EXPECT_NE(overlapGroup(bad, 1, 3).message().find("random: snapshot 3: row " +
                                                   std::to_string(r) +
                                                   " is not sorted and unique"),
            std::string::npos);
  EXPECT_FALSE(overlapGroups(bad, 2));
}

TEST(SnapshotGroups, TransposedGroupIsTheGroupOfTheTransposes) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    // Directed snapshots: a group and its transpose differ.
    SnapshotSeries series = randomSeries(seed, 30 + 7 * seed, 6, 200, 0.7, 30);
    SnapshotSeries flipped = series;
    flipped.name = series.name + "^T";
    for (CsrGraph &g : flipped.snapshots)
      g = transpose(g);
    ASSERT_TRUE(flipped.validate()) << flipped.validate().message();
    for (int64_t count : {1, 2, 6}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " +
                   std::to_string(count) + " snapshots");
      SnapshotGroup g = groupOf(series, 0, count);
      SnapshotGroup t = transposeGroup(g);
      SnapshotGroup direct = groupOf(flipped, 0, count);
      ASSERT_EQ(t.size(), count);
      EXPECT_EQ(t.numNodes, series.numNodes);
      EXPECT_EQ(t.first, g.first);
      EXPECT_EQ(t.overlap.rowPtr, direct.overlap.rowPtr);
      EXPECT_EQ(t.overlap.colIdx, direct.overlap.colIdx);
      for (int64_t s = 0; s < count; ++s) {
        EXPECT_EQ(t.exclusive[s].rowPtr, direct.exclusive[s].rowPtr);
        EXPECT_EQ(t.exclusive[s].colIdx, direct.exclusive[s].colIdx);
        EXPECT_EQ(t.snapshot(s).name, series.snapshots[s].name + "^T");
      }
      expectSplitOf(flipped, t);
      EXPECT_EQ(t.storedEdges(), g.storedEdges());
      EXPECT_EQ(t.snapshotEdges(), g.snapshotEdges());
      EXPECT_DOUBLE_EQ(t.overlapRate(), g.overlapRate());
      if (count > 1 && g.overlap.nnz() > 0)
        EXPECT_NE(t.overlap.colIdx, g.overlap.colIdx) << "not directed";
      // Twice is the group itself.
      SnapshotGroup back = transposeGroup(t);
      EXPECT_EQ(back.overlap.rowPtr, g.overlap.rowPtr);
      EXPECT_EQ(back.overlap.colIdx, g.overlap.colIdx);
      for (int64_t s = 0; s < count; ++s)
        EXPECT_EQ(back.exclusive[s].colIdx, g.exclusive[s].colIdx);
    }
  }
  // No nodes, and a group of empty snapshots.
  SnapshotSeries none =
      snapshotsFromEdgeLists(0, {{}, {}}, {{}, {}}, {}, "0").take();
  SnapshotGroup t = transposeGroup(groupOf(none, 0, 2));
  EXPECT_EQ(t.overlap.rowPtr, (std::vector<int64_t>{0}));
  EXPECT_EQ(t.size(), 2);
  EXPECT_DOUBLE_EQ(t.overlapRate(), 0.0);
}

TEST(SnapshotGroups, StackedExclusiveIndexesOneColumnArray) {
  // Snapshots over 3 nodes: {1->0, 2->0, 0->1}, {1->0, 2->1}, {1->0}.
  SnapshotSeries series =
      snapshotsFromEdgeLists(3, {{1, 2, 0}, {1, 2}, {1}},
                             {{0, 0, 1}, {0, 1}, {0}}, {}, "stack")
          .take();
  SnapshotGroup g = groupOf(series, 0, 3);
  EXPECT_EQ(edgesOf(g.overlap), (EdgeSet{{0, 1}}));
  StackedExclusive stacked = stackExclusive(g);
  EXPECT_EQ(stacked.offsets,
            (std::vector<int64_t>{0, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3}));
  EXPECT_EQ(stacked.columns, (std::vector<int64_t>{2, 0, 2}));
  // Snapshot s's row r is columns[offsets[s * 4 + r] .. offsets[s * 4 + r +
  // 1]), for every group of a random series.
  SnapshotSeries random = randomSeries(5, 30, 5, 100, 0.6, 20);
  SnapshotGroup rg = groupOf(random, 0, 5);
  StackedExclusive rs = stackExclusive(rg);
  const int64_t n = random.numNodes;
  ASSERT_EQ(static_cast<int64_t>(rs.offsets.size()), 5 * (n + 1));
  ASSERT_EQ(static_cast<int64_t>(rs.columns.size()),
            rg.storedEdges() - rg.overlap.nnz());
  for (int64_t s = 0; s < 5; ++s)
    for (int64_t r = 0; r < n; ++r) {
      const CsrGraph &part = rg.exclusive[s];
      std::vector<int64_t> expected(part.colIdx.begin() + part.rowPtr[r],
                                    part.colIdx.begin() + part.rowPtr[r + 1]);
      std::vector<int64_t> got(rs.columns.begin() + rs.offsets[s * (n + 1) + r],
                               rs.columns.begin() +
                                   rs.offsets[s * (n + 1) + r + 1]);
      ASSERT_EQ(got, expected) << "snapshot " << s << " row " << r;
    }
}

TEST(Snapshots, EvolvingRmatIsDeterministicAndChurnsAsAsked) {
  EvolvingRmatOptions o;
  o.scale = 11;
  o.edgeFactor = 8;
  o.snapshots = 5;
  o.churn = 0.2;
  o.seed = 3;
  Expected<SnapshotSeries> a = generateEvolvingRmat(o);
  Expected<SnapshotSeries> b = generateEvolvingRmat(o);
  ASSERT_TRUE(a) << a.message();
  ASSERT_TRUE(b);
  ASSERT_TRUE(a->validate()) << a->validate().message();
  EXPECT_EQ(a->numNodes, 2048);
  ASSERT_EQ(a->size(), 5);
  CsrGraph rmat = generateRmat(11, 8, 3, 0.57, 0.19, 0.19, true, true);
  EXPECT_EQ(a->snapshots[0].colIdx, rmat.colIdx);
  for (int64_t t = 0; t < 5; ++t) {
    EXPECT_EQ(a->snapshots[t].colIdx, b->snapshots[t].colIdx) << t;
    const CsrGraph &g = a->snapshots[t];
    EXPECT_EQ(g.nnz(), rmat.nnz()) << t;
    CsrGraph back = transpose(g);
    EXPECT_EQ(back.colIdx, g.colIdx) << "snapshot " << t << " is undirected";
    EXPECT_EQ(computeStats(g).selfLoops, 0);
  }
  for (int64_t t = 0; t + 1 < 5; ++t) {
    SnapshotGroup pair = groupOf(*a, t, 2);
    EXPECT_NEAR(pair.overlapRate(), 1.0 - o.churn, 0.002) << t;
    EXPECT_NE(a->snapshots[t].colIdx, a->snapshots[t + 1].colIdx);
  }
  o.seed = 4;
  EXPECT_NE(generateEvolvingRmat(o)->snapshots[1].colIdx,
            a->snapshots[1].colIdx);

  // Directed, no churn and full churn.
  o.undirected = false;
  o.churn = 0.0;
  SnapshotSeries still = generateEvolvingRmat(o).take();
  EXPECT_DOUBLE_EQ(groupOf(still, 0, 5).overlapRate(), 1.0);
  o.churn = 1.0;
  SnapshotSeries all = generateEvolvingRmat(o).take();
  EXPECT_TRUE(all.validate());
  for (int64_t t = 0; t + 1 < 5; ++t)
    EXPECT_EQ(groupOf(all, t, 2).overlap.nnz(), 0) << t;
  o.churn = 0.35;
  SnapshotSeries some = generateEvolvingRmat(o).take();
  EXPECT_NEAR(groupOf(some, 2, 2).overlapRate(), 0.65, 0.002);
}

TEST(Snapshots, EvolvingRmatRefusesWhatCannotBeMade) {
  EvolvingRmatOptions o;
  o.scale = 32;
  EXPECT_EQ(generateEvolvingRmat(o).message(),
            "evolving R-MAT: scale 32 is outside [0, 31]");
  o.scale = 4;
  o.churn = 1.5;
  EXPECT_EQ(generateEvolvingRmat(o).message(),
            "evolving R-MAT: churn 1.5 is outside [0, 1]");
  o.churn = 0.1;
  o.snapshots = 0;
  EXPECT_EQ(generateEvolvingRmat(o).message(),
            "evolving R-MAT: 0 snapshots; a series has at least one");
  // 4 nodes, 256 draws: all 6 undirected pairs are edges, none is left to
  // add.
  o.scale = 2;
  o.edgeFactor = 64;
  o.snapshots = 3;
  o.churn = 0.5;
  EXPECT_EQ(generateEvolvingRmat(o).message(),
            "evolving R-MAT: every step replaces 3 of the 6 edges, but only 0 "
            "node pairs are not edges; scale 2 is too small for edge factor "
            "64 and churn 0.5");
  o.snapshots = 1;
  EXPECT_TRUE(generateEvolvingRmat(o));
  // A small graph with heavy churn still finishes (uniform pairs take over
  // when R-MAT draws keep hitting edges).
  o.scale = 6;
  o.edgeFactor = 4;
  o.snapshots = 3;
  o.churn = 1.0;
  Expected<SnapshotSeries> small = generateEvolvingRmat(o);
  ASSERT_TRUE(small) << small.message();
  Expected<SnapshotGroup> pair = overlapGroup(*small, 0, 2);
  ASSERT_TRUE(pair) << pair.message();
  EXPECT_EQ(pair->overlap.nnz(), 0);
}

//===----------------------------------------------------------------------===//
// Temporal .npz files
//===----------------------------------------------------------------------===//

std::string scalar(int64_t v) {
  return npy("{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
             int64Data({v}));
}

std::string float32Array(const std::vector<float> &values) {
  std::string data;
  for (float v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    for (int i = 0; i < 4; ++i)
      data += static_cast<char>((bits >> (8 * i)) & 0xff);
  }
  return npy("{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                 std::to_string(values.size()) + ",), }",
             data);
}

using Members = std::vector<std::pair<std::string, std::string>>;

/// `members` with `replace` swapped in (an empty replacement drops one).
std::vector<uint8_t> zipOf(Members members, const Members &replace) {
  for (const auto &[name, data] : replace) {
    bool found = false;
    for (auto it = members.begin(); it != members.end(); ++it)
      if (it->first == name) {
        found = true;
        if (data.empty())
          members.erase(it);
        else
          it->second = data;
        break;
      }
    if (!found)
      members.push_back({name, data});
  }
  return bytesOf(storedZip(members));
}

/// An england_covid-like file: 4 nodes, 3 snapshots.
Members covidLike() {
  return {{"num_nodes.npy", scalar(4)},
          {"num_snapshots.npy", scalar(3)},
          {"edge_ptr.npy", int64Array({0, 3, 5, 7})},
          {"src.npy", int64Array({0, 1, 2, 1, 2, 1, 3})},
          {"dst.npy", int64Array({0, 0, 1, 0, 1, 0, 3})},
          {"weight.npy", float32Array({5, 1, 2, 3, 4, 6, 7})}};
}

/// A bitcoinalpha-like file: 4 nodes, a stream of 6 edges, 3 windows.
Members streamLike() {
  return {{"num_nodes.npy", scalar(4)},
          {"src.npy", int64Array({0, 1, 0, 2, 3, 1})},
          {"dst.npy", int64Array({1, 2, 1, 3, 0, 2})},
          {"time.npy", int64Array({10, 11, 12, 40, 41, 70})},
          {"snapshot_ptr_30d.npy", int64Array({0, 3, 5, 6})}};
}

TEST(SnapshotsNpz, ReadsBothLayouts) {
  Expected<SnapshotSeries> covid =
      parseSnapshotSeries("dir/covid.npz", zipOf(covidLike(), {}));
  ASSERT_TRUE(covid) << covid.message();
  EXPECT_EQ(covid->name, "covid");
  EXPECT_EQ(covid->numNodes, 4);
  ASSERT_EQ(covid->size(), 3);
  EXPECT_TRUE(covid->validate());
  EXPECT_EQ(edgesOf(covid->snapshots[0]), (EdgeSet{{0, 0}, {0, 1}, {1, 2}}));
  EXPECT_EQ(covid->snapshots[0].values, (std::vector<float>{5, 1, 2}));
  EXPECT_EQ(edgesOf(covid->snapshots[2]), (EdgeSet{{0, 1}, {3, 3}}));

  Expected<SnapshotSeries> stream =
      parseSnapshotSeries("stream.npz", zipOf(streamLike(), {}));
  ASSERT_TRUE(stream) << stream.message();
  ASSERT_EQ(stream->size(), 3);
  EXPECT_EQ(edgesOf(stream->snapshots[0]), (EdgeSet{{1, 0}, {2, 1}}));
  EXPECT_EQ(edgesOf(stream->snapshots[1]), (EdgeSet{{3, 2}, {0, 3}}));
  EXPECT_EQ(edgesOf(stream->snapshots[2]), (EdgeSet{{2, 1}}));
  EXPECT_FALSE(stream->snapshots[0].hasValues());

  // Without num_nodes: the largest id + 1.
  Expected<SnapshotSeries> derived = parseSnapshotSeries(
      "stream.npz", zipOf(streamLike(), {{"num_nodes.npy", ""}}));
  ASSERT_TRUE(derived) << derived.message();
  EXPECT_EQ(derived->numNodes, 4);
}

TEST(SnapshotsNpz, HostileFilesGetErrorsNamingFileAndMember) {
  auto covid = [](const Members &replace) {
    return parseSnapshotSeries("covid.npz", zipOf(covidLike(), replace))
        .message();
  };
  auto stream = [](const Members &replace) {
    return parseSnapshotSeries("btc.npz", zipOf(streamLike(), replace))
        .message();
  };
  EXPECT_EQ(covid({{"dst.npy", ""}}),
            "covid.npz: no member 'dst' (the destination of each edge)");
  EXPECT_EQ(covid({{"edge_ptr.npy", ""}}),
            "covid.npz: no member 'edge_ptr' (per-snapshot edge lists) or "
            "'snapshot_ptr_<span>' (windows of a timed edge stream); not a "
            "series of snapshots");
  EXPECT_EQ(covid({{"edge_ptr.npy", int64Array({0, 5, 3, 7})}}),
            "covid.npz: member 'edge_ptr': not sorted: edge_ptr[2] = 3 is "
            "below edge_ptr[1] = 5");
  EXPECT_EQ(covid({{"edge_ptr.npy", int64Array({1, 3, 5, 7})}}),
            "covid.npz: member 'edge_ptr': starts at 1; the first snapshot "
            "starts at edge 0");
  EXPECT_EQ(covid({{"edge_ptr.npy", int64Array({0, 3, 5, 6})},
                   {"num_snapshots.npy", ""}}),
            "covid.npz: member 'edge_ptr': ends at 6, but 'src' and 'dst' "
            "hold 7 edges");
  EXPECT_EQ(covid({{"edge_ptr.npy", int64Array({0, 3, 7})}}),
            "covid.npz: member 'num_snapshots': is 3, but 'edge_ptr' has 3 "
            "entries (2 snapshots)");
  EXPECT_EQ(covid({{"src.npy", int64Array({0, 1, 2, 1, 9, 1, 3})}}),
            "covid.npz: member 'src': src[4] = 9 (an edge of snapshot 1) is "
            "outside the nodes [0, 4)");
  EXPECT_EQ(covid({{"dst.npy", int64Array({0, 0, -1, 0, 1, 0, 3})}}),
            "covid.npz: member 'dst': dst[2] = -1 (an edge of snapshot 0) is "
            "outside the nodes [0, 4)");
  EXPECT_EQ(covid({{"dst.npy", int64Array({0, 0, 1})}}),
            "covid.npz: member 'dst': has 3 entries, but 'src' has 7; one of "
            "each per edge");
  EXPECT_EQ(covid({{"src.npy", float32Array({0, 1, 2, 1, 2, 1, 3})}}),
            "covid.npz: member 'src': dtype '<f4' is not an integer type");
  EXPECT_EQ(covid({{"weight.npy", float32Array({1, 2})}}),
            "covid.npz: member 'weight': has shape (2,), expected (7,): one "
            "weight per edge");
  EXPECT_EQ(covid({{"num_nodes.npy", scalar(-4)}}),
            "covid.npz: member 'num_nodes': is negative (-4)");
  EXPECT_EQ(covid({{"num_nodes.npy", scalar(int64_t(1) << 40)}}),
            "covid.npz: member 'num_nodes': makes 1099511627776 nodes, more "
            "than the supported maximum 2147483648");
  EXPECT_EQ(
      covid({{"num_nodes.npy", ""},
             {"dst.npy", int64Array({0, 0, 1, 0, int64_t(1) << 33, 0, 3})}}),
      "covid.npz: member 'dst': node id 8589934592 makes more nodes "
      "than the supported maximum 2147483648 (and no member "
      "'num_nodes' gives the count)");
  EXPECT_EQ(covid({{"snapshot_ptr_30d.npy", int64Array({0, 7})}}),
            "covid.npz: both 'edge_ptr' (per-snapshot edge lists) and "
            "'snapshot_ptr_30d' (windows of an edge stream); expected one "
            "layout");

  EXPECT_EQ(stream({{"snapshot_ptr_30d.npy", int64Array({0, 4, 2, 6})}}),
            "btc.npz: member 'snapshot_ptr_30d': not sorted: "
            "snapshot_ptr_30d[2] = 2 is below snapshot_ptr_30d[1] = 4");
  EXPECT_EQ(stream({{"snapshot_ptr_30d.npy", int64Array({0, 3, 9})}}),
            "btc.npz: member 'snapshot_ptr_30d': ends at 9, beyond the 6 "
            "edges of 'src' and 'dst'");
  EXPECT_EQ(stream({{"snapshot_ptr_30d.npy", int64Array({})}}),
            "btc.npz: member 'snapshot_ptr_30d': is empty; it needs one entry "
            "more than the windows (0 for no windows)");
  EXPECT_EQ(stream({{"src.npy", ""}}),
            "btc.npz: no member 'src' (the source of each edge)");
  EXPECT_EQ(stream({{"dst.npy", int64Array({1, 2, 1, 3, 0, 7})}}),
            "btc.npz: member 'dst': dst[5] = 7 (an edge of window 2) is "
            "outside the nodes [0, 4)");
  // An edge after the last window is checked too.
  EXPECT_EQ(stream({{"snapshot_ptr_30d.npy", int64Array({0, 3, 5})},
                    {"dst.npy", int64Array({1, 2, 1, 3, 0, 7})}}),
            "btc.npz: member 'dst': dst[5] = 7 (an edge of after the last "
            "window) is outside the nodes [0, 4)");
  EXPECT_EQ(stream({{"time.npy", int64Array({10, 11, 12, 9, 41, 70})}}),
            "btc.npz: member 'time': not sorted: time[3] = 9 is below time[2] "
            "= 12; the stream is in time order");
  EXPECT_EQ(stream({{"time.npy", int64Array({10, 11})}}),
            "btc.npz: member 'time': has 2 entries, but 'src' has 6; one time "
            "per edge");
  EXPECT_EQ(stream({{"snapshot_ptr_7d.npy", int64Array({0, 6})}}),
            "btc.npz: several window members ('snapshot_ptr_30d', "
            "'snapshot_ptr_7d', ...); expected one");
  // Not an archive at all.
  EXPECT_FALSE(parseSnapshotSeries("junk.npz", bytesOf("not a zip")));
}

//===----------------------------------------------------------------------===//
// The temporal datasets
//===----------------------------------------------------------------------===//

/// The path of dataset `name`, or empty when it is absent.
std::string datasetPath(const std::string &name) {
  std::string path = gnnc::test::datasetsDir() + "/" + name;
  return std::filesystem::exists(path) ? path : std::string();
}

#define REQUIRE_DATASET(var, name)                                             \
  std::string var = datasetPath(name);                                         \
  if (var.empty())                                                             \
    GTEST_SKIP() << "dataset " << name << " not found in "                     \
                 << gnnc::test::datasetsDir()                                  \
                 << " (set GNNC_DATASETS to the shared datasets folder)";

/// Prints the overlap of groups of 2, 4 and 8 snapshots of `series`: the
/// rate over all groups (shared edges x S over all snapshot edges) and the
/// edges stored per snapshot edge.
void reportOverlap(const SnapshotSeries &series, const std::string &label) {
  for (int64_t groupSize : {2, 4, 8}) {
    Expected<std::vector<SnapshotGroup>> groups =
        overlapGroups(series, groupSize);
    ASSERT_TRUE(groups) << groups.message();
    int64_t shared = 0, stored = 0, total = 0;
    for (const SnapshotGroup &g : *groups) {
      expectSplitOf(series, g);
      shared += g.overlap.nnz() * g.size();
      stored += g.storedEdges();
      total += g.snapshotEdges();
    }
    std::printf("[ overlap  ] %s: groups of %lld: overlap rate %.4f, stored "
                "edges / snapshot edges %.4f (%zu groups)\n",
                label.c_str(), static_cast<long long>(groupSize),
                total ? double(shared) / double(total) : 0.0,
                total ? double(stored) / double(total) : 0.0, groups->size());
  }
}

TEST(SnapshotsDatasets, EnglandCovid) {
  REQUIRE_DATASET(path, "temporal_england_covid.npz");
  Expected<SnapshotSeries> s = readSnapshotSeries(path);
  ASSERT_TRUE(s) << s.message();
  EXPECT_TRUE(s->validate());
  EXPECT_EQ(s->name, "temporal_england_covid");
  EXPECT_EQ(s->numNodes, 129);
  EXPECT_EQ(s->size(), 61);
  int64_t edges = 0;
  for (const CsrGraph &g : s->snapshots) {
    edges += g.nnz();
    EXPECT_TRUE(g.hasValues());
  }
  EXPECT_EQ(edges, 82529); // no duplicates in the file
  EXPECT_EQ(s->snapshots[0].nnz(), 2158);
  reportOverlap(*s, "england_covid");
}

TEST(SnapshotsDatasets, BitcoinAlpha) {
  REQUIRE_DATASET(path, "temporal_bitcoinalpha.npz");
  Expected<SnapshotSeries> s = readSnapshotSeries(path);
  ASSERT_TRUE(s) << s.message();
  EXPECT_TRUE(s->validate());
  EXPECT_EQ(s->numNodes, 3783);
  EXPECT_EQ(s->size(), 64);
  int64_t edges = 0;
  for (const CsrGraph &g : s->snapshots)
    edges += g.nnz();
  EXPECT_EQ(edges, 24186);
  // Every rating is its own edge: windows share (almost) nothing.
  reportOverlap(*s, "bitcoinalpha 30-day windows");
  // The graph as it grows: each snapshot holds every edge so far.
  Expected<NpzFile> npz = readNpz(path);
  ASSERT_TRUE(npz);
  std::vector<int64_t> src = *npz->get("src")->asInt64();
  std::vector<int64_t> dst = *npz->get("dst")->asInt64();
  std::vector<int64_t> cuts = *npz->get("snapshot_ptr_30d")->asInt64();
  Expected<SnapshotSeries> grown =
      snapshotsFromEdgeStream(3783, src, dst, cuts, true, "bitcoinalpha");
  ASSERT_TRUE(grown) << grown.message();
  EXPECT_EQ(grown->snapshots.back().nnz(), 24186);
  reportOverlap(*grown, "bitcoinalpha cumulative");
}

} // namespace
