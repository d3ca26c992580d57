//===- SddmmTuningTest.cpp - Tuning gnn.sddmm: legality, model, rewrite ---===//
#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Tuning/GnnRewrite.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/Tuning/SddmmModel.h"
#include "gnnc/Tuning/TunedCompile.h"
#include "gnnc/Tuning/TuningDb.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>
#include <unistd.h>

using namespace gnnc;
using namespace gnnc::tuning;

namespace {

Problem sddmmProblem(ElementType type, int64_t width, bool add = false,
                     bool leakyRelu = false) {
  Problem p;
  p.op = "sddmm";
  p.type = type;
  p.width = width;
  p.sddmmAdd = add;
  p.leakyRelu = leakyRelu;
  return p;
}

/// A one-kernel module `@m` with kernel `@k` holding the gnn.sddmm of `p`,
/// with `schedule` (attribute text) when not empty.
std::string sddmmText(const Problem &p, const std::string &schedule = "") {
  std::string t = elementTypeName(p.type);
  std::string x = "tensor<?x" + std::to_string(p.width) + "x" + t + ">";
  std::string y = p.sddmmAdd ? x : "tensor<?x" + t + ">";
  std::vector<std::string> attrs;
  if (p.sddmmAdd)
    attrs.push_back("form = #gnn<sddmm_form add>");
  if (p.leakyRelu)
    attrs.push_back("leaky_relu = 0.2 : f32");
  if (!schedule.empty())
    attrs.push_back("schedule = " + schedule);
  std::ostringstream os;
  os << "gnn.module @m {\n  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: "
     << x << ", %x1: " << x << ") -> " << y
     << " {\n    %e = gnn.sddmm %g, %x, %x1";
  if (!attrs.empty()) {
    os << " {";
    for (size_t i = 0; i < attrs.size(); ++i)
      os << (i ? ", " : "") << attrs[i];
    os << "}";
  }
  os << " : !gnn.graph<csr, i64, i32>, " << x << ", " << x << " -> " << y
     << "\n    gnn.return %e : " << y << "\n  }\n}\n";
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

/// `n` rows of `degree` neighbours each, spread over the columns.
graph::CsrGraph uniformGraph(int64_t n, int64_t degree) {
  graph::CsrGraph g;
  g.numRows = g.numCols = n;
  g.rowPtr.push_back(0);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t k = 0; k < degree; ++k)
      g.colIdx.push_back((r * 31 + k * 977) % n);
    g.rowPtr.push_back(static_cast<int64_t>(g.colIdx.size()));
  }
  return g;
}

graph::GraphProfile profileOf(const graph::CsrGraph &g, const GpuModel &gpu,
                              const Problem &p) {
  return graph::analyzeGraph(g, profileOptionsFor(gpu, p));
}

GpuModel sm90() { return *builtinGpuModel("sm_90"); }

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "/gnnc-sddmm-tuning-" +
         std::to_string(::getpid()) + "-" + name;
}

/// The integer after `key = ` in `text`, or -1.
int64_t field(const std::string &text, const std::string &key) {
  std::smatch m;
  std::regex re(key + " = (-?[0-9]+)");
  if (!std::regex_search(text, m, re))
    return -1;
  return std::stoll(m[1].str());
}

bool finitePositive(double v) { return std::isfinite(v) && v > 0; }

} // namespace

//===----------------------------------------------------------------------===//
// Enumeration and legality mirror the verifier and the lowering
//===----------------------------------------------------------------------===//

