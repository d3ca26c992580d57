//===- TuningTest.cpp - Cost model, search, database, calibration ---------===//
#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Tuning/GnnRewrite.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/Tuning/TunedCompile.h"
#include "gnnc/Tuning/TuningDb.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace gnnc;
using namespace gnnc::tuning;

namespace {

/// A one-kernel .gnn module for `problem`.
std::string kernelText(const Problem &p) {
  std::string t = elementTypeName(p.type);
  std::string x = "tensor<?x" + std::to_string(p.width) + "x" + t + ">";
  std::ostringstream os;
  os << "gnn.module @m {\n  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: "
     << x << (p.edgeValues ? ", %w: tensor<?x" + t + ">" : "") << ") -> " << x
     << " {\n    %y = gnn.spmm %g, %x"
     << (p.edgeValues ? " values(%w : tensor<?x" + t + ">)" : "")
     << " : !gnn.graph<csr, i64, i32>, " << x << " -> " << x
     << "\n    gnn.return %y : " << x << "\n  }\n}\n";
  return os.str();
}

/// Row 0 points to every column; every other row has one neighbour.
graph::CsrGraph starGraph(int64_t n) {
  graph::CsrGraph g;
  g.numRows = g.numCols = n;
  g.rowPtr.push_back(0);
  for (int64_t c = 0; c < n; ++c)
    g.colIdx.push_back(c);
  g.rowPtr.push_back(n);
  for (int64_t r = 1; r < n; ++r) {
    g.colIdx.push_back((r * 7919) % n);
    g.rowPtr.push_back(static_cast<int64_t>(g.colIdx.size()));
  }
  return g;
}

graph::GraphProfile profileOf(const graph::CsrGraph &g, const GpuModel &gpu,
                              const Problem &p) {
  return graph::analyzeGraph(g, profileOptionsFor(gpu, p));
}

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "/gnnc-tuning-" + std::to_string(::getpid()) +
         "-" + name;
}

GpuModel sm90() { return *builtinGpuModel("sm_90"); }

} // namespace

TEST(TuningEnumerate, EverySchedulePassesTheVerifierRules) {
  for (ElementType type :
       {ElementType::F32, ElementType::F16, ElementType::BF16}) {
    for (int64_t width : {1, 6, 32, 64, 100, 128, 256, 1024}) {
      Problem p;
      p.type = type;
      p.width = width;
      std::vector<Schedule> all = enumerateSchedules(p);
      ASSERT_FALSE(all.empty()) << elementTypeName(type) << " " << width;
      for (const Schedule &s : all) {
        SCOPED_TRACE(s.shortText());
        EXPECT_TRUE(isLegal(p, s));
        EXPECT_TRUE(s.vectorWidth == 1 || s.vectorWidth == 2 ||
                    s.vectorWidth == 4 || s.vectorWidth == 8);
        EXPECT_LE(s.vectorWidth * static_cast<int>(elementSize(type)), 16);
        EXPECT_EQ(width % s.vectorWidth, 0);
        EXPECT_EQ(s.dimWorkers & (s.dimWorkers - 1), 0);
        EXPECT_LE(s.dimWorkers, 32);
        EXPECT_EQ(s.threadsPerBlock % 32, 0);
        EXPECT_GE(s.threadsPerBlock, 64);
        EXPECT_LE(s.threadsPerBlock, 512);
        // No lane idles beyond one trip of a row.
        EXPECT_LE(s.dimWorkers,
                  std::max<int64_t>(1, 2 * (width / s.vectorWidth) - 1));
      }
    }
  }
}

TEST(TuningEnumerate, SampleCompilesThroughCompileGnn) {
  for (ElementType type : {ElementType::F32, ElementType::F16}) {
    for (bool values : {false, true}) {
      Problem p;
      p.type = type;
      p.width = 64;
      p.edgeValues = values;
      std::string text = kernelText(p);
      std::vector<Schedule> all = enumerateSchedules(p);
      for (size_t i = 0; i < all.size(); i += 3) {
        const Schedule &s = all[i];
        SCOPED_TRACE(s.shortText());
        Expected<std::string> tuned =
            applySchedules(text, "t.gnn", {{"m_k", s}});
        ASSERT_TRUE(tuned) << tuned.message();
        Expected<CompiledModule> compiled = compileGnn(*tuned, "t.gnn");
        ASSERT_TRUE(compiled) << compiled.message() << "\n" << *tuned;
        ASSERT_EQ(compiled->kernels.size(), 1u);
        const std::string &sched = compiled->kernels[0].schedule;
        EXPECT_NE(sched.find("vector_width = " + std::to_string(s.vectorWidth)),
                  std::string::npos)
            << sched;
        EXPECT_NE(sched.find("dim_workers = " + std::to_string(s.dimWorkers)),
                  std::string::npos)
            << sched;
        EXPECT_EQ(compiled->kernels[0].launch.blockX,
                  static_cast<unsigned>(s.threadsPerBlock));
      }
    }
  }
}

