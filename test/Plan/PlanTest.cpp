//===- PlanTest.cpp - Kernel plans: legality, defaults, mapping, launch ---===//
//
// The plans are the one place a schedule is resolved; the lowering, the
// cost models and the benchmark read them (test/Compiler/PlanLoweringTest
// checks the lowering against them). Here: each rule and each part of a
// plan on its own.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Plan/Plan.h"
#include "gnnc/Plan/Limits.h"

#include <gtest/gtest.h>

#include <cstdint>

using namespace gnnc;

namespace {

OpDesc spmm(ElementType type, int64_t width, int64_t stride = 0) {
  OpDesc op;
  op.kind = OpKind::Spmm;
  op.type = type;
  op.width = width;
  op.rowStride = stride ? stride : width;
  return op;
}

OpDesc ofKind(OpKind kind, ElementType type, int64_t width) {
  OpDesc op = spmm(type, width);
  op.kind = kind;
  return op;
}

Schedule strategy(Strategy s) {
  Schedule schedule;
  schedule.strategy = s;
  return schedule;
}

std::string why(const OpDesc &op, const Schedule &s) {
  Expected<KernelPlan> plan = planWithDefaults(op, s);
  return plan ? std::string() : plan.message();
}

TEST(Plan, SizesOverTheLimitsAreRefusedFirst) {
  // The fuzzer's feature width 2^63 - 1 made ceil(width / vw) wrap: the plan
  // was accepted with a negative chunk count. Sizes are now checked before
  // any arithmetic, by every entry point, with the limit in the message.
  const int64_t most = INT64_MAX;
  const std::string over = "feature width 9223372036854775807 is over the "
                           "limit of the kernel plans, 1048576 features per "
                           "row";
  EXPECT_EQ(checkOpSizes(spmm(ElementType::F32, most)).message(), over);
  EXPECT_EQ(why(spmm(ElementType::F32, most), Schedule()), over);
  EXPECT_EQ(completeSchedule(spmm(ElementType::F32, most), {}).message(), over);
  Schedule complete = *completeSchedule(spmm(ElementType::F32, 64), {});
  EXPECT_EQ(planKernel(spmm(ElementType::F32, most), complete).message(), over);
  EXPECT_EQ(checkSchedule(spmm(ElementType::F32, most), complete).message(),
            over);
  EXPECT_NE(checkOpSizes(spmm(ElementType::F32, most - 1))
                .message()
                .find("feature width 9223372036854775806 is over the limit"),
            std::string::npos);
  EXPECT_TRUE(checkOpSizes(spmm(ElementType::F32, limits::kMaxFeatureWidth)));
  EXPECT_FALSE(
      checkOpSizes(spmm(ElementType::F32, limits::kMaxFeatureWidth + 1)));
  EXPECT_EQ(checkOpSizes(spmm(ElementType::F32, 0)).message(),
            "feature width 0 is not positive");
  // Strides: at least the width, at most the limit.
  EXPECT_EQ(checkOpSizes(spmm(ElementType::F32, 41, most)).message(),
            "row stride 9223372036854775807 is over the limit of the kernel "
            "plans, 1048576 elements");
  EXPECT_EQ(checkOpSizes(spmm(ElementType::F32, 41, 40)).message(),
            "row stride 40 is smaller than the feature width 41");
  // Heads of the edge softmax: the count of running values no longer wraps
  // ("needs -2 running values per thread").
  EXPECT_EQ(why(ofKind(OpKind::EdgeSoftmax, ElementType::F32, most), {}),
            "number of heads 9223372036854775807 is over the limit of the "
            "kernel plans, 1048576 heads");
  EXPECT_EQ(why(ofKind(OpKind::EdgeSoftmaxGrad, ElementType::F32, 100), {}),
            "100 heads need 300 values per thread (a running sum and two "
            "loads per head); at most 64 heads fit in registers");
  // The largest accepted width still gets the register rule's message, with
  // a padded stride that fits the limit.
  Schedule vw2;
  vw2.vectorWidth = 2;
  EXPECT_NE(why(spmm(ElementType::F32, limits::kMaxFeatureWidth - 1), vw2)
                .find("#gnn.rows<stride = 1048576>"),
            std::string::npos);
}

TEST(Plan, CompletedSchedulesKeepTheFieldRules) {
  // Found by fuzzing: blocks_per_sm = 16 with the default 256 threads made
  // a #gnn.schedule that breaks checkScheduleFields (an assertion in
  // ScheduleAttr::get with assertions on).
  Schedule s;
  s.blocksPerSm = 16;
  EXPECT_EQ(completeSchedule(spmm(ElementType::F32, 64), s).message(),
            "blocks_per_sm (16) blocks of threads_per_block (256) exceed the "
            "2048 threads an SM holds");
  s.blocksPerSm = 8;
  EXPECT_TRUE(completeSchedule(spmm(ElementType::F32, 64), s));
}

TEST(Plan, DefaultsFollowTheRows) {
  // The widest load of at most 16 bytes that divides the row stride, enough
  // lanes for one trip over a row, 256 threads.
  Schedule s = *completeSchedule(spmm(ElementType::F32, 64), Schedule());
  EXPECT_EQ(s.vectorWidth, 4);
  EXPECT_EQ(s.dimWorkers, 16);
  EXPECT_EQ(s.threadsPerBlock, 256);
  s = *completeSchedule(spmm(ElementType::F16, 64), Schedule());
  EXPECT_EQ(s.vectorWidth, 8);
  EXPECT_EQ(s.dimWorkers, 8);
  // Odd widths: scalar loads, or the padded stride's vectors.
  EXPECT_EQ(completeSchedule(spmm(ElementType::F16, 41), {})->vectorWidth, 1);
  EXPECT_EQ(completeSchedule(spmm(ElementType::F16, 41, 48), {})->vectorWidth,
            8);
  // The edge softmax ops put a warp on a row's edges.
  Schedule softmax =
      *completeSchedule(ofKind(OpKind::EdgeSoftmax, ElementType::F32, 4), {});
  EXPECT_EQ(softmax.dimWorkers, 32);
  EXPECT_EQ(softmax.vectorWidth, 4);
  // edge_parallel: 64 items and staged writes; neighbor_group: groups of 32
  // added atomically.
  Schedule ep = *completeSchedule(spmm(ElementType::F32, 64),
                                  strategy(Strategy::EdgeParallel));
  EXPECT_EQ(ep.edgesPerWarp, defaults::kEdgesPerWorker);
  EXPECT_EQ(ep.write, WriteMode::Staged);
  Schedule ng = *completeSchedule(spmm(ElementType::F32, 64),
                                  strategy(Strategy::NeighborGroup));
  EXPECT_EQ(ng.groupSize, defaults::kGroupSize);
  EXPECT_EQ(ng.write, WriteMode::Atomic);
  EXPECT_TRUE(isCompleteSchedule(ep) && isCompleteSchedule(ng));
  EXPECT_FALSE(isCompleteSchedule(Schedule()));
  // What is given is kept.
  Schedule given;
  given.vectorWidth = 2;
  given.dimWorkers = 4;
  given.threadsPerBlock = 64;
  EXPECT_EQ(*completeSchedule(spmm(ElementType::F32, 64), given), given);
  // Every strategy has defaults; sliced completes on any graph (planKernel
  // then refuses one that is no snapshot group).
  EXPECT_TRUE(
      completeSchedule(spmm(ElementType::F32, 64), strategy(Strategy::Sliced)));
}

TEST(Plan, EachOpSaysWhatItImplements) {
  EXPECT_EQ(implementedStrategies(OpKind::Spmm),
            (std::vector<Strategy>{
                Strategy::VertexParallel, Strategy::EdgeParallel,
                Strategy::NeighborGroup, Strategy::Batched, Strategy::Sliced}));
  EXPECT_EQ(why(ofKind(OpKind::Sddmm, ElementType::F32, 8),
                strategy(Strategy::Batched)),
            "schedule strategy 'batched' is not implemented for "
            "gnn.sddmm yet; implemented: vertex_parallel, edge_parallel, "
            "neighbor_group");
  EXPECT_EQ(why(ofKind(OpKind::EdgeSoftmax, ElementType::F32, 8),
                strategy(Strategy::EdgeParallel)),
            "schedule strategy 'edge_parallel' is not implemented for "
            "gnn.edge_softmax yet; implemented: vertex_parallel");
  Schedule disc;
  disc.discBatch = 32;
  EXPECT_EQ(why(ofKind(OpKind::Sddmm, ElementType::F32, 8), disc),
            "discretized reduction (disc_batch = 32) is not implemented for "
            "gnn.sddmm; use disc_batch = 0");
  Schedule atomic = strategy(Strategy::EdgeParallel);
  atomic.write = WriteMode::Atomic;
  EXPECT_EQ(why(ofKind(OpKind::Sddmm, ElementType::F32, 8), atomic),
            "write = atomic applies to gnn.spmm; gnn.sddmm writes each edge's "
            "value once (use write = staged)");
  OpDesc max = spmm(ElementType::F32, 8);
  max.reduce = Reduce::Max;
  EXPECT_EQ(
      why(max, atomic),
      "write = atomic adds the pieces of split rows with atomicAdd, "
      "which cannot take a maximum; use write = staged with reduce = max");
  Schedule half;
  half.accumulate = Accumulate::F16;
  EXPECT_EQ(why(spmm(ElementType::BF16, 8), half),
            "accumulate = f16 needs f16 features; 'bf16' features accumulate "
            "in f32");
}

TEST(Plan, VectorWidthsFitTheRows) {
  Schedule s;
  s.vectorWidth = 8;
  EXPECT_EQ(why(spmm(ElementType::F32, 64), s),
            "vector_width 8 of 'f32' is 32 bytes; a GPU loads at most 16 "
            "bytes per thread");
  s.vectorWidth = 2;
  EXPECT_EQ(why(spmm(ElementType::F16, 41), s),
            "vector_width 2 does not divide the feature width 41; declare a "
            "padded row stride, e.g. tensor<?x41xf16, #gnn.rows<stride = "
            "42>>");
  EXPECT_EQ(why(ofKind(OpKind::Sddmm, ElementType::F16, 41), s),
            "vector_width 2 does not divide the feature width 41; use a "
            "vector_width that divides it (padded rows are implemented for "
            "gnn.spmm only)");
  s.vectorWidth = 8;
  EXPECT_EQ(why(spmm(ElementType::F16, 41, 44), s),
            "vector_width 8 does not divide the row stride 44 (feature width "
            "41); padded rows must start on vector boundaries: use a stride "
            "that is a multiple of 8, e.g. 48");
  EXPECT_EQ(why(spmm(ElementType::F16, 41, 48), s), "");
}

TEST(Plan, VertexParallelMapping) {
  Schedule s;
  s.vectorWidth = 4;
  s.dimWorkers = 8;
  s.threadsPerBlock = 128;
  Expected<KernelPlan> plan = planKernel(spmm(ElementType::F32, 100), s);
  ASSERT_TRUE(plan) << plan.message();
  const ThreadMapping &m = plan->mapping;
  EXPECT_EQ(m.lanes, 8);
  EXPECT_EQ(m.rowsPerBlock, 16);
  EXPECT_EQ(m.chunks, 25);
  EXPECT_EQ(m.chunksPerLane, 4);
  // 64 prefetch registers over 16 accumulators: 4 neighbours in flight.
  EXPECT_EQ(m.edgeUnroll, 4);
  EXPECT_FALSE(m.packed);
  EXPECT_EQ(plan->launch.grid, std::vector<ParamRole>{ParamRole::NumRows});
  EXPECT_EQ(plan->launch.itemsPerBlock, 16);
  EXPECT_EQ(plan->launch.sharedBytes, 0);
  EXPECT_TRUE(plan->extraParams.empty());
  EXPECT_TRUE(plan->preludes.empty() && plan->followUps.empty());
  EXPECT_FALSE(plan->workspace);
  // The other ops take one neighbour per lane's index at a time.
  Expected<KernelPlan> sddmm =
      planKernel(ofKind(OpKind::Sddmm, ElementType::F32, 100), s);
  ASSERT_TRUE(sddmm) << sddmm.message();
  EXPECT_EQ(sddmm->mapping.edgeUnroll, 4);
  s.dimWorkers = 2;
  s.vectorWidth = 1;
  s.threadsPerBlock = 64;
  EXPECT_EQ(planKernel(ofKind(OpKind::Sddmm, ElementType::F32, 8), s)
                ->mapping.edgeUnroll,
            2);
  // Too many accumulators for a thread.
  s.vectorWidth = 4;
  s.dimWorkers = 1;
  EXPECT_EQ(planKernel(spmm(ElementType::F32, 1024), s).message(),
            "feature width 1024 needs 1024 accumulators per thread with "
            "vector_width 4 and dim_workers 1; at most 128 fit in registers "
            "(raise dim_workers or vector_width)");
}

TEST(Plan, ColumnScalingAddsTheFactors) {
  OpDesc gcn = spmm(ElementType::F32, 64);
  gcn.scale = DegreeScale::Both;
  Expected<KernelPlan> plan = planWithDefaults(gcn, Schedule());
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->extraParams,
            std::vector<ParamRole>{ParamRole::ColumnFactors});
  gcn.scale = DegreeScale::Left;
  EXPECT_TRUE(planWithDefaults(gcn, Schedule())->extraParams.empty());
}

