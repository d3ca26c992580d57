//===- Tuner.h - The tuning loop, on clones of a parsed module --*- C++ -*-===//
//
// One loop serves gnn-tune and the C++ API (compileForGraph): for every op
// of a .gnn module that a cost model knows, profile the graph, enumerate
// and rank the schedules (Autotuner.h), optionally measure the leaders on a
// GPU or compile them ahead, and choose. The module is parsed once; every
// schedule is written into a clone of it as a #gnn.schedule attribute,
// never into text.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_TUNER_H
#define GNNC_TUNING_TUNER_H

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Tuning/SegmentModel.h"
#include "gnnc/Tuning/TuningDb.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Csr.h"
#include "gnnc/runtime/Status.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gnnc::tuning {

/// One op of a .gnn module that a tuner may schedule.
struct TunableSite {
  /// The kernel's entry name, `<module>_<kernel>` (as in the manifest).
  std::string entryName;
  OpDesc op;
  /// The schedule written in the source, if any.
  std::optional<Schedule> written;
  /// False (with the reason in `note`) when the op is not tunable here: an
  /// op no cost model knows (the segmented matmuls are tuned on segments,
  /// tuneSegmentSites, and take only tile_routed), a gnn.spmm with a reduce
  /// other than sum (or with scale or self_weight), a written strategy the
  /// tuner does not enumerate, or a kernel that does not hold exactly this one
  /// op.
  bool tunable = true;
  std::string note;
};

/// A .gnn module parsed once, with its tunable sites. Schedules are set on
/// clones of it, by entry name.
class TunableModule {
public:
  static Expected<TunableModule> parse(const std::string &text,
                                       const std::string &bufferName);

  const std::vector<TunableSite> &sites() const { return sites_; }

  /// The module with `schedules` set, printed as .gnn text.
  std::string print(const std::map<std::string, Schedule> &schedules) const;
  /// The module with `schedules` set, compiled.
  Expected<CompiledModule>
  compile(const std::map<std::string, Schedule> &schedules) const;
  /// Only the kernel `entryName`, with `schedule`, compiled.
  Expected<rt::KernelSpec> compileKernel(const std::string &entryName,
                                         const Schedule &schedule) const;

  /// `chosen` for the op of `site`: a gnn.spmm keeps the written
  /// disc_batch and accumulation, which the tuner does not choose.
  static Schedule applied(const TunableSite &site, Schedule chosen);

private:
  TunableModule(GnnModule module, std::vector<TunableSite> sites)
      : module_(std::move(module)), sites_(std::move(sites)) {}
  /// A clone of the module with `schedules` set; with `only`, every other
  /// kernel is removed.
  mlir::ModuleOp withSchedules(const std::map<std::string, Schedule> &schedules,
                               const std::string *only = nullptr) const;

  GnnModule module_;
  std::vector<TunableSite> sites_;
};

/// Where a site's schedule came from.
enum class ChoiceSource { Database, Model, Measured };

/// What the tuning loop found for one site.
struct SiteTuning {
  const TunableSite *site = nullptr;
  /// The graph's profile (graph ops) or the segments' statistics (the
  /// segmented matmuls).
  graph::GraphProfile profile;
  std::optional<SegmentStats> segments;
  /// Every ranked candidate (empty when the database answered).
  std::vector<Candidate> ranked;
  /// The chosen schedule, applied to the site (TunableModule::applied).
  Schedule choice;
  /// The chosen candidate in `ranked`, when ranked.
  size_t choiceIndex = 0;
  ChoiceSource source = ChoiceSource::Model;
  /// The database's entry for this site before tuning, if any.
  std::optional<TuningEntry> previous;
  /// CPU seconds of the analysis alone and of analysis plus ranking; wall
  /// seconds of both.
  double cpuProfileSeconds = 0, cpuSeconds = 0, wallSeconds = 0;
};

/// How the tuning loop runs.
struct TuningOptions {
  GpuModel gpu;
  /// Tune sites whose schedule is written in the source too (gnn-tune);
  /// otherwise they keep it (compileForGraph).
  bool retuneWritten = false;
  /// The tuning database: each site's previous entry is looked up in it
  /// (SiteTuning::previous), and with `takeFromDatabase` a legal entry is
  /// the choice, without ranking.
  const TuningDb *database = nullptr;
  bool takeFromDatabase = false;
  /// How many ranked candidates to hand to `visit` (measurementOrder), and
  /// whether every strategy's best is among them regardless.
  size_t topK = 0;
  bool visitEveryStrategy = false;
  /// Called, when set, with the compiled kernel of each candidate to visit;
  /// returns its measured seconds (0 when it only compiled it ahead) or
  /// why it failed, which lands in the candidate's note.
  std::function<Expected<double>(const TunableSite &site,
                                 const rt::KernelSpec &kernel)>
      visit;
  /// Whether `visit` measures (its times choose among the candidates).
  bool visitMeasures = false;
  /// Called after each site is tuned, before the next starts.
  std::function<void(const SiteTuning &)> onSite;
  /// The graph's profiles, kept by the caller across runs on the same
  /// graph (null: the run makes its own).
  graph::ProfileCache *profiles = nullptr;
};

/// Tunes every tunable site of `module` for graph `g`: the database's entry
/// if there is one, else profile, enumerate and rank (each feature-row size
/// profiled once), visit the leaders, choose. Sites without any legal
/// schedule are left out.
std::vector<SiteTuning> tuneModule(const TunableModule &module,
                                   const graph::CsrGraph &g,
                                   const TuningOptions &options);

/// Tunes every tunable segmented matmul of `module` for the segment
/// offsets `seg` (num_types + 1 of them) as tuneModule does for graph ops:
/// the database's entry for the segments' statistics (segmentTuningKey) if
/// there is one, else the model's ranking of the pruned tile_routed
/// schedules (rankedSegmentCandidates; the written math, if any, bounds
/// the arithmetic), the leaders visited in segmentMeasurementOrder, and
/// the choice. Empty when the offsets are malformed (`error` receives why).
std::vector<SiteTuning> tuneSegmentSites(const TunableModule &module,
                                         const std::vector<int64_t> &seg,
                                         const TuningOptions &options,
                                         Status *error = nullptr);

/// The chosen schedules of `tuned`, by entry name.
std::map<std::string, Schedule> choices(const std::vector<SiteTuning> &tuned);

/// The tuning database's key for `site` on a graph of profile `profile`.
TuningKey tuningKey(const TunableSite &site, const graph::GraphProfile &profile,
                    const GpuModel &gpu);

} // namespace gnnc::tuning

#endif // GNNC_TUNING_TUNER_H
