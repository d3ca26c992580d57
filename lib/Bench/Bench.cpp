//===- Bench.cpp - A device with a kernel timer ---------------------------===//
#include "gnnc/Bench/Bench.h"

#include <algorithm>

using namespace gnnc;
using namespace gnnc::bench;

Expected<Bench> Bench::create(const TimingOptions &options,
                              std::string cacheDir) {
  if (options.runs < 1 || options.warmups < 0)
    return Status::error("timing needs at least one run and no negative "
                         "warm-up count");
  auto runtime = rt::Runtime::create(0, std::move(cacheDir));
  if (!runtime)
    return runtime.status();
  auto timer = rt::KernelTimer::create(runtime->device());
  if (!timer)
    return timer.status();
  Bench bench(runtime.take(), timer.take(), options);
  bench.sampleMemory();
  return bench;
}

Expected<TimingStats> Bench::time(const std::function<Status()> &work) {
  return timer_.time(options_, work);
}

size_t Bench::sampleMemory() {
  auto info = runtime_.device().memoryInfo();
  if (!info)
    return 0;
  size_t used = info->second - info->first;
  peakUsed_ = std::max(peakUsed_, used);
  return used;
}

size_t Bench::resetPeak() {
  size_t old = peakUsed_;
  peakUsed_ = 0;
  sampleMemory();
  return old;
}
