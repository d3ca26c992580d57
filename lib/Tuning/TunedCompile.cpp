//===- TunedCompile.cpp - Compile .gnn text tuned for a graph -------------===//
#include "gnnc/Tuning/TunedCompile.h"
#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Tuning/BatchedModel.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/Tuning/Tuner.h"
#include "gnnc/Tuning/TuningDb.h"

#include "gnnc/runtime/Driver.h"

using namespace gnnc;
using namespace gnnc::tuning;

namespace {

/// The GPU the schedules are for: the one named, else the one present.
Expected<GpuModel> tuningGpu(const TunedCompileOptions &options,
                             const char *caller) {
  Expected<GpuModel> gpu = Status::error("unset");
  if (!options.arch.empty()) {
    gpu = loadGpuModel(options.arch);
  } else if (rt::gpuAvailable()) {
    Expected<rt::Device> device = rt::Device::open();
    if (!device)
      return device.status().withContext(std::string(caller) +
                                         ": opening the GPU to tune for");
    gpu = fromDevice(*device);
  } else {
    return Status::error(std::string(caller) +
                         ": no GPU here to tune for; name its architecture "
                         "(TunedCompileOptions::arch, e.g. \"sm_90\")");
  }
  return gpu;
}

/// The tuning database the options name, if it is to be read (an unreadable
/// one is none).
std::optional<TuningDb> tuningDatabase(const TunedCompileOptions &options) {
  if (!options.useDatabase)
    return std::nullopt;
  auto loaded =
      TuningDb::load(options.databasePath.empty() ? defaultDatabasePath()
                                                  : options.databasePath);
  if (!loaded)
    return std::nullopt;
  return loaded.take();
}

/// Where each of `tuned`'s choices came from, into `choices`.
void recordChoices(const std::vector<SiteTuning> &tuned, const GpuModel &gpu,
                   TuningChoices *choices) {
  if (!choices)
    return;
  choices->arch = gpu.arch;
  for (const SiteTuning &t : tuned)
    choices->schedules[t.site->entryName] = {
        t.choice, t.source == ChoiceSource::Database   ? "database"
                  : t.source == ChoiceSource::Measured ? "measured"
                                                       : "cost model"};
}

/// The tuning options both compile entries share, into `tuning`: the GPU
/// of `options`, its database (held in `db`, which must outlive `tuning`)
/// taken first, and with a runtime and measureTopK the leaders measured by
/// `measure(kernel)` (unchecked runs: the candidates passed their plans).
template <typename Measure>
Expected<GpuModel> prepareTuning(const TunedCompileOptions &options,
                                 const char *caller,
                                 std::optional<TuningDb> &db,
                                 TuningOptions &tuning, Measure measure) {
  Expected<GpuModel> gpu = tuningGpu(options, caller);
  if (!gpu)
    return gpu.status();
  db = tuningDatabase(options);
  tuning.gpu = *gpu;
  tuning.database = db ? &*db : nullptr;
  tuning.takeFromDatabase = true;
  if (options.runtime && options.measureTopK > 0) {
    tuning.topK = options.measureTopK;
    tuning.visitMeasures = true;
    tuning.visit = [&options, measure](const TunableSite &,
                                       const rt::KernelSpec &kernel) {
      MeasureOptions how;
      how.check = false;
      return measure(*options.runtime, kernel, how);
    };
  }
  return gpu;
}

} // namespace

namespace {

/// What tuning a module for a graph found, and for which GPU.
struct GraphTuning {
  GpuModel gpu;
  std::vector<SiteTuning> tuned;
};

/// compileForGraph's tuning of `module` for `g` (`caller` names the entry
/// in errors), its choices recorded into `choices`.
Expected<GraphTuning> tuneForGraph(const TunableModule &module,
                                   const graph::CsrGraph &g,
                                   const TunedCompileOptions &options,
                                   const char *caller, TuningChoices *choices) {
  std::optional<TuningDb> db;
  TuningOptions tuning;
  // The candidates share the graph and the random inputs on the device
  // (made on the first measurement, released with `tuning`).
  std::shared_ptr<MeasureInputs> inputs = makeMeasureInputs(g);
  Expected<GpuModel> gpu = prepareTuning(
      options, caller, db, tuning,
      [&g, inputs](rt::Runtime &runtime, const rt::KernelSpec &kernel,
                   const MeasureOptions &how) {
        MeasureOptions shared = how;
        shared.inputs = inputs;
        return measureFor(runtime, kernel, g, shared);
      });
  if (!gpu)
    return gpu.status();
  // Every strategy's leader is timed, not only the model's top-k.
  tuning.visitEveryStrategy = tuning.visitMeasures;
  tuning.profiles = options.profiles;
  GraphTuning result{*gpu, tuneModule(module, g, tuning)};
  recordChoices(result.tuned, result.gpu, choices);
  return result;
}

} // namespace

