//===- SnapshotGroupsTest.cpp - Choosing the snapshots per group ----------===//
//
// The rules of pickSnapshotGroup on hand-made measurements (no GPU), and
// chooseSnapshotGroup's argument checks and measurements on an evolving
// R-MAT series (the measurements skip without a GPU and say so).
//
//===----------------------------------------------------------------------===//
#include "gnnc/Tuning/SnapshotGroups.h"

#include "gnnc/runtime/Driver.h"

#include <gtest/gtest.h>

using namespace gnnc;
using namespace gnnc::tuning;

namespace {

/// A measured candidate: S snapshots, its copies (features, structure), its
/// aggregation, and the bytes of a group in flight and of its structure
/// (the rest of deviceBytes: features and results, half each).
SnapshotGroupCandidate candidate(int64_t s, double featureCopyMs,
                                 double structureCopyMs, double aggregateMs,
                                 int64_t deviceBytes,
                                 int64_t structureBytes = 0) {
  SnapshotGroupCandidate c;
  c.snapshots = s;
  c.featureCopyMs = featureCopyMs;
  c.structureCopyMs = structureCopyMs;
  c.aggregateMs = aggregateMs;
  c.residentStructureBytes = structureBytes;
  c.featureBytes = (deviceBytes - structureBytes) / 2;
  EXPECT_EQ(c.deviceBytes(), deviceBytes) << "odd feature and result bytes";
  return c;
}

} // namespace

TEST(SnapshotGroups, LeastTimePerSnapshotWins) {
  // R-MAT 20 at width 32 on an H200, copies hidden: groups of 8 lose per
  // snapshot.
  SnapshotGroupChoice c = pickSnapshotGroup(
      {candidate(2, 0.1, 0.1, 0.915, 1000), candidate(4, 0.2, 0.1, 1.925, 1000),
       candidate(8, 0.4, 0.1, 5.326, 1000)},
      16, 1 << 20, /*pipelined=*/true);
  EXPECT_EQ(c.snapshots, 2);
  EXPECT_EQ(c.groups, 8);
  ASSERT_EQ(c.candidates.size(), 3u);
  EXPECT_NEAR(c.candidates[0].msPerSnapshot, 0.915 / 2, 1e-12);
  EXPECT_NEAR(c.candidates[2].msPerSnapshot, 5.326 / 8, 1e-12);
  for (const SnapshotGroupCandidate &k : c.candidates)
    EXPECT_TRUE(k.fits);
}

TEST(SnapshotGroups, RmatTwentyOnAnH100PicksPairs) {
  // Measured on an H100 (R-MAT 20, 10% churn, width 32, f32): features
  // copied at 7.3 GB/s cost the same per snapshot at every size, so the
  // aggregation per snapshot decides: 1.110 ms for 2 snapshots, 2.512 for
  // 4, 6.813 for 8 (the groups of 8 lose to each snapshot alone).
  const double bytesPerMs = 7.34e6;
  // Structure sent and kept (with the work items), and the aggregation.
  auto measured = [&](int64_t s, int64_t sent, int64_t kept,
                      double aggregateMs) {
    const int64_t features = (int64_t(1) << 20) * s * 32 * 4;
    return candidate(s, double(features) / bytesPerMs,
                     double(sent) / bytesPerMs, aggregateMs,
                     kept + 2 * features, kept);
  };
  SnapshotGroupChoice c =
      pickSnapshotGroup({measured(2, 163337976, 210485960, 1.110),
                         measured(4, 269669568, 311773680, 2.512),
                         measured(8, 659814312, 702891528, 6.813)},
                        8, int64_t(40) << 30, true);
  EXPECT_EQ(c.snapshots, 2);
  EXPECT_EQ(c.cachedGroups, 4);
  for (const SnapshotGroupCandidate &k : c.candidates)
    EXPECT_NEAR(k.msPerSnapshot, c.candidates[0].msPerSnapshot,
                kSnapshotGroupTie * k.msPerSnapshot);
}

