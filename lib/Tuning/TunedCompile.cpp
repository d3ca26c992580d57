//===- TunedCompile.cpp - Compile .gnn text tuned for a graph -------------===//
#include "gnnc/Tuning/TunedCompile.h"
#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Tuning/GnnRewrite.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/Tuning/SddmmModel.h"
#include "gnnc/Tuning/TuningDb.h"

#include "gnnc/graph/Analysis.h"
#include "gnnc/runtime/Driver.h"

using namespace gnnc;
using namespace gnnc::tuning;

Expected<CompiledModule> gnnc::tuning::compileForGraph(
    const std::string &text, const std::string &bufferName,
    const graph::CsrGraph &g, const TunedCompileOptions &options,
    TuningChoices *choices) {
  auto sites = findSites(text, bufferName);
  if (!sites)
    return sites.status();

  std::string arch = options.arch;
  std::optional<rt::Device> device;
  if (arch.empty()) {
    arch = "sm_90";
    if (rt::gpuAvailable()) {
      auto opened = rt::Device::open();
      if (opened) {
        arch = opened->archString();
        device = opened.take();
      }
    }
  }
  Expected<GpuModel> gpu =
      device ? Expected<GpuModel>(fromDevice(*device)) : loadGpuModel(arch);
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

  std::map<std::string, Schedule> chosen;
  std::map<int64_t, graph::GraphProfile> profiles; // by feature-row bytes
  for (const TunableSite &site : *sites) {
    if (!site.tunable || !site.currentSchedule.empty())
      continue;
    graph::AnalysisOptions analysis = profileOptionsFor(*gpu, site.problem);
    auto found = profiles.find(analysis.featureBytesPerRow);
    if (found == profiles.end())
      found = profiles
                  .emplace(analysis.featureBytesPerRow,
                           graph::analyzeGraph(g, analysis))
                  .first;
    const graph::GraphProfile &profile = found->second;
    if (db) {
      TuningKey key{profile.fingerprintHex,
                    tuningOpName(site.problem),
                    elementTypeName(site.problem.type),
                    site.problem.width,
                    site.problem.edgeValues,
                    gpu->arch};
      // (An entry for unpadded rows of this width may not suit padded ones.)
      std::optional<TuningEntry> entry = db->lookup(key);
      if (entry && isLegal(site.problem, entry->schedule)) {
        chosen[site.entryName] = entry->schedule;
        if (choices)
          (*choices)[site.entryName] =
              entry->schedule.shortText() + " (database)";
        continue;
      }
    }
    std::vector<Candidate> ranked = rankSchedules(
        *gpu, profile, site.problem, enumerateSchedules(site.problem));
    if (ranked.empty())
      continue; // the default schedule applies
    const Candidate &best = ranked[chooseCandidate(ranked)];
    chosen[site.entryName] = best.schedule;
    if (choices)
      (*choices)[site.entryName] = best.schedule.shortText() + " (cost model)";
  }

  if (chosen.empty())
    return compileGnn(text, bufferName);
  auto tuned = applySchedules(text, bufferName, chosen);
  if (!tuned)
    return tuned.status();
  return compileGnn(*tuned, bufferName);
}
