//===- Parallel.cpp - Host threads for CPU-side work ----------------------===//

#include "gnnc/graph/Parallel.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <thread>

using namespace gnnc;

int gnnc::graph::hostThreads() {
  if (const char *text = std::getenv("GNNC_HOST_THREADS")) {
    char *end = nullptr;
    errno = 0;
    long value = std::strtol(text, &end, 10);
    if (errno == 0 && end != text && *end == '\0' && value > 0)
      return static_cast<int>(std::min<long>(value, kMaxHostThreads));
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1
                 : static_cast<int>(std::min<unsigned>(
                       hw, static_cast<unsigned>(kDefaultMaxHostThreads)));
}

int gnnc::graph::resolveThreads(int requested) {
  return requested > 0 ? requested : hostThreads();
}

void gnnc::graph::parallelForEach(int64_t count, int numThreads,
                                  const std::function<void(int64_t)> &fn) {
  if (count <= 0)
    return;
  int64_t threads = std::min<int64_t>(resolveThreads(numThreads), count);
  if (threads <= 1) {
    for (int64_t i = 0; i < count; ++i)
      fn(i);
    return;
  }
  std::atomic<int64_t> next{0};
  auto worker = [&]() {
    for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < count;
         i = next.fetch_add(1, std::memory_order_relaxed))
      fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (int64_t t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &th : pool)
    th.join();
}

void gnnc::graph::parallelForRange(
    int64_t n, int64_t grain, int numThreads,
    const std::function<void(int64_t, int64_t)> &fn) {
  if (n <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  int64_t pieces =
      std::min<int64_t>(resolveThreads(numThreads), (n + grain - 1) / grain);
  if (pieces <= 1) {
    fn(0, n);
    return;
  }
  parallelForEach(pieces, static_cast<int>(pieces),
                  [&](int64_t p) { fn(n * p / pieces, n * (p + 1) / pieces); });
}

std::vector<int64_t> gnnc::graph::splitRowsByWork(const int64_t *rowPtr,
                                                  int64_t numRows,
                                                  int64_t pieces) {
  std::vector<int64_t> bounds{0};
  if (numRows <= 0)
    return bounds;
  pieces = std::clamp<int64_t>(pieces, 1, numRows);
  // Work before row r: r + rowPtr[r] - rowPtr[0], increasing in r.
  const int64_t base = rowPtr[0];
  const int64_t total = numRows + rowPtr[numRows] - base;
  for (int64_t k = 1; k < pieces; ++k) {
    int64_t target =
        static_cast<int64_t>(static_cast<__int128>(total) * k / pieces);
    int64_t lo = bounds.back() + 1, hi = numRows;
    // The first row whose preceding work reaches the target.
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (mid + rowPtr[mid] - base < target)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < numRows)
      bounds.push_back(lo);
  }
  bounds.push_back(numRows);
  return bounds;
}

void gnnc::graph::parallelForRowsByWork(
    const int64_t *rowPtr, int64_t numRows, int numThreads,
    const std::function<void(int64_t, int64_t)> &fn) {
  const int threads = resolveThreads(numThreads);
  if (threads == 1) {
    fn(0, numRows);
    return;
  }
  std::vector<int64_t> bounds =
      splitRowsByWork(rowPtr, numRows, static_cast<int64_t>(threads) * 16);
  parallelForEach(static_cast<int64_t>(bounds.size()) - 1, threads,
                  [&](int64_t piece) { fn(bounds[piece], bounds[piece + 1]); });
}
