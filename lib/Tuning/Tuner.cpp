//===- Tuner.cpp - The tuning loop, on clones of a parsed module ----------===//
#include "gnnc/Tuning/Tuner.h"
#include "gnnc/Transforms/Passes.h"

#include "gnnc/Dialect/Gnn/GnnOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <chrono>
#include <ctime>

using namespace mlir;
using namespace gnnc;
using namespace gnnc::tuning;

namespace {

/// Calls fn(entryName, op) for every scheduled op of `module`, in order.
template <typename Fn> void forEachScheduledOp(ModuleOp module, Fn fn) {
  for (auto gm : module.getOps<gnn::GnnModuleOp>())
    for (auto kernel : gm.getOps<gnn::KernelOp>()) {
      std::string entry = kernelEntryName(gm, kernel);
      kernel.walk([&](gnn::ScheduledOpInterface op) { fn(entry, op); });
    }
}

/// Why `site` cannot be tuned, or "" when it can.
std::string untunableReason(const TunableSite &site, gnn::KernelOp kernel) {
  // The segmented matmuls have one strategy, tile_routed.
  const bool segments = isSegmentMatmulKind(site.op.kind);
  if (!segments && !costModelFor(site.op.kind))
    return std::string("no cost model knows ") + opKindName(site.op.kind);
  if (site.written && !segments &&
      site.written->strategy != Strategy::VertexParallel &&
      site.written->strategy != Strategy::EdgeParallel &&
      site.written->strategy != Strategy::NeighborGroup)
    return std::string("the tuner does not choose strategy ") +
           strategyName(site.written->strategy);
  auto ops = kernel.getBody().front().without_terminator();
  if (std::distance(ops.begin(), ops.end()) != 1)
    return "the kernel holds more than one op";
  return "";
}

double cpuSeconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

} // namespace

Expected<TunableModule> TunableModule::parse(const std::string &text,
                                             const std::string &bufferName) {
  Expected<GnnModule> module = GnnModule::parse(text, bufferName);
  if (!module)
    return module.status();
  std::vector<TunableSite> sites;
  forEachScheduledOp(module->module(), [&](const std::string &entry,
                                           gnn::ScheduledOpInterface op) {
    TunableSite site;
    site.entryName = entry;
    site.op = op.describe();
    if (gnn::ScheduleAttr schedule = op.getScheduleAttr())
      site.written = schedule.getValue();
    site.note = untunableReason(site, op->getParentOfType<gnn::KernelOp>());
    site.tunable = site.note.empty();
    sites.push_back(site);
  });
  return TunableModule(module.take(), std::move(sites));
}

Schedule TunableModule::applied(const TunableSite &site, Schedule chosen) {
  if (site.op.kind == OpKind::Spmm && site.written) {
    chosen.discBatch = site.written->discBatch;
    chosen.accumulate = site.written->accumulate;
  }
  return chosen;
}

ModuleOp
TunableModule::withSchedules(const std::map<std::string, Schedule> &schedules,
                             const std::string *only) const {
  ModuleOp clone = module_.clone();
  forEachScheduledOp(clone, [&](const std::string &entry,
                                gnn::ScheduledOpInterface op) {
    auto it = schedules.find(entry);
    if (it != schedules.end())
      op.setScheduleAttr(gnn::ScheduleAttr::get(op->getContext(), it->second));
  });
  if (only) {
    SmallVector<gnn::KernelOp> others;
    for (auto gm : clone.getOps<gnn::GnnModuleOp>())
      for (auto kernel : gm.getOps<gnn::KernelOp>())
        if (kernelEntryName(gm, kernel) != *only)
          others.push_back(kernel);
    for (gnn::KernelOp kernel : others)
      kernel.erase();
  }
  return clone;
}

std::string
TunableModule::print(const std::map<std::string, Schedule> &schedules) const {
  OwningOpRef<ModuleOp> clone = withSchedules(schedules);
  return module_.print(*clone);
}

Expected<CompiledModule>
TunableModule::compile(const std::map<std::string, Schedule> &schedules) const {
  return module_.compile(withSchedules(schedules));
}

Expected<rt::KernelSpec>
TunableModule::compileKernel(const std::string &entryName,
                             const Schedule &schedule) const {
  Expected<CompiledModule> compiled =
      module_.compile(withSchedules({{entryName, schedule}}, &entryName));
  if (!compiled)
    return compiled.status();
  return findKernel(*compiled, entryName);
}