TEST(SddmmTuningEnumerate, EveryScheduleCompilesWithThePlanTheModelUses) {
  size_t compiled = 0;
  for (ElementType type :
       {ElementType::F32, ElementType::F16, ElementType::BF16}) {
    for (int64_t width : {1, 6, 64, 100, 1024}) {
      for (bool add : {false, true}) {
        Problem p = sddmmProblem(type, width, add, /*leakyRelu=*/add);
        SCOPED_TRACE(std::string(elementTypeName(type)) + " width " +
                     std::to_string(width) + (add ? " add" : " dot"));
        std::vector<Schedule> all = enumerateSchedules(p);
        ASSERT_FALSE(all.empty());
        bool anyEdge = false;
        std::string text = sddmmText(p);
        for (const Schedule &s : all) {
          SCOPED_TRACE(s.shortText());
          std::string why;
          ASSERT_TRUE(isLegal(p, s, &why)) << why;
          EXPECT_FALSE(s.isNeighbourGroup());
          anyEdge |= s.isEdgeParallel();
          Expected<std::string> tuned =
              applySchedules(text, "t.gnn", {{"m_k", s}});
          ASSERT_TRUE(tuned) << tuned.message();
          Expected<CompiledModule> m = compileGnn(*tuned, "t.gnn");
          ASSERT_TRUE(m) << m.message() << "\n" << *tuned;
          ASSERT_EQ(m->kernels.size(), 1u);
          ++compiled;
          const rt::KernelSpec &spec = m->kernels[0];
          EXPECT_EQ(spec.info.at("op"), "sddmm");
          EXPECT_EQ(spec.info.at("form"), add ? "add" : "dot");
          EXPECT_EQ(spec.launch.blockX,
                    static_cast<unsigned>(s.threadsPerBlock));
          // The lowering's plan is the model's.
          Plan plan = planFor(p, s);
          const std::string &ir = m->loweredIR;
          EXPECT_EQ(field(ir, "lanes"), plan.lanes);
          EXPECT_EQ(field(ir, "rows_per_block"), plan.rowsPerBlock);
          EXPECT_EQ(field(ir, "chunks"), plan.chunks);
          EXPECT_EQ(field(ir, "chunks_per_lane"), plan.chunksPerLane);
          EXPECT_EQ(field(ir, "edge_unroll"), plan.edgeBatch);
          EXPECT_EQ(static_cast<int64_t>(spec.launch.sharedBytes),
                    plan.sharedBytes);
          if (s.isEdgeParallel())
            EXPECT_EQ(field(spec.schedule, "edges_per_warp"), s.edgesPerWorker);
          else
            EXPECT_EQ(spec.schedule.find("edge_parallel"), std::string::npos);
        }
        EXPECT_TRUE(anyEdge);
      }
    }
  }
  EXPECT_GT(compiled, 1000u);
}

namespace {

/// A schedule the model calls illegal and the words its reason must
/// contain; the compiler must reject it too.
struct IllegalCase {
  Problem problem;
  Schedule schedule;
  std::string reason;
};

} // namespace

TEST(SddmmTuningLegality, IllegalSchedulesAreRejectedLikeTheCompilerDoes) {
  Schedule groups{4, 16, 256};
  groups.groupSize = 32;
  std::vector<IllegalCase> cases = {
      {sddmmProblem(ElementType::F32, 64), groups, "neighbor_group"},
      {sddmmProblem(ElementType::F32, 64), {8, 8, 256}, "exceeds 16"},
      {sddmmProblem(ElementType::F16, 6), {4, 2, 256}, "does not divide"},
      {sddmmProblem(ElementType::F32, 256), {1, 1, 256}, "accumulators"},
      {sddmmProblem(ElementType::F32, 64), {4, 16, 256, 4}, "edges_per_warp"},
      // Packed 16-bit vectors keep the row ends in shared memory: 1024
      // workers x 33 x 4 bytes.
      {sddmmProblem(ElementType::F16, 64), {2, 1, 1024, 32}, "shared memory"},
      {sddmmProblem(ElementType::BF16, 64, true),
       {4, 1, 128, 128, 3},
       "160 KiB"},
  };
  for (const IllegalCase &c : cases) {
    SCOPED_TRACE(c.schedule.shortText() + " on " +
                 elementTypeName(c.problem.type) + " width " +
                 std::to_string(c.problem.width));
    std::string why;
    EXPECT_FALSE(isLegal(c.problem, c.schedule, &why));
    EXPECT_NE(why.find("gnn.sddmm"), std::string::npos) << why;
    EXPECT_NE(why.find(c.reason), std::string::npos) << why;
    Expected<CompiledModule> m =
        compileGnn(sddmmText(c.problem, c.schedule.attribute()), "bad.gnn");
    EXPECT_FALSE(m) << "the compiler accepts what the model rejects";
  }
  // The shared-memory rule is the packed kernel's alone: f32 (and scalar
  // 16-bit) edge_parallel keeps no row ends, so the same shape is legal and
  // compiles.
  for (const auto &[type, vw] :
       {std::pair{ElementType::F32, 2}, std::pair{ElementType::F16, 1}}) {
    Problem p = sddmmProblem(type, 64);
    Schedule s{vw, 1, 1024, 32};
    std::string why;
    EXPECT_TRUE(isLegal(p, s, &why)) << why;
    EXPECT_EQ(planFor(p, s).sharedBytes, 0);
    Expected<CompiledModule> m =
        compileGnn(sddmmText(p, s.attribute()), "ok.gnn");
    EXPECT_TRUE(m) << (m ? "" : m.message());
  }
  // gnn.spmm's rules are unchanged: neighbor_group stays legal there.
  Problem spmm;
  spmm.width = 64;
  EXPECT_TRUE(isLegal(spmm, groups));
}

