//===- GatherBoundTest.cpp - The gather stream gnn-bench times ------------===//
//
// Without a GPU: the row shape rule and every kernel through NVRTC (sm_80,
// sm_90). On a GPU: the stream's sum matches the gathered rows on ragged
// graphs and odd widths, a wrong host copy of the features fails the check,
// and a suite case reports its SpMM times against the stream.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Bench/GatherBound.h"
#include "GpuBench.h"
#include "gnnc/Bench/Problems.h"
#include "gnnc/Bench/Suite.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Nvrtc.h"

#include <gtest/gtest.h>

using namespace gnnc;
using namespace gnnc::bench;

namespace {

const ElementType kTypes[] = {ElementType::F32, ElementType::F16,
                              ElementType::BF16};
const int64_t kWidths[] = {1, 3, 8, 17, 32, 64, 96, 128, 256, 300};

TEST(GatherShape, CoversTheRowWithTheWidestVectorThatDividesIt) {
  for (ElementType type : kTypes)
    for (int64_t width : kWidths) {
      SCOPED_TRACE(std::string(elementTypeName(type)) + " width " +
                   std::to_string(width));
      const GatherShape s = gatherShape(type, width);
      EXPECT_EQ(width % s.vectorWidth, 0);
      EXPECT_LE(s.vectorWidth * int64_t(elementSize(type)), 16);
      // No wider vector divides the width.
      if (s.vectorWidth * 2 * int64_t(elementSize(type)) <= 16)
        EXPECT_NE(width % (2 * s.vectorWidth), 0);
      EXPECT_TRUE(s.lanes >= 1 && s.lanes <= 32 &&
                  (s.lanes & (s.lanes - 1)) == 0);
      const int64_t covered = int64_t(s.vectorWidth) * s.lanes * s.chunks;
      EXPECT_GE(covered, width);
      // The last chunk is needed; with fewer lanes a row needs more loads.
      EXPECT_LT(int64_t(s.vectorWidth) * s.lanes * (s.chunks - 1), width);
      if (s.chunks == 1 && s.lanes > 1)
        EXPECT_LT(int64_t(s.vectorWidth) * (s.lanes / 2), width);
    }
  EXPECT_EQ(gatherShape(ElementType::F32, 32).lanes, 8);
  EXPECT_EQ(gatherShape(ElementType::F16, 32).lanes, 4);
  EXPECT_EQ(gatherShape(ElementType::F32, 256).chunks, 2);
}

TEST(GatherShape, ThreadsCoverEveryRunOfEdges) {
  EXPECT_EQ(gatherStreamThreads(ElementType::F32, 32, 0, 64), 0);
  EXPECT_EQ(gatherStreamThreads(ElementType::F32, 32, 1, 64), 8);
  EXPECT_EQ(gatherStreamThreads(ElementType::F32, 32, 65, 64), 16);
  EXPECT_EQ(gatherStreamThreads(ElementType::F32, 32, 65, 4), 17 * 8);
}

TEST(GatherShape, RunsAreShortOnSmallGraphsAndCappedOnLargeOnes) {
  const int sms = 132;
  // A graph of 10,000 edges: the shortest run, whatever the width.
  EXPECT_EQ(gatherRunEdges(ElementType::F32, 32, 10000, sms), kGatherUnroll);
  // Thirty million edges: the longest.
  EXPECT_EQ(gatherRunEdges(ElementType::F32, 32, 30000000, sms),
            kGatherMaxRunEdges);
  for (int64_t edges : {int64_t(1), int64_t(100000), int64_t(3000000)})
    for (int64_t width : {int64_t(1), int64_t(32), int64_t(128)}) {
      const int64_t run = gatherRunEdges(ElementType::F16, width, edges, sms);
      EXPECT_EQ(run % kGatherUnroll, 0);
      EXPECT_GE(run, kGatherUnroll);
      EXPECT_LE(run, kGatherMaxRunEdges);
      // Two waves of threads, unless the runs are as short as they go.
      const int64_t threads =
          gatherStreamThreads(ElementType::F16, width, edges, run);
      if (run > kGatherUnroll)
        EXPECT_GE(threads, 2 * sms * kGatherThreadsPerSm - 32 * 64);
    }
}

class GatherStreamCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(GatherStreamCompile, EveryShapeCompiles) {
  rt::CompileOptions options;
  options.arch = GetParam();
  for (ElementType type : kTypes)
    for (int64_t width : kWidths) {
      rt::KernelSpec spec = gatherStreamSpec(type, width);
      ASSERT_TRUE(rt::validateKernelSpec(spec)) << spec.name;
      auto binary = rt::compileCuda(spec.source, spec.name + ".cu", options);
      ASSERT_TRUE(binary) << spec.name << ": " << binary.message();
      EXPECT_NE(binary->binary.find(spec.name), std::string::npos);
    }
}

INSTANTIATE_TEST_SUITE_P(Arch, GatherStreamCompile,
                         ::testing::Values("sm_80", "sm_90"));

using GatherBoundGpu = gnnc::bench::test::GpuBenchTest;

/// An R-MAT graph with an empty row, a huge row and a row of one edge.
graph::CsrGraph raggedGraph() {
  graph::CsrGraph g = graph::generateRmat(11, 8, 3);
  g.name = "ragged";
  // Row 0 takes every column (a hub); row 1 none.
  std::vector<int64_t> ptr{0}, idx;
  for (int64_t c = 0; c < g.numCols; ++c)
    idx.push_back(c);
  ptr.push_back(int64_t(idx.size()));
  ptr.push_back(int64_t(idx.size()));
  for (int64_t r = 2; r < g.numRows; ++r) {
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e)
      idx.push_back(g.colIdx[e]);
    ptr.push_back(int64_t(idx.size()));
  }
  g.rowPtr = ptr;
  g.colIdx = idx;
  return g;
}

