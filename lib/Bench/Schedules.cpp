//===- Schedules.cpp - Schedule variants of the bench kernels -------------===//
#include "gnnc/Bench/Schedules.h"

#include "gnnc/Tuning/CostModel.h"

#include <algorithm>
#include <cctype>

using namespace gnnc;
using namespace gnnc::bench;

std::string ScheduleChoice::attribute() const {
  std::vector<std::string> parts;
  if (edgesPerWorker)
    parts.push_back("strategy = edge_parallel, edges_per_warp = " +
                    std::to_string(edgesPerWorker));
  if (groupSize)
    parts.push_back("strategy = neighbor_group, group_size = " +
                    std::to_string(groupSize));
  if (atomic)
    parts.push_back("write = atomic");
  if (sharedMerge)
    parts.push_back("write = shared");
  if (vectorWidth)
    parts.push_back("vector_width = " + std::to_string(vectorWidth));
  if (dimWorkers)
    parts.push_back("dim_workers = " + std::to_string(dimWorkers));
  if (threadsPerBlock)
    parts.push_back("threads_per_block = " + std::to_string(threadsPerBlock));
  if (blocksPerSm)
    parts.push_back("blocks_per_sm = " + std::to_string(blocksPerSm));
  if (parts.empty())
    return "";
  std::string text = "#gnn.schedule<";
  for (size_t i = 0; i < parts.size(); ++i)
    text += (i ? ", " : "") + parts[i];
  return text + ">";
}

namespace {

/// The integer after "key = " in `text`, or -1.
int findScheduleInt(const std::string &text, const std::string &key) {
  size_t at = text.find(key + " = ");
  if (at == std::string::npos)
    return -1;
  at += key.size() + 3;
  size_t end = at;
  while (end < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[end])))
    ++end;
  if (end == at || end - at > 6)
    return -1;
  return std::stoi(text.substr(at, end - at));
}

/// What gnn-default-schedule picks for dim_workers given a vector width.
int defaultDimWorkers(int64_t width, int vectorWidth) {
  int64_t chunks = (width + vectorWidth - 1) / vectorWidth;
  int workers = 1;
  while (workers < chunks && workers < 32)
    workers *= 2;
  return workers;
}

} // namespace

Expected<ScheduleChoice> gnnc::bench::parseSchedule(const std::string &text) {
  ScheduleChoice s;
  s.vectorWidth = findScheduleInt(text, "vector_width");
  s.dimWorkers = findScheduleInt(text, "dim_workers");
  s.threadsPerBlock = findScheduleInt(text, "threads_per_block");
  s.edgesPerWorker = std::max(0, findScheduleInt(text, "edges_per_warp"));
  s.blocksPerSm = std::max(0, findScheduleInt(text, "blocks_per_sm"));
  s.groupSize = std::max(0, findScheduleInt(text, "group_size"));
  s.atomic =
      s.edgesPerWorker > 0 && text.find("write = atomic") != std::string::npos;
  s.sharedMerge =
      s.edgesPerWorker > 0 && text.find("write = shared") != std::string::npos;
  if (s.vectorWidth <= 0 || s.dimWorkers <= 0 || s.threadsPerBlock <= 0)
    return Status::error("cannot read vector_width, dim_workers and "
                         "threads_per_block from the schedule '" +
                         text + "'");
  return s;
}

bool gnnc::bench::isLegalSchedule(const ScheduleChoice &s, ElementType type,
                                  int64_t width) {
  // The tuner's mirror of the verifier and the lowering: an illegal
  // schedule would fail the whole translation unit of its (type, width).
  if (s.groupSize > 0) {
    // The lowering's rule: one f32 row of shared memory per group in a
    // block; otherwise the vertex-parallel rules.
    if (s.dimWorkers <= 0 || s.threadsPerBlock % s.dimWorkers != 0 ||
        int64_t(s.threadsPerBlock / s.dimWorkers) * width * 4 > 96 * 1024 ||
        s.edgesPerWorker != 0 || s.atomic || s.sharedMerge)
      return false;
    ScheduleChoice vertex = s;
    vertex.groupSize = 0;
    return isLegalSchedule(vertex, type, width);
  }
  tuning::Problem problem;
  problem.type = type;
  problem.width = width;
  tuning::Schedule schedule;
  schedule.vectorWidth = s.vectorWidth;
  schedule.dimWorkers = s.dimWorkers;
  schedule.threadsPerBlock = s.threadsPerBlock;
  schedule.edgesPerWorker = s.edgesPerWorker;
  schedule.blocksPerSm = s.blocksPerSm;
  if (s.sharedMerge) {
    // The lowering's rule: two f32 rows per worker besides the row ends.
    int64_t workers = s.dimWorkers > 0 ? s.threadsPerBlock / s.dimWorkers : 0;
    int64_t bytes =
        workers * (s.edgesPerWorker + 1) * 4 + workers * 2 * width * 4;
    if (workers <= 0 || bytes > 96 * 1024 ||
        (s.blocksPerSm > 0 && s.blocksPerSm * bytes > 160 * 1024))
      return false;
  }
  return tuning::isLegal(problem, schedule);
}

