//===- CApiSnapshotsTest.cpp - Snapshot groups in C, without a GPU --------===//
//
// Host-only snapshot groups (ctx = NULL) through the C functions: the
// split's counts against graph::overlapGroup, the errors that name the
// snapshot and the rule, the op checks of multi-snapshot spmm; and the
// gradient's rule (gnnc_spmm_feature_grad_op over the transposed group) as
// the adjoint of the forward on directed snapshots, for every reduce and
// scaling, with the CPU reference of gnnc_ops.
//
//===----------------------------------------------------------------------===//
#include "gnnc-c/Gnnc.h"

#include "gnnc/graph/Random.h"
#include "gnnc/graph/Snapshots.h"
#include "gnnc/ops/Snapshots.h"
#include "gnnc/reference/Spmm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace gnnc;

namespace {

std::string lastError() { return gnnc_last_error(); }

void expectError(gnnc_status status, std::initializer_list<const char *> parts,
                 const char *what) {
  ASSERT_EQ(status, GNNC_ERROR) << what << " succeeded";
  std::string message = lastError();
  for (const char *part : parts)
    EXPECT_NE(message.find(part), std::string::npos)
        << what << ": '" << part << "' not in: " << message;
}

gnnc_op_desc spmmDesc(gnnc_dtype type, int64_t width,
                      gnnc_reduce reduce = GNNC_REDUCE_SUM,
                      gnnc_scale scale = GNNC_SCALE_NONE) {
  gnnc_op_desc d;
  gnnc_op_desc_init(&d);
  d.dtype = type;
  d.width = width;
  d.reduce = reduce;
  d.scale = scale;
  return d;
}

/// A series of directed snapshots over `nodes` nodes: a base edge set kept
/// by each snapshot with probability `keep`, plus `extra` edges of its own;
/// node 0 receives from many, the last node from none.
graph::SnapshotSeries directedSeries(uint64_t seed, int64_t nodes,
                                     int64_t snapshots, int64_t edges,
                                     double keep, int64_t extra) {
  graph::Rng rng(seed);
  auto edge = [&](int64_t &src, int64_t &dst) {
    src = static_cast<int64_t>(rng.nextBelow(nodes));
    dst = rng.nextDouble() < 0.2
              ? 0
              : static_cast<int64_t>(rng.nextBelow(nodes - 1));
  };
  std::vector<int64_t> baseSrc(edges), baseDst(edges);
  for (int64_t i = 0; i < edges; ++i)
    edge(baseSrc[i], baseDst[i]);
  std::vector<std::vector<int64_t>> src(snapshots), dst(snapshots);
  for (int64_t t = 0; t < snapshots; ++t) {
    for (int64_t i = 0; i < edges; ++i)
      if (rng.nextDouble() < keep) {
        src[t].push_back(baseSrc[i]);
        dst[t].push_back(baseDst[i]);
      }
    for (int64_t i = 0; i < extra; ++i) {
      int64_t s = 0, d = 0;
      edge(s, d);
      src[t].push_back(s);
      dst[t].push_back(d);
    }
  }
  Expected<graph::SnapshotSeries> series =
      graph::snapshotsFromEdgeLists(nodes, src, dst, {}, "directed");
  EXPECT_TRUE(series) << series.message();
  return series.take();
}

/// A series' snapshots as the C interface takes them (int32 columns).
struct CSnapshots {
  int64_t nodes = 0;
  std::vector<std::vector<int64_t>> rowPtr;
  std::vector<std::vector<int32_t>> colIdx;
  std::vector<const int64_t *> rowPtrs;
  std::vector<const int32_t *> colIdxs;
  std::vector<int64_t> nnzs;

