//===- BatchTest.cpp - Batches of small graphs ----------------------------===//
//
// Collating graphs into a batch and taking it apart, the batch's rules, the
// TU reader's errors (each names the file, the member, the place and the
// rule), the molecule-like generator, and PROTEINS when the datasets are
// present.
//
//===----------------------------------------------------------------------===//
#include "NpzBuilder.h"
#include "TestUtil.h"

#include "gnnc/graph/Batch.h"
#include "gnnc/graph/Readers.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace gnnc;
using namespace gnnc::graph;
using namespace gnnc::test::npz;

namespace {

CsrGraph csr(int64_t n, std::vector<int64_t> rows, std::vector<int64_t> cols) {
  Expected<CsrGraph> g = fromCoo(n, n, rows, cols, {});
  EXPECT_TRUE(g) << g.message();
  return g.take();
}

/// A triangle, an empty graph, a single node and a path of two.
std::vector<CsrGraph> someGraphs() {
  return {csr(3, {0, 0, 1, 1, 2, 2}, {1, 2, 0, 2, 0, 1}), csr(0, {}, {}),
          csr(1, {}, {}), csr(2, {0, 1}, {1, 0})};
}

TEST(Batch, CollateRenumbersNodesAndKeepsEmptyGraphs) {
  Expected<BatchedGraph> b = collate(someGraphs());
  ASSERT_TRUE(b) << b.message();
  EXPECT_EQ(b->numGraphs(), 4);
  EXPECT_EQ(b->graphPtr, (std::vector<int64_t>{0, 3, 3, 4, 6}));
  EXPECT_EQ(b->edgeGraphPtr, (std::vector<int64_t>{0, 6, 6, 6, 8}));
  EXPECT_EQ(b->graph.numRows, 6);
  EXPECT_EQ(b->graph.colIdx[6], 5); // node 1 of the last graph
  EXPECT_EQ(b->maxNodes(), 3);
  EXPECT_TRUE(b->validate());
  EXPECT_EQ(b->validate(/*allowEmptyGraphs=*/false).message(),
            "batch: graph_ptr: graph 1 has no nodes (graph_ptr[1] = "
            "graph_ptr[2] = 3); empty graphs are not allowed here");
  EXPECT_EQ(nodeGraphs(*b), (std::vector<int64_t>{0, 0, 0, 2, 3, 3}));
}

TEST(Batch, GraphOfAndSplitRowsUndoCollate) {
  std::vector<CsrGraph> graphs = someGraphs();
  BatchedGraph b = collate(graphs).take();
  for (int64_t k = 0; k < b.numGraphs(); ++k) {
    CsrGraph g = graphOf(b, k);
    EXPECT_EQ(g.rowPtr, graphs[k].rowPtr) << k;
    EXPECT_EQ(g.colIdx, graphs[k].colIdx) << k;
  }
  std::vector<float> rows;
  for (int i = 0; i < 12; ++i)
    rows.push_back(float(i));
  std::vector<std::vector<float>> parts = splitRows(b, rows, 2);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0], (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(parts[1].empty());
  EXPECT_EQ(parts[2], (std::vector<float>{6, 7}));
  EXPECT_EQ(parts[3], (std::vector<float>{8, 9, 10, 11}));
}

TEST(Batch, BlocksAreRunsOfWholeGraphsOrPiecesOfLargeOnes) {
  // Graphs of 3, 0, 1, 2 nodes (6, 0, 0, 2 edges), then one of 5 nodes.
  std::vector<CsrGraph> graphs = someGraphs();
  graphs.push_back(csr(5, {0, 1, 2, 3}, {1, 2, 3, 4}));
  BatchedGraph b = collate(graphs).take();
  const int64_t G = kBatchBlockFromGlobal;
  // Tiles of 4 nodes and 8 edges: {triangle, empty, single}, {path}, and
  // the 5-node graph in pieces of 4 rows; each block's first edge beside
  // its first row.
  EXPECT_EQ(batchBlocks(b.graphPtr, b.graph.rowPtr, 4, 8, 0),
            (std::vector<int64_t>{0, 0, 4, 6, 6 | G, 8, 10 | G, 12, 11, 12}));
  // At most 2 graphs per block: {triangle, empty}, {single, path}.
  EXPECT_EQ(batchBlocks(b.graphPtr, b.graph.rowPtr, 4, 8, 2),
            (std::vector<int64_t>{0, 0, 3, 6, 6 | G, 8, 10 | G, 12, 11, 12}));
  // 5 edges per tile: the triangle (6 edges) is a piece of its own, and
  // the 5-node graph (4 edges) a block of its own.
  EXPECT_EQ(batchBlocks(b.graphPtr, b.graph.rowPtr, 8, 5, 0),
            (std::vector<int64_t>{0 | G, 0, 3, 6, 6, 8, 11, 12}));
  // No rows: one empty block.
  EXPECT_EQ(batchBlocks({0, 0}, {0}, 4, 8, 0),
            (std::vector<int64_t>{0, 0, 0, 0}));
}

TEST(Batch, CollateRefusesWhatIsNoBatch) {
  Expected<CsrGraph> rect = fromCoo(2, 3, {0}, {2}, {});
  ASSERT_TRUE(rect);
  EXPECT_EQ(collate({csr(1, {}, {}), rect.take()}).message(),
            "collate: graph 1 is 2 x 3; the graphs of a batch are square "
            "(rows are their nodes)");
  CsrGraph weighted = csr(2, {0}, {1});
  weighted.values = {2.0f};
  EXPECT_EQ(collate({weighted, csr(1, {}, {})}).message(),
            "collate: 1 of 2 graphs have edge values; give all or none");
  Expected<BatchedGraph> both = collate({weighted, weighted});
  ASSERT_TRUE(both);
  EXPECT_EQ(both->graph.values, (std::vector<float>{2.0f, 2.0f}));
}

TEST(Batch, ValidateNamesTheRuleAndThePlace) {
  BatchedGraph b = collate(someGraphs()).take();
  BatchedGraph leaves = b;
  leaves.graph.colIdx[7] = 2; // node 5 (graph 3) to node 2 (graph 0)
  EXPECT_EQ(leaves.validate().message(),
            "batch: indices: non-zero 7 (row 5, graph 3 of nodes [4, 6)) "
            "names node 2, outside its graph; an edge stays inside its graph");
  BatchedGraph unsorted = b;
  unsorted.graphPtr = {0, 4, 3, 4, 6};
  unsorted.edgeGraphPtr = {0, 6, 6, 6, 8};
  EXPECT_EQ(unsorted.validate().message(),
            "batch: graph_ptr: not sorted: graph_ptr[2] = 3 is below "
            "graph_ptr[1] = 4");
  BatchedGraph short_ = b;
  short_.graphPtr.back() = 5;
  EXPECT_EQ(short_.validate().message(),
            "batch: graph_ptr: ends at 5, but the batch has 6 nodes");
  BatchedGraph edges = b;
  edges.edgeGraphPtr[1] = 5;
  EXPECT_EQ(edges.validate().message(),
            "batch: edge_graph_ptr: edge_graph_ptr[1] = 5, but the rows of "
            "graph 1 start at non-zero indptr[3] = 6");
}

/// The members of a TU .npz of `b`, with `replace` swapped in.
std::string
tuZip(const BatchedGraph &b,
      std::vector<std::pair<std::string, std::string>> replace = {}) {
  std::vector<std::pair<std::string, std::string>> members = {
      {"indptr.npy", int64Array(b.graph.rowPtr)},
      {"indices.npy", int64Array(b.graph.colIdx)},
      {"num_nodes.npy",
       npy("{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
           int64Data({b.graph.numRows}))},
      {"graph_ptr.npy", int64Array(b.graphPtr)},
      {"edge_graph_ptr.npy", int64Array(b.edgeGraphPtr)}};
  for (auto &[name, data] : replace)
    for (auto &member : members)
      if (member.first == name)
        member.second = data;
  return storedZip(members);
}

TEST(Batch, TuReaderReadsAndRefusesWithFileMemberPlaceAndRule) {
  BatchedGraph b = collate({csr(2, {0, 1}, {1, 0}), csr(1, {}, {}),
                            csr(3, {0, 1, 1, 2}, {1, 0, 2, 1})})
                       .take();
  Expected<BatchedGraph> ok = parseTuBatch("tu.npz", bytesOf(tuZip(b)));
  ASSERT_TRUE(ok) << ok.message();
  EXPECT_EQ(ok->graphPtr, b.graphPtr);
  EXPECT_EQ(ok->graph.colIdx, b.graph.colIdx);

  auto why = [&](std::vector<std::pair<std::string, std::string>> replace,
                 BatchReadOptions options = {}) {
    return parseTuBatch("tu.npz", bytesOf(tuZip(b, std::move(replace))),
                        options)
        .message();
  };
  EXPECT_EQ(why({{"graph_ptr.npy", int64Array({0, 2, 1, 6})},
                 {"edge_graph_ptr.npy", int64Array({0, 2, 2, 6})}}),
            "tu.npz: member 'graph_ptr': not sorted: graph_ptr[2] = 1 is "
            "below graph_ptr[1] = 2");
  EXPECT_EQ(why({{"graph_ptr.npy", int64Array({0, 2, 2, 6})},
                 {"edge_graph_ptr.npy", int64Array({0, 2, 2, 6})}}),
            "tu.npz: member 'graph_ptr': graph 1 has no nodes (graph_ptr[1] "
            "= graph_ptr[2] = 2); empty graphs are not allowed here");
  BatchReadOptions allowEmpty;
  allowEmpty.allowEmptyGraphs = true;
  // Graphs 1 and 2 merged into one, with an empty graph before it: valid.
  EXPECT_EQ(why({{"graph_ptr.npy", int64Array({0, 2, 2, 6})},
                 {"edge_graph_ptr.npy", int64Array({0, 2, 2, 6})}},
                allowEmpty),
            "");
  EXPECT_EQ(why({{"graph_ptr.npy", int64Array({0, 2, 3, 9})}}),
            "tu.npz: member 'graph_ptr': graph_ptr[3] = 9 is outside the "
            "nodes [0, 6]");
  EXPECT_EQ(why({{"graph_ptr.npy", int64Array({1, 2, 3, 6})}}),
            "tu.npz: member 'graph_ptr': starts at 1; the first graph starts "
            "at node 0");
  EXPECT_EQ(why({{"edge_graph_ptr.npy", int64Array({0, 2, 3, 6})}}),
            "tu.npz: member 'edge_graph_ptr': edge_graph_ptr[2] = 3, but the "
            "rows of graph 2 start at non-zero indptr[3] = 2");
  // An edge from graph 0 into graph 2.
  std::vector<int64_t> cols = b.graph.colIdx;
  cols[0] = 4;
  EXPECT_EQ(why({{"indices.npy", int64Array(cols)}}),
            "tu.npz: member 'indices': non-zero 0 (row 0, graph 0 of nodes "
            "[0, 2)) names node 4, outside its graph; an edge stays inside "
            "its graph");
  EXPECT_EQ(parseTuBatch("plain.npz",
                         bytesOf(storedZip({{"indptr.npy", int64Array({0})},
                                            {"indices.npy", int64Array({})}})))
                .message(),
            "plain.npz: no member 'graph_ptr' (the first node of each graph); "
            "not a batch of graphs");
}

TEST(Batch, MoleculeBatchesAreValidDeterministicAndMoleculeLike) {
  MoleculeBatchOptions o;
  o.numGraphs = 2000;
  BatchedGraph a = generateMoleculeBatch(o, 7);
  BatchedGraph b = generateMoleculeBatch(o, 7);
  BatchedGraph c = generateMoleculeBatch(o, 8);
  ASSERT_TRUE(a.validate(/*allowEmptyGraphs=*/false)) << a.validate().message();
  EXPECT_EQ(a.graph.colIdx, b.graph.colIdx);
  EXPECT_EQ(a.graphPtr, b.graphPtr);
  EXPECT_NE(a.graphPtr, c.graphPtr);
  EXPECT_EQ(a.numGraphs(), 2000);
  double mean = double(a.graph.numRows) / a.numGraphs();
  EXPECT_NEAR(mean, o.meanNodes, 3.0);
  EXPECT_LE(a.maxNodes(), o.maxNodes);
  double degree = double(a.graph.nnz()) / a.graph.numRows;
  EXPECT_GT(degree, 1.8);
  EXPECT_LT(degree, 2.6);
  CsrGraph t = transpose(a.graph);
  EXPECT_EQ(t.colIdx, a.graph.colIdx); // every bond both ways
  for (int64_t r = 0; r < a.graph.numRows; ++r) {
    EXPECT_LE(a.graph.degree(r), o.maxDegree);
    for (int64_t e = a.graph.rowPtr[r]; e < a.graph.rowPtr[r + 1]; ++e)
      ASSERT_NE(a.graph.colIdx[e], r);
  }
  BatchedGraph p = generateMoleculeBatch(proteinLikeOptions(1000), 1);
  EXPECT_TRUE(p.validate(false));
  EXPECT_GT(p.maxNodes(), 200);
}

TEST(Batch, ProteinsDataset) {
  std::string path = gnnc::test::datasetsDir() + "/tu_PROTEINS.npz";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "dataset tu_PROTEINS.npz not found in "
                 << gnnc::test::datasetsDir()
                 << " (set GNNC_DATASETS to the shared datasets folder)";
  Expected<BatchedGraph> b = readTuBatch(path);
  ASSERT_TRUE(b) << b.message();
  EXPECT_EQ(b->numGraphs(), 1113);
  EXPECT_EQ(b->graph.numRows, 43471);
  EXPECT_EQ(b->graph.nnz(), 162088);
  EXPECT_EQ(b->maxNodes(), 620);
}

} // namespace

