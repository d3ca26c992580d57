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

#include <algorithm>
#include <numeric>

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

/// Checks `parts` against `tiles` (the uncut table): the same rows in the
/// same order, no split across types or longer than the uncut ones, cuts
/// no shorter than `minPiece`, groups + 1 monotone starts ending at the
/// splits' count; returns each group's cost (rows + splitCost a split).
std::vector<int64_t> checkPartition(const std::vector<int64_t> &tiles,
                                    const RoutePartition &parts, int64_t groups,
                                    int64_t splitCost, int64_t minPiece) {
  std::vector<int64_t> cost(groups, 0);
  EXPECT_EQ(parts.tiles.size() % kRouteTileWords, 0u);
  const int64_t count = int64_t(parts.tiles.size()) / kRouteTileWords;
  EXPECT_EQ(int64_t(parts.groupStarts.size()), groups + 1);
  if (int64_t(parts.groupStarts.size()) != groups + 1)
    return cost;
  EXPECT_EQ(parts.groupStarts.front(), 0);
  EXPECT_EQ(parts.groupStarts.back(), count);
  size_t uncut = 0;
  for (int64_t g = 0; g < groups; ++g) {
    EXPECT_LE(parts.groupStarts[g], parts.groupStarts[g + 1]);
    for (int64_t i = parts.groupStarts[g]; i < parts.groupStarts[g + 1]; ++i) {
      const int64_t *t = &parts.tiles[i * kRouteTileWords];
      // Within the uncut split that holds its first row.
      while (uncut + 2 < tiles.size() && tiles[uncut + 2] <= t[1])
        uncut += kRouteTileWords;
      EXPECT_EQ(t[0], tiles[uncut]) << "split " << i;
      EXPECT_GE(t[1], tiles[uncut + 1]) << "split " << i;
      EXPECT_LE(t[2], tiles[uncut + 2]) << "split " << i;
      EXPECT_LT(t[1], t[2]) << "split " << i;
      if (t[1] != tiles[uncut + 1] || t[2] != tiles[uncut + 2])
        EXPECT_GE(t[2] - t[1], minPiece) << "a cut left split " << i;
      if (i > 0)
        EXPECT_EQ(t[1], parts.tiles[(i - 1) * kRouteTileWords + 2]);
      cost[g] += t[2] - t[1] + splitCost;
    }
  }
  if (count > 0) {
    EXPECT_EQ(parts.tiles[1], tiles[1]);
    EXPECT_EQ(parts.tiles.back(), tiles.back());
  }
  return cost;
}

/// The largest group's work when `groups` groups take runs of equal split
/// counts of `tiles`, whole.
int64_t countedRunsLargest(const std::vector<int64_t> &tiles, int64_t groups,
                           int64_t splitCost) {
  const int64_t n = int64_t(tiles.size()) / kRouteTileWords;
  int64_t most = 0;
  for (int64_t g = 0; g < groups; ++g) {
    int64_t cost = 0;
    for (int64_t i = g * n / groups; i < (g + 1) * n / groups; ++i)
      cost += tiles[i * kRouteTileWords + 2] - tiles[i * kRouteTileWords + 1] +
              splitCost;
    most = std::max(most, cost);
  }
  return most;
}

TEST(RouteTable, PartitionGivesEveryGroupItsShareOfTheWork) {
  // Few long types (ACM-like): splits of 4096 over 66 groups, 69 splits.
  // Counting splits, 3 groups took two (twice the time); by the partition
  // every group's work is within a split's cost and a shortest cut of the
  // mean (a split that would leave a shorter piece stays whole).
  const std::vector<int64_t> few = {0, 5343, 15292, 18317, 273936};
  Expected<std::vector<int64_t>> tiles =
      buildRouteTable(few.data(), int64_t(few.size()), few.back(), 4096);
  ASSERT_TRUE(tiles) << tiles.message();
  const int64_t groups = 66, splitCost = 192;
  RoutePartition parts = partitionRouteTable(*tiles, groups, splitCost);
  std::vector<int64_t> cost = checkPartition(*tiles, parts, groups, splitCost,
                                             routeCutMinRows(splitCost));
  const int64_t most = *std::max_element(cost.begin(), cost.end());
  const double mean =
      double(few.back() + splitCost * (tiles->size() / 3 + groups - 1)) /
      double(groups);
  EXPECT_LE(double(most), mean + 2 * splitCost) << "largest group";
  EXPECT_LE(double(most), 0.6 * 2 * 4096) << "no group holds two splits";
  EXPECT_LE(most, countedRunsLargest(*tiles, groups, splitCost));

  // Many tiny types among long ones: a group of many small splits gets
  // fewer rows, not the same rows in dozens of splits.
  std::vector<int64_t> many = {0};
  for (int t = 0; t < 40; ++t)
    many.push_back(many.back() + (t % 10 == 0 ? 20000 : 37 + 11 * t));
  Expected<std::vector<int64_t>> small =
      buildRouteTable(many.data(), int64_t(many.size()), many.back(), 1024);
  ASSERT_TRUE(small);
  const int64_t g2 = 50;
  RoutePartition p2 = partitionRouteTable(*small, g2, 256);
  std::vector<int64_t> c2 =
      checkPartition(*small, p2, g2, 256, routeCutMinRows(256));
  const int64_t total2 = std::accumulate(c2.begin(), c2.end(), int64_t(0));
  EXPECT_LE(*std::max_element(c2.begin(), c2.end()),
            total2 / g2 + 2 * 1024 / 2 + 256)
      << "largest group";
  EXPECT_LE(*std::max_element(c2.begin(), c2.end()),
            countedRunsLargest(*small, g2, 256));
  // As many groups as splits: one split each, nothing cut.
  const int64_t n2 = int64_t(small->size() / kRouteTileWords);
  RoutePartition each = partitionRouteTable(*small, n2, 256);
  std::vector<int64_t> c3 =
      checkPartition(*small, each, n2, 256, routeCutMinRows(256));
  EXPECT_LE(*std::max_element(c3.begin(), c3.end()),
            countedRunsLargest(*small, n2, 256));

  // Empty tables and one group: every split in group 0.
  RoutePartition none = partitionRouteTable({}, 4, 100);
  EXPECT_TRUE(none.tiles.empty());
  EXPECT_EQ(none.groupStarts, (std::vector<int64_t>{0, 0, 0, 0, 0}));
  RoutePartition one = partitionRouteTable(*small, 1, 256);
  EXPECT_EQ(one.tiles, *small);
  EXPECT_EQ(one.groupStarts,
            (std::vector<int64_t>{0, int64_t(small->size() / 3)}));
}

TEST(RouteBlocks, GroupsOfTheWeightGradient) {
  // 70 splits of 4 result blocks on 264 resident blocks: 66 groups; 10
  // splits: 10 groups; groups of one block: one a block; fewer blocks than
  // a group: none.
  EXPECT_EQ(routeGroups(280, 264, 4), 66);
  EXPECT_EQ(routeGroups(40, 264, 4), 10);
  EXPECT_EQ(routeGroups(40, 264, 1), 40);
  EXPECT_EQ(routeGroups(8, 3, 4), 0);
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