TEST(Plan, EdgeParallelStagedSharedAndAtomic) {
  OpDesc op = spmm(ElementType::F32, 128);
  Schedule s = *completeSchedule(op, strategy(Strategy::EdgeParallel));
  Expected<KernelPlan> staged = planKernel(op, s);
  ASSERT_TRUE(staged) << staged.message();
  // 8 workers of 32 lanes, 64 items each, their row ends in shared memory.
  EXPECT_EQ(staged->mapping.itemsPerWorker, 64);
  EXPECT_EQ(staged->mapping.rowEndsBytes, 8 * 65 * 4);
  EXPECT_EQ(staged->launch.sharedBytes, 8 * 65 * 4);
  EXPECT_EQ(staged->launch.grid,
            (std::vector<ParamRole>{ParamRole::NumRows, ParamRole::NumEdges}));
  EXPECT_EQ(staged->launch.itemsPerBlock, 8 * 64);
  EXPECT_EQ(staged->launch.minBlocks, 1);
  EXPECT_EQ(
      staged->extraParams,
      (std::vector<ParamRole>{ParamRole::NumEdges, ParamRole::Workspace}));
  ASSERT_EQ(staged->followUps.size(), 1u);
  EXPECT_EQ(staged->followUps[0].suffix, "_fixup");
  EXPECT_TRUE(staged->preludes.empty());
  ASSERT_TRUE(staged->workspace);
  EXPECT_EQ(staged->workspace->count, staged->launch.grid);
  EXPECT_EQ(staged->workspace->itemsPerUnit, 64);
  // Two f32 rows of the stride and a row index per worker.
  EXPECT_EQ(staged->workspace->bytesPerUnit, 128 * 2 * 4 + 8);
  EXPECT_EQ(staged->atomicPieceEdges, 0);

  s.write = WriteMode::Shared;
  Expected<KernelPlan> shared = planKernel(op, s);
  ASSERT_TRUE(shared) << shared.message();
  EXPECT_EQ(shared->launch.sharedBytes, 8 * 65 * 4 + 8 * 2 * 128 * 4);
  EXPECT_EQ(shared->mapping.rowEndsBytes, 8 * 65 * 4);

  s.write = WriteMode::Atomic;
  Expected<KernelPlan> atomic = planKernel(op, s);
  ASSERT_TRUE(atomic) << atomic.message();
  EXPECT_EQ(atomic->extraParams, std::vector<ParamRole>{ParamRole::NumEdges});
  EXPECT_FALSE(atomic->workspace);
  EXPECT_TRUE(atomic->followUps.empty());
  ASSERT_EQ(atomic->preludes.size(), 1u);
  EXPECT_EQ(atomic->preludes[0].suffix, "_init");
  EXPECT_EQ(atomic->preludes[0].launch.grid,
            std::vector<ParamRole>{ParamRole::NumRows});
  EXPECT_EQ(atomic->preludes[0].launch.itemsPerBlock, 8);
  EXPECT_EQ(atomic->atomicPieceEdges, 64);

  // Too much shared memory, per block and per SM.
  s.write = WriteMode::Staged;
  s.edgesPerWarp = 4096;
  EXPECT_EQ(planKernel(op, s).message(),
            "edge_parallel keeps each worker's row ends in shared memory: 8 "
            "workers per block x (4096 + 1) x 4 bytes = 131104 bytes, over "
            "98304; lower edges_per_warp or threads_per_block");
  s.edgesPerWarp = 1024;
  s.blocksPerSm = 8;
  EXPECT_EQ(planKernel(op, s).message(),
            "blocks_per_sm = 8 blocks of 32800 bytes of shared memory exceed "
            "the 163840 bytes an SM holds");
}

