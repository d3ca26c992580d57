//===- TimingTest.cpp - Statistics of timed runs --------------------------===//
//
// The host side of gnnc/runtime/Timing.h: the statistics of a set of times
// and the size of the L2 flush buffer. Runs anywhere; the timer itself is
// tested on a GPU in GpuTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Timing.h"

#include <gtest/gtest.h>

using namespace gnnc;
using namespace gnnc::rt;

namespace {

TEST(Timing, OddCountTakesTheMiddleTime) {
  TimingStats odd = summarizeTimes({3, 1, 2});
  EXPECT_DOUBLE_EQ(odd.medianMs, 2);
  EXPECT_DOUBLE_EQ(odd.minMs, 1);
  EXPECT_DOUBLE_EQ(odd.maxMs, 3);
  EXPECT_EQ(odd.runs, 3);
  TimingStats one = summarizeTimes({0.25f});
  EXPECT_DOUBLE_EQ(one.medianMs, 0.25);
  EXPECT_DOUBLE_EQ(one.minMs, 0.25);
  EXPECT_DOUBLE_EQ(one.maxMs, 0.25);
  EXPECT_EQ(one.runs, 1);
}

TEST(Timing, EvenCountTakesTheMeanOfTheMiddleTwo) {
  TimingStats even = summarizeTimes({4, 1, 2, 3});
  EXPECT_DOUBLE_EQ(even.medianMs, 2.5);
  EXPECT_DOUBLE_EQ(even.minMs, 1);
  EXPECT_DOUBLE_EQ(even.maxMs, 4);
  EXPECT_EQ(even.runs, 4);
  // In double precision: the float sum 2^24 + (2^24 + 2) rounds to 2^25.
  TimingStats wide = summarizeTimes({16777218.0f, 16777216.0f});
  EXPECT_DOUBLE_EQ(wide.medianMs, 16777217.0);
}

TEST(Timing, NoTimesGiveZeros) {
  TimingStats none = summarizeTimes({});
  EXPECT_EQ(none.runs, 0);
  EXPECT_DOUBLE_EQ(none.medianMs, 0);
  EXPECT_DOUBLE_EQ(none.minMs, 0);
  EXPECT_DOUBLE_EQ(none.maxMs, 0);
}

TEST(Timing, DefaultOptions) {
  TimingOptions options;
  EXPECT_EQ(options.warmups, 5);
  EXPECT_EQ(options.runs, 20);
  EXPECT_TRUE(options.flushL2);
  EXPECT_EQ(options.backToBack, 1);
}

TEST(Timing, BackToBackLaunchesOnlyWithoutTheFlush) {
  TimingOptions options;
  options.backToBack = 10;
  EXPECT_EQ(launchesPerRun(options), 1);
  options.flushL2 = false;
  EXPECT_EQ(launchesPerRun(options), 10);
  options.backToBack = 0;
  EXPECT_EQ(launchesPerRun(options), 1);
}

TEST(Timing, L2FlushIsTwiceTheL2AndAtLeastEightMiB) {
  EXPECT_EQ(l2FlushBytes(size_t(50) << 20), size_t(100) << 20);
  EXPECT_EQ(l2FlushBytes(size_t(1) << 20), size_t(8) << 20);
  EXPECT_EQ(l2FlushBytes(0), size_t(8) << 20);
}

} // namespace
