//===- SnapshotSlicesTest.cpp - The work items of sliced kernels ----------===//
//
// ops::snapshotSlices on the CPU: every edge of every snapshot of a row is
// covered exactly once by the row's items (its overlap slices, the first
// slice's inline share of each snapshot's exclusive edges, and the
// exclusive slices), the flags say which rows are split, and the first
// slices of split rows come first. Its count, scan and fill (the rules the
// GPU build shares, gnnc/cuda/snapshot_slices.cuh) give, item for item, the
// table of a plain walk of the rows written here; and the GPU build's
// kernels compile through NVRTC for sm_80 and sm_90.
//
//===----------------------------------------------------------------------===//
#include "../Compiler/SnapshotSliceGroups.h"

#include "gnnc/Plan/Abi.h"
#include "gnnc/graph/Snapshots.h"
#include "gnnc/ops/Snapshots.h"
#include "gnnc/runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

using namespace gnnc;

namespace {

struct Item {
  int64_t begin, end, row;
  int snapPlusOne;
  bool first, split;
};

Item decode(const ops::SnapshotSlices &s, int64_t i) {
  const int64_t w = s.words[i];
  const int64_t length = (w >> kSliceLengthShift) & 0x1fff;
  return {s.begin[i],
          s.begin[i] + length,
          w & 0xffffffffll,
          static_cast<int>((w >> kSliceSnapshotShift) & 0xffff),
          (w & kSliceFirst) != 0,
          (w & kSliceSplit) != 0};
}

/// Checks the items of a group against its rows' edge counts.
void checkCover(const graph::SnapshotGroup &group, int64_t sliceSize) {
  graph::StackedExclusive stacked = graph::stackExclusive(group);
  const int64_t n = group.numNodes, snaps = group.size();
  auto slices = ops::snapshotSlices(group.overlap.rowPtr, stacked.offsets,
                                    snaps, sliceSize, "test");
  ASSERT_TRUE(slices) << slices.message();
  std::map<int64_t, int> items;
  std::set<int64_t> overlapSeen, firstRows;
  // Exclusive edges covered, by position in the stacked array.
  std::vector<int> exclusiveSeen(stacked.columns.size(), 0);
  bool front = true;
  int64_t splitRows = 0;
  for (int64_t i = 0; i < slices->count(); ++i) {
    Item it = decode(*slices, i);
    ASSERT_LT(it.row, n);
    ASSERT_LE(it.end - it.begin, sliceSize);
    ++items[it.row];
    const bool isFront = it.first && it.split;
    if (!isFront)
      front = false;
    ASSERT_TRUE(!isFront || front) << "split rows' first slices come first";
    splitRows += isFront;
    if (it.snapPlusOne == 0) {
      for (int64_t e = it.begin; e < it.end; ++e)
        ASSERT_TRUE(overlapSeen.insert(e).second) << "edge " << e << " twice";
      ASSERT_GE(it.begin, group.overlap.rowPtr[it.row]);
      ASSERT_LE(it.end, group.overlap.rowPtr[it.row + 1]);
      if (it.first) {
        ASSERT_TRUE(firstRows.insert(it.row).second);
        ASSERT_EQ(it.begin, group.overlap.rowPtr[it.row]);
        for (int64_t s = 0; s < snaps; ++s) {
          const int64_t *ptr = stacked.offsets.data() + s * (n + 1);
          for (int64_t e = ptr[it.row];
               e < std::min(ptr[it.row] + sliceSize, ptr[it.row + 1]); ++e)
            ++exclusiveSeen[e];
        }
      }
    } else {
      ASSERT_FALSE(it.first);
      const int64_t *ptr =
          stacked.offsets.data() + (it.snapPlusOne - 1) * (n + 1);
      ASSERT_GE(it.begin, ptr[it.row] + sliceSize);
      ASSERT_LE(it.end, ptr[it.row + 1]);
      for (int64_t e = it.begin; e < it.end; ++e)
        ++exclusiveSeen[e];
    }
  }
  EXPECT_EQ(splitRows, slices->splitRows);
  EXPECT_EQ(static_cast<int64_t>(firstRows.size()), n) << "one first each";
  EXPECT_EQ(static_cast<int64_t>(overlapSeen.size()), group.overlap.nnz());
  for (size_t e = 0; e < exclusiveSeen.size(); ++e)
    ASSERT_EQ(exclusiveSeen[e], 1) << "exclusive edge " << e;
  for (int64_t i = 0; i < slices->count(); ++i) {
    Item it = decode(*slices, i);
    EXPECT_EQ(it.split, items[it.row] > 1) << "row " << it.row;
  }
}

TEST(SnapshotSlices, CoverEveryEdgeOnce) {
  graph::EvolvingRmatOptions o;
  o.scale = 8;
  o.edgeFactor = 8;
  o.snapshots = 4;
  o.churn = 0.3;
  auto series = graph::generateEvolvingRmat(o);
  ASSERT_TRUE(series) << series.message();
  auto group = graph::overlapGroup(*series, 0, 4);
  ASSERT_TRUE(group) << group.message();
  for (int64_t slice : {1, 3, 8, 32, 1000})
    checkCover(*group, slice);
}

TEST(SnapshotSlices, EmptyRowsGetOneEmptySliceAndHubsAreSpread) {
  // Row 0: 10 shared edges; row 1: none; row 2: 9 exclusive edges in
  // snapshot 1 only.
  std::vector<std::vector<int64_t>> src(2), dst(2);
  for (int s = 0; s < 2; ++s)
    for (int64_t c = 0; c < 10; ++c) {
      dst[s].push_back(0);
      src[s].push_back(c + 3);
    }
  for (int64_t c = 0; c < 9; ++c) {
    dst[1].push_back(2);
    src[1].push_back(c + 3);
  }
  auto series = graph::snapshotsFromEdgeLists(13, src, dst, {}, "t");
  ASSERT_TRUE(series) << series.message();
  auto group = graph::overlapGroup(*series, 0, 2);
  ASSERT_TRUE(group) << group.message();
  checkCover(*group, 4);
  graph::StackedExclusive stacked = graph::stackExclusive(*group);
  auto slices =
      ops::snapshotSlices(group->overlap.rowPtr, stacked.offsets, 2, 4, "t");
  ASSERT_TRUE(slices);
  // Row 0: 3 slices (split); row 2: its first plus 2 exclusive slices
  // (split); the 11 other rows one empty slice each.
  EXPECT_EQ(slices->splitRows, 2);
  EXPECT_EQ(slices->count(), 3 + 3 + 11);
  EXPECT_EQ(decode(*slices, 0).row, 0);
  EXPECT_EQ(decode(*slices, 1).row, 2);
}

/// The table as a walk of the rows builds it, independently of the rules of
/// snapshot_slices.cuh: each row's slices in order, flagged Split when the
/// row has several, then the split rows' first slices moved to the front
/// (a stable partition).
ops::SnapshotSlices walkRows(const std::vector<int64_t> &rowPtr,
                             const std::vector<int64_t> &excl,
                             int64_t snapshots, int64_t sliceSize) {
  const int64_t rows = static_cast<int64_t>(rowPtr.size()) - 1;
  std::vector<std::pair<int64_t, int64_t>> all;
  for (int64_t r = 0; r < rows; ++r) {
    const size_t first = all.size();
    auto add = [&](int64_t begin, int64_t end, int64_t word) {
      all.push_back({begin, word | ((end - begin) << kSliceLengthShift)});
    };
    const int64_t b = rowPtr[r], e = rowPtr[r + 1];
    add(b, std::min(b + sliceSize, e), r | kSliceFirst);
    for (int64_t at = b + sliceSize; at < e; at += sliceSize)
      add(at, std::min(at + sliceSize, e), r);
    for (int64_t s = 0; s < snapshots; ++s) {
      const int64_t lo = excl[s * (rows + 1) + r];
      const int64_t hi = excl[s * (rows + 1) + r + 1];
      for (int64_t at = lo + sliceSize; at < hi; at += sliceSize)
        add(at, std::min(at + sliceSize, hi),
            r | ((s + 1) << kSliceSnapshotShift));
    }
    if (all.size() - first > 1)
      for (size_t i = first; i < all.size(); ++i)
        all[i].second |= kSliceSplit;
  }
  auto front = [](const std::pair<int64_t, int64_t> &item) {
    return (item.second & kSliceFirst) && (item.second & kSliceSplit);
  };
  ops::SnapshotSlices out;
  for (bool pass : {true, false})
    for (const auto &item : all)
      if (front(item) == pass) {
        out.begin.push_back(item.first);
        out.words.push_back(item.second);
        out.splitRows += pass;
      }
  return out;
}

TEST(SnapshotSlices, CountScanFillMatchAWalkOfTheRows) {
  std::string error;
  std::vector<test::NamedGroup> groups = test::sliceTestGroups(error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_GE(groups.size(), 10u);
  for (const test::NamedGroup &g : groups) {
    graph::StackedExclusive stacked = graph::stackExclusive(g.group);
    for (int64_t size : test::sliceTestSizes()) {
      SCOPED_TRACE(g.name + ", slice size " + std::to_string(size));
      auto got = ops::snapshotSlices(g.group.overlap.rowPtr, stacked.offsets,
                                     g.group.size(), size, "test");
      ASSERT_TRUE(got) << got.message();
      ops::SnapshotSlices want = walkRows(
          g.group.overlap.rowPtr, stacked.offsets, g.group.size(), size);
      ASSERT_EQ(got->count(), want.count());
      EXPECT_EQ(got->splitRows, want.splitRows);
      for (int64_t i = 0; i < want.count(); ++i) {
        ASSERT_EQ(got->begin[i], want.begin[i]) << "item " << i;
        ASSERT_EQ(got->words[i], want.words[i]) << "item " << i;
      }
      if (g.group.numNodes > 0 && size < 4096)
        checkCover(g.group, size);
    }
  }
}

/// The GPU build's CUDA, as the runtime compiles it, for `arch`.
class SnapshotSliceKernels : public ::testing::TestWithParam<std::string> {};

TEST_P(SnapshotSliceKernels, CompileThroughNvrtc) {
  std::vector<rt::KernelSpec> specs = ops::snapshotSliceKernelSpecs();
  ASSERT_EQ(specs.size(), 6u);
  for (const rt::KernelSpec &spec : specs) {
    EXPECT_TRUE(rt::validateKernelSpec(spec).isOk()) << spec.name;
    EXPECT_EQ(spec.source, specs[0].source) << "one module";
  }
  rt::CompileOptions options;
  options.arch = GetParam();
  auto binary =
      rt::compileCuda(ops::snapshotSliceKernelSource(), "slices.cu", options);
  ASSERT_TRUE(binary) << binary.message();
  for (const rt::KernelSpec &spec : specs)
    EXPECT_NE(binary->binary.find(spec.name), std::string::npos)
        << spec.name << " is missing from the cubin";
}

INSTANTIATE_TEST_SUITE_P(Arch, SnapshotSliceKernels,
                         ::testing::Values("sm_80", "sm_90"));

TEST(SnapshotSlices, BadInputsAreErrors) {
  std::vector<int64_t> rowPtr{0, 1, 1};
  std::vector<int64_t> excl(2 * 3, 0);
  auto zero = ops::snapshotSlices(rowPtr, excl, 2, 0, "t");
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.message().find("must be from 1 to 4096"), std::string::npos)
      << zero.message();
  EXPECT_FALSE(ops::snapshotSlices(rowPtr, excl, 2, 4097, "t"));
  auto wrong = ops::snapshotSlices(rowPtr, excl, 3, 4, "t");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.message().find("expected 3 x 3, got 6"), std::string::npos)
      << wrong.message();
  auto many = ops::snapshotSlices(rowPtr, std::vector<int64_t>(65536 * 3, 0),
                                  65536, 4, "t");
  ASSERT_FALSE(many);
  EXPECT_NE(many.message().find("from 1 to 65,535"), std::string::npos)
      << many.message();
  EXPECT_FALSE(ops::snapshotSlices({}, excl, 2, 4, "t"));
}

} // namespace
