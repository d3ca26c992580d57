//===- TuningTest.cpp - gnn.spmm: search, model, plans, database ----------===//
//
// The gnn.spmm search space, the cost model, the plans the model predicts
// with against what the real lowering records, the tuning database and the
// calibration files. The tuning loop itself (TunableModule, tuneModule,
// compileForGraph) is tested in TunerTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "TuningTestUtil.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/Limits.h"
#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/Tuning/SddmmModel.h"
#include "gnnc/Tuning/Tuner.h"
#include "gnnc/Tuning/TuningDb.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

using namespace gnnc;
using namespace gnnc::tuning;
using namespace gnnc::tuning::test;

namespace {

/// The candidates of `all` with strategy `strategy`, in order.
std::vector<Schedule> withStrategy(const std::vector<Schedule> &all,
                                   Strategy strategy) {
  std::vector<Schedule> out;
  for (const Schedule &s : all)
    if (s.strategy == strategy)
      out.push_back(s);
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// The search space
//===----------------------------------------------------------------------===//

TEST(TuningEnumerate, EveryScheduleIsCompleteAndLegal) {
  for (ElementType type :
       {ElementType::F32, ElementType::F16, ElementType::BF16}) {
    for (int64_t width : {1, 6, 32, 64, 100, 128, 256, 1024}) {
      OpDesc op = spmmProblem(type, width);
      SCOPED_TRACE(std::string(elementTypeName(type)) + " width " +
                   std::to_string(width));
      std::vector<Schedule> all = enumerateSchedules(op);
      ASSERT_FALSE(all.empty());
      for (const Schedule &s : all) {
        SCOPED_TRACE(s.str());
        Expected<KernelPlan> plan = planKernel(op, s);
        EXPECT_TRUE(plan) << plan.message();
        EXPECT_TRUE(isCompleteSchedule(s));
        Expected<Schedule> completed = completeSchedule(op, s);
        ASSERT_TRUE(completed) << completed.message();
        EXPECT_EQ(completed->str(), s.str()) << "not complete";
        EXPECT_TRUE(s.vectorWidth == 1 || s.vectorWidth == 2 ||
                    s.vectorWidth == 4 || s.vectorWidth == 8);
        EXPECT_LE(s.vectorWidth * static_cast<int>(elementSize(type)), 16);
        EXPECT_EQ(width % s.vectorWidth, 0);
        EXPECT_EQ(s.dimWorkers & (s.dimWorkers - 1), 0);
        EXPECT_LE(s.dimWorkers, 32);
        EXPECT_EQ(s.threadsPerBlock % 32, 0);
        EXPECT_GE(s.threadsPerBlock, 64);
        EXPECT_LE(s.threadsPerBlock, 512);
        EXPECT_EQ(s.blocksPerSm, 0);
        EXPECT_EQ(s.discBatch, 0);
        EXPECT_EQ(s.accumulate, Accumulate::F32);
        // No lane idles beyond one trip of a row.
        EXPECT_LE(s.dimWorkers,
                  std::max<int64_t>(1, 2 * (width / s.vectorWidth) - 1));
        switch (s.strategy) {
        case Strategy::VertexParallel:
          EXPECT_EQ(s.write, WriteMode::Direct);
          break;
        case Strategy::EdgeParallel:
          EXPECT_EQ(s.write, WriteMode::Staged);
          EXPECT_EQ(s.threadsPerBlock, 256);
          EXPECT_NE(std::find(std::begin(defaults::kTunedEdgesPerWorker),
                              std::end(defaults::kTunedEdgesPerWorker),
                              s.edgesPerWarp),
                    std::end(defaults::kTunedEdgesPerWorker));
          break;
        case Strategy::NeighborGroup:
          EXPECT_EQ(s.write, WriteMode::Atomic);
          EXPECT_EQ(s.threadsPerBlock, 256);
          EXPECT_NE(std::find(std::begin(defaults::kTunedGroupSizes),
                              std::end(defaults::kTunedGroupSizes),
                              s.groupSize),
                    std::end(defaults::kTunedGroupSizes));
          break;
        default:
          ADD_FAILURE() << "a strategy the tuner does not enumerate";
        }
      }
    }
  }
}

TEST(TuningEnumerate, VertexParallelThenEdgeParallelThenNeighbourGroups) {
  OpDesc op = spmmProblem(ElementType::F32, 64);
  std::vector<Schedule> all = enumerateSchedules(op);
  EXPECT_EQ(enumerateSchedules(op), all); // a stable order
  // f32 width 64: vector widths 4 (dim_workers 16 down to 1), 2 and 1 (32
  // down to 1), each with 256, 128, 512 and 64 threads.
  std::vector<Schedule> vertex = withStrategy(all, Strategy::VertexParallel);
  ASSERT_EQ(vertex.size(), (5u + 6u + 6u) * 4u);
  EXPECT_EQ(vertex[0], vertexSchedule(4, 16, 256));
  EXPECT_EQ(vertex[1], vertexSchedule(4, 16, 128));
  EXPECT_EQ(vertex[2], vertexSchedule(4, 16, 512));
  EXPECT_EQ(vertex[3], vertexSchedule(4, 16, 64));
  EXPECT_EQ(vertex[4], vertexSchedule(4, 8, 256));
  EXPECT_EQ(vertex[20], vertexSchedule(2, 32, 256));
  EXPECT_EQ(vertex.back(), vertexSchedule(1, 1, 64));
  // Then edge_parallel: vector widths 4, 2, 1 x items 512, 256, 128, 64.
  // Then each of them with the tuned edge batches below its own (8), after
  // the neighbour groups.
  std::vector<Schedule> edge = withStrategy(all, Strategy::EdgeParallel);
  ASSERT_EQ(edge.size(), 36u);
  Schedule batched = edgeSchedule(4, 16, 256, 512);
  batched.edgeBatch = 4;
  EXPECT_EQ(edge[12], batched);
  batched.edgeBatch = 2;
  EXPECT_EQ(edge[13], batched);
  EXPECT_EQ(edge[0], edgeSchedule(4, 16, 256, 512));
  EXPECT_EQ(edge[1], edgeSchedule(4, 16, 256, 256));
  EXPECT_EQ(edge[2], edgeSchedule(4, 16, 256, 128));
  EXPECT_EQ(edge[3], edgeSchedule(4, 16, 256, 64));
  EXPECT_EQ(edge[4], edgeSchedule(2, 32, 256, 512));
  EXPECT_EQ(edge[11], edgeSchedule(1, 32, 256, 64));
  // Then neighbor_group: vector widths 4, 2, 1 x the tuned group sizes,
  // in their order; then each of those with the tuned edge batches below
  // its own (8 at every vector width here, capped at the group's size).
  std::vector<Schedule> groups = withStrategy(all, Strategy::NeighborGroup);
  const size_t sizes = std::size(defaults::kTunedGroupSizes);
  size_t smaller = 0;
  for (int32_t size : defaults::kTunedGroupSizes)
    for (int32_t batch : defaults::kTunedEdgeBatches)
      smaller += batch < std::min(8, size);
  ASSERT_EQ(groups.size(), 3 * (sizes + smaller));
  for (size_t i = 0; i < 3 * sizes; ++i)
    EXPECT_EQ(groups[i].edgeBatch, 0) << i;
  EXPECT_EQ(groups[3 * sizes], [] {
    Schedule s = groupSchedule(4, 16, 256, 32);
    s.edgeBatch = defaults::kTunedEdgeBatches[0];
    return s;
  }());
  for (size_t i = 0; i < sizes; ++i)
    EXPECT_EQ(groups[i],
              groupSchedule(4, 16, 256, defaults::kTunedGroupSizes[i]));
  EXPECT_EQ(groups[0], groupSchedule(4, 16, 256, 32));
  ASSERT_EQ(all.size(), vertex.size() + edge.size() + groups.size());
  // The default batches by strategy, then the smaller batches of edge
  // workers and groups.
  const size_t plainEdge = 12, plainGroups = 3 * sizes;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i >= vertex.size() + plainEdge + plainGroups) {
      EXPECT_GT(all[i].edgeBatch, 0) << i;
      continue;
    }
    Strategy expected = i < vertex.size() ? Strategy::VertexParallel
                        : i < vertex.size() + plainEdge
                            ? Strategy::EdgeParallel
                            : Strategy::NeighborGroup;
    EXPECT_EQ(all[i].strategy, expected) << i;
    EXPECT_EQ(all[i].edgeBatch, 0) << i;
  }
  // Their text forms: the attribute's, and the tables' short one.
  EXPECT_EQ(groups[0].str(),
            "#gnn.schedule<strategy = neighbor_group, vector_width = 4, "
            "group_size = 32, dim_workers = 16, threads_per_block = 256, "
            "write = atomic>");
  EXPECT_EQ(shortText(groups[0]), "vw=4 dw=16 tpb=256 gs=32");
  EXPECT_EQ(edge[1].str(),
            "#gnn.schedule<strategy = edge_parallel, vector_width = 4, "
            "dim_workers = 16, threads_per_block = 256, edges_per_warp = 256, "
            "write = staged>");
  EXPECT_EQ(shortText(edgeSchedule(4, 16, 256, 256, WriteMode::Staged, 4)),
            "vw=4 dw=16 tpb=256 ep=256 bps=4");
  EXPECT_EQ(vertex[0].str(), "#gnn.schedule<vector_width = 4, dim_workers = "
                             "16, threads_per_block = 256>");
  EXPECT_EQ(shortText(vertex[0]), "vw=4 dw=16 tpb=256");
}

