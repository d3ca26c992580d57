//===- SnapshotsGpuTest.cpp - gnn.spmm over snapshot groups on a GPU ------===//
//
// Every sliced variant (element types, snapshots and widths from 1 to 256
// features, sum and mean, every degree scaling, small and large slices) on
// groups of an evolving R-MAT graph, identical snapshots (no exclusive
// edges), complete churn (no overlap), empty snapshots, a row of thousands
// of edges, and the real temporal sets (when present), with fresh random
// features and NaN-poisoned outputs, against the double-precision CPU
// reference of each snapshot on its own.
//
// Skips, saying why, when no GPU is present or a dataset is missing.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"
#include "SnapshotVariants.h"

#include "gnnc/graph/Rmat.h"
#include "gnnc/graph/Snapshots.h"
#include "gnnc/ops/Snapshots.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

test::GpuKernels &kernels() {
  static test::GpuKernels *k = [] {
    auto *k = new test::GpuKernels;
    test::loadGpuKernels(*k, test::snapshotModuleText(test::snapshotVariants()),
                         "snapshots.gnn", test::snapshotVariants().size());
    return k;
  }();
  return *k;
}

/// How a kernel walks a group: every row one work item (the table read as
/// the rows in order), or some row split into several.
enum class Items { Any, OnePerRow, SomeRowSplit };

/// Checks every kernel on the group of its number of snapshots from the
/// start of `series` (which must hold at least 8), first asserting that
/// its work items are of the kind `items` asks.
void checkAll(const SnapshotSeries &series, uint64_t seed,
              Items items = Items::Any) {
  test::GpuKernels &k = kernels();
  if (!k.skipReason.empty())
    GTEST_SKIP() << k.skipReason;
  ASSERT_TRUE(k.error.empty()) << k.error;
  const std::vector<test::SnapshotVariant> variants = test::snapshotVariants();
  for (size_t i = 0; i < k.kernels.size(); ++i) {
    Expected<SnapshotGroup> group =
        overlapGroup(series, 0, variants[i].snapshots);
    ASSERT_TRUE(group) << group.message();
    if (items != Items::Any) {
      const int64_t sliceSize = k.kernels[i].spec.schedule.sliceSize;
      Expected<ops::SnapshotSlices> table = ops::snapshotSlices(
          group->overlap.rowPtr, stackExclusive(*group).offsets, group->size(),
          sliceSize, "test");
      ASSERT_TRUE(table) << table.message();
      EXPECT_EQ(table->count() == group->numNodes, items == Items::OnePerRow)
          << k.kernels[i].spec.name << ": " << table->count() << " items over "
          << group->numNodes << " rows, slice_size " << sliceSize;
    }
    auto check =
        ops::checkSnapshotSpmm(*k.runtime, k.kernels[i], *group, seed++);
    ASSERT_TRUE(check) << k.kernels[i].spec.name << ": " << check.message();
    EXPECT_TRUE(check->ok) << check->report;
  }
}

/// A series of 8 snapshots over `n` nodes from per-snapshot edge lists.
SnapshotSeries fromLists(int64_t n,
                         const std::vector<std::vector<int64_t>> &src,
                         const std::vector<std::vector<int64_t>> &dst) {
  Expected<SnapshotSeries> s = snapshotsFromEdgeLists(n, src, dst, {}, "test");
  EXPECT_TRUE(s) << s.message();
  return s.take();
}

TEST(SnapshotsGpu, EvolvingRmat) {
  EvolvingRmatOptions o;
  o.scale = 10;
  o.edgeFactor = 8;
  o.snapshots = 8;
  o.churn = 0.15;
  o.seed = 3;
  Expected<SnapshotSeries> s = generateEvolvingRmat(o);
  ASSERT_TRUE(s) << s.message();
  checkAll(*s, 1);
}

TEST(SnapshotsGpu, IdenticalSnapshots) {
  CsrGraph g = generateRmat(9, 8, 7);
  SnapshotSeries s;
  s.numNodes = g.numRows;
  s.snapshots.assign(8, g);
  s.name = "identical";
  checkAll(s, 100);
}

TEST(SnapshotsGpu, CompleteChurnAndEmptySnapshots) {
  // Snapshot t holds edges r <- (r + t + 1) mod n only: no two share an
  // edge; snapshot 5 is empty.
  const int64_t n = 300;
  std::vector<std::vector<int64_t>> src(8), dst(8);
  for (int t = 0; t < 8; ++t)
    for (int64_t r = 0; r < n && t != 5; ++r)
      for (int64_t j = 0; j < 1 + (r % 4); ++j) {
        dst[t].push_back(r);
        src[t].push_back((r + 8 * j + t + 1) % n);
      }
  checkAll(fromLists(n, src, dst), 200);
}

