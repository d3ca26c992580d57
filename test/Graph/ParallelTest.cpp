//===- ParallelTest.cpp - Host threads and thread-count independence ------===//
//
// The host thread count (GNNC_HOST_THREADS), the parallel loops, and that
// the CPU reference and the generators give the same bits on any number of
// threads.
//
//===----------------------------------------------------------------------===//

#include "gnnc/graph/Parallel.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/reference/Sddmm.h"
#include "gnnc/reference/Spmm.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

/// Sets GNNC_HOST_THREADS for the lifetime of the object, then restores it.
class ScopedHostThreads {
public:
  explicit ScopedHostThreads(const char *value) {
    if (const char *old = std::getenv("GNNC_HOST_THREADS"))
      old_ = old;
    if (value)
      ::setenv("GNNC_HOST_THREADS", value, 1);
    else
      ::unsetenv("GNNC_HOST_THREADS");
  }
  ~ScopedHostThreads() {
    if (old_)
      ::setenv("GNNC_HOST_THREADS", old_->c_str(), 1);
    else
      ::unsetenv("GNNC_HOST_THREADS");
  }

private:
  std::optional<std::string> old_;
};

TEST(ParallelTest, HostThreadsFromTheEnvironment) {
  {
    ScopedHostThreads env(nullptr);
    unsigned hw = std::thread::hardware_concurrency();
    int expected =
        hw == 0
            ? 1
            : static_cast<int>(std::min<unsigned>(hw, kDefaultMaxHostThreads));
    EXPECT_EQ(hostThreads(), expected);
    EXPECT_EQ(resolveThreads(3), 3);
    EXPECT_EQ(resolveThreads(0), expected);
  }
  {
    ScopedHostThreads env("5");
    EXPECT_EQ(hostThreads(), 5);
    EXPECT_EQ(resolveThreads(0), 5);
  }
  {
    ScopedHostThreads env("1000000");
    EXPECT_EQ(hostThreads(), kMaxHostThreads);
  }
  int fallback;
  {
    ScopedHostThreads env(nullptr);
    fallback = hostThreads();
  }
  for (const char *bad : {"0", "-2", "four", "3x", ""}) {
    ScopedHostThreads env(bad);
    EXPECT_EQ(hostThreads(), fallback) << "'" << bad << "'";
  }
}

TEST(ParallelTest, LoopsCoverEveryIndexOnce) {
  for (int threads : {1, 2, 7}) {
    std::vector<std::atomic<int>> seen(1000);
    parallelForEach(1000, threads, [&](int64_t i) { ++seen[i]; });
    for (const std::atomic<int> &s : seen)
      EXPECT_EQ(s.load(), 1);
    std::vector<std::atomic<int>> covered(12345);
    parallelForRange(12345, 100, threads, [&](int64_t lo, int64_t hi) {
      EXPECT_LT(lo, hi);
      for (int64_t i = lo; i < hi; ++i)
        ++covered[i];
    });
    for (const std::atomic<int> &c : covered)
      EXPECT_EQ(c.load(), 1);
  }
  int calls = 0;
  parallelForEach(0, 4, [&](int64_t) { ++calls; });
  parallelForRange(0, 1, 4, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ParallelTest, SplitRowsByWork) {
  // One heavy row among light ones.
  std::vector<int64_t> rowPtr{0, 1, 2, 1002, 1003, 1004, 1005};
  std::vector<int64_t> bounds = splitRowsByWork(rowPtr.data(), 6, 4);
  ASSERT_GE(bounds.size(), 2u);
  EXPECT_EQ(bounds.front(), 0);
  EXPECT_EQ(bounds.back(), 6);
  for (size_t i = 1; i < bounds.size(); ++i)
    EXPECT_LT(bounds[i - 1], bounds[i]);
  EXPECT_LE(bounds.size(), 5u);
  // More pieces than rows: still increasing, ending at numRows.
  bounds = splitRowsByWork(rowPtr.data(), 6, 100);
  EXPECT_LE(bounds.size(), 7u);
  EXPECT_EQ(bounds.back(), 6);
  for (size_t i = 1; i < bounds.size(); ++i)
    EXPECT_LT(bounds[i - 1], bounds[i]);
  EXPECT_EQ(splitRowsByWork(rowPtr.data(), 0, 4), (std::vector<int64_t>{0}));
  // Even work: even cuts.
  std::vector<int64_t> even{0, 3, 6, 9, 12};
  EXPECT_EQ(splitRowsByWork(even.data(), 4, 2),
            (std::vector<int64_t>{0, 2, 4}));
}

TEST(ParallelTest, RowsByWorkCoverEveryRowOnce) {
  CsrGraph g = makeRaggedTestGraph(5, 3000, 20000);
  for (int threads : {1, 3, 8}) {
    std::vector<std::atomic<int>> seen(static_cast<size_t>(g.numRows));
    std::atomic<int> calls{0};
    parallelForRowsByWork(g.rowPtr.data(), g.numRows, threads,
                          [&](int64_t lo, int64_t hi) {
                            EXPECT_LT(lo, hi);
                            ++calls;
                            for (int64_t r = lo; r < hi; ++r)
                              ++seen[r];
                          });
    for (const std::atomic<int> &s : seen)
      EXPECT_EQ(s.load(), 1) << threads << " threads";
    // One piece on one thread; several pieces per thread otherwise.
    if (threads == 1)
      EXPECT_EQ(calls.load(), 1);
    else
      EXPECT_GT(calls.load(), threads);
  }
}

TEST(ParallelTest, RandomFeaturesIgnoreTheThreadCount) {
  const int64_t n = 3 * ref::kRandomBlock + 123;
  std::vector<float> one(n), many(n);
  ref::randomFeaturesInto(one.data(), n, 77, -2.0f, 3.0f, 1);
  ref::randomFeaturesInto(many.data(), n, 77, -2.0f, 3.0f, 3);
  EXPECT_EQ(one, many);
  EXPECT_EQ(ref::randomFeatures(n, 77, -2.0f, 3.0f), one);
  // Blocks: a shorter draw is a prefix of a longer one.
  std::vector<float> prefix =
      ref::randomFeatures(ref::kRandomBlock + 5, 77, -2.0f, 3.0f);
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), one.begin()));
  for (float v : one) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LT(v, 3.0f);
  }
  // Different blocks are different streams.
  EXPECT_NE(std::vector<float>(one.begin(), one.begin() + 100),
            std::vector<float>(one.begin() + ref::kRandomBlock,
                               one.begin() + ref::kRandomBlock + 100));
}

