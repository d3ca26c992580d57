//===- HarnessTest.cpp - Tests of gnn-bench's harness ---------------------===//
//
// Anywhere: the byte formulas, the JSON records, the host inputs and
// comparison, the GAT chain's reference (against the composition of the
// per-op references), the .npy writer (read back with the project's reader),
// the schedule variants and every generated SpMM, SDDMM and GAT-chain kernel
// (compiled by gnnc and by NVRTC for sm_80 and sm_90). On a GPU: a kernel
// that writes one wrong value is voided (status "wrong", no timing) and a
// correct kernel is timed, for SpMM, SDDMM and the chain.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Bench/Harness.h"
#include "GpuBench.h"
#include "gnnc/Bench/NpyWriter.h"
#include "gnnc/Bench/Suite.h"
#include "gnnc/graph/Readers.h"
#include "gnnc/graph/Reorder.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/reference/EdgeSoftmax.h"
#include "gnnc/reference/Sddmm.h"
#include "gnnc/reference/Spmm.h"
#include "gnnc/runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

using namespace gnnc;
using namespace gnnc::bench;

namespace {

ProblemShape smallShape(bool edgeValues) {
  ProblemShape s;
  s.numRows = 10;
  s.numCols = 20;
  s.nnz = 50;
  s.width = 8;
  s.elementBytes = 4;
  s.offsetBytes = 8;
  s.indexBytes = 4;
  s.edgeValues = edgeValues;
  return s;
}

/// A copy of `spec` whose kernel, after computing every row correctly,
/// overwrites Y[0][0] with 12345 (thread 0 of block 0 owns that element, so
/// the write lands last). Same name, parameters and launch rule.
rt::KernelSpec breakKernel(const rt::KernelSpec &spec) {
  rt::KernelSpec broken = spec;
  size_t start = broken.source.find(spec.name + "(");
  EXPECT_NE(start, std::string::npos);
  size_t end = broken.source.find("\n}\n", start);
  EXPECT_NE(end, std::string::npos);
  broken.source.insert(end + 1, "  if (blockIdx.x == 0 && threadIdx.x == 0)\n"
                                "    y[0] = 12345.0f;\n");
  return broken;
}

/// Runs `fn` with GNNC_HOST_THREADS set to `threads`, then restores it.
template <typename Fn> void withHostThreads(const char *threads, Fn fn) {
  const char *old = std::getenv("GNNC_HOST_THREADS");
  std::string saved = old ? old : "";
  ::setenv("GNNC_HOST_THREADS", threads, 1);
  fn();
  if (old)
    ::setenv("GNNC_HOST_THREADS", saved.c_str(), 1);
  else
    ::unsetenv("GNNC_HOST_THREADS");
}

/// The GAT chain composed from the per-op references, each intermediate
/// rounded to `type`: ref::sddmm (add, leaky ReLU), ref::edgeSoftmax,
/// ref::spmmSumInto with the weights as edge values.
void composedGatReference(const graph::CsrGraph &g,
                          const std::vector<float> &attRow,
                          const std::vector<float> &attCol,
                          const std::vector<float> &x, int64_t width,
                          ElementType type, std::vector<double> &out,
                          std::vector<double> &magnitude) {
  std::vector<double> logits, alpha;
  ref::sddmm(g, attRow.data(), attCol.data(), 1, gnnc::SddmmForm::Add,
             kGatLeakySlope, logits);
  std::vector<float> rounded(logits.size());
  for (size_t i = 0; i < logits.size(); ++i)
    rounded[i] = roundToElementType(static_cast<float>(logits[i]), type);
  ref::edgeSoftmax(g, rounded.data(), 1, alpha);
  for (size_t i = 0; i < alpha.size(); ++i)
    rounded[i] = roundToElementType(static_cast<float>(alpha[i]), type);
  out.assign(static_cast<size_t>(g.numRows * width), 0.0);
  magnitude.assign(out.size(), 0.0);
  ref::spmmSumInto(g, rounded.data(), x.data(), width, out.data(),
                   magnitude.data(), 1);
}

} // namespace

TEST(BenchBytes, SpmmBounds) {
  // row_ptr 11 * 8 = 88, col_idx 50 * 4 = 200, X 20 rows * 32 = 640,
  // Y 10 rows * 32 = 320, X per edge 50 * 32 = 1600, values 50 * 4 = 200.
  ByteCounts v = spmmBytes(smallShape(false));
  EXPECT_DOUBLE_EQ(v.compulsory, 88 + 200 + 640 + 320);
  EXPECT_DOUBLE_EQ(v.gather, 88 + 200 + 1600 + 320);
  ByteCounts ve = spmmBytes(smallShape(true));
  EXPECT_DOUBLE_EQ(ve.compulsory, v.compulsory + 200);
  EXPECT_DOUBLE_EQ(ve.gather, v.gather + 200);
}

