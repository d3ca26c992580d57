//===- GnnRewrite.h - Find tunable ops and set their schedules --*- C++ -*-===//
//
// Reads a .gnn module with MLIR, lists the gnn.spmm and gnn.sddmm ops a
// tuner can tune, and prints the module back with chosen #gnn.schedule
// attributes (comments of the input are not kept).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_GNNREWRITE_H
#define GNNC_TUNING_GNNREWRITE_H

#include "gnnc/Tuning/CostModel.h"
#include "gnnc/runtime/Status.h"

#include <map>
#include <string>
#include <vector>

namespace gnnc::tuning {

/// One gnn.spmm or gnn.sddmm in a .gnn module (`problem.op` says which).
struct TunableSite {
  /// The kernel's entry name, `<module>_<kernel>` (as in the manifest).
  std::string entryName;
  Problem problem;
  /// The schedule text in the input, empty if it has none.
  std::string currentSchedule;
  /// False (with the reason in `note`) when the op is not tunable here: a
  /// gnn.spmm with a reduce other than sum (or with scale or self_weight), a
  /// strategy other than vertex_parallel and edge_parallel, or a kernel that
  /// does not hold exactly this one op.
  bool tunable = true;
  std::string note;
};
using SpmmSite = TunableSite;

/// The gnn.spmm and gnn.sddmm ops of `text` (named `bufferName` in errors),
/// in the order of the module.
Expected<std::vector<TunableSite>> findSites(const std::string &text,
                                             const std::string &bufferName);

/// The gnn.spmm ops of `text` alone.
Expected<std::vector<SpmmSite>> findSpmmSites(const std::string &text,
                                              const std::string &bufferName);

/// `text` with the schedule of the gnn.spmm or gnn.sddmm in each kernel
/// named in `schedules` (by entry name) replaced, printed by MLIR. An
/// edge_parallel schedule is written with `write = staged`, a
/// neighbor_group one with `write = atomic`; a gnn.spmm keeps the input's
/// disc_batch and accumulate.
Expected<std::string>
applySchedules(const std::string &text, const std::string &bufferName,
               const std::map<std::string, Schedule> &schedules);

} // namespace gnnc::tuning

#endif // GNNC_TUNING_GNNREWRITE_H
