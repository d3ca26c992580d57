//===- SegmentMatmulPlanTest.cpp - Plans of gnn.segment_matmul ------------===//
//
// tile_routed: its defaults, its launch (persistent blocks counted by a
// role), the weights staged in shared memory and the rules that refuse a
// schedule, each with its reason; the choice of math (SIMT or tensor
// cores) and its guards, the tensor-core tile, and the backward plans (the
// input gradient's transposed weights, the weight gradient's splits,
// workspace and reduction).
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
  Schedule open = defaultSchedule(op);
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
                      "tile_routing = true, tile_rows = 64, math = simt>");

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
            "yet; use a smaller K or M, 16-bit weights, or math = tensor_core "
            "(K and M multiples of 8)");
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
            "neighbor_group, batched, sliced");
  routed.graphsPerBlock = 2;
  EXPECT_EQ(why(op, routed),
            "graphs_per_block applies to the batched strategy, not "
            "tile_routed");
}

Schedule routed(MathMode math = MathMode::Auto, int32_t tileRows = 0,
                int32_t stages = 0) {
  Schedule s;
  s.strategy = Strategy::TileRouted;
  s.math = math;
  s.tileRows = tileRows;
  s.stages = stages;
  return s;
}

MathMode chosenMath(const OpDesc &op, const Schedule &s = routed()) {
  Expected<Schedule> complete = completeSchedule(op, s);
  EXPECT_TRUE(complete) << complete.message();
  return complete ? complete->math : MathMode::Auto;
}

TEST(SegmentMatmulPlan, TheMathIsChosenOnceWithItsGuards) {
  // f32 stays exact (SIMT) unless tensor cores are asked for.
  EXPECT_EQ(chosenMath(segmentMatmulOp(ElementType::F32, 64, 32)),
            MathMode::Simt);
  EXPECT_EQ(chosenMath(segmentMatmulOp(ElementType::F32, 64, 32),
                       routed(MathMode::TensorCore)),
            MathMode::TensorCore);
  // 16-bit types take tensor cores where K and M are multiples of 8 up to
  // 512 and the tile has 16, 32, 64 or 128 rows; SIMT otherwise.
  for (ElementType type : {ElementType::F16, ElementType::BF16}) {
    EXPECT_EQ(chosenMath(segmentMatmulOp(type, 64, 32)), MathMode::TensorCore);
    EXPECT_EQ(chosenMath(segmentMatmulOp(type, 8, 512)), MathMode::TensorCore);
    EXPECT_EQ(chosenMath(segmentMatmulOp(type, 33, 32)), MathMode::Simt);
    EXPECT_EQ(chosenMath(segmentMatmulOp(type, 64, 36)), MathMode::Simt);
    EXPECT_EQ(chosenMath(segmentMatmulOp(type, 520, 8)), MathMode::Simt);
    EXPECT_EQ(chosenMath(segmentMatmulOp(type, 64, 32), routed({}, 48)),
              MathMode::Simt);
    EXPECT_EQ(chosenMath(segmentMatmulInputGradOp(type, 64, 32)),
              MathMode::TensorCore);
    EXPECT_EQ(chosenMath(segmentMatmulWeightGradOp(type, 64, 32)),
              MathMode::TensorCore);
    EXPECT_EQ(chosenMath(segmentMatmulWeightGradOp(type, 3, 5)),
              MathMode::Simt);
    // Threads that do not match the tile's keep SIMT.
    Schedule threads = routed();
    threads.threadsPerBlock = 256;
    EXPECT_EQ(chosenMath(segmentMatmulOp(type, 64, 32), threads),
              MathMode::Simt);
  }
  // The choice is written into the schedule, with the pipeline's stages,
  // the tile's threads and the register cap (128 registers a thread: four
  // blocks of 128 threads).
  Expected<Schedule> s =
      completeSchedule(segmentMatmulOp(ElementType::F16, 64, 32), routed());
  ASSERT_TRUE(s) << s.message();
  EXPECT_TRUE(isCompleteSchedule(*s));
  EXPECT_EQ(s->stages, defaults::kPipelineStages);
  EXPECT_EQ(s->threadsPerBlock, 128);
  EXPECT_EQ(s->blocksPerSm, 4);
  EXPECT_EQ(s->str(),
            "#gnn.schedule<strategy = tile_routed, vector_width = "
            "8, dim_workers = 4, threads_per_block = 128, "
            "tile_routing = true, blocks_per_sm = 4, tile_rows = 64, math = "
            "tensor_core, stages = 2>");
  Expected<Schedule> parsed = parseSchedule(s->str());
  ASSERT_TRUE(parsed) << parsed.message();
  EXPECT_EQ(*parsed, *s);
}