TEST(Batch, WithSelfLoopsAddsOneLoopPerNodeInSortedPlace) {
  // someGraphs() plus a graph whose node 1 has a loop already and whose
  // node 0 has only columns above it.
  std::vector<CsrGraph> graphs = someGraphs();
  graphs.push_back(csr(3, {0, 0, 1, 1, 1, 2}, {1, 2, 0, 1, 2, 1}));
  BatchedGraph b = collate(graphs).take();
  Expected<BatchedGraph> looped = withSelfLoops(b);
  ASSERT_TRUE(looped) << looped.message();
  EXPECT_TRUE(looped->validate());
  EXPECT_TRUE(looped->graph.isSortedAndUnique());
  EXPECT_EQ(looped->graphPtr, b.graphPtr);
  EXPECT_FALSE(looped->graph.hasValues());
  const CsrGraph &g = looped->graph;
  for (int64_t r = 0; r < g.numRows; ++r) {
    int64_t loops = 0;
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e)
      loops += g.colIdx[e] == r;
    EXPECT_EQ(loops, 1) << "row " << r;
    // Node 7 (node 1 of the last graph) had its loop: no second one.
    EXPECT_EQ(g.degree(r), b.graph.degree(r) + (r == 7 ? 0 : 1)) << r;
  }
  // The triangle's rows: 0 | 1 2 -> 0 1 2; the single node gets one entry.
  EXPECT_EQ(std::vector<int64_t>(g.colIdx.begin(), g.colIdx.begin() + 3),
            (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(g.degree(3), 1);
  for (int64_t k = 0; k < b.numGraphs(); ++k)
    EXPECT_EQ(looped->edgeGraphPtr[k], g.rowPtr[b.graphPtr[k]]) << k;
}

TEST(Batch, WithSelfLoopsKeepsValuesAndRefusesABrokenBatch) {
  CsrGraph withValues = csr(2, {0, 1, 1}, {1, 0, 1});
  withValues.values = {2.0f, 3.0f, 5.0f};
  BatchedGraph b = collate({withValues}).take();
  Expected<BatchedGraph> looped = withSelfLoops(b);
  ASSERT_TRUE(looped) << looped.message();
  EXPECT_EQ(looped->graph.colIdx, (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(looped->graph.values, (std::vector<float>{1.0f, 2.0f, 3.0f, 5.0f}));

  // An edge from the first graph into the second.
  BatchedGraph broken = collate({withValues, withValues}).take();
  broken.graph.colIdx[0] = 3;
  Expected<BatchedGraph> refused = withSelfLoops(broken);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("withSelfLoops"), std::string::npos)
      << refused.message();
  EXPECT_NE(refused.message().find("indices"), std::string::npos)
      << refused.message();
}
