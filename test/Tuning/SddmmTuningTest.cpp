//===- SddmmTuningTest.cpp - Tuning gnn.sddmm: legality, model, sites -----===//
#include "TuningTestUtil.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/Tuning/SddmmModel.h"
#include "gnnc/Tuning/TunedCompile.h"
#include "gnnc/Tuning/Tuner.h"
#include "gnnc/Tuning/TuningDb.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

using namespace gnnc;
using namespace gnnc::tuning;
using namespace gnnc::tuning::test;

namespace {

bool finitePositive(double v) { return std::isfinite(v) && v > 0; }

Prediction predictFor(const GpuModel &gpu, const graph::CsrGraph &g,
                      const OpDesc &op, const Schedule &s) {
  return predictWith(gpu, profileOf(g, gpu, op), op, s);
}

} // namespace

//===----------------------------------------------------------------------===//
// Enumeration and legality are the compiler's
//===----------------------------------------------------------------------===//

TEST(SddmmTuningEnumerate, EveryScheduleCompilesWithThePlanTheModelUses) {
  size_t compiled = 0;
  for (ElementType type :
       {ElementType::F32, ElementType::F16, ElementType::BF16}) {
    for (int64_t width : {1, 6, 64, 100, 1024}) {
      for (bool add : {false, true}) {
        OpDesc op = sddmmOp(type, width, add, /*leakyRelu=*/add);
        SCOPED_TRACE(std::string(elementTypeName(type)) + " width " +
                     std::to_string(width) + (add ? " add" : " dot"));
        std::vector<Schedule> all = enumerateSchedules(op);
        ASSERT_FALSE(all.empty());
        bool anyEdge = false, anyGroup = false;
        for (const Schedule &s : all) {
          SCOPED_TRACE(s.str());
          Expected<KernelPlan> plan = planKernel(op, s);
          ASSERT_TRUE(plan) << plan.message();
          if (s.strategy == Strategy::NeighborGroup) {
            anyGroup = true;
            // A worker per group: no merging, so no shared memory, no
            // workspace and no first kernel (unlike gnn.spmm's).
            EXPECT_EQ(plan->launch.sharedBytes, 0);
            EXPECT_FALSE(plan->workspace);
            EXPECT_TRUE(plan->preludes.empty());
            EXPECT_TRUE(plan->followUps.empty());
            EXPECT_EQ(plan->launch.grid,
                      std::vector<ParamRole>{ParamRole::NumGroups});
          }
          if (s.strategy == Strategy::EdgeParallel) {
            anyEdge = true;
            EXPECT_EQ(s.write, WriteMode::Staged);
            // Every edge has its own output: no workspace, no companion.
            EXPECT_FALSE(plan->workspace);
            EXPECT_TRUE(plan->followUps.empty());
            EXPECT_TRUE(plan->preludes.empty());
          }
          expectModelPlanIsLowered(op, s);
          ++compiled;
        }
        EXPECT_TRUE(anyEdge);
        EXPECT_TRUE(anyGroup);
      }
    }
  }
  EXPECT_GT(compiled, 1000u);
}

