//===- Batched.cpp - gnn-bench's cases on batches of small graphs ---------===//
#include "gnnc/Bench/Batched.h"

#include "gnnc/Bench/Bytes.h"
#include "gnnc/Bench/Json.h"
#include "gnnc/Bench/KernelRuns.h"
#include "gnnc/Bench/Kernels.h"
#include "gnnc/Bench/Problems.h"
#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/Tuning/BatchedModel.h"

#include <cmath>
#include <cstdio>

using namespace gnnc;
using namespace gnnc::bench;
using json = nlohmann::json;

Expected<graph::BatchedGraph>
gnnc::bench::loadBatch(const std::string &name, const std::string &datasets,
                       uint64_t seed) {
  auto count = [&](size_t prefix) -> Expected<int64_t> {
    const std::string digits = name.substr(prefix);
    char *end = nullptr;
    long long n = std::strtoll(digits.c_str(), &end, 10);
    if (digits.empty() || *end != '\0' || n < 1 || n > 10000000)
      return Status::error("batch '" + name +
                           "': expected a graph count after the prefix");
    return static_cast<int64_t>(n);
  };
  if (name.rfind("mol", 0) == 0 || name.rfind("prot", 0) == 0) {
    bool mol = name.rfind("mol", 0) == 0;
    Expected<int64_t> n = count(mol ? 3 : 4);
    if (!n)
      return n.status();
    graph::MoleculeBatchOptions o;
    o.numGraphs = *n;
    if (!mol)
      o = graph::proteinLikeOptions(*n);
    graph::BatchedGraph b = graph::generateMoleculeBatch(o, seed);
    b.graph.name = name;
    return b;
  }
  Expected<graph::BatchedGraph> b =
      graph::readTuBatch(datasets + "/" + name + ".npz");
  if (b)
    b->graph.name = name;
  return b;
}

namespace {

/// The schedule texts among `bodies` that the plans accept for `op`.
std::vector<std::string> legal(const OpDesc &op,
                               const std::vector<std::string> &bodies) {
  std::vector<std::string> out;
  for (const std::string &body : bodies) {
    Expected<Schedule> s = parseSchedule(body);
    if (s && planWithDefaults(op, *s))
      out.push_back("#gnn.schedule<" + body + ">");
  }
  return out;
}

} // namespace

std::vector<std::string> gnnc::bench::generalBatchSchedules(ElementType type,
                                                            int64_t width) {
  OpDesc op = spmmOp(type, width);
  return legal(op, {"", "threads_per_block = 128", "threads_per_block = 512",
                    "dim_workers = 8", "strategy = edge_parallel",
                    "strategy = neighbor_group"});
}

std::vector<std::string> gnnc::bench::batchedSchedules(ElementType type,
                                                       int64_t width) {
  OpDesc op = spmmOp(type, width);
  op.batchedGraph = true;
  std::vector<std::string> bodies;
  for (int tile : {32, 64, 128, 256})
    bodies.push_back("strategy = batched, tile_rows = " + std::to_string(tile));
  for (int tile : {64, 128})
    bodies.push_back("strategy = batched, tile_rows = " + std::to_string(tile) +
                     ", threads_per_block = 256");
  bodies.push_back("strategy = batched, tile_rows = 64, graphs_per_block = 1");
  return legal(op, bodies);
}

namespace {

std::string moduleText(ElementType type, int64_t width,
                       const std::vector<std::string> &general,
                       const std::vector<std::string> &batched) {
  const std::string feat =
      "tensor<?x" + std::to_string(width) + "x" + elementTypeName(type) + ">";
  std::string text = "gnn.module @bb {\n";
  for (size_t i = 0; i < general.size(); ++i)
    text +=
        spmmKernelText("general" + std::to_string(i), "csr", feat, general[i]);
  for (size_t i = 0; i < batched.size(); ++i)
    text += spmmKernelText("batched" + std::to_string(i), "batched_csr", feat,
                           batched[i]);
  return text + "}\n";
}

} // namespace