TEST(BenchBytes, SddmmBounds) {
  // Values written 200; A = 10 rows * 32 = 320 once; B = 20 rows * 32 = 640
  // once (compulsory) or 50 * 32 = 1600 (gather).
  ByteCounts b = sddmmBytes(smallShape(false));
  EXPECT_DOUBLE_EQ(b.compulsory, 88 + 200 + 200 + 320 + 640);
  EXPECT_DOUBLE_EQ(b.gather, 88 + 200 + 200 + 320 + 1600);
}

TEST(BenchBytes, BandwidthAndJson) {
  EXPECT_DOUBLE_EQ(gigabytesPerSecond(2e9, 1000.0), 2.0);
  EXPECT_DOUBLE_EQ(gigabytesPerSecond(1e6, 0.0), 0.0);
  ByteCounts bytes{3e9, 6e9};
  nlohmann::json j = bandwidthJson(bytes, 1.0, 3000.0);
  EXPECT_DOUBLE_EQ(j["gbs_compulsory"].get<double>(), 3000.0);
  EXPECT_DOUBLE_EQ(j["gbs_gather"].get<double>(), 6000.0);
  EXPECT_DOUBLE_EQ(j["frac_copy_compulsory"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["frac_copy_gather"].get<double>(), 2.0);
  EXPECT_FALSE(bandwidthJson(bytes, 1.0, 0.0).contains("frac_copy_gather"));
}

TEST(BenchJson, KernelRecords) {
  KernelResult wrong;
  wrong.label = "default";
  wrong.status = "wrong";
  wrong.report = "1 of 64 elements differ";
  nlohmann::json w = toJson(wrong, ByteCounts{1e6, 2e6}, 3000, 1.0, 0.5);
  EXPECT_EQ(w["status"], "wrong");
  EXPECT_TRUE(w["time_ms"].is_null());
  EXPECT_FALSE(w.contains("gbs_compulsory"));
  EXPECT_FALSE(w.contains("speedup_vs_cusparse_default"));

  KernelResult ok;
  ok.status = "ok";
  ok.timing = TimingStats{0.5, 0.4, 0.7, 20};
  nlohmann::json o = toJson(ok, ByteCounts{1e6, 2e6}, 4.0, 1.0, 0.25);
  EXPECT_DOUBLE_EQ(o["time_ms"]["median"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(o["speedup_vs_cusparse_default"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(o["speedup_vs_cusparse_fastest"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(o["gbs_compulsory"].get<double>(), 2.0); // 1e6 B / 0.5 ms
  EXPECT_DOUBLE_EQ(o["frac_copy_compulsory"].get<double>(), 0.5);
}

TEST(BenchHost, InputsIgnoreTheThreadCountAndArraysAreReused) {
  const int64_t n = (int64_t(1) << 20) + 17; // Large enough for threads.
  HostVector<float> one, many;
  withHostThreads("1",
                  [&] { randomInputsInto(one, n, 42, ElementType::BF16); });
  withHostThreads("3",
                  [&] { randomInputsInto(many, n, 42, ElementType::BF16); });
  ASSERT_EQ(one.size(), static_cast<size_t>(n));
  EXPECT_TRUE(std::equal(one.begin(), one.end(), many.begin()));
  std::vector<float> raw = ref::randomFeatures(n, 42);
  for (int64_t i = 0; i < n; i += 997) {
    EXPECT_EQ(one[i], roundToElementType(raw[i], ElementType::BF16));
    EXPECT_GE(one[i], -1.0f);
    EXPECT_LE(one[i], 1.0f);
  }
  // A smaller or equal size keeps the allocation; a larger one replaces it.
  const float *data = one.data();
  resizeForOverwrite(one, 1000);
  EXPECT_EQ(one.data(), data);
  EXPECT_EQ(one.size(), 1000u);
  resizeForOverwrite(one, static_cast<size_t>(n));
  EXPECT_EQ(one.data(), data);
  HostVector<double> touched;
  resizeForOverwrite(touched, 70000, /*touch=*/true);
  EXPECT_TRUE(std::all_of(touched.begin(), touched.end(),
                          [](double v) { return v == 0.0; }));
}

TEST(BenchHost, CompareScaled) {
  std::vector<double> expected{1.0, 2.0, -3.0, 0.0}, magnitude{1, 2, 3, 0};
  HostVector<float> got;
  resizeForOverwrite(got, 4);
  std::copy(expected.begin(), expected.end(), got.begin());
  ops::SpmmCheck ok = compareScaled(got, expected, magnitude, 2, 1e-5, 0.0);
  EXPECT_TRUE(ok.ok) << ok.report;
  got[2] = -3.1f;
  ops::SpmmCheck wrong = compareScaled(got, expected, magnitude, 2, 1e-5, 0.0);
  EXPECT_FALSE(wrong.ok);
  EXPECT_NE(wrong.report.find("(row 1, col 0)"), std::string::npos)
      << wrong.report;
  std::vector<double> shorter{1.0};
  EXPECT_FALSE(compareScaled(got, shorter, magnitude, 2, 1e-5, 0.0).ok);
}

// The chain's reference equals the composition of the per-op references
// (each intermediate rounded to the type), does not depend on the thread
// count, and its weights sum to one per non-empty row.
TEST(BenchHost, GatChainReference) {
  for (ElementType type : {ElementType::F32, ElementType::F16}) {
    graph::CsrGraph g = graph::generateRmat(12, 8, 11);
    // Row 0 empty: its output is zero.
    int64_t drop = g.rowPtr[1];
    g.colIdx.erase(g.colIdx.begin(), g.colIdx.begin() + drop);
    for (size_t r = 1; r < g.rowPtr.size(); ++r)
      g.rowPtr[r] -= drop;
    ASSERT_TRUE(g.values.empty());
    const int64_t width = 64;
    ASSERT_GE(g.nnz() * width, int64_t(1) << 20); // takes the threaded path
    HostVector<float> attRow, attCol;
    randomInputsInto(attRow, g.numRows, 5, type, -4.0f, 4.0f);
    randomInputsInto(attCol, g.numCols, 6, type, -4.0f, 4.0f);
    HostVector<float> x = randomInputs(g.numCols * width, 7, type);
    for (float v : attRow)
      ASSERT_TRUE(v >= -4.0f && v <= 4.0f);

    std::vector<double> expected, expectedMag;
    composedGatReference(g, {attRow.begin(), attRow.end()},
                         {attCol.begin(), attCol.end()}, {x.begin(), x.end()},
                         width, type, expected, expectedMag);
    std::vector<double> one(expected.size(), -1), oneMag(expected.size(), -1);
    std::vector<double> many(expected.size(), -1), manyMag(expected.size(), -1);
    withHostThreads("1", [&] {
      ref::attentionSpmmInto(g, attRow.data(), attCol.data(), x.data(), width,
                             kGatLeakySlope, type, one.data(), oneMag.data());
    });
    withHostThreads("3", [&] {
      ref::attentionSpmmInto(g, attRow.data(), attCol.data(), x.data(), width,
                             kGatLeakySlope, type, many.data(), manyMag.data());
    });
    EXPECT_EQ(one, many);
    EXPECT_EQ(oneMag, manyMag);
    for (int64_t f = 0; f < width; ++f) {
      EXPECT_EQ(one[f], 0.0);
      EXPECT_EQ(oneMag[f], 0.0);
    }
    size_t off = 0;
    for (size_t i = 0; i < one.size(); ++i) {
      double bound = 1e-12 * (std::fabs(expectedMag[i]) + 1e-30);
      if (std::fabs(one[i] - expected[i]) > bound ||
          std::fabs(oneMag[i] - expectedMag[i]) > bound)
        ++off;
    }
    EXPECT_EQ(off, 0u) << elementTypeName(type);

    // Unrounded (the fused kernel's reference): within the chain's
    // tolerance of the rounded one, and the vector form the same values.
    std::vector<double> plain, plainMag;
    ref::attentionSpmm(g, attRow.data(), attCol.data(), x.data(), width,
                       kGatLeakySlope, plain, &plainMag);
    std::vector<double> into(plain.size(), -1), intoMag(plain.size(), -1);
    ref::attentionSpmmInto(g, attRow.data(), attCol.data(), x.data(), width,
                           kGatLeakySlope, std::nullopt, into.data(),
                           intoMag.data());
    EXPECT_EQ(plain, into);
    EXPECT_EQ(plainMag, intoMag);
    size_t far = 0;
    for (size_t i = 0; i < one.size(); ++i)
      if (std::fabs(one[i] - plain[i]) >
          gatChainTolerance(type) * plainMag[i] + 1e-30)
        ++far;
    EXPECT_EQ(far, 0u) << elementTypeName(type);

    // With all-one features every row sums its weights: 1 up to their
    // rounding to the type.
    HostVector<float> ones;
    resizeForOverwrite(ones, static_cast<size_t>(g.numCols * width));
    std::fill(ones.begin(), ones.end(), 1.0f);
    ref::attentionSpmmInto(g, attRow.data(), attCol.data(), ones.data(), width,
                           kGatLeakySlope, type, one.data(), oneMag.data());
    double worst = 0;
    for (int64_t r = 1; r < g.numRows; ++r)
      if (g.rowPtr[r + 1] > g.rowPtr[r])
        worst = std::max(worst, std::fabs(one[r * width] - 1.0) /
                                    double(g.rowPtr[r + 1] - g.rowPtr[r]));
    EXPECT_LT(worst, type == ElementType::F32 ? 1e-7 : 1e-3);
  }
  EXPECT_DOUBLE_EQ(gatChainTolerance(ElementType::F16),
                   4 * ops::spmmTolerance(ElementType::F16));
}

TEST(BenchNpy, HeaderAndRoundTrip) {
  std::string header = npyHeader("<i8", {5});
  EXPECT_EQ(header.size() % 64, 0u);
  EXPECT_EQ(header.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(header.back(), '\n');

  graph::CsrGraph g = graph::generateRmat(8, 4, 3);
  g.name = "tiny";
  std::string dir =
      ::testing::TempDir() + "/gnnc-bench-npy-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(writeGraphNpy(g, dir, "tiny").isOk());
  auto indptr = graph::readNpy(dir + "/tiny.indptr.npy");
  ASSERT_TRUE(indptr.isOk()) << indptr.message();
  EXPECT_EQ(indptr->dtype, "<i8");
  ASSERT_EQ(indptr->shape, std::vector<int64_t>{g.numRows + 1});
  auto indices = graph::readNpy(dir + "/tiny.indices.npy");
  ASSERT_TRUE(indices.isOk()) << indices.message();
  EXPECT_EQ(indices->dtype, "<i4");
  EXPECT_EQ(*indptr->asInt64(), g.rowPtr);
  EXPECT_EQ(*indices->asInt64(), g.colIdx);
  std::filesystem::remove_all(dir);
}

/// A complete vertex_parallel schedule.
Schedule vertex(int vw, int dw, int tpb) {
  Schedule s;
  s.vectorWidth = vw;
  s.dimWorkers = dw;
  s.threadsPerBlock = tpb;
  return s;
}

TEST(BenchSchedules, Variants) {
  const Schedule resolved = vertex(4, 16, 256);
  const OpDesc f32w64 = benchSpmmOp(ElementType::F32, 64);
  auto f32 = scheduleVariants(resolved, f32w64, 32);
  ASSERT_EQ(f32.size(), 25u);
  // Every variant is complete and legal, and says so in its text form.
  for (const ScheduleChoice &c : f32) {
    ASSERT_TRUE(c.schedule) << c.label;
    EXPECT_TRUE(planKernel(f32w64, *c.schedule)) << c.label;
    EXPECT_TRUE(isCompleteSchedule(*c.schedule)) << c.label;
  }
  EXPECT_EQ(f32[0].label, "default");
  EXPECT_EQ(*f32[0].schedule, resolved);
  // Edge-parallel next, with the default's loads.
  EXPECT_EQ(f32[1].label, "ep256");
  EXPECT_EQ(f32[1].schedule->str(),
            "#gnn.schedule<strategy = edge_parallel, vector_width = 4, "
            "dim_workers = 16, threads_per_block = 256, edges_per_warp = 256, "
            "write = staged>");
  EXPECT_EQ(f32[2].schedule->edgesPerWarp, 128);
  // Half the elements per load, twice the threads.
  EXPECT_EQ(f32[3].label, "ep256vw2");
  EXPECT_EQ(f32[3].schedule->vectorWidth, 2);
  EXPECT_EQ(f32[3].schedule->dimWorkers, 32);
  EXPECT_EQ(f32[4].label, "ep128vw2");
  // 512 items per worker in blocks of 128 threads.
  EXPECT_EQ(f32[5].label, "ep512t128");
  EXPECT_EQ(f32[5].schedule->edgesPerWarp, 512);
  EXPECT_EQ(f32[5].schedule->threadsPerBlock, 128);
  EXPECT_EQ(f32[6].label, "ep64vw2");
  EXPECT_EQ(f32[7].schedule->edgesPerWarp, 64);
  // Neighbour groups.
  EXPECT_EQ(f32[8].label, "ng32");
  EXPECT_EQ(f32[8].schedule->str(),
            "#gnn.schedule<strategy = neighbor_group, vector_width = 4, "
            "group_size = 32, dim_workers = 16, threads_per_block = 256, "
            "write = atomic>");
  EXPECT_EQ(f32[9].label, "ng8");
  EXPECT_EQ(f32[9].schedule->groupSize, 8);
  // The same groups with half the vector and twice the lanes.
  EXPECT_EQ(f32[10].label, "ng8vw2");
  EXPECT_EQ(f32[10].schedule->groupSize, 8);
  EXPECT_EQ(f32[10].schedule->vectorWidth, 2);
  EXPECT_EQ(f32[10].schedule->dimWorkers, 32);
  // The largest groups with smaller edge batches than the default's 8.
  EXPECT_EQ(f32[11].label, "ng32e4");
  EXPECT_EQ(f32[11].schedule->edgeBatch, 4);
  EXPECT_EQ(f32[12].label, "ng32e2");
  EXPECT_EQ(f32[12].schedule->edgeBatch, 2);
  // Edge-parallel workers with a batch of 4.
  EXPECT_EQ(f32[13].label, "ep256e4");
  EXPECT_EQ(f32[13].schedule->edgeBatch, 4);
  EXPECT_EQ(f32[14].label, "ep128e4");
  EXPECT_EQ(f32[15].label, "ep512t128e4");
  EXPECT_EQ(f32[15].schedule->threadsPerBlock, 128);
  EXPECT_EQ(f32[15].schedule->edgeBatch, 4);
  // Then with registers capped for 4 blocks per SM, and 32-item stretches.
  EXPECT_EQ(f32[16].label, "ep256b4");
  EXPECT_EQ(f32[16].schedule->blocksPerSm, 4);
  EXPECT_EQ(f32[17].schedule->edgesPerWarp, 128);
  EXPECT_EQ(f32[17].schedule->blocksPerSm, 4);
  EXPECT_EQ(f32[18].schedule->edgesPerWarp, 32);
  // For comparison, atomic additions and shared merges of split rows.
  EXPECT_EQ(f32[19].label, "ep256a");
  EXPECT_EQ(f32[19].schedule->edgesPerWarp, 256);
  EXPECT_EQ(f32[19].schedule->write, WriteMode::Atomic);
  EXPECT_EQ(f32[20].label, "ep256s");
  EXPECT_EQ(f32[20].schedule->write, WriteMode::Shared);
  // The vertex-parallel variants last.
  EXPECT_EQ(f32[21].schedule->dimWorkers, 32);
  EXPECT_EQ(f32[22].schedule->dimWorkers, 8);
  EXPECT_EQ(f32[23].schedule->vectorWidth, 2);
  EXPECT_EQ(f32[23].schedule->dimWorkers, 32);
  EXPECT_EQ(f32[24].schedule->vectorWidth, 1);
  EXPECT_EQ(scheduleVariants(resolved, f32w64, 1).size(), 1u);

  // A cap that the shared memory of the row ends cannot meet is left out:
  // f16 width 32 at vector width 8 has 4 threads per worker, 64 workers x
  // 257 x 4 bytes; the same without the cap stays.
  auto f16 = scheduleVariants(vertex(8, 4, 256),
                              benchSpmmOp(ElementType::F16, 32), 24);
  auto labelled = [](const std::vector<ScheduleChoice> &v, const char *label) {
    return std::any_of(v.begin(), v.end(), [&](const ScheduleChoice &c) {
      return c.label == label;
    });
  };
  EXPECT_FALSE(labelled(f16, "ep256b4"));
  EXPECT_TRUE(labelled(f16, "ep256"));
  // A block's groups keep one f32 row each in shared memory: 128 groups of
  // 256 features would need 128 KiB, so ng8 is left out at 4 lanes.
  auto crowded = scheduleVariants(vertex(4, 4, 512),
                                  benchSpmmOp(ElementType::F32, 256), 24);
  EXPECT_FALSE(labelled(crowded, "ng8"));
  auto roomy = scheduleVariants(vertex(4, 16, 512),
                                benchSpmmOp(ElementType::F32, 256), 24);
  EXPECT_TRUE(labelled(roomy, "ng8"));
  // At 32 workers there is no x2.
  for (const ScheduleChoice &c : scheduleVariants(
           vertex(4, 32, 256), benchSpmmOp(ElementType::F32, 128), 24))
    EXPECT_LE(c.schedule->dimWorkers, 32) << c.label;
}

// Every kernel gnn-bench generates compiles with gnnc and with NVRTC.
TEST(BenchSchedules, GeneratedKernelsCompile) {
  for (ElementType type :
       {ElementType::F32, ElementType::F16, ElementType::BF16})
    for (int64_t width : {32, 64, 128}) {
      auto kernels = compileSpmmKernels(type, width, 4, true, true);
      ASSERT_TRUE(kernels.isOk()) << kernels.message();
      ASSERT_GE(kernels->size(), 3u);
      EXPECT_LE(kernels->size(), 5u);
      EXPECT_TRUE(kernels->back().request.edgeValues);
      rt::CompileOptions options;
      options.arch = "sm_90";
      auto cubin =
          rt::compileCuda(kernels->front().spec.source, "bench.cu", options);
      ASSERT_TRUE(cubin.isOk()) << cubin.message();
    }
}

// SDDMM takes the vertex-parallel variants only.
TEST(BenchSchedules, SddmmVariants) {
  Schedule resolved = vertex(4, 16, 256);
  OpDesc op = benchSpmmOp(ElementType::F32, 64);
  op.kind = OpKind::Sddmm;
  auto f32 = sddmmScheduleVariants(resolved, op, 4);
  ASSERT_EQ(f32.size(), 4u);
  EXPECT_EQ(f32[0].label, "default");
  // The edge-parallel schedules first, as for SpMM (without register caps),
  // then the vertex-parallel variants.
  EXPECT_EQ(f32[1].label, "ep256");
  EXPECT_EQ(f32[2].label, "ep128");
  EXPECT_EQ(f32[3].label, "ep256vw2");
  for (const ScheduleChoice &s : f32)
    EXPECT_EQ(s.schedule->blocksPerSm, 0);
  auto all = sddmmScheduleVariants(resolved, op, 24);
  EXPECT_EQ(all.back().label, "vw=1");
  int groups = 0;
  for (const ScheduleChoice &s : all) {
    // No register caps, no atomic or shared merging of split rows; every
    // edge of a neighbour group has its own output.
    EXPECT_EQ(s.schedule->blocksPerSm, 0) << s.label;
    if (s.schedule->strategy == Strategy::NeighborGroup)
      ++groups;
    else
      EXPECT_TRUE(s.schedule->write == WriteMode::Direct ||
                  s.schedule->write == WriteMode::Staged)
          << s.label;
    EXPECT_TRUE(planKernel(op, *s.schedule)) << s.label;
  }
  // Groups of 32 and 8, of 1 and 4 right after those of 8, and of 8 with
  // twice the lanes.
  EXPECT_EQ(groups, 5);
  auto ng8 = std::find_if(all.begin(), all.end(), [](const ScheduleChoice &s) {
    return s.label == "ng8";
  });
  ASSERT_NE(ng8, all.end());
  ASSERT_GE(all.end() - ng8, 3);
  EXPECT_EQ((ng8 + 1)->label, "ng1");
  EXPECT_EQ((ng8 + 1)->schedule->groupSize, kBenchSddmmSmallGroups[0]);
  EXPECT_EQ((ng8 + 2)->label, "ng4");
  EXPECT_EQ((ng8 + 2)->schedule->groupSize, kBenchSddmmSmallGroups[1]);
  EXPECT_EQ(sddmmScheduleVariants(resolved, op, 1).size(), 1u);
}

// The module text of the SDDMM and chain kernels.
TEST(BenchSchedules, SddmmAndChainText) {
  KernelRequest dot;
  dot.op = BenchOp::SddmmDot;
  dot.type = ElementType::F16;
  dot.schedule = {"dw*2", vertex(8, 16, 256)};
  EXPECT_EQ(dot.symbol(), "sddmm_f16_w64_o64_dw_x2");
  KernelRequest logits = dot, softmax = dot, aggregate = dot;
  logits.op = BenchOp::GatLogits;
  softmax.op = BenchOp::GatSoftmax;
  aggregate.op = BenchOp::GatAggregate;
  logits.schedule = softmax.schedule = aggregate.schedule = ScheduleChoice();
  std::string text = benchModuleText("m", {dot, logits, softmax, aggregate});
  EXPECT_NE(text.find("@sddmm_f16_w64_o64_dw_x2(%g: !gnn.graph<csr, i64, "
                      "i32>, %a: tensor<?x64xf16>, %b: tensor<?x64xf16>) -> "
                      "tensor<?xf16>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("vector_width = 8, dim_workers = 16"), std::string::npos);
  EXPECT_NE(text.find("{form = #gnn<sddmm_form add>, leaky_relu = 0.200000003 "
                      ": f32} : !gnn.graph<csr, i64, i32>, tensor<?x1xf16>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("gnn.edge_softmax %g, %e : !gnn.graph<csr, i64, i32>, "
                      "tensor<?xf16> -> tensor<?xf16>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("@gat_spmm_f16_w64_o64_default(%g: !gnn.graph<csr, i64, "
                      "i32>, %x: tensor<?x64xf16>, %w: tensor<?xf16>)"),
            std::string::npos)
      << text;
}

// Every SDDMM and chain kernel gnn-bench generates compiles with gnnc and,
// as the one translation unit of its (type, width), with NVRTC.
TEST(BenchSchedules, SddmmAndChainKernelsCompile) {
  for (ElementType type : {ElementType::F32, ElementType::F16})
    for (int64_t width : {32, 64, 128}) {
      KernelSetOptions set;
      set.spmmSchedules = 4;
      set.edgeValues = true;
      set.sddmmSchedules = 4;
      set.gatChain = width == 64;
      auto kernels = compileBenchKernels(type, width, set);
      ASSERT_TRUE(kernels.isOk()) << kernels.message();
      size_t spmm = 0, sddmm = 0, chain = 0;
      for (const BenchKernel &k : *kernels) {
        spmm += k.request.op == BenchOp::Spmm;
        sddmm += k.request.op == BenchOp::SddmmDot;
        chain += k.request.op == BenchOp::GatLogits ||
                 k.request.op == BenchOp::GatSoftmax ||
                 k.request.op == BenchOp::GatAggregate;
        EXPECT_EQ(k.spec.source, kernels->front().spec.source)
            << "one translation unit";
        if (k.request.op == BenchOp::SddmmDot)
          EXPECT_EQ(k.spec.op->kind, OpKind::Sddmm);
      }
      EXPECT_EQ(spmm, 5u);
      EXPECT_GE(sddmm, 3u);
      EXPECT_LE(sddmm, 4u);
      // The logits and the aggregation with the default and the ep256
      // schedule, and the softmax.
      EXPECT_EQ(chain, width == 64 ? 5u : 0u);
      EXPECT_EQ(kernels->front().request.op, BenchOp::Spmm);
      for (const char *arch : {"sm_80", "sm_90"}) {
        rt::CompileOptions options;
        options.arch = arch;
        auto cubin =
            rt::compileCuda(kernels->front().spec.source, "bench.cu", options);
        ASSERT_TRUE(cubin.isOk()) << elementTypeName(type) << " w" << width
                                  << " " << arch << ": " << cubin.message();
      }
    }
}

// The planted bug of the GPU test compiles (so a GPU run tests the gate,
// not NVRTC).
TEST(BenchSchedules, BrokenKernelCompiles) {
  auto kernels = compileSpmmKernels(ElementType::F32, 64, 1, false, true);
  ASSERT_TRUE(kernels.isOk()) << kernels.message();
  rt::KernelSpec bad = breakKernel(kernels->front().spec);
  EXPECT_NE(bad.source, kernels->front().spec.source);
  rt::CompileOptions options;
  options.arch = "sm_90";
  auto cubin = rt::compileCuda(bad.source, "broken.cu", options);
  ASSERT_TRUE(cubin.isOk()) << cubin.message();
}

//===----------------------------------------------------------------------===//
// GPU
//===----------------------------------------------------------------------===//

namespace {

class BenchGpu : public gnnc::bench::test::GpuBenchTest {
protected:
  /// The R-MAT graph of scale 12 the GPU tests run on.
  static graph::CsrGraph rmat12() {
    graph::CsrGraph g = graph::generateRmat(12, 8, 5);
    g.name = "rmat12";
    return g;
  }
};

} // namespace

TEST_F(BenchGpu, WrongKernelIsVoidedAndRightKernelIsTimed) {
  auto bench = quickBench();
  ASSERT_TRUE(bench.isOk()) << bench.message();

  auto kernels = compileSpmmKernels(ElementType::F32, 64, 1, false, true);
  ASSERT_TRUE(kernels.isOk()) << kernels.message();
  ASSERT_EQ(kernels->size(), 1u);
  const rt::KernelSpec &good = kernels->front().spec;
  rt::KernelSpec bad = breakKernel(good);

  graph::CsrGraph g = rmat12();
  auto graphs = uploadGraphs(g, true);
  ASSERT_TRUE(graphs.isOk()) << graphs.message();
  auto problem = makeSpmmProblem(*graphs, ElementType::F32, 64, false, 9);
  ASSERT_TRUE(problem.isOk()) << problem.message();

  for (CheckMode mode : {CheckMode::Shared, CheckMode::PerKernel}) {
    KernelResult wrong = runGnncKernel(*bench, bad, *problem, mode, "broken");
    EXPECT_EQ(wrong.status, "wrong") << wrong.report;
    EXPECT_FALSE(wrong.timing.has_value());
    EXPECT_NE(wrong.report.find("(row 0, col 0)"), std::string::npos)
        << wrong.report;

    KernelResult right = runGnncKernel(*bench, good, *problem, mode, "default");
    EXPECT_EQ(right.status, "ok") << right.report;
    ASSERT_TRUE(right.timing.has_value());
    EXPECT_EQ(right.timing->runs, 3);
    EXPECT_GT(right.timing->medianMs, 0.0);
  }

  // A whole case: the broken kernel counts as a failure and its record has
  // no time; the correct one in the same case is the best.
  std::vector<BenchKernel> pair{kernels->front(), kernels->front()};
  pair[1].spec = bad;
  pair[1].request.schedule.label = "broken";
  CaseOptions options;
  auto libraries = CudaLibraries::create(*bench);
  CaseOutcome outcome =
      runCase(*bench, libraries.isOk() ? &*libraries : nullptr, *graphs,
              ElementType::F32, 64, pair, "", options);
  EXPECT_EQ(outcome.failures, 1);
  const nlohmann::json &records = outcome.record["gnnc"];
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["status"], "ok");
  EXPECT_FALSE(records[0]["time_ms"].is_null());
  EXPECT_EQ(records[1]["status"], "wrong");
  EXPECT_TRUE(records[1]["time_ms"].is_null());
  EXPECT_EQ(outcome.record["gnnc_best"]["label"], "default");
  if (libraries.isOk()) {
    // cuSPARSE f32 CSR SpMM runs and agrees with the reference.
    EXPECT_FALSE(outcome.record["cusparse_default"].is_null())
        << outcome.record["cusparse_spmm"].dump(1);
    for (const nlohmann::json &alg : outcome.record["cusparse_spmm"])
      if (alg["status"] == "ok")
        EXPECT_TRUE(alg["check_ok"].get<bool>()) << alg.dump(1);
  }
}

TEST_F(BenchGpu, SddmmAndGatChainAreCheckedThenTimed) {
  auto bench = quickBench();
  ASSERT_TRUE(bench.isOk()) << bench.message();

  KernelSetOptions set;
  set.spmmSchedules = 1;
  set.sddmmSchedules = 2;
  set.gatChain = true;
  auto kernels = compileBenchKernels(ElementType::F32, 64, set);
  ASSERT_TRUE(kernels.isOk()) << kernels.message();
  std::vector<const BenchKernel *> sddmm;
  GatKernels chain;
  for (const BenchKernel &k : *kernels) {
    if (k.request.op == BenchOp::SddmmDot)
      sddmm.push_back(&k);
    // The first chain is the default one (vertex-parallel): every thread
    // block writes its own rows, so the broken aggregation below is seen.
    else if (k.request.op == BenchOp::GatLogits && !chain.logits)
      chain.logits = &k.spec;
    else if (k.request.op == BenchOp::GatSoftmax && !chain.softmax)
      chain.softmax = &k.spec;
    else if (k.request.op == BenchOp::GatAggregate && !chain.aggregate)
      chain.aggregate = &k.spec;
  }
  ASSERT_EQ(sddmm.size(), 2u);

  graph::CsrGraph g = rmat12();
  auto graphs = uploadGraphs(g, true);
  ASSERT_TRUE(graphs.isOk()) << graphs.message();
  auto problem = makeSpmmProblem(*graphs, ElementType::F32, 64, false, 9);
  ASSERT_TRUE(problem.isOk()) << problem.message();

  auto dot = makeSddmmProblem(*problem, 10);
  ASSERT_TRUE(dot.isOk()) << dot.message();
  for (const BenchKernel *k : sddmm) {
    KernelResult right = runGnncSddmm(*bench, k->spec, *dot, "right");
    EXPECT_EQ(right.status, "ok") << right.report;
    ASSERT_TRUE(right.timing.has_value());
    EXPECT_EQ(right.timing->runs, 3);
  }
  KernelResult wrong =
      runGnncSddmm(*bench, breakKernel(sddmm[0]->spec), *dot, "broken");
  EXPECT_EQ(wrong.status, "wrong") << wrong.report;
  EXPECT_FALSE(wrong.timing.has_value());

  auto gat = makeGatProblem(*problem, 11);
  ASSERT_TRUE(gat.isOk()) << gat.message();
  KernelResult right = runGatChain(*bench, chain, *gat);
  EXPECT_EQ(right.status, "ok") << right.report;
  ASSERT_TRUE(right.timing.has_value());
  EXPECT_GT(right.timing->medianMs, 0.0);
  rt::KernelSpec badAggregate = breakKernel(*chain.aggregate);
  GatKernels broken = chain;
  broken.aggregate = &badAggregate;
  KernelResult off = runGatChain(*bench, broken, *gat);
  EXPECT_EQ(off.status, "wrong") << off.report;
  EXPECT_FALSE(off.timing.has_value());

  // The fused kernel (gnn.spmm with attention) on the chain's problem: its
  // own reference, a broken copy caught.
  const BenchKernel *fused = nullptr;
  for (const BenchKernel &k : *kernels)
    if (k.request.op == BenchOp::GatFused && !fused)
      fused = &k;
  ASSERT_NE(fused, nullptr);
  KernelResult one = runGatFused(*bench, fused->spec, *gat, "fused");
  EXPECT_EQ(one.status, "ok") << one.report;
  ASSERT_TRUE(one.timing.has_value());
  KernelResult bad =
      runGatFused(*bench, breakKernel(fused->spec), *gat, "fused broken");
  EXPECT_EQ(bad.status, "wrong") << bad.report;
  EXPECT_FALSE(bad.timing.has_value());

  // A whole case records both, and counts the broken SDDMM as a failure.
  std::vector<BenchKernel> all = *kernels;
  for (BenchKernel &k : all)
    if (k.request.op == BenchOp::SddmmDot &&
        k.request.schedule.label != "default") {
      k.spec = breakKernel(k.spec);
      k.request.schedule.label = "broken";
    }
  CaseOptions options;
  CaseOutcome outcome =
      runCase(*bench, nullptr, *graphs, ElementType::F32, 64, all, "", options);
  EXPECT_EQ(outcome.failures, 1) << outcome.row;
  const nlohmann::json &records = outcome.record["gnnc_sddmm"];
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["status"], "ok");
  EXPECT_EQ(records[1]["status"], "wrong");
  EXPECT_TRUE(records[1]["time_ms"].is_null());
  EXPECT_EQ(outcome.record["gnnc_sddmm_best"]["label"], "default");
  EXPECT_EQ(outcome.record["gat_chain"]["status"], "ok")
      << outcome.record["gat_chain"].dump(1);
  EXPECT_FALSE(outcome.record["gat_chain"]["time_ms"].is_null());
  EXPECT_EQ(outcome.record["gat_fused"]["status"], "ok")
      << outcome.record["gat_fused"].dump(1);
  EXPECT_GT(outcome.record["gat_fused"]["vs_chain"].get<double>(), 0.0);
}

TEST(BenchSuite, RenumberedCopiesKeepTheGraphAndReportTheirCost) {
  GraphSource plain{"rmat9", "", 9, false, ""};
  auto original = loadGraph(plain);
  ASSERT_TRUE(original.isOk()) << original.message();
  for (const char *order : {"degree", "rcm", "community"}) {
    ASSERT_TRUE(graph::isKnownOrder(order));
    GraphSource source{std::string("rmat9-") + order, "", 9, false, order};
    double seconds = -1.0;
    auto renumbered = loadGraph(source, nullptr, &seconds);
    ASSERT_TRUE(renumbered.isOk()) << renumbered.message();
    EXPECT_EQ(renumbered->name, source.name);
    EXPECT_EQ(renumbered->numRows, original->numRows);
    EXPECT_EQ(renumbered->nnz(), original->nnz());
    EXPECT_GE(seconds, 0.0) << order;
    // The same multiset of row lengths, in a new order.
    std::vector<int64_t> a, b;
    for (int64_t r = 0; r < original->numRows; ++r) {
      a.push_back(original->degree(r));
      b.push_back(renumbered->degree(r));
    }
    EXPECT_NE(a, b) << order;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b) << order;
  }
  EXPECT_FALSE(graph::isKnownOrder("random"));
  GraphSource bad{"rmat9-x", "", 9, false, "random"};
  auto refused = loadGraph(bad);
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.message().find("unknown order 'random'"), std::string::npos)
      << refused.message();
}