TEST(SddmmTuningLegality, VertexParallelBatchIsCappedByTheLanes) {
  Problem p = sddmmProblem(ElementType::F32, 16);
  // 4 chunks over 2 lanes: 64 / 8 = 8 neighbours per batch, at most the 2
  // lanes for vertex_parallel, all 8 for edge_parallel.
  EXPECT_EQ(planFor(p, {4, 2, 256}).edgeBatch, 2);
  EXPECT_EQ(planFor(p, {4, 2, 256, 128}).edgeBatch, 8);
  Problem spmm;
  spmm.width = 16;
  EXPECT_EQ(planFor(spmm, {4, 2, 256}).edgeBatch, 8);
}

//===----------------------------------------------------------------------===//
// The cost model
//===----------------------------------------------------------------------===//

TEST(SddmmTuningCostModel, PredictionsArePositiveAndFiniteOnOddInputs) {
  GpuModel gpu = sm90();
  graph::CsrGraph empty;
  empty.rowPtr = {0};
  graph::CsrGraph noEdges;
  noEdges.numRows = noEdges.numCols = 5;
  noEdges.rowPtr.assign(6, 0);
  std::vector<graph::CsrGraph> graphs = {empty, noEdges, starGraph(1),
                                         starGraph(3000),
                                         graph::generateRmat(10, 16, 2)};
  for (const graph::CsrGraph &g : graphs) {
    for (ElementType type : {ElementType::F32, ElementType::BF16}) {
      for (int64_t width : {1, 3, 64, 130}) {
        for (bool add : {false, true}) {
          Problem p = sddmmProblem(type, width, add);
          graph::GraphProfile profile = profileOf(g, gpu, p);
          std::vector<Candidate> ranked =
              rankSchedules(gpu, profile, p, enumerateSchedules(p));
          ASSERT_FALSE(ranked.empty());
          for (const Candidate &c : ranked) {
            SCOPED_TRACE(c.schedule.shortText() + " rows " +
                         std::to_string(g.numRows));
            const Prediction &q = c.prediction;
            EXPECT_TRUE(finitePositive(q.seconds)) << q.seconds;
            for (double t : {q.bandwidthSeconds, q.latencySeconds,
                             q.wavesSeconds, q.issueSeconds})
              EXPECT_TRUE(std::isfinite(t) && t >= 0) << t;
            EXPECT_GE(q.seconds, q.launchSeconds);
            EXPECT_DOUBLE_EQ(q.launchSeconds, gpu.launchSeconds);
            EXPECT_EQ(q.workspaceBytes, 0);
            EXPECT_FALSE(q.bound.empty());
            EXPECT_NE(q.why.find(q.bound), std::string::npos) << q.why;
          }
          // Sorted by predicted time.
          for (size_t i = 1; i < ranked.size(); ++i)
            EXPECT_LE(ranked[i - 1].prediction.seconds,
                      ranked[i].prediction.seconds);
        }
      }
    }
  }
}

TEST(SddmmTuningCostModel, BandwidthGrowsWithWidthAndTheAddFormWritesMore) {
  GpuModel gpu = sm90();
  graph::CsrGraph g = graph::generateRmat(13, 16, 5);
  double previous = 0;
  for (int64_t width : {16, 32, 64, 128, 256}) {
    Problem dot = sddmmProblem(ElementType::F32, width);
    Problem add = sddmmProblem(ElementType::F32, width, true);
    Schedule s{4, 16, 256};
    Prediction pd = predictFor(gpu, profileOf(g, gpu, dot), dot, s);
    Prediction pa = predictFor(gpu, profileOf(g, gpu, add), add, s);
    SCOPED_TRACE(width);
    EXPECT_GT(pd.dramBytes, previous);
    EXPECT_GT(pd.bandwidthSeconds, 0);
    previous = pd.dramBytes;
    // The add form writes width values per edge instead of one.
    EXPECT_GE(pa.dramBytes - pd.dramBytes,
              0.99 * static_cast<double>(g.nnz()) * (width - 1) * 4);
    EXPECT_GT(pa.bandwidthSeconds, pd.bandwidthSeconds);
    // More bandwidth is never slower.
    GpuModel fast = gpu;
    fast.dramBytesPerSecond *= 2;
    fast.l2BytesPerSecond *= 2;
    EXPECT_LE(predictFor(fast, profileOf(g, fast, add), add, s).seconds,
              pa.seconds);
  }
  // 16-bit features move half the bytes of f32 ones.
  Problem f32 = sddmmProblem(ElementType::F32, 64);
  Problem f16 = sddmmProblem(ElementType::F16, 64);
  Schedule s{2, 32, 256};
  EXPECT_LT(predictFor(gpu, profileOf(g, gpu, f16), f16, s).dramBytes,
            predictFor(gpu, profileOf(g, gpu, f32), f32, s).dramBytes);
}