TEST(TuningEnumerate, PaddedRowsTakeVectorsThatDivideTheStride) {
  // f16, 41 features in rows of 48: 8-element loads are legal (6 chunks,
  // the last one partly padding), for every strategy.
  OpDesc op = spmmProblem(ElementType::F16, 41, false, 48);
  Expected<TunableModule> module =
      TunableModule::parse(kernelText(op), "padded.gnn");
  ASSERT_TRUE(module) << module.message();
  ASSERT_EQ(module->sites().size(), 1u);
  const OpDesc &site = module->sites()[0].op;
  EXPECT_EQ(site.width, 41);
  EXPECT_EQ(site.stride(), 48);
  EXPECT_TRUE(site == op);
  std::vector<Schedule> all = enumerateSchedules(site);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().vectorWidth, 8);
  Expected<KernelPlan> front = planKernel(site, all.front());
  ASSERT_TRUE(front) << front.message();
  EXPECT_EQ(front->mapping.chunks, 6);
  // Every one compiles, with the plan the model uses.
  bool strategies[3] = {};
  for (const Schedule &s : all) {
    SCOPED_TRACE(s.str());
    EXPECT_EQ(48 % s.vectorWidth, 0);
    strategies[static_cast<int>(s.strategy)] = true;
    expectModelPlanIsLowered(op, s);
  }
  EXPECT_TRUE(strategies[0] && strategies[1] && strategies[2]);
  // Without the padding, 41 takes scalar loads only.
  OpDesc unpadded = op;
  unpadded.rowStride = 41;
  Expected<KernelPlan> plan = planKernel(unpadded, vertexSchedule(8, 8, 256));
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.message().find("divide the feature width"), std::string::npos)
      << plan.message();
  for (const Schedule &s : enumerateSchedules(unpadded))
    EXPECT_EQ(s.vectorWidth, 1) << s.str();
  OpDesc narrow = op;
  narrow.rowStride = 44;
  plan = planKernel(narrow, vertexSchedule(8, 8, 256));
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.message().find("divide the row stride"), std::string::npos)
      << plan.message();
}

