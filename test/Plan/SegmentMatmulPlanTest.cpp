//===- SegmentMatmulPlanTest.cpp - Plans of gnn.segment_matmul ------------===//
//
// tile_routed: its defaults, its launch (persistent blocks counted by a
// role), the weights staged in shared memory and the rules that refuse a
// schedule, each with its reason.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Plan/Limits.h"
#include "gnnc/Plan/Plan.h"

#include <gtest/gtest.h>

using namespace gnnc;

namespace {

std::string why(const OpDesc &op, const Schedule &s) {
  Expected<KernelPlan> plan = planWithDefaults(op, s);
  return plan ? std::string() : plan.message();
}

TEST(SegmentMatmulPlan, DefaultsAreTileRouted) {
  OpDesc op = segmentMatmulOp(ElementType::F32, 64, 32);
  Schedule open = defaultSchedule(op.kind);
  EXPECT_EQ(open.strategy, Strategy::TileRouted);
  Expected<Schedule> s = completeSchedule(op, open);
  ASSERT_TRUE(s) << s.message();
  EXPECT_TRUE(isCompleteSchedule(*s));
  EXPECT_EQ(s->tileRows, defaults::kSegmentTileRows);
  EXPECT_TRUE(s->tileRouting);
  EXPECT_EQ(s->vectorWidth, 4); // 16 bytes of f32, dividing M = 32
  EXPECT_EQ(s->dimWorkers, 8);  // 32 / 4 chunks: one trip
  EXPECT_EQ(s->threadsPerBlock, defaults::kThreadsPerBlock);
  EXPECT_EQ(s->str(), "#gnn.schedule<strategy = tile_routed, vector_width = "
                      "4, dim_workers = 8, threads_per_block = 256, "
                      "tile_routing = true, tile_rows = 64>");

  Expected<KernelPlan> plan = planKernel(op, *s);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->strategy(), Strategy::TileRouted);
  EXPECT_EQ(plan->mapping.lanes, 8);
  EXPECT_EQ(plan->mapping.rowsPerBlock, 32);
  EXPECT_EQ(plan->mapping.chunks, 8);
  EXPECT_EQ(plan->mapping.chunksPerLane, 1);
  const std::vector<ParamRole> extras = {
      ParamRole::RouteTiles, ParamRole::NumRouteTiles, ParamRole::RouteBlocks};
  EXPECT_EQ(plan->extraParams, extras);
  EXPECT_EQ(plan->launch.threads, 256);
  EXPECT_EQ(plan->launch.grid, std::vector<ParamRole>{ParamRole::RouteBlocks});
  EXPECT_EQ(plan->launch.itemsPerBlock, 1);
  EXPECT_EQ(plan->launch.minBlocks, 1);
  EXPECT_EQ(plan->launch.sharedBytes, 64 * 32 * 4);
  EXPECT_TRUE(plan->preludes.empty());
  EXPECT_TRUE(plan->followUps.empty());
  EXPECT_FALSE(plan->workspace);
}

TEST(SegmentMatmulPlan, TheWeightsTileInShared) {
  Schedule s;
  s.strategy = Strategy::TileRouted;
  s.tileRows = 32;
  // Odd sizes: K = 3, M = 5 of bf16 = 30 bytes, aligned to 32.
  SegmentTile odd =
      segmentMatmulTile(segmentMatmulOp(ElementType::BF16, 3, 5), s);
  EXPECT_EQ(odd.rows, 32);
  EXPECT_EQ(odd.weightElements, 15);
  EXPECT_EQ(odd.bytes, 32);
  Expected<KernelPlan> plan =
      planWithDefaults(segmentMatmulOp(ElementType::BF16, 3, 5), s);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->schedule.vectorWidth, 1);
  EXPECT_EQ(plan->launch.sharedBytes, 32);
  // f16 weights of 256 x 128 take 64 KiB: they fit; f32 ones do not.
  EXPECT_EQ(why(segmentMatmulOp(ElementType::F16, 256, 128), s), "");
  EXPECT_EQ(why(segmentMatmulOp(ElementType::F32, 256, 128), s),
            "gnn.segment_matmul (tile_routed) stages a type's whole weight "
            "matrix in shared memory: K 256 x M 128 x 4 bytes = 131072 bytes, "
            "over 98304; splitting K over several passes is not implemented "
            "yet; use a smaller K or M, or 16-bit weights");
}

TEST(SegmentMatmulPlan, RulesWithReasons) {
  OpDesc op = segmentMatmulOp(ElementType::F32, 64, 32);
  Schedule general;
  EXPECT_EQ(why(op, general),
            "schedule strategy 'vertex_parallel' is not implemented for "
            "gnn.segment_matmul yet; implemented: tile_routed");
  Schedule s;
  s.strategy = Strategy::TileRouted;
  s.accumulate = Accumulate::F16;
  EXPECT_EQ(why(op, s), "accumulate = f16 is not implemented for "
                        "gnn.segment_matmul; it accumulates in f32");
  s.accumulate = Accumulate::F32;
  s.vectorWidth = 8;
  EXPECT_EQ(why(op, s), "vector_width 8 of 'f32' is 32 bytes; a GPU loads at "
                        "most 16 bytes per thread");
  s.vectorWidth = 1;
  s.dimWorkers = 1;
  // M = 4096 with one lane of one element: 4096 accumulators.
  EXPECT_NE(why(segmentMatmulOp(ElementType::F16, 8, 4096), s)
                .find("at most 128 fit in registers"),
            std::string::npos);
  // K is checked with the other sizes, first.
  EXPECT_EQ(why(segmentMatmulOp(ElementType::F32, 0, 32), Schedule()),
            "input width (K) 0 of gnn.segment_matmul must be from 1 to "
            "1048576");
  OpDesc spmm = spmmOp(ElementType::F32, 32);
  spmm.inputWidth = 8;
  EXPECT_EQ(checkOpSizes(spmm).message(),
            "an input width (K) applies to gnn.segment_matmul only, not "
            "gnn.spmm");
  // tile_routed is gnn.segment_matmul's alone; tile_rows is its field too.
  Schedule routed;
  routed.strategy = Strategy::TileRouted;
  routed.tileRows = 16;
  EXPECT_EQ(why(spmmOp(ElementType::F32, 32), routed),
            "schedule strategy 'tile_routed' is not implemented for gnn.spmm "
            "yet; implemented: vertex_parallel, edge_parallel, "
            "neighbor_group, batched");
  routed.graphsPerBlock = 2;
  EXPECT_EQ(why(op, routed),
            "graphs_per_block applies to the batched strategy, not "
            "tile_routed");
}

TEST(SegmentMatmulPlan, ItsDescriptionComparesK) {
  OpDesc a = segmentMatmulOp(ElementType::F32, 64, 32);
  OpDesc b = segmentMatmulOp(ElementType::F32, 16, 32);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, segmentMatmulOp(ElementType::F32, 64, 32));
}

} // namespace
