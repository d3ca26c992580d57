//===- GnnRewrite.h - Find gnn.spmm ops and set their schedules -*- C++ -*-===//
//
// Reads a .gnn module with MLIR, lists the gnn.spmm ops a tuner can tune,
// and prints the module back with chosen #gnn.schedule attributes (comments
// of the input are not kept).
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

/// One gnn.spmm in a .gnn module.
struct SpmmSite {
  /// The kernel's entry name, `<module>_<kernel>` (as in the manifest).
  std::string entryName;
  Problem problem;
  /// The schedule text in the input, empty if it has none.
  std::string currentSchedule;
  /// False (with the reason in `note`) when the op is not tunable here: a
  /// reduce other than sum, a strategy other than vertex_parallel and
  /// edge_parallel, or a kernel that does not hold exactly this one op.
  bool tunable = true;
  std::string note;
};

/// The gnn.spmm ops of `text` (named `bufferName` in errors).
Expected<std::vector<SpmmSite>> findSpmmSites(const std::string &text,
                                              const std::string &bufferName);

/// `text` with the schedule of the gnn.spmm in each kernel named in
/// `schedules` (by entry name) replaced, printed by MLIR. An edge_parallel
/// schedule is written with `write = staged`; the input's disc_batch and
/// accumulate are kept.
Expected<std::string>
applySchedules(const std::string &text, const std::string &bufferName,
               const std::map<std::string, Schedule> &schedules);

} // namespace gnnc::tuning

#endif // GNNC_TUNING_GNNREWRITE_H
