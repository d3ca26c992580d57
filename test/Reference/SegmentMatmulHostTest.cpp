//===- SegmentMatmulHostTest.cpp - gnn.segment_matmul's host side ---------===//
//
// The segment offsets' checks (each with its message), the routing table of
// ragged segments (an empty type, a type of many tiles, a last tile
// shorter than the others) and the persistent blocks.
//
//===----------------------------------------------------------------------===//
#include "gnnc/cuda/segment_reduce.cuh"
#include "gnnc/ops/SegmentMatmul.h"

#include <gtest/gtest.h>

using namespace gnnc;
using namespace gnnc::ops;

namespace {

std::string why(std::vector<int64_t> seg, int64_t rows) {
  return checkSegmentOffsets(seg.data(), int64_t(seg.size()), rows).message();
}

TEST(SegmentOffsets, RefusedWithTheirReason) {
  EXPECT_EQ(why({0, 3, 3, 10}, 10), "");
  EXPECT_EQ(why({0}, 0), "");
  EXPECT_EQ(why({}, 0),
            "gnn.segment_matmul needs num_types + 1 >= 1 segment offsets, "
            "got 0");
  EXPECT_EQ(why({1, 3}, 3), "segment offset 0 must be 0, got 1");
  EXPECT_EQ(why({0, 5, 3, 10}, 10),
            "segment offsets must not decrease: offset 2 is 3, after 5");
  EXPECT_EQ(why({0, 11, 12}, 10),
            "segment offset 1 is 11, past the input's 10 rows");
  EXPECT_EQ(why({0, 4, 9}, 10),
            "the last segment offset must be the input's 10 rows, got 9");
}

TEST(RouteTable, TilesOfEachTypeInTypeOrder) {
  // Type 0: 10 rows, type 1: none, type 2: 70 rows (3 tiles of 32, 32, 6),
  // type 3: exactly one tile.
  const std::vector<int64_t> seg = {0, 10, 10, 80, 112};
  Expected<std::vector<int64_t>> table =
      buildRouteTable(seg.data(), int64_t(seg.size()), 112, 32);
  ASSERT_TRUE(table) << table.message();
  EXPECT_EQ(*table, (std::vector<int64_t>{0, 0, 10,  //
                                          2, 10, 42, //
                                          2, 42, 74, //
                                          2, 74, 80, //
                                          3, 80, 112}));
  EXPECT_EQ(table->size() % kRouteTileWords, 0u);
  // Every row is in exactly one tile.
  std::vector<int> covered(112, 0);
  for (size_t i = 0; i < table->size(); i += kRouteTileWords)
    for (int64_t r = (*table)[i + 1]; r < (*table)[i + 2]; ++r)
      ++covered[r];
  for (int c : covered)
    EXPECT_EQ(c, 1);
}

TEST(RouteTable, RefusesBadInputs) {
  const std::vector<int64_t> seg = {0, 4, 2};
  Expected<std::vector<int64_t>> bad = buildRouteTable(seg.data(), 3, 4, 32);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.message(),
            "segment offsets must not decrease: offset 2 is 2, after 4");
  const std::vector<int64_t> good = {0, 2};
  Expected<std::vector<int64_t>> zero = buildRouteTable(good.data(), 2, 2, 0);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.message(), "tile_rows must be at least 1, got 0");
  // No rows: an empty table.
  const std::vector<int64_t> none = {0, 0, 0};
  Expected<std::vector<int64_t>> empty = buildRouteTable(none.data(), 3, 0, 8);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

TEST(RouteBlocks, AtMostOnePerTileAndTheResidentOnes) {
  EXPECT_EQ(routeBlocks(5, 264), 5);
  EXPECT_EQ(routeBlocks(10000, 264), 264);
  EXPECT_EQ(routeBlocks(0, 264), 1);
  // Groups of 4 (a weight gradient's result blocks): whole groups where
  // one fits.
  EXPECT_EQ(routeBlocks(10000, 266, 4), 264);
  EXPECT_EQ(routeBlocks(8, 264, 4), 8);
  EXPECT_EQ(routeBlocks(10000, 3, 4), 3);
}

// The weight gradient's reduction (gnnc/cuda/segment_reduce.cuh, shared by
// the kernel and the cost model): the fewest lanes, a power of two up to
// threads / columns, whose loads cover the mean splits of a type.
TEST(SegmentReduce, LanesCoverTheMeanSplitsOfAType) {
  using gnnc::cuda::segmentReduceLanes;
  EXPECT_EQ(segmentReduceLanes(90, 90, 256, 8, 4), 1);   // one split a type
  EXPECT_EQ(segmentReduceLanes(40, 4, 256, 8, 4), 4);    // 10: 4 x 4 >= 10
  EXPECT_EQ(segmentReduceLanes(2144, 4, 256, 8, 4), 32); // capped at 256 / 8
  EXPECT_EQ(segmentReduceLanes(0, 0, 256, 8, 4), 1);     // no types
  EXPECT_EQ(gnnc::cuda::segmentReduceVector(16), 4);
  EXPECT_EQ(gnnc::cuda::segmentReduceVector(15), 1);
}

} // namespace
