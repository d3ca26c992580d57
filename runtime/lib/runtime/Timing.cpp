//===- Timing.cpp - Timing GPU work with CUDA events ----------------------===//

#include "gnnc/runtime/Timing.h"

#include <algorithm>

using namespace gnnc;
using namespace gnnc::rt;

TimingStats gnnc::rt::summarizeTimes(std::vector<float> timesMs) {
  TimingStats stats;
  if (timesMs.empty())
    return stats;
  std::sort(timesMs.begin(), timesMs.end());
  size_t n = timesMs.size();
  stats.runs = static_cast<int>(n);
  stats.minMs = timesMs.front();
  stats.maxMs = timesMs.back();
  stats.medianMs = n % 2 ? timesMs[n / 2]
                         : 0.5 * (double(timesMs[n / 2 - 1]) + timesMs[n / 2]);
  return stats;
}

size_t gnnc::rt::l2FlushBytes(size_t l2Bytes) {
  return std::max<size_t>(2 * l2Bytes, size_t(8) << 20);
}

Expected<KernelTimer> KernelTimer::create(const Device &device) {
  GNNC_RETURN_IF_ERROR(device.makeCurrent());
  Expected<EventTimer> events = EventTimer::create();
  if (!events)
    return events.status();
  Expected<DeviceBuffer> flush =
      DeviceBuffer::allocate(l2FlushBytes(device.l2Bytes()));
  if (!flush)
    return flush.status().withContext("allocating the L2 flush buffer");
  return KernelTimer(device, events.take(), flush.take());
}

Status KernelTimer::flushL2() {
  return flush_.fill(static_cast<uint8_t>(0x40 + (++flushCount_ % 64)));
}

Expected<std::vector<float>>
KernelTimer::timeRuns(const TimingOptions &options,
                      const std::function<Status()> &launch) {
  std::vector<float> times;
  times.reserve(static_cast<size_t>(std::max(options.runs, 0)));
  const int launches = launchesPerRun(options);
  for (int i = 0; i < options.warmups + options.runs; ++i) {
    if (options.flushL2)
      GNNC_RETURN_IF_ERROR(flushL2());
    GNNC_RETURN_IF_ERROR(events_.start());
    for (int l = 0; l < launches; ++l)
      GNNC_RETURN_IF_ERROR(launch());
    GNNC_RETURN_IF_ERROR(events_.stop());
    Expected<float> ms = events_.elapsedMs();
    if (!ms)
      return ms.status();
    if (i >= options.warmups)
      times.push_back(*ms / static_cast<float>(launches));
  }
  GNNC_RETURN_IF_ERROR(device_.synchronize());
  return times;
}

Expected<TimingStats> KernelTimer::time(const TimingOptions &options,
                                        const std::function<Status()> &launch) {
  Expected<std::vector<float>> times = timeRuns(options, launch);
  if (!times)
    return times.status();
  return summarizeTimes(times.take());
}
