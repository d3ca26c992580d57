//===- RenumberTest.cpp - Renumbered graphs in the user's order (CPU) -----===//
//
// The host side of gnnc/ops/Renumber.h: renumbering a graph keeps maps that
// let data in the user's node and edge order reach the renumbered graph and
// come back, so that the aggregation in the internal order, moved back,
// equals the aggregation on the user's graph. Also compiles the row-gather
// kernels with NVRTC. Needs no GPU.
//
//===----------------------------------------------------------------------===//
#include "gnnc/ops/Renumber.h"

#include "gnnc/graph/Random.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/reference/Spmm.h"
#include "gnnc/runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace gnnc;

namespace {

/// A graph with empty rows, a hub row, a hub column and values.
graph::CsrGraph hubGraph() {
  const int64_t n = 300;
  std::vector<int64_t> rows, cols;
  graph::Rng rng(3);
  for (int64_t c = 0; c < n; c += 3) {
    rows.push_back(11);
    cols.push_back(c);
  }
  for (int64_t r = 0; r < n; ++r) {
    if (r % 4 == 1 || r == 11)
      continue;
    rows.push_back(r);
    cols.push_back(200);
    for (int k = 0; k < 2; ++k) {
      rows.push_back(r);
      cols.push_back(static_cast<int64_t>(rng.next() % n));
    }
  }
  auto g = graph::fromCoo(n, n, rows, cols,
                          ref::randomFeatures(rows.size(), 4, 0.5f, 2.0f),
                          graph::Duplicates::KeepFirst);
  EXPECT_TRUE(g.isOk()) << g.message();
  g->name = "hub";
  return g.take();
}

std::vector<graph::CsrGraph> testGraphs() {
  std::vector<graph::CsrGraph> graphs;
  graphs.push_back(graph::generateRmat(10, 8, 5));
  graphs.back().name = "rmat10";
  graphs.push_back(graph::makeRaggedTestGraph(2, 2000, 900, true));
  graphs.back().name = "ragged";
  graphs.push_back(hubGraph());
  return graphs;
}

/// The spmm of `g` with `values` (user edge order) and `x`, computed in the
/// internal order of `rg` and moved back to the user's rows.
void spmmThroughRenumbering(const ops::RenumberedGraph &rg,
                            const std::vector<float> &values,
                            const std::vector<float> &x, int64_t width,
                            const ref::SpmmOptions &options,
                            std::vector<double> &y,
                            std::vector<double> &magnitude) {
  const int64_t n = rg.numNodes();
  std::vector<float> xInternal(x.size());
  graph::permuteRowsToNew(rg.perm, x.data(), width, xInternal.data());
  std::vector<float> valuesInternal = graph::permuteEdgeData(values, rg.edgeOf);
  std::vector<double> yInternal, magInternal;
  ref::spmm(rg.graph, valuesInternal.data(), xInternal.data(), width, options,
            yInternal, &magInternal);
  y.assign(n * width, 0.0);
  magnitude.assign(n * width, 0.0);
  for (int64_t old = 0; old < n; ++old)
    for (int64_t j = 0; j < width; ++j) {
      y[old * width + j] = yInternal[rg.perm.oldToNew[old] * width + j];
      magnitude[old * width + j] =
          magInternal[rg.perm.oldToNew[old] * width + j];
    }
}

/// Counts the elements of `got` further from `expected` than 1e-12 of
/// their magnitude.
int64_t countMismatches(const std::vector<double> &got,
                        const std::vector<double> &expected,
                        const std::vector<double> &magnitude) {
  EXPECT_EQ(got.size(), expected.size());
  int64_t bad = 0;
  for (size_t i = 0; i < std::min(got.size(), expected.size()); ++i)
    if (!(std::fabs(got[i] - expected[i]) <= 1e-12 * magnitude[i] + 1e-300))
      ++bad;
  return bad;
}

TEST(RenumberTest, RenumberedGraphKeepsMapsAndCost) {
  for (const graph::CsrGraph &g : testGraphs()) {
    SCOPED_TRACE(g.name);
    for (ops::NodeOrder order : {ops::NodeOrder::Degree, ops::NodeOrder::Rcm,
                                 ops::NodeOrder::Community}) {
      SCOPED_TRACE(ops::nodeOrderName(order));
      auto rg = ops::renumberGraph(g, order);
      ASSERT_TRUE(rg.isOk()) << rg.message();
      EXPECT_EQ(rg->orderName, ops::nodeOrderName(order));
      EXPECT_TRUE(rg->perm.validate(g.numRows).isOk());
      EXPECT_EQ(rg->numNodes(), g.numRows);
      EXPECT_EQ(rg->nnz(), g.nnz());
      EXPECT_GE(rg->orderSeconds, 0.0);
      EXPECT_GT(rg->applySeconds, 0.0);
      EXPECT_DOUBLE_EQ(rg->seconds(), rg->orderSeconds + rg->applySeconds);
      EXPECT_EQ(rg->community.numCommunities > 0,
                order == ops::NodeOrder::Community);
      // Every internal edge maps to the user edge between the same nodes,
      // with the same value.
      ASSERT_EQ(static_cast<int64_t>(rg->edgeOf.size()), g.nnz());
      std::vector<int64_t> rowOf(g.nnz());
      for (int64_t r = 0; r < g.numRows; ++r)
        for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e)
          rowOf[e] = r;
      int64_t bad = 0;
      for (int64_t r = 0; r < rg->graph.numRows; ++r)
        for (int64_t e = rg->graph.rowPtr[r]; e < rg->graph.rowPtr[r + 1];
             ++e) {
          int64_t u = rg->edgeOf[e];
          if (rowOf[u] != rg->perm.newToOld[r] ||
              g.colIdx[u] != rg->perm.newToOld[rg->graph.colIdx[e]] ||
              (g.hasValues() && g.values[u] != rg->graph.values[e]))
            ++bad;
        }
      EXPECT_EQ(bad, 0);
    }
  }
  // By name, and with a permutation of the caller's.
  graph::CsrGraph g = hubGraph();
  auto byName = ops::renumberGraph(g, "rcm");
  ASSERT_TRUE(byName.isOk()) << byName.message();
  EXPECT_EQ(byName->perm.newToOld, graph::rcmOrder(g).newToOld);
  auto own = ops::renumberGraph(g, graph::Permutation::identity(g.numRows),
                                "identity");
  ASSERT_TRUE(own.isOk()) << own.message();
  EXPECT_EQ(own->graph.colIdx, g.colIdx);
  EXPECT_EQ(own->orderName, "identity");
}

