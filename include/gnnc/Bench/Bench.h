//===- Bench.h - A device with a kernel timer -------------------*- C++ -*-===//
//
// The device gnn-bench measures on: the runtime (kernel cache), the kernel
// timer (CUDA events and the L2 flush) with the timing options, the peak of
// the device memory in use, and the spare host arrays.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_BENCH_H
#define GNNC_BENCH_BENCH_H

#include "gnnc/Bench/Host.h"
#include "gnnc/runtime/Runtime.h"
#include "gnnc/runtime/Status.h"
#include "gnnc/runtime/Timing.h"

#include <cstddef>
#include <functional>
#include <string>
#include <utility>

namespace gnnc::bench {

// Every timed region is measured by the runtime's timer
// (gnnc/runtime/Timing.h) with the bench's options.
using rt::TimingOptions;
using rt::TimingStats;

/// A device with a kernel cache, a kernel timer (events and an L2 flush
/// buffer), a record of the most device memory seen in use, and spare host
/// arrays.
class Bench {
public:
  /// Opens device 0 (through Runtime::create) and prepares the timer and the
  /// flush buffer.
  static Expected<Bench> create(const TimingOptions &options,
                                std::string cacheDir = "");

  rt::Runtime &runtime() { return runtime_; }
  const rt::Device &device() const { return runtime_.device(); }
  const TimingOptions &options() const { return options_; }

  /// Times `work`, which must only enqueue GPU work on the default stream,
  /// with options() (rt::KernelTimer::time): options().warmups untimed runs,
  /// then options().runs runs each between two events, with the L2 flushed
  /// before each run. Waits for the device at the end and reports errors
  /// raised by the work.
  Expected<TimingStats> time(const std::function<Status()> &work);

  /// Samples the device memory in use (total - free) and returns it; the
  /// largest sample is kept in peakUsedBytes().
  size_t sampleMemory();
  size_t peakUsedBytes() const { return peakUsed_; }
  /// Forgets the samples so far (for per-case peaks); returns the old peak.
  size_t resetPeak();

  /// Host arrays that no problem holds now: makeSpmmProblem takes them,
  /// runCase hands them back.
  HostBuffers &spareHost() { return spareHost_; }

private:
  Bench(rt::Runtime runtime, rt::KernelTimer timer, TimingOptions options)
      : runtime_(std::move(runtime)), timer_(std::move(timer)),
        options_(options) {}
  rt::Runtime runtime_;
  rt::KernelTimer timer_;
  TimingOptions options_;
  size_t peakUsed_ = 0;
  HostBuffers spareHost_;
};

} // namespace gnnc::bench

#endif // GNNC_BENCH_BENCH_H