TEST(TuningRewrite, FindsSpmmSites) {
  Problem p;
  p.type = ElementType::BF16;
  p.width = 32;
  p.edgeValues = true;
  Expected<std::vector<SpmmSite>> sites = findSpmmSites(kernelText(p), "t");
  ASSERT_TRUE(sites) << sites.message();
  ASSERT_EQ(sites->size(), 1u);
  EXPECT_EQ((*sites)[0].entryName, "m_k");
  EXPECT_EQ((*sites)[0].problem.type, ElementType::BF16);
  EXPECT_EQ((*sites)[0].problem.width, 32);
  EXPECT_TRUE((*sites)[0].problem.edgeValues);
  EXPECT_EQ((*sites)[0].problem.offsetBytes, 8);
  EXPECT_EQ((*sites)[0].problem.indexBytes, 4);
  EXPECT_TRUE((*sites)[0].tunable);
  Expected<std::vector<SpmmSite>> bad = findSpmmSites("gnn.module {", "b.gnn");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("b.gnn:1"), std::string::npos) << bad.message();
}

TEST(TuningCostModel, PlanMirrorsTheLowering) {
  Problem p;
  p.width = 64;
  Plan plan = planFor(p, {4, 16, 256});
  EXPECT_EQ(plan.lanes, 16);
  EXPECT_EQ(plan.rowsPerBlock, 16);
  EXPECT_EQ(plan.chunks, 16);
  EXPECT_EQ(plan.chunksPerLane, 1);
  EXPECT_EQ(plan.edgeBatch, 8);
  plan = planFor(p, {4, 1, 256});
  EXPECT_EQ(plan.chunksPerLane, 16);
  EXPECT_EQ(plan.edgeBatch, 1);
}

TEST(TuningCostModel, MoreBandwidthIsNeverSlower) {
  graph::CsrGraph g = graph::generateRmat(12, 16, 3);
  Problem p;
  GpuModel slow = sm90(), fast = sm90();
  fast.dramBytesPerSecond *= 2;
  fast.l2BytesPerSecond *= 2;
  graph::GraphProfile profile = profileOf(g, slow, p);
  for (const Schedule &s : enumerateSchedules(p)) {
    Prediction a = predict(slow, profile, p, s);
    Prediction b = predict(fast, profile, p, s);
    EXPECT_LE(b.seconds, a.seconds) << s.shortText();
    EXPECT_LT(b.bandwidthSeconds, a.bandwidthSeconds);
    EXPECT_GT(a.seconds, 0);
  }
}

TEST(TuningCostModel, HubRowRaisesTheLatencyTerm) {
  GpuModel gpu = sm90();
  Problem p;
  graph::CsrGraph uniform = graph::generateUniformRandom(20000, 20000, 16, 5);
  graph::CsrGraph star = starGraph(20000);
  Schedule s{4, 16, 256};
  Prediction u = predict(gpu, profileOf(uniform, gpu, p), p, s);
  Prediction h = predict(gpu, profileOf(star, gpu, p), p, s);
  EXPECT_GT(h.latencySeconds, 10 * u.latencySeconds);
  EXPECT_EQ(h.bound, "latency");
  EXPECT_NE(h.why.find("longest row (20000 neighbours)"), std::string::npos)
      << h.why;
}

TEST(TuningCostModel, WiderFeaturesMoveMoreBytes) {
  GpuModel gpu = sm90();
  graph::CsrGraph g = graph::generateRmat(12, 16, 4);
  double lastBytes = 0, lastSeconds = 0;
  for (int64_t width : {16, 32, 64, 128}) {
    Problem p;
    p.width = width;
    // The same schedule for every width: more bytes and no faster. (The
    // best schedule of a wider problem may be faster: narrow rows limit
    // the lanes and so the edge batch.)
    Prediction pr = predict(gpu, profileOf(g, gpu, p), p, {4, 4, 256});
    EXPECT_GT(pr.dramBytes, lastBytes) << width;
    EXPECT_GE(pr.seconds, lastSeconds) << width;
    lastBytes = pr.dramBytes;
    lastSeconds = pr.seconds;
  }
}

TEST(TuningCostModel, NoReuseEstimateMeansEveryGatherMisses) {
  GpuModel gpu = sm90();
  graph::CsrGraph g = graph::generateRmat(10, 16, 2);
  Problem p;
  graph::AnalysisOptions options = profileOptionsFor(gpu, p);
  graph::GraphProfile with = graph::analyzeGraph(g, options);
  options.estimateReuse = false;
  graph::GraphProfile without = graph::analyzeGraph(g, options);
  Schedule s{4, 16, 256};
  EXPECT_GE(predict(gpu, without, p, s).dramBytes,
            predict(gpu, with, p, s).dramBytes);
  EXPECT_EQ(predict(gpu, without, p, s).gatherHitRate, 0);
}

TEST(TuningRank, StarGraphPrefersMoreLanesAndLongerBatches) {
  GpuModel gpu = sm90();
  Problem p;
  p.width = 64;
  graph::CsrGraph star = starGraph(200000);
  graph::GraphProfile profile = profileOf(star, gpu, p);
  std::vector<Candidate> ranked =
      rankSchedules(gpu, profile, p, enumerateSchedules(p));
  ASSERT_FALSE(ranked.empty());
  const Candidate &top = ranked[0];
  EXPECT_EQ(top.prediction.plan.edgeBatch, 8) << top.schedule.shortText();
  EXPECT_GE(top.schedule.dimWorkers, 8) << top.schedule.shortText();
  for (size_t i = 1; i < ranked.size(); ++i)
    EXPECT_LE(ranked[i - 1].prediction.seconds, ranked[i].prediction.seconds);
  // One lane per row: a batch of one neighbour, far slower.
  Prediction oneLane = predict(gpu, profile, p, {4, 1, 256});
  EXPECT_GT(oneLane.seconds, 4 * top.prediction.seconds);
  EXPECT_EQ(chooseCandidate(ranked), 0u);
  ranked[2].measuredSeconds = 1e-6;
  ranked[1].measuredSeconds = 2e-6;
  EXPECT_EQ(chooseCandidate(ranked), 2u);
}

