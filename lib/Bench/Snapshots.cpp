//===- Snapshots.cpp - gnn-bench's cases on snapshot groups ---------------===//
#include "gnnc/Bench/Snapshots.h"

#include "gnnc/Bench/Batched.h"
#include "gnnc/Bench/Json.h"
#include "gnnc/Bench/KernelRuns.h"
#include "gnnc/Bench/Kernels.h"
#include "gnnc/Bench/Problems.h"
#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/Limits.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/Tuning/SnapshotGroups.h"
#include "gnnc/graph/Batch.h"
#include "gnnc/ops/Snapshots.h"
#include "gnnc/reference/Spmm.h"

#include <cstdio>
#include <cstdlib>
#include <optional>

using namespace gnnc;
using namespace gnnc::bench;
using json = nlohmann::json;

Expected<graph::SnapshotSeries>
gnnc::bench::loadSnapshotSeries(const std::string &name,
                                const std::string &datasets, uint64_t seed) {
  if (name.rfind("rmat", 0) == 0) {
    const size_t c = name.find('c');
    char *end = nullptr;
    const std::string scale =
        name.substr(4, c == std::string::npos ? std::string::npos : c - 4);
    long long s = std::strtoll(scale.c_str(), &end, 10);
    long long churn = 10;
    bool ok = !scale.empty() && *end == '\0' && s >= 1 && s <= 26;
    if (ok && c != std::string::npos) {
      const std::string digits = name.substr(c + 1);
      churn = std::strtoll(digits.c_str(), &end, 10);
      ok = !digits.empty() && *end == '\0' && churn >= 0 && churn <= 100;
    }
    if (!ok)
      return Status::error("series '" + name +
                           "': expected rmat<scale 1-26>c<churn percent>, "
                           "e.g. rmat18c10");
    graph::EvolvingRmatOptions o;
    o.scale = static_cast<int>(s);
    o.snapshots = 8;
    o.churn = static_cast<double>(churn) / 100.0;
    o.seed = seed;
    Expected<graph::SnapshotSeries> series = graph::generateEvolvingRmat(o);
    if (series)
      series->name = name;
    return series;
  }
  Expected<graph::SnapshotSeries> series =
      graph::readSnapshotSeries(datasets + "/" + name + ".npz");
  if (series)
    series->name = name;
  return series;
}

namespace {

const int kSliceSizes[] = {8, 16, 32, 64, 128};

std::string moduleText(ElementType type, int64_t snapshots, int64_t width,
                       const std::vector<std::string> &general) {
  const std::string t = elementTypeName(type);
  const std::string flat = "tensor<?x" + std::to_string(width) + "x" + t + ">";
  const std::string grouped = "tensor<?x" + std::to_string(snapshots) + "x" +
                              std::to_string(width) + "x" + t + ">";
  std::string text = "gnn.module @sb {\n";
  for (size_t i = 0; i < general.size(); ++i)
    text +=
        spmmKernelText("general" + std::to_string(i), "csr", flat, general[i]);
  for (int slice : kSliceSizes)
    text += spmmKernelText("sliced" + std::to_string(slice), "snapshot_csr",
                           grouped,
                           "#gnn.schedule<strategy = sliced, slice_size = " +
                               std::to_string(slice) + ">");
  return text + "}\n";
}

} // namespace

