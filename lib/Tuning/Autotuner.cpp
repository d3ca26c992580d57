//===- Autotuner.cpp - Enumerate and rank SpMM and SDDMM schedules --------===//
#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Plan/Limits.h"
#include "gnnc/Tuning/SddmmModel.h"
#include "gnnc/graph/Analysis.h"

#include <algorithm>
#include <set>

using namespace gnnc;
using namespace gnnc::tuning;

namespace {

/// Two strategies whose leaders' predictions differ by less than this
/// factor are both measured: the model is least reliable between them (on
/// R-MAT 18 at width 32 it puts edge-parallel 2x too fast and neighbour
/// groups 1.5x too slow, the wrong order by about 2x).
constexpr double kCloseStrategies = 2.0;

// The model counts a graph's neighbour groups exactly for the sizes the
// graph analysis profiles.
constexpr bool profiled(int64_t size) {
  for (int64_t profiledSize : graph::kProfileGroupSizes)
    if (profiledSize == size)
      return true;
  return false;
}
constexpr bool allProfiled() {
  for (int32_t size : defaults::kTunedGroupSizes)
    if (!profiled(size))
      return false;
  for (int32_t size : defaults::kTunedSddmmGroupSizes)
    if (!profiled(size))
      return false;
  return true;
}
static_assert(allProfiled());

/// The cost models, one line per op family.
const std::pair<OpKind, CostModel> kCostModels[] = {
    {OpKind::Spmm, predictSpmm},
    {OpKind::Sddmm, predictSddmm},
};

/// The schedule `s` with its vector width fixed and dim_workers and threads
/// per block completed as the defaults choose them.
Schedule withDefaults(const OpDesc &op, Schedule s) {
  Expected<Schedule> complete = completeSchedule(op, s);
  return complete ? *complete : s;
}

} // namespace

CostModel gnnc::tuning::costModelFor(OpKind kind) {
  for (const auto &[op, model] : kCostModels)
    if (op == kind)
      return model;
  return nullptr;
}

std::vector<Schedule> gnnc::tuning::enumerateSchedules(const OpDesc &op) {
  std::vector<Schedule> out;
  auto add = [&](const Schedule &s) {
    if (planKernel(op, s))
      out.push_back(s);
  };
  const int vectorWidths[] = {8, 4, 2, 1};
  for (int vw : vectorWidths) {
    Schedule vertex;
    vertex.vectorWidth = vw;
    vertex = withDefaults(op, vertex);
    for (int dw = vertex.dimWorkers; dw >= 1; dw /= 2)
      for (int tpb : {256, 128, 512, 64}) {
        Schedule s = vertex;
        s.dimWorkers = dw;
        s.threadsPerBlock = tpb;
        add(s);
      }
  }
  // edge_parallel and neighbor_group: the default lanes of each vector
  // width, 256 threads, and the tuned items per worker (256, 128, 64) or
  // group sizes (32, 16, 64; for the ops that have neighbour groups). (No
  // blocks_per_sm: the model has no cost for the spills a register cap
  // causes, so it would always prefer the cap.)
  auto wide = [&](Strategy strategy, int32_t Schedule::*field,
                  const auto &values) {
    for (int vw : vectorWidths)
      for (int32_t value : values) {
        Schedule s;
        s.strategy = strategy;
        s.vectorWidth = vw;
        s.*field = value;
        s.threadsPerBlock = 256;
        add(withDefaults(op, s));
      }
  };
  wide(Strategy::EdgeParallel, &Schedule::edgesPerWarp,
       defaults::kTunedEdgesPerWorker);
  wide(Strategy::NeighborGroup, &Schedule::groupSize,
       defaults::kTunedGroupSizes);
  if (op.kind == OpKind::Sddmm)
    wide(Strategy::NeighborGroup, &Schedule::groupSize,
         defaults::kTunedSddmmGroupSizes);
  // Fewer neighbour loads in flight (fewer registers, more rows per SM):
  // every candidate of gnn.spmm with attention, whose batch slots also hold
  // a weight, and gnn.spmm's neighbour groups and edge-parallel workers.
  if (op.kind == OpKind::Spmm) {
    const size_t listed = out.size();
    for (size_t i = 0; i < listed; ++i) {
      if (!op.attention && out[i].strategy != Strategy::NeighborGroup &&
          out[i].strategy != Strategy::EdgeParallel)
        continue;
      for (const Schedule &s : smallerEdgeBatches(op, out[i]))
        add(s);
    }
  }
  return out;
}

std::vector<Schedule> gnnc::tuning::smallerEdgeBatches(const OpDesc &op,
                                                       const Schedule &s) {
  std::vector<Schedule> out;
  Expected<KernelPlan> plan = planKernel(op, s);
  if (!plan)
    return out;
  for (int32_t batch : defaults::kTunedEdgeBatches)
    if (batch < plan->mapping.edgeUnroll) {
      Schedule fewer = s;
      fewer.edgeBatch = batch;
      out.push_back(fewer);
    }
  return out;
}

std::vector<Candidate> gnnc::tuning::rankSchedules(
    const GpuModel &gpu, const graph::GraphProfile &profile, const OpDesc &op,
    const std::vector<Schedule> &schedules) {
  std::vector<Candidate> ranked;
  CostModel model = costModelFor(op.kind);
  if (!model)
    return ranked;
  ranked.reserve(schedules.size());
  for (const Schedule &s : schedules)
    if (Expected<KernelPlan> plan = planKernel(op, s))
      ranked.push_back({s, model(gpu, profile, op, *plan), std::nullopt, "",
                        plan->mapping.edgeGroups});
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
gnnc::tuning::measurementOrder(const std::vector<Candidate> &ranked, size_t k,
                               bool everyStrategy) {
  k = std::min(k, ranked.size());
  if (k == 0)
    return {};
  // The overall leader (index 0), then each other strategy's leader if
  // its prediction is within kCloseStrategies of it (or at all, with
  // everyStrategy), then the rest by rank.
  auto family = [&](size_t i) {
    return std::make_pair(ranked[i].schedule.strategy, ranked[i].edgeGroups);
  };
  std::vector<size_t> chosen{0};
  std::set<std::pair<Strategy, bool>> seen = {family(0)};
  for (size_t i = 1; i < ranked.size() && (everyStrategy || chosen.size() < k);
       ++i) {
    if (!seen.insert(family(i)).second)
      continue;
    if (everyStrategy || ranked[i].prediction.seconds <=
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