TEST(Plan, SddmmKeepsRowEndsOnlyWhenPacked) {
  Schedule s = strategy(Strategy::EdgeParallel);
  Expected<KernelPlan> f32 =
      planWithDefaults(ofKind(OpKind::Sddmm, ElementType::F32, 64), s);
  Expected<KernelPlan> f16 =
      planWithDefaults(ofKind(OpKind::Sddmm, ElementType::F16, 64), s);
  ASSERT_TRUE(f32 && f16);
  EXPECT_FALSE(f32->mapping.packed);
  EXPECT_EQ(f32->launch.sharedBytes, 0);
  EXPECT_TRUE(f16->mapping.packed);
  EXPECT_GT(f16->launch.sharedBytes, 0);
  EXPECT_EQ(f16->extraParams, std::vector<ParamRole>{ParamRole::NumEdges});
  EXPECT_FALSE(f16->workspace);
}

TEST(Plan, NeighbourGroups) {
  OpDesc op = spmm(ElementType::F32, 64);
  Schedule s = strategy(Strategy::NeighborGroup);
  s.groupSize = 8;
  s.dimWorkers = 16;
  s.threadsPerBlock = 128;
  Expected<KernelPlan> plan = planWithDefaults(op, s);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(
      plan->extraParams,
      (std::vector<ParamRole>{ParamRole::GroupOffsets, ParamRole::GroupRows,
                              ParamRole::GroupBegins, ParamRole::NumGroups}));
  EXPECT_EQ(plan->launch.grid, std::vector<ParamRole>{ParamRole::NumGroups});
  // SDDMM's groups need no row's first group: each edge has its own output.
  Expected<KernelPlan> sddmm =
      planWithDefaults(ofKind(OpKind::Sddmm, ElementType::F32, 64), s);
  ASSERT_TRUE(sddmm) << sddmm.message();
  EXPECT_EQ(sddmm->extraParams, (std::vector<ParamRole>{ParamRole::GroupRows,
                                                        ParamRole::GroupBegins,
                                                        ParamRole::NumGroups}));
  EXPECT_FALSE(sddmm->mapping.edgeGroups);
  EXPECT_LE(sddmm->mapping.edgeUnroll, 8);
  // Groups of one edge: group g is edge g, so no ranges; a batch of one.
  Schedule one = s;
  one.groupSize = 1;
  Expected<KernelPlan> edges =
      planWithDefaults(ofKind(OpKind::Sddmm, ElementType::F32, 64), one);
  ASSERT_TRUE(edges) << edges.message();
  EXPECT_TRUE(edges->mapping.edgeGroups);
  EXPECT_EQ(edges->mapping.edgeUnroll, 1);
  EXPECT_EQ(edges->extraParams, (std::vector<ParamRole>{ParamRole::GroupRows,
                                                        ParamRole::NumGroups}));
  // gnn.spmm's groups of one keep their ranges (its leaders merge rows).
  Expected<KernelPlan> spmmOne = planWithDefaults(op, one);
  ASSERT_TRUE(spmmOne) << spmmOne.message();
  EXPECT_FALSE(spmmOne->mapping.edgeGroups);
  // A block of 8 groups merges one f32 row per group.
  EXPECT_EQ(plan->launch.sharedBytes, 8 * 64 * 4);
  // A row spanning blocks gets a piece per block of 8 groups of 8.
  EXPECT_EQ(plan->atomicPieceEdges, 64);
  ASSERT_EQ(plan->preludes.size(), 1u);
  s.dimWorkers = 1;
  s.threadsPerBlock = 1024;
  s.vectorWidth = 1;
  OpDesc wide = spmm(ElementType::F32, 128);
  EXPECT_EQ(planKernel(wide, *completeSchedule(wide, s)).message(),
            "neighbor_group merges the partial sums of a block's groups in "
            "shared memory: 1024 groups x 128 features x 4 bytes = 524288 "
            "bytes, over 98304; raise dim_workers or lower threads_per_block");
  s.write = WriteMode::Staged;
  EXPECT_NE(why(op, s).find("use write = atomic"), std::string::npos);
}

