//===- Parallel.h - Host threads for CPU-side work --------------*- C++ -*-===//
//
// The thread count and the two loops that the CPU reference, the graph
// generators and gnn-bench share. Results never depend on the thread count:
// callers give every output element to exactly one piece of work, and every
// piece does the same arithmetic in the same order whichever thread runs it.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_GRAPH_PARALLEL_H
#define GNNC_GRAPH_PARALLEL_H

#include <cstdint>
#include <functional>
#include <vector>

namespace gnnc::graph {

/// The most threads hostThreads() picks on its own.
constexpr int kDefaultMaxHostThreads = 64;
/// The most threads GNNC_HOST_THREADS may ask for.
constexpr int kMaxHostThreads = 1024;

/// The number of threads for host-side work: $GNNC_HOST_THREADS when it is a
/// positive integer (at most kMaxHostThreads), else
/// std::thread::hardware_concurrency() capped at kDefaultMaxHostThreads;
/// never less than 1. Reads the environment on every call.
int hostThreads();

/// `requested` when positive, else hostThreads().
int resolveThreads(int requested);

/// Runs fn(i) for every i in [0, count) on up to `numThreads` threads (0:
/// hostThreads()), the calling thread among them. Indices are handed out in
/// increasing order from a shared counter, so uneven pieces balance; which
/// thread runs an index is not fixed, so fn(i) must write only what belongs
/// to i.
void parallelForEach(int64_t count, int numThreads,
                     const std::function<void(int64_t)> &fn);

/// Runs fn(begin, end) over [0, n) cut into contiguous pieces of at least
/// `grain` elements, at most one piece per thread (numThreads 0:
/// hostThreads()); one call fn(0, n) when a single piece results.
void parallelForRange(int64_t n, int64_t grain, int numThreads,
                      const std::function<void(int64_t, int64_t)> &fn);

/// Cuts the rows [0, numRows) of a CSR structure into at most `pieces`
/// contiguous ranges of about equal work, counting one unit per row plus one
/// per non-zero (rowPtr has numRows + 1 entries). Returns the boundaries:
/// front() 0, back() numRows, increasing, no empty range.
std::vector<int64_t> splitRowsByWork(const int64_t *rowPtr, int64_t numRows,
                                     int64_t pieces);

/// Runs fn(begin, end) over the rows [0, numRows) of a CSR structure cut by
/// splitRowsByWork into 16 pieces per thread, on `numThreads` threads (0:
/// hostThreads()): several pieces a thread, so that a thread slowed by a hub
/// row or a busy core does not hold up the rest. On one thread, one call
/// fn(0, numRows). Every row belongs to one piece: an fn that writes only
/// its rows' outputs gives the same result on any number of threads.
void parallelForRowsByWork(const int64_t *rowPtr, int64_t numRows,
                           int numThreads,
                           const std::function<void(int64_t, int64_t)> &fn);

} // namespace gnnc::graph

#endif // GNNC_GRAPH_PARALLEL_H