std::vector<ScheduleChoice>
gnnc::bench::scheduleVariants(const ScheduleChoice &resolved, ElementType type,
                              int64_t width, size_t maxCount) {
  ScheduleChoice base = resolved;
  base.label = "default";
  std::vector<ScheduleChoice> candidates{base};
  auto variant = [&](const std::string &label, int vw, int dw) {
    ScheduleChoice s = base;
    s.label = label;
    s.vectorWidth = vw;
    s.dimWorkers = dw;
    candidates.push_back(s);
  };
  // Edge-parallel: rows split between workers of equal edge counts; 512
  // items per worker with 128-thread blocks (the row ends of a block's
  // workers stay within the same shared memory as 256 items at 256).
  auto edgeParallel = [&](int edges, int blocksPerSm, int threads = 0) {
    ScheduleChoice s = base;
    s.label = "ep" + std::to_string(edges) +
              (blocksPerSm ? "b" + std::to_string(blocksPerSm) : "") +
              (threads ? "t" + std::to_string(threads) : "");
    s.edgesPerWorker = edges;
    s.blocksPerSm = blocksPerSm;
    if (threads)
      s.threadsPerBlock = threads;
    candidates.push_back(s);
  };
  // Twice the threads per worker, half the elements per load: more loads
  // in flight for the short stretches of small, cache-resident graphs.
  auto halfVector = [&](int edges) {
    if (base.vectorWidth <= 1)
      return;
    ScheduleChoice s = base;
    s.label = "ep" + std::to_string(edges) + "vw" +
              std::to_string(base.vectorWidth / 2);
    s.edgesPerWorker = edges;
    s.vectorWidth = base.vectorWidth / 2;
    s.dimWorkers = defaultDimWorkers(width, s.vectorWidth);
    candidates.push_back(s);
  };
  edgeParallel(256, 0);
  edgeParallel(128, 0);
  halfVector(256);
  halfVector(128);
  edgeParallel(512, 0, 128);
  halfVector(64);
  edgeParallel(64, 0);
  edgeParallel(32, 0);
  // For comparison: split rows added atomically instead of staged, and
  // GNNAdvisor's neighbour groups (partial sums merged in shared memory,
  // rows that span blocks added atomically).
  {
    ScheduleChoice s = base;
    s.label = "ep256a";
    s.edgesPerWorker = 256;
    s.atomic = true;
    candidates.push_back(s);
    s.label = "ep256s";
    s.atomic = false;
    s.sharedMerge = true;
    candidates.push_back(s);
  }
  for (int groupSize : kBenchGroupSizes) {
    ScheduleChoice s = base;
    s.label = "ng" + std::to_string(groupSize);
    s.groupSize = groupSize;
    candidates.push_back(s);
  }
  // The same with registers capped so that 4 blocks fit on an SM (more
  // rows in flight per SM; since the kernels keep the current row's end in
  // a register this has lost everywhere it was measured).
  edgeParallel(256, 4);
  edgeParallel(128, 4);
  variant("dw*2", base.vectorWidth, base.dimWorkers * 2);
  variant("dw/2", base.vectorWidth, base.dimWorkers / 2);
  for (int vw : {2, 1})
    if (vw < base.vectorWidth)
      variant("vw=" + std::to_string(vw), vw, defaultDimWorkers(width, vw));

  std::vector<ScheduleChoice> chosen;
  for (const ScheduleChoice &s : candidates) {
    if (chosen.size() >= maxCount)
      break;
    if (!isLegalSchedule(s, type, width))
      continue;
    bool duplicate = false;
    for (const ScheduleChoice &c : chosen)
      duplicate |=
          c.vectorWidth == s.vectorWidth && c.dimWorkers == s.dimWorkers &&
          c.threadsPerBlock == s.threadsPerBlock &&
          c.edgesPerWorker == s.edgesPerWorker &&
          c.blocksPerSm == s.blocksPerSm && c.groupSize == s.groupSize &&
          c.atomic == s.atomic && c.sharedMerge == s.sharedMerge;
    if (!duplicate)
      chosen.push_back(s);
  }
  return chosen;
}

std::vector<ScheduleChoice>
gnnc::bench::sddmmScheduleVariants(const ScheduleChoice &resolved,
                                   ElementType type, int64_t width,
                                   size_t maxCount) {
  std::vector<ScheduleChoice> chosen;
  for (const ScheduleChoice &s :
       scheduleVariants(resolved, type, width, size_t(64)))
    if (s.blocksPerSm == 0 && s.groupSize == 0 && !s.atomic && !s.sharedMerge &&
        chosen.size() < maxCount)
      chosen.push_back(s);
  return chosen;
}