json gnnc::bench::runBatchedCase(Bench &bench, CudaLibraries *libraries,
                                 const std::string &name,
                                 const graph::BatchedGraph &batch,
                                 ElementType type, int64_t width,
                                 double copyGbs, uint64_t seed, int &failures) {
  json record = {{"batch", name},
                 {"graphs", batch.numGraphs()},
                 {"nodes", batch.graph.numRows},
                 {"nnz", batch.graph.nnz()},
                 {"max_nodes", batch.maxNodes()},
                 {"type", elementTypeName(type)},
                 {"width", width}};
  auto error = [&](const std::string &what, const Status &status) {
    record["error"] = what + ": " + status.message();
    std::printf("error    %s %s w%lld: %s: %s\n", name.c_str(),
                elementTypeName(type), (long long)width, what.c_str(),
                status.message().c_str());
    ++failures;
    return record;
  };
  std::vector<std::string> general = generalBatchSchedules(type, width);
  std::vector<std::string> batched = batchedSchedules(type, width);
  Expected<CompiledModule> compiled =
      compileGnn(moduleText(type, width, general, batched), "batched.gnn");
  if (!compiled)
    return error("compiling", compiled.status());
  Expected<DeviceGraphs> graphs = uploadGraphs(batch.graph, true);
  if (!graphs)
    return error("uploading", graphs.status());
  Expected<ops::DeviceGraph> withBatch = ops::uploadBatch(batch, true, false);
  if (!withBatch)
    return error("uploading the batch", withBatch.status());
  graphs->gnnc = withBatch.take();
  Expected<SpmmProblem> problem =
      makeSpmmProblem(*graphs, type, width, false, seed);
  if (!problem)
    return error("making the problem", problem.status());

  ProblemShape shape;
  shape.numRows = shape.numCols = batch.graph.numRows;
  shape.nnz = batch.graph.nnz();
  shape.width = width;
  shape.elementBytes = elementSize(type);
  const double compulsory = spmmBytes(shape).compulsory;
  // Everything is timed on the batch's own graph; gnnc's kernels read i64
  // row offsets (cuSPARSE reads i32 ones).
  record["compulsory_bytes"] = compulsory;
  auto fraction = [&](double ms) {
    return ms > 0 && copyGbs > 0 ? gigabytesPerSecond(compulsory, ms) / copyGbs
                                 : 0.0;
  };

  double cusparseMs = 0;
  std::string cusparseAlg;
  if (libraries) {
    LibraryRuns runs = recordLibraryRuns(libraries->spmm(bench, *problem));
    record["cusparse"] = runs.runs;
    cusparseMs = runs.fastestMs;
    cusparseAlg = runs.fastestAlgorithm;
  }

  auto runAll = [&](const std::string &prefix, double &bestMs,
                    std::string &bestSchedule) {
    json runs = json::array();
    for (const rt::KernelSpec &spec : compiled->kernels) {
      if (spec.name.find("bb_" + prefix) != 0)
        continue;
      KernelResult r =
          runGnncKernel(bench, spec, *problem, CheckMode::Shared, prefix);
      if (r.status != "ok") {
        ++failures;
        std::printf("%s    %s on %s %s w%lld: %s\n", r.status.c_str(),
                    spec.name.c_str(), name.c_str(), elementTypeName(type),
                    (long long)width, r.report.c_str());
      }
      double ms = passedMedianMs(r);
      json k = {{"schedule", spec.schedule.str()}, {"status", r.status}};
      if (ms > 0) {
        k["time_ms"] = toJson(*r.timing);
        k["copy_fraction"] = fraction(ms);
        if (bestMs == 0 || ms < bestMs) {
          bestMs = ms;
          bestSchedule = spec.schedule.str();
        }
      } else {
        k["report"] = r.report;
      }
      runs.push_back(k);
    }
    return runs;
  };
  double generalMs = 0, batchedMs = 0;
  std::string generalSchedule, batchedSchedule;
  record["general"] = runAll("general", generalMs, generalSchedule);
  record["batched"] = runAll("batched", batchedMs, batchedSchedule);
  // The cost model's choice among the batched schedules, on this GPU's
  // shape and measured copy bandwidth.
  tuning::GpuModel gpu = tuning::fromDevice(bench.device());
  if (copyGbs > 0)
    gpu.dramBytesPerSecond = copyGbs * 1e9;
  OpDesc batchedOp = spmmOp(type, width);
  batchedOp.batchedGraph = true;
  if (Expected<Schedule> chosen =
          tuning::chooseBatchedSchedule(gpu, batch, batchedOp)) {
    record["model_schedule"] = chosen->str();
    if (Expected<KernelPlan> plan = planKernel(batchedOp, *chosen))
      record["model_predicted_ms"] =
          1e3 *
          tuning::predictBatchedSpmm(gpu, batch, batchedOp, *plan).seconds;
  }
  json best = {{"cusparse_ms", cusparseMs},
               {"cusparse_algorithm", cusparseAlg},
               {"general_ms", generalMs},
               {"general_schedule", generalSchedule},
               {"batched_ms", batchedMs},
               {"batched_schedule", batchedSchedule},
               {"batched_copy_fraction", fraction(batchedMs)},
               {"general_copy_fraction", fraction(generalMs)}};
  if (batchedMs > 0 && generalMs > 0)
    best["batched_vs_general"] = generalMs / batchedMs;
  if (batchedMs > 0 && cusparseMs > 0)
    best["batched_vs_cusparse"] = cusparseMs / batchedMs;
  record["best"] = best;
  std::printf("batched  %-12s %-4s w%-4lld cuSPARSE %8.4f ms  general %8.4f "
              "ms  batched %8.4f ms  %5.2fx %5.2fx  copy %3.0f%%  %s\n",
              name.c_str(), elementTypeName(type), (long long)width, cusparseMs,
              generalMs, batchedMs, batchedMs > 0 ? generalMs / batchedMs : 0.0,
              batchedMs > 0 ? cusparseMs / batchedMs : 0.0,
              100 * fraction(batchedMs), batchedSchedule.c_str());
  std::fflush(stdout);
  return record;
}
