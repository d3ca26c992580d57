//===- Schedules.cpp - Schedule variants of the bench kernels -------------===//
#include "gnnc/Bench/Schedules.h"

#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Tuning/CostModel.h"

#include <algorithm>
#include <cctype>
#include <iterator>

using namespace gnnc;
using namespace gnnc::bench;

namespace {

/// The label of neighbour groups of `size`: "ng8".
std::string groupLabel(int size) { return "ng" + std::to_string(size); }

/// The smallest of kBenchGroupSizes.
int smallestBenchGroup() {
  return *std::min_element(std::begin(kBenchGroupSizes),
                           std::end(kBenchGroupSizes));
}

} // namespace

OpDesc gnnc::bench::benchSpmmOp(ElementType type, int64_t width,
                                bool edgeValues, bool offsets64) {
  OpDesc op = spmmOp(type, width);
  op.edgeValues = edgeValues;
  op.offsets64 = offsets64;
  return op;
}

std::vector<ScheduleChoice>
gnnc::bench::scheduleVariants(const Schedule &resolved, const OpDesc &op,
                              size_t maxCount) {
  // Each candidate is completed the way gnn-default-schedule would complete
  // it; the plans say whether it is legal.
  std::vector<std::pair<std::string, Schedule>> candidates{
      {"default", resolved}};
  auto add = [&](const std::string &label, Schedule s) {
    Expected<Schedule> complete = completeSchedule(op, s);
    if (complete)
      candidates.push_back({label, *complete});
  };
  auto edgeParallel = [&](int edges, WriteMode write = WriteMode::Direct) {
    Schedule s = resolved;
    s.strategy = Strategy::EdgeParallel;
    s.edgesPerWarp = edges;
    s.write = write;
    return s;
  };
  // Edge-parallel: rows split between workers of equal edge counts; 512
  // items per worker with 128-thread blocks (the row ends of a block's
  // workers stay within the same shared memory as 256 items at 256).
  // Twice the threads per worker, half the elements per load: more loads
  // in flight for the short stretches of small, cache-resident graphs.
  auto halfVector = [&](int edges) {
    if (resolved.vectorWidth <= 1)
      return;
    Schedule s = edgeParallel(edges);
    s.vectorWidth = resolved.vectorWidth / 2;
    s.dimWorkers = 0;
    add("ep" + std::to_string(edges) + "vw" + std::to_string(s.vectorWidth), s);
  };
  add("ep256", edgeParallel(256));
  add("ep128", edgeParallel(128));
  halfVector(256);
  halfVector(128);
  {
    Schedule s = edgeParallel(512);
    s.threadsPerBlock = 128;
    add("ep512t128", s);
  }
  halfVector(64);
  add("ep64", edgeParallel(64));
  // GNNAdvisor's neighbour groups (partial sums merged in shared memory,
  // rows that span blocks added atomically).
  for (int groupSize : kBenchGroupSizes) {
    Schedule s = resolved;
    s.strategy = Strategy::NeighborGroup;
    s.groupSize = groupSize;
    add(groupLabel(groupSize), s);
  }
  // The smallest groups with twice the lanes (half the vector): a group of
  // a narrow row in one window of indices (f16 at width 32: 8 lanes of 4
  // elements instead of 4 of 8).
  if (resolved.vectorWidth > 1) {
    Schedule s = resolved;
    s.strategy = Strategy::NeighborGroup;
    s.groupSize = smallestBenchGroup();
    s.vectorWidth = resolved.vectorWidth / 2;
    s.dimWorkers = 0;
    add(groupLabel(s.groupSize) + "vw" + std::to_string(s.vectorWidth), s);
  }
  // The largest groups with fewer neighbour loads in flight per thread:
  // fewer registers, more warps an SM (f32 width 32: 62 registers and half
  // the warp slots with the default batch of 8, 40 with 4, 30 with 2).
  {
    const int largest = *std::max_element(std::begin(kBenchGroupSizes),
                                          std::end(kBenchGroupSizes));
    Schedule s = resolved;
    s.strategy = Strategy::NeighborGroup;
    s.groupSize = largest;
    if (Expected<Schedule> complete = completeSchedule(op, s))
      for (const Schedule &fewer : tuning::smallerEdgeBatches(op, *complete))
        add(groupLabel(largest) + "e" + std::to_string(fewer.edgeBatch), fewer);
  }
  // Edge-parallel workers with a batch of 4 neighbours: at f32 width 128,
  // 59 registers instead of 76 (4 blocks of 256 an SM instead of 3,
  // without spills).
  for (int edges : {256, 128}) {
    Schedule s = edgeParallel(edges);
    s.edgeBatch = 4;
    add("ep" + std::to_string(edges) + "e4", s);
  }
  {
    Schedule s = edgeParallel(512);
    s.threadsPerBlock = 128;
    s.edgeBatch = 4;
    add("ep512t128e4", s);
  }
  // The same registers by a cap (4 blocks an SM, with spills), and the
  // shortest stretches: the fastest of no case since 2026-11-29.
  for (int edges : {256, 128}) {
    Schedule s = edgeParallel(edges);
    s.blocksPerSm = 4;
    add("ep" + std::to_string(edges) + "b4", s);
  }
  add("ep32", edgeParallel(32));
  // For comparison: split rows added atomically instead of staged, or
  // merged in shared memory (the fastest of no case measured since
  // 2026-11-27; after the first 16).
  add("ep256a", edgeParallel(256, WriteMode::Atomic));
  add("ep256s", edgeParallel(256, WriteMode::Shared));
  auto lanes = [&](const std::string &label, int vw, int dw) {
    Schedule s = resolved;
    s.vectorWidth = vw;
    s.dimWorkers = dw;
    add(label, s);
  };
  lanes("dw*2", resolved.vectorWidth, resolved.dimWorkers * 2);
  if (resolved.dimWorkers / 2 >= 1)
    lanes("dw/2", resolved.vectorWidth, resolved.dimWorkers / 2);
  for (int vw : {2, 1})
    if (vw < resolved.vectorWidth)
      lanes("vw=" + std::to_string(vw), vw, 0);

  std::vector<ScheduleChoice> chosen;
  for (const auto &[label, s] : candidates) {
    if (chosen.size() >= maxCount)
      break;
    if (!planKernel(op, s))
      continue;
    bool duplicate = false;
    for (const ScheduleChoice &c : chosen)
      duplicate |= *c.schedule == s;
    if (!duplicate)
      chosen.push_back({label, s});
  }
  return chosen;
}

