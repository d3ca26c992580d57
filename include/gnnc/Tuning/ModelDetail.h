//===- ModelDetail.h - Pieces the SpMM and SDDMM models share ---*- C++ -*-===//
//
// Internal to the cost models (CostModel.cpp, SddmmModel.cpp): the memory
// system's units and small helpers. Not an API. (The kernels' limits and
// plans come from gnnc/Plan.)
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_MODELDETAIL_H
#define GNNC_TUNING_MODELDETAIL_H

#include "gnnc/Plan/Limits.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/Tuning/CostModel.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/ops/Spmm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <utility>

namespace gnnc::tuning::detail {

using namespace gnnc::limits;
/// The granularity of DRAM and L2 traffic.
constexpr double kSectorBytes = 32;
/// The unit of L1 throughput (one wavefront per line per clock).
constexpr double kLineBytes = 128;

/// Bytes of a row offset and of a column index of `op`'s graph.
inline int offsetBytes(const OpDesc &op) { return op.offsets64 ? 8 : 4; }
inline int indexBytes(const OpDesc &op) { return op.indices64 ? 8 : 4; }

/// The share of the L2 that data a kernel reuses (feature rows, small
/// tables) can count on; the rest holds the streams in flight.
constexpr double kL2ReuseShare = 0.75;

/// The unloaded latency of a dependent load from a table of `bytes` that a
/// kernel reads throughout (row offsets, neighbour-group tables): an L2
/// hit when the table fits the L2's reuse share, else a DRAM access.
inline double tableLatencySeconds(const GpuModel &gpu, double bytes) {
  return bytes <= kL2ReuseShare * gpu.l2Bytes ? gpu.l2LatencySeconds
                                              : gpu.loadLatencySeconds;
}

/// The neighbour groups of `groupSize` (neighbor_group): the profile's
/// count when it has that size, else every row's last group taken as half
/// full.
inline double neighbourGroupCount(const graph::GraphProfile &p,
                                  int32_t groupSize) {
  auto known = p.neighbourGroups.find(groupSize);
  if (known != p.neighbourGroups.end())
    return static_cast<double>(known->second);
  return std::ceil(static_cast<double>(p.nnz) / std::max(1, groupSize)) +
         static_cast<double>(p.numRows - p.emptyRows) * 0.5;
}

/// The host's group tables (ops::NeighbourGroups, uploaded as they are): a
/// row index and a first edge per group, the number of edges, and the
/// first group of each row. Groups of one edge (ThreadMapping::edgeGroups)
/// take only the row indices.
inline double groupTableBytes(double groups, double rows,
                              bool edgeGroups = false) {
  using Tables = ops::NeighbourGroups;
  constexpr double row = sizeof(decltype(Tables::groupRows)::value_type);
  constexpr double begin = sizeof(decltype(Tables::groupBegins)::value_type);
  constexpr double first = sizeof(decltype(Tables::groupPtr)::value_type);
  if (edgeGroups)
    return groups * row;
  return groups * (row + begin) + begin + (rows + 1) * first;
}

/// E[max of `m` row degrees] with the rows drawn independently from the
/// degree histogram (bucket k >= 1 holds degrees [2^(k-1), 2^k), taken at
/// its middle and capped at the largest degree; bucket 0 the empty rows):
/// P(max in bucket <= k) = F(k)^m. Neighbouring rows of real graphs are
/// correlated; this is the unordered estimate.
inline double expectedMaxDegree(const graph::GraphProfile &p, int64_t m) {
  if (p.numRows <= 0 || p.degreeHistogram.empty())
    return 0;
  m = std::clamp<int64_t>(m, 1, p.numRows);
  double cumulative = 0, previous = 0, expected = 0;
  for (size_t k = 0; k < p.degreeHistogram.size(); ++k) {
    cumulative += static_cast<double>(p.degreeHistogram[k]) /
                  static_cast<double>(p.numRows);
    double now = std::pow(std::min(1.0, cumulative), static_cast<double>(m));
    double degree = 0;
    if (k > 0) {
      double lo = std::ldexp(1.0, static_cast<int>(k) - 1);
      double hi = std::min(std::ldexp(1.0, static_cast<int>(k)) - 1,
                           static_cast<double>(p.maxDegree));
      degree = std::max(lo, 0.5 * (lo + hi));
    }
    expected += degree * (now - previous);
    previous = now;
  }
  return std::min(expected, static_cast<double>(p.maxDegree));
}

/// Resident blocks per SM: limited by the block slots, the threads, the
/// shared memory and the registers; a blocks_per_sm cap makes the compiler
/// fit at least that many blocks' registers (spilling if it must).
inline int residentBlocksPerSm(const GpuModel &gpu, const KernelPlan &plan,
                               int regs) {
  const Schedule &s = plan.schedule;
  int threads = std::max(1, s.threadsPerBlock);
  int byThreads = gpu.maxThreadsPerSm / threads;
  int byRegisters = gpu.registersPerSm / std::max(1, regs * threads);
  if (s.blocksPerSm > 0)
    byRegisters = std::max(byRegisters, s.blocksPerSm);
  int byShared =
      plan.launch.sharedBytes > 0
          ? static_cast<int>(sharedBytesPerSm(s) / plan.launch.sharedBytes)
          : gpu.maxBlocksPerSm;
  return std::max(
      1, std::min({gpu.maxBlocksPerSm, byThreads, byRegisters, byShared}));
}

/// The gathered side of a kernel: every edge reads its neighbour's row of
/// `sectorRowBytes` (whole 32-byte sectors). The fraction the reuse
/// estimate (an LRU of the L2's feature-row capacity, see
/// profileOptionsFor) finds in cache is served by the L2, the rest comes
/// from DRAM, but never less than every referenced row once.
struct GatherTraffic {
  /// The reuse estimate's hit rate (0 without one).
  double hitRate = 0;
  /// All gathered bytes, through the L2.
  double bytes = 0;
  /// The gathered bytes that come from DRAM.
  double dramBytes = 0;
};
inline GatherTraffic gatherTraffic(const graph::GraphProfile &profile,
                                   double edges, double sectorRowBytes) {
  GatherTraffic t;
  t.hitRate = profile.reuse.loads > 0 ? profile.reuse.hitRate : 0.0;
  t.bytes = edges * sectorRowBytes;
  double referenced = static_cast<double>(profile.referencedColumns > 0
                                              ? profile.referencedColumns
                                              : profile.numCols);
  t.dramBytes = std::max(t.bytes * (1 - t.hitRate),
                         std::min(t.bytes, referenced * sectorRowBytes));
  return t;
}

/// Names in `p.bound` the largest of the four bounds (bandwidth, latency,
/// waves, issue; the first of equal ones) and returns its seconds.
inline double largestBound(Prediction &p) {
  const std::pair<const char *, double> terms[] = {
      {"bandwidth", p.bandwidthSeconds},
      {"latency", p.latencySeconds},
      {"waves", p.wavesSeconds},
      {"issue", p.issueSeconds}};
  const auto *top = &terms[0];
  for (const auto &t : terms)
    if (t.second > top->second)
      top = &t;
  p.bound = top->first;
  return top->second;
}

/// The explanation of a waves bound: waves of edge_parallel workers of
/// ~`edgesPerWorker` edges, or of vertex_parallel blocks whose slowest row
/// has ~`blockMax` neighbours.
inline void explainWaves(std::ostream &why, const Prediction &p,
                         const ThreadMapping &m, double resident,
                         bool edgeParallel, double edgesPerWorker,
                         double blockMax) {
  if (edgeParallel)
    why << p.waves << " waves of " << resident * m.rowsPerBlock << " workers, ~"
        << static_cast<int64_t>(edgesPerWorker + 0.5) << " edges each";
  else
    why << p.waves << " waves of " << resident << " blocks, slowest row of a "
        << m.rowsPerBlock << "-row block ~" << static_cast<int64_t>(blockMax)
        << " neighbours";
}

/// `s` seconds as "12.3 us" or "1.23 ms", for the models' explanations.
inline std::string formatModelTime(double s) {
  char buf[32];
  if (s >= 1e-3)
    std::snprintf(buf, sizeof(buf), "%.3g ms", s * 1e3);
  else
    std::snprintf(buf, sizeof(buf), "%.3g us", s * 1e6);
  return buf;
}

} // namespace gnnc::tuning::detail

#endif // GNNC_TUNING_MODELDETAIL_H
