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
#include "gnnc/Tuning/CostModel.h"
#include "gnnc/graph/Analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
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