TEST(SegmentMatmulPlan, OperandsStartWhereTheKernelsCopyAndStore) {
  auto alignment = [](const OpDesc &op, const Schedule &s = routed()) {
    Expected<Schedule> complete = completeSchedule(op, s);
    EXPECT_TRUE(complete) << complete.message();
    return complete ? segmentOperandAlignment(op, *complete) : int64_t(0);
  };
  // Tensor cores copy rows and store results 16 bytes at a time, every
  // pass and arithmetic alike; SIMT reads and writes single elements.
  EXPECT_EQ(alignment(segmentMatmulOp(ElementType::F16, 64, 32)), 16);
  EXPECT_EQ(alignment(segmentMatmulInputGradOp(ElementType::BF16, 64, 32)), 16);
  EXPECT_EQ(alignment(segmentMatmulWeightGradOp(ElementType::F16, 16, 8)), 16);
  EXPECT_EQ(alignment(segmentMatmulOp(ElementType::F32, 64, 32),
                      routed(MathMode::TensorCore)),
            16);
  EXPECT_EQ(alignment(segmentMatmulOp(ElementType::F32, 64, 32)), 4);
  EXPECT_EQ(alignment(segmentMatmulOp(ElementType::BF16, 33, 32)), 2);
  // An open math may still become tensor cores.
  EXPECT_EQ(segmentOperandAlignment(segmentMatmulOp(ElementType::F32, 64, 32),
                                    routed()),
            16);
}

TEST(SegmentMatmulPlan, TensorCoreRefusalsSayWhy) {
  OpDesc odd = segmentMatmulOp(ElementType::F32, 33, 32);
  EXPECT_EQ(why(odd, routed(MathMode::TensorCore)),
            "gnn.segment_matmul with math = tensor_core: tensor cores take K "
            "and M in multiples of 8 up to 512, got K 33 and M 32 (math = "
            "simt takes any K and M)");
  EXPECT_EQ(why(segmentMatmulOp(ElementType::F16, 1024, 64),
                routed(MathMode::TensorCore)),
            "gnn.segment_matmul with math = tensor_core: tensor cores take K "
            "and M in multiples of 8 up to 512, got K 1024 and M 64 (math = "
            "simt takes any K and M)");
  OpDesc op = segmentMatmulOp(ElementType::F32, 64, 32);
  EXPECT_EQ(why(op, routed(MathMode::TensorCore, 48)),
            "gnn.segment_matmul with math = tensor_core: tensor cores take "
            "tile_rows 16, 32, 64 or 128 (a block's rows of 16-row "
            "fragments), got 48 (math = simt takes any K and M)");
  // f32, 128 rows: (128 x 36 + 32 x 72) x 4 bytes a stage.
  EXPECT_EQ(why(segmentMatmulOp(ElementType::F32, 512, 512),
                routed(MathMode::TensorCore, 128, 4)),
            "gnn.segment_matmul with math = tensor_core: the tensor-core "
            "pipeline of 4 stages of 27648 bytes = 110592 bytes, over 98304; "
            "use fewer stages or a smaller tile_rows (math = simt takes any "
            "K and M)");
  Schedule threads = routed(MathMode::TensorCore);
  threads.threadsPerBlock = 256;
  EXPECT_EQ(why(op, threads),
            "gnn.segment_matmul with math = tensor_core: the tensor-core tile "
            "of 64 x 32 runs 128 or 64 threads (warp tiles of 16 columns and "
            "32 rows, or up to 64), not threads_per_block 256; leave "
            "threads_per_block out for the default (math = simt takes any K "
            "and M)");
  EXPECT_EQ(why(op, routed(MathMode::TensorCore, 0, 5)),
            "stages must be from 2 to 4 (0 = choose), got 5");
  EXPECT_EQ(why(op, routed(MathMode::Simt, 0, 2)),
            "stages applies to math = tensor_core or wgmma; the SIMT kernel "
            "stages the "
            "whole weight matrix once");
  Schedule general;
  general.math = MathMode::TensorCore;
  EXPECT_EQ(why(spmmOp(ElementType::F32, 32), general),
            "math applies to the tile_routed strategy, not vertex_parallel");
  // Weights too large for the SIMT kernel's shared memory run on tensor
  // cores, which stream them.
  EXPECT_EQ(why(segmentMatmulOp(ElementType::F32, 256, 128),
                routed(MathMode::TensorCore)),
            "");
  // A transposed weight in any other op is refused.
  OpDesc transposedSpmm = spmmOp(ElementType::F32, 32);
  transposedSpmm.transposeWeights = true;
  EXPECT_EQ(checkOpSizes(transposedSpmm).message(),
            "transposed weights apply to gnn.segment_matmul and gnn.spmm's "
            "linear epilogue only, not "
            "gnn.spmm");
}