TEST(TuningEnumerate, AttentionRunsWholeRowsAndTriesSmallerEdgeBatches) {
  OpDesc op = spmmProblem(ElementType::F32, 64);
  op.attention = true;
  op.leakyRelu = static_cast<double>(0.2f); // as the f32 attribute reads
  Expected<TunableModule> module =
      TunableModule::parse(kernelText(op), "attention.gnn");
  ASSERT_TRUE(module) << module.message();
  ASSERT_EQ(module->sites().size(), 1u);
  const OpDesc &site = module->sites()[0].op;
  EXPECT_TRUE(site == op);
  EXPECT_EQ(tuningOpName(site), "spmm_attention");
  bool batches[9] = {};
  for (const Schedule &s : enumerateSchedules(site)) {
    SCOPED_TRACE(s.str());
    EXPECT_NE(s.strategy, Strategy::EdgeParallel);
    batches[s.edgeBatch] = true;
    expectModelPlanIsLowered(op, s);
  }
  EXPECT_TRUE(batches[0] && batches[2] && batches[4]);
}

//===----------------------------------------------------------------------===//
// The plans the model predicts with are the lowering's
//===----------------------------------------------------------------------===//

TEST(TuningPlan, TheModelsPlanIsWhatTheLoweringRecords) {
  // The thread mappings the model's terms are built on, for a few
  // schedules whose numbers are worked out by hand.
  OpDesc w64 = spmmProblem(ElementType::F32, 64);
  Expected<KernelPlan> plan = planKernel(w64, vertexSchedule(4, 16, 256));
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->mapping.lanes, 16);
  EXPECT_EQ(plan->mapping.rowsPerBlock, 16);
  EXPECT_EQ(plan->mapping.chunks, 16);
  EXPECT_EQ(plan->mapping.chunksPerLane, 1);
  EXPECT_EQ(plan->mapping.edgeUnroll, 8);
  EXPECT_EQ(plan->launch.sharedBytes, 0);
  plan = planKernel(w64, vertexSchedule(4, 1, 256));
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->mapping.chunksPerLane, 16);
  EXPECT_EQ(plan->mapping.edgeUnroll, 1);
  // Width 16: 4 chunks over 2 lanes, 2 chunks of 4 per lane, 64 / 8 = 8
  // neighbours per batch for both strategies; edge_parallel keeps 128
  // workers' row ends (129 each) in shared memory.
  OpDesc w16 = spmmProblem(ElementType::F32, 16);
  plan = planKernel(w16, vertexSchedule(4, 2, 256));
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->mapping.edgeUnroll, 8);
  plan = planKernel(w16, edgeSchedule(4, 2, 256, 128));
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->mapping.lanes, 2);
  EXPECT_EQ(plan->mapping.rowsPerBlock, 128);
  EXPECT_EQ(plan->mapping.chunksPerLane, 2);
  EXPECT_EQ(plan->mapping.edgeUnroll, 8);
  EXPECT_EQ(plan->mapping.itemsPerWorker, 128);
  EXPECT_EQ(plan->launch.sharedBytes, 128 * 129 * 4);
  ASSERT_EQ(plan->followUps.size(), 1u);
  ASSERT_TRUE(plan->workspace);

  // Each of them, and a schedule of every strategy and write mode, on
  // plain, weighted, padded and scaled rows, compiled by the real lowering.
  struct Case {
    OpDesc op;
    Schedule schedule;
  };
  OpDesc weighted = spmmProblem(ElementType::F16, 64, /*values=*/true);
  OpDesc padded = spmmProblem(ElementType::F16, 41, false, 48);
  OpDesc scaled = spmmProblem(ElementType::BF16, 32);
  scaled.scale = DegreeScale::Both;
  OpDesc wide = spmmProblem(ElementType::F32, 256);
  std::vector<Case> cases = {
      {w64, vertexSchedule(4, 16, 256)},
      {w64, vertexSchedule(4, 1, 256)},
      {w64, vertexSchedule(2, 32, 128, /*bps=*/4)},
      {w16, vertexSchedule(4, 2, 256)},
      {w16, edgeSchedule(4, 2, 256, 128)},
      {w64, edgeSchedule(4, 16, 256, 256, WriteMode::Staged, /*bps=*/2)},
      {w64, edgeSchedule(4, 16, 256, 64, WriteMode::Atomic)},
      {w64, edgeSchedule(2, 32, 128, 32, WriteMode::Shared)},
      {w64, groupSchedule(4, 16, 256, 32)},
      {w64, groupSchedule(1, 32, 64, 8)},
      {weighted, vertexSchedule(8, 8, 256)},
      {weighted, edgeSchedule(8, 8, 256, 128)},
      {weighted, edgeSchedule(2, 32, 256, 64, WriteMode::Atomic)},
      {weighted, groupSchedule(8, 8, 256, 16)},
      {padded, vertexSchedule(8, 8, 256)},
      {padded, edgeSchedule(8, 8, 256, 64, WriteMode::Shared)},
      {padded, groupSchedule(4, 16, 128, 64)},
      {scaled, vertexSchedule(8, 4, 256)},
      {scaled, edgeSchedule(4, 8, 256, 128)},
      {wide, vertexSchedule(4, 32, 1024)},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(elementTypeName(c.op.type)) + " width " +
                 std::to_string(c.op.width));
    expectModelPlanIsLowered(c.op, c.schedule);
  }
}

TEST(TuningPlan, EveryEnumeratedScheduleCompilesWithThePlanTheModelUses) {
  size_t compiled = 0;
  for (ElementType type : {ElementType::F32, ElementType::F16}) {
    for (bool values : {false, true}) {
      OpDesc op = spmmProblem(type, 64, values);
      SCOPED_TRACE(std::string(elementTypeName(type)) +
                   (values ? " with values" : ""));
      for (const Schedule &s : enumerateSchedules(op)) {
        expectModelPlanIsLowered(op, s);
        ++compiled;
      }
    }
  }
  EXPECT_GT(compiled, 300u);
}

//===----------------------------------------------------------------------===//
// Legality: the plans refuse what the compiler refuses
//===----------------------------------------------------------------------===//