TEST(SddmmTuningCostModel, AHubRowSlowsVertexParallelNotEdgeParallel) {
  GpuModel gpu = sm90();
  Problem p = sddmmProblem(ElementType::F32, 64);
  Schedule vertex{4, 16, 256};
  Schedule edge{4, 16, 256, 128};
  graph::CsrGraph small = starGraph(2000), big = starGraph(64000);
  Prediction vs = predictFor(gpu, profileOf(small, gpu, p), p, vertex);
  Prediction vb = predictFor(gpu, profileOf(big, gpu, p), p, vertex);
  Prediction es = predictFor(gpu, profileOf(small, gpu, p), p, edge);
  Prediction eb = predictFor(gpu, profileOf(big, gpu, p), p, edge);
  // The vertex-parallel chain follows the hub's degree (32x here); an
  // edge-parallel worker's does not.
  EXPECT_GT(vb.latencySeconds, 10 * vs.latencySeconds);
  EXPECT_LT(eb.latencySeconds, 2 * es.latencySeconds);
  EXPECT_LT(eb.seconds, vb.seconds);
  // So the ranking puts an edge-parallel schedule first on the big star.
  std::vector<Candidate> ranked =
      rankSchedules(gpu, profileOf(big, gpu, p), p, enumerateSchedules(p));
  ASSERT_FALSE(ranked.empty());
  EXPECT_TRUE(ranked[0].schedule.isEdgeParallel())
      << ranked[0].schedule.shortText();
  // Vertex-parallel: more lanes per row shorten the hub's chain.
  Prediction fewLanes =
      predictFor(gpu, profileOf(big, gpu, p), p, Schedule{4, 2, 256});
  EXPECT_GT(fewLanes.latencySeconds, vb.latencySeconds);
}

TEST(SddmmTuningCostModel, PackedVectorsLoadBothEndpointsPerEdge) {
  GpuModel gpu = sm90();
  graph::CsrGraph g = uniformGraph(20000, 4);
  Problem f16 = sddmmProblem(ElementType::F16, 64);
  graph::GraphProfile profile = profileOf(g, gpu, f16);
  // vw = 1 (scalar) keeps the row in registers and walks row_ptr; vw = 2
  // packs: the stretch's row ends go to shared memory.
  Prediction scalar = predictFor(gpu, profile, f16, Schedule{1, 32, 256, 128});
  Prediction packed = predictFor(gpu, profile, f16, Schedule{2, 32, 256, 128});
  EXPECT_EQ(scalar.plan.sharedBytes, 0);
  EXPECT_EQ(packed.plan.sharedBytes, 8 * 129 * 4);
  EXPECT_TRUE(sddmmKeepsVectorsPacked(f16, 2));
  EXPECT_FALSE(sddmmKeepsVectorsPacked(f16, 1));
  EXPECT_FALSE(sddmmKeepsVectorsPacked(sddmmProblem(ElementType::F32, 64), 4));
  // Short rows: the unpacked worker pays a row_ptr and a row load per row
  // end, the packed one does not.
  EXPECT_GT(scalar.wavesSeconds, packed.wavesSeconds);
  EXPECT_EQ(scalar.workers, packed.workers);
  EXPECT_DOUBLE_EQ(scalar.workers, std::ceil((20000.0 + 80000.0) / 128));
}