TEST(SegmentMatmulPlan, TheTensorCoreTile) {
  // f16, 64 x 32, tiles of 64 rows: 2 x 2 warps of 2 x 2 fragments; steps
  // of 64 halves (a 128-byte line of each X row), shared rows of 64 + 8
  // halves, two stages of X tiles after W_t (64 x 32 + 8), which stays
  // resident.
  OpDesc op = segmentMatmulOp(ElementType::F16, 64, 32);
  Expected<KernelPlan> plan = planWithDefaults(op, routed());
  ASSERT_TRUE(plan) << plan.message();
  SegmentMmaTile t = segmentMmaTile(op, plan->schedule);
  EXPECT_EQ(t.rows, 64);
  EXPECT_EQ(t.cols, 32);
  EXPECT_EQ(t.depth, 64);
  EXPECT_EQ(t.warpsM, 2);
  EXPECT_EQ(t.warpsN, 2);
  EXPECT_EQ(t.fragsM, 2);
  EXPECT_EQ(t.fragsN, 2);
  EXPECT_EQ(t.threads, 128);
  EXPECT_TRUE(t.aReductionMajor);
  EXPECT_FALSE(t.bReductionMajor);
  EXPECT_EQ(t.aStride, 72);
  EXPECT_EQ(t.bStride, 40);
  EXPECT_TRUE(t.residentWeights);
  EXPECT_EQ(t.weightElements, 64 * 40);
  EXPECT_EQ(t.bElements, 0);
  EXPECT_EQ(t.stageBytes, 64 * 72 * 2);
  EXPECT_EQ(t.bytes, 64 * 40 * 2 + 2 * t.stageBytes);
  EXPECT_EQ(t.itemsPerRouteTile, 1);
  EXPECT_EQ(plan->launch.threads, 128);
  EXPECT_EQ(plan->launch.sharedBytes, t.bytes);
  EXPECT_EQ(plan->launch.grid, std::vector<ParamRole>{ParamRole::RouteBlocks});
  EXPECT_EQ(segmentRouteItemsPerTile(op, plan->schedule), 1);

  // f16, K = M = 128, 128 rows, four stages: 64-deep steps would take
  // (128 x 136 + 4 x 128 x 72) x 2 = 108,544 bytes, more than a block
  // has, so the steps are 32 deep. One block holds whole rows of Y (X is
  // read once), 4 x 2 warps of 2 x 8 fragments.
  OpDesc square = segmentMatmulOp(ElementType::F16, 128, 128);
  Expected<KernelPlan> squarePlan =
      planWithDefaults(square, routed(MathMode::TensorCore, 128, 4));
  ASSERT_TRUE(squarePlan) << squarePlan.message();
  t = segmentMmaTile(square, squarePlan->schedule);
  EXPECT_EQ(t.depth, 32);
  EXPECT_EQ(t.cols, 128);
  EXPECT_EQ(t.warpsM, 4);
  EXPECT_EQ(t.warpsN, 2);
  EXPECT_EQ(t.fragsM, 2);
  EXPECT_EQ(t.fragsN, 8);
  EXPECT_EQ(t.threads, 256);
  EXPECT_EQ(t.itemsPerRouteTile, 1);
  EXPECT_TRUE(t.residentWeights);
  EXPECT_EQ(squarePlan->launch.sharedBytes, (128 * 136 + 4 * 128 * 40) * 2);

  // f32, K = 40, M = 72, 128 rows, three stages. W_t resident in one
  // column block of 128 would take (64 x 136 + 3 x 128 x 36) x 4 = 90,112
  // bytes, and two such blocks would not share an SM; in column blocks of
  // 64 a block's consecutive items would alternate between the two and
  // restage it every item. So W_t streams with X: 128 columns take 3 x
  // (128 x 36 + 32 x 136) x 4 = 107,520 bytes, over a block's 96 KiB, so
  // column blocks of 64 (the second holds 8 columns): 82,944 bytes.
  OpDesc wide = segmentMatmulOp(ElementType::F32, 40, 72);
  Expected<KernelPlan> widePlan =
      planWithDefaults(wide, routed(MathMode::TensorCore, 128, 3));
  ASSERT_TRUE(widePlan) << widePlan.message();
  t = segmentMmaTile(wide, widePlan->schedule);
  EXPECT_FALSE(t.residentWeights);
  EXPECT_EQ(t.cols, 64);
  EXPECT_EQ(t.warpsM, 4);
  EXPECT_EQ(t.warpsN, 2);
  EXPECT_EQ(t.fragsN, 4);
  EXPECT_EQ(t.threads, 256);
  EXPECT_EQ(t.aStride, 36);
  EXPECT_EQ(t.bStride, 72);
  EXPECT_EQ(t.weightElements, 0);
  EXPECT_EQ(t.itemsPerRouteTile, 2);
  EXPECT_EQ(widePlan->launch.sharedBytes, 3 * (128 * 36 + 32 * 72) * 4);
  EXPECT_EQ(segmentRouteItemsPerTile(wide, widePlan->schedule), 2);

  // f32, K = M = 512: W_t's column block does not fit even at 64 columns
  // (512 x 72 x 4 bytes), so both tiles stream through the stages; 128
  // columns, rows of 32 + 4 floats for X and 128 + 8 for W_t.
  OpDesc big = segmentMatmulOp(ElementType::F32, 512, 512);
  Expected<KernelPlan> bigPlan =
      planWithDefaults(big, routed(MathMode::TensorCore, 64, 2));
  ASSERT_TRUE(bigPlan) << bigPlan.message();
  t = segmentMmaTile(big, bigPlan->schedule);
  EXPECT_FALSE(t.residentWeights);
  EXPECT_EQ(t.weightElements, 0);
  EXPECT_EQ(t.cols, 128);
  EXPECT_EQ(t.bStride, 136);
  EXPECT_EQ(t.bElements, 32 * 136);
  EXPECT_EQ(t.itemsPerRouteTile, 4);
  EXPECT_EQ(bigPlan->launch.sharedBytes, 2 * (64 * 36 + 32 * 136) * 4);

  // The input gradient reads W_t transposed: its tile rows run along the
  // reduction (M of the forward), no copy.
  OpDesc dx = segmentMatmulInputGradOp(ElementType::BF16, 64, 32);
  EXPECT_EQ(dx.inputWidth, 32);
  EXPECT_EQ(dx.width, 64);
  EXPECT_TRUE(dx.transposeWeights);
  Expected<KernelPlan> dxPlan = planWithDefaults(dx, routed());
  ASSERT_TRUE(dxPlan) << dxPlan.message();
  t = segmentMmaTile(dx, dxPlan->schedule);
  EXPECT_TRUE(t.bReductionMajor);
  EXPECT_EQ(t.bStride, 40);
  EXPECT_TRUE(t.residentWeights);
  EXPECT_EQ(t.weightElements, 64 * 40);
  EXPECT_EQ(t.bElements, 0);
  // SIMT kernels walk one item per tile.
  Expected<Schedule> simt =
      completeSchedule(segmentMatmulOp(ElementType::F32, 64, 32), routed());
  ASSERT_TRUE(simt);
  EXPECT_EQ(segmentRouteItemsPerTile(segmentMatmulOp(ElementType::F32, 64, 32),
                                     *simt),
            1);
}

