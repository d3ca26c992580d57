//===- TunedCompile.cpp - Compile .gnn text tuned for a graph -------------===//
#include "gnnc/Tuning/TunedCompile.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/Tuning/Tuner.h"
#include "gnnc/Tuning/TuningDb.h"

#include "gnnc/runtime/Driver.h"

using namespace gnnc;
using namespace gnnc::tuning;

Expected<CompiledModule> gnnc::tuning::compileForGraph(
    const std::string &text, const std::string &bufferName,
    const graph::CsrGraph &g, const TunedCompileOptions &options,
    TuningChoices *choices) {
  Expected<TunableModule> module = TunableModule::parse(text, bufferName);
  if (!module)
    return module.status();

  // The GPU the schedules are for: the one named, else the one present.
  Expected<GpuModel> gpu = Status::error("unset");
  if (!options.arch.empty()) {
    gpu = loadGpuModel(options.arch);
  } else if (rt::gpuAvailable()) {
    Expected<rt::Device> device = rt::Device::open();
    if (!device)
      return device.status().withContext(
          "compileForGraph: opening the GPU to tune for");
    gpu = fromDevice(*device);
  } else {
    return Status::error(
        "compileForGraph: no GPU here to tune for; name its architecture "
        "(TunedCompileOptions::arch, e.g. \"sm_90\")");
  }
  if (!gpu)
    return gpu.status();

  std::optional<TuningDb> db;
  if (options.useDatabase) {
    auto loaded =
        TuningDb::load(options.databasePath.empty() ? defaultDatabasePath()
                                                    : options.databasePath);
    if (loaded)
      db = loaded.take();
  }
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
  if (choices) {
    choices->arch = gpu->arch;
    for (const SiteTuning &t : tuned)
      choices->schedules[t.site->entryName] = {
          t.choice, t.source == ChoiceSource::Database   ? "database"
                    : t.source == ChoiceSource::Measured ? "measured"
                                                         : "cost model"};
  }
  return module->compile(tuning::choices(tuned));
}