/// Rows of 0-1 shared and 0-1 exclusive edges per snapshot over 500
/// nodes; with `hub`, row 7 takes 300 edges of every snapshot instead.
SnapshotSeries shortRows(bool hub) {
  const int64_t n = 500;
  std::vector<std::vector<int64_t>> src(8), dst(8);
  for (int t = 0; t < 8; ++t)
    for (int64_t r = 0; r < n; ++r) {
      if (hub && r == 7) {
        for (int64_t c = 100; c < 400; ++c) {
          dst[t].push_back(r);
          src[t].push_back((c + 5 * t) % n);
        }
        continue;
      }
      // Sources below n / 2 repeat in every snapshot, those above differ.
      for (int64_t j = 0; j < r % 2; ++j) {
        dst[t].push_back(r);
        src[t].push_back((r * 13 + j * 101) % (n / 2));
      }
      for (int64_t j = 0; j < (r + t) % 2; ++j) {
        dst[t].push_back(r);
        src[t].push_back(n / 2 + (r * 7 + t * 31 + j * 211 + 1) % (n / 2));
      }
    }
  return fromLists(n, src, dst);
}

TEST(SnapshotsGpu, OneItemPerRow) {
  // Every variant's slices (2 edges at least) hold a whole row: the
  // kernels read each row's edges from the offsets, without its work item.
  checkAll(shortRows(false), 400, Items::OnePerRow);
}

TEST(SnapshotsGpu, ShortRowsAndASplitHub) {
  // The same rows and one hub that every variant splits: the table is read
  // item by item, the hub's pieces added atomically.
  checkAll(shortRows(true), 500, Items::SomeRowSplit);
}

TEST(SnapshotsGpu, OneHugeRow) {
  // Row 0 aggregates every node (thousands of slices' worth); snapshots
  // drop and add a few of its edges; most other rows are empty.
  const int64_t n = 6000;
  std::vector<std::vector<int64_t>> src(8), dst(8);
  for (int t = 0; t < 8; ++t) {
    for (int64_t c = 0; c < n; ++c)
      if ((c + t) % 97 != 0) {
        dst[t].push_back(0);
        src[t].push_back(c);
      }
    for (int64_t r = 1; r < n; r += 37) {
      dst[t].push_back(r);
      src[t].push_back((r * 7 + t) % n);
    }
  }
  checkAll(fromLists(n, src, dst), 300);
}

std::string datasetPath(const std::string &file) {
  std::string dir = std::getenv("GNNC_DATASETS")
                        ? std::getenv("GNNC_DATASETS")
                        : std::string(GNNC_SOURCE_DIR) + "/../shared/datasets";
  return dir + "/" + file;
}

TEST(SnapshotsGpu, EnglandCovid) {
  std::string path = datasetPath("temporal_england_covid.npz");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << path << " not found (set GNNC_DATASETS to the shared "
                 << "datasets folder)";
  Expected<SnapshotSeries> s = readSnapshotSeries(path);
  ASSERT_TRUE(s) << s.message();
  checkAll(*s, 400);
}

TEST(SnapshotsGpu, BitcoinAlpha) {
  std::string path = datasetPath("temporal_bitcoinalpha.npz");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << path << " not found (set GNNC_DATASETS to the shared "
                 << "datasets folder)";
  Expected<SnapshotSeries> s = readSnapshotSeries(path);
  ASSERT_TRUE(s) << s.message();
  ASSERT_GE(s->size(), 8);
  checkAll(*s, 500);
}

TEST(SnapshotsGpu, RefusesAGroupOfAnotherSize) {
  test::GpuKernels &k = kernels();
  if (!k.skipReason.empty())
    GTEST_SKIP() << k.skipReason;
  ASSERT_TRUE(k.error.empty()) << k.error;
  CsrGraph g = generateRmat(6, 4, 1);
  SnapshotSeries s;
  s.numNodes = g.numRows;
  s.snapshots.assign(2, g);
  Expected<SnapshotGroup> group = overlapGroup(s, 0, 2);
  ASSERT_TRUE(group) << group.message();
  auto dg = ops::uploadSnapshotGroup(*group, true, false);
  ASSERT_TRUE(dg) << dg.message();
  auto x = ops::allocatePoisoned(g.numRows * 128, ElementType::F32);
  auto y = ops::allocatePoisoned(g.numRows * 128, ElementType::F32);
  ASSERT_TRUE(x && y);
  // Kernel 0 takes groups of 4 snapshots.
  Status st = ops::launchSnapshotSpmm(*k.runtime, k.kernels[0], *dg, *x, *y);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("groups of 4 snapshots, not 2"),
            std::string::npos)
      << st.message();
}

} // namespace