TEST_F(GatherBoundGpu, SumsEveryGatheredRowAndCatchesAWrongOne) {
  auto bench = quickBench();
  ASSERT_TRUE(bench) << bench.message();
  graph::CsrGraph g = raggedGraph();
  auto graphs = uploadGraphs(g, true);
  ASSERT_TRUE(graphs) << graphs.message();
  GatherBound bound;
  for (ElementType type : kTypes)
    for (int64_t width : {int64_t(1), int64_t(17), int64_t(64), int64_t(300)}) {
      SCOPED_TRACE(std::string(elementTypeName(type)) + " width " +
                   std::to_string(width));
      auto problem = makeSpmmProblem(*graphs, type, width, false, 5);
      ASSERT_TRUE(problem) << problem.message();
      auto run =
          bound.time(*bench, graphs->gnnc.colIdx, g.colIdx.data(), g.nnz(),
                     problem->x, problem->host.x.data(), type, width);
      ASSERT_TRUE(run) << run.message();
      EXPECT_TRUE(run->checkOk) << run->checkReport;
      EXPECT_GT(run->timing.medianMs, 0);
      // A host copy that differs in one column of one gathered row.
      std::vector<float> wrong(problem->host.x.begin(), problem->host.x.end());
      wrong[size_t(g.colIdx[0] * width)] += 64.0f;
      auto caught = bound.time(*bench, graphs->gnnc.colIdx, g.colIdx.data(),
                               g.nnz(), problem->x, wrong.data(), type, width);
      ASSERT_TRUE(caught) << caught.message();
      EXPECT_FALSE(caught->checkOk) << caught->checkReport;
    }
  auto l2 = bound.l2GatherGbs(*bench, ElementType::F32, 64);
  ASSERT_TRUE(l2) << l2.message();
  EXPECT_GT(*l2, 100.0);
}

TEST_F(GatherBoundGpu, SuiteCasesReportTheirTimeAgainstTheStream) {
  auto bench = quickBench();
  ASSERT_TRUE(bench) << bench.message();
  graph::CsrGraph g = graph::generateRmat(12, 8, 5);
  g.name = "rmat12";
  auto graphs = uploadGraphs(g, true);
  ASSERT_TRUE(graphs) << graphs.message();
  auto kernels = compileSpmmKernels(ElementType::F32, 32, 2, false, true);
  ASSERT_TRUE(kernels) << kernels.message();
  GatherBound bound;
  CaseOptions options;
  options.edgeValues = false;
  options.sddmm = false;
  options.gatChain = false;
  options.gatherBound = &bound;
  CaseOutcome out = runCase(*bench, nullptr, *graphs, ElementType::F32, 32,
                            *kernels, "", options);
  EXPECT_EQ(out.failures, 0) << out.record.dump(1);
  const nlohmann::json &b = out.record["gather_bound"];
  ASSERT_TRUE(b.is_object());
  EXPECT_EQ(b["status"], "ok") << b.dump(1);
  EXPECT_GT(b["gbs"].get<double>(), 0);
  EXPECT_GT(b["l2_gather_gbs"].get<double>(), 0);
  const double fraction = out.record["gnnc_best"]["of_gather_bound"];
  EXPECT_GT(fraction, 0);
  for (const nlohmann::json &k : out.record["gnnc"])
    EXPECT_TRUE(k.contains("of_gather_bound")) << k.dump(1);
}

} // namespace