TEST(TuningEnumerate, AddsAFewEdgeParallelSchedules) {
  Problem p;
  p.width = 64;
  std::vector<Schedule> all = enumerateSchedules(p);
  std::vector<Schedule> edge;
  for (const Schedule &s : all)
    if (s.isEdgeParallel())
      edge.push_back(s);
  // f32 width 64: vector widths 4, 2, 1 x items 256, 128, 64.
  ASSERT_EQ(edge.size(), 9u);
  EXPECT_EQ(edge[0], (Schedule{4, 16, 256, 256}));
  EXPECT_EQ(edge[1], (Schedule{4, 16, 256, 128}));
  EXPECT_EQ(edge[2], (Schedule{4, 16, 256, 64}));
  EXPECT_EQ(edge[3], (Schedule{2, 32, 256, 256}));
  // They come after every vertex_parallel schedule, and before the
  // neighbour groups: vector widths 4, 2, 1 x groups of 32, 16, 64.
  std::vector<Schedule> groups;
  for (const Schedule &s : all)
    if (s.isNeighbourGroup())
      groups.push_back(s);
  ASSERT_EQ(groups.size(), 9u);
  Schedule first{4, 16, 256};
  first.groupSize = 32;
  EXPECT_EQ(groups[0], first);
  EXPECT_TRUE(all.back().isNeighbourGroup());
  size_t firstEdge = all.size() - groups.size() - edge.size();
  EXPECT_TRUE(all[firstEdge].isEdgeParallel());
  EXPECT_FALSE(all[firstEdge - 1].isEdgeParallel() ||
               all[firstEdge - 1].isNeighbourGroup());
  EXPECT_NE(groups[0].attribute().find(
                "strategy = neighbor_group, vector_width = 4, dim_workers = "
                "16, threads_per_block = 256, group_size = 32, write = atomic"),
            std::string::npos)
      << groups[0].attribute();
  EXPECT_EQ(groups[0].shortText(), "vw=4 dw=16 tpb=256 gs=32");
  EXPECT_EQ(enumerateSchedules(p), all); // a stable order
}

TEST(TuningCostModel, NeighbourGroupsAreModelled) {
  // A skewed graph: neighbour groups are counted exactly by the analysis,
  // the plan keeps one f32 row per group in shared memory, the model adds
  // a second launch and the zeroing of Y, and a group of 1 neighbour costs
  // more waves than one of 32.
  graph::CsrGraph g = graph::generateRmat(14, 16, 3);
  Problem p;
  p.width = 64;
  GpuModel gpu = sm90();
  graph::GraphProfile profile =
      graph::analyzeGraph(g, profileOptionsFor(gpu, p));
  int64_t groups32 = 0;
  for (int64_t r = 0; r < g.numRows; ++r)
    groups32 += (g.degree(r) + 31) / 32;
  EXPECT_EQ(profile.neighbourGroups.at(32), groups32);
  Schedule big{4, 16, 256}, small{4, 16, 256};
  big.groupSize = 32;
  small.groupSize = 8;
  ASSERT_TRUE(isLegal(p, big));
  EXPECT_EQ(planFor(p, big).sharedBytes, 16 * 64 * 4);
  Prediction pb = predict(gpu, profile, p, big);
  Prediction ps = predict(gpu, profile, p, small);
  Prediction vertex = predict(gpu, profile, p, Schedule{4, 16, 256});
  EXPECT_DOUBLE_EQ(pb.launchSeconds, 2 * vertex.launchSeconds);
  EXPECT_GT(pb.dramBytes, vertex.dramBytes);
  EXPECT_GT(ps.waves, pb.waves);
  EXPECT_GT(pb.seconds, 0);
  // Too many groups' partial sums for shared memory, or groups with
  // edge-parallel items, are illegal.
  Schedule wide{1, 1, 1024};
  wide.groupSize = 32;
  Problem w256 = p;
  w256.width = 256;
  std::string why;
  EXPECT_FALSE(isLegal(w256, wide, &why));
  Schedule mixed = big;
  mixed.edgesPerWorker = 64;
  EXPECT_FALSE(isLegal(p, mixed, &why));
  EXPECT_NE(why.find("group_size"), std::string::npos) << why;
}

TEST(TuningCostModel, EdgeParallelPlanMirrorsTheLowering) {
  Problem p;
  p.width = 16;
  // 4 chunks over 2 lanes: 2 chunks of 4 per lane, 64 / 8 = 8 neighbours
  // per batch, for both strategies (gnn-lower-to-kernels caps the batch at
  // the lanes only for ops other than gnn.spmm).
  Plan vertex = planFor(p, {4, 2, 256});
  EXPECT_EQ(vertex.edgeBatch, 8);
  EXPECT_EQ(vertex.sharedBytes, 0);
  Plan edge = planFor(p, {4, 2, 256, 128});
  EXPECT_EQ(edge.lanes, 2);
  EXPECT_EQ(edge.rowsPerBlock, 128);
  EXPECT_EQ(edge.chunksPerLane, 2);
  EXPECT_EQ(edge.edgeBatch, 8);
  EXPECT_EQ(edge.itemsPerWorker, 128);
  EXPECT_EQ(edge.sharedBytes, 128 * 129 * 4);
}

