//===- TunedCompile.cpp - Compile .gnn text tuned for a graph -------------===//
#include "gnnc/Tuning/TunedCompile.h"
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

} // namespace

Expected<CompiledModule> gnnc::tuning::compileForGraph(
    const std::string &text, const std::string &bufferName,
    const graph::CsrGraph &g, const TunedCompileOptions &options,
    TuningChoices *choices) {
  Expected<TunableModule> module = TunableModule::parse(text, bufferName);
  if (!module)
    return module.status();
  Expected<GpuModel> gpu = tuningGpu(options, "compileForGraph");
  if (!gpu)
    return gpu.status();
  std::optional<TuningDb> db = tuningDatabase(options);
  TuningOptions tuning;
  tuning.gpu = *gpu;
  tuning.database = db ? &*db : nullptr;
  tuning.takeFromDatabase = true;
  if (options.runtime && options.measureTopK > 0) {
    tuning.topK = options.measureTopK;
    tuning.visitEveryStrategy = true;
    tuning.visitMeasures = true;
    MeasureOptions measure;
    measure.check = false;
    tuning.visit = [&](const TunableSite &, const rt::KernelSpec &kernel) {
      return measureFor(*options.runtime, kernel, g, measure);
    };
  }
  std::vector<SiteTuning> tuned = tuneModule(*module, g, tuning);
  recordChoices(tuned, *gpu, choices);
  return module->compile(tuning::choices(tuned));
}

Expected<CompiledModule> gnnc::tuning::compileForSegments(
    const std::string &text, const std::string &bufferName,
    const std::vector<int64_t> &seg, const TunedCompileOptions &options,
    TuningChoices *choices) {
  Expected<TunableModule> module = TunableModule::parse(text, bufferName);
  if (!module)
    return module.status();
  Expected<GpuModel> gpu = tuningGpu(options, "compileForSegments");
  if (!gpu)
    return gpu.status();
  std::optional<TuningDb> db = tuningDatabase(options);
  TuningOptions tuning;
  tuning.gpu = *gpu;
  tuning.database = db ? &*db : nullptr;
  tuning.takeFromDatabase = true;
  if (options.runtime && options.measureTopK > 0) {
    tuning.topK = options.measureTopK;
    tuning.visitMeasures = true;
    MeasureOptions measure;
    measure.check = false;
    tuning.visit = [&](const TunableSite &, const rt::KernelSpec &kernel) {
      return measureSegmentSchedule(*options.runtime, kernel, seg, measure);
    };
  }
  Status error = Status::ok();
  std::vector<SiteTuning> tuned =
      tuneSegmentSites(*module, seg, tuning, &error);
  if (!error)
    return error.withContext("compileForSegments");
  recordChoices(tuned, *gpu, choices);
  return module->compile(tuning::choices(tuned));
}