TEST(SegmentMatmulPlan, TallerWarpTilesThroughThreadsPerBlock) {
  // f16, K = M = 128, tiles of 128 x 128 (two stages): by default 4 x 2
  // warps of 32 x 64 results; 128 threads give 2 x 2 warps of 64 x 64,
  // which read each B fragment for four A fragments instead of two and
  // need 200 registers (128 accumulators), so two blocks share an SM.
  OpDesc op = segmentMatmulOp(ElementType::F16, 128, 128);
  Schedule s = routed(MathMode::TensorCore, 128, 2);
  EXPECT_EQ(segmentMmaThreadChoices(op, s), (std::vector<int32_t>{256, 128}));
  Expected<KernelPlan> base = planWithDefaults(op, s);
  ASSERT_TRUE(base) << base.message();
  SegmentMmaTile t = segmentMmaTile(op, base->schedule);
  EXPECT_EQ(t.threads, 256);
  EXPECT_EQ(t.fragsM, 2);
  EXPECT_EQ(t.registers, 128);
  EXPECT_EQ(base->schedule.blocksPerSm, 2);

  s.threadsPerBlock = 128;
  Expected<KernelPlan> tall = planWithDefaults(op, s);
  ASSERT_TRUE(tall) << tall.message();
  t = segmentMmaTile(op, tall->schedule);
  EXPECT_EQ(t.rows, 128);
  EXPECT_EQ(t.cols, 128);
  EXPECT_EQ(t.warpsM, 2);
  EXPECT_EQ(t.warpsN, 2);
  EXPECT_EQ(t.fragsM, 4);
  EXPECT_EQ(t.fragsN, 8);
  EXPECT_EQ(t.threads, 128);
  EXPECT_EQ(t.registers, 200);
  EXPECT_EQ(tall->launch.threads, 128);
  EXPECT_EQ(tall->schedule.blocksPerSm, 2);
  // Same shared memory: the layout of the warps does not change the tile.
  EXPECT_EQ(tall->launch.sharedBytes, base->launch.sharedBytes);

  // Tiles of 64 rows: one warp along the rows; of 16: only the default.
  EXPECT_EQ(segmentMmaThreadChoices(op, routed(MathMode::TensorCore, 64)),
            (std::vector<int32_t>{128, 64}));
  EXPECT_EQ(segmentMmaThreadChoices(op, routed(MathMode::TensorCore, 16)),
            (std::vector<int32_t>{64}));
  // The weight gradient's tile rows run along K.
  OpDesc dw = segmentMatmulWeightGradOp(ElementType::BF16, 128, 64);
  EXPECT_EQ(segmentMmaThreadChoices(dw, routed(MathMode::TensorCore, 256)),
            (std::vector<int32_t>{256, 128}));
  Schedule wrong = routed(MathMode::TensorCore, 128);
  wrong.threadsPerBlock = 64;
  EXPECT_EQ(why(op, wrong),
            "gnn.segment_matmul with math = tensor_core: the tensor-core tile "
            "of 128 x 128 runs 256 or 128 threads (warp tiles of 64 columns "
            "and 32 rows, or up to 64), not threads_per_block 64; leave "
            "threads_per_block out for the default (math = simt takes any K "
            "and M)");
  // The register estimate: never below the default cap, never above 255.
  EXPECT_EQ(segmentMmaRegisters(1, 2), 128);
  EXPECT_EQ(segmentMmaRegisters(2, 8), 128);
  EXPECT_EQ(segmentMmaRegisters(4, 8), 200);
  EXPECT_EQ(segmentMmaRegisters(8, 8), 255);
}