json gnnc::bench::runSnapshotCase(Bench &bench, CudaLibraries *libraries,
                                  const std::string &name,
                                  const graph::SnapshotSeries &series,
                                  int64_t groupSize, ElementType type,
                                  int64_t width, uint64_t seed, int &failures) {
  json record = {{"series", name},
                 {"nodes", series.numNodes},
                 {"snapshots_in_series", series.size()},
                 {"group", groupSize},
                 {"type", elementTypeName(type)},
                 {"width", width}};
  auto error = [&](const std::string &what, const Status &status) {
    record["error"] = what + ": " + status.message();
    std::printf("error    %s S%lld %s w%lld: %s: %s\n", name.c_str(),
                (long long)groupSize, elementTypeName(type), (long long)width,
                what.c_str(), status.message().c_str());
    ++failures;
    return record;
  };
  if (series.size() < groupSize)
    return error("grouping",
                 Status::error("the series has only " +
                               std::to_string(series.size()) + " snapshots"));
  Expected<graph::SnapshotGroup> group =
      graph::overlapGroup(series, 0, groupSize);
  if (!group)
    return error("grouping", group.status());
  group->overlap.name = name;
  record["overlap_rate"] = group->overlapRate();
  record["shared_edges"] = group->overlap.nnz();
  record["snapshot_edges"] = group->snapshotEdges();
  record["stored_edges"] = group->storedEdges();

  std::vector<std::string> general = generalBatchSchedules(type, width);
  Expected<CompiledModule> compiled =
      compileGnn(moduleText(type, groupSize, width, general), "snapshots.gnn");
  if (!compiled)
    return error("compiling", compiled.status());

  // gnnc's multi-snapshot aggregation: each slice size, checked first.
  double multiMs = 0;
  std::string multiSchedule;
  int64_t multiSliceSize = 0;
  {
    Expected<ops::DeviceSnapshotGroup> dg =
        ops::uploadSnapshotGroup(*group, true, false);
    if (!dg)
      return error("uploading the group", dg.status());
    const size_t count =
        static_cast<size_t>(group->numNodes * groupSize * width);
    Expected<rt::DeviceBuffer> x = ops::uploadTensor(
        ref::randomFeatures(static_cast<int64_t>(count), seed), type);
    Expected<rt::DeviceBuffer> y = ops::allocatePoisoned(count, type);
    if (!x || !y)
      return error("allocating", x ? y.status() : x.status());
    json runs = json::array();
    std::optional<rt::LoadedKernel> bestKernel;
    for (const rt::KernelSpec &spec : compiled->kernels) {
      if (spec.name.find("sb_sliced") != 0)
        continue;
      json k = {{"schedule", spec.schedule.str()}};
      auto kernel = bench.runtime().load(spec);
      Expected<ops::KernelCheck> check =
          kernel ? ops::checkSnapshotSpmm(bench.runtime(), *kernel, *group,
                                          seed + 17)
                 : Expected<ops::KernelCheck>(kernel.status());
      if (!check || !check->ok) {
        ++failures;
        k["status"] = check ? "wrong" : "error";
        k["report"] = check ? check->report : check.message();
        std::printf("%s    %s: %s\n", k["status"].get<std::string>().c_str(),
                    spec.name.c_str(), k["report"].get<std::string>().c_str());
        runs.push_back(k);
        continue;
      }
      auto timing = bench.time([&]() {
        return ops::launchSnapshotSpmm(bench.runtime(), *kernel, *dg, *x, *y,
                                       nullptr, /*synchronize=*/false);
      });
      if (!timing) {
        ++failures;
        k["status"] = "error";
        k["report"] = timing.message();
        runs.push_back(k);
        continue;
      }
      k["status"] = "ok";
      k["time_ms"] = toJson(*timing);
      if (multiMs == 0 || timing->medianMs < multiMs) {
        multiMs = timing->medianMs;
        multiSchedule = spec.schedule.str();
        multiSliceSize = spec.schedule.sliceSize;
        bestKernel = *kernel;
      }
      runs.push_back(k);
    }
    record["multi_snapshot"] = runs;
    // The floor of one launch, timed the same way: the fastest kernel on a
    // group of one node without edges (one block, one chain of loads).
    if (bestKernel) {
      graph::SnapshotGroup empty;
      empty.numNodes = 1;
      empty.overlap.numRows = empty.overlap.numCols = 1;
      empty.overlap.rowPtr = {0, 0};
      empty.exclusive.assign(groupSize, empty.overlap);
      Expected<ops::DeviceSnapshotGroup> de =
          ops::uploadSnapshotGroup(empty, true, false);
      Expected<rt::DeviceBuffer> ex =
          ops::allocatePoisoned(groupSize * width, type);
      Expected<rt::DeviceBuffer> ey =
          ops::allocatePoisoned(groupSize * width, type);
      if (de && ex && ey) {
        auto floor = bench.time([&]() {
          return ops::launchSnapshotSpmm(bench.runtime(), *bestKernel, *de, *ex,
                                         *ey, nullptr,
                                         /*synchronize=*/false);
        });
        if (floor)
          record["launch_floor_ms"] = floor->medianMs;
      }
    }
    // What moves to the GPU for the group's structure: the overlap once and
    // the exclusive parts (the ideal), plus the work items of the fastest
    // slice size where they were built on the host (none where built on
    // the GPU, launchSnapshotSpmm's default); against every snapshot's CSR
    // sent on its own. The items' bytes on the GPU are recorded apart, and
    // the count and scan buffers a GPU build keeps beside them.
    int64_t naive = 0;
    for (int64_t s = 0; s < groupSize; ++s)
      naive += (group->numNodes + 1) * 8 + group->snapshot(s).nnz() * 4;
    int64_t itemsSent = 0, itemsOnGpu = 0, buildScratch = 0;
    std::string builtBy = "none";
    if (auto best = dg->slices.find(multiSliceSize); best != dg->slices.end()) {
      itemsSent = best->second.uploadedBytes;
      itemsOnGpu = best->second.deviceBytes();
      buildScratch = best->second.scratchBytes();
      builtBy = best->second.builtBy == ops::SliceBuilder::Gpu ? "gpu" : "host";
    }
    const int64_t sent = dg->uploadedBytes + itemsSent;
    record["structure_bytes"] = {
        {"ideal", dg->uploadedBytes},
        {"sent", sent},
        {"work_items_sent", itemsSent},
        {"work_items_on_gpu", itemsOnGpu},
        {"work_items_build_scratch_on_gpu", buildScratch},
        {"work_items_built_on", builtBy},
        {"per_snapshot_csr", naive},
        {"sent_vs_ideal", double(sent) / double(dg->uploadedBytes)},
        {"work_items_on_gpu_vs_ideal",
         double(itemsOnGpu) / double(dg->uploadedBytes)},
        {"sent_vs_per_snapshot", double(sent) / double(naive)}};
  }

  // gnnc on each snapshot alone: the best general schedule per snapshot.
  double perSnapshotMs = 0;
  json perSnapshot = json::array();
  for (int64_t s = 0; s < groupSize; ++s) {
    graph::CsrGraph g = group->snapshot(s);
    g.name = name + "#" + std::to_string(s);
    Expected<DeviceGraphs> graphs = uploadGraphs(g, true);
    if (!graphs)
      return error("uploading snapshot " + std::to_string(s), graphs.status());
    Expected<SpmmProblem> problem =
        makeSpmmProblem(*graphs, type, width, false, seed + s);
    if (!problem)
      return error("making the problem", problem.status());
    double best = 0;
    std::string bestSchedule;
    for (const rt::KernelSpec &spec : compiled->kernels) {
      if (spec.name.find("sb_general") != 0)
        continue;
      KernelResult r =
          runGnncKernel(bench, spec, *problem, CheckMode::Shared, "general");
      if (r.status != "ok") {
        ++failures;
        std::printf("%s    %s on %s: %s\n", r.status.c_str(), spec.name.c_str(),
                    g.name.c_str(), r.report.c_str());
      }
      double ms = passedMedianMs(r);
      if (ms > 0 && (best == 0 || ms < best)) {
        best = ms;
        bestSchedule = spec.schedule.str();
      }
    }
    perSnapshot.push_back({{"snapshot", s},
                           {"nnz", g.nnz()},
                           {"best_ms", best},
                           {"schedule", bestSchedule}});
    perSnapshotMs += best;
  }
  record["per_snapshot"] = perSnapshot;

  // cuSPARSE on the window's block-diagonal graph, one call.
  double cusparseMs = 0;
  std::string cusparseAlg;
  if (libraries) {
    // The group's snapshots as one block-diagonal graph (a batch).
    std::vector<graph::CsrGraph> snapshots;
    for (int64_t s = 0; s < groupSize; ++s)
      snapshots.push_back(group->snapshot(s));
    Expected<graph::BatchedGraph> diag = graph::collate(snapshots);
    if (!diag)
      return error("collating the snapshots", diag.status());
    diag->graph.name = name + " (block-diagonal)";
    Expected<DeviceGraphs> graphs = uploadGraphs(diag->graph, true);
    if (!graphs)
      return error("uploading the block-diagonal graph", graphs.status());
    Expected<SpmmProblem> problem =
        makeSpmmProblem(*graphs, type, width, false, seed + 99);
    if (!problem)
      return error("making the block-diagonal problem", problem.status());
    LibraryRuns runs = recordLibraryRuns(libraries->spmm(bench, *problem));
    record["cusparse_blockdiag"] = runs.runs;
    cusparseMs = runs.fastestMs;
    cusparseAlg = runs.fastestAlgorithm;
  }

  json best = {{"multi_snapshot_ms", multiMs},
               {"launch_floor_ms", record.value("launch_floor_ms", 0.0)},
               {"multi_snapshot_schedule", multiSchedule},
               {"per_snapshot_sum_ms", perSnapshotMs},
               {"cusparse_blockdiag_ms", cusparseMs},
               {"cusparse_algorithm", cusparseAlg}};
  if (multiMs > 0 && perSnapshotMs > 0)
    best["multisnap_vs_gnnc_per_snapshot"] = perSnapshotMs / multiMs;
  if (multiMs > 0 && cusparseMs > 0)
    best["multisnap_vs_cusparse_blockdiag"] = cusparseMs / multiMs;
  record["best"] = best;
  std::printf("snapshot %-24s S%-2lld %-4s w%-4lld overlap %4.2f  multi %8.4f "
              "ms  per-snapshot %8.4f ms  cuSPARSE %8.4f ms  %5.2fx %5.2fx  "
              "floor %7.4f ms  %s\n",
              name.c_str(), (long long)groupSize, elementTypeName(type),
              (long long)width, group->overlapRate(), multiMs, perSnapshotMs,
              cusparseMs, multiMs > 0 ? perSnapshotMs / multiMs : 0.0,
              multiMs > 0 ? cusparseMs / multiMs : 0.0,
              record.value("launch_floor_ms", 0.0), multiSchedule.c_str());
  std::fflush(stdout);
  return record;
}