TEST(TuningEnumerate, PaddedRowsTakeVectorsThatDivideTheStride) {
  // f16, 41 features in rows of 48: 8-element loads are legal (6 chunks,
  // the last one partly padding), and every enumerated schedule compiles.
  const std::string text =
      "gnn.module @m {\n"
      "  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: "
      "tensor<?x41xf16, #gnn.rows<stride = 48>>) -> tensor<?x41xf16, "
      "#gnn.rows<stride = 48>> {\n"
      "    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x41xf16, "
      "#gnn.rows<stride = 48>> -> tensor<?x41xf16, #gnn.rows<stride = 48>>\n"
      "    gnn.return %y : tensor<?x41xf16, #gnn.rows<stride = 48>>\n"
      "  }\n"
      "}\n";
  auto sites = findSpmmSites(text, "padded.gnn");
  ASSERT_TRUE(sites) << sites.message();
  ASSERT_EQ(sites->size(), 1u);
  const Problem &p = sites->front().problem;
  EXPECT_EQ(p.width, 41);
  EXPECT_EQ(p.stride(), 48);
  std::vector<Schedule> all = enumerateSchedules(p);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().vectorWidth, 8);
  EXPECT_EQ(planFor(p, all.front()).chunks, 6);
  for (const Schedule &s : all) {
    SCOPED_TRACE(s.shortText());
    EXPECT_EQ(48 % s.vectorWidth, 0);
    auto tuned =
        applySchedules(text, "padded.gnn", {{sites->front().entryName, s}});
    ASSERT_TRUE(tuned) << tuned.message();
    auto compiled = compileGnn(*tuned, "padded.gnn");
    EXPECT_TRUE(compiled) << compiled.message();
  }
  // Without the padding, 41 takes scalar loads only.
  Problem unpadded = p;
  unpadded.rowStride = 0;
  std::string why;
  EXPECT_FALSE(isLegal(unpadded, {8, 8, 256}, &why));
  EXPECT_NE(why.find("divide the feature width"), std::string::npos) << why;
  Problem narrow = p;
  narrow.rowStride = 44;
  EXPECT_FALSE(isLegal(narrow, {8, 8, 256}, &why));
  EXPECT_NE(why.find("divide the row stride"), std::string::npos) << why;
}

TEST(TuningCostModel, EdgeParallelLegality) {
  Problem p;
  p.type = ElementType::F16;
  p.width = 32;
  std::string why;
  // 64 workers of 4 lanes x 2049 row ends x 4 bytes = 512 KiB > 96 KiB.
  EXPECT_FALSE(isLegal(p, {8, 4, 256, 2048}, &why));
  EXPECT_NE(why.find("shared memory"), std::string::npos) << why;
  // 64 x 257 x 4 = 65,792 bytes fits one block...
  EXPECT_TRUE(isLegal(p, {8, 4, 256, 256}, &why)) << why;
  // ... but not four on one SM (160 KiB).
  EXPECT_FALSE(isLegal(p, {8, 4, 256, 256, 4}, &why));
  EXPECT_NE(why.find("160 KiB"), std::string::npos) << why;
  EXPECT_TRUE(isLegal(p, {8, 4, 256, 64, 4}, &why)) << why;
  // 16 blocks of 256 threads exceed 2048 threads per SM.
  EXPECT_FALSE(isLegal(p, {8, 4, 256, 0, 16}, &why));
  EXPECT_NE(why.find("2048"), std::string::npos) << why;
  EXPECT_TRUE(isLegal(p, {8, 4, 256, 0, 8}, &why)) << why;
  EXPECT_FALSE(isLegal(p, {8, 4, 256, 4}, &why));
  EXPECT_NE(why.find("edges_per_warp"), std::string::npos) << why;
}

