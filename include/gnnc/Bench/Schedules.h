//===- Schedules.h - Schedule variants of the bench kernels -----*- C++ -*-===//
//
// The schedules gnn-bench times: the default gnnc resolves (the compiled
// kernel's schedule) and the variants tried beside it, made legal by the
// kernel plans (gnnc/Plan/Plan.h).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_SCHEDULES_H
#define GNNC_BENCH_SCHEDULES_H

#include "gnnc/Plan/Plan.h"
#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gnnc::bench {

/// A schedule gnn-bench runs, with its label in the reports.
struct ScheduleChoice {
  /// "default", "ep256", "dw*2", "dw/2", "vw=2", ...
  std::string label = "default";
  /// The complete schedule; unset for the default, which gnnc resolves
  /// (so that the default tracks the compiler's choice).
  std::optional<Schedule> schedule;
};

/// The gnn.spmm (sum) gnn-bench compiles: `type` features of `width`, with
/// or without edge values, 64- or 32-bit row offsets and 32-bit column
/// indices.
OpDesc benchSpmmOp(ElementType type, int64_t width, bool edgeValues = false,
                   bool offsets64 = true);

/// The default `resolved` (a complete schedule, as gnnc resolved it for
/// `op`) followed by the legal variants (planKernel accepts them) in order
/// of preference: edge_parallel with 256 and 128 merge-path items per
/// worker, the same with half-width loads, 512 items with 128-thread blocks,
/// 64 and 32 items; 256 items with atomic and with shared-memory writes;
/// neighbour groups of kBenchGroupSizes; 256 and 128 items with 4 blocks
/// per SM; then dim_workers x2 and /2 and vector widths 2 and 1 (each with
/// the default lanes). At most `maxCount` entries, without duplicates.
std::vector<ScheduleChoice> scheduleVariants(const Schedule &resolved,
                                             const OpDesc &op, size_t maxCount);

/// The gnn.sddmm schedules for a resolved default: scheduleVariants of the
/// dot form without register caps and without gnn.spmm's atomic or shared
/// writes of split rows (neighbour groups stay: every edge of a group has
/// its own output), with groups of kBenchSddmmSmallGroups after the groups
/// of 8 (one window of indices per group on graphs of a few edges a row;
/// groups of one edge load the column index beside the row).
std::vector<ScheduleChoice> sddmmScheduleVariants(const Schedule &resolved,
                                                  const OpDesc &op,
                                                  size_t maxCount);

/// The group sizes of the neighbor_group schedules gnn-bench runs.
constexpr int kBenchGroupSizes[] = {32, 8};
/// The largest groups also run with the tuner's smaller edge batches
/// (tuning::smallerEdgeBatches).
/// gnn.sddmm also runs groups of these sizes.
constexpr int kBenchSddmmSmallGroups[] = {1, 4};

} // namespace gnnc::bench

#endif // GNNC_BENCH_SCHEDULES_H