namespace {

/// Adds `result` to `tuned` and tells options.onSite.
void keep(SiteTuning &&result, const TuningOptions &options,
          std::vector<SiteTuning> &tuned) {
  tuned.push_back(std::move(result));
  if (options.onSite)
    options.onSite(tuned.back());
}

/// Hands the candidates `order` picks from result.ranked to options.visit
/// (each compiled with its schedule applied to the site; its time kept
/// when the visit measures), then chooses among them and keeps the site.
void visitAndChoose(const TunableModule &module, SiteTuning &&result,
                    const std::vector<size_t> &order,
                    const TuningOptions &options,
                    std::vector<SiteTuning> &tuned) {
  const TunableSite &site = *result.site;
  if (options.visit)
    for (size_t i : order) {
      Candidate &c = result.ranked[i];
      Expected<rt::KernelSpec> kernel = module.compileKernel(
          site.entryName, TunableModule::applied(site, c.schedule));
      Expected<double> seconds = kernel ? options.visit(site, *kernel)
                                        : Expected<double>(kernel.status());
      if (!seconds)
        c.note = seconds.message();
      else if (options.visitMeasures)
        c.measuredSeconds = *seconds;
    }
  result.choiceIndex = chooseCandidate(result.ranked);
  const Candidate &best = result.ranked[result.choiceIndex];
  result.choice = TunableModule::applied(site, best.schedule);
  result.source =
      best.measuredSeconds ? ChoiceSource::Measured : ChoiceSource::Model;
  keep(std::move(result), options, tuned);
}

} // namespace

TuningKey gnnc::tuning::tuningKey(const TunableSite &site,
                                  const graph::GraphProfile &profile,
                                  const GpuModel &gpu) {
  return {profile.fingerprintHex,
          tuningOpName(site.op),
          elementTypeName(site.op.type),
          site.op.width,
          site.op.edgeValues,
          gpu.arch};
}

std::vector<SiteTuning> gnnc::tuning::tuneModule(const TunableModule &module,
                                                 const graph::CsrGraph &g,
                                                 const TuningOptions &options) {
  std::vector<SiteTuning> tuned;
  // Profiles by feature-row bytes (the reuse window depends on them), the
  // caller's when it keeps them across runs.
  graph::ProfileCache own;
  graph::ProfileCache &profiles = options.profiles ? *options.profiles : own;
  for (const TunableSite &site : module.sites()) {
    if (!site.tunable || (site.written && !options.retuneWritten) ||
        isSegmentMatmulKind(site.op.kind))
      continue;
    SiteTuning result;
    result.site = &site;
    double cpu0 = cpuSeconds();
    auto wall0 = std::chrono::steady_clock::now();
    result.profile = profiles.get(g, profileOptionsFor(options.gpu, site.op));
    result.cpuProfileSeconds = cpuSeconds() - cpu0;
    if (options.database)
      result.previous = options.database->lookup(
          tuningKey(site, result.profile, options.gpu));
    // (An entry for unpadded rows of this width may not suit padded ones.)
    if (options.takeFromDatabase && result.previous) {
      Schedule entry = TunableModule::applied(site, result.previous->schedule);
      if (planKernel(site.op, entry)) {
        result.choice = entry;
        result.source = ChoiceSource::Database;
        keep(std::move(result), options, tuned);
        continue;
      }
    }
    result.ranked = rankSchedules(options.gpu, result.profile, site.op,
                                  enumerateSchedules(site.op));
    result.cpuSeconds = cpuSeconds() - cpu0;
    result.wallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0)
            .count();
    if (result.ranked.empty())
      continue;
    const std::vector<size_t> order = measurementOrder(
        result.ranked, options.topK, options.visitEveryStrategy);
    visitAndChoose(module, std::move(result), order, options, tuned);
  }
  return tuned;
}

std::vector<SiteTuning>
gnnc::tuning::tuneSegmentSites(const TunableModule &module,
                               const std::vector<int64_t> &seg,
                               const TuningOptions &options, Status *error) {
  std::vector<SiteTuning> tuned;
  Expected<SegmentStats> stats = segmentStats(seg);
  if (!stats) {
    if (error)
      *error = stats.status();
    return tuned;
  }
  for (const TunableSite &site : module.sites()) {
    if (!site.tunable || (site.written && !options.retuneWritten) ||
        !isSegmentMatmulKind(site.op.kind))
      continue;
    SiteTuning result;
    result.site = &site;
    result.segments = *stats;
    double cpu0 = cpuSeconds();
    auto wall0 = std::chrono::steady_clock::now();
    const MathMode math = segmentTuningMath(site.written);
    if (options.database)
      result.previous = options.database->lookup(
          segmentTuningKey(site.op, *stats, options.gpu, math));
    if (options.takeFromDatabase && result.previous &&
        (math == MathMode::Auto || result.previous->schedule.math == math) &&
        planKernel(site.op, result.previous->schedule)) {
      result.choice = result.previous->schedule;
      result.source = ChoiceSource::Database;
      keep(std::move(result), options, tuned);
      continue;
    }
    result.ranked = rankedSegmentCandidates(site.op, *stats, options.gpu, math);
    result.cpuSeconds = cpuSeconds() - cpu0;
    result.wallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0)
            .count();
    if (result.ranked.empty())
      continue;
    const std::vector<size_t> order =
        segmentMeasurementOrder(result.ranked, options.topK);
    visitAndChoose(module, std::move(result), order, options, tuned);
  }
  return tuned;
}

std::map<std::string, Schedule>
gnnc::tuning::choices(const std::vector<SiteTuning> &tuned) {
  std::map<std::string, Schedule> chosen;
  for (const SiteTuning &t : tuned)
    chosen[t.site->entryName] = t.choice;
  return chosen;
}
