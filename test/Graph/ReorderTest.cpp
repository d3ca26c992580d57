//===- ReorderTest.cpp - Node renumbering ---------------------------------===//

#include "gnnc/graph/Reorder.h"

#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Random.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/reference/Spmm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <numeric>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

CsrGraph fromEdges(int64_t n, const std::vector<int64_t> &rows,
                   const std::vector<int64_t> &cols) {
  Expected<CsrGraph> g = fromCoo(n, n, rows, cols, {});
  EXPECT_TRUE(g.isOk()) << g.message();
  return g.take();
}

/// Two random components, a path, and isolated nodes in between.
CsrGraph disconnectedGraph() {
  std::vector<int64_t> rows, cols;
  Rng rng(5);
  auto addRandomBlock = [&](int64_t base, int64_t size, int64_t edges) {
    for (int64_t e = 0; e < edges; ++e) {
      rows.push_back(base + static_cast<int64_t>(rng.nextBelow(size)));
      cols.push_back(base + static_cast<int64_t>(rng.nextBelow(size)));
    }
  };
  addRandomBlock(0, 300, 1500);
  addRandomBlock(400, 200, 900); // 300..399 are isolated.
  for (int64_t v = 700; v + 1 < 760; ++v) {
    rows.push_back(v);
    cols.push_back(v + 1);
  }
  return fromEdges(800, rows, cols); // 760..799 are isolated too.
}

/// The 2-D grid graph of width x height with 4-neighbour edges both ways.
CsrGraph gridGraph(int64_t width, int64_t height) {
  std::vector<int64_t> rows, cols;
  auto id = [&](int64_t x, int64_t y) { return y * width + x; };
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x) {
      if (x + 1 < width) {
        rows.insert(rows.end(), {id(x, y), id(x + 1, y)});
        cols.insert(cols.end(), {id(x + 1, y), id(x, y)});
      }
      if (y + 1 < height) {
        rows.insert(rows.end(), {id(x, y), id(x, y + 1)});
        cols.insert(cols.end(), {id(x, y + 1), id(x, y)});
      }
    }
  return fromEdges(width * height, rows, cols);
}

std::vector<int64_t> randomPermutationOf(int64_t n, uint64_t seed) {
  std::vector<int64_t> p(n);
  std::iota(p.begin(), p.end(), int64_t(0));
  Rng rng(seed);
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(p[i], p[rng.nextBelow(static_cast<uint64_t>(i) + 1)]);
  return p;
}

/// Planted partition: `blocks` dense blocks of `blockSize` nodes (each node
/// links to `inDegree` random members of its block, both ways) and
/// `crossEdges` random edges between blocks; node ids are scrambled.
/// `blockOf` receives the block of every (scrambled) node.
CsrGraph plantedPartition(int64_t blocks, int64_t blockSize, int64_t inDegree,
                          int64_t crossEdges, uint64_t seed,
                          std::vector<int64_t> &blockOf) {
  const int64_t n = blocks * blockSize;
  std::vector<int64_t> scramble = randomPermutationOf(n, seed);
  Rng rng(seed + 1);
  std::vector<int64_t> rows, cols;
  auto link = [&](int64_t u, int64_t v) {
    rows.insert(rows.end(), {scramble[u], scramble[v]});
    cols.insert(cols.end(), {scramble[v], scramble[u]});
  };
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t i = 0; i < blockSize; ++i)
      for (int64_t k = 0; k < inDegree; ++k)
        link(b * blockSize + i,
             b * blockSize + static_cast<int64_t>(rng.nextBelow(blockSize)));
  for (int64_t e = 0; e < crossEdges; ++e)
    link(static_cast<int64_t>(rng.nextBelow(n)),
         static_cast<int64_t>(rng.nextBelow(n)));
  blockOf.assign(n, 0);
  for (int64_t v = 0; v < n; ++v)
    blockOf[scramble[v]] = v / blockSize;
  return fromEdges(n, rows, cols);
}

struct NamedGraph {
  std::string name;
  CsrGraph graph;
};

std::vector<NamedGraph> testGraphs() {
  std::vector<NamedGraph> graphs;
  graphs.push_back({"random", generateUniformRandom(1500, 1500, 6.0, 21)});
  graphs.push_back({"ragged", makeRaggedTestGraph(4, 3000, 1200, true)});
  graphs.push_back({"disconnected", disconnectedGraph()});
  graphs.push_back({"rmat", generateRmat(11, 8, 3)});
  CsrGraph noEdges;
  noEdges.numRows = noEdges.numCols = 50;
  noEdges.rowPtr.assign(51, 0);
  graphs.push_back({"no-edges", noEdges});
  CsrGraph empty;
  empty.rowPtr = {0};
  graphs.push_back({"empty", empty});
  return graphs;
}