TEST(TuningRewrite, WritesEdgeParallelSchedules) {
  Schedule ep{4, 16, 256, 256, 4};
  EXPECT_EQ(ep.attribute(),
            "#gnn.schedule<strategy = edge_parallel, vector_width = 4, "
            "dim_workers = 16, threads_per_block = 256, edges_per_warp = 256, "
            "write = staged, blocks_per_sm = 4>");
  EXPECT_EQ(ep.shortText(), "vw=4 dw=16 tpb=256 ep=256 bps=4");
  EXPECT_EQ((Schedule{4, 16, 256}).shortText(), "vw=4 dw=16 tpb=256");
  EXPECT_FALSE(ep == (Schedule{4, 16, 256, 256}));
  Problem p;
  p.width = 64;
  Expected<std::string> tuned =
      applySchedules(kernelText(p), "t.gnn", {{"m_k", ep}});
  ASSERT_TRUE(tuned) << tuned.message();
  EXPECT_NE(tuned->find("#gnn.schedule<strategy = edge_parallel, "
                        "vector_width = 4, dim_workers = 16, "
                        "threads_per_block = 256, edges_per_warp = 256, "
                        "write = staged, blocks_per_sm = 4>"),
            std::string::npos)
      << *tuned;
  // The edge-parallel site stays tunable; tuning it back to vertex_parallel
  // drops the edge-parallel fields and writes rows directly.
  Expected<std::vector<SpmmSite>> sites = findSpmmSites(*tuned, "t.gnn");
  ASSERT_TRUE(sites) << sites.message();
  ASSERT_EQ(sites->size(), 1u);
  EXPECT_TRUE((*sites)[0].tunable) << (*sites)[0].note;
  Expected<std::string> back =
      applySchedules(*tuned, "t.gnn", {{"m_k", Schedule{4, 16, 256}}});
  ASSERT_TRUE(back) << back.message();
  EXPECT_NE(back->find("#gnn.schedule<vector_width = 4, dim_workers = 16, "
                       "threads_per_block = 256>"),
            std::string::npos)
      << *back;
  // Every enumerated edge-parallel schedule compiles, with and without
  // edge values.
  for (ElementType type : {ElementType::F32, ElementType::F16}) {
    for (bool values : {false, true}) {
      p.type = type;
      p.edgeValues = values;
      for (const Schedule &s : enumerateSchedules(p)) {
        if (!s.isEdgeParallel())
          continue;
        SCOPED_TRACE(s.shortText());
        Expected<std::string> text =
            applySchedules(kernelText(p), "t.gnn", {{"m_k", s}});
        ASSERT_TRUE(text) << text.message();
        Expected<CompiledModule> compiled = compileGnn(*text, "t.gnn");
        ASSERT_TRUE(compiled) << compiled.message() << "\n" << *text;
        ASSERT_FALSE(compiled->kernels.empty());
        EXPECT_NE(compiled->kernels[0].schedule.find(
                      "edges_per_warp = " + std::to_string(s.edgesPerWorker)),
                  std::string::npos)
            << compiled->kernels[0].schedule;
      }
    }
  }
}

TEST(TuningCostModel, EdgeParallelHasNoHubTerm) {
  GpuModel gpu = sm90();
  Problem p;
  // Without a reuse estimate every gather misses on both graphs, so only
  // the degrees differ.
  graph::AnalysisOptions options = profileOptionsFor(gpu, p);
  options.estimateReuse = false;
  graph::GraphProfile uniform = graph::analyzeGraph(
      graph::generateUniformRandom(20000, 20000, 16, 5), options);
  graph::GraphProfile star = graph::analyzeGraph(starGraph(20000), options);
  ASSERT_EQ(uniform.numRows, star.numRows);
  ASSERT_GT(star.maxDegree, 100 * uniform.maxDegree);
  for (int items : {64, 128, 256}) {
    Schedule ep{4, 16, 256, items};
    Prediction u = predict(gpu, uniform, p, ep);
    Prediction h = predict(gpu, star, p, ep);
    // One worker's chain does not depend on any row's degree.
    EXPECT_DOUBLE_EQ(h.latencySeconds, u.latencySeconds) << items;
    EXPECT_EQ(h.warpImbalance, 1);
    // The hub row sets the vertex-parallel latency, far above it.
    Prediction v = predict(gpu, star, p, {4, 16, 256});
    EXPECT_GT(v.latencySeconds, 10 * h.latencySeconds) << items;
    // Two launches and the workspace traffic.
    EXPECT_DOUBLE_EQ(u.launchSeconds, 2 * gpu.launchSeconds);
    EXPECT_GT(u.workspaceBytes, 0);
    EXPECT_GT(u.dramBytes, predict(gpu, uniform, p, {4, 16, 256}).dramBytes);
  }
}

// On a skewed graph the model picks a strategy that splits long rows
// (edge-parallel workers or neighbour groups), never vertex_parallel, whose
// hub row sets its latency. (Measured on R-MAT 16 and 17 at width 64, the
// best kernel is one of those two, by type.)
TEST(TuningRank, PowerLawGraphSplitsLongRows) {
  GpuModel gpu = sm90();
  Problem p;
  p.width = 64;
  graph::CsrGraph g = graph::generateRmat(14, 16, 7);
  graph::GraphProfile profile = profileOf(g, gpu, p);
  ASSERT_GT(profile.maxDegree, 50 * profile.meanDegree);
  std::vector<Candidate> ranked =
      rankSchedules(gpu, profile, p, enumerateSchedules(p));
  ASSERT_FALSE(ranked.empty());
  EXPECT_NE(ranked[0].schedule.strategyIndex(), 0)
      << ranked[0].schedule.shortText() << ": " << ranked[0].prediction.why;
}

TEST(TuningRank, UniformShortRowsKeepVertexParallelCompetitive) {
  GpuModel gpu = sm90();
  Problem p;
  p.width = 64;
  graph::CsrGraph g = graph::generateUniformRandom(20000, 20000, 8, 3);
  graph::GraphProfile profile = profileOf(g, gpu, p);
  std::vector<Candidate> ranked =
      rankSchedules(gpu, profile, p, enumerateSchedules(p));
  ASSERT_FALSE(ranked.empty());
  // With no long row there is nothing for edge_parallel to split; it still
  // pays the merge-path search, the workspace and a second launch, so the
  // best vertex_parallel schedule is within 2x of the best of all.
  const Candidate *bestVertex = nullptr;
  for (const Candidate &c : ranked)
    if (!c.schedule.isEdgeParallel()) {
      bestVertex = &c;
      break;
    }
  ASSERT_TRUE(bestVertex);
  EXPECT_LE(bestVertex->prediction.seconds, 2 * ranked[0].prediction.seconds)
      << bestVertex->schedule.shortText() << " vs "
      << ranked[0].schedule.shortText();
}