TEST(SddmmTuningCostModel, LoadsWaitLongerOnlyWhenTheGridFillsTheGpu) {
  // The loaded-latency factor applies in full when the grid fills every
  // resident warp slot, and hardly at all for a graph that fills a few.
  GpuModel loaded = sm90(), unloaded = sm90();
  unloaded.loadedLatencyFactor = 1;
  Problem p = sddmmProblem(ElementType::F32, 64);
  Schedule edge{2, 32, 256, 64};
  graph::CsrGraph tiny = uniformGraph(500, 4);
  graph::CsrGraph big = uniformGraph(400000, 8);
  double tinyRatio =
      predictFor(loaded, profileOf(tiny, loaded, p), p, edge).latencySeconds /
      predictFor(unloaded, profileOf(tiny, unloaded, p), p, edge)
          .latencySeconds;
  double bigRatio =
      predictFor(loaded, profileOf(big, loaded, p), p, edge).latencySeconds /
      predictFor(unloaded, profileOf(big, unloaded, p), p, edge).latencySeconds;
  EXPECT_LT(tinyRatio, 1.1);
  EXPECT_GT(bigRatio, 0.8 * loaded.loadedLatencyFactor);
  // Vertex-parallel kernels too: a hundred rows of 32 lanes are a hundred
  // warps.
  Schedule vertex{2, 32, 256};
  graph::CsrGraph hundred = uniformGraph(100, 4);
  double tinyVertex =
      predictFor(loaded, profileOf(hundred, loaded, p), p, vertex)
          .latencySeconds /
      predictFor(unloaded, profileOf(hundred, unloaded, p), p, vertex)
          .latencySeconds;
  EXPECT_LT(tinyVertex, 1.1);
}

TEST(SddmmTuningCostModel, RowEndsOfAWarpsWorkersAddUp) {
  // f32 edge-parallel workers reload their row at every row end (a
  // dependent row_ptr and feature load) in a branch the warp runs once for
  // each of its workers that takes it: on short rows, two 16-lane workers
  // per warp wait about twice as long per worker as one 32-lane worker.
  GpuModel gpu = sm90();
  gpu.loadedLatencyFactor = 1;
  Problem p = sddmmProblem(ElementType::F32, 64);
  graph::CsrGraph g = uniformGraph(200000, 2);
  graph::GraphProfile profile = profileOf(g, gpu, p);
  Prediction one = predictFor(gpu, profile, p, Schedule{2, 32, 256, 256});
  Prediction two = predictFor(gpu, profile, p, Schedule{4, 16, 256, 256});
  double chainOne = one.wavesSeconds / one.waves;
  double chainTwo = two.wavesSeconds / two.waves;
  EXPECT_GT(chainTwo, 1.6 * chainOne);
  // Long rows have few row ends: the two chains stay close.
  graph::CsrGraph dense = uniformGraph(20000, 64);
  graph::GraphProfile denseProfile = profileOf(dense, gpu, p);
  Prediction oneDense =
      predictFor(gpu, denseProfile, p, Schedule{2, 32, 256, 256});
  Prediction twoDense =
      predictFor(gpu, denseProfile, p, Schedule{4, 16, 256, 256});
  EXPECT_LT(twoDense.wavesSeconds / twoDense.waves,
            1.3 * oneDense.wavesSeconds / oneDense.waves);
}

TEST(SddmmTuningCostModel, ResidencyFollowsTheCompilersRegisters) {
  // ptxas (CUDA 13.0, sm_90, 256 threads) gives the f32 edge-parallel
  // kernel of 32 lanes (vw = 2) 48 registers and the 16-lane one (vw = 4)
  // 68, the vertex-parallel kernel of 16 lanes with 4-wide vectors 40: 5, 3
  // and 6 blocks per SM. (The old estimate, 72 / 88 / 80, gave 3, 2 and 3.)
  GpuModel gpu = sm90();
  Problem p = sddmmProblem(ElementType::F32, 64);
  graph::GraphProfile profile = profileOf(uniformGraph(50000, 16), gpu, p);
  EXPECT_EQ(predictFor(gpu, profile, p, Schedule{2, 32, 256, 64}).blocksPerSm,
            5);
  EXPECT_EQ(predictFor(gpu, profile, p, Schedule{4, 16, 256, 64}).blocksPerSm,
            3);
  EXPECT_EQ(predictFor(gpu, profile, p, Schedule{4, 16, 256}).blocksPerSm, 6);
  // Packed f16 with 8-lane workers: ptxas 108 registers, 2 blocks.
  Problem h = sddmmProblem(ElementType::F16, 64);
  EXPECT_EQ(predictFor(gpu, profileOf(uniformGraph(50000, 16), gpu, h), h,
                       Schedule{8, 8, 256, 64})
                .blocksPerSm,
            2);
}