  explicit CSnapshots(const graph::SnapshotSeries &series)
      : nodes(series.numNodes) {
    for (const graph::CsrGraph &g : series.snapshots) {
      rowPtr.push_back(g.rowPtr);
      colIdx.emplace_back(g.colIdx.begin(), g.colIdx.end());
    }
    point();
  }
  /// Refreshes the pointer arrays after the vectors changed.
  void point() {
    rowPtrs.clear();
    colIdxs.clear();
    nnzs.clear();
    for (size_t s = 0; s < rowPtr.size(); ++s) {
      rowPtrs.push_back(rowPtr[s].data());
      colIdxs.push_back(colIdx[s].data());
      nnzs.push_back(static_cast<int64_t>(colIdx[s].size()));
    }
  }
  int64_t size() const { return static_cast<int64_t>(rowPtr.size()); }
  gnnc_status create(const char *name, gnnc_snapshot_group *out) const {
    return gnnc_snapshot_group_create(nullptr, name, nodes, size(),
                                      rowPtrs.data(), colIdxs.data(),
                                      nnzs.data(), out);
  }
};

TEST(CApiSnapshots, HostOnlyGroupCountsTheSplit) {
  graph::SnapshotSeries series = directedSeries(1, 50, 5, 300, 0.8, 30);
  CSnapshots c(series);
  gnnc_snapshot_group group = nullptr;
  ASSERT_EQ(c.create("host", &group), GNNC_OK) << lastError();
  ASSERT_NE(group, nullptr);
  Expected<graph::SnapshotGroup> expected = graph::overlapGroup(series, 0, 5);
  ASSERT_TRUE(expected) << expected.message();
  int64_t overlap = -1, stored = -1, total = -1;
  double rate = -1;
  ASSERT_EQ(gnnc_snapshot_group_edges(group, &overlap, &stored, &total, &rate),
            GNNC_OK)
      << lastError();
  EXPECT_EQ(overlap, expected->overlap.nnz());
  EXPECT_EQ(stored, expected->storedEdges());
  EXPECT_EQ(total, expected->snapshotEdges());
  EXPECT_DOUBLE_EQ(rate, expected->overlapRate());
  EXPECT_GT(rate, 0.3);
  EXPECT_LT(rate, 1.0);
  // Every output may be left out.
  EXPECT_EQ(
      gnnc_snapshot_group_edges(group, nullptr, nullptr, nullptr, nullptr),
      GNNC_OK);
  // A host-only group has no kernels; the arguments are checked first.
  gnnc_op_desc d = spmmDesc(GNNC_F32, 8);
  gnnc_kernel kernel = reinterpret_cast<gnnc_kernel>(1);
  expectError(gnnc_snapshot_kernel_get(group, &d, nullptr, 0, &kernel),
              {"gnnc_snapshot_kernel_get", "host is a host-only group"},
              "kernel of a host-only group");
  EXPECT_EQ(kernel, nullptr);
  expectError(gnnc_snapshot_kernel_get(group, &d, nullptr, 2, &kernel),
              {"transposed is 2"}, "transposed flag");
  d.row_stride = 16;
  expectError(gnnc_snapshot_kernel_get(group, &d, nullptr, 0, &kernel),
              {"desc.row_stride is 16"}, "row stride");
  gnnc_snapshot_group_destroy(group);

  // Identical snapshots share everything; empty ones nothing.
  graph::SnapshotSeries same = series;
  same.snapshots.assign(3, series.snapshots[0]);
  CSnapshots identical(same);
  ASSERT_EQ(identical.create(nullptr, &group), GNNC_OK) << lastError();
  ASSERT_EQ(gnnc_snapshot_group_edges(group, &overlap, &stored, &total, &rate),
            GNNC_OK);
  EXPECT_EQ(overlap, series.snapshots[0].nnz());
  EXPECT_EQ(stored, overlap);
  EXPECT_EQ(total, 3 * overlap);
  EXPECT_DOUBLE_EQ(rate, 1.0);
  gnnc_snapshot_group_destroy(group);
  int64_t emptyRows[3] = {0, 0, 0};
  const int64_t *rowPtrs[2] = {emptyRows, emptyRows};
  const int32_t *colIdxs[2] = {nullptr, nullptr};
  int64_t nnzs[2] = {0, 0};
  ASSERT_EQ(gnnc_snapshot_group_create(nullptr, "empty", 2, 2, rowPtrs, colIdxs,
                                       nnzs, &group),
            GNNC_OK)
      << lastError();
  ASSERT_EQ(gnnc_snapshot_group_edges(group, &overlap, &stored, &total, &rate),
            GNNC_OK);
  EXPECT_EQ(total, 0);
  EXPECT_DOUBLE_EQ(rate, 0.0);
  gnnc_snapshot_group_destroy(group);
}

TEST(CApiSnapshots, CreateErrorsNameTheSnapshotAndTheRule) {
  graph::SnapshotSeries series = directedSeries(2, 12, 3, 40, 0.7, 5);
  gnnc_snapshot_group group = reinterpret_cast<gnnc_snapshot_group>(1);
  auto expectRefused = [&](const CSnapshots &c,
                           std::initializer_list<const char *> parts,
                           const char *what) {
    expectError(c.create("grp", &group), parts, what);
    EXPECT_EQ(group, nullptr) << what;
  };
  {
    CSnapshots c(series);
    // Row 0 of snapshot 2 has several sources: swap two of them.
    ASSERT_GE(c.rowPtr[2][1], 2);
    std::swap(c.colIdx[2][0], c.colIdx[2][1]);
    expectRefused(c,
                  {"gnnc_snapshot_group_create", "grp: snapshot 2: row 0 is "
                                                 "not sorted and unique"},
                  "unsorted row");
  }
  {
    CSnapshots c(series);
    c.colIdx[1][1] = c.colIdx[1][0]; // a repeated edge
    expectRefused(c, {"grp: snapshot 1: row 0 is not sorted and unique"},
                  "repeated edge");
  }
  {
    CSnapshots c(series);
    c.colIdx[0].back() = 12;
    expectRefused(c, {"grp: snapshot 0", "= 12", "out of range [0, 12)"},
                  "column out of range");
  }
  {
    CSnapshots c(series);
    c.nnzs[1] -= 1;
    expectRefused(c, {"grp: snapshot 1", "rowPtr[numRows]"}, "nnz mismatch");
    c.point();
    c.nnzs[2] = -3;
    expectRefused(c, {"grp: snapshot 2: nnzs[2] is negative (-3)"},
                  "negative nnz");
    c.point();
    c.rowPtr[1][5] = c.rowPtr[1][6] + 1;
    expectRefused(c, {"grp: snapshot 1", "not monotone"}, "offsets");
  }
  {
    CSnapshots c(series);
    c.rowPtrs[1] = nullptr;
    expectRefused(c, {"grp: snapshot 1: host_row_ptrs[1] is NULL"},
                  "null offsets");
    c.point();
    c.colIdxs[2] = nullptr;
    expectRefused(c, {"grp: snapshot 2: host_col_idxs[2] is NULL"},
                  "null columns");
  }
  CSnapshots c(series);
  auto create = [&](int64_t nodes, int64_t snapshots) {
    return gnnc_snapshot_group_create(nullptr, nullptr, nodes, snapshots,
                                      c.rowPtrs.data(), c.colIdxs.data(),
                                      c.nnzs.data(), &group);
  };
  expectError(create(12, 0),
              {"snapshot group: num_snapshots is 0; a group holds 1 to 64"},
              "no snapshots");
  expectError(create(12, 65), {"num_snapshots is 65"}, "too many");
  expectError(create(-1, 3), {"num_nodes is -1"}, "negative nodes");
  expectError(create(int64_t(1) << 32, 3), {"int32 column indices"},
              "too many nodes");
  expectError(gnnc_snapshot_group_create(nullptr, "g", 12, 3, nullptr,
                                         c.colIdxs.data(), c.nnzs.data(),
                                         &group),
              {"host_row_ptrs is NULL"}, "null offsets");
  expectError(gnnc_snapshot_group_create(nullptr, "g", 12, 3, c.rowPtrs.data(),
                                         c.colIdxs.data(), nullptr, &group),
              {"nnzs is NULL"}, "null counts");
  expectError(gnnc_snapshot_group_create(nullptr, "g", 12, 3, c.rowPtrs.data(),
                                         c.colIdxs.data(), c.nnzs.data(),
                                         nullptr),
              {"out is NULL"}, "null out");
}

TEST(CApiSnapshots, ChooseChecksEverythingBeforeTheGpu) {
  // A series longer than a group may hold (70 snapshots); every argument
  // and every snapshot is checked before the sizes are timed, which needs
  // a context.
  graph::SnapshotSeries series = directedSeries(3, 12, 70, 40, 0.8, 3);
  CSnapshots c(series);
  gnnc_snapshot_group_choice choice;
  auto choose = [&](const CSnapshots &k, int64_t width, int32_t dtype,
                    int64_t budget, int pipelined,
                    gnnc_snapshot_group_choice *out) {
    gnnc_dtype type;
    std::memcpy(&type, &dtype, sizeof(type));
    return gnnc_snapshot_group_choose(
        nullptr, "covid", k.nodes, k.size(), k.rowPtrs.data(), k.colIdxs.data(),
        k.nnzs.data(), width, type, budget, pipelined, out);
  };
  expectError(choose(c, 16, GNNC_F32, 0, 1, &choice),
              {"gnnc_snapshot_group_choose",
               "ctx is NULL: the group sizes are timed on a context's GPU"},
              "no context");
  EXPECT_EQ(choice.snapshots, 0);
  EXPECT_EQ(choice.num_sizes, 0);
  expectError(choose(c, 0, GNNC_F32, 0, 1, &choice),
              {"series 'covid'", "width is 0; at least 1"}, "no width");
  expectError(choose(c, 16, 3, 0, 1, &choice),
              {"dtype is 3, not GNNC_F32 (0), GNNC_F16 (1) or GNNC_BF16 (2)"},
              "bad dtype");
  expectError(choose(c, 16, GNNC_F16, -1, 1, &choice), {"memoryBudget is -1"},
              "negative budget");
  expectError(choose(c, 16, GNNC_F16, 0, 2, &choice),
              {"pipelined is 2; 1 (copies overlap the aggregation) or 0"},
              "bad pipelined");
  expectError(choose(c, 16, GNNC_F16, 0, 1, nullptr), {"out is NULL"},
              "null out");
  {
    // The last snapshot is checked too, though no group tried reaches it.
    CSnapshots bad(series);
    ASSERT_GE(bad.rowPtr[69][1], 2);
    std::swap(bad.colIdx[69][0], bad.colIdx[69][1]);
    expectError(choose(bad, 16, GNNC_F32, 0, 1, &choice),
                {"covid", "snapshot 69", "row 0 is not sorted and unique"},
                "unsorted row of the last snapshot");
  }
  {
    CSnapshots bad(series);
    bad.rowPtrs[4] = nullptr;
    expectError(choose(bad, 16, GNNC_F32, 0, 1, &choice),
                {"covid: snapshot 4: host_row_ptrs[4] is NULL"},
                "null offsets");
  }
  expectError(gnnc_snapshot_group_choose(
                  nullptr, nullptr, 12, 0, c.rowPtrs.data(), c.colIdxs.data(),
                  c.nnzs.data(), 16, GNNC_F32, 0, 1, &choice),
              {"series 'snapshot series': the series has no snapshots"},
              "empty series");
  expectError(gnnc_snapshot_group_choose(
                  nullptr, "covid", 12, -2, c.rowPtrs.data(), c.colIdxs.data(),
                  c.nnzs.data(), 16, GNNC_F32, 0, 1, &choice),
              {"covid: num_snapshots is -2, a negative count"},
              "negative count");
}

TEST(CApiSnapshots, NullHandlesAreErrors) {
  gnnc_op_desc d = spmmDesc(GNNC_F32, 8);
  gnnc_buffer none = {0, 0};
  gnnc_kernel kernel = nullptr;
  expectError(
      gnnc_snapshot_group_edges(nullptr, nullptr, nullptr, nullptr, nullptr),
      {"gnnc_snapshot_group_edges", "group is NULL"}, "null group");
  expectError(gnnc_snapshot_kernel_get(nullptr, &d, nullptr, 0, &kernel),
              {"group is NULL"}, "null group");
  expectError(gnnc_snapshot_spmm(nullptr, none, none, 0),
              {"gnnc_snapshot_spmm", "kernel is NULL"}, "null kernel");
  gnnc_snapshot_group_destroy(nullptr);
}

TEST(CApiSnapshots, OpCheckAcceptsSumAndMeanWithEveryScaling) {
  for (gnnc_dtype type : {GNNC_F32, GNNC_F16, GNNC_BF16})
    for (gnnc_reduce reduce : {GNNC_REDUCE_SUM, GNNC_REDUCE_MEAN})
      for (gnnc_scale scale : {GNNC_SCALE_NONE, GNNC_SCALE_LEFT,
                               GNNC_SCALE_RIGHT, GNNC_SCALE_BOTH})
        for (int64_t width : {1, 6, 32}) {
          SCOPED_TRACE("type " + std::to_string(type) + " reduce " +
                       std::to_string(reduce) + " scale " +
                       std::to_string(scale) + " width " +
                       std::to_string(width));
          gnnc_op_desc d = spmmDesc(type, width, reduce, scale);
          EXPECT_EQ(gnnc_snapshot_op_check(&d, 4, nullptr), GNNC_OK)
              << lastError();
          // The feature gradient compiles for a group too.
          gnnc_op_desc grad;
          ASSERT_EQ(gnnc_spmm_feature_grad_op(&d, &grad), GNNC_OK)
              << lastError();
          EXPECT_EQ(gnnc_snapshot_op_check(&grad, 4, nullptr), GNNC_OK)
              << lastError();
        }
  gnnc_op_desc d = spmmDesc(GNNC_F16, 8, GNNC_REDUCE_MEAN, GNNC_SCALE_BOTH);
  EXPECT_EQ(gnnc_snapshot_op_check(
                &d, 64, "#gnn.schedule<strategy = sliced, slice_size = 8>"),
            GNNC_OK)
      << lastError();
  EXPECT_EQ(gnnc_snapshot_op_check(&d, 1, nullptr), GNNC_OK) << lastError();
  d.row_stride = 8; // the width: unpadded
  EXPECT_EQ(gnnc_snapshot_op_check(&d, 3, nullptr), GNNC_OK) << lastError();
}

TEST(CApiSnapshots, OpCheckRejectsWithTheRule) {
  gnnc_op_desc d = spmmDesc(GNNC_F32, 8, GNNC_REDUCE_MAX);
  expectError(gnnc_snapshot_op_check(&d, 4, nullptr),
              {"gnnc_snapshot_op_check", "reduce = sum or mean"}, "max");
  d = spmmDesc(GNNC_F32, 8);
  d.edge_values = 1;
  expectError(gnnc_snapshot_op_check(&d, 4, nullptr),
              {"edge values over a group of snapshots"}, "edge values");
  d = spmmDesc(GNNC_F32, 8);
  d.has_self_weight = 1;
  expectError(gnnc_snapshot_op_check(&d, 4, nullptr), {"self_weight"},
              "self term");
  d = spmmDesc(GNNC_F32, 8);
  d.row_stride = 16;
  expectError(gnnc_snapshot_op_check(&d, 4, nullptr),
              {"desc.row_stride is 16", "unpadded"}, "row stride");
  d = spmmDesc(GNNC_F32, 8);
  d.kind = GNNC_OP_SDDMM;
  expectError(gnnc_snapshot_op_check(&d, 4, nullptr),
              {"desc is a gnn.sddmm", "gnn.spmm only"}, "sddmm");
  d = spmmDesc(GNNC_F32, 0);
  expectError(gnnc_snapshot_op_check(&d, 4, nullptr),
              {"width must be at least 1"}, "width 0");
  d = spmmDesc(GNNC_F32, 8);
  expectError(gnnc_snapshot_op_check(&d, 0, nullptr),
              {"a group of 0 snapshots"}, "no snapshots");
  expectError(gnnc_snapshot_op_check(&d, 65, nullptr), {"at most 64"},
              "too many snapshots");
  d.width = int64_t(1) << 60;
  expectError(gnnc_snapshot_op_check(&d, 16, nullptr), {"overflows 64 bits"},
              "overflowing width");
  d = spmmDesc(GNNC_F32, 6);
  expectError(gnnc_snapshot_op_check(
                  &d, 4, "#gnn.schedule<strategy = vertex_parallel>"),
              {"strategy = sliced"}, "another strategy");
  expectError(gnnc_snapshot_op_check(
                  &d, 4, "#gnn.schedule<strategy = sliced, vector_width = 4>"),
              {"vector_width 4 does not divide the features of one snapshot"},
              "vector straddling snapshots");
  expectError(gnnc_snapshot_op_check(&d, 4, "#gnn.schedule<"), {"schedule"},
              "malformed schedule");
  expectError(gnnc_snapshot_op_check(nullptr, 4, nullptr), {"desc is NULL"},
              "null desc");
}

/// The CPU reference of the spmm `d` (as the C interface reads it) over
/// `group` of x (nodes x S x width).
std::vector<double> reference(const graph::SnapshotGroup &group,
                              const gnnc_op_desc &d,
                              const std::vector<float> &x) {
  ref::SpmmOptions options;
  options.reduce = static_cast<Reduce>(d.reduce);
  options.scale = static_cast<DegreeScale>(d.scale);
  options.colNormExponent = d.has_col_norm_exponent ? d.col_norm_exponent : 0.5;
  return ops::snapshotSpmmReference(group, x, d.width, options, nullptr);
}

double dot(const std::vector<double> &a, const std::vector<float> &b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i)
    sum += a[i] * b[i];
  return sum;
}

