//===- GpuBench.h - The fixture of gnn-bench's GPU tests --------*- C++ -*-===//
//
// Skips without a GPU (saying why) and makes a quick bench: 3 timed runs
// after 1 warm-up.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TEST_BENCH_GPUBENCH_H
#define GNNC_TEST_BENCH_GPUBENCH_H

#include "gnnc/Bench/Bench.h"
#include "gnnc/runtime/Driver.h"

#include <gtest/gtest.h>

#include <string>

namespace gnnc::bench::test {

class GpuBenchTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!rt::gpuAvailable(&why))
      GTEST_SKIP() << "no GPU: " << why;
  }

  /// A bench that times 3 runs after 1 warm-up.
  static Expected<Bench> quickBench() {
    TimingOptions timing;
    timing.warmups = 1;
    timing.runs = 3;
    return Bench::create(timing);
  }
};

} // namespace gnnc::bench::test

#endif // GNNC_TEST_BENCH_GPUBENCH_H