TEST(SnapshotGroups, APipelineHidesTheSmallerOfCopiesAndAggregation) {
  // Copies dominate the small group: pipelined, the larger group's
  // aggregation hides them; without a pipeline the two add up. Every
  // structure is cached: only the features cross each epoch.
  std::vector<SnapshotGroupCandidate> measured = {
      candidate(2, 1.0, 5.0, 0.2, 1000), candidate(4, 1.2, 5.0, 1.0, 1000)};
  SnapshotGroupChoice piped = pickSnapshotGroup(measured, 8, 1 << 20, true);
  EXPECT_EQ(piped.cachedGroups, 2);
  EXPECT_NEAR(piped.candidates[0].copyMs, 1.0, 1e-12);
  EXPECT_EQ(piped.snapshots, 4); // 0.30 per snapshot against 0.50
  EXPECT_NEAR(piped.candidates[1].msPerSnapshot, 1.2 / 4, 1e-12);
  SnapshotGroupChoice serial = pickSnapshotGroup(measured, 8, 1 << 20, false);
  EXPECT_NEAR(serial.candidates[0].msPerSnapshot, 1.2 / 2, 1e-12);
  EXPECT_NEAR(serial.candidates[1].msPerSnapshot, 2.2 / 4, 1e-12);
  EXPECT_EQ(serial.snapshots, 4);
}

TEST(SnapshotGroups, UncachedStructuresCrossEveryEpoch) {
  // 8 groups of 2 (20 bytes of structure each) in 1,000 bytes, two groups
  // in flight taking 2 x 440: 120 bytes hold 6 structures, so 2 of 8
  // groups copy theirs each epoch: a quarter of 4 ms on average.
  SnapshotGroupChoice c =
      pickSnapshotGroup({candidate(2, 1.0, 4.0, 0.1, 440, 20)}, 16, 1000, true);
  EXPECT_EQ(c.groups, 8);
  EXPECT_EQ(c.cachedGroups, 6);
  EXPECT_NEAR(c.candidates[0].copyMs, 1.0 + 4.0 * 2 / 8, 1e-12);
  EXPECT_NEAR(c.candidates[0].msPerSnapshot, 2.0 / 2, 1e-12);
  // Room for every structure: all 8 cached, only features copied.
  SnapshotGroupChoice all =
      pickSnapshotGroup({candidate(2, 1.0, 4.0, 0.1, 440, 2)}, 16, 1000, true);
  EXPECT_EQ(all.cachedGroups, 8);
  EXPECT_NEAR(all.candidates[0].copyMs, 1.0, 1e-12);
  // No room at all: every group copies its structure.
  SnapshotGroupChoice none =
      pickSnapshotGroup({candidate(2, 1.0, 4.0, 0.1, 500, 20)}, 16, 1000, true);
  EXPECT_EQ(none.cachedGroups, 0);
  EXPECT_NEAR(none.candidates[0].copyMs, 5.0, 1e-12);
}

TEST(SnapshotGroups, CopyBoundSizesTieAndTheAggregationDecides) {
  // Features copied every epoch cost about the same per snapshot at any
  // size: within 5%, the least aggregation per snapshot wins (groups of 2
  // here, whatever the copies' noise says).
  SnapshotGroupChoice c = pickSnapshotGroup({candidate(2, 20.0, 0, 1.1, 1000),
                                             candidate(4, 40.5, 0, 2.5, 1000),
                                             candidate(8, 79.9, 0, 6.8, 1000)},
                                            8, 1 << 20, true);
  EXPECT_LT(c.candidates[2].msPerSnapshot, c.candidates[0].msPerSnapshot);
  EXPECT_EQ(c.snapshots, 2);
  // Beyond the tie, the cost decides.
  SnapshotGroupChoice d = pickSnapshotGroup(
      {candidate(2, 20.0, 0, 1.1, 1000), candidate(8, 70.0, 0, 6.8, 1000)}, 8,
      1 << 20, true);
  EXPECT_EQ(d.snapshots, 8);
}

TEST(SnapshotGroups, TiesGoToTheLargerGroup) {
  SnapshotGroupChoice c = pickSnapshotGroup(
      {candidate(2, 0, 0, 1.0, 10), candidate(4, 0, 0, 2.0, 10)}, 8, 1000,
      true);
  EXPECT_EQ(c.snapshots, 4);
}