json gnnc::bench::runTunedSnapshotCase(Bench &bench, CudaLibraries *libraries,
                                       const std::string &name,
                                       const graph::SnapshotSeries &series,
                                       ElementType type, int64_t width,
                                       uint64_t seed, int &failures) {
  tuning::SnapshotGroupOptions options;
  options.width = width;
  options.type = type;
  options.seed = seed;
  Expected<tuning::SnapshotGroupChoice> choice =
      tuning::chooseSnapshotGroup(bench.runtime(), series, options);
  if (!choice) {
    ++failures;
    std::printf("error    %s %s w%lld: %s\n", name.c_str(),
                elementTypeName(type), (long long)width,
                choice.message().c_str());
    return {{"series", name},
            {"type", elementTypeName(type)},
            {"width", width},
            {"tuned", true},
            {"error", choice.message()}};
  }
  json candidates = json::array();
  for (const tuning::SnapshotGroupCandidate &c : choice->candidates) {
    candidates.push_back(
        {{"group", c.snapshots},
         {"overlap_rate", c.overlapRate},
         {"structure_bytes", c.structureBytes},
         {"feature_bytes", c.featureBytes},
         {"resident_structure_bytes", c.residentStructureBytes},
         {"device_bytes", c.deviceBytes()},
         {"feature_copy_ms", c.featureCopyMs},
         {"structure_copy_ms", c.structureCopyMs},
         {"aggregate_ms", c.aggregateMs},
         {"groups", c.groups},
         {"cached_groups", c.cachedGroups},
         {"copy_ms", c.copyMs},
         {"ms_per_snapshot", c.msPerSnapshot},
         {"fits", c.fits}});
    std::printf("group    %s %s w%lld: S%lld  copies %.4f + %.4f ms  "
                "aggregate %.4f ms  %.4f ms per snapshot%s\n",
                name.c_str(), elementTypeName(type), (long long)width,
                (long long)c.snapshots, c.featureCopyMs, c.structureCopyMs,
                c.aggregateMs, c.msPerSnapshot,
                c.fits ? "" : "  (does not fit)");
  }
  json chosen = {{"candidates", candidates},
                 {"group", choice->snapshots},
                 {"groups", choice->groups},
                 {"cached_groups", choice->cachedGroups},
                 {"memory_budget", choice->memoryBudget},
                 {"host_to_device_gbps", choice->hostToDeviceGBps}};
  std::printf("chosen   %s %s w%lld: S%lld, %lld of %lld groups cached\n",
              name.c_str(), elementTypeName(type), (long long)width,
              (long long)choice->snapshots, (long long)choice->cachedGroups,
              (long long)choice->groups);
  std::fflush(stdout);
  if (choice->snapshots == 0)
    return {{"series", name},
            {"type", elementTypeName(type)},
            {"width", width},
            {"tuned", true},
            {"group_choice", chosen}};
  json record = runSnapshotCase(bench, libraries, name, series,
                                choice->snapshots, type, width, seed, failures);
  record["tuned"] = true;
  record["group_choice"] = chosen;
  return record;
}
