//===- DatasetsTest.cpp - Real datasets from ../shared/datasets -----------===//
//
// These tests read the shared public datasets. They skip (visibly) when the
// folder is absent, e.g. in a fresh clone; set GNNC_DATASETS to point
// elsewhere.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "gnnc/graph/Readers.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

std::string datasetOrSkip(const std::string &name) {
  std::string path = gnnc::test::datasetsDir() + "/" + name;
  if (!std::filesystem::exists(path))
    return std::string();
  return path;
}

#define REQUIRE_DATASET(var, name)                                             \
  std::string var = datasetOrSkip(name);                                       \
  if (var.empty())                                                             \
    GTEST_SKIP() << "dataset " << name << " not found in "                     \
                 << gnnc::test::datasetsDir()                                  \
                 << " (set GNNC_DATASETS to the shared datasets folder)";

/// Checks that every row is sorted and duplicate-free and that the graph is
/// symmetric (every edge has its reverse).
void expectSymmetric(const CsrGraph &g) {
  ASSERT_TRUE(g.isSortedAndUnique());
  CsrGraph t = transpose(g);
  EXPECT_EQ(t.rowPtr, g.rowPtr);
  EXPECT_EQ(t.colIdx, g.colIdx);
}

TEST(DatasetsTest, Cora) {
  REQUIRE_DATASET(path, "cora_planetoid.npz");
  Expected<CsrGraph> g = readGraph(path);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_TRUE(g->validate().isOk());
  EXPECT_EQ(g->numRows, 2708);
  EXPECT_EQ(g->numCols, 2708);
  EXPECT_EQ(g->nnz(), 10556);
  expectSymmetric(*g);
  Stats s = computeStats(*g);
  EXPECT_EQ(s.selfLoops, 0);
  EXPECT_EQ(s.emptyRows, 0);
  EXPECT_EQ(s.maxDegree, 168);

  // Other members are readable too.
  Expected<NpzFile> npz = readNpz(path);
  ASSERT_TRUE(npz.isOk());
  Expected<NpyArray> feat = npz->get("feat_data");
  ASSERT_TRUE(feat.isOk()) << feat.message();
  EXPECT_EQ(feat->dtype, "<f4");
  EXPECT_EQ(feat->numElements(), 49216);
  Expected<NpyArray> shape = npz->get("feat_shape");
  ASSERT_TRUE(shape.isOk());
  EXPECT_EQ(*shape->asInt64(), (std::vector<int64_t>{2708, 1433}));
}

TEST(DatasetsTest, EgoTwitter) {
  REQUIRE_DATASET(path, "ego_twitter_csr.npz");
  Expected<CsrGraph> g = readNpzCsr(path);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_TRUE(g->validate().isOk());
  EXPECT_EQ(g->numRows, 81306);
  EXPECT_EQ(g->nnz(), 2684606);
  expectSymmetric(*g);
  Expected<NpzFile> npz = readNpz(path);
  ASSERT_TRUE(npz.isOk());
  Expected<NpyArray> directed = npz->get("directed");
  ASSERT_TRUE(directed.isOk()) << directed.message();
  EXPECT_EQ(directed->dtype, "|b1");
}

TEST(DatasetsTest, SlashdotAndProteins) {
  REQUIRE_DATASET(slashdot, "soc_slashdot0902_csr.npz");
  Expected<CsrGraph> g = readNpzCsr(slashdot);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_EQ(g->numRows, 82168);
  EXPECT_EQ(g->nnz(), 948464);
  EXPECT_TRUE(g->isSortedAndUnique());

  REQUIRE_DATASET(proteins, "tu_PROTEINS.npz");
  Expected<CsrGraph> p = readNpzCsr(proteins);
  ASSERT_TRUE(p.isOk()) << p.message();
  EXPECT_EQ(p->numRows, 43471);
  EXPECT_EQ(p->nnz(), 162088);
  Expected<NpzFile> npz = readNpz(proteins);
  ASSERT_TRUE(npz.isOk());
  Expected<NpyArray> graphPtr = npz->get("graph_ptr");
  ASSERT_TRUE(graphPtr.isOk());
  EXPECT_EQ(graphPtr->numElements(), 1114);
}

TEST(DatasetsTest, HeteroRelation) {
  REQUIRE_DATASET(path, "hetero_acm_heco.npz");
  Expected<NpzFile> npz = readNpz(path);
  ASSERT_TRUE(npz.isOk()) << npz.message();
  Expected<NpyArray> counts = npz->get("ntype_counts");
  ASSERT_TRUE(counts.isOk());
  // The string member is reported, not misread.
  Expected<NpyArray> names = npz->get("ntype_names");
  ASSERT_FALSE(names.isOk());
  EXPECT_NE(names.message().find("string arrays"), std::string::npos);
  Expected<CsrGraph> g = readNpzCsr(path, "author__writes__paper__");
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_EQ(g->numRows, 4019);
  EXPECT_EQ(g->nnz(), 13407);
}

} // namespace