TEST(SddmmTuningLegality, IllegalSchedulesAreRejectedLikeTheCompilerDoes) {
  OpDesc f32 = sddmmOp(ElementType::F32, 64);
  expectCompilerAgrees(f32, groupSchedule(4, 16, 256, 32), "");
  expectCompilerAgrees(f32, groupSchedule(4, 16, 256, (1 << 20) + 1),
                       "group_size");
  expectCompilerAgrees(f32, vertexSchedule(8, 8, 256), "16 bytes");
  expectCompilerAgrees(sddmmOp(ElementType::F16, 6), vertexSchedule(4, 2, 256),
                       "padded rows are implemented for gnn.spmm only");
  expectCompilerAgrees(sddmmOp(ElementType::F32, 256),
                       vertexSchedule(1, 1, 256), "accumulators");
  expectCompilerAgrees(f32, edgeSchedule(4, 16, 256, 4), "edges_per_warp");
  // Packed 16-bit vectors keep the row ends in shared memory: 1024
  // workers x 33 x 4 bytes.
  expectCompilerAgrees(sddmmOp(ElementType::F16, 64),
                       edgeSchedule(2, 1, 1024, 32), "shared memory");
  // 128 workers x 129 x 4 bytes, three blocks per SM.
  expectCompilerAgrees(
      sddmmOp(ElementType::BF16, 64, true),
      edgeSchedule(4, 1, 128, 128, WriteMode::Staged, /*bps=*/3),
      "bytes an SM holds");
  // Every edge has its own output: nothing to add atomically or in shared
  // memory, nothing to accumulate in f16 or in batches.
  expectCompilerAgrees(f32, edgeSchedule(4, 16, 256, 64, WriteMode::Atomic),
                       "write = atomic applies to gnn.spmm");
  expectCompilerAgrees(f32, edgeSchedule(4, 16, 256, 64, WriteMode::Shared),
                       "write = shared applies to gnn.spmm");
  Schedule batched = vertexSchedule(4, 16, 256);
  batched.discBatch = 32;
  expectCompilerAgrees(f32, batched,
                       "disc_batch = 32) is not implemented for gnn.sddmm");
  Schedule halves = vertexSchedule(8, 8, 256);
  halves.accumulate = Accumulate::F16;
  expectCompilerAgrees(sddmmOp(ElementType::F16, 64), halves,
                       "accumulate = f16 is not implemented for gnn.sddmm");

  // The shared-memory rule is the packed kernel's alone: f32 (and scalar
  // 16-bit) edge_parallel keeps no row ends, so the same shape is legal and
  // compiles, with the plan the model uses.
  for (const auto &[type, vw] :
       {std::pair{ElementType::F32, 2}, std::pair{ElementType::F16, 1}}) {
    OpDesc op = sddmmOp(type, 64);
    Schedule s = edgeSchedule(vw, 1, 1024, 32);
    expectCompilerAgrees(op, s, "");
    Expected<KernelPlan> plan = planKernel(op, s);
    ASSERT_TRUE(plan) << plan.message();
    EXPECT_FALSE(plan->mapping.packed);
    EXPECT_EQ(plan->launch.sharedBytes, 0);
    expectModelPlanIsLowered(op, s);
  }
  // gnn.spmm's rules are its own: neighbor_group and write = atomic stay
  // legal there.
  expectCompilerAgrees(spmmProblem(ElementType::F32, 64),
                       groupSchedule(4, 16, 256, 32), "");
  expectCompilerAgrees(spmmProblem(ElementType::F32, 64),
                       edgeSchedule(4, 16, 256, 64, WriteMode::Atomic), "");
}

