//===- Schedules.h - Schedule variants of the bench kernels -----*- C++ -*-===//
//
// The schedules gnn-bench times: the default gnnc resolves, read back from
// its text, and the legal variants tried beside it, with their
// #gnn.schedule attribute text.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_SCHEDULES_H
#define GNNC_BENCH_SCHEDULES_H

#include "gnnc/runtime/Float16.h"
#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::bench {

/// A vertex_parallel schedule; zeros leave the choice to gnnc (the default
/// schedule is all zeros).
struct ScheduleChoice {
  /// "default", "ep256", "dw*2", "dw/2", "vw=2", ...
  std::string label = "default";
  int vectorWidth = 0;
  int dimWorkers = 0;
  int threadsPerBlock = 0;
  /// Edges per worker of an edge_parallel schedule; 0: vertex_parallel.
  int edgesPerWorker = 0;
  /// blocks_per_sm (0: no register cap).
  int blocksPerSm = 0;
  /// Neighbours per group of a neighbor_group schedule (GNNAdvisor); 0:
  /// another strategy.
  int groupSize = 0;
  /// write = atomic for an edge_parallel schedule (rows split between
  /// workers added atomically rather than staged).
  bool atomic = false;
  /// write = shared for an edge_parallel schedule (rows split inside a block
  /// merged in shared memory, the others staged).
  bool sharedMerge = false;

  /// The #gnn.schedule attribute text; empty for the default.
  std::string attribute() const;
};

/// Reads vector_width, dim_workers and threads_per_block from a complete
/// schedule as KernelSpec::schedule prints it.
Expected<ScheduleChoice> parseSchedule(const std::string &text);

/// Whether a complete schedule is legal for the element type and width
/// (the verifier's and the lowering's rules).
bool isLegalSchedule(const ScheduleChoice &s, ElementType type, int64_t width);

/// The default (which must be complete, read back from a compiled kernel)
/// followed by legal variants in order of preference: dim_workers x2 and /2,
/// then vector_width 2 and 1 (each with enough dim_workers to cover a row).
/// At most `maxCount` entries, without duplicates.
std::vector<ScheduleChoice> scheduleVariants(const ScheduleChoice &resolved,
                                             ElementType type, int64_t width,
                                             size_t maxCount);

/// The SDDMM schedules for a resolved default: scheduleVariants without the
/// edge_parallel ones (vertex_parallel is all gnn.sddmm implements).
std::vector<ScheduleChoice>
sddmmScheduleVariants(const ScheduleChoice &resolved, ElementType type,
                      int64_t width, size_t maxCount);

/// The group sizes of the neighbor_group schedules gnn-bench runs.
constexpr int kBenchGroupSizes[] = {32, 8};

} // namespace gnnc::bench

#endif // GNNC_BENCH_SCHEDULES_H