TEST(SegmentMatmulPlan, TheWeightGradientSplitsRowsAndReducesInOrder) {
  OpDesc op = segmentMatmulWeightGradOp(ElementType::F16, 8, 512);
  EXPECT_EQ(op.kind, OpKind::SegmentMatmulWeightGrad);
  EXPECT_EQ(op.inputWidth, 8);
  EXPECT_EQ(op.width, 512);
  EXPECT_EQ(defaultSchedule(op).strategy, Strategy::TileRouted);
  Expected<KernelPlan> plan = planWithDefaults(op, defaultSchedule(op));
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->schedule.tileRows, defaults::kSegmentSplitRows);
  EXPECT_EQ(plan->schedule.math, MathMode::TensorCore);
  const std::vector<ParamRole> extras = {
      ParamRole::RouteTiles, ParamRole::NumRouteTiles, ParamRole::RouteBlocks,
      ParamRole::NumSegments, ParamRole::Workspace};
  EXPECT_EQ(plan->extraParams, extras);
  ASSERT_TRUE(plan->workspace);
  EXPECT_EQ(plan->workspace->count,
            std::vector<ParamRole>{ParamRole::NumRouteTiles});
  EXPECT_EQ(plan->workspace->bytesPerUnit, 8 * 512 * 4);
  EXPECT_EQ(plan->workspace->minUnits, 1);
  ASSERT_EQ(plan->followUps.size(), 1u);
  EXPECT_EQ(plan->followUps[0].suffix, "_reduce");
  EXPECT_EQ(plan->followUps[0].launch.grid,
            std::vector<ParamRole>{ParamRole::RouteBlocks});
  // The reduction's loads are independent: at least 1024 blocks keep
  // enough of them in flight.
  EXPECT_EQ(plan->followUps[0].launch.minBlocks, 1024);
  EXPECT_TRUE(plan->preludes.empty());
  // K = 8 takes a 16-row tile (rows 8 to 15 zero), M = 512 four column
  // blocks of 128; X is read transposed (rows along the result); each
  // step reduces over 64 of the split's rows (32 in f32).
  SegmentMmaTile t = segmentMmaTile(op, plan->schedule);
  EXPECT_EQ(t.depth, 64);
  EXPECT_EQ(segmentMmaTile(segmentMatmulWeightGradOp(ElementType::F32, 8, 512),
                           plan->schedule)
                .depth,
            32);
  EXPECT_EQ(t.rows, 16);
  EXPECT_EQ(t.cols, 128);
  EXPECT_EQ(t.warpsM, 1);
  EXPECT_EQ(t.fragsM, 1);
  EXPECT_FALSE(t.aReductionMajor);
  EXPECT_FALSE(t.bReductionMajor);
  EXPECT_EQ(t.aStride, 16 + 8);
  EXPECT_EQ(t.itemsPerRouteTile, 4);
  EXPECT_EQ(plan->launch.threads, 64);
  // Any tile_rows is a split size; odd K and M take the SIMT kernels.
  EXPECT_EQ(why(op, routed(MathMode::TensorCore, 7)), "");
  const OpDesc odd = segmentMatmulWeightGradOp(ElementType::F32, 3, 5);
  Expected<KernelPlan> simt = planWithDefaults(odd, defaultSchedule(odd));
  ASSERT_TRUE(simt) << simt.message();
  EXPECT_EQ(simt->schedule.math, MathMode::Simt);
  EXPECT_EQ(simt->launch.sharedBytes, 0);
  EXPECT_EQ(simt->followUps.size(), 1u);
  EXPECT_EQ(why(segmentMatmulWeightGradOp(ElementType::F32, 3, 5),
                routed(MathMode::TensorCore)),
            "gnn.segment_matmul_weight_grad with math = tensor_core: tensor "
            "cores take K and M in multiples of 8 up to 512, got K 3 and M 5 "
            "(math = simt takes any K and M)");
}