TEST(Plan, AttentionRunsOnWholeRowsAndTakesItsScores) {
  OpDesc op = spmm(ElementType::F16, 64);
  op.attention = true;
  op.leakyRelu = 0.2;
  // Its scores follow the features; the options it excludes are refused
  // for the op whatever the schedule.
  EXPECT_EQ(inputRole(op, 1), ParamRole::AttentionRows);
  EXPECT_EQ(inputRole(op, 2), ParamRole::AttentionColumns);
  OpDesc mean = op;
  mean.reduce = Reduce::Mean;
  EXPECT_NE(checkOpSizes(mean).message().find("attention weighs each edge"),
            std::string::npos);
  OpDesc slopeOnly = spmm(ElementType::F16, 64);
  slopeOnly.leakyRelu = 0.2;
  EXPECT_NE(checkOpSizes(slopeOnly).message().find("give attention(...)"),
            std::string::npos);
  // vertex_parallel: one kernel, no workspace.
  Expected<KernelPlan> vertex = planWithDefaults(op, Schedule());
  ASSERT_TRUE(vertex) << vertex.message();
  EXPECT_TRUE(vertex->preludes.empty() && !vertex->workspace);
  // neighbor_group: the first kernel, then the maxima and the sums over
  // the groups (kAttentionStatisticsLanes threads each) into a workspace
  // of two floats per row.
  Expected<KernelPlan> groups =
      planWithDefaults(op, strategy(Strategy::NeighborGroup));
  ASSERT_TRUE(groups) << groups.message();
  ASSERT_EQ(groups->preludes.size(), 3u);
  EXPECT_EQ(groups->preludes[1].suffix, "_att_max");
  EXPECT_EQ(groups->preludes[2].suffix, "_att_sum");
  EXPECT_EQ(groups->preludes[2].launch.itemsPerBlock,
            kAttentionStatisticsThreads / kAttentionStatisticsLanes);
  ASSERT_TRUE(groups->workspace);
  EXPECT_EQ(groups->workspace->bytesPerUnit, kAttentionWorkspaceBytesPerRow);
  EXPECT_EQ(groups->workspace->count,
            std::vector<ParamRole>{ParamRole::NumRows});
  EXPECT_EQ(groups->extraParams.back(), ParamRole::Workspace);
  // Rows split between workers cannot take a softmax.
  EXPECT_NE(why(op, strategy(Strategy::EdgeParallel))
                .find("attention takes the softmax over whole rows"),
            std::string::npos);
}