TEST(TuningRank, MeasurementComparesTheStrategiesFirst) {
  // Ranked: three vertex-parallel schedules, then two edge-parallel ones.
  std::vector<Candidate> ranked;
  for (int items : {0, 0, 0, 256, 128}) {
    Prediction p;
    p.seconds = 1e-4 * (1.0 + 0.01 * ranked.size());
    ranked.push_back({Schedule{4, 16, 256, items}, p, std::nullopt, ""});
  }
  EXPECT_EQ(measurementOrder(ranked, 1), (std::vector<size_t>{0}));
  EXPECT_EQ(measurementOrder(ranked, 2), (std::vector<size_t>{0, 3}));
  EXPECT_EQ(measurementOrder(ranked, 3), (std::vector<size_t>{0, 1, 3}));
  EXPECT_EQ(measurementOrder(ranked, 9), (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(measurementOrder(ranked, 0).empty());
  // A third strategy's leader is measured too, when k allows.
  std::vector<Candidate> three = ranked;
  Prediction far;
  far.seconds = 1.5e-4;
  Schedule groups{4, 16, 256};
  groups.groupSize = 32;
  three.push_back({groups, far, std::nullopt, ""});
  EXPECT_EQ(measurementOrder(three, 3), (std::vector<size_t>{0, 3, 5}));
  EXPECT_EQ(measurementOrder(three, 2), (std::vector<size_t>{0, 3}));
  // A strategy predicted far behind (over 2x) is not pulled forward.
  ranked[3].prediction.seconds = ranked[4].prediction.seconds = 2.5e-4;
  EXPECT_EQ(measurementOrder(ranked, 2), (std::vector<size_t>{0, 1}));
  // One strategy only: the plain top k.
  ranked.resize(3);
  EXPECT_EQ(measurementOrder(ranked, 2), (std::vector<size_t>{0, 1}));
}

TEST(TuningDb, RoundTrip) {
  std::string path = tempPath("db/sub/tuning.db");
  std::remove(path.c_str());
  Expected<TuningDb> db = TuningDb::load(path);
  ASSERT_TRUE(db) << db.message();
  EXPECT_TRUE(db->entries().empty());
  TuningEntry a;
  a.key = {"0123456789abcdef", "spmm", "f16", 64, true, "sm_90"};
  a.schedule = {8, 8, 256};
  a.predictedSeconds = 1.25e-3;
  TuningEntry b = a;
  b.schedule = {4, 16, 128};
  b.measuredSeconds = 2.5e-4;
  ASSERT_TRUE(db->store(a));
  ASSERT_TRUE(db->store(b));
  Expected<TuningDb> again = TuningDb::load(path);
  ASSERT_TRUE(again) << again.message();
  EXPECT_TRUE(again->warnings().empty());
  ASSERT_EQ(again->entries().size(), 2u);
  std::optional<TuningEntry> found = again->lookup(a.key);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->schedule, b.schedule); // the later entry wins
  ASSERT_TRUE(found->measuredSeconds);
  EXPECT_DOUBLE_EQ(*found->measuredSeconds, 2.5e-4);
  EXPECT_NEAR(found->predictedSeconds, 1.25e-3, 1e-9);
  TuningKey other = a.key;
  other.width = 128;
  EXPECT_FALSE(again->lookup(other));
  // An edge-parallel schedule adds two fields; its line reads back.
  TuningEntry c = a;
  c.schedule = {4, 16, 256, 256, 4};
  std::string line = formatEntry(c);
  EXPECT_NE(line.find("-> 4 16 256 256 4 "), std::string::npos) << line;
  line.pop_back();
  Expected<TuningEntry> parsed = parseEntry(line);
  ASSERT_TRUE(parsed) << parsed.message();
  EXPECT_EQ(parsed->schedule, c.schedule);
  EXPECT_NEAR(parsed->predictedSeconds, 1.25e-3, 1e-9);
  EXPECT_FALSE(parseEntry("0123456789abcdef spmm f32 64 novalues sm_90 -> 4 "
                          "16 256 4 0 1e-3 -"));
  // A neighbour-group schedule adds its group size after those two.
  TuningEntry d = a;
  d.schedule = {4, 16, 256};
  d.schedule.groupSize = 32;
  line = formatEntry(d);
  EXPECT_NE(line.find("-> 4 16 256 0 0 32 "), std::string::npos) << line;
  line.pop_back();
  parsed = parseEntry(line);
  ASSERT_TRUE(parsed) << parsed.message();
  EXPECT_EQ(parsed->schedule, d.schedule);
  Expected<TuningEntry> both = parseEntry(
      "0123456789abcdef spmm f32 64 novalues sm_90 -> 4 16 256 64 0 32 1e-3 -");
  ASSERT_FALSE(both);
  EXPECT_NE(both.message().find("is not 0 0 group_size"), std::string::npos)
      << both.message();
}

TEST(TuningDb, MalformedLinesAreReportedAndSkipped) {
  std::string path = tempPath("bad.db");
  {
    std::ofstream out(path);
    out << "# a comment\n"
        << "0123456789abcdef spmm f32 64 novalues sm_90 -> 4 16 256 "
           "1.0e-03 -\n"
        << "garbage\n"
        << "0123456789abcdef spmm f32 64 novalues sm_90 -> 4 16 256 "
           "soon -\n"
        << "XYZ3456789abcdef spmm f32 64 novalues sm_90 -> 4 16 256 1e-3 -\n"
        << "\n"
        << "0123456789abcdef spmm f99 64 novalues sm_90 -> 4 16 256 1e-3 -\n"
        << "0123456789abcdef spmm f32 64 novalues sm_90 -> 4 16 256 1e-3 "
           "2e-3";
  }
  Expected<TuningDb> db = TuningDb::load(path);
  ASSERT_TRUE(db) << db.message();
  ASSERT_EQ(db->entries().size(), 2u);
  ASSERT_EQ(db->warnings().size(), 4u);
  EXPECT_NE(db->warnings()[0].find(path + ":3: expected 12 fields"),
            std::string::npos)
      << db->warnings()[0];
  EXPECT_NE(db->warnings()[1].find(path + ":4: predicted time 'soon'"),
            std::string::npos)
      << db->warnings()[1];
  EXPECT_NE(db->warnings()[2].find(path + ":5: fingerprint"),
            std::string::npos);
  EXPECT_NE(db->warnings()[3].find(path + ":7: unknown element type"),
            std::string::npos);
}

TEST(TuningDb, DefaultPathFollowsTheEnvironment) {
  ::setenv("GNNC_TUNE_DB", "/tmp/x.db", 1);
  EXPECT_EQ(defaultDatabasePath(), "/tmp/x.db");
  ::unsetenv("GNNC_TUNE_DB");
  EXPECT_NE(defaultDatabasePath().find(".cache/gnnc/tuning.db"),
            std::string::npos);
}

TEST(TuningCalibration, ShippedFilesMatchTheBuiltInDefaults) {
  for (std::string arch : {"sm_80", "sm_90"}) {
    SCOPED_TRACE(arch);
    std::string path = calibrationSourceDir() + "/" + arch + ".txt";
    Expected<GpuModel> file = loadGpuModel(arch, path);
    ASSERT_TRUE(file) << file.message();
    GpuModel builtin = *builtinGpuModel(arch);
    EXPECT_EQ(file->arch, builtin.arch);
    EXPECT_EQ(file->smCount, builtin.smCount);
    EXPECT_EQ(file->maxThreadsPerSm, builtin.maxThreadsPerSm);
    EXPECT_DOUBLE_EQ(file->l2Bytes, builtin.l2Bytes);
    EXPECT_DOUBLE_EQ(file->dramBytesPerSecond, builtin.dramBytesPerSecond);
    EXPECT_DOUBLE_EQ(file->loadLatencySeconds, builtin.loadLatencySeconds);
    EXPECT_DOUBLE_EQ(file->l2LatencySeconds, builtin.l2LatencySeconds);
    EXPECT_DOUBLE_EQ(file->launchSeconds, builtin.launchSeconds);
    EXPECT_DOUBLE_EQ(file->clockHz, builtin.clockHz);
    EXPECT_DOUBLE_EQ(file->loadedLatencyFactor, builtin.loadedLatencyFactor);
    EXPECT_DOUBLE_EQ(file->edgeStepCycles, builtin.edgeStepCycles);
    EXPECT_DOUBLE_EQ(file->rowEndCycles, builtin.rowEndCycles);
    EXPECT_GT(builtin.edgeStepCycles, 0);
  }
  EXPECT_FALSE(builtinGpuModel("sm_75"));
}

TEST(TuningCalibration, FormatParseRoundTrip) {
  GpuModel m = sm90();
  m.dramBytesPerSecond = 3.5e12;
  m.smCount = 114;
  std::string path = tempPath("cal.txt");
  ASSERT_TRUE(writeCalibration(m, path, "test"));
  Expected<GpuModel> back = loadGpuModel("sm_90", path);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->smCount, 114);
  EXPECT_DOUBLE_EQ(back->dramBytesPerSecond, 3.5e12);
  EXPECT_EQ(back->source, path);
}