TEST(SegmentMatmulPlan, ItsDescriptionComparesK) {
  OpDesc a = segmentMatmulOp(ElementType::F32, 64, 32);
  OpDesc b = segmentMatmulOp(ElementType::F32, 16, 32);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, segmentMatmulOp(ElementType::F32, 64, 32));
  EXPECT_NE(segmentMatmulInputGradOp(ElementType::F32, 32, 32),
            segmentMatmulOp(ElementType::F32, 32, 32));
  EXPECT_NE(segmentMatmulWeightGradOp(ElementType::F32, 32, 32),
            segmentMatmulOp(ElementType::F32, 32, 32));
}

} // namespace

// math = wgmma: warpgroups of 64 rows, steps of one 128-byte row, W_t
// resident where one column block of up to 256 holds M and it fits sm_90's
// 227 KiB, else streamed; the shared bytes leave 1024 for the kernel to
// align its tiles.
TEST(SegmentMatmulPlan, TheWgmmaTile) {
  const OpDesc op = segmentMatmulOp(ElementType::F16, 128, 128);
  Expected<Schedule> s = completeSchedule(op, routed(MathMode::Wgmma, 128, 3));
  ASSERT_TRUE(s) << s.message();
  const SegmentMmaTile t = segmentMmaTile(op, *s);
  EXPECT_TRUE(t.warpgroups);
  EXPECT_EQ(t.depth, 64);
  EXPECT_EQ(t.rows, 128);
  EXPECT_EQ(t.cols, 128);
  EXPECT_EQ(t.threads, 256);
  EXPECT_EQ(s->threadsPerBlock, 256);
  EXPECT_TRUE(t.residentWeights);
  // W_t: 128 x 128 halves; three stages of a 128 x 64 X tile; the slack.
  EXPECT_EQ(t.bytes, 128 * 128 * 2 + 3 * 128 * 64 * 2 + 1024);
  Expected<KernelPlan> plan = planKernel(op, *s);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->launch.sharedBytes, t.bytes);
  EXPECT_EQ(plan->launch.threads, 256);

  // M = 256 with 128 rows: one column block of 256 holds W_t (128 KiB,
  // over the 96 KiB other kernels may ask for, within sm_90's 227), and
  // the block's two warpgroups share the SM.
  const OpDesc wide = segmentMatmulOp(ElementType::BF16, 256, 256);
  Expected<Schedule> w =
      completeSchedule(wide, routed(MathMode::Wgmma, 128, 3));
  ASSERT_TRUE(w) << w.message();
  const SegmentMmaTile tw = segmentMmaTile(wide, *w);
  EXPECT_TRUE(tw.residentWeights);
  EXPECT_EQ(tw.cols, 256);
  EXPECT_EQ(tw.itemsPerRouteTile, 1);
  EXPECT_EQ(tw.bytes, 256 * 256 * 2 + 3 * 128 * 64 * 2 + 1024);
  EXPECT_GT(tw.bytes, limits::kMaxSharedBytes);
  ASSERT_TRUE(planKernel(wide, *w));
  // With 64 rows that block would be the SM's only warpgroup: W_t streams
  // with X in two column blocks instead.
  Expected<Schedule> n = completeSchedule(wide, routed(MathMode::Wgmma, 64));
  ASSERT_TRUE(n) << n.message();
  const SegmentMmaTile tn = segmentMmaTile(wide, *n);
  EXPECT_FALSE(tn.residentWeights);
  EXPECT_EQ(tn.itemsPerRouteTile, 2);
  EXPECT_EQ(tn.stageBytes, (64 * 64 + 128 * 64) * 2);
  EXPECT_EQ(segmentMmaThreadChoices(wide, *n), std::vector<int32_t>{128});

  // M = 512: four column blocks of 128, W_t streams with X.
  const OpDesc wider = segmentMatmulOp(ElementType::F16, 512, 512);
  Expected<Schedule> v = completeSchedule(wider, routed(MathMode::Wgmma, 64));
  ASSERT_TRUE(v) << v.message();
  const SegmentMmaTile tv = segmentMmaTile(wider, *v);
  EXPECT_FALSE(tv.residentWeights);
  EXPECT_EQ(tv.itemsPerRouteTile, 4);
  EXPECT_EQ(tv.stageBytes, (64 * 64 + 128 * 64) * 2);
}