TEST(Plan, EdgeBatchSetsTheLoadsInFlight) {
  Schedule s;
  s.vectorWidth = 4;
  s.dimWorkers = 16;
  s.threadsPerBlock = 256;
  OpDesc op = spmm(ElementType::F32, 64);
  // 64 prefetch registers over 4 accumulators: at most 8 in flight.
  EXPECT_EQ(planKernel(op, s)->mapping.edgeUnroll, 8);
  s.edgeBatch = 2;
  EXPECT_EQ(planKernel(op, s)->mapping.edgeUnroll, 2);
  EXPECT_NE(why(ofKind(OpKind::EdgeSoftmax, ElementType::F32, 1), s)
                .find("edge_batch applies to the ops that gather rows"),
            std::string::npos);
}

TEST(Plan, SlicedGroupsOfSnapshots) {
  // 4 snapshots of 32 f32 features side by side: the node row is 128.
  OpDesc op = spmm(ElementType::F32, 128);
  op.snapshots = 4;
  op.scale = DegreeScale::Both;
  Expected<KernelPlan> plan = planWithDefaults(op, strategy(Strategy::Sliced));
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->extraParams,
            (std::vector<ParamRole>{
                ParamRole::ColumnFactors, ParamRole::ExclusiveOffsets,
                ParamRole::ExclusiveIndices, ParamRole::SliceOffsets,
                ParamRole::SliceRows, ParamRole::NumSlices,
                ParamRole::NumSplitRows}));
  EXPECT_EQ(plan->launch.grid, std::vector<ParamRole>{ParamRole::NumSlices});
  ASSERT_EQ(plan->preludes.size(), 1u);
  EXPECT_EQ(plan->preludes[0].launch.grid,
            std::vector<ParamRole>{ParamRole::NumSplitRows});
  // A warp of float4 lanes over the 128 features; 16 edges per slice per
  // snapshot.
  EXPECT_EQ(plan->mapping.lanes, 32);
  EXPECT_EQ(plan->mapping.vectorWidth, 4);
  EXPECT_EQ(plan->schedule.sliceSize, 64);
  EXPECT_EQ(plan->schedule.write, WriteMode::Atomic);
  // An exclusive slice of 64 edges reaches a row in 4 pieces of 16.
  EXPECT_EQ(plan->atomicPieceEdges, 16);
  op.snapshots = 2;
  op.width = op.rowStride = 64;
  EXPECT_EQ(
      planWithDefaults(op, strategy(Strategy::Sliced))->schedule.sliceSize, 32);
  op.snapshots = 16;
  op.width = op.rowStride = 16 * 8;
  EXPECT_EQ(
      planWithDefaults(op, strategy(Strategy::Sliced))->schedule.sliceSize,
      128);
  // A vector must not straddle two snapshots: 6 features each.
  op.snapshots = 4;
  op.width = op.rowStride = 24;
  EXPECT_EQ(
      planWithDefaults(op, strategy(Strategy::Sliced))->schedule.vectorWidth,
      2);
  Schedule four = strategy(Strategy::Sliced);
  four.vectorWidth = 4;
  EXPECT_EQ(why(op, four), "vector_width 4 does not divide the features of "
                           "one snapshot (6); a vector load must not "
                           "straddle two snapshots");
  // A group of snapshots given no schedule gets the sliced strategy.
  EXPECT_EQ(defaultSchedule(op).strategy, Strategy::Sliced);
  // The strategy and the graph go together.
  EXPECT_NE(why(op, Schedule()).find("aggregated by strategy = sliced"),
            std::string::npos);
  op.snapshots = 0;
  EXPECT_NE(why(op, strategy(Strategy::Sliced))
                .find("the graph must be a !gnn.graph<snapshot_csr, ...>"),
            std::string::npos);
}

TEST(Plan, EdgeSoftmaxHeads) {
  Expected<KernelPlan> plan =
      planWithDefaults(ofKind(OpKind::EdgeSoftmax, ElementType::F32, 8), {});
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->mapping.chunks, 2);
  EXPECT_EQ(plan->mapping.chunksPerLane, 2);
  EXPECT_EQ(plan->mapping.edgeUnroll, 1);
  EXPECT_EQ(why(ofKind(OpKind::EdgeSoftmax, ElementType::F32, 65), {}),
            "65 heads need 130 running values per thread; at most 64 heads "
            "fit in registers");
  EXPECT_EQ(why(ofKind(OpKind::EdgeSoftmaxGrad, ElementType::F32, 65), {}),
            "65 heads need 195 values per thread (a running sum and two "
            "loads per head); at most 64 heads fit in registers");
}