TEST(TuningCalibration, ParseErrorsNameFileAndLine) {
  GpuModel base = sm90();
  struct Case {
    const char *text;
    const char *error;
  } cases[] = {
      {"# c\narch = sm_90\nsm_count 132\n",
       "cal.txt:3: expected 'key = value'"},
      {"\n\nbogus = 1\n", "cal.txt:3: unknown key 'bogus'"},
      {"sm_count = 13.5\n", "cal.txt:1: 'sm_count' must be a positive integer"},
      {"launch_seconds = -1\n",
       "cal.txt:1: 'launch_seconds' must be a positive"},
      {"dram_bytes_per_second = fast\n",
       "cal.txt:1: 'dram_bytes_per_second' must be a positive number"},
      {"arch = volta\n", "cal.txt:1: arch must read sm_XX"},
      {"clock_hz =\n", "cal.txt:1: 'clock_hz' has no value"},
      {"row_end_cycles = -2\n",
       "cal.txt:1: 'row_end_cycles' must be a non-negative number"},
      {"loaded_latency_factor = 0\n",
       "cal.txt:1: 'loaded_latency_factor' must be a positive number"},
  };
  for (const Case &c : cases) {
    Expected<GpuModel> m = parseCalibration(c.text, "cal.txt", base);
    ASSERT_FALSE(m) << c.text;
    EXPECT_NE(m.message().find(c.error), std::string::npos) << m.message();
  }
  Expected<GpuModel> ok =
      parseCalibration("sm_count = 7 # tiny\n\n  clock_hz = 1e9\n", "c", base);
  ASSERT_TRUE(ok) << ok.message();
  EXPECT_EQ(ok->smCount, 7);
  EXPECT_DOUBLE_EQ(ok->clockHz, 1e9);
  // A fitted cost may be 0 (the fit found none).
  Expected<GpuModel> zero =
      parseCalibration("edge_step_cycles = 0\n", "c", base);
  ASSERT_TRUE(zero) << zero.message();
  EXPECT_EQ(zero->edgeStepCycles, 0);
  EXPECT_FALSE(loadGpuModel("sm_90", std::string("/nonexistent/cal.txt")));
}