// TF32 on warpgroups: steps of 32 floats; the forward reads a transposed
// copy of W_t that its prelude leaves in the workspace (one K x M block of
// floats a type); the input gradient reads W_t as it is stored.
TEST(SegmentMatmulPlan, TheTf32WgmmaTileCopiesTheWeights) {
  const OpDesc op = segmentMatmulOp(ElementType::F32, 256, 256);
  Expected<Schedule> s = completeSchedule(op, routed(MathMode::Wgmma, 128, 3));
  ASSERT_TRUE(s) << s.message();
  const SegmentMmaTile t = segmentMmaTile(op, *s);
  EXPECT_EQ(t.depth, 32);
  EXPECT_TRUE(t.weightsCopied);
  EXPECT_TRUE(t.bReductionMajor);
  // W_t (256 KiB) does not fit: column blocks of 128 stream with X.
  EXPECT_FALSE(t.residentWeights);
  EXPECT_EQ(t.cols, 128);
  EXPECT_EQ(t.stageBytes, (128 * 32 + 128 * 32) * 4);
  Expected<KernelPlan> plan = planKernel(op, *s);
  ASSERT_TRUE(plan) << plan.message();
  ASSERT_EQ(plan->preludes.size(), 1u);
  EXPECT_EQ(plan->preludes[0].suffix, "_transpose");
  // At least 1024 blocks over the types' tiles, whatever their number.
  EXPECT_EQ(plan->preludes[0].launch.grid,
            std::vector<ParamRole>{ParamRole::NumSegments});
  EXPECT_EQ(plan->preludes[0].launch.minBlocks, 1024);
  ASSERT_TRUE(plan->workspace);
  EXPECT_EQ(plan->workspace->count,
            std::vector<ParamRole>{ParamRole::NumSegments});
  EXPECT_EQ(plan->workspace->bytesPerUnit, 256 * 256 * 4);
  EXPECT_EQ(
      plan->extraParams,
      (std::vector<ParamRole>{ParamRole::RouteTiles, ParamRole::NumRouteTiles,
                              ParamRole::RouteBlocks, ParamRole::NumSegments,
                              ParamRole::Workspace}));

  // K = M = 128: W_t's copy (64 KiB) stays resident.
  const OpDesc narrow = segmentMatmulOp(ElementType::F32, 128, 128);
  Expected<Schedule> n =
      completeSchedule(narrow, routed(MathMode::Wgmma, 128, 2));
  ASSERT_TRUE(n) << n.message();
  const SegmentMmaTile tn = segmentMmaTile(narrow, *n);
  EXPECT_TRUE(tn.residentWeights);
  EXPECT_EQ(tn.bytes, 128 * 128 * 4 + 2 * 128 * 32 * 4 + 1024);

  // The input gradient reads W_t K-major as stored: no copy.
  const OpDesc dx = segmentMatmulInputGradOp(ElementType::F32, 256, 128);
  Expected<Schedule> g = completeSchedule(dx, routed(MathMode::Wgmma, 64));
  ASSERT_TRUE(g) << g.message();
  EXPECT_FALSE(segmentMmaTile(dx, *g).weightsCopied);
  Expected<KernelPlan> dxPlan = planKernel(dx, *g);
  ASSERT_TRUE(dxPlan) << dxPlan.message();
  EXPECT_TRUE(dxPlan->preludes.empty());
  EXPECT_FALSE(dxPlan->workspace);
}