TEST(Plan, BatchedStagesTilesAndCutsWideRowsIntoColumnBlocks) {
  OpDesc op = spmm(ElementType::F32, 64);
  EXPECT_EQ(why(op, strategy(Strategy::Batched)),
            "strategy = batched runs over a batch of graphs; the graph must "
            "be a !gnn.graph<batched_csr, ...>");
  op.batchedGraph = true;
  // The defaults: as many graphs per block as fit 64 staged rows, 128
  // threads, a sub-warp of 16 lanes for the 16 chunks of a 64-float row.
  Expected<KernelPlan> plan = planWithDefaults(op, strategy(Strategy::Batched));
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->schedule.tileRows, 64);
  EXPECT_EQ(plan->schedule.graphsPerBlock, limits::kMaxGraphsPerBlock);
  EXPECT_EQ(plan->schedule.threadsPerBlock, 128);
  EXPECT_EQ(plan->mapping.lanes, 16);
  EXPECT_EQ(plan->mapping.rowsPerBlock, 8);
  EXPECT_EQ(plan->mapping.columnChunks, 0);
  // The features, then 65 row offsets (i64), then 512 column indices.
  BatchedTile tile = batchedTile(op, plan->schedule, 16);
  EXPECT_EQ(tile.featureBytes, 64 * 64 * 4);
  EXPECT_EQ(tile.indices.offsetsAt, 16384);
  EXPECT_EQ(tile.indices.columnsAt, 16912);
  EXPECT_EQ(tile.indices.edges, 512);
  EXPECT_EQ(plan->launch.sharedBytes, 16912 + 512 * 4);
  EXPECT_EQ(plan->launch.grid,
            std::vector<ParamRole>{ParamRole::NumBatchBlocks});
  EXPECT_EQ(plan->launch.itemsPerBlock, 1);
  EXPECT_EQ(plan->extraParams,
            (std::vector<ParamRole>{ParamRole::BatchBlocks,
                                    ParamRole::NumBatchBlocks}));
  // 256 floats in 64 rows are 64 KiB, over the tile's 32 KiB: two column
  // blocks of 32 chunks, a full warp per row.
  OpDesc wide = op;
  wide.width = wide.rowStride = 256;
  plan = planWithDefaults(wide, strategy(Strategy::Batched));
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->mapping.columnChunks, 32);
  EXPECT_EQ(plan->mapping.columnBlocks(), 2);
  EXPECT_EQ(plan->mapping.lanes, 32);
  EXPECT_EQ(plan->mapping.chunksPerLane, 1);
  EXPECT_EQ(plan->launch.sharedBytes, 33296 + 512 * 4);
  // 50 chunks (200 floats) split evenly: 25 and 25.
  wide.width = wide.rowStride = 200;
  EXPECT_EQ(
      planWithDefaults(wide, strategy(Strategy::Batched))->mapping.columnChunks,
      25);
  // Column scaling reads the factors; several graphs per block.
  OpDesc gcn = op;
  gcn.scale = DegreeScale::Both;
  Schedule s = strategy(Strategy::Batched);
  s.graphsPerBlock = 4;
  s.tileRows = 200;
  plan = planWithDefaults(gcn, s);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(
      plan->extraParams,
      (std::vector<ParamRole>{ParamRole::ColumnFactors, ParamRole::BatchBlocks,
                              ParamRole::NumBatchBlocks}));
  // A tile that does not fit a block's shared memory.
  s.tileRows = 20000;
  EXPECT_EQ(why(op, s),
            "batched stages tile_rows rows of a column block, their offsets "
            "and 160000 column indices in shared memory: 20000 rows x 4 "
            "features x 4 bytes and the rest = 1120016 bytes, over 98304; "
            "lower tile_rows");
  Schedule general;
  general.tileRows = 8;
  EXPECT_EQ(why(op, general), "tile_rows applies to the batched and "
                              "tile_routed strategies, not vertex_parallel");
}

