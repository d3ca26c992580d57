//===- TunedCompile.h - Compile .gnn text tuned for a graph -----*- C++ -*-===//
//
// The C++ API's way to "never pick by hand": every gnn.spmm and gnn.sddmm
// that has no schedule gets one chosen for the graph it will run on (the
// tuning database's entry for this graph, else the cost model's best), then
// the module is compiled as by compileGnn. Schedules written in the source
// are kept.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_TUNEDCOMPILE_H
#define GNNC_TUNING_TUNEDCOMPILE_H

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/Schedule.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Batch.h"
#include "gnnc/graph/Csr.h"
#include "gnnc/runtime/Runtime.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gnnc::tuning {

struct TunedCompileOptions {
  /// GPU architecture whose model ranks the schedules ("sm_90"); empty: the
  /// GPU present (without one, compileForGraph fails and says so).
  std::string arch;
  /// Consult (never write) the tuning database; "" = defaultDatabasePath().
  bool useDatabase = true;
  std::string databasePath;
  /// With a runtime and measureTopK > 0, the cost model's leaders
  /// (measurementOrder: the best, every other strategy's best, the next
  /// ranked up to measureTopK) are timed on the runtime's GPU over the graph
  /// with random features, and the fastest is chosen. Unchecked: the candidates
  /// are gnnc's tested kernels.
  rt::Runtime *runtime = nullptr;
  size_t measureTopK = 0;
  /// The graph's profiles, kept by the caller across calls for the same
  /// graph object (a host program's graph handle): every op compiled for a
  /// graph needs one per feature-row size, also to find its database entry.
  /// Null: each call analyses the graph again.
  graph::ProfileCache *profiles = nullptr;
};

/// What compileForGraph chose: the architecture it tuned for, and for each
/// tuned kernel (by entry name) the schedule and where it came from
/// ("database", "cost model" or "measured").
struct TuningChoices {
  std::string arch;
  struct Choice {
    Schedule schedule;
    std::string source;
    /// compileForBatch: the predicted seconds of the general choice (on the
    /// block-diagonal graph) and of the batched one, where both were
    /// predicted.
    std::optional<double> generalSeconds, batchedSeconds;
  };
  std::map<std::string, Choice> schedules;
};

/// Compiles `text` with every unscheduled, tunable gnn.spmm and gnn.sddmm
/// scheduled for graph `g`. `choices`, when given, receives what was chosen and
/// why.
Expected<CompiledModule>
compileForGraph(const std::string &text, const std::string &bufferName,
                const graph::CsrGraph &g,
                const TunedCompileOptions &options = {},
                TuningChoices *choices = nullptr);

/// compileForGraph for a batch of small graphs (`batch`; the module's ops
/// take a !gnn.graph<batched_csr, ...>). Each unscheduled gnn.spmm the
/// tuner knows gets the better predicted of two: compileForGraph's choice
/// on the batch's block-diagonal graph, and the batched schedule the
/// batched model ranks first (chooseBatchedSchedule). With a runtime and
/// measureTopK, the general leaders are timed on the block-diagonal graph
/// and the batched schedule on the batch, and the faster measured wins
/// (source "measured (batched)" when it is the batched one); otherwise the
/// predictions decide ("cost model (batched)"). A database entry is kept as
/// it is. Ops the tuner does not know keep their default schedule; a batch
/// that breaks its rules fails with the rule.
Expected<CompiledModule>
compileForBatch(const std::string &text, const std::string &bufferName,
                const graph::BatchedGraph &batch,
                const TunedCompileOptions &options = {},
                TuningChoices *choices = nullptr);

/// compileForGraph for the segmented matmuls: every unscheduled
/// gnn.segment_matmul and gnn.segment_matmul_weight_grad gets the tuning
/// database's entry for the statistics of the segment offsets `seg`
/// (num_types + 1 of them), else the cost model's best (SegmentModel.h),
/// else, with a runtime and measureTopK, the fastest of the model's
/// leaders timed on `seg` with random inputs. Malformed offsets fail with
/// the rule they break.
Expected<CompiledModule>
compileForSegments(const std::string &text, const std::string &bufferName,
                   const std::vector<int64_t> &seg,
                   const TunedCompileOptions &options = {},
                   TuningChoices *choices = nullptr);

} // namespace gnnc::tuning

#endif // GNNC_TUNING_TUNEDCOMPILE_H
