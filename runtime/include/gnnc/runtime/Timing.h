//===- Timing.h - Timing GPU work with CUDA events --------------*- C++ -*-===//
//
// How gnnc times kernels, in gnn-bench and in the tuner alike: untimed
// warm-up runs, then timed runs, each between a pair of CUDA events on the
// default stream and each preceded (outside the timed region) by a write
// over a buffer of twice the L2, so that no run finds the last one's data in
// the L2; and the statistics of the times.
//
//   auto timer = gnnc::rt::KernelTimer::create(runtime->device());
//   auto stats = timer->time({/*warmups=*/3, /*runs=*/10}, [&] {
//     return runtime->launch(*kernel, args, /*synchronize=*/false);
//   });
//   double ms = stats->medianMs;
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_RUNTIME_TIMING_H
#define GNNC_RUNTIME_TIMING_H

#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <functional>
#include <vector>

namespace gnnc::rt {

/// How a region of GPU work is timed.
struct TimingOptions {
  /// Untimed runs before the timed ones.
  int warmups = 5;
  /// Timed runs (each one CUDA-event pair).
  int runs = 20;
  /// Overwrite a buffer of twice the L2 size before every run (outside the
  /// timed region) so no run finds its inputs in the L2 left by the last.
  bool flushL2 = true;
  /// Without the flush: launches per timed run, back to back, the run's
  /// time their mean. The flush keeps the GPU busy while the host queues
  /// the start event and the launch; without it a run of one launch would
  /// also time the host's launch call (several microseconds, more than a
  /// small kernel). With the flush every run is one launch.
  int backToBack = 1;
};

/// The launches of one timed run under `options`: 1 with the flush,
/// backToBack (at least 1) without.
inline int launchesPerRun(const TimingOptions &options) {
  return options.flushL2 ? 1
                         : (options.backToBack > 1 ? options.backToBack : 1);
}

/// Summary of a set of timed runs, in milliseconds.
struct TimingStats {
  double medianMs = 0;
  double minMs = 0;
  double maxMs = 0;
  int runs = 0;
};

/// The median (the mean of the middle two, in double precision, for an even
/// count), min and max of `timesMs`; all zero for no times.
TimingStats summarizeTimes(std::vector<float> timesMs);

/// The bytes of the buffer that flushes an L2 of `l2Bytes`: twice the L2, at
/// least 8 MiB.
size_t l2FlushBytes(size_t l2Bytes);

/// Times GPU work on the default stream of a device: an event pair and the L2
/// flush buffer. Move-only.
class KernelTimer {
public:
  /// Creates the events and allocates the flush buffer (l2FlushBytes of the
  /// device's L2) on `device`.
  static Expected<KernelTimer> create(const Device &device);

  /// Runs `launch`, which must only enqueue GPU work on the default stream,
  /// options.warmups times untimed, then options.runs times each between
  /// the two events; with options.flushL2 the flush buffer is overwritten
  /// before every run (warm-ups too), without it each run calls `launch`
  /// options.backToBack times and counts their mean. Waits for the device at
  /// the end, so that errors raised by the work are reported. Returns the times
  /// of the timed runs in milliseconds, in run order.
  Expected<std::vector<float>> timeRuns(const TimingOptions &options,
                                        const std::function<Status()> &launch);

  /// summarizeTimes of timeRuns.
  Expected<TimingStats> time(const TimingOptions &options,
                             const std::function<Status()> &launch);

  /// Overwrites the flush buffer (with a byte that changes from call to
  /// call), evicting whatever the L2 held.
  Status flushL2();

  /// The bytes of the flush buffer.
  size_t flushBytes() const { return flush_.size(); }

private:
  KernelTimer(Device device, EventTimer events, DeviceBuffer flush)
      : device_(std::move(device)), events_(std::move(events)),
        flush_(std::move(flush)) {}
  Device device_;
  EventTimer events_;
  DeviceBuffer flush_;
  unsigned flushCount_ = 0;
};

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_TIMING_H