TEST(ReorderTest, PermutationBasics) {
  Expected<Permutation> p = Permutation::fromNewToOld({2, 0, 3, 1});
  ASSERT_TRUE(p.isOk()) << p.message();
  EXPECT_EQ(p->oldToNew, (std::vector<int64_t>{1, 3, 0, 2}));
  EXPECT_TRUE(p->validate(4).isOk());
  Permutation inv = p->inverse();
  EXPECT_EQ(inv.newToOld, p->oldToNew);
  EXPECT_EQ(inv.oldToNew, p->newToOld);
  EXPECT_TRUE(inv.validate(4).isOk());
  EXPECT_TRUE(Permutation::identity(3).validate(3).isOk());
  EXPECT_TRUE(Permutation::identity(0).validate(0).isOk());

  EXPECT_NE(p->validate(5).message().find("newToOld has 4 entries, expected 5"),
            std::string::npos)
      << p->validate(5).message();
  Permutation bad = *p;
  bad.newToOld[1] = 2; // 2 twice.
  EXPECT_FALSE(bad.validate(4).isOk());
  bad = *p;
  bad.newToOld[0] = 7;
  EXPECT_NE(bad.validate(4).message().find("out of range"), std::string::npos);
  bad = *p;
  bad.oldToNew.pop_back();
  EXPECT_NE(bad.validate(4).message().find("oldToNew has 3 entries"),
            std::string::npos);

  Expected<Permutation> twice = Permutation::fromNewToOld({0, 1, 1});
  ASSERT_FALSE(twice.isOk());
  EXPECT_NE(twice.message().find("1 occurs twice"), std::string::npos)
      << twice.message();
  EXPECT_FALSE(Permutation::fromNewToOld({0, 3, 1}).isOk());
}

TEST(ReorderTest, AllOrdersAreBijections) {
  for (const NamedGraph &ng : testGraphs()) {
    SCOPED_TRACE(ng.name);
    const int64_t n = ng.graph.numRows;
    Permutation degree = degreeSortOrder(ng.graph);
    EXPECT_TRUE(degree.validate(n).isOk()) << degree.validate(n).message();
    Permutation ascending = degreeSortOrder(ng.graph, false);
    EXPECT_TRUE(ascending.validate(n).isOk());
    Permutation rcm = rcmOrder(ng.graph);
    EXPECT_TRUE(rcm.validate(n).isOk()) << rcm.validate(n).message();
    CommunityInfo info;
    Permutation community = communityOrder(ng.graph, {}, &info);
    EXPECT_TRUE(community.validate(n).isOk())
        << community.validate(n).message();
    ASSERT_EQ(static_cast<int64_t>(info.communityStart.size()),
              info.numCommunities + 1);
    EXPECT_EQ(info.communityStart.front(), 0);
    EXPECT_EQ(info.communityStart.back(), n);
    EXPECT_TRUE(
        std::is_sorted(info.communityStart.begin(), info.communityStart.end()));
  }
}

TEST(ReorderTest, OrdersByName) {
  std::vector<NamedGraph> graphs = testGraphs();
  const CsrGraph &g = graphs.front().graph;
  for (const char *name : {"degree", "rcm", "community"}) {
    ASSERT_TRUE(isKnownOrder(name)) << name;
    auto byName = orderByName(g, name);
    ASSERT_TRUE(byName.isOk()) << byName.message();
    Permutation direct = std::string(name) == "degree" ? degreeSortOrder(g)
                         : std::string(name) == "rcm"  ? rcmOrder(g)
                                                       : communityOrder(g);
    EXPECT_EQ(byName->newToOld, direct.newToOld) << name;
  }
  EXPECT_FALSE(isKnownOrder("random"));
  auto unknown = orderByName(g, "random");
  ASSERT_FALSE(unknown.isOk());
  EXPECT_NE(unknown.message().find("unknown order 'random'"), std::string::npos)
      << unknown.message();
}

TEST(ReorderTest, OrdersAreDeterministic) {
  CsrGraph g = makeRaggedTestGraph(9, 2000, 500);
  EXPECT_EQ(rcmOrder(g).newToOld, rcmOrder(g).newToOld);
  CommunityOptions options;
  options.seed = 42;
  EXPECT_EQ(communityOrder(g, options).newToOld,
            communityOrder(g, options).newToOld);
}