TEST(TuningLegality, EdgeParallelLimitsAreTheCompilers) {
  OpDesc op = spmmProblem(ElementType::F16, 32);
  // 64 workers of 4 lanes x 2049 row ends x 4 bytes = 512 KiB > 96 KiB.
  expectCompilerAgrees(op, edgeSchedule(8, 4, 256, 2048), "shared memory");
  // 64 x 257 x 4 = 65,792 bytes fits one block...
  expectCompilerAgrees(op, edgeSchedule(8, 4, 256, 256), "");
  // ... but not four on one SM (160 KiB).
  expectCompilerAgrees(
      op, edgeSchedule(8, 4, 256, 256, WriteMode::Staged, /*bps=*/4),
      "bytes an SM holds");
  expectCompilerAgrees(
      op, edgeSchedule(8, 4, 256, 64, WriteMode::Staged, /*bps=*/4), "");
  // 16 blocks of 256 threads exceed 2048 threads per SM.
  expectCompilerAgrees(op, vertexSchedule(8, 4, 256, /*bps=*/16), "2048");
  expectCompilerAgrees(op, vertexSchedule(8, 4, 256, /*bps=*/8), "");
  expectCompilerAgrees(op, edgeSchedule(8, 4, 256, 4), "edges_per_warp");
  // write = shared adds two f32 rows per worker to the row ends: 32
  // workers x 2 x 512 x 4 bytes.
  expectCompilerAgrees(spmmProblem(ElementType::F32, 512),
                       edgeSchedule(4, 32, 1024, 64, WriteMode::Shared),
                       "write = shared keeps two f32 rows per worker");
  expectCompilerAgrees(spmmProblem(ElementType::F32, 256),
                       edgeSchedule(4, 32, 1024, 64, WriteMode::Shared), "");
  // The strategies' write modes.
  Schedule vertexAtomic = vertexSchedule(8, 4, 256);
  vertexAtomic.write = WriteMode::Atomic;
  expectCompilerAgrees(op, vertexAtomic, "vertex_parallel writes each row");
  Schedule groupsStaged = groupSchedule(8, 4, 256, 32);
  groupsStaged.write = WriteMode::Staged;
  expectCompilerAgrees(op, groupsStaged, "use write = atomic");
}

TEST(TuningLegality, VectorAndGroupLimitsAreTheCompilers) {
  OpDesc f32 = spmmProblem(ElementType::F32, 64);
  expectCompilerAgrees(f32, vertexSchedule(8, 8, 256), "16 bytes");
  expectCompilerAgrees(spmmProblem(ElementType::F32, 6),
                       vertexSchedule(4, 2, 256),
                       "does not divide the feature width");
  expectCompilerAgrees(spmmProblem(ElementType::F32, 256),
                       vertexSchedule(1, 1, 256), "accumulators");
  // Too many groups' partial sums for shared memory: 512 groups x 256
  // features x 4 bytes.
  expectCompilerAgrees(spmmProblem(ElementType::F32, 256),
                       groupSchedule(4, 2, 1024, 32), "shared memory");
  expectCompilerAgrees(spmmProblem(ElementType::F32, 256),
                       groupSchedule(4, 16, 1024, 32), "");
  // Neighbour groups with merge-path items.
  Schedule mixed = groupSchedule(4, 16, 256, 32);
  mixed.edgesPerWarp = 64;
  expectCompilerAgrees(f32, mixed,
                       "edges_per_warp applies to the "
                       "edge_parallel strategy");
  // A maximum cannot be added atomically.
  OpDesc max = f32;
  max.reduce = Reduce::Max;
  expectCompilerAgrees(max, groupSchedule(4, 16, 256, 32), "atomicAdd");
  expectCompilerAgrees(max, edgeSchedule(4, 16, 256, 64, WriteMode::Atomic),
                       "cannot take a maximum");
  expectCompilerAgrees(max, edgeSchedule(4, 16, 256, 64), "");
}

TEST(TuningLegality, TheCompilerCompletesSchedulesAsTheTunerDoes) {
  // A schedule that leaves fields open has no plan until it is completed;
  // the compiler completes it exactly as completeSchedule does (the tuner's
  // defaults for each vector width).
  OpDesc op = spmmProblem(ElementType::F16, 64, /*values=*/true);
  Schedule vw2;
  vw2.vectorWidth = 2;
  Schedule edge;
  edge.strategy = Strategy::EdgeParallel;
  Schedule edgeAtomic = edge;
  edgeAtomic.write = WriteMode::Atomic;
  edgeAtomic.vectorWidth = 4;
  Schedule groups;
  groups.strategy = Strategy::NeighborGroup;
  groups.groupSize = 8;
  Schedule lanes;
  lanes.dimWorkers = 4;
  lanes.blocksPerSm = 2;
  for (const Schedule &s : {Schedule{}, vw2, edge, edgeAtomic, groups, lanes}) {
    SCOPED_TRACE(s.str());
    Expected<KernelPlan> open = planKernel(op, s);
    ASSERT_FALSE(open);
    EXPECT_NE(open.message().find("leaves parameters open"), std::string::npos)
        << open.message();
    Expected<Schedule> complete = completeSchedule(op, s);
    ASSERT_TRUE(complete) << complete.message();
    EXPECT_TRUE(isCompleteSchedule(*complete));
    Expected<KernelPlan> plan = planWithDefaults(op, s);
    ASSERT_TRUE(plan) << plan.message();
    EXPECT_EQ(plan->schedule, *complete);
    Expected<CompiledModule> compiled = compileGnn(kernelText(op, s), "t.gnn");
    ASSERT_TRUE(compiled) << compiled.message();
    ASSERT_EQ(compiled->kernels.size(), 1u);
    EXPECT_EQ(compiled->kernels[0].schedule, *complete);
    expectPlanMatchesLowering(op, *plan, compiled->kernels[0],
                              compiled->loweredIR);
  }
  // The defaults of the enumeration: the widest vector that divides the
  // row, one trip over it, 256 threads.
  Expected<Schedule> defaults = completeSchedule(op, Schedule{});
  ASSERT_TRUE(defaults);
  EXPECT_EQ(*defaults, vertexSchedule(8, 8, 256));
  Expected<Schedule> edgeDefaults = completeSchedule(op, edge);
  ASSERT_TRUE(edgeDefaults);
  EXPECT_EQ(*edgeDefaults, edgeSchedule(8, 8, 256, 64));
  Expected<Schedule> groupDefaults = completeSchedule(op, groups);
  ASSERT_TRUE(groupDefaults);
  EXPECT_EQ(*groupDefaults, groupSchedule(8, 8, 256, 8));
}