// The weight gradient on warpgroups (f16, bf16): blocks of up to 128 x
// 128 of the K x M result, a warpgroup per 64 of their rows, X's and dY's
// panels of 64 columns per stage, any split size; the persistent blocks
// work in groups of the result's blocks.
TEST(SegmentMatmulPlan, TheWgmmaWeightGradTile) {
  const OpDesc op = segmentMatmulWeightGradOp(ElementType::BF16, 256, 192);
  Expected<Schedule> s = completeSchedule(op, routed(MathMode::Wgmma, 1000, 3));
  ASSERT_TRUE(s) << s.message();
  const SegmentMmaTile t = segmentMmaTile(op, *s);
  EXPECT_TRUE(t.warpgroups);
  EXPECT_EQ(t.rows, 128);
  EXPECT_EQ(t.cols, 128);
  EXPECT_EQ(t.depth, 64);
  EXPECT_EQ(t.threads, 256);
  EXPECT_EQ(t.stageBytes, (128 + 128) * 64 * 2);
  EXPECT_EQ(t.bytes, 3 * t.stageBytes + 1024);
  // 2 row blocks of K = 256 by 2 column blocks of M = 192 (the second
  // half past M, zero-filled).
  EXPECT_EQ(t.itemsPerRouteTile, 4);
  Expected<KernelPlan> plan = planKernel(op, *s);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(plan->launch.threads, 256);
  EXPECT_EQ(plan->launch.sharedBytes, t.bytes);
  ASSERT_EQ(plan->followUps.size(), 1u);
  // Narrow K and M: one warpgroup, 64 x 64.
  const OpDesc narrow = segmentMatmulWeightGradOp(ElementType::F16, 32, 64);
  Expected<Schedule> n = completeSchedule(narrow, routed(MathMode::Wgmma, 64));
  ASSERT_TRUE(n) << n.message();
  const SegmentMmaTile nt = segmentMmaTile(narrow, *n);
  EXPECT_EQ(nt.rows, 64);
  EXPECT_EQ(nt.cols, 64);
  EXPECT_EQ(nt.threads, 128);
  EXPECT_EQ(nt.itemsPerRouteTile, 1);
}

TEST(SegmentMatmulPlan, WgmmaRefusalsSayWhy) {
  EXPECT_EQ(why(segmentMatmulOp(ElementType::F32, 48, 64),
                routed(MathMode::Wgmma, 64)),
            "gnn.segment_matmul with math = wgmma: wgmma takes K in multiples "
            "of 32 and M in multiples of 64, each up to 512, got K 48 and M "
            "64 (math = simt takes any K and M)");
  EXPECT_EQ(why(segmentMatmulOp(ElementType::F16, 96, 64),
                routed(MathMode::Wgmma, 64)),
            "gnn.segment_matmul with math = wgmma: wgmma takes K in multiples "
            "of 64 and M in multiples of 64, each up to 512, got K 96 and M "
            "64 (math = simt takes any K and M)");
  EXPECT_EQ(why(segmentMatmulOp(ElementType::F16, 64, 64),
                routed(MathMode::Wgmma, 32)),
            "gnn.segment_matmul with math = wgmma: wgmma takes tile_rows 64 "
            "or 128 (one or two warpgroups of 64 rows), got 32 (math = simt "
            "takes any K and M)");
  EXPECT_EQ(why(segmentMatmulWeightGradOp(ElementType::F32, 64, 64),
                routed(MathMode::Wgmma, 64)),
            "gnn.segment_matmul_weight_grad with math = wgmma: the weight "
            "gradient reads X and dY transposed, and TF32 wgmma reads its "
            "operands K-major only: f32 takes math = tensor_core (math = simt "
            "takes any K and M)");
  EXPECT_EQ(why(segmentMatmulWeightGradOp(ElementType::F16, 64, 60),
                routed(MathMode::Wgmma, 64)),
            "gnn.segment_matmul_weight_grad with math = wgmma: tensor cores "
            "take K and M in multiples of 8 up to 512, got K 64 and M 60 "
            "(math = simt takes any K and M)");
  // (Within 4 stages every wgmma tile fits sm_90's 227 KiB: the widest,
  // K = M = 512, streams 4 x 32 KiB.)
  EXPECT_TRUE(planWithDefaults(segmentMatmulOp(ElementType::F16, 512, 512),
                               routed(MathMode::Wgmma, 128, 4)));
  Schedule threads = routed(MathMode::Wgmma, 128);
  threads.threadsPerBlock = 128;
  EXPECT_EQ(why(segmentMatmulOp(ElementType::F16, 64, 64), threads),
            "gnn.segment_matmul with math = wgmma: the wgmma tile of 128 "
            "rows runs 256 threads (a warpgroup per 64 rows), not "
            "threads_per_block 128; leave threads_per_block out for the "
            "default (math = simt takes any K and M)");
}