TEST(ReorderTest, DegreeSortIsStable) {
  CsrGraph g = makeRaggedTestGraph(2, 2000, 700);
  for (bool descending : {true, false}) {
    Permutation p = degreeSortOrder(g, descending);
    for (int64_t i = 0; i + 1 < g.numRows; ++i) {
      int64_t a = g.degree(p.newToOld[i]), b = g.degree(p.newToOld[i + 1]);
      if (a == b)
        EXPECT_LT(p.newToOld[i], p.newToOld[i + 1]);
      else
        EXPECT_EQ(a > b, descending) << "at " << i;
    }
  }
}

TEST(ReorderTest, DisconnectedAndIsolatedNodes) {
  CsrGraph g = disconnectedGraph();
  CommunityInfo info;
  Permutation p = communityOrder(g, {}, &info);
  ASSERT_TRUE(p.validate(g.numRows).isOk());
  // 140 isolated nodes, each a community of its own, plus at least the three
  // components.
  EXPECT_GE(info.numCommunities, 143);
  // Communities never mix components.
  std::vector<int64_t> parent(g.numRows);
  std::iota(parent.begin(), parent.end(), int64_t(0));
  auto find = [&](int64_t v) {
    while (parent[v] != v)
      v = parent[v] = parent[parent[v]];
    return v;
  };
  for (int64_t r = 0; r < g.numRows; ++r)
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e)
      parent[find(r)] = find(g.colIdx[e]);
  for (int64_t c = 0; c < info.numCommunities; ++c)
    for (int64_t i = info.communityStart[c]; i < info.communityStart[c + 1];
         ++i)
      EXPECT_EQ(find(p.newToOld[i]), find(p.newToOld[info.communityStart[c]]))
          << "community " << c;
  Permutation rcm = rcmOrder(g);
  Expected<CsrGraph> renumbered = applyPermutation(g, rcm);
  ASSERT_TRUE(renumbered.isOk()) << renumbered.message();
  // RCM numbers components contiguously, so no edge crosses far: the largest
  // component has 300 nodes.
  EXPECT_LT(maxBandwidth(*renumbered), 300);
}

TEST(ReorderTest, ApplyPermutationErrors) {
  CsrGraph rect = generateUniformRandom(10, 12, 2.0, 1);
  Permutation id10 = Permutation::identity(10);
  Expected<CsrGraph> r = applyPermutation(rect, id10);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.message().find("square"), std::string::npos) << r.message();
  EXPECT_EQ(rcmOrder(rect).newToOld, id10.newToOld);
  EXPECT_EQ(communityOrder(rect).newToOld, id10.newToOld);

  CsrGraph sq = generateUniformRandom(10, 10, 2.0, 1);
  r = applyPermutation(sq, Permutation::identity(9));
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.message().find("permutation of 9 nodes for a graph of 10"),
            std::string::npos)
      << r.message();
  Permutation broken = Permutation::identity(10);
  broken.newToOld[3] = 4;
  r = applyPermutation(sq, broken);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.message().find("applyPermutation: permutation:"),
            std::string::npos)
      << r.message();
}

TEST(ReorderTest, ApplyPermutationMovesEntriesWithValues) {
  // 0 -> {1: 5}, 1 -> {2: 6}, 2 -> {0: 7, 1: 8}.
  Expected<CsrGraph> g =
      fromCoo(3, 3, {0, 1, 2, 2}, {1, 2, 0, 1}, {5, 6, 7, 8});
  ASSERT_TRUE(g.isOk());
  Expected<Permutation> p = Permutation::fromNewToOld({2, 0, 1});
  ASSERT_TRUE(p.isOk());
  // old 2 -> new 0, old 0 -> new 1, old 1 -> new 2.
  Expected<CsrGraph> r = applyPermutation(*g, *p);
  ASSERT_TRUE(r.isOk()) << r.message();
  EXPECT_EQ(r->rowPtr, (std::vector<int64_t>{0, 2, 3, 4}));
  EXPECT_EQ(r->colIdx, (std::vector<int64_t>{1, 2, 2, 0}));
  EXPECT_EQ(r->values, (std::vector<float>{7, 8, 5, 6}));
  EXPECT_TRUE(r->isSortedAndUnique());
}