TEST(RenumberTest, ClearErrors) {
  graph::CsrGraph rect = graph::generateUniformRandom(10, 12, 2.0, 1);
  rect.name = "rect";
  auto r = ops::renumberGraph(rect, ops::NodeOrder::Rcm);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.message().find("10 x 12"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("square"), std::string::npos) << r.message();

  graph::CsrGraph g = graph::generateUniformRandom(10, 10, 2.0, 1);
  r = ops::renumberGraph(g, "random");
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.message().find("unknown node order 'random'"), std::string::npos)
      << r.message();
  EXPECT_NE(r.message().find("degree, rcm and community"), std::string::npos)
      << r.message();

  r = ops::renumberGraph(g, graph::Permutation::identity(9), "mine");
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.message().find("the permutation has 9 nodes, the graph 10"),
            std::string::npos)
      << r.message();
  graph::Permutation broken = graph::Permutation::identity(10);
  broken.newToOld[2] = 3;
  r = ops::renumberGraph(g, broken, "mine");
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.message().find("permutation:"), std::string::npos) << r.message();

  graph::CsrGraph invalid = g;
  invalid.colIdx[0] = 10;
  r = ops::renumberGraph(invalid, ops::NodeOrder::Degree);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.message().find("renumbering graph"), std::string::npos)
      << r.message();
}