TEST(ParallelTest, RmatIgnoresTheThreadCount) {
  CsrGraph one, many;
  {
    ScopedHostThreads env("1");
    one = generateRmat(14, 16, 9);
  }
  {
    ScopedHostThreads env("3");
    many = generateRmat(14, 16, 9);
  }
  ASSERT_TRUE(one.validate().isOk()) << one.validate().message();
  EXPECT_TRUE(one.isSortedAndUnique());
  EXPECT_EQ(computeStats(one).selfLoops, 0);
  EXPECT_EQ(one.rowPtr, many.rowPtr);
  EXPECT_EQ(one.colIdx, many.colIdx);
  {
    ScopedHostThreads env("1");
    one = generateRmat(10, 8, 2, 0.57, 0.19, 0.19, /*symmetrize=*/true);
  }
  {
    ScopedHostThreads env("4");
    many = generateRmat(10, 8, 2, 0.57, 0.19, 0.19, /*symmetrize=*/true);
  }
  EXPECT_EQ(one.rowPtr, many.rowPtr);
  EXPECT_EQ(one.colIdx, many.colIdx);
}

TEST(ParallelTest, ReferenceIsBitIdenticalOnAnyThreadCount) {
  CsrGraph g = makeRaggedTestGraph(4, 6000, 12000, /*withValues=*/true);
  const int64_t width = 24;
  std::vector<float> x = ref::randomFeatures(g.numCols * width, 3);
  std::vector<double> y1, a1;
  ref::spmmSum(g, nullptr, x.data(), width, y1, &a1, 1);
  for (int threads : {2, 3, 8}) {
    std::vector<double> y, a;
    ref::spmmSum(g, nullptr, x.data(), width, y, &a, threads);
    EXPECT_EQ(y, y1) << threads << " threads";
    EXPECT_EQ(a, a1) << threads << " threads";
  }
  // The default thread count, overridden by the environment.
  for (const char *threads : {"1", "5"}) {
    ScopedHostThreads env(threads);
    std::vector<double> y, a;
    ref::spmmSum(g, nullptr, x.data(), width, y, &a);
    EXPECT_EQ(y, y1) << threads;
    EXPECT_EQ(a, a1) << threads;
  }
  // Outputs of the right size are overwritten, not accumulated into.
  std::vector<double> reused(y1.size(), 12345.0), reusedAbs(y1.size(), NAN);
  ref::spmmSum(g, nullptr, x.data(), width, reused, &reusedAbs, 4);
  EXPECT_EQ(reused, y1);
  EXPECT_EQ(reusedAbs, a1);
  std::vector<double> into(y1.size(), -7.0), intoAbs(y1.size(), 3.0);
  ref::spmmSumInto(g, nullptr, x.data(), width, into.data(), intoAbs.data(), 3);
  EXPECT_EQ(into, y1);
  EXPECT_EQ(intoAbs, a1);

  // Every reduction and scaling.
  for (gnnc::Reduce reduce :
       {gnnc::Reduce::Sum, gnnc::Reduce::Mean, gnnc::Reduce::Max})
    for (gnnc::DegreeScale scale :
         {gnnc::DegreeScale::None, gnnc::DegreeScale::Left,
          gnnc::DegreeScale::Right, gnnc::DegreeScale::Both}) {
      std::vector<double> y, a, yn(5, 1.0), an;
      ref::spmm(g, nullptr, x.data(), width, reduce, scale, y, &a, 1);
      ref::spmm(g, nullptr, x.data(), width, reduce, scale, yn, &an, 6);
      EXPECT_EQ(y, yn);
      EXPECT_EQ(a, an);
    }
}

TEST(ParallelTest, SddmmIsBitIdenticalOnAnyThreadCount) {
  CsrGraph g = makeRaggedTestGraph(6, 5000, 9000);
  const int64_t width = 32;
  std::vector<float> a = ref::randomFeatures(g.numRows * width, 1);
  std::vector<float> b = ref::randomFeatures(g.numCols * width, 2);
  for (gnnc::SddmmForm form : {gnnc::SddmmForm::Dot, gnnc::SddmmForm::Add}) {
    std::vector<double> out1, mag1, out4(3, 9.0), mag4;
    ref::sddmm(g, a.data(), b.data(), width, form, 0.2f, out1, &mag1, 1);
    ref::sddmm(g, a.data(), b.data(), width, form, 0.2f, out4, &mag4, 4);
    EXPECT_EQ(out1, out4);
    EXPECT_EQ(mag1, mag4);
  }
}

} // namespace