TEST(SddmmTuningCostModel, SpmmPredictionsAreUnchanged) {
  // predictFor dispatches on the op and leaves gnn.spmm to predict().
  GpuModel gpu = sm90();
  graph::CsrGraph g = graph::generateRmat(11, 16, 4);
  Problem spmm;
  spmm.width = 64;
  Problem sddmm = sddmmProblem(ElementType::F32, 64);
  graph::GraphProfile profile = profileOf(g, gpu, spmm);
  for (const Schedule &s : enumerateSchedules(spmm)) {
    SCOPED_TRACE(s.shortText());
    EXPECT_DOUBLE_EQ(predictFor(gpu, profile, spmm, s).seconds,
                     predict(gpu, profile, spmm, s).seconds);
  }
  Schedule s{4, 16, 256};
  EXPECT_NE(predictFor(gpu, profile, sddmm, s).dramBytes,
            predict(gpu, profile, spmm, s).dramBytes);
}

//===----------------------------------------------------------------------===//
// Finding and rewriting gnn.sddmm ops
//===----------------------------------------------------------------------===//

TEST(SddmmTuningRewrite, FindsSddmmSitesNextToSpmmOnes) {
  Problem add = sddmmProblem(ElementType::BF16, 32, true, true);
  std::string text = sddmmText(add);
  Expected<std::vector<TunableSite>> sites = findSites(text, "t.gnn");
  ASSERT_TRUE(sites) << sites.message();
  ASSERT_EQ(sites->size(), 1u);
  const TunableSite &site = (*sites)[0];
  EXPECT_EQ(site.entryName, "m_k");
  EXPECT_TRUE(site.problem.isSddmm());
  EXPECT_TRUE(site.problem.sddmmAdd);
  EXPECT_TRUE(site.problem.leakyRelu);
  EXPECT_EQ(site.problem.type, ElementType::BF16);
  EXPECT_EQ(site.problem.width, 32);
  EXPECT_EQ(site.problem.offsetBytes, 8);
  EXPECT_EQ(site.problem.indexBytes, 4);
  EXPECT_TRUE(site.tunable) << site.note;
  EXPECT_TRUE(site.currentSchedule.empty());
  EXPECT_EQ(tuningOpName(site.problem), "sddmm_add");
  EXPECT_EQ(opDescription(site.problem), ", sddmm add, leaky_relu");
  // findSpmmSites keeps to gnn.spmm.
  Expected<std::vector<SpmmSite>> spmm = findSpmmSites(text, "t.gnn");
  ASSERT_TRUE(spmm) << spmm.message();
  EXPECT_TRUE(spmm->empty());
  Problem dot = sddmmProblem(ElementType::F32, 64);
  Expected<std::vector<TunableSite>> d = findSites(sddmmText(dot), "d.gnn");
  ASSERT_TRUE(d) << d.message();
  ASSERT_EQ(d->size(), 1u);
  EXPECT_FALSE((*d)[0].problem.sddmmAdd);
  EXPECT_FALSE((*d)[0].problem.leakyRelu);
  EXPECT_EQ(tuningOpName((*d)[0].problem), "sddmm");
  EXPECT_EQ(opDescription((*d)[0].problem), ", sddmm dot");
}

TEST(SddmmTuningRewrite, SchedulesRoundTripThroughTheCompiler) {
  Problem p = sddmmProblem(ElementType::F16, 64, true, true);
  std::string text = sddmmText(p);
  Schedule edge{8, 8, 128, 64};
  Expected<std::string> tuned = applySchedules(text, "t.gnn", {{"m_k", edge}});
  ASSERT_TRUE(tuned) << tuned.message();
  EXPECT_NE(tuned->find("strategy = edge_parallel, vector_width = 8, "
                        "dim_workers = 8, threads_per_block = 128, "
                        "edges_per_warp = 64, write = staged"),
            std::string::npos)
      << *tuned;
  // The form and the leaky_relu survive, and the site reads back tunable
  // with the written schedule.
  Expected<std::vector<TunableSite>> sites = findSites(*tuned, "t.gnn");
  ASSERT_TRUE(sites) << sites.message();
  ASSERT_EQ(sites->size(), 1u);
  EXPECT_TRUE((*sites)[0].tunable) << (*sites)[0].note;
  EXPECT_TRUE((*sites)[0].problem.sddmmAdd);
  EXPECT_TRUE((*sites)[0].problem.leakyRelu);
  EXPECT_NE((*sites)[0].currentSchedule.find("edges_per_warp = 64"),
            std::string::npos);
  Expected<CompiledModule> m = compileGnn(*tuned, "t.gnn");
  ASSERT_TRUE(m) << m.message();
  ASSERT_EQ(m->kernels.size(), 1u);
  EXPECT_EQ(m->kernels[0].info.at("form"), "add");
  EXPECT_TRUE(m->kernels[0].info.count("leaky_relu"));
  EXPECT_EQ(field(m->kernels[0].schedule, "edges_per_warp"), 64);
  // Back to vertex_parallel: the edge-parallel fields go.
  Expected<std::string> back =
      applySchedules(*tuned, "t.gnn", {{"m_k", Schedule{4, 16, 64}}});
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->find("edge_parallel"), std::string::npos) << *back;
  Expected<CompiledModule> again = compileGnn(*back, "t.gnn");
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(field(again->kernels[0].schedule, "vector_width"), 4);
  EXPECT_EQ(field(again->kernels[0].schedule, "dim_workers"), 16);
  EXPECT_EQ(again->kernels[0].launch.blockX, 64u);
  // A kernel not named is left alone.
  Expected<std::string> none =
      applySchedules(text, "t.gnn", {{"m_other", Schedule{4, 16, 64}}});
  ASSERT_TRUE(none) << none.message();
  EXPECT_EQ(none->find("schedule"), std::string::npos) << *none;
}