//===----------------------------------------------------------------------===//
// The cost model
//===----------------------------------------------------------------------===//

TEST(TuningCostModel, TheRegistryKnowsSpmmAndSddmm) {
  EXPECT_EQ(costModelFor(OpKind::Spmm), &predictSpmm);
  EXPECT_EQ(costModelFor(OpKind::Sddmm), &predictSddmm);
  EXPECT_EQ(costModelFor(OpKind::EdgeSoftmax), nullptr);
  EXPECT_EQ(costModelFor(OpKind::EdgeSoftmaxGrad), nullptr);
  // No model, no ranking.
  OpDesc softmax;
  softmax.kind = OpKind::EdgeSoftmax;
  softmax.width = 8;
  softmax.rowStride = 8;
  GpuModel gpu = sm90();
  Expected<Schedule> s = completeSchedule(softmax, Schedule{});
  ASSERT_TRUE(s) << s.message();
  ASSERT_TRUE(planKernel(softmax, *s));
  EXPECT_TRUE(
      rankSchedules(gpu, profileOf(starGraph(100), gpu, softmax), softmax, {*s})
          .empty());
}

TEST(TuningCostModel, MoreBandwidthIsNeverSlower) {
  graph::CsrGraph g = graph::generateRmat(12, 16, 3);
  OpDesc op = spmmProblem();
  GpuModel slow = sm90(), fast = sm90();
  fast.dramBytesPerSecond *= 2;
  fast.l2BytesPerSecond *= 2;
  graph::GraphProfile profile = profileOf(g, slow, op);
  for (const Schedule &s : enumerateSchedules(op)) {
    SCOPED_TRACE(s.str());
    Prediction a = predictWith(slow, profile, op, s);
    Prediction b = predictWith(fast, profile, op, s);
    EXPECT_LE(b.seconds, a.seconds);
    EXPECT_LT(b.bandwidthSeconds, a.bandwidthSeconds);
    EXPECT_GT(a.seconds, 0);
    // The prediction carries the plan it was made with.
    EXPECT_EQ(a.plan.schedule, s);
  }
}

TEST(TuningCostModel, HubRowRaisesTheLatencyTerm) {
  GpuModel gpu = sm90();
  OpDesc op = spmmProblem();
  graph::CsrGraph uniform = graph::generateUniformRandom(20000, 20000, 16, 5);
  graph::CsrGraph star = starGraph(20000);
  Schedule s = vertexSchedule(4, 16, 256);
  Prediction u = predictWith(gpu, profileOf(uniform, gpu, op), op, s);
  Prediction h = predictWith(gpu, profileOf(star, gpu, op), op, s);
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
    OpDesc op = spmmProblem(ElementType::F32, width);
    // The same schedule for every width: more bytes and no faster. (The
    // best schedule of a wider op may be faster: narrow rows limit the
    // lanes and so the edge batch.)
    Prediction pr =
        predictWith(gpu, profileOf(g, gpu, op), op, vertexSchedule(4, 4, 256));
    EXPECT_GT(pr.dramBytes, lastBytes) << width;
    EXPECT_GE(pr.seconds, lastSeconds) << width;
    lastBytes = pr.dramBytes;
    lastSeconds = pr.seconds;
  }
}

TEST(TuningCostModel, NoReuseEstimateMeansEveryGatherMisses) {
  GpuModel gpu = sm90();
  graph::CsrGraph g = graph::generateRmat(10, 16, 2);
  OpDesc op = spmmProblem();
  graph::AnalysisOptions options = profileOptionsFor(gpu, op);
  graph::GraphProfile with = graph::analyzeGraph(g, options);
  options.estimateReuse = false;
  graph::GraphProfile without = graph::analyzeGraph(g, options);
  Schedule s = vertexSchedule(4, 16, 256);
  EXPECT_GE(predictWith(gpu, without, op, s).dramBytes,
            predictWith(gpu, with, op, s).dramBytes);
  EXPECT_GT(predictWith(gpu, with, op, s).gatherHitRate, 0);
  EXPECT_EQ(predictWith(gpu, without, op, s).gatherHitRate, 0);
}

TEST(TuningCostModel, NeighbourGroupsAreModelled) {
  // A skewed graph: neighbour groups are counted exactly by the analysis,
  // the plan keeps one f32 row per group in shared memory, the model adds
  // a second launch and the zeroing of Y, and a group of 8 neighbours costs
  // more waves than one of 32.
  graph::CsrGraph g = graph::generateRmat(14, 16, 3);
  OpDesc op = spmmProblem();
  GpuModel gpu = sm90();
  graph::GraphProfile profile = profileOf(g, gpu, op);
  int64_t groups32 = 0;
  for (int64_t r = 0; r < g.numRows; ++r)
    groups32 += (g.degree(r) + 31) / 32;
  EXPECT_EQ(profile.neighbourGroups.at(32), groups32);
  Schedule big = groupSchedule(4, 16, 256, 32);
  Schedule small = groupSchedule(4, 16, 256, 8);
  Expected<KernelPlan> plan = planKernel(op, big);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->launch.sharedBytes, 16 * 64 * 4);
  ASSERT_EQ(plan->preludes.size(), 1u);
  EXPECT_EQ(plan->preludes[0].suffix, "_init");
  Prediction pb = predictWith(gpu, profile, op, big);
  Prediction ps = predictWith(gpu, profile, op, small);
  Prediction vertex = predictWith(gpu, profile, op, vertexSchedule(4, 16, 256));
  EXPECT_DOUBLE_EQ(pb.launchSeconds, 2 * vertex.launchSeconds);
  EXPECT_GT(pb.dramBytes, vertex.dramBytes);
  EXPECT_GT(ps.waves, pb.waves);
  EXPECT_GT(pb.seconds, 0);
}