TEST(Plan, BatchedLinearEpilogue) {
  OpDesc op = spmm(ElementType::F32, 64);
  op.batchedGraph = true;
  op.linearWidth = 64;
  op.linearBias = true;
  op.activation = Activation::Relu;
  EXPECT_EQ(op.resultWidth(), 64);
  // An op without a schedule runs batched; the tile fixes the threads.
  EXPECT_EQ(defaultSchedule(op).strategy, Strategy::Batched);
  Expected<KernelPlan> plan = planWithDefaults(op, defaultSchedule(op));
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->schedule.tileRows, 64);
  EXPECT_EQ(plan->schedule.threadsPerBlock, 128);
  // 16 chunks of 4 floats a row: 8 lanes, two loads each
  // (kLinearTripsPerLane), where the aggregation alone takes 16.
  EXPECT_EQ(plan->schedule.dimWorkers, 8);
  EXPECT_EQ(plan->mapping.chunksPerLane, 2);
  OpDesc aggregation = op;
  aggregation.linearWidth = 0;
  aggregation.linearBias = false;
  aggregation.activation = Activation::None;
  Schedule batched = defaultSchedule(aggregation);
  batched.strategy = Strategy::Batched;
  Expected<KernelPlan> alone = planWithDefaults(aggregation, batched);
  ASSERT_TRUE(alone) << alone.message();
  EXPECT_EQ(alone->schedule.dimWorkers, 16);
  const BatchedLinearTile t = batchedLinearTile(op, plan->schedule);
  // One 64-column pass, 2 x 2 warps of 2 x 4 fragments; the pass's
  // weights (64 rows of 64 + 8) first, then H, its rows padded by 16 bytes,
  // then the row offsets (65 x 8 bytes) and 8 column indices a row. No
  // feature is staged: the rows are reduced from global memory.
  EXPECT_FALSE(t.streamWeights);
  EXPECT_EQ(t.cols, 64);
  EXPECT_EQ(t.kPadded, 64);
  EXPECT_EQ(t.warpsM * t.warpsN, 4);
  EXPECT_EQ(t.fragsM * t.fragsN, 8);
  EXPECT_EQ(t.hStride, 68);
  EXPECT_EQ(t.bStride, 72);
  EXPECT_EQ(t.wAt, 0);
  EXPECT_EQ(t.hAt, 64 * 72 * 4);
  EXPECT_EQ(t.indices.edges, 64 * 8);
  EXPECT_EQ(t.indices.offsetsAt, t.hAt + 64 * 68 * 4);
  EXPECT_EQ(t.indices.columnsAt, t.indices.offsetsAt + 65 * 8 + 8);
  EXPECT_EQ(plan->launch.sharedBytes, t.indices.columnsAt + 64 * 8 * 4);
  EXPECT_EQ(batchedIndices(op, plan->schedule, 0).offsetsAt,
            t.indices.offsetsAt);
  EXPECT_EQ(plan->mapping.columnChunks, 0);
  // Weights that need more than two passes of kLinearWeightBytes stream
  // through each warp's ring; eight warps take items.
  OpDesc wide = op;
  wide.width = wide.rowStride = 256;
  plan = planWithDefaults(wide, defaultSchedule(wide));
  ASSERT_TRUE(plan) << plan.message();
  // 256 floats a row: 64 rows (H of 66.5 KB, within kMaxSharedBytes with
  // the rings); four 16-row fragments by one 8-column fragment an item, so
  // that the 8 warps have 8 items.
  EXPECT_EQ(plan->schedule.tileRows, 64);
  EXPECT_EQ(plan->schedule.threadsPerBlock, 256);
  EXPECT_EQ(plan->mapping.columnChunks, 0);
  const BatchedLinearTile ws = batchedLinearTile(wide, plan->schedule);
  EXPECT_TRUE(ws.streamWeights);
  EXPECT_EQ(ws.fragsM, 4);
  EXPECT_EQ(ws.fragsN, 1);
  EXPECT_EQ(ws.hStride, 260);
  // Each warp's ring: 4 buffers of one 8-deep step of its 8 columns (rows
  // of 8 + 8 floats); H after the 8 rings.
  EXPECT_EQ(ws.stages, 4);
  EXPECT_EQ(ws.bStride, 16);
  EXPECT_EQ(ws.stageBytes, 8 * 16 * 4);
  EXPECT_EQ(ws.hAt, 8 * 4 * 8 * 16 * 4);
  EXPECT_EQ(ws.indices.offsetsAt, ws.hAt + 64 * 260 * 4);
  EXPECT_EQ(plan->launch.sharedBytes, ws.indices.columnsAt + 64 * 8 * 4);
  // Wider results need wider items and rings: 256 columns take 32-column
  // items (rings of 40 KB), and 64 rows would then exceed the limit.
  OpDesc wider = wide;
  wider.linearWidth = 256;
  Expected<KernelPlan> widerPlan =
      planWithDefaults(wider, defaultSchedule(wider));
  ASSERT_TRUE(widerPlan) << widerPlan.message();
  EXPECT_EQ(widerPlan->schedule.tileRows, 32);
  EXPECT_LE(widerPlan->launch.sharedBytes, limits::kMaxSharedBytes);
  // Wide results take 32-column items.
  OpDesc wideOut = wide;
  wideOut.linearWidth = 512;
  EXPECT_EQ(batchedLinearTile(wideOut, plan->schedule).fragsN, 4);
  // Two passes are still staged (64 x 128: two of 64 columns).
  OpDesc twoPasses = op;
  twoPasses.linearWidth = 128;
  EXPECT_FALSE(batchedLinearTile(twoPasses, plan->schedule).streamWeights);
  EXPECT_EQ(batchedLinearTile(twoPasses, plan->schedule).cols, 64);
  // K pads to the staged pass's reduction step (32), or to one mma's depth
  // where the weights stream.
  OpDesc narrow = op;
  narrow.width = narrow.rowStride = 3;
  EXPECT_FALSE(batchedLinearTile(narrow, plan->schedule).streamWeights);
  EXPECT_EQ(batchedLinearTile(narrow, plan->schedule).kPadded, 32);
  narrow.linearWidth = 512;
  EXPECT_TRUE(batchedLinearTile(narrow, plan->schedule).streamWeights);
  EXPECT_EQ(batchedLinearTile(narrow, plan->schedule).kPadded, 8);
  narrow.type = ElementType::F16;
  EXPECT_EQ(batchedLinearTile(narrow, plan->schedule).kPadded, 16);
  // The rules, each with its reason.
  EXPECT_EQ(why(op, strategy(Strategy::VertexParallel)),
            "a linear epilogue (weight) runs only with strategy = batched, "
            "not vertex_parallel");
  OpDesc odd = op;
  odd.linearWidth = 20;
  EXPECT_EQ(why(odd, strategy(Strategy::Batched)),
            "a linear epilogue runs on tensor cores: the weight's columns (M) "
            "must be a multiple of 8 and K and M at most 512, got K 64 and M "
            "20");
  Schedule s = strategy(Strategy::Batched);
  s.tileRows = 12;
  EXPECT_EQ(why(op, s), "a linear epilogue takes tile_rows 16, 32, 64 or 128 "
                        "(a block's rows of 16-row fragments), got 12");
  s.tileRows = 64;
  // Staged weights take more warps to aggregate, in multiples of four.
  s.threadsPerBlock = 256;
  EXPECT_EQ(why(op, s), "");
  EXPECT_EQ(batchedLinearTile(op, s).threads, 256);
  s.threadsPerBlock = 192;
  EXPECT_EQ(why(op, s), "the linear epilogue's tile of 64 x 64 runs a "
                        "multiple of 128 threads up to 512 (2 x 2 warps "
                        "multiply), not threads_per_block 192; leave "
                        "threads_per_block out");
  Schedule streaming = strategy(Strategy::Batched);
  streaming.tileRows = 32;
  streaming.threadsPerBlock = 128;
  EXPECT_EQ(why(wide, streaming),
            "the linear epilogue's tile of 32 x 64 runs 256 threads (warps "
            "streaming the weights), not threads_per_block 128; leave "
            "threads_per_block out");
}