std::vector<ScheduleChoice>
gnnc::bench::sddmmScheduleVariants(const Schedule &resolved, const OpDesc &op,
                                   size_t maxCount) {
  std::vector<ScheduleChoice> chosen;
  // Groups of kBenchSddmmSmallGroups, placed after the smallest groups of
  // kBenchGroupSizes (when gnnc completes and plans them).
  std::vector<ScheduleChoice> small;
  for (int size : kBenchSddmmSmallGroups) {
    Schedule s = resolved;
    s.strategy = Strategy::NeighborGroup;
    s.groupSize = size;
    Expected<Schedule> complete = completeSchedule(op, s);
    if (complete && planKernel(op, *complete))
      small.push_back(ScheduleChoice{groupLabel(size), *complete});
  }
  const std::string after = groupLabel(smallestBenchGroup());
  auto take = [&](const ScheduleChoice &s) {
    bool duplicate = false;
    for (const ScheduleChoice &c : chosen)
      duplicate |= *c.schedule == *s.schedule;
    if (!duplicate && chosen.size() < maxCount)
      chosen.push_back(s);
  };
  for (const ScheduleChoice &s : scheduleVariants(resolved, op, size_t(64))) {
    if (s.schedule->blocksPerSm == 0 && s.schedule->edgeBatch == 0 &&
        (s.schedule->strategy == Strategy::NeighborGroup ||
         (s.schedule->write != WriteMode::Atomic &&
          s.schedule->write != WriteMode::Shared)))
      take(s);
    if (s.label == after) {
      for (const ScheduleChoice &g : small)
        take(g);
      small.clear();
    }
  }
  for (const ScheduleChoice &g : small)
    take(g);
  return chosen;
}