TEST(TuningCalibration, MeasuresOnTheGpu) {
  std::string why;
  if (!rt::gpuAvailable(&why))
    GTEST_SKIP() << "no GPU (" << why
                 << "): calibrate() and measureSchedule() are untested here";
  Expected<rt::Runtime> runtime = rt::Runtime::create(0, "off");
  ASSERT_TRUE(runtime) << runtime.message();
  Expected<GpuModel> m = calibrate(*runtime);
  ASSERT_TRUE(m) << m.message();
  EXPECT_GT(m->dramBytesPerSecond, 1e11);
  EXPECT_GT(m->loadLatencySeconds, m->l2LatencySeconds);
  Problem p;
  graph::CsrGraph g = graph::generateRmat(12, 16, 1);
  Expected<std::string> text =
      applySchedules(kernelText(p), "t.gnn", {{"m_k", Schedule{4, 16, 256}}});
  ASSERT_TRUE(text) << text.message();
  Expected<double> t = measureSchedule(*runtime, *text, "m_k", g, p);
  ASSERT_TRUE(t) << t.message();
  EXPECT_GT(*t, 0);
}

//===----------------------------------------------------------------------===//
// compileForGraph: the C++ API tunes what the source leaves unscheduled
//===----------------------------------------------------------------------===//

namespace {

const char *kTwoKernels = R"(
gnn.module @m {
  gnn.kernel @free(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
  gnn.kernel @fixed(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 1, dim_workers = 32, threads_per_block = 128>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}
)";

} // namespace

TEST(TunedCompile, TunesUnscheduledOpsAndKeepsWrittenSchedules) {
  graph::CsrGraph star = starGraph(50000);
  TunedCompileOptions options;
  options.arch = "sm_90";
  options.useDatabase = false;
  TuningChoices choices;
  Expected<CompiledModule> m =
      compileForGraph(kTwoKernels, "two.gnn", star, options, &choices);
  ASSERT_TRUE(m) << m.message();
  ASSERT_EQ(choices.size(), 1u);
  ASSERT_TRUE(choices.count("m_free"));
  EXPECT_NE(choices["m_free"].find("(cost model)"), std::string::npos);
  Expected<rt::KernelSpec> fixed = findKernel(*m, "m_fixed");
  ASSERT_TRUE(fixed) << fixed.message();
  EXPECT_NE(fixed->schedule.find(
                "vector_width = 1, dim_workers = 32, threads_per_block = 128"),
            std::string::npos)
      << fixed->schedule;
  // The tuned kernel carries exactly the model's best schedule.
  GpuModel gpu = *builtinGpuModel("sm_90");
  Problem p;
  p.type = ElementType::F32;
  p.width = 64;
  std::vector<Candidate> ranked =
      rankSchedules(gpu, graph::analyzeGraph(star, profileOptionsFor(gpu, p)),
                    p, enumerateSchedules(p));
  ASSERT_FALSE(ranked.empty());
  const Schedule &best = ranked[chooseCandidate(ranked)].schedule;
  Expected<rt::KernelSpec> tuned = findKernel(*m, "m_free");
  ASSERT_TRUE(tuned) << tuned.message();
  std::string expected =
      "vector_width = " + std::to_string(best.vectorWidth) +
      ", dim_workers = " + std::to_string(best.dimWorkers) +
      ", threads_per_block = " + std::to_string(best.threadsPerBlock);
  EXPECT_NE(tuned->schedule.find(expected), std::string::npos)
      << tuned->schedule << " vs " << expected;
}

TEST(TunedCompile, PrefersTheDatabaseEntryForThisGraph) {
  graph::CsrGraph star = starGraph(5000);
  std::string path = tempPath("db/api/tuning.db");
  std::remove(path.c_str());
  Expected<TuningDb> db = TuningDb::load(path);
  ASSERT_TRUE(db) << db.message();
  TuningEntry entry;
  entry.key = {graph::analyzeGraph(star).fingerprintHex,
               "spmm",
               "f32",
               64,
               false,
               "sm_90"};
  entry.schedule = {2, 8, 64};
  entry.predictedSeconds = 1e-3;
  ASSERT_TRUE(db->store(entry));

  TunedCompileOptions options;
  options.arch = "sm_90";
  options.databasePath = path;
  TuningChoices choices;
  Expected<CompiledModule> m =
      compileForGraph(kTwoKernels, "two.gnn", star, options, &choices);
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ(choices["m_free"], "vw=2 dw=8 tpb=64 (database)");
  Expected<rt::KernelSpec> tuned = findKernel(*m, "m_free");
  ASSERT_TRUE(tuned) << tuned.message();
  EXPECT_NE(tuned->schedule.find(
                "vector_width = 2, dim_workers = 8, threads_per_block = 64"),
            std::string::npos)
      << tuned->schedule;
}