TEST(ReorderTest, RenumberedSpmmMatchesReference) {
  const int64_t width = 7;
  for (const NamedGraph &ng : testGraphs()) {
    SCOPED_TRACE(ng.name);
    const CsrGraph &g = ng.graph;
    const int64_t n = g.numRows;
    std::vector<float> x = ref::randomFeatures(n * width, 17);
    std::vector<double> expected;
    ref::spmmSum(g, nullptr, x.data(), width, expected);

    std::vector<std::pair<std::string, Permutation>> orders;
    orders.emplace_back("degree", degreeSortOrder(g));
    orders.emplace_back("rcm", rcmOrder(g));
    orders.emplace_back("community", communityOrder(g));
    for (const auto &[orderName, perm] : orders) {
      SCOPED_TRACE(orderName);
      Expected<CsrGraph> renumbered = applyPermutation(g, perm);
      ASSERT_TRUE(renumbered.isOk()) << renumbered.message();
      EXPECT_TRUE(renumbered->validate().isOk());
      EXPECT_TRUE(renumbered->isSortedAndUnique() || !g.isSortedAndUnique());
      EXPECT_EQ(renumbered->nnz(), g.nnz());

      std::vector<float> xNew(x.size());
      permuteRowsToNew(perm, x.data(), width, xNew.data());
      std::vector<double> yNew;
      ref::spmmSum(*renumbered, nullptr, xNew.data(), width, yNew);
      std::vector<float> yNewFloat(yNew.begin(), yNew.end());
      std::vector<float> y(yNewFloat.size());
      permuteRowsToOriginal(perm, yNewFloat.data(), width, y.data());
      std::string report;
      Status s =
          ref::compareToReference(y, expected, width, 1e-5, 1e-5, &report);
      EXPECT_TRUE(s.isOk()) << s.message();

      // Round trip of the helpers is exact.
      std::vector<float> back(x.size());
      permuteRowsToOriginal(perm, xNew.data(), width, back.data());
      EXPECT_EQ(back, x);
    }
  }
}

/// A graph with empty rows, a hub row pointing at most nodes, a hub column
/// most nodes point at, a self loop and random values.
CsrGraph emptyRowsAndHub() {
  const int64_t n = 400;
  std::vector<int64_t> rows, cols;
  std::vector<float> vals;
  Rng rng(41);
  auto add = [&](int64_t r, int64_t c) {
    rows.push_back(r);
    cols.push_back(c);
    vals.push_back(static_cast<float>(rows.size()));
  };
  for (int64_t c = 0; c < n; c += 2)
    add(7, c); // the hub row
  for (int64_t r = 0; r < n; ++r) {
    if (r % 5 == 0 || r == 7)
      continue;  // every fifth row stays empty
    add(r, 123); // the hub column
    for (int k = 0; k < 3; ++k)
      add(r, static_cast<int64_t>(rng.next() % n));
  }
  add(9, 9);
  Expected<CsrGraph> g = fromCoo(n, n, rows, cols, vals, Duplicates::KeepFirst);
  EXPECT_TRUE(g.isOk()) << g.message();
  return g.take();
}

/// Checks that `edgeOf` maps each renumbered edge to the input edge with the
/// same endpoints and value, and is a bijection.
void expectEdgeMapFollowsEdges(const CsrGraph &g, const Permutation &perm,
                               const PermutedGraph &pg) {
  const CsrGraph &h = pg.graph;
  ASSERT_EQ(h.nnz(), g.nnz());
  ASSERT_EQ(static_cast<int64_t>(pg.edgeOf.size()), g.nnz());
  std::vector<int64_t> rowOf(g.nnz());
  for (int64_t r = 0; r < g.numRows; ++r)
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e)
      rowOf[e] = r;
  std::vector<char> seen(g.nnz(), 0);
  int64_t bad = 0;
  for (int64_t r = 0; r < h.numRows; ++r)
    for (int64_t e = h.rowPtr[r]; e < h.rowPtr[r + 1]; ++e) {
      int64_t u = pg.edgeOf[e];
      ASSERT_GE(u, 0);
      ASSERT_LT(u, g.nnz());
      EXPECT_FALSE(seen[u]) << "user edge " << u << " mapped twice";
      seen[u] = 1;
      if (rowOf[u] != perm.newToOld[r] ||
          g.colIdx[u] != perm.newToOld[h.colIdx[e]] ||
          (g.hasValues() && g.values[u] != h.values[e])) {
        if (bad++ < 5)
          ADD_FAILURE() << "renumbered edge " << e << " (" << r << ", "
                        << h.colIdx[e] << ") is user (" << perm.newToOld[r]
                        << ", " << perm.newToOld[h.colIdx[e]]
                        << ") but maps to user edge " << u << " (" << rowOf[u]
                        << ", " << g.colIdx[u] << ")";
      }
    }
  EXPECT_EQ(bad, 0);
}