TEST(SddmmTuningLegality, VertexParallelBatchIsCappedByTheLanes) {
  OpDesc op = sddmmOp(ElementType::F32, 16);
  // 4 chunks over 2 lanes: 64 / 8 = 8 neighbours per batch, at most the 2
  // lanes for vertex_parallel, all 8 for edge_parallel; gnn.spmm takes 8.
  Expected<KernelPlan> vertex = planKernel(op, vertexSchedule(4, 2, 256));
  ASSERT_TRUE(vertex) << vertex.message();
  EXPECT_EQ(vertex->mapping.edgeUnroll, 2);
  Expected<KernelPlan> edge = planKernel(op, edgeSchedule(4, 2, 256, 128));
  ASSERT_TRUE(edge) << edge.message();
  EXPECT_EQ(edge->mapping.edgeUnroll, 8);
  Expected<KernelPlan> spmm =
      planKernel(spmmProblem(ElementType::F32, 16), vertexSchedule(4, 2, 256));
  ASSERT_TRUE(spmm) << spmm.message();
  EXPECT_EQ(spmm->mapping.edgeUnroll, 8);
  // As the lowering has it.
  expectModelPlanIsLowered(op, vertexSchedule(4, 2, 256));
  expectModelPlanIsLowered(op, edgeSchedule(4, 2, 256, 128));
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
          OpDesc op = sddmmOp(type, width, add);
          graph::GraphProfile profile = profileOf(g, gpu, op);
          std::vector<Schedule> all = enumerateSchedules(op);
          std::vector<Candidate> ranked = rankSchedules(gpu, profile, op, all);
          ASSERT_EQ(ranked.size(), all.size());
          for (const Candidate &c : ranked) {
            SCOPED_TRACE(c.schedule.str() + " rows " +
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
            EXPECT_EQ(q.plan.schedule, c.schedule);
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
  Schedule s = vertexSchedule(4, 16, 256);
  for (int64_t width : {16, 32, 64, 128, 256}) {
    OpDesc dot = sddmmOp(ElementType::F32, width);
    OpDesc add = sddmmOp(ElementType::F32, width, true);
    Prediction pd = predictFor(gpu, g, dot, s);
    Prediction pa = predictFor(gpu, g, add, s);
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
    EXPECT_LE(predictFor(fast, g, add, s).seconds, pa.seconds);
  }
  // 16-bit features move half the bytes of f32 ones.
  OpDesc f32 = sddmmOp(ElementType::F32, 64);
  OpDesc f16 = sddmmOp(ElementType::F16, 64);
  Schedule half = vertexSchedule(2, 32, 256);
  EXPECT_LT(predictFor(gpu, g, f16, half).dramBytes,
            predictFor(gpu, g, f32, half).dramBytes);
}

TEST(SddmmTuningCostModel, AHubRowSlowsVertexParallelNotEdgeParallel) {
  GpuModel gpu = sm90();
  OpDesc op = sddmmOp(ElementType::F32, 64);
  Schedule vertex = vertexSchedule(4, 16, 256);
  Schedule edge = edgeSchedule(4, 16, 256, 128);
  graph::CsrGraph small = starGraph(2000), big = starGraph(64000);
  Prediction vs = predictFor(gpu, small, op, vertex);
  Prediction vb = predictFor(gpu, big, op, vertex);
  Prediction es = predictFor(gpu, small, op, edge);
  Prediction eb = predictFor(gpu, big, op, edge);
  // The vertex-parallel chain follows the hub's degree (32x here); an
  // edge-parallel worker's does not.
  EXPECT_GT(vb.latencySeconds, 10 * vs.latencySeconds);
  EXPECT_LT(eb.latencySeconds, 2 * es.latencySeconds);
  EXPECT_LT(eb.seconds, vb.seconds);
  // Nor does a neighbour group's, beyond the longer waits of loads when
  // its 2,000 groups fill more of the GPU: the hub is cut into groups.
  Schedule groups = groupSchedule(4, 16, 256, 32);
  EXPECT_LT(predictFor(gpu, big, op, groups).latencySeconds,
            3 * predictFor(gpu, small, op, groups).latencySeconds);
  // So the ranking puts a schedule that splits the hub first on the big
  // star.
  std::vector<Candidate> ranked =
      rankSchedules(gpu, profileOf(big, gpu, op), op, enumerateSchedules(op));
  ASSERT_FALSE(ranked.empty());
  EXPECT_NE(ranked[0].schedule.strategy, Strategy::VertexParallel)
      << ranked[0].schedule.str();
  // Vertex-parallel: more lanes per row shorten the hub's chain.
  Prediction fewLanes = predictFor(gpu, big, op, vertexSchedule(4, 2, 256));
  EXPECT_GT(fewLanes.latencySeconds, vb.latencySeconds);
}

TEST(SddmmTuningCostModel, PackedVectorsLoadBothEndpointsPerEdge) {
  GpuModel gpu = sm90();
  graph::CsrGraph g = uniformGraph(20000, 4);
  OpDesc f16 = sddmmOp(ElementType::F16, 64);
  // vw = 1 (scalar) keeps the row in registers and walks row_ptr; vw = 2
  // packs: the stretch's row ends go to shared memory.
  Schedule scalarSchedule = edgeSchedule(1, 32, 256, 128);
  Schedule packedSchedule = edgeSchedule(2, 32, 256, 128);
  Prediction scalar = predictFor(gpu, g, f16, scalarSchedule);
  Prediction packed = predictFor(gpu, g, f16, packedSchedule);
  EXPECT_FALSE(scalar.plan.mapping.packed);
  EXPECT_TRUE(packed.plan.mapping.packed);
  EXPECT_EQ(scalar.plan.launch.sharedBytes, 0);
  EXPECT_EQ(packed.plan.launch.sharedBytes, 8 * 129 * 4);
  EXPECT_EQ(packed.plan.mapping.rowEndsBytes, 8 * 129 * 4);
  // f32 never packs.
  Expected<KernelPlan> f32 =
      planKernel(sddmmOp(ElementType::F32, 64), edgeSchedule(4, 16, 256, 128));
  ASSERT_TRUE(f32) << f32.message();
  EXPECT_FALSE(f32->mapping.packed);
  // Both, as the lowering has them.
  expectModelPlanIsLowered(f16, scalarSchedule);
  expectModelPlanIsLowered(f16, packedSchedule);
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
  ASSERT_GT(loaded.loadedLatencyFactor, 1.2);
  OpDesc op = sddmmOp(ElementType::F32, 64);
  Schedule edge = edgeSchedule(2, 32, 256, 64);
  graph::CsrGraph tiny = uniformGraph(500, 4);
  graph::CsrGraph big = uniformGraph(400000, 8);
  double tinyRatio = predictFor(loaded, tiny, op, edge).latencySeconds /
                     predictFor(unloaded, tiny, op, edge).latencySeconds;
  double bigRatio = predictFor(loaded, big, op, edge).latencySeconds /
                    predictFor(unloaded, big, op, edge).latencySeconds;
  EXPECT_LT(tinyRatio, 1.1);
  EXPECT_GT(bigRatio, 0.8 * loaded.loadedLatencyFactor);
  // Vertex-parallel kernels too: a hundred rows of 32 lanes are a hundred
  // warps.
  Schedule vertex = vertexSchedule(2, 32, 256);
  graph::CsrGraph hundred = uniformGraph(100, 4);
  double tinyVertex = predictFor(loaded, hundred, op, vertex).latencySeconds /
                      predictFor(unloaded, hundred, op, vertex).latencySeconds;
  EXPECT_LT(tinyVertex, 1.1);
}

TEST(SddmmTuningCostModel, RowEndsOfAWarpsWorkersAddUp) {
  // f32 edge-parallel workers reload their row at every row end (a
  // dependent row_ptr and feature load) in a branch the warp runs once for
  // each of its workers that takes it: on short rows, two 16-lane workers
  // per warp wait about twice as long per worker as one 32-lane worker.
  GpuModel gpu = sm90();
  gpu.loadedLatencyFactor = 1;
  OpDesc op = sddmmOp(ElementType::F32, 64);
  Schedule oneWorker = edgeSchedule(2, 32, 256, 256);
  Schedule twoWorkers = edgeSchedule(4, 16, 256, 256);
  graph::CsrGraph g = uniformGraph(200000, 2);
  Prediction one = predictFor(gpu, g, op, oneWorker);
  Prediction two = predictFor(gpu, g, op, twoWorkers);
  double chainOne = one.wavesSeconds / one.waves;
  double chainTwo = two.wavesSeconds / two.waves;
  EXPECT_GT(chainTwo, 1.6 * chainOne);
  // Long rows have few row ends: the two chains stay close.
  graph::CsrGraph dense = uniformGraph(20000, 64);
  Prediction oneDense = predictFor(gpu, dense, op, oneWorker);
  Prediction twoDense = predictFor(gpu, dense, op, twoWorkers);
  EXPECT_LT(twoDense.wavesSeconds / twoDense.waves,
            1.3 * oneDense.wavesSeconds / oneDense.waves);
}

TEST(SddmmTuningCostModel, ResidencyFollowsTheCompilersRegisters) {
  // ptxas (CUDA 13.0, sm_90, 256 threads) gives the f32 edge-parallel
  // kernel of 32 lanes (vw = 2) 48 registers and the 16-lane one (vw = 4)
  // 68, the vertex-parallel kernel of 16 lanes with 4-wide vectors 40: 5, 3
  // and 6 blocks per SM. (The old estimate, 72 / 88 / 80, gave 3, 2 and 3.)
  GpuModel gpu = sm90();
  OpDesc op = sddmmOp(ElementType::F32, 64);
  graph::CsrGraph g = uniformGraph(50000, 16);
  EXPECT_EQ(predictFor(gpu, g, op, edgeSchedule(2, 32, 256, 64)).blocksPerSm,
            5);
  EXPECT_EQ(predictFor(gpu, g, op, edgeSchedule(4, 16, 256, 64)).blocksPerSm,
            3);
  EXPECT_EQ(predictFor(gpu, g, op, vertexSchedule(4, 16, 256)).blocksPerSm, 6);
  // Packed f16 with 8-lane workers: ptxas 108 registers, 2 blocks.
  OpDesc h = sddmmOp(ElementType::F16, 64);
  EXPECT_EQ(predictFor(gpu, g, h, edgeSchedule(8, 8, 256, 64)).blocksPerSm, 2);
}

TEST(SddmmTuningCostModel, TheRegistryDispatchesByOp) {
  // costModelFor hands gnn.sddmm to its own model and gnn.spmm to
  // predictSpmm, whose predictions are unchanged by it.
  GpuModel gpu = sm90();
  graph::CsrGraph g = graph::generateRmat(11, 16, 4);
  OpDesc spmm = spmmProblem(ElementType::F32, 64);
  OpDesc sddmm = sddmmOp(ElementType::F32, 64);
  graph::GraphProfile profile = profileOf(g, gpu, spmm);
  auto expectDispatchedTo = [&](const OpDesc &op, auto predict) {
    for (const Schedule &s : enumerateSchedules(op)) {
      SCOPED_TRACE(s.str());
      Expected<KernelPlan> plan = planKernel(op, s);
      ASSERT_TRUE(plan) << plan.message();
      EXPECT_DOUBLE_EQ(costModelFor(op.kind)(gpu, profile, op, *plan).seconds,
                       predict(gpu, profile, op, *plan).seconds);
    }
  };
  ASSERT_NO_FATAL_FAILURE(expectDispatchedTo(spmm, predictSpmm));
  ASSERT_NO_FATAL_FAILURE(expectDispatchedTo(sddmm, predictSddmm));
  Schedule s = vertexSchedule(4, 16, 256);
  EXPECT_NE(predictWith(gpu, profile, sddmm, s).dramBytes,
            predictWith(gpu, profile, spmm, s).dramBytes);
}

//===----------------------------------------------------------------------===//
// gnn.sddmm sites and their schedules
//===----------------------------------------------------------------------===//

TEST(SddmmTunableModule, FindsSddmmSitesWithTheirFormAndLeakyRelu) {
  OpDesc add = sddmmOp(ElementType::BF16, 32, true, true);
  Expected<TunableModule> module =
      TunableModule::parse(kernelText(add), "t.gnn");
  ASSERT_TRUE(module) << module.message();
  ASSERT_EQ(module->sites().size(), 1u);
  const TunableSite &site = module->sites()[0];
  EXPECT_EQ(site.entryName, "m_k");
  EXPECT_EQ(site.op.kind, OpKind::Sddmm);
  EXPECT_EQ(site.op.form, SddmmForm::Add);
  ASSERT_TRUE(site.op.leakyRelu);
  EXPECT_NEAR(*site.op.leakyRelu, 0.2, 1e-6);
  EXPECT_EQ(site.op.type, ElementType::BF16);
  EXPECT_EQ(site.op.width, 32);
  EXPECT_TRUE(site.op.offsets64);
  EXPECT_FALSE(site.op.indices64);
  EXPECT_TRUE(site.op == add);
  EXPECT_TRUE(site.tunable) << site.note;
  EXPECT_FALSE(site.written);
  EXPECT_EQ(tuningOpName(site.op), "sddmm_add");
  EXPECT_EQ(opDescription(site.op), ", sddmm add, leaky_relu");
  OpDesc dot = sddmmOp(ElementType::F32, 64);
  Expected<TunableModule> d = TunableModule::parse(kernelText(dot), "d.gnn");
  ASSERT_TRUE(d) << d.message();
  ASSERT_EQ(d->sites().size(), 1u);
  EXPECT_EQ(d->sites()[0].op.form, SddmmForm::Dot);
  EXPECT_FALSE(d->sites()[0].op.leakyRelu);
  EXPECT_TRUE(d->sites()[0].op == dot);
  EXPECT_EQ(tuningOpName(d->sites()[0].op), "sddmm");
  EXPECT_EQ(opDescription(d->sites()[0].op), ", sddmm dot");
}

TEST(SddmmTunableModule, SchedulesRoundTripThroughTheCompiler) {
  OpDesc op = sddmmOp(ElementType::F16, 64, true, true);
  Expected<TunableModule> module =
      TunableModule::parse(kernelText(op), "t.gnn");
  ASSERT_TRUE(module) << module.message();
  Schedule edge = edgeSchedule(8, 8, 128, 64);
  std::string tuned = module->print({{"m_k", edge}});
  EXPECT_NE(tuned.find("schedule = #gnn.schedule<strategy = edge_parallel, "
                       "vector_width = 8, dim_workers = 8, threads_per_block "
                       "= 128, edges_per_warp = 64, write = staged>"),
            std::string::npos)
      << tuned;
  // The form and the leaky_relu survive, and the site reads back tunable
  // with the written schedule.
  Expected<TunableModule> back = TunableModule::parse(tuned, "t.gnn");
  ASSERT_TRUE(back) << back.message();
  ASSERT_EQ(back->sites().size(), 1u);
  EXPECT_TRUE(back->sites()[0].tunable) << back->sites()[0].note;
  EXPECT_TRUE(back->sites()[0].op == op);
  EXPECT_EQ(back->sites()[0].written, edge);
  Expected<CompiledModule> m = compileGnn(tuned, "t.gnn");
  ASSERT_TRUE(m) << m.message();
  ASSERT_EQ(m->kernels.size(), 1u);
  ASSERT_TRUE(m->kernels[0].op);
  EXPECT_EQ(m->kernels[0].op->form, SddmmForm::Add);
  EXPECT_TRUE(m->kernels[0].op->leakyRelu);
  EXPECT_EQ(m->kernels[0].schedule, edge);
  // Back to vertex_parallel: the edge-parallel fields go.
  Schedule vertex = vertexSchedule(4, 16, 64);
  std::string again = back->print({{"m_k", vertex}});
  EXPECT_EQ(again.find("edge_parallel"), std::string::npos) << again;
  EXPECT_EQ(again.find("edges_per_warp"), std::string::npos) << again;
  Expected<rt::KernelSpec> spec = back->compileKernel("m_k", vertex);
  ASSERT_TRUE(spec) << spec.message();
  EXPECT_EQ(spec->schedule, vertex);
  EXPECT_EQ(spec->launch.blockX, 64u);
  // A kernel not named is left alone.
  std::string none = module->print({{"m_other", vertex}});
  EXPECT_EQ(none.find("schedule"), std::string::npos) << none;
}

//===----------------------------------------------------------------------===//
// The tuning database and compileForGraph
//===----------------------------------------------------------------------===//

TEST(SddmmTuningDb, KeysNameTheOpAndOldLinesAreRefused) {
  TuningEntry e;
  e.key = {"0123456789abcdef", "sddmm", "f16", 64, false, "sm_90"};
  e.schedule = edgeSchedule(8, 8, 256, 128);
  e.predictedSeconds = 2e-4;
  std::string line = formatEntry(e);
  EXPECT_EQ(line, "0123456789abcdef sddmm f16 64 novalues sm_90 -> 2.0000e-04 "
                  "- #gnn.schedule<strategy = edge_parallel, vector_width = "
                  "8, dim_workers = 8, threads_per_block = 256, "
                  "edges_per_warp = 128, write = staged>\n");
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
  // A line of the numeric format is refused, whatever its op.
  for (const char *op : {"spmm", "sddmm", "sddmm_add"}) {
    Expected<TuningEntry> old =
        parseEntry(std::string("0123456789abcdef ") + op +
                   " f32 64 novalues sm_90 -> 4 16 256 1.2e-03 -");
    ASSERT_FALSE(old) << op;
    EXPECT_NE(old.message().find("no longer read: tune again"),
              std::string::npos)
        << old.message();
  }
  Expected<TuningEntry> bad =
      parseEntry("0123456789abcdef gemm f32 64 novalues sm_90 -> 1.2e-03 - "
                 "#gnn.schedule<vector_width = 4>");
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
  TuningChoices choices;
  Expected<CompiledModule> m =
      compileForGraph(kMixed, "mixed.gnn", star, sm90Compile(), &choices);
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ(choices.schedules.size(), 2u);
  ASSERT_TRUE(choices.schedules.count("m_agg"));
  ASSERT_TRUE(choices.schedules.count("m_score"));
  EXPECT_FALSE(choices.schedules.count("m_fixed"));
  expectKernelSchedule(*m, "m_fixed", vertexSchedule(1, 32, 128));
  std::vector<Candidate> ranked =
      rankedFor(star, sddmmOp(ElementType::F32, 64));
  ASSERT_FALSE(ranked.empty());
  const Schedule &best = ranked[chooseCandidate(ranked)].schedule;
  EXPECT_EQ(choices.schedules["m_score"].schedule, best);
  EXPECT_EQ(choices.schedules["m_score"].source, "cost model");
  Expected<rt::KernelSpec> score = findKernel(*m, "m_score");
  ASSERT_TRUE(score) << score.message();
  EXPECT_EQ(score->schedule, best);
  EXPECT_EQ(score->launch.blockX, static_cast<unsigned>(best.threadsPerBlock));
  // The star's hub row: a schedule that cuts it (edge-parallel stretches
  // or neighbour groups).
  EXPECT_NE(best.strategy, Strategy::VertexParallel) << best.str();
}

TEST(SddmmTunedCompile, UsesTheDatabaseEntryOfTheSameOpOnly) {
  graph::CsrGraph star = starGraph(3000);
  std::string path = tempPath("sddmm-db/tuning.db");
  std::remove(path.c_str());
  Expected<TuningDb> db = TuningDb::load(path);
  ASSERT_TRUE(db) << db.message();
  std::string fingerprint = graph::analyzeGraph(star).fingerprintHex;
  // An add-form entry must not serve the dot kernel; the dot entry must.
  TuningEntry add;
  add.key = {fingerprint, "sddmm_add", "f32", 64, false, "sm_90"};
  add.schedule = vertexSchedule(1, 8, 64);
  add.predictedSeconds = 1e-3;
  ASSERT_TRUE(db->store(add));
  TunedCompileOptions options = sm90Compile(path);
  TuningChoices choices;
  Expected<CompiledModule> m =
      compileForGraph(kMixed, "mixed.gnn", star, options, &choices);
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ(choices.schedules["m_score"].source, "cost model");
  EXPECT_NE(choices.schedules["m_score"].schedule, add.schedule);
  TuningEntry dot = add;
  dot.key.op = "sddmm";
  dot.schedule = vertexSchedule(2, 4, 64);
  ASSERT_TRUE(db->store(dot));
  choices = {};
  m = compileForGraph(kMixed, "mixed.gnn", star, options, &choices);
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ(choices.schedules["m_score"].schedule, dot.schedule);
  EXPECT_EQ(choices.schedules["m_score"].source, "database");
  Expected<rt::KernelSpec> score = findKernel(*m, "m_score");
  ASSERT_TRUE(score) << score.message();
  EXPECT_EQ(score->schedule, dot.schedule);
  // The gnn.spmm kernel of the same graph and width is not served by it.
  EXPECT_EQ(choices.schedules["m_agg"].source, "cost model");
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
    OpDesc op = sddmmOp(ElementType::F16, 64, add, add);
    Expected<TunableModule> module =
        TunableModule::parse(kernelText(op), "t.gnn");
    ASSERT_TRUE(module) << module.message();
    for (const Schedule &s :
         {vertexSchedule(8, 8, 256), edgeSchedule(8, 8, 256, 128),
          edgeSchedule(1, 32, 128, 64)}) {
      SCOPED_TRACE(s.str() + (add ? " add" : " dot"));
      Expected<rt::KernelSpec> spec = module->compileKernel("m_k", s);
      ASSERT_TRUE(spec) << spec.message();
      Expected<double> t = measureFor(*runtime, *spec, g);
      ASSERT_TRUE(t) << t.message();
      EXPECT_GT(*t, 0);
    }
  }
  // A gnn.spmm kernel is refused by name.
  Expected<TunableModule> spmm = TunableModule::parse(
      kernelText(spmmProblem(ElementType::F32, 64)), "s.gnn");
  ASSERT_TRUE(spmm) << spmm.message();
  Expected<rt::KernelSpec> spec =
      spmm->compileKernel("m_k", vertexSchedule(4, 16, 256));
  ASSERT_TRUE(spec) << spec.message();
  Expected<double> wrong = measureSddmmSchedule(*runtime, *spec, g);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.message().find("m_k"), std::string::npos) << wrong.message();
}