TEST(TuningCostModel, EdgeParallelHasNoHubTerm) {
  GpuModel gpu = sm90();
  OpDesc op = spmmProblem();
  // Without a reuse estimate every gather misses on both graphs, so only
  // the degrees differ.
  graph::AnalysisOptions options = profileOptionsFor(gpu, op);
  options.estimateReuse = false;
  graph::GraphProfile uniform = graph::analyzeGraph(
      graph::generateUniformRandom(20000, 20000, 16, 5), options);
  graph::GraphProfile star = graph::analyzeGraph(starGraph(20000), options);
  ASSERT_EQ(uniform.numRows, star.numRows);
  ASSERT_GT(star.maxDegree, 100 * uniform.maxDegree);
  Schedule vertex = vertexSchedule(4, 16, 256);
  for (int items : {64, 128, 256}) {
    SCOPED_TRACE(items);
    Schedule ep = edgeSchedule(4, 16, 256, items);
    Prediction u = predictWith(gpu, uniform, op, ep);
    Prediction h = predictWith(gpu, star, op, ep);
    // One worker's chain does not depend on any row's degree.
    EXPECT_DOUBLE_EQ(h.latencySeconds, u.latencySeconds);
    EXPECT_EQ(h.warpImbalance, 1);
    // The hub row sets the vertex-parallel latency, far above it.
    Prediction v = predictWith(gpu, star, op, vertex);
    EXPECT_GT(v.latencySeconds, 10 * h.latencySeconds);
    // Two launches and the workspace traffic.
    EXPECT_DOUBLE_EQ(u.launchSeconds, 2 * gpu.launchSeconds);
    EXPECT_GT(u.workspaceBytes, 0);
    EXPECT_GT(u.dramBytes, predictWith(gpu, uniform, op, vertex).dramBytes);
  }
}

//===----------------------------------------------------------------------===//
// Ranking and choosing
//===----------------------------------------------------------------------===//

TEST(TuningRank, StarGraphPrefersMoreLanesAndLongerBatches) {
  GpuModel gpu = sm90();
  OpDesc op = spmmProblem();
  graph::CsrGraph star = starGraph(200000);
  graph::GraphProfile profile = profileOf(star, gpu, op);
  std::vector<Candidate> ranked =
      rankSchedules(gpu, profile, op, enumerateSchedules(op));
  ASSERT_EQ(ranked.size(), enumerateSchedules(op).size());
  const Candidate &top = ranked[0];
  EXPECT_EQ(top.prediction.plan.mapping.edgeUnroll, 8) << top.schedule.str();
  EXPECT_GE(top.schedule.dimWorkers, 8) << top.schedule.str();
  for (size_t i = 1; i < ranked.size(); ++i)
    EXPECT_LE(ranked[i - 1].prediction.seconds, ranked[i].prediction.seconds);
  for (const Candidate &c : ranked) {
    EXPECT_EQ(c.prediction.plan.schedule, c.schedule);
    EXPECT_FALSE(c.measuredSeconds);
    EXPECT_TRUE(c.note.empty());
  }
  // One lane per row: a batch of one neighbour, far slower.
  Prediction oneLane = predictWith(gpu, profile, op, vertexSchedule(4, 1, 256));
  EXPECT_GT(oneLane.seconds, 4 * top.prediction.seconds);
  EXPECT_EQ(chooseCandidate(ranked), 0u);
  ranked[2].measuredSeconds = 1e-6;
  ranked[1].measuredSeconds = 2e-6;
  EXPECT_EQ(chooseCandidate(ranked), 2u);
}

TEST(TuningRank, IllegalSchedulesAreLeftOut) {
  GpuModel gpu = sm90();
  OpDesc op = spmmProblem();
  graph::GraphProfile profile = profileOf(starGraph(1000), gpu, op);
  std::vector<Candidate> ranked = rankSchedules(
      gpu, profile, op,
      {vertexSchedule(8, 8, 256), vertexSchedule(4, 16, 256), Schedule{}});
  ASSERT_EQ(ranked.size(), 1u);
  EXPECT_EQ(ranked[0].schedule, vertexSchedule(4, 16, 256));
}

// On a skewed graph the model picks a strategy that splits long rows
// (edge-parallel workers or neighbour groups), never vertex_parallel, whose
// hub row sets its latency. (Measured on R-MAT 16 and 17 at width 64, the
// best kernel is one of those two, by type.)
TEST(TuningRank, PowerLawGraphSplitsLongRows) {
  GpuModel gpu = sm90();
  OpDesc op = spmmProblem();
  graph::CsrGraph g = graph::generateRmat(14, 16, 7);
  graph::GraphProfile profile = profileOf(g, gpu, op);
  ASSERT_GT(profile.maxDegree, 50 * profile.meanDegree);
  std::vector<Candidate> ranked =
      rankSchedules(gpu, profile, op, enumerateSchedules(op));
  ASSERT_FALSE(ranked.empty());
  EXPECT_NE(ranked[0].schedule.strategy, Strategy::VertexParallel)
      << ranked[0].schedule.str() << ": " << ranked[0].prediction.why;
}

TEST(TuningRank, UniformShortRowsKeepVertexParallelCompetitive) {
  GpuModel gpu = sm90();
  OpDesc op = spmmProblem();
  graph::CsrGraph g = graph::generateUniformRandom(20000, 20000, 8, 3);
  graph::GraphProfile profile = profileOf(g, gpu, op);
  std::vector<Candidate> ranked =
      rankSchedules(gpu, profile, op, enumerateSchedules(op));
  ASSERT_FALSE(ranked.empty());
  // With no long row there is nothing for edge_parallel to split; it still
  // pays the merge-path search, the workspace and a second launch, so the
  // best vertex_parallel schedule is within 2x of the best of all.
  const Candidate *bestVertex = nullptr;
  for (const Candidate &c : ranked)
    if (c.schedule.strategy == Strategy::VertexParallel) {
      bestVertex = &c;
      break;
    }
  ASSERT_TRUE(bestVertex);
  EXPECT_LE(bestVertex->prediction.seconds, 2 * ranked[0].prediction.seconds)
      << bestVertex->schedule.str() << " vs " << ranked[0].schedule.str();
}

