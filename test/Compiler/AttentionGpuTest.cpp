//===- AttentionGpuTest.cpp - gnn.spmm with attention on a GPU ------------===//
//
// Compiles gnn.spmm with attention (GAT's softmax-weighted aggregation in
// one kernel) for every element type, odd and vector widths, one to 32
// threads per row, with and without the leaky ReLU, f16 accumulation and
// discretized reduction, unscheduled, under neighbor_group (whose two
// first kernels leave each row's softmax statistics in a workspace) and
// with fewer neighbour loads in flight (edge_batch); runs each on ragged graphs
// (empty rows and columns, a row of degree >= 50,000, a single row, no edges)
// with fresh random features and scores and NaN-poisoned outputs, and compares
// every element with the double-precision reference
// (gnnc::ref::attentionSpmm).
//
// Skips, saying why, when no GPU is present.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"
#include "TestGraphs.h"

#include "gnnc/graph/Rmat.h"
#include "gnnc/ops/Spmm.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

using namespace gnnc;

namespace {

struct Variant {
  std::string type;
  int64_t width;
  /// The schedule attribute's fields (empty: unscheduled).
  std::string schedule;
  bool leaky;
};

const std::vector<Variant> &variants() {
  static const std::vector<Variant> v = {
      {"f32", 64, "", true},
      {"f32", 3, "vector_width = 1, dim_workers = 1", true},
      {"f32", 32, "vector_width = 4, dim_workers = 8", false},
      {"f32", 128, "vector_width = 4, dim_workers = 32", true},
      {"f32", 41, "vector_width = 1, dim_workers = 16, threads_per_block = 128",
       true},
      {"f16", 64, "", true},
      {"f16", 64, "vector_width = 8, dim_workers = 4", true},
      {"f16", 256, "vector_width = 8, dim_workers = 32", true},
      {"f16", 64, "vector_width = 8, dim_workers = 8, accumulate = f16", true},
      {"f16", 64, "vector_width = 2, dim_workers = 32, disc_batch = 16", true},
      {"bf16", 32, "", true},
      {"bf16", 7, "vector_width = 1, dim_workers = 2", false},
      // neighbor_group: the rows' statistics from two first kernels.
      {"f32", 64, "strategy = neighbor_group, group_size = 32", true},
      {"f32", 3, "strategy = neighbor_group, group_size = 8, vector_width = 1",
       false},
      {"f16", 64, "strategy = neighbor_group, group_size = 16", true},
      {"f16", 128,
       "strategy = neighbor_group, group_size = 32, vector_width = 8, "
       "dim_workers = 16",
       true},
      {"bf16", 32, "strategy = neighbor_group, group_size = 8", true},
      // Fewer neighbour loads in flight (edge_batch), both strategies.
      {"f32", 64, "vector_width = 4, dim_workers = 8, edge_batch = 2", true},
      {"f16", 64,
       "strategy = neighbor_group, group_size = 32, edge_batch = 4, "
       "blocks_per_sm = 4",
       true},
  };
  return v;
}

std::string moduleText() {
  std::string text = "gnn.module @att {\n";
  int i = 0;
  for (const Variant &v : variants()) {
    const std::string x =
        "tensor<?x" + std::to_string(v.width) + "x" + v.type + ">";
    const std::string s = "tensor<?x" + v.type + ">";
    const std::string g = "!gnn.graph<csr, i64, i32>";
    std::string attrs;
    if (v.leaky)
      attrs += "leaky_relu = 0.2 : f32";
    if (!v.schedule.empty())
      attrs += std::string(attrs.empty() ? "" : ", ") +
               "schedule = #gnn.schedule<" + v.schedule + ">";
    text += "  gnn.kernel @k" + std::to_string(i++) + "(%g: " + g +
            ", %x: " + x + ", %d: " + s + ", %s: " + s + ") -> " + x + " {\n" +
            "    %y = gnn.spmm %g, %x attention(%d, %s : " + s + ", " + s +
            ")" + (attrs.empty() ? "" : " {" + attrs + "}") + " : " + g + ", " +
            x + " -> " + x + "\n    gnn.return %y : " + x + "\n  }\n";
  }
  return text + "}\n";
}

test::GpuKernels &suite() {
  static test::GpuKernels *s = [] {
    auto *s = new test::GpuKernels;
    test::loadGpuKernels(*s, moduleText(), "attention.gnn", variants().size());
    return s;
  }();
  return *s;
}

void checkAll(const graph::CsrGraph &g, uint64_t seed) {
  test::GpuKernels &s = suite();
  if (!s.skipReason.empty())
    GTEST_SKIP() << s.skipReason;
  ASSERT_TRUE(s.error.empty()) << s.error;
  int passed = 0;
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    auto check = ops::checkSpmm(*s.runtime, s.kernels[i], g, seed + i);
    ASSERT_TRUE(check) << s.kernels[i].spec.name << ": " << check.message();
    EXPECT_TRUE(check->ok) << check->report;
    passed += check->ok;
  }
  std::printf("[ gpu      ] %s: %d/%zu attention kernels match the reference "
              "on %s\n",
              g.name.c_str(), passed, s.kernels.size(),
              s.runtime->device().name().c_str());
}

TEST(AttentionGpu, RaggedSmallHub) {
  graph::CsrGraph g = graph::makeRaggedTestGraph(31, 6000, 3000);
  g.name = "ragged_small";
  test::expectRagged(g, 3000);
  checkAll(g, 1);
}

TEST(AttentionGpu, HubOf50000) {
  // One softmax over 50,000 edges: the running maximum and sum must hold.
  graph::CsrGraph g = graph::makeRaggedTestGraph(32, 20000, 50000);
  g.name = "ragged_hub";
  test::expectRagged(g, 50000);
  checkAll(g, 2);
}

TEST(AttentionGpu, RmatAndOneRow) {
  graph::CsrGraph g = graph::generateRmat(12, 8, 43);
  g.name = "rmat12";
  checkAll(g, 3);
  graph::CsrGraph one = graph::generateUniformRandom(1, 9000, 700, 12);
  one.name = "one_row";
  checkAll(one, 4);
}

TEST(AttentionGpu, NoEdges) {
  checkAll(test::graphWithoutEdges(5, 4, "no_edges"), 5);
}

TEST(AttentionGpu, RunsOfRowsWithoutEdges) {
  // Runs of rows without edges between rows of a few edges and a row whose
  // neighbour groups span blocks.
  checkAll(test::graphWithEmptyRuns({65, 1, 64, 3, 65}, {5, 300, 2, 40},
                                    "empty_runs"),
           6);
}

} // namespace