TEST(SnapshotGroups, TheBudgetHoldsTwoGroupsInFlight) {
  // The fastest group does not fit twice: the next one is chosen; nothing
  // fits: no group (each snapshot alone).
  SnapshotGroupChoice c = pickSnapshotGroup(
      {candidate(2, 0, 0, 1.0, 400), candidate(4, 0, 0, 1.0, 600)}, 8, 1000,
      true);
  EXPECT_TRUE(c.candidates[0].fits);
  EXPECT_FALSE(c.candidates[1].fits);
  EXPECT_EQ(c.snapshots, 2);
  SnapshotGroupChoice none = pickSnapshotGroup(
      {candidate(2, 0, 0, 1.0, 502), candidate(4, 0, 0, 1.0, 900)}, 8, 1000,
      true);
  EXPECT_EQ(none.snapshots, 0);
  EXPECT_EQ(none.groups, 0);
  EXPECT_EQ(none.cachedGroups, 0);
}

TEST(SnapshotGroups, ChooseMeasuresOnTheGpu) {
  std::string why;
  if (!rt::gpuAvailable(&why))
    GTEST_SKIP() << "no GPU (" << why
                 << "): chooseSnapshotGroup's measurements are untested here";
  Expected<rt::Runtime> runtime = rt::Runtime::create(0, "off");
  ASSERT_TRUE(runtime) << runtime.message();
  graph::EvolvingRmatOptions o;
  o.scale = 12;
  o.edgeFactor = 8;
  o.snapshots = 6;
  o.churn = 0.1;
  o.seed = 5;
  Expected<graph::SnapshotSeries> series = graph::generateEvolvingRmat(o);
  ASSERT_TRUE(series) << series.message();
  series->name = "rmat12";
  SnapshotGroupOptions options;
  options.width = 16;
  options.runs = 3;
  Expected<SnapshotGroupChoice> c =
      chooseSnapshotGroup(*runtime, *series, options);
  ASSERT_TRUE(c) << c.message();
  // 8 exceeds the series: sizes 2 and 4 only.
  ASSERT_EQ(c->candidates.size(), 2u);
  for (const SnapshotGroupCandidate &k : c->candidates) {
    EXPECT_GT(k.aggregateMs, 0);
    EXPECT_GT(k.featureCopyMs, 0);
    EXPECT_GT(k.structureCopyMs, 0);
    EXPECT_GT(k.overlapRate, 0.5);
    EXPECT_EQ(k.featureBytes, (int64_t(1) << 12) * k.snapshots * 16 * 4);
    EXPECT_GT(k.residentStructureBytes, k.structureBytes);
    EXPECT_EQ(k.groups, k.snapshots == 2 ? 3 : 2);
    EXPECT_EQ(k.cachedGroups, k.groups);
    EXPECT_TRUE(k.fits);
  }
  EXPECT_TRUE(c->snapshots == 2 || c->snapshots == 4);
}

TEST(SnapshotGroups, RefusesBadOptions) {
  graph::EvolvingRmatOptions o;
  o.scale = 6;
  o.snapshots = 2;
  Expected<graph::SnapshotSeries> series = graph::generateEvolvingRmat(o);
  ASSERT_TRUE(series) << series.message();
  series->name = "rmat6";
  SnapshotGroupOptions options;
  auto refused = [&](const graph::SnapshotSeries &s, const std::string &what) {
    Status st = checkSnapshotGroupOptions(s, options);
    ASSERT_FALSE(st.isOk());
    EXPECT_NE(st.message().find("series '" + s.name + "'"), std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
  };
  refused(*series, "width is 0");
  options.width = 8;
  EXPECT_TRUE(checkSnapshotGroupOptions(*series, options).isOk());
  options.sizes = {2, 65};
  refused(*series, "a group of 65 snapshots; a group holds 1 to 64");
  options.sizes = {0};
  refused(*series, "a group of 0 snapshots");
  options.sizes = {};
  options.memoryBudget = -1;
  refused(*series, "memoryBudget is -1");
  options.memoryBudget = 0;
  options.hostToDeviceGBps = -2;
  refused(*series, "hostToDeviceGBps is -2");
  options.hostToDeviceGBps = 0;
  graph::SnapshotSeries empty;
  empty.name = "empty";
  refused(empty, "the series has no snapshots");
}
