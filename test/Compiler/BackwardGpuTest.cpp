//===- BackwardGpuTest.cpp - Backward kernels on a GPU --------------------===//
//
// Compiles every backward kernel of BackwardVariants (gnn.edge_softmax_grad,
// the feature and edge-value gradients of gnn.spmm, the gradients of
// gnn.sddmm), runs each on ragged graphs (empty rows and columns, a row of
// degree >= 50,000, a single row, no edges) with fresh random inputs and
// NaN-poisoned outputs, and compares every element with the
// double-precision reference computed on the forward graph.
//
// Skips, saying why, when no GPU is present.
//
//===----------------------------------------------------------------------===//
#include "BackwardVariants.h"
#include "GpuKernels.h"
#include "TestGraphs.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/ops/Backward.h"

#include <gtest/gtest.h>

#include <memory>

using namespace gnnc;

namespace {

struct Suite : test::GpuKernels {
  test::BackwardSuite variants;
};

Suite &suite() {
  static Suite *s = [] {
    auto *s = new Suite;
    s->variants = test::backwardSuite();
    test::loadGpuKernels(*s, s->variants.text, "backward.gnn",
                         s->variants.kernels.size());
    return s;
  }();
  return *s;
}

/// Checks `kernel` in every role its kind has on `g`; appends the checks.
void checkKernel(Suite &s, const test::BackwardKernel &k,
                 const rt::LoadedKernel &kernel, const graph::CsrGraph &g,
                 uint64_t seed, std::vector<Expected<ops::KernelCheck>> &out) {
  rt::Runtime &rt = *s.runtime;
  switch (k.kind) {
  case test::BackwardKernel::SoftmaxGrad:
    out.push_back(ops::checkEdgeSoftmaxGrad(rt, kernel, g, seed));
    return;
  case test::BackwardKernel::SpmmFeatures:
    out.push_back(
        ops::checkSpmmFeatureGrad(rt, kernel, g, k.reduce, k.scale, seed));
    return;
  case test::BackwardKernel::SpmmValues: {
    const std::pair<gnnc::Reduce, gnnc::DegreeScale> forwards[] = {
        {gnnc::Reduce::Sum, gnnc::DegreeScale::None},
        {gnnc::Reduce::Mean, gnnc::DegreeScale::None},
        {gnnc::Reduce::Sum, gnnc::DegreeScale::Both},
        {gnnc::Reduce::Mean, gnnc::DegreeScale::Left}};
    for (auto [reduce, scale] : forwards)
      out.push_back(
          ops::checkSpmmValueGrad(rt, kernel, g, reduce, scale, seed++));
    return;
  }
  case test::BackwardKernel::SddmmDot:
  case test::BackwardKernel::SddmmAdd: {
    gnnc::SddmmForm form = k.kind == test::BackwardKernel::SddmmDot
                               ? gnnc::SddmmForm::Dot
                               : gnnc::SddmmForm::Add;
    for (std::optional<float> slope :
         {std::optional<float>(), std::optional<float>(0.2f)})
      for (ops::SddmmGradSide side :
           {ops::SddmmGradSide::Rows, ops::SddmmGradSide::Columns})
        out.push_back(
            ops::checkSddmmGrad(rt, kernel, g, form, slope, side, seed++));
    return;
  }
  }
}

/// Runs every backward kernel on `g`; with `softmaxOnly`, only the
/// gnn.edge_softmax_grad kernels.
void checkAll(const graph::CsrGraph &g, uint64_t seed,
              bool softmaxOnly = false) {
  Suite &s = suite();
  if (!s.skipReason.empty())
    GTEST_SKIP() << s.skipReason;
  ASSERT_TRUE(s.error.empty()) << s.error;
  int passed = 0, checked = 0;
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    const test::BackwardKernel &k = s.variants.kernels[i];
    if (softmaxOnly && k.kind != test::BackwardKernel::SoftmaxGrad)
      continue;
    std::vector<Expected<ops::KernelCheck>> checks;
    checkKernel(s, k, s.kernels[i], g, seed + 16 * i, checks);
    for (auto &check : checks) {
      ++checked;
      ASSERT_TRUE(check) << k.name << ": " << check.message();
      EXPECT_TRUE(check->ok) << check->report;
      passed += check->ok;
    }
  }
  std::printf("[ gpu      ] %s: %d/%d backward checks match the reference "
              "on %s\n",
              g.name.c_str(), passed, checked,
              s.runtime->device().name().c_str());
}

TEST(BackwardGpu, RaggedSmallHub) {
  // Empty rows (and columns), rows of degree 1 and a row of degree 3,000.
  graph::CsrGraph g = graph::makeRaggedTestGraph(21, 6000, 3000);
  g.name = "ragged_small";
  test::expectRagged(g, 3000);
  checkAll(g, 1);
}

TEST(BackwardGpu, SoftmaxGradHubOf60000) {
  graph::CsrGraph g = graph::makeRaggedTestGraph(22, 80000, 60000);
  g.name = "ragged_hub";
  test::expectRagged(g, 50000);
  checkAll(g, 2, /*softmaxOnly=*/true);
}

TEST(BackwardGpu, HubOf50000AllKernels) {
  // A hub row of 50,000 edges is also a column of 50,000 rows' worth in the
  // transpose of the edge graphs; every kernel sees it once.
  graph::CsrGraph g = graph::makeRaggedTestGraph(23, 20000, 50000);
  g.name = "ragged_hub_all";
  test::expectRagged(g, 50000);
  checkAll(g, 3);
}

TEST(BackwardGpu, RmatAndRectangular) {
  graph::CsrGraph g = graph::generateRmat(12, 8, 42);
  g.name = "rmat12";
  checkAll(g, 4);
  graph::CsrGraph one = graph::generateUniformRandom(1, 9000, 700, 11);
  one.name = "one_row";
  checkAll(one, 5);
}

TEST(BackwardGpu, NoEdges) {
  checkAll(test::graphWithoutEdges(5, 4, "no_edges"), 6);
}

} // namespace