Expected<CompiledModule> gnnc::tuning::compileForGraph(
    const std::string &text, const std::string &bufferName,
    const graph::CsrGraph &g, const TunedCompileOptions &options,
    TuningChoices *choices) {
  Expected<TunableModule> module = TunableModule::parse(text, bufferName);
  if (!module)
    return module.status();
  Expected<GraphTuning> tuning =
      tuneForGraph(*module, g, options, "compileForGraph", choices);
  if (!tuning)
    return tuning.status();
  return module->compile(tuning::choices(tuning->tuned));
}

Expected<CompiledModule> gnnc::tuning::compileForBatch(
    const std::string &text, const std::string &bufferName,
    const graph::BatchedGraph &batch, const TunedCompileOptions &options,
    TuningChoices *choices) {
  if (Status valid = batch.validate(); !valid)
    return valid.withContext("compileForBatch");
  Expected<TunableModule> module = TunableModule::parse(text, bufferName);
  if (!module)
    return module.status();
  Expected<GraphTuning> tuning =
      tuneForGraph(*module, batch.graph, options, "compileForBatch", choices);
  if (!tuning)
    return tuning.status();
  const GpuModel &gpu = tuning->gpu;
  const std::vector<SiteTuning> &tuned = tuning->tuned;
  std::map<std::string, Schedule> chosen = tuning::choices(tuned);
  for (const SiteTuning &t : tuned) {
    const OpDesc &op = t.site->op;
    if (op.kind != OpKind::Spmm || !op.batchedGraph ||
        t.source == ChoiceSource::Database || t.ranked.empty())
      continue;
    const Candidate &general = t.ranked[t.choiceIndex];
    Expected<BatchedChoice> batched = chooseBatchedSchedule(gpu, batch, op);
    if (!batched)
      continue;
    const std::string &entry = t.site->entryName;
    const Schedule applied = TunableModule::applied(*t.site, batched->schedule);
    double generalSeconds = general.prediction.seconds;
    double batchedSeconds = batched->prediction.seconds;
    bool measured = false;
    if (t.source == ChoiceSource::Measured && general.measuredSeconds &&
        options.runtime) {
      // The general choice was timed: time the batched one the same way.
      Expected<rt::KernelSpec> kernel = module->compileKernel(entry, applied);
      if (!kernel)
        continue;
      MeasureOptions how;
      how.check = false;
      Expected<double> seconds =
          measureSchedule(*options.runtime, *kernel, batch, how);
      if (!seconds)
        continue;
      generalSeconds = *general.measuredSeconds;
      batchedSeconds = *seconds;
      measured = true;
    }
    if (choices) {
      choices->schedules[entry].generalSeconds = generalSeconds;
      choices->schedules[entry].batchedSeconds = batchedSeconds;
    }
    // A tie goes to batched: both predictions are then the compulsory
    // bytes over the bandwidth, which the batched kernel reads once by
    // construction and the general one only while the L2 keeps every
    // graph's rows (on an H200, batched was faster in 5 of the 7 ties of
    // 30 batched cases, by up to 2.3x, and 6-8% slower in 2).
    if (batchedSeconds <= generalSeconds) {
      chosen[entry] = applied;
      if (choices) {
        choices->schedules[entry].schedule = applied;
        choices->schedules[entry].source =
            measured ? "measured (batched)" : "cost model (batched)";
      }
    }
  }
  return module->compile(chosen);
}

Expected<CompiledModule> gnnc::tuning::compileForSegments(
    const std::string &text, const std::string &bufferName,
    const std::vector<int64_t> &seg, const TunedCompileOptions &options,
    TuningChoices *choices) {
  Expected<TunableModule> module = TunableModule::parse(text, bufferName);
  if (!module)
    return module.status();
  std::optional<TuningDb> db;
  TuningOptions tuning;
  Expected<GpuModel> gpu =
      prepareTuning(options, "compileForSegments", db, tuning,
                    [&seg](rt::Runtime &runtime, const rt::KernelSpec &kernel,
                           const MeasureOptions &how) {
                      return measureSegmentSchedule(runtime, kernel, seg, how);
                    });
  if (!gpu)
    return gpu.status();
  Status error = Status::ok();
  std::vector<SiteTuning> tuned =
      tuneSegmentSites(*module, seg, tuning, &error);
  if (!error)
    return error.withContext("compileForSegments");
  recordChoices(tuned, *gpu, choices);
  return module->compile(tuning::choices(tuned));
}