TEST(RenumberTest, InternalOrderSpmmMovedBackEqualsUserSpmm) {
  const int64_t width = 5;
  std::vector<std::pair<std::string, ref::SpmmOptions>> ops;
  ops.emplace_back("sum", ref::SpmmOptions{});
  ref::SpmmOptions both;
  both.scale = gnnc::DegreeScale::Both;
  ops.emplace_back("scale both", both);
  ref::SpmmOptions meanBoth = both;
  meanBoth.reduce = gnnc::Reduce::Mean;
  meanBoth.colNormExponent = 1.0;
  ops.emplace_back("mean, scale both, exponent 1", meanBoth);
  ref::SpmmOptions maxSelf;
  maxSelf.reduce = gnnc::Reduce::Max;
  ops.emplace_back("max", maxSelf);
  ref::SpmmOptions gin;
  gin.selfWeight = 0.25;
  gin.scale = gnnc::DegreeScale::Right;
  ops.emplace_back("self weight, scale right", gin);

  for (const graph::CsrGraph &g : testGraphs()) {
    SCOPED_TRACE(g.name);
    std::vector<float> x = ref::randomFeatures(g.numRows * width, 11);
    std::vector<float> values = ref::randomFeatures(g.nnz(), 12);
    for (const char *order : {"degree", "rcm", "community"}) {
      SCOPED_TRACE(order);
      auto rg = ops::renumberGraph(g, order);
      ASSERT_TRUE(rg.isOk()) << rg.message();
      for (const auto &[name, options] : ops) {
        SCOPED_TRACE(name);
        std::vector<double> expected, expectedMag, got, gotMag;
        ref::spmm(g, values.data(), x.data(), width, options, expected,
                  &expectedMag);
        spmmThroughRenumbering(*rg, values, x, width, options, got, gotMag);
        EXPECT_EQ(countMismatches(got, expected, expectedMag), 0);
      }
      // Without moving the edge values along, the result is wrong: the
      // edge map matters.
      std::vector<float> xInternal(x.size());
      graph::permuteRowsToNew(rg->perm, x.data(), width, xInternal.data());
      std::vector<double> wrong, wrongMag, expected, expectedMag;
      ref::spmm(rg->graph, values.data(), xInternal.data(), width,
                ref::SpmmOptions{}, wrong, &wrongMag);
      ref::spmm(g, values.data(), x.data(), width, ref::SpmmOptions{}, expected,
                &expectedMag);
      std::vector<double> wrongUser(wrong.size());
      for (int64_t old = 0; old < g.numRows; ++old)
        for (int64_t j = 0; j < width; ++j)
          wrongUser[old * width + j] =
              wrong[rg->perm.oldToNew[old] * width + j];
      EXPECT_GT(countMismatches(wrongUser, expected, expectedMag), 0);
    }
  }
}

TEST(RenumberTest, GatherWordSize) {
  EXPECT_EQ(ops::gatherWordBytes(256, 0, 512), 16u);
  EXPECT_EQ(ops::gatherWordBytes(4 * 41, 0, 512), 4u);
  EXPECT_EQ(ops::gatherWordBytes(2 * 41, 0, 512), 2u);
  EXPECT_EQ(ops::gatherWordBytes(3, 0, 512), 1u);
  // Misaligned addresses fall back to smaller words.
  EXPECT_EQ(ops::gatherWordBytes(256, 4, 512), 4u);
  EXPECT_EQ(ops::gatherWordBytes(256, 0, 2), 2u);
  EXPECT_EQ(ops::gatherWordBytes(256, 1, 0), 1u);
}

TEST(RenumberTest, GatherKernelsCompile) {
  std::vector<rt::KernelSpec> specs = ops::gatherKernelSpecs();
  ASSERT_EQ(specs.size(), 4u);
  for (const rt::KernelSpec &spec : specs) {
    Status valid = rt::validateKernelSpec(spec);
    EXPECT_TRUE(valid.isOk()) << spec.name << ": " << valid.message();
    EXPECT_NE(spec.source.find("void " + spec.name + "("), std::string::npos)
        << spec.name;
  }
  for (const char *arch : {"sm_80", "sm_90"}) {
    rt::CompileOptions options;
    options.arch = arch;
    options.ptx = true;
    auto compiled =
        rt::compileCuda(ops::gatherKernelSource(), "gather.cu", options);
    ASSERT_TRUE(compiled.isOk()) << arch << ": " << compiled.message();
    for (const rt::KernelSpec &spec : specs)
      EXPECT_NE(compiled->binary.find(".entry " + spec.name), std::string::npos)
          << arch << ": no entry " << spec.name;
  }
}

} // namespace