//===----------------------------------------------------------------------===//
// The tuning database and compileForGraph
//===----------------------------------------------------------------------===//

TEST(SddmmTuningDb, KeysNameTheOpAndOldLinesStillRead) {
  TuningEntry e;
  e.key = {"0123456789abcdef", "sddmm", "f16", 64, false, "sm_90"};
  e.schedule = {8, 8, 256, 128};
  e.predictedSeconds = 2e-4;
  std::string line = formatEntry(e);
  EXPECT_EQ(line.rfind("0123456789abcdef sddmm f16 64 novalues sm_90 -> ", 0),
            0u)
      << line;
  line.pop_back();
  Expected<TuningEntry> parsed = parseEntry(line);
  ASSERT_TRUE(parsed) << parsed.message();
  EXPECT_EQ(parsed->key, e.key);
  EXPECT_EQ(parsed->schedule, e.schedule);
  TuningEntry add = e;
  add.key.op = "sddmm_add";
  std::string addLine = formatEntry(add);
  addLine.pop_back();
  Expected<TuningEntry> parsedAdd = parseEntry(addLine);
  ASSERT_TRUE(parsedAdd) << parsedAdd.message();
  EXPECT_EQ(parsedAdd->key.op, "sddmm_add");
  EXPECT_FALSE(parsedAdd->key == parsed->key);
  // A line written before gnn.sddmm was tuned reads as before.
  Expected<TuningEntry> old = parseEntry(
      "0123456789abcdef spmm f32 64 novalues sm_90 -> 4 16 256 1.2e-03 -");
  ASSERT_TRUE(old) << old.message();
  EXPECT_EQ(old->key.op, "spmm");
  Expected<TuningEntry> bad = parseEntry(
      "0123456789abcdef gemm f32 64 novalues sm_90 -> 4 16 256 1.2e-03 -");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("unknown op 'gemm'"), std::string::npos)
      << bad.message();
}

namespace {

const char *kMixed = R"(
gnn.module @m {
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
  gnn.kernel @score(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>, %x1: tensor<?x64xf32>) -> tensor<?xf32> {
    %e = gnn.sddmm %g, %x, %x1 : !gnn.graph<csr, i64, i32>, tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?xf32>
    gnn.return %e : tensor<?xf32>
  }
  gnn.kernel @fixed(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>, %x1: tensor<?x64xf32>) -> tensor<?xf32> {
    %e = gnn.sddmm %g, %x, %x1 {schedule = #gnn.schedule<vector_width = 1, dim_workers = 32, threads_per_block = 128>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?xf32>
    gnn.return %e : tensor<?xf32>
  }
}
)";

} // namespace

TEST(SddmmTunedCompile, TunesUnscheduledSddmmOpsWithTheModelsBest) {
  graph::CsrGraph star = starGraph(40000);
  TunedCompileOptions options;
  options.arch = "sm_90";
  options.useDatabase = false;
  TuningChoices choices;
  Expected<CompiledModule> m =
      compileForGraph(kMixed, "mixed.gnn", star, options, &choices);
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ(choices.size(), 2u);
  ASSERT_TRUE(choices.count("m_agg"));
  ASSERT_TRUE(choices.count("m_score"));
  EXPECT_FALSE(choices.count("m_fixed"));
  Expected<rt::KernelSpec> fixed = findKernel(*m, "m_fixed");
  ASSERT_TRUE(fixed) << fixed.message();
  EXPECT_EQ(field(fixed->schedule, "dim_workers"), 32);
  GpuModel gpu = sm90();
  Problem p = sddmmProblem(ElementType::F32, 64);
  std::vector<Candidate> ranked =
      rankSchedules(gpu, profileOf(star, gpu, p), p, enumerateSchedules(p));
  ASSERT_FALSE(ranked.empty());
  const Schedule &best = ranked[chooseCandidate(ranked)].schedule;
  EXPECT_EQ(choices["m_score"], best.shortText() + " (cost model)");
  Expected<rt::KernelSpec> score = findKernel(*m, "m_score");
  ASSERT_TRUE(score) << score.message();
  EXPECT_EQ(field(score->schedule, "vector_width"), best.vectorWidth);
  EXPECT_EQ(field(score->schedule, "dim_workers"), best.dimWorkers);
  EXPECT_EQ(score->launch.blockX, static_cast<unsigned>(best.threadsPerBlock));
  EXPECT_EQ(score->schedule.find("edge_parallel") != std::string::npos,
            best.isEdgeParallel());
}