TEST(TuningRank, MeasurementComparesTheStrategiesFirst) {
  // Ranked: three vertex-parallel schedules, then two edge-parallel ones.
  std::vector<Candidate> ranked;
  for (int items : {0, 0, 0, 256, 128}) {
    Prediction p;
    p.seconds = 1e-4 * (1.0 + 0.01 * ranked.size());
    Schedule s =
        items ? edgeSchedule(4, 16, 256, items) : vertexSchedule(4, 16, 256);
    ranked.push_back({s, p, std::nullopt, ""});
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
  three.push_back({groupSchedule(4, 16, 256, 32), far, std::nullopt, ""});
  EXPECT_EQ(measurementOrder(three, 3), (std::vector<size_t>{0, 3, 5}));
  EXPECT_EQ(measurementOrder(three, 2), (std::vector<size_t>{0, 3}));
  // With everyStrategy, each strategy's leader is measured even beyond k.
  EXPECT_EQ(measurementOrder(three, 1, true), (std::vector<size_t>{0, 3, 5}));
  EXPECT_EQ(measurementOrder(three, 4, true),
            (std::vector<size_t>{0, 1, 3, 5}));
  // A strategy predicted far behind (over 2x) is not pulled forward, unless
  // every strategy is asked for.
  ranked[3].prediction.seconds = ranked[4].prediction.seconds = 2.5e-4;
  EXPECT_EQ(measurementOrder(ranked, 2), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(measurementOrder(ranked, 2, true), (std::vector<size_t>{0, 3}));
  // gnn.sddmm's groups of one edge count as a strategy of their own.
  std::vector<Candidate> groups;
  for (int size : {8, 4, 1}) {
    Prediction p;
    p.seconds = 1e-4 * (1.0 + 0.01 * groups.size());
    Candidate c{groupSchedule(4, 16, 256, size), p, std::nullopt, ""};
    c.edgeGroups = size == 1;
    groups.push_back(c);
  }
  EXPECT_EQ(measurementOrder(groups, 2), (std::vector<size_t>{0, 2}));
  // One strategy only: the plain top k.
  ranked.resize(3);
  EXPECT_EQ(measurementOrder(ranked, 2), (std::vector<size_t>{0, 1}));
  EXPECT_TRUE(measurementOrder({}, 3).empty());
}

//===----------------------------------------------------------------------===//
// The tuning database
//===----------------------------------------------------------------------===//

TEST(TuningDb, RoundTrip) {
  std::string path = tempPath("db/sub/tuning.db");
  std::remove(path.c_str());
  Expected<TuningDb> db = TuningDb::load(path);
  ASSERT_TRUE(db) << db.message();
  EXPECT_TRUE(db->entries().empty());
  TuningEntry a;
  a.key = {"0123456789abcdef", "spmm", "f16", 64, true, "sm_90"};
  a.schedule = vertexSchedule(8, 8, 256);
  a.predictedSeconds = 1.25e-3;
  EXPECT_EQ(formatEntry(a),
            "0123456789abcdef spmm f16 64 values sm_90 -> 1.2500e-03 - "
            "#gnn.schedule<vector_width = 8, dim_workers = 8, "
            "threads_per_block = 256>\n");
  TuningEntry b = a;
  b.schedule = vertexSchedule(4, 16, 128);
  b.measuredSeconds = 2.5e-4;
  EXPECT_EQ(formatEntry(b),
            "0123456789abcdef spmm f16 64 values sm_90 -> 1.2500e-03 "
            "2.5000e-04 #gnn.schedule<vector_width = 4, dim_workers = 16, "
            "threads_per_block = 128>\n");
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
  other = a.key;
  other.edgeValues = false;
  EXPECT_FALSE(again->lookup(other));
  other = a.key;
  other.arch = "sm_80";
  EXPECT_FALSE(again->lookup(other));

  // Every schedule the tuner may store reads back as itself: the text after
  // the times is the schedule's own text form, which parseSchedule reads.
  Schedule halves = vertexSchedule(8, 8, 256);
  halves.discBatch = 32;
  halves.accumulate = Accumulate::F16;
  for (const Schedule &s :
       {edgeSchedule(4, 16, 256, 256, WriteMode::Staged, /*bps=*/4),
        edgeSchedule(2, 32, 128, 64, WriteMode::Atomic),
        edgeSchedule(8, 8, 256, 128, WriteMode::Shared),
        groupSchedule(4, 16, 256, 32), halves}) {
    SCOPED_TRACE(s.str());
    TuningEntry c = a;
    c.schedule = s;
    std::string line = formatEntry(c);
    ASSERT_EQ(line.back(), '\n');
    line.pop_back();
    const std::string times = "-> 1.2500e-03 - ";
    size_t at = line.find(times);
    ASSERT_NE(at, std::string::npos) << line;
    EXPECT_EQ(line.substr(at + times.size()), s.str());
    Expected<Schedule> text = parseSchedule(line.substr(at + times.size()));
    ASSERT_TRUE(text) << text.message();
    EXPECT_EQ(*text, s);
    Expected<TuningEntry> parsed = parseEntry(line);
    ASSERT_TRUE(parsed) << parsed.message();
    EXPECT_EQ(parsed->schedule, s);
    EXPECT_EQ(parsed->key, c.key);
    EXPECT_FALSE(parsed->measuredSeconds);
    EXPECT_NEAR(parsed->predictedSeconds, 1.25e-3, 1e-9);
  }
}

TEST(TuningDb, OldNumericLinesAreRefusedWithAMessage) {
  // The format before schedules were stored as text: vector width, lanes,
  // threads (edges per worker, blocks per SM, group size), then the times.
  for (const char *line :
       {"0123456789abcdef spmm f32 64 novalues sm_90 -> 4 16 256 1.2e-03 -",
        "0123456789abcdef spmm f32 64 novalues sm_90 -> 4 16 256 256 4 "
        "1.2e-03 -",
        "0123456789abcdef spmm f32 64 novalues sm_90 -> 4 16 256 0 0 32 "
        "1.2e-03 2e-4"}) {
    SCOPED_TRACE(line);
    Expected<TuningEntry> old = parseEntry(line);
    ASSERT_FALSE(old);
    EXPECT_NE(old.message().find("expected the schedule as "
                                 "'#gnn.schedule<...>' after the times"),
              std::string::npos)
        << old.message();
    EXPECT_NE(old.message().find("no longer read: tune again"),
              std::string::npos)
        << old.message();
  }
  // The schedule's own rules hold for a stored schedule too.
  struct Case {
    const char *schedule;
    const char *error;
  } cases[] = {
      {"#gnn.schedule<vector_width = 3, dim_workers = 16>",
       "vector_width must be 1, 2, 4 or 8"},
      {"#gnn.schedule<vector_width = 4, group_size = 32>",
       "group_size applies to the neighbor_group strategy"},
      {"#gnn.schedule<vector_width = 4, lanes = 16>", "unknown field 'lanes'"},
      {"#gnn.schedule<vector_width = 4, dim_workers = 16",
       "does not end with '>'"},
      {"#gnn.schedule<strategy = diagonal>", "strategy takes"},
  };
  for (const Case &c : cases) {
    Expected<TuningEntry> e = parseEntry(
        std::string("0123456789abcdef spmm f32 64 novalues sm_90 -> 1e-3 - ") +
        c.schedule);
    ASSERT_FALSE(e) << c.schedule;
    EXPECT_NE(e.message().find(c.error), std::string::npos) << e.message();
  }
}

TEST(TuningDb, MalformedLinesAreReportedAndSkipped) {
  std::string path = tempPath("bad.db");
  const std::string schedule =
      "#gnn.schedule<vector_width = 4, dim_workers = 16, threads_per_block = "
      "256>";
  {
    std::ofstream out(path);
    out << "# a comment\n"
        << "0123456789abcdef spmm f32 64 novalues sm_90 -> 1.0e-03 - "
        << schedule << "\n"
        << "garbage\n"
        << "0123456789abcdef spmm f32 64 novalues sm_90 -> soon - " << schedule
        << "\n"
        << "XYZ3456789abcdef spmm f32 64 novalues sm_90 -> 1e-3 - " << schedule
        << "\n"
        << "\n"
        << "0123456789abcdef spmm f99 64 novalues sm_90 -> 1e-3 - " << schedule
        << "\n"
        << "0123456789abcdef spmm f32 64 novalues sm_90 -> 4 16 256 1e-3 -\n"
        << "0123456789abcdef spmm f32 64 novalues sm_90 -> 1e-3 2e-3 "
        << schedule;
  }
  Expected<TuningDb> db = TuningDb::load(path);
  ASSERT_TRUE(db) << db.message();
  ASSERT_EQ(db->entries().size(), 2u);
  EXPECT_EQ(db->entries()[0].schedule, vertexSchedule(4, 16, 256));
  ASSERT_TRUE(db->entries()[1].measuredSeconds);
  EXPECT_DOUBLE_EQ(*db->entries()[1].measuredSeconds, 2e-3);
  const std::vector<std::string> &w = db->warnings();
  ASSERT_EQ(w.size(), 5u);
  EXPECT_EQ(w[0].rfind(path + ":3: expected '<fingerprint> <op> <type> "
                              "<width> <values|novalues> <arch> -> "
                              "<predicted> <measured|-> #gnn.schedule<...>'",
                       0),
            0u)
      << w[0];
  EXPECT_EQ(w[1].rfind(path + ":4: predicted seconds 'soon'", 0), 0u) << w[1];
  EXPECT_EQ(w[2].rfind(path + ":5: fingerprint 'XYZ3456789abcdef'", 0), 0u)
      << w[2];
  EXPECT_EQ(w[3].rfind(path + ":7: unknown element type 'f99'", 0), 0u) << w[3];
  EXPECT_EQ(w[4].rfind(path + ":8: expected the schedule as", 0), 0u) << w[4];
  for (const std::string &warning : w)
    EXPECT_NE(warning.find("(line skipped)"), std::string::npos) << warning;
}

TEST(TuningDb, DefaultPathFollowsTheEnvironment) {
  ::setenv("GNNC_TUNE_DB", "/tmp/x.db", 1);
  EXPECT_EQ(defaultDatabasePath(), "/tmp/x.db");
  ::unsetenv("GNNC_TUNE_DB");
  EXPECT_NE(defaultDatabasePath().find(".cache/gnnc/tuning.db"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Calibration
//===----------------------------------------------------------------------===//

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
  graph::CsrGraph g = graph::generateRmat(12, 16, 1);
  OpDesc op = spmmProblem(ElementType::F32, 64, /*values=*/true);
  Expected<TunableModule> module =
      TunableModule::parse(kernelText(op), "t.gnn");
  ASSERT_TRUE(module) << module.message();
  for (const Schedule &s :
       {vertexSchedule(4, 16, 256), edgeSchedule(4, 16, 256, 128),
        edgeSchedule(2, 32, 256, 64, WriteMode::Atomic),
        groupSchedule(4, 16, 256, 32)}) {
    SCOPED_TRACE(s.str());
    Expected<rt::KernelSpec> spec = module->compileKernel("m_k", s);
    ASSERT_TRUE(spec) << spec.message();
    Expected<double> t = measureSchedule(*runtime, *spec, g);
    ASSERT_TRUE(t) << t.message();
    EXPECT_GT(*t, 0);
    Expected<double> viaFor = measureFor(*runtime, *spec, g);
    ASSERT_TRUE(viaFor) << viaFor.message();
    EXPECT_GT(*viaFor, 0);
  }
}