TEST(CApiSnapshots, FeatureGradRuleIsTheAdjointOnDirectedSnapshots) {
  // For y = A x (A: the forward over the group, snapshot by snapshot) the
  // feature gradient is Aᵀ dy; the rule says Aᵀ is the gradient op over the
  // transposed group. <dy, A x> = <B dy, x> for random x and dy holds for
  // B = Aᵀ only (up to a set of measure zero).
  graph::SnapshotSeries series = directedSeries(7, 40, 4, 150, 0.75, 25);
  Expected<graph::SnapshotGroup> group = graph::overlapGroup(series, 0, 4);
  ASSERT_TRUE(group) << group.message();
  graph::SnapshotGroup transposed = graph::transposeGroup(*group);
  ASSERT_NE(transposed.overlap.colIdx, group->overlap.colIdx)
      << "the snapshots are not directed";
  const int64_t n = series.numNodes, width = 3, len = n * 4 * width;
  const std::vector<float> x = ref::randomFeatures(len, 1);
  const std::vector<float> dy = ref::randomFeatures(len, 2);
  struct Case {
    gnnc_reduce reduce;
    gnnc_scale scale;
    double exponent; // 0: none set
  };
  const Case cases[] = {
      {GNNC_REDUCE_SUM, GNNC_SCALE_NONE, 0},
      {GNNC_REDUCE_SUM, GNNC_SCALE_LEFT, 0},
      {GNNC_REDUCE_SUM, GNNC_SCALE_RIGHT, 0},
      {GNNC_REDUCE_SUM, GNNC_SCALE_BOTH, 0},
      {GNNC_REDUCE_MEAN, GNNC_SCALE_NONE, 0},
      {GNNC_REDUCE_MEAN, GNNC_SCALE_LEFT, 0},
      {GNNC_REDUCE_MEAN, GNNC_SCALE_RIGHT, 0},
      {GNNC_REDUCE_MEAN, GNNC_SCALE_BOTH, 0},
      {GNNC_REDUCE_SUM, GNNC_SCALE_BOTH, 0.5},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE("reduce " + std::to_string(c.reduce) + " scale " +
                 std::to_string(c.scale));
    gnnc_op_desc fwd = spmmDesc(GNNC_F32, width, c.reduce, c.scale);
    if (c.exponent != 0) {
      fwd.has_col_norm_exponent = 1;
      fwd.col_norm_exponent = c.exponent;
    }
    gnnc_op_desc grad;
    ASSERT_EQ(gnnc_spmm_feature_grad_op(&fwd, &grad), GNNC_OK) << lastError();
    const std::vector<double> y = reference(*group, fwd, x);
    const std::vector<double> dx = reference(transposed, grad, dy);
    const double lhs = dot(y, dy), rhs = dot(dx, x);
    EXPECT_NEAR(lhs, rhs, 1e-9 * (std::abs(lhs) + 1)) << lhs << " vs " << rhs;
    // Over the group itself (not transposed) the rule would be wrong here.
    const std::vector<double> wrong = reference(*group, grad, dy);
    EXPECT_GT(std::abs(dot(wrong, x) - lhs), 1e-6 * (std::abs(lhs) + 1));
  }
}

} // namespace