TEST(ReorderTest, EdgeMapFollowsEdges) {
  std::vector<NamedGraph> graphs = testGraphs();
  graphs.push_back({"empty-rows-and-hub", emptyRowsAndHub()});
  // A random graph whose rows are not sorted by column, with values.
  CsrGraph unsorted = generateUniformRandom(700, 700, 5.0, 8);
  unsorted.values = ref::randomFeatures(unsorted.nnz(), 9);
  for (int64_t r = 0; r < unsorted.numRows; ++r)
    std::reverse(unsorted.colIdx.begin() + unsorted.rowPtr[r],
                 unsorted.colIdx.begin() + unsorted.rowPtr[r + 1]);
  graphs.push_back({"unsorted-with-values", unsorted});
  for (const NamedGraph &ng : graphs) {
    SCOPED_TRACE(ng.name);
    const CsrGraph &g = ng.graph;
    for (const char *name : {"degree", "rcm", "community"}) {
      SCOPED_TRACE(name);
      Expected<Permutation> perm = orderByName(g, name);
      ASSERT_TRUE(perm.isOk()) << perm.message();
      Expected<PermutedGraph> pg = applyPermutationWithEdgeMap(g, *perm);
      ASSERT_TRUE(pg.isOk()) << pg.message();
      EXPECT_TRUE(pg->graph.validate().isOk());
      expectEdgeMapFollowsEdges(g, *perm, *pg);
      // The same graph as applyPermutation.
      Expected<CsrGraph> plain = applyPermutation(g, *perm);
      ASSERT_TRUE(plain.isOk()) << plain.message();
      EXPECT_EQ(plain->rowPtr, pg->graph.rowPtr);
      EXPECT_EQ(plain->colIdx, pg->graph.colIdx);
      EXPECT_EQ(plain->values, pg->graph.values);
      // Edge data in the user's order follows its edges.
      if (g.hasValues())
        EXPECT_EQ(permuteEdgeData(g.values, pg->edgeOf), pg->graph.values);
    }
  }
}

TEST(ReorderTest, EdgeMapOfSmallGraph) {
  // 0 -> {1: 5}, 1 -> {2: 6}, 2 -> {0: 7, 1: 8}; old 2 -> new 0, old 0 ->
  // new 1, old 1 -> new 2.
  Expected<CsrGraph> g =
      fromCoo(3, 3, {0, 1, 2, 2}, {1, 2, 0, 1}, {5, 6, 7, 8});
  ASSERT_TRUE(g.isOk());
  Expected<Permutation> p = Permutation::fromNewToOld({2, 0, 1});
  ASSERT_TRUE(p.isOk());
  Expected<PermutedGraph> r = applyPermutationWithEdgeMap(*g, *p);
  ASSERT_TRUE(r.isOk()) << r.message();
  EXPECT_EQ(r->graph.colIdx, (std::vector<int64_t>{1, 2, 2, 0}));
  EXPECT_EQ(r->edgeOf, (std::vector<int64_t>{2, 3, 0, 1}));

  CsrGraph rect = generateUniformRandom(10, 12, 2.0, 1);
  Expected<PermutedGraph> bad =
      applyPermutationWithEdgeMap(rect, Permutation::identity(10));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.message().find("square"), std::string::npos) << bad.message();
  bad = applyPermutationWithEdgeMap(*g, Permutation::identity(4));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.message().find("permutation of 4 nodes for a graph of 3"),
            std::string::npos)
      << bad.message();
}

TEST(ReorderTest, RcmShrinksBandwidthOfScrambledGrid) {
  CsrGraph grid = gridGraph(100, 100);
  CsrGraph scrambled = permuteRandomly(grid, 77);
  double before = averageBandwidth(scrambled);
  Permutation rcm = rcmOrder(scrambled);
  Expected<CsrGraph> ordered = applyPermutation(scrambled, rcm);
  ASSERT_TRUE(ordered.isOk()) << ordered.message();
  double after = averageBandwidth(*ordered);
  // A random order spreads neighbours over a third of the ids on average;
  // RCM numbers the grid by (anti-)diagonal fronts of at most ~100 nodes.
  EXPECT_GT(before, 2500);
  EXPECT_LT(after, 150) << "before " << before;
  EXPECT_LT(maxBandwidth(*ordered), 250);
  EXPECT_GT(estimateFeatureReuse(*ordered, 256).hitRate,
            estimateFeatureReuse(scrambled, 256).hitRate + 0.5);
}