TEST(SddmmTunedCompile, UsesTheDatabaseEntryOfTheSameOpOnly) {
  graph::CsrGraph star = starGraph(3000);
  std::string path = tempPath("db/tuning.db");
  std::remove(path.c_str());
  Expected<TuningDb> db = TuningDb::load(path);
  ASSERT_TRUE(db) << db.message();
  std::string fingerprint = graph::analyzeGraph(star).fingerprintHex;
  // An add-form entry must not serve the dot kernel; the dot entry must.
  TuningEntry add;
  add.key = {fingerprint, "sddmm_add", "f32", 64, false, "sm_90"};
  add.schedule = {1, 8, 64};
  add.predictedSeconds = 1e-3;
  ASSERT_TRUE(db->store(add));
  TunedCompileOptions options;
  options.arch = "sm_90";
  options.databasePath = path;
  TuningChoices choices;
  Expected<CompiledModule> m =
      compileForGraph(kMixed, "mixed.gnn", star, options, &choices);
  ASSERT_TRUE(m) << m.message();
  EXPECT_NE(choices["m_score"].find("(cost model)"), std::string::npos)
      << choices["m_score"];
  TuningEntry dot = add;
  dot.key.op = "sddmm";
  dot.schedule = {2, 4, 64};
  ASSERT_TRUE(db->store(dot));
  choices.clear();
  m = compileForGraph(kMixed, "mixed.gnn", star, options, &choices);
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ(choices["m_score"], "vw=2 dw=4 tpb=64 (database)");
  Expected<rt::KernelSpec> score = findKernel(*m, "m_score");
  ASSERT_TRUE(score) << score.message();
  EXPECT_EQ(field(score->schedule, "vector_width"), 2);
  EXPECT_EQ(field(score->schedule, "dim_workers"), 4);
  // The gnn.spmm kernel of the same graph and width is not served by it.
  EXPECT_NE(choices["m_agg"].find("(cost model)"), std::string::npos)
      << choices["m_agg"];
  std::remove(path.c_str());
}

//===----------------------------------------------------------------------===//
// Measuring (GPU only)
//===----------------------------------------------------------------------===//

TEST(SddmmTuningMeasure, MeasuresACheckedKernelOnTheGpu) {
  std::string why;
  if (!rt::gpuAvailable(&why))
    GTEST_SKIP() << "no GPU (" << why
                 << "): measureSddmmSchedule() is untested here";
  Expected<rt::Runtime> runtime = rt::Runtime::create(0, "off");
  ASSERT_TRUE(runtime) << runtime.message();
  graph::CsrGraph g = graph::generateRmat(12, 16, 1);
  for (bool add : {false, true}) {
    Problem p = sddmmProblem(ElementType::F16, 64, add, add);
    for (const Schedule &s : {Schedule{8, 8, 256}, Schedule{8, 8, 256, 128},
                              Schedule{1, 32, 128, 64}}) {
      SCOPED_TRACE(s.shortText() + (add ? " add" : " dot"));
      Expected<std::string> text =
          applySchedules(sddmmText(p), "t.gnn", {{"m_k", s}});
      ASSERT_TRUE(text) << text.message();
      Expected<double> t = measureFor(*runtime, *text, "m_k", g, p);
      ASSERT_TRUE(t) << t.message();
      EXPECT_GT(*t, 0);
    }
  }
  // A gnn.spmm problem is refused by name.
  Problem spmm;
  Expected<double> wrong = measureSddmmSchedule(
      *runtime, sddmmText(sddmmProblem(ElementType::F32, 64)), "m_k", g, spmm);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.message().find("m_k"), std::string::npos);
}