TEST(Abi, RolesHaveOneSpellingEach) {
  for (int i = 0; i <= static_cast<int>(ParamRole::AttentionColumns); ++i) {
    auto role = static_cast<ParamRole>(i);
    EXPECT_EQ(parseParamRole(paramRoleName(role)), role);
  }
  EXPECT_FALSE(parseParamRole("row_ptr"));
  EXPECT_EQ(paramKindOf(ParamRole::NumEdges), ParamKind::Int64);
  EXPECT_EQ(paramKindOf(ParamRole::Workspace), ParamKind::Pointer);
  EXPECT_STREQ(extraParamStem(ParamRole::ColumnFactors), "col_norm");
  EXPECT_STREQ(extraParamStem(ParamRole::NumSegments), "num_types");
  EXPECT_EQ(paramKindOf(ParamRole::RouteBlocks), ParamKind::Int64);
  EXPECT_EQ(paramKindOf(ParamRole::NumSlices), ParamKind::Int64);
  EXPECT_STREQ(extraParamStem(ParamRole::ExclusiveOffsets), "excl_ptr");
  EXPECT_EQ(paramKindOf(ParamRole::SegmentWeights), ParamKind::Pointer);
  for (ParamKind kind : {ParamKind::Pointer, ParamKind::Int32, ParamKind::Int64,
                         ParamKind::Float32})
    EXPECT_EQ(parseParamKind(paramKindName(kind)), kind);
}

TEST(Types, OneSpellingPerEnum) {
  for (OpKind k : {OpKind::Spmm, OpKind::Sddmm, OpKind::EdgeSoftmax,
                   OpKind::EdgeSoftmaxGrad, OpKind::Readout,
                   OpKind::ReadoutGrad, OpKind::SegmentMatmul})
    EXPECT_EQ(parseOpKind(opKindKey(k)), k);
  EXPECT_STREQ(opKindName(OpKind::SegmentMatmul), "gnn.segment_matmul");
  for (Reduce r : {Reduce::Sum, Reduce::Mean, Reduce::Max})
    EXPECT_EQ(parseReduce(reduceName(r)), r);
  for (DegreeScale s : {DegreeScale::None, DegreeScale::Left,
                        DegreeScale::Right, DegreeScale::Both})
    EXPECT_EQ(parseDegreeScale(degreeScaleName(s)), s);
  EXPECT_EQ(parseSddmmForm("add"), SddmmForm::Add);
  for (Activation act : {Activation::None, Activation::Relu})
    EXPECT_EQ(parseActivation(activationName(act)), act);
  EXPECT_STREQ(opKindName(OpKind::EdgeSoftmaxGrad), "gnn.edge_softmax_grad");
  OpDesc a = spmm(ElementType::F16, 41, 48), b = a;
  EXPECT_EQ(a, b);
  EXPECT_TRUE(a.padded());
  b.selfWeight = 0.5;
  EXPECT_NE(a, b);
  b = a;
  b.linearWidth = 16;
  EXPECT_NE(a, b);
}

} // namespace

TEST(ThreadMapping, LaneSumShufflesFollowTheHalvingExchange) {
  // gnnc_lane_sums: log2(lanes) rounds; a thread sends half of its values
  // each round (the batch padded to a power of two), one once one is left.
  auto shuffles = [](int32_t batch, int32_t lanes) {
    ThreadMapping m;
    m.edgeUnroll = batch;
    m.lanes = lanes;
    return m.laneSumShuffles();
  };
  EXPECT_EQ(shuffles(8, 8), 4 + 2 + 1);
  EXPECT_EQ(shuffles(8, 32), 4 + 2 + 1 + 1 + 1);
  EXPECT_EQ(shuffles(8, 2), 4);
  EXPECT_EQ(shuffles(5, 8), 4 + 2 + 1);
  EXPECT_EQ(shuffles(1, 32), 5);
  EXPECT_EQ(shuffles(8, 1), 0);
  // Never more than summing each value on its own.
  for (int32_t lanes : {1, 2, 4, 8, 16, 32})
    for (int32_t batch = 1; batch <= 8; ++batch) {
      int64_t rounds = 0;
      for (int32_t l = lanes; l > 1; l /= 2)
        ++rounds;
      EXPECT_LE(shuffles(batch, lanes), batch * rounds);
    }
}