TEST(ReorderTest, CommunityOrderRecoversPlantedBlocks) {
  const int64_t blocks = 20, blockSize = 200;
  std::vector<int64_t> blockOf;
  CsrGraph g = plantedPartition(blocks, blockSize, 8, 100, 123, blockOf);
  CommunityInfo info;
  Permutation p = communityOrder(g, {}, &info);
  ASSERT_TRUE(p.validate(g.numRows).isOk());
  EXPECT_GE(info.numCommunities, blocks / 2);
  EXPECT_LE(info.numCommunities, 3 * blocks);

  // Count the contiguous runs of each block's nodes in the new order.
  std::vector<int64_t> runs(blocks, 0);
  for (int64_t i = 0; i < g.numRows; ++i) {
    int64_t b = blockOf[p.newToOld[i]];
    if (i == 0 || blockOf[p.newToOld[i - 1]] != b)
      ++runs[b];
  }
  int64_t compact = 0;
  for (int64_t r : runs)
    compact += r <= 2;
  EXPECT_GE(compact, blocks - 2)
      << "runs per block: " << ::testing::PrintToString(runs);

  Expected<CsrGraph> ordered = applyPermutation(g, p);
  ASSERT_TRUE(ordered.isOk());
  double randomRate = estimateFeatureReuse(g, 512).hitRate;
  double communityRate = estimateFeatureReuse(*ordered, 512).hitRate;
  EXPECT_GT(communityRate, randomRate + 0.3)
      << "random " << randomRate << ", community " << communityRate;
  EXPECT_LT(averageBandwidth(*ordered), averageBandwidth(g) / 4);
}

TEST(ReorderTest, CommunitySizeCap) {
  std::vector<int64_t> blockOf;
  CsrGraph g = plantedPartition(4, 300, 8, 20, 9, blockOf);
  CommunityOptions options;
  options.maxCommunitySize = 100;
  CommunityInfo info;
  Permutation p = communityOrder(g, options, &info);
  ASSERT_TRUE(p.validate(g.numRows).isOk());
  for (int64_t c = 0; c < info.numCommunities; ++c)
    EXPECT_LE(info.communityStart[c + 1] - info.communityStart[c], 100);
}

double cpuSeconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

/// Timings reported in the docs: each order on R-MAT scale 20. Run with
/// --gtest_also_run_disabled_tests.
TEST(ReorderTest, DISABLED_TimeOrdersRmat20) {
  CsrGraph g = generateRmat(20, 16, 1);
  std::printf("R-MAT scale 20: %lld nodes, %lld edges\n",
              static_cast<long long>(g.numRows),
              static_cast<long long>(g.nnz()));
  auto time = [&](const char *name, auto &&makeOrder) {
    double cpu = cpuSeconds();
    auto wall = std::chrono::steady_clock::now();
    Permutation p = makeOrder();
    double wallTime =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall)
            .count();
    double cpuTime = cpuSeconds() - cpu;
    Expected<CsrGraph> r = applyPermutation(g, p);
    ASSERT_TRUE(r.isOk());
    std::printf("%-10s %.3f s wall, %.3f s CPU; bandwidth %.0f, reuse "
                "(4096 rows) %.3f\n",
                name, wallTime, cpuTime, averageBandwidth(*r),
                estimateFeatureReuse(*r, 4096).hitRate);
  };
  std::printf("original   bandwidth %.0f, reuse (4096 rows) %.3f\n",
              averageBandwidth(g), estimateFeatureReuse(g, 4096).hitRate);
  time("degree", [&] { return degreeSortOrder(g); });
  time("rcm", [&] { return rcmOrder(g); });
  CommunityInfo info;
  time("community", [&] { return communityOrder(g, {}, &info); });
  std::printf("communities: %lld after %d sweeps\n",
              static_cast<long long>(info.numCommunities), info.iterations);
  CommunityOptions capped;
  capped.maxCommunitySize = 4096;
  time("comm-cap", [&] { return communityOrder(g, capped, &info); });
  std::printf("communities (cap 4096): %lld after %d sweeps\n",
              static_cast<long long>(info.numCommunities), info.iterations);
}

} // namespace
