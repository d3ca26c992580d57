//===- SnapTest.cpp - SNAP edge list reader -------------------------------===//

#include "TestUtil.h"

#include "gnnc/graph/Readers.h"

#include <gtest/gtest.h>

using namespace gnnc;
using namespace gnnc::graph;
using gnnc::test::TempDir;

namespace {

const char *kEdges = "# Directed graph: test.txt\n"
                     "# Nodes: 5 Edges: 6\n"
                     "# FromNodeId\tToNodeId\n"
                     "0\t1\n"
                     "0 2\n"
                     "\n"
                     "2\t2\n"
                     "  4   0\n"
                     "0\t1\n"
                     "% another comment style\n"
                     "1 4\n";

TEST(SnapTest, Basic) {
  TempDir dir;
  std::string path = dir.write("g.txt", kEdges);
  Expected<CsrGraph> g = readSnapEdgeList(path);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_TRUE(g->validate().isOk());
  EXPECT_EQ(g->numRows, 5);
  EXPECT_TRUE(g->values.empty());
  // Duplicate 0->1 merged; self loop kept.
  EXPECT_EQ(g->rowPtr, (std::vector<int64_t>{0, 2, 3, 4, 4, 5}));
  EXPECT_EQ(g->colIdx, (std::vector<int64_t>{1, 2, 4, 2, 0}));
  // readGraph dispatches .txt / .el / .edges to this reader.
  std::string el = dir.write("g.el", kEdges);
  ASSERT_TRUE(readGraph(el).isOk());
  EXPECT_EQ(readGraph(el)->colIdx, g->colIdx);
}

TEST(SnapTest, SymmetrizeAndRemoveSelfLoops) {
  TempDir dir;
  std::string path = dir.write("g.txt", kEdges);
  SnapOptions opts;
  opts.symmetrize = true;
  opts.removeSelfLoops = true;
  Expected<CsrGraph> g = readSnapEdgeList(path, opts);
  ASSERT_TRUE(g.isOk()) << g.message();
  // Undirected edges {0,1},{0,2},{0,4},{1,4}.
  EXPECT_EQ(g->nnz(), 8);
  EXPECT_EQ(g->rowPtr, (std::vector<int64_t>{0, 3, 5, 6, 6, 8}));
  EXPECT_EQ(g->colIdx, (std::vector<int64_t>{1, 2, 4, 0, 4, 0, 0, 1}));
  for (int64_t r = 0; r < g->numRows; ++r)
    for (int64_t e = g->rowPtr[r]; e < g->rowPtr[r + 1]; ++e)
      EXPECT_NE(g->colIdx[e], r);
}

TEST(SnapTest, CompactIdsAndWeights) {
  TempDir dir;
  std::string path = dir.write("w.txt", "100 7 0.5\n7 1000000 2\n100 7 1\n");
  SnapOptions opts;
  opts.compactIds = true;
  opts.useWeights = true;
  std::vector<int64_t> original;
  Expected<CsrGraph> g = readSnapEdgeList(path, opts, &original);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_EQ(original, (std::vector<int64_t>{7, 100, 1000000}));
  EXPECT_EQ(g->numRows, 3);
  EXPECT_EQ(g->rowPtr, (std::vector<int64_t>{0, 1, 2, 2}));
  EXPECT_EQ(g->colIdx, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(g->values, (std::vector<float>{2.0f, 1.5f}));
  // Without compaction the node count is max id + 1 and weights are ignored.
  Expected<CsrGraph> wide = readSnapEdgeList(path);
  ASSERT_TRUE(wide.isOk());
  EXPECT_EQ(wide->numRows, 1000001);
  EXPECT_TRUE(wide->values.empty());
}

TEST(SnapTest, Errors) {
  TempDir dir;
  struct Case {
    const char *content;
    int line;
    const char *what;
  } cases[] = {
      {"# c\n0 1\n2\n", 3, "found one field"},
      {"0 1\n1 x\n", 2, "malformed node id 'x'"},
      {"0 -1\n", 1, "negative node id -1"},
      {"0 1 w\n", 1, "malformed weight 'w'"},
      {"0 1 1 1\n", 1, "more than three fields"},
      {"0 1\n99999999999999 1\n", 2, "too large"},
      {"0 1\n99999999999999999999999 1\n", 2, "malformed node id"},
      {"0 1.5\n", 1, "malformed node id '1.5'"},
  };
  for (const Case &c : cases) {
    std::string path = dir.write("bad.txt", c.content);
    Expected<CsrGraph> g = readSnapEdgeList(path);
    ASSERT_FALSE(g.isOk()) << c.content;
    std::string prefix = path + ":" + std::to_string(c.line) + ": ";
    EXPECT_EQ(g.message().rfind(prefix, 0), 0u) << g.message();
    EXPECT_NE(g.message().find(c.what), std::string::npos) << g.message();
  }
  SnapOptions opts;
  opts.numNodes = 3;
  std::string path = dir.write("range.txt", "0 1\n1 3\n");
  Expected<CsrGraph> g = readSnapEdgeList(path, opts);
  ASSERT_FALSE(g.isOk());
  EXPECT_NE(g.message().find(":2: node id 3 is out of range [0, 3)"),
            std::string::npos)
      << g.message();
}

TEST(SnapTest, EmptyFileGivesEmptyGraph) {
  TempDir dir;
  Expected<CsrGraph> g = readSnapEdgeList(dir.write("e.txt", "# nothing\n"));
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_EQ(g->numRows, 0);
  EXPECT_EQ(g->nnz(), 0);
}

TEST(SnapTest, UnknownExtension) {
  Expected<CsrGraph> g = readGraph("graph.xyz");
  ASSERT_FALSE(g.isOk());
  EXPECT_NE(g.message().find("cannot tell the graph format"),
            std::string::npos);
}

} // namespace
