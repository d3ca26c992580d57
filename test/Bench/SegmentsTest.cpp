//===- SegmentsTest.cpp - gnn-bench's segmented-matmul cases --------------===//
//
// The compulsory bytes and flops of a record and the dtypes anywhere; on a
// GPU (skipped, saying why, without one) a small set with empty types run
// end to end: every record has the shared format's fields, every
// implementation passes its check, gnnc_best is no slower than
// gnnc_tuned's sweep entry, and a set without rows still runs.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Bench/Segments.h"

#include "gnnc/runtime/Driver.h"

#include <gtest/gtest.h>

#include <set>

using namespace gnnc;
using namespace gnnc::bench;
using nlohmann::json;

TEST(BenchSegments, WorkCountsEachTensorOnce) {
  // 100 rows of 3 types, K 8, M 16, f16: X 1600, Y 3200, W 768 bytes.
  SegmentWork f = segmentWork(100, 3, 8, 16, ElementType::F16, false);
  EXPECT_DOUBLE_EQ(f.bytes, 100 * (8 + 16) * 2 + 3 * 8 * 16 * 2);
  EXPECT_DOUBLE_EQ(f.flops, 2.0 * 100 * 8 * 16);
  // Backward: dY read, X read, dX written; W read, dW written.
  SegmentWork b = segmentWork(100, 3, 8, 16, ElementType::F32, true);
  EXPECT_DOUBLE_EQ(b.bytes, 100 * (16 + 8 + 8) * 4 + 2 * 3 * 8 * 16 * 4);
  EXPECT_DOUBLE_EQ(b.flops, 4.0 * 100 * 8 * 16);
  SegmentWork none = segmentWork(0, 0, 8, 16, ElementType::F32, true);
  EXPECT_EQ(none.bytes, 0);
  EXPECT_EQ(none.flops, 0);
}

TEST(BenchSegments, Dtypes) {
  Expected<SegmentDtype> tf32 = parseSegmentDtype("tf32");
  ASSERT_TRUE(tf32);
  EXPECT_EQ(tf32->type, ElementType::F32);
  EXPECT_EQ(tf32->math, MathMode::TensorCore);
  Expected<SegmentDtype> f16 = parseSegmentDtype("f16");
  ASSERT_TRUE(f16);
  EXPECT_EQ(f16->type, ElementType::F16);
  Expected<SegmentDtype> bad = parseSegmentDtype("f64");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("tf32 or f16"), std::string::npos);
}

TEST(BenchSegmentsGpu, ASmallSetRunsCheckedEndToEnd) {
  std::string why;
  if (!rt::gpuAvailable(&why))
    GTEST_SKIP() << "no GPU: " << why;
  TimingOptions timing;
  timing.warmups = 1;
  timing.runs = 3;
  Expected<Bench> bench = Bench::create(timing);
  ASSERT_TRUE(bench) << bench.message();
  Expected<Cublas> cublas = Cublas::create(*bench);
  ASSERT_TRUE(cublas) << cublas.message();
  SegmentCaseOptions options;
  options.dims = {32, 64};
  options.sweep = 3;
  json records = json::array(), sweeps = json::array(), notes = json::array();
  int failures = 0;
  // Types of 0, 1, 300, 0, 77 and 1,000 rows.
  runSegmentSet(*bench, &*cublas, "small", {0, 0, 1, 301, 301, 378, 1378},
                options, records, sweeps, notes, failures);
  EXPECT_EQ(failures, 0) << notes.dump(1);
  // 2 dims x 2 dtypes x 2 passes x 4 implementations.
  ASSERT_EQ(records.size(), 32u);
  std::set<std::string> impls;
  for (const json &r : records) {
    for (const char *field : {"set", "dtype", "K", "M", "pass", "impl", "ms",
                              "ok", "bytes", "flops"})
      EXPECT_TRUE(r.contains(field)) << field << " in " << r.dump();
    EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
    EXPECT_GT(r["ms"].get<double>(), 0);
    const std::string impl = r["impl"];
    impls.insert(impl);
    EXPECT_EQ(r.contains("schedule"), impl.rfind("gnnc", 0) == 0);
  }
  EXPECT_EQ(impls, (std::set<std::string>{"cublas_loop", "cublas_grouped",
                                          "gnnc_tuned", "gnnc_best"}));
  EXPECT_FALSE(sweeps.empty());

  // No rows at all: every implementation runs (dW all zeros).
  json none = json::array();
  failures = 0;
  options.dims = {32};
  runSegmentSet(*bench, &*cublas, "empty", {0, 0, 0}, options, none, sweeps,
                notes, failures);
  EXPECT_EQ(failures, 0) << notes.dump(1);
  for (const json &r : none)
    EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
}
