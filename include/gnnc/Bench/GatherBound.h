//===- GatherBound.h - What an SpMM's gathers can reach ---------*- C++ -*-===//
//
// The gather stream of an SpMM timed alone (gnnc/cuda/gather_stream.cuh):
// every edge's feature row read in the graph's column order and summed, with
// no row offsets, row ends or result rows. Its time on a case is the bound
// an SpMM's gathers reach there; gnn-bench reports each SpMM kernel's time
// as a fraction of it. The same kernel over a random column order into
// rows that fit in the L2 measures the L2's gather bandwidth for the row
// size, reported beside it.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_GATHERBOUND_H
#define GNNC_BENCH_GATHERBOUND_H

#include "gnnc/Bench/Bench.h"
#include "gnnc/Plan/Types.h"
#include "gnnc/runtime/KernelSpec.h"
#include "gnnc/runtime/Runtime.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace gnnc::bench {

/// How the gather stream covers a row of `width` elements: lanes threads a
/// row, each loading chunks vectors of vectorWidth elements.
struct GatherShape {
  int vectorWidth = 1;
  int lanes = 1;
  int chunks = 1;
};

/// The widest vector (16 bytes at most) that divides the width, the fewest
/// lanes (a power of two, at most a warp) that cover the row in one vector
/// each, and as many chunks as the rest needs.
GatherShape gatherShape(ElementType type, int64_t width);

/// Edges a thread has in flight, and the longest run of edges (a
/// contiguous stretch of the column order) a group of lanes takes.
constexpr int kGatherUnroll = 4;
constexpr int64_t kGatherMaxRunEdges = 64;
constexpr unsigned kGatherThreads = 256;
/// Threads an SM holds (every GPU gnnc targets holds 2048).
constexpr int64_t kGatherThreadsPerSm = 2048;

/// The run of edges per group: the longest (at most kGatherMaxRunEdges, a
/// multiple of kGatherUnroll) that still gives two full waves of threads on
/// `smCount` SMs, so that small graphs are not held to a few long runs.
int64_t gatherRunEdges(ElementType type, int64_t width, int64_t numEdges,
                       int smCount);

/// The kernel spec of the gather stream for (type, width): a runtime
/// helper whose grid counts threads (role NumItems).
rt::KernelSpec gatherStreamSpec(ElementType type, int64_t width);

/// The number of threads the gather stream runs over `numEdges` in runs
/// of `runEdges`.
int64_t gatherStreamThreads(ElementType type, int64_t width, int64_t numEdges,
                            int64_t runEdges);

/// One timed gather stream.
struct GatherRun {
  TimingStats timing;
  /// Bytes read: every edge's row and column index.
  double bytes = 0;
  /// The edges each group of lanes took.
  int64_t runEdges = 0;
  /// Whether the sum of the sink matched the host's sum of the gathered
  /// rows (checked on the first run), and the report.
  bool checkOk = false;
  std::string checkReport;
};

/// Loads the gather-stream kernels once per (type, width) and times them.
class GatherBound {
public:
  /// Times the gather stream over `numEdges` column indices `cols` (i32)
  /// into `x` (rows of `width` elements of `type`), whose values as floats
  /// are `hostX` (for the check; `hostCols` are the same indices on the
  /// host).
  Expected<GatherRun> time(Bench &bench, const rt::DeviceBuffer &cols,
                           const int64_t *hostCols, int64_t numEdges,
                           const rt::DeviceBuffer &x, const float *hostX,
                           ElementType type, int64_t width);

  /// The L2's gather bandwidth in GB/s (rows and indices read) for rows of
  /// `width` elements of `type`: the gather stream over random columns of
  /// a matrix a quarter of the L2 in size. Measured once per (type, width).
  Expected<double> l2GatherGbs(Bench &bench, ElementType type, int64_t width);

private:
  Expected<const rt::LoadedKernel *> kernel(Bench &bench, ElementType type,
                                            int64_t width);
  std::map<std::pair<ElementType, int64_t>, rt::LoadedKernel> kernels_;
  std::map<std::pair<ElementType, int64_t>, double> l2Gbs_;
};

} // namespace gnnc::bench

#endif // GNNC_BENCH_GATHERBOUND_H
