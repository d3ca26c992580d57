//===- Autotuner.cpp - Enumerate and rank SpMM and SDDMM schedules --------===//
#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Tuning/SddmmModel.h"

#include <algorithm>

using namespace gnnc;
using namespace gnnc::tuning;

namespace {

/// Two strategies whose leaders' predictions differ by less than this
/// factor are both measured: the model is least reliable between them (on
/// R-MAT 18 at width 32 it puts edge-parallel 2x too fast and neighbour
/// groups 1.5x too slow, the wrong order by about 2x).
constexpr double kCloseStrategies = 2.0;

/// The vector widths the verifier allows for `problem`, widest first.
std::vector<int> vectorWidths(const Problem &problem) {
  std::vector<int> out;
  for (int vw : {8, 4, 2, 1})
    if (vw * static_cast<int64_t>(elementSize(problem.type)) <= 16 &&
        problem.width > 0 && problem.stride() % vw == 0)
      out.push_back(vw);
  return out;
}

/// gnn-default-schedule's dim_workers for `vw`: enough lanes for one trip
/// over the row's chunks, a power of two up to 32.
int defaultDimWorkers(const Problem &problem, int vw) {
  int64_t chunks = (problem.width + vw - 1) / vw;
  int lanes = 1;
  while (lanes < chunks && lanes < 32)
    lanes *= 2;
  return lanes;
}

} // namespace

std::vector<Schedule> gnnc::tuning::enumerateSchedules(const Problem &problem) {
  std::vector<Schedule> out;
  for (int vw : vectorWidths(problem)) {
    for (int dw = defaultDimWorkers(problem, vw); dw >= 1; dw /= 2) {
      for (int tpb : {256, 128, 512, 64}) {
        Schedule s{vw, dw, tpb};
        if (isLegal(problem, s))
          out.push_back(s);
      }
    }
  }
  // edge_parallel: the default lanes of each vector width, 256 threads,
  // 256, 128 and 64 merge-path items per worker. (No blocks_per_sm: the
  // model has no cost for the spills a register cap causes, so it would
  // always prefer the cap.)
  for (int vw : vectorWidths(problem)) {
    for (int items : {256, 128, 64}) {
      Schedule s{vw, defaultDimWorkers(problem, vw), 256, items};
      if (isLegal(problem, s))
        out.push_back(s);
    }
  }
  // neighbor_group: the default lanes of each vector width, 256 threads,
  // groups of 16, 32 and 64 neighbours (gnn.spmm only: isLegal rejects
  // them for gnn.sddmm).
  for (int vw : vectorWidths(problem)) {
    for (int group : {32, 16, 64}) {
      Schedule s{vw, defaultDimWorkers(problem, vw), 256};
      s.groupSize = group;
      if (isLegal(problem, s))
        out.push_back(s);
    }
  }
  return out;
}

std::vector<Candidate> gnnc::tuning::rankSchedules(
    const GpuModel &gpu, const graph::GraphProfile &profile,
    const Problem &problem, const std::vector<Schedule> &schedules) {
  std::vector<Candidate> ranked;
  ranked.reserve(schedules.size());
  for (const Schedule &s : schedules)
    ranked.push_back(
        {s, predictFor(gpu, profile, problem, s), std::nullopt, ""});
  // By predicted time; among equal times, the schedule whose other terms
  // are smaller (more slack if the model's largest term is wrong); then the
  // enumeration's order.
  auto slack = [](const Prediction &p) {
    return p.bandwidthSeconds + p.latencySeconds + p.wavesSeconds +
           p.issueSeconds;
  };
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const Candidate &a, const Candidate &b) {
                     if (a.prediction.seconds != b.prediction.seconds)
                       return a.prediction.seconds < b.prediction.seconds;
                     return slack(a.prediction) < slack(b.prediction);
                   });
  return ranked;
}

std::vector<size_t>
gnnc::tuning::measurementOrder(const std::vector<Candidate> &ranked, size_t k) {
  k = std::min(k, ranked.size());
  if (k == 0)
    return {};
  // The overall leader (index 0), then each other strategy's leader if
  // its prediction is within kCloseStrategies of it, then the rest by rank.
  std::vector<size_t> chosen{0};
  bool seen[3] = {};
  seen[ranked[0].schedule.strategyIndex()] = true;
  for (size_t i = 1; i < ranked.size() && chosen.size() < k; ++i) {
    int strategy = ranked[i].schedule.strategyIndex();
    if (seen[strategy])
      continue;
    seen[strategy] = true;
    if (ranked[i].prediction.seconds <=
        kCloseStrategies * ranked[0].prediction.seconds)
      chosen.push_back(i);
  }
  for (size_t i = 1; i < ranked.size() && chosen.size() < k; ++i)
    if (std::find(chosen.begin(), chosen.end(), i) == chosen.end())
      chosen.push_back(i);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

size_t gnnc::tuning::chooseCandidate(const std::vector<Candidate> &ranked) {
  size_t best = 0;
  bool anyMeasured = false;
  for (size_t i = 0; i < ranked.size(); ++i) {
    if (!ranked[i].measuredSeconds)
      continue;
    if (!anyMeasured ||
        *ranked[i].measuredSeconds < *ranked[best].measuredSeconds)
      best = i;
    anyMeasured = true;
  }
  return anyMeasured ? best : 0;
}
