//===- Batched.cpp - gnn-bench's cases on batches of small graphs ---------===//
#include "gnnc/Bench/Batched.h"

#include "gnnc/Bench/Bytes.h"
#include "gnnc/Bench/Json.h"
#include "gnnc/Bench/KernelRuns.h"
#include "gnnc/Bench/Kernels.h"
#include "gnnc/Bench/NpzWriter.h"
#include "gnnc/Bench/Problems.h"
#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/OpText.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/Tuning/BatchedModel.h"
#include "gnnc/Tuning/LayerBackward.h"
#include "gnnc/Tuning/TunedCompile.h"
#include "gnnc/graph/Random.h"
#include "gnnc/ops/Readout.h"
#include "gnnc/reference/Spmm.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

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
  return batchedSchedulesFor(op);
}

std::vector<std::string> gnnc::bench::batchedSchedulesFor(const OpDesc &op) {
  std::vector<std::string> bodies;
  for (int tile : {32, 64, 128, 256})
    bodies.push_back("strategy = batched, tile_rows = " + std::to_string(tile));
  for (int tile : {64, 128})
    bodies.push_back("strategy = batched, tile_rows = " + std::to_string(tile) +
                     ", threads_per_block = 256");
  bodies.push_back("strategy = batched, tile_rows = 64, graphs_per_block = 1");
  // Other neighbour batches than the default (kBatchedEdgeBatch): fewer,
  // and the most the registers allow (the default before it).
  for (int tile : {32, 64, 128})
    bodies.push_back("strategy = batched, tile_rows = " + std::to_string(tile) +
                     ", edge_batch = 2");
  for (int tile : {32, 64})
    bodies.push_back("strategy = batched, tile_rows = " + std::to_string(tile) +
                     ", edge_batch = 8");
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

  // The hardware's floor for these bytes: a device-to-device copy of
  // half the compulsory bytes each way, timed as the kernels are (the
  // large copy's bandwidth is out of reach for a kernel of a few MB: its
  // launch and the DRAM's ramp are not amortized).
  double sameCopyMs = 0;
  const size_t each = static_cast<size_t>(compulsory / 2);
  if (Expected<TimingStats> copy = timeDeviceCopy(bench, each)) {
    sameCopyMs = copy->medianMs;
    record["same_size_copy"] = {{"bytes_each_way", each},
                                {"time_ms", toJson(*copy)}};
  } else {
    record["same_size_copy"] = {{"error", copy.message()}};
  }

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
  if (Expected<tuning::BatchedChoice> chosen =
          tuning::chooseBatchedSchedule(gpu, batch, batchedOp)) {
    record["model_schedule"] = chosen->schedule.str();
    record["model_predicted_ms"] = 1e3 * chosen->prediction.seconds;
  }
  // What the compiler chooses for an unscheduled op on this batch
  // (compileForBatch, the GPU present, no database): by the models alone,
  // and with the leaders measured; each checked and timed as the others.
  const std::string feat =
      "tensor<?x" + std::to_string(width) + "x" + elementTypeName(type) + ">";
  auto compilerChoice = [&](bool measure) {
    json choice = json::object();
    tuning::TunedCompileOptions how;
    how.useDatabase = false;
    if (measure) {
      how.runtime = &bench.runtime();
      how.measureTopK = 3;
    }
    tuning::TuningChoices chosen;
    Expected<CompiledModule> picked = tuning::compileForBatch(
        "gnn.module @bc {\n" +
            spmmKernelText("choice", "batched_csr", feat, "") + "}\n",
        "choice.gnn", batch, how, &chosen);
    if (!picked || picked->kernels.size() != 1) {
      choice["error"] =
          picked ? std::string("no kernel compiled") : picked.message();
      ++failures;
      return choice;
    }
    const tuning::TuningChoices::Choice &c = chosen.schedules["bc_choice"];
    const Schedule &schedule = picked->kernels[0].schedule;
    choice["schedule"] = schedule.str();
    choice["strategy"] = strategyName(schedule.strategy);
    choice["source"] = c.source;
    if (c.generalSeconds)
      choice["general_ms"] = 1e3 * *c.generalSeconds;
    if (c.batchedSeconds)
      choice["batched_ms"] = 1e3 * *c.batchedSeconds;
    KernelResult r = runGnncKernel(bench, picked->kernels[0], *problem,
                                   CheckMode::Shared, "choice");
    choice["status"] = r.status;
    if (r.status != "ok") {
      ++failures;
      std::printf("%s    compiler's choice on %s %s w%lld: %s\n",
                  r.status.c_str(), name.c_str(), elementTypeName(type),
                  (long long)width, r.report.c_str());
    } else if (double ms = passedMedianMs(r); ms > 0) {
      choice["time_ms"] = toJson(*r.timing);
      choice["ms"] = ms;
    }
    return choice;
  };
  record["compiler_choice"] = compilerChoice(false);
  record["compiler_choice_measured"] = compilerChoice(true);
  // gnnc's best general schedule: the fixed list's, or the general
  // tuner's measured choice on the block-diagonal graph where that is
  // faster (timed on its own: the compiler's measured choice may be
  // batched).
  std::string generalFrom = "list";
  {
    json tuned = json::object();
    tuning::TunedCompileOptions how;
    how.useDatabase = false;
    how.runtime = &bench.runtime();
    how.measureTopK = 3;
    Expected<CompiledModule> picked = tuning::compileForGraph(
        "gnn.module @bt {\n" + spmmKernelText("general", "csr", feat, "") +
            "}\n",
        "general.gnn", batch.graph, how);
    if (!picked || picked->kernels.size() != 1) {
      tuned["error"] =
          picked ? std::string("no kernel compiled") : picked.message();
      ++failures;
    } else {
      const rt::KernelSpec &spec = picked->kernels[0];
      tuned["schedule"] = spec.schedule.str();
      KernelResult r = runGnncKernel(bench, spec, *problem, CheckMode::Shared,
                                     "tuned general");
      tuned["status"] = r.status;
      if (r.status != "ok") {
        ++failures;
        std::printf("%s    tuned general schedule on %s %s w%lld: %s\n",
                    r.status.c_str(), name.c_str(), elementTypeName(type),
                    (long long)width, r.report.c_str());
      } else if (double ms = passedMedianMs(r); ms > 0) {
        tuned["time_ms"] = toJson(*r.timing);
        tuned["ms"] = ms;
        if (generalMs == 0 || ms < generalMs) {
          generalMs = ms;
          generalSchedule = spec.schedule.str();
          generalFrom = "tuner";
        }
      }
    }
    record["general_tuned"] = tuned;
  }
  json best = {{"cusparse_ms", cusparseMs},
               {"cusparse_algorithm", cusparseAlg},
               {"general_ms", generalMs},
               {"general_from", generalFrom},
               {"general_schedule", generalSchedule},
               {"batched_ms", batchedMs},
               {"batched_schedule", batchedSchedule},
               {"batched_copy_fraction", fraction(batchedMs)},
               {"general_copy_fraction", fraction(generalMs)},
               {"same_size_copy_ms", sameCopyMs}};
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

//===----------------------------------------------------------------------===//
// The batch on disk
//===----------------------------------------------------------------------===//

Status gnnc::bench::dumpBatch(const graph::BatchedGraph &batch,
                              const std::string &dir, const std::string &name) {
  if (name.empty() || name.find('/') != std::string::npos)
    return Status::error("dumping batch '" + name +
                         "': a batch name makes one file name (no '/')");
  const std::string path = dir + "/" + name + ".npz";
  if (Status s = batch.validate(); !s)
    return s.withContext(path);
  const graph::CsrGraph &g = batch.graph;
  Expected<std::vector<int32_t>> indices = g.colIdx32();
  if (!indices)
    return indices.status().withContext(path + ": indices");
  const int64_t numNodes = g.numRows;
  auto i64 = [](const std::string &member, const std::vector<int64_t> &v) {
    return NpyMember{member,
                     "<i8",
                     {static_cast<int64_t>(v.size())},
                     v.data(),
                     v.size() * sizeof(int64_t)};
  };
  std::vector<NpyMember> members = {
      i64("indptr", g.rowPtr),
      {"indices",
       "<i4",
       {static_cast<int64_t>(indices->size())},
       indices->data(),
       indices->size() * sizeof(int32_t)},
      {"num_nodes", "<i8", {}, &numNodes, sizeof(numNodes)},
      i64("graph_ptr", batch.graphPtr),
      i64("edge_graph_ptr", batch.edgeGraphPtr)};
  if (g.hasValues())
    members.push_back({"data",
                       "<f4",
                       {static_cast<int64_t>(g.values.size())},
                       g.values.data(),
                       g.values.size() * sizeof(float)});
  return writeNpz(path, members);
}

//===----------------------------------------------------------------------===//
// Layers
//===----------------------------------------------------------------------===//

const char *gnnc::bench::layerKindName(LayerKind kind) {
  return kind == LayerKind::Gcn ? "gcn" : "gin";
}

Expected<LayerKind> gnnc::bench::parseLayerKind(const std::string &text) {
  if (text == "gcn")
    return LayerKind::Gcn;
  if (text == "gin")
    return LayerKind::Gin;
  return Status::error("unknown layer '" + text + "' (expected gcn or gin)");
}

OpDesc gnnc::bench::layerAggregateOp(LayerKind kind, ElementType type,
                                     int64_t width) {
  OpDesc op = spmmOp(type, width);
  op.batchedGraph = true;
  op.reduce = Reduce::Sum;
  if (kind == LayerKind::Gcn)
    op.scale = DegreeScale::Both;
  else
    op.selfWeight = 0.0;
  return op;
}

OpDesc gnnc::bench::layerFusedOp(LayerKind kind, ElementType type,
                                 int64_t width) {
  OpDesc op = layerAggregateOp(kind, type, width);
  op.linearWidth = width;
  op.linearBias = true;
  op.activation = Activation::Relu;
  return op;
}

std::string gnnc::bench::layerKernelText(
    const std::string &name, LayerKind kind, ElementType type, int64_t width,
    const std::optional<Schedule> &schedule, bool fused) {
  const OpDesc op = fused ? layerFusedOp(kind, type, width)
                          : layerAggregateOp(kind, type, width);
  return opKernelText(name, op, schedule);
}

double gnnc::bench::layerTolerance(ElementType type) {
  return ops::linearTolerance(type);
}

Expected<LayerInputs>
gnnc::bench::makeLayerInputs(const graph::BatchedGraph &batch, LayerKind kind,
                             ElementType type, int64_t width, uint64_t seed) {
  if (width < 1)
    return Status::error("layer: width " + std::to_string(width) +
                         "; expected at least 1");
  LayerInputs in;
  in.kind = kind;
  in.type = type;
  in.width = width;
  if (kind == LayerKind::Gcn) {
    Expected<graph::BatchedGraph> looped = graph::withSelfLoops(batch);
    if (!looped)
      return looped.status();
    in.graph = looped.take();
  } else {
    if (Status s = batch.validate(); !s)
      return s.withContext("layer");
    in.graph = batch;
  }
  const int64_t n = in.nodes();
  // W like Glorot's uniform range for a square layer, so Y stays of the
  // order of H; b in [-1/2, 1/2).
  const float range = static_cast<float>(std::sqrt(3.0 / double(width)));
  in.x = ref::roundThrough(
      ref::randomFeatures(n * width, graph::deriveSeed(seed, 1)), type);
  in.weight = ref::roundThrough(ref::randomFeatures(width * width,
                                                    graph::deriveSeed(seed, 2),
                                                    -range, range),
                                type);
  in.bias = ref::roundThrough(
      ref::randomFeatures(width, graph::deriveSeed(seed, 3), -0.5f, 0.5f),
      type);
  ref::SpmmOptions options;
  if (kind == LayerKind::Gcn)
    options.scale = DegreeScale::Both;
  else
    options.selfWeight = 0.0;
  ref::spmm(in.graph.graph, nullptr, in.x.data(), width, options, in.aggregate,
            &in.aggregateMagnitude);
  ref::linearEpilogue(in.aggregate, n, width, in.weight.data(), width,
                      in.bias.data(), /*relu=*/true, in.expected,
                      &in.aggregateMagnitude, &in.magnitude);
  return in;
}

ops::KernelCheck
gnnc::bench::compareLayerOutput(const LayerInputs &in,
                                const std::vector<float> &got) {
  const std::string what =
      std::string(layerKindName(in.kind)) + " layer on '" +
      in.graph.graph.name + "' (" + std::to_string(in.nodes()) + " nodes, " +
      std::to_string(in.graph.graph.nnz()) + " non-zeros, width " +
      std::to_string(in.width) + ", " + elementTypeName(in.type) + ")";
  if (got.size() != in.expected.size())
    return {false, what + ": " + std::to_string(got.size()) +
                       " outputs, expected " +
                       std::to_string(in.expected.size())};
  std::string report;
  Status s = ref::compareToReferenceScaled(
      got, in.expected, in.magnitude, in.width, layerTolerance(in.type),
      &report, ops::spmmAbsoluteTolerance(in.type));
  return {static_cast<bool>(s), what + ": " + (s ? report : s.message())};
}

Expected<LayerProblem> gnnc::bench::uploadLayerProblem(LayerInputs inputs) {
  LayerProblem p;
  p.host = std::move(inputs);
  const LayerInputs &in = p.host;
  Expected<ops::DeviceGraph> g = ops::uploadBatch(in.graph, true, false);
  if (!g)
    return g.status();
  p.graph = g.take();
  if (in.kind == LayerKind::Gcn) {
    Expected<rt::DeviceBuffer> norm = ops::uploadColumnNorm(in.graph.graph);
    if (!norm)
      return norm.status();
    p.colNorm = norm.take();
  }
  for (auto [host, device] :
       {std::pair{&in.x, &p.x}, std::pair{&in.weight, &p.weight},
        std::pair{&in.bias, &p.bias}}) {
    Expected<rt::DeviceBuffer> b = ops::uploadTensor(*host, in.type);
    if (!b)
      return b.status();
    *device = b.take();
  }
  const size_t count = static_cast<size_t>(in.nodes() * in.width);
  for (rt::DeviceBuffer *out : {&p.h, &p.y}) {
    Expected<rt::DeviceBuffer> b = ops::allocatePoisoned(count, in.type);
    if (!b)
      return b.status();
    *out = b.take();
  }
  return p;
}

Expected<ops::KernelCheck>
gnnc::bench::checkLayerOutput(const LayerProblem &p) {
  const LayerInputs &in = p.host;
  Expected<std::vector<float>> got = ops::downloadTensor(
      p.y, static_cast<size_t>(in.nodes() * in.width), in.type);
  if (!got)
    return got.status();
  return compareLayerOutput(in, *got);
}

namespace {

/// Poisons `buffer` (all-ones bytes: NaN in every type).
Status poison(rt::DeviceBuffer &buffer) { return buffer.fill(0xff); }

/// One aggregation kernel of a layer case: checked (H against the
/// reference), then timed if it passed.
struct AggregateRun {
  std::string schedule;
  std::string status;
  std::string report;
  double ms = 0;
  json timing;
};

AggregateRun runAggregate(Bench &bench, LayerProblem &p,
                          const rt::KernelSpec &spec, int64_t maxDegree) {
  AggregateRun run;
  run.schedule = spec.schedule.str();
  const LayerInputs &in = p.host;
  Expected<rt::LoadedKernel> kernel = bench.runtime().load(spec);
  Expected<ops::SpmmSignature> sig = ops::spmmSignature(spec);
  if (!kernel || !sig) {
    run.status = "error";
    run.report = kernel ? sig.message() : kernel.message();
    return run;
  }
  auto launch = [&]() {
    return ops::launchSpmm(bench.runtime(), *kernel, p.graph, p.x, nullptr, p.h,
                           /*synchronize=*/false, p.columnNorm());
  };
  Status ran = poison(p.h);
  if (ran)
    ran = launch();
  if (ran)
    ran = bench.runtime().synchronize();
  Expected<std::vector<float>> got =
      ran ? ops::downloadTensor(p.h, static_cast<size_t>(in.nodes() * in.width),
                                in.type)
          : Expected<std::vector<float>>(ran);
  if (!got) {
    run.status = "error";
    run.report = got.message();
    return run;
  }
  ops::KernelCheck check = ops::compareWithReference(
      spec, in.graph.graph, in.width, in.type, *got, in.aggregate,
      in.aggregateMagnitude, in.width, ops::spmmTolerance(*sig, maxDegree));
  run.report = check.report;
  if (!check.ok) {
    run.status = "wrong";
    return run;
  }
  Expected<TimingStats> t = bench.time(launch);
  if (!t) {
    run.status = "error";
    run.report = t.message();
    return run;
  }
  run.status = "ok";
  run.ms = t->medianMs;
  run.timing = toJson(*t);
  return run;
}

/// The layer's backward (tuning::LayerBackward) from a random dY and the
/// fused forward's Y (in p.y): every plan (dW in each of
/// tuning::layerBackwardSplitRows(), dX fused or unfused) checked once on
/// poisoned outputs against double references (tuning::checkLayerBackward) and
/// timed; fused_backward_ms is the plan planLayerBackward picks, and its four
/// steps are timed alone. Writes the plans' times, the pick and
/// backward_check into `record`.
void runLayerBackward(Bench &bench, LayerProblem &p,
                      const rt::LoadedKernel &aggregate, uint64_t seed,
                      const std::string &tag, json &record, int &failures) {
  const LayerInputs &in = p.host;
  const int64_t n = in.nodes(), width = in.width;
  const ElementType type = in.type;
  rt::Runtime &runtime = bench.runtime();
  record["backward_check"] = "error";
  auto fail = [&](const std::string &what, const Status &status) {
    record["backward_error"] = what + ": " + status.message();
    std::printf("error    layer %s backward: %s: %s\n", tag.c_str(),
                what.c_str(), status.message().c_str());
    ++failures;
  };
  const OpDesc forward = layerFusedOp(in.kind, type, width);
  Expected<tuning::LayerBackwardPlan> picked =
      tuning::planLayerBackward(forward, n, runtime.device().smCount());
  if (!picked)
    return fail("planning the backward", picked.status());
  auto planName = [](const tuning::LayerBackwardPlan &plan) {
    return std::to_string(plan.splitRows) +
           (plan.fusedInputGrad ? " fused" : " unfused");
  };
  record["backward_plan"] = planName(*picked);

  std::vector<float> dy = ref::roundThrough(
      ref::randomFeatures(n * width, graph::deriveSeed(seed, 7)), type);
  Expected<rt::DeviceBuffer> dyDev = ops::uploadTensor(dy, type);
  const size_t count = static_cast<size_t>(n * width);
  Expected<rt::DeviceBuffer> dx = ops::allocatePoisoned(count, type);
  Expected<rt::DeviceBuffer> dw =
      ops::allocatePoisoned(static_cast<size_t>(width * width), type);
  Expected<rt::DeviceBuffer> db =
      ops::allocatePoisoned(static_cast<size_t>(width), ElementType::F32);
  for (const Status &st :
       {dyDev.status(), dx.status(), dw.status(), db.status()})
    if (!st)
      return fail("allocating the backward's buffers", st);
  tuning::LayerBackwardOperands o;
  o.batch = &p.graph;
  o.colNorm = p.columnNorm();
  o.x = &p.x;
  o.weight = &p.weight;
  o.y = &p.y;
  o.dy = &*dyDev;
  o.dx = &*dx;
  o.dw = &*dw;
  o.db = &*db;

  std::vector<tuning::LayerBackwardPlan> plans;
  for (bool fused : {true, false})
    for (int32_t rows : tuning::layerBackwardSplitRows())
      plans.push_back({rows, fused});
  json plansMs = json::object(), reports = json::object();
  bool ok = true;
  std::optional<tuning::LayerBackwardReference> reference;
  for (const tuning::LayerBackwardPlan &plan : plans) {
    const std::string name = planName(plan);
    Expected<tuning::LayerBackward> backward = tuning::LayerBackward::create(
        runtime, forward, in.graph, aggregate.spec.schedule, plan);
    if (!backward) {
      // A plan the op cannot take (a fused dX needs K a multiple of 8).
      reports[name] = "no plan: " + backward.message();
      if (plan == *picked)
        return fail("the picked plan " + name, backward.status());
      continue;
    }
    // The first plan builds the references; the others are checked
    // against them (the same inputs and H).
    Expected<ops::KernelCheck> check =
        reference ? tuning::checkLayerBackward(runtime, *backward, in.graph,
                                               *reference, o)
                  : tuning::checkLayerBackward(runtime, *backward, in.graph,
                                               in.weight, dy, o,
                                               &reference.emplace());
    if (!check)
      return fail("checking the backward " + name, check.status());
    reports[name] = check->report;
    if (!check->ok) {
      ok = false;
      std::printf("wrong    layer %s backward %s: %s\n", tag.c_str(),
                  name.c_str(), check->report.c_str());
      continue;
    }
    Expected<TimingStats> t =
        bench.time([&]() { return backward->run(runtime, o, false); });
    if (!t)
      return fail("timing the backward " + name, t.status());
    plansMs[name] = t->medianMs;
    if (plan == *picked) {
      record["fused_backward_ms"] = t->medianMs;
      record["fused_backward_time_ms"] = toJson(*t);
      json schedules = json::object();
      for (const auto &[step, schedule] : backward->schedules())
        schedules[step] = schedule.str();
      record["backward_schedules"] = schedules;
      // The picked plan's steps alone.
      json steps = json::object();
      using Step = Status (tuning::LayerBackward::*)(
          rt::Runtime &, const tuning::LayerBackwardOperands &, void *);
      for (auto [stepName, step] :
           {std::pair<const char *, Step>{"h",
                                          &tuning::LayerBackward::recompute},
            {"relu_bias", &tuning::LayerBackward::reluBias},
            {"dw", &tuning::LayerBackward::weightGrad},
            {"dx", &tuning::LayerBackward::inputGrad}}) {
        Expected<TimingStats> st = bench.time(
            [&]() { return ((*backward).*step)(runtime, o, nullptr); });
        if (st)
          steps[stepName] = st->medianMs;
      }
      record["backward_steps_ms"] = steps;
    }
  }
  record["backward_plans_ms"] = plansMs;
  record["backward_report"] = reports;
  record["backward_check"] = ok ? "ok" : "wrong";
  if (!ok)
    ++failures;
  double best = 0;
  for (auto &[name, ms] : plansMs.items())
    if (best == 0 || ms.get<double>() < best) {
      best = ms.get<double>();
      record["backward_best_plan"] = name;
    }
  if (best > 0)
    record["backward_best_ms"] = best;
}

} // namespace

json gnnc::bench::runBatchedLayerCase(Bench &bench, const CublasLt *lt,
                                      const std::string &name,
                                      const graph::BatchedGraph &batch,
                                      LayerKind kind, ElementType type,
                                      int64_t width, double copyGbs,
                                      uint64_t seed, int &failures,
                                      bool backward) {
  json record = {{"batch", name},
                 {"type", elementTypeName(type)},
                 {"width", width},
                 {"layer", layerKindName(kind)},
                 {"graphs", batch.numGraphs()},
                 {"nodes", batch.graph.numRows},
                 {"edges", batch.graph.nnz()},
                 {"spmm_ms", nullptr},
                 {"gemm_ms", nullptr},
                 {"unfused_ms", nullptr},
                 {"check", "error"},
                 {"fused_ms", nullptr}};
  const std::string tag = name + " " + layerKindName(kind) + " " +
                          elementTypeName(type) + " w" + std::to_string(width);
  auto error = [&](const std::string &what, const Status &status) {
    record["error"] = what + ": " + status.message();
    std::printf("error    layer %s: %s: %s\n", tag.c_str(), what.c_str(),
                status.message().c_str());
    ++failures;
    return record;
  };

  // The inputs, the reference and the device buffers, once for every way
  // of computing the layer.
  Expected<LayerInputs> inputs =
      makeLayerInputs(batch, kind, type, width, seed);
  if (!inputs)
    return error("making the inputs", inputs.status());
  Expected<LayerProblem> problem = uploadLayerProblem(inputs.take());
  if (!problem)
    return error("uploading", problem.status());
  LayerProblem &p = *problem;
  const graph::BatchedGraph &aggregated = p.host.graph;
  // The aggregated graph's non-zeros (with GCN's self loops).
  record["aggregated_edges"] = aggregated.graph.nnz();
  int64_t maxDegree = 0;
  for (int64_t r = 0; r < aggregated.graph.numRows; ++r)
    maxDegree = std::max(maxDegree, aggregated.graph.degree(r));

  // The aggregation: the model's schedule, then the batched schedules.
  const OpDesc op = layerAggregateOp(kind, type, width);
  std::vector<std::string> schedules;
  tuning::GpuModel gpu = tuning::fromDevice(bench.device());
  if (copyGbs > 0)
    gpu.dramBytesPerSecond = copyGbs * 1e9;
  std::string modelSchedule;
  if (Expected<tuning::BatchedChoice> chosen =
          tuning::chooseBatchedSchedule(gpu, aggregated, op)) {
    modelSchedule = chosen->schedule.str();
    schedules.push_back(modelSchedule);
  }
  for (const std::string &s : batchedSchedulesFor(op))
    if (std::find(schedules.begin(), schedules.end(), s) == schedules.end())
      schedules.push_back(s);
  std::string text = "gnn.module @bl {\n";
  for (size_t i = 0; i < schedules.size(); ++i) {
    Expected<Schedule> s = parseSchedule(schedules[i]);
    if (!s)
      return error("reading schedule " + schedules[i], s.status());
    text += layerKernelText("agg" + std::to_string(i), kind, type, width, *s);
  }
  text += "}\n";
  Expected<CompiledModule> compiled = compileGnn(text, "batched_layer.gnn");
  if (!compiled)
    return error("compiling", compiled.status());

  json runs = json::array();
  const rt::KernelSpec *best = nullptr;
  double bestMs = 0;
  if (!modelSchedule.empty()) {
    record["model_schedule"] = modelSchedule;
    record["model_spmm_ms"] = nullptr;
  }
  for (const rt::KernelSpec &spec : compiled->kernels) {
    AggregateRun run = runAggregate(bench, p, spec, maxDegree);
    json r = {{"schedule", run.schedule}, {"status", run.status}};
    if (run.status == "ok") {
      r["time_ms"] = run.timing;
      if (!best || run.ms < bestMs) {
        best = &spec;
        bestMs = run.ms;
      }
    } else {
      r["report"] = run.report;
      ++failures;
      std::printf("%s    layer %s aggregation %s: %s\n", run.status.c_str(),
                  tag.c_str(), run.schedule.c_str(), run.report.c_str());
    }
    // The model's schedule is kernel agg0.
    const std::string suffix = "_agg0";
    const bool model = spec.name.size() >= suffix.size() &&
                       spec.name.compare(spec.name.size() - suffix.size(),
                                         suffix.size(), suffix) == 0;
    if (model && !modelSchedule.empty() && run.ms > 0)
      record["model_spmm_ms"] = run.ms;
    runs.push_back(r);
  }
  record["spmm_runs"] = runs;
  if (!best) {
    record["check"] = "wrong";
    return error("aggregation", Status::error("no schedule passed its check"));
  }
  // The unfused layer's aggregation is the fastest measured schedule.
  record["spmm_ms"] = bestMs;
  record["spmm_schedule"] = best->schedule.str();
  record["spmm_choice"] = "fastest measured of the model's and the batched "
                          "schedules";
  if (!lt) {
    record["check"] = "no_gemm";
    record["note"] = "no cuBLASLt in this run: the aggregation alone";
    return record;
  }

  Expected<rt::LoadedKernel> aggregate = bench.runtime().load(*best);
  if (!aggregate)
    return error("loading the aggregation", aggregate.status());
  Expected<LinearReluGemm> gemm =
      LinearReluGemm::plan(*lt, type, p.host.nodes(), width, width);
  if (!gemm)
    return error("planning the GEMM", gemm.status());
  record["gemm"] = "cublasLtMatmul RELU_BIAS, " + gemm->description();
  auto runGemm = [&]() { return gemm->run(p.h, p.weight, p.bias, p.y); };
  auto unfused = [&]() -> Status {
    GNNC_RETURN_IF_ERROR(
        ops::launchSpmm(bench.runtime(), *aggregate, p.graph, p.x, nullptr, p.h,
                        /*synchronize=*/false, p.columnNorm()));
    return runGemm();
  };

  // The gate: the unfused layer once on poisoned H and Y.
  Status ran = poison(p.h);
  if (ran)
    ran = poison(p.y);
  if (ran)
    ran = unfused();
  if (ran)
    ran = bench.runtime().synchronize();
  if (!ran)
    return error("running the unfused layer", ran);
  Expected<ops::KernelCheck> check = checkLayerOutput(p);
  if (!check)
    return error("checking the unfused layer", check.status());
  record["check_report"] = check->report;
  if (!check->ok) {
    record["check"] = "wrong";
    ++failures;
    std::printf("wrong    layer %s unfused: %s\n", tag.c_str(),
                check->report.c_str());
    return record;
  }
  record["check"] = "ok";
  Expected<TimingStats> gemmTime = bench.time(runGemm);
  if (!gemmTime)
    return error("timing the GEMM", gemmTime.status());
  Expected<TimingStats> unfusedTime = bench.time(unfused);
  if (!unfusedTime)
    return error("timing the unfused layer", unfusedTime.status());
  record["gemm_ms"] = gemmTime->medianMs;
  record["unfused_ms"] = unfusedTime->medianMs;
  // The fused layer's floor: a copy of its compulsory bytes (X, the
  // graph and W read once, Y written once), half each way, timed the same
  // way.
  {
    ProblemShape shape;
    shape.numRows = shape.numCols = batch.graph.numRows;
    shape.nnz = batch.graph.nnz();
    shape.width = width;
    shape.elementBytes = elementSize(type);
    const double bytes = spmmBytes(shape).compulsory +
                         static_cast<double>(width * width) *
                             static_cast<double>(shape.elementBytes);
    record["layer_compulsory_bytes"] = bytes;
    if (Expected<TimingStats> copy =
            timeDeviceCopy(bench, static_cast<size_t>(bytes / 2)))
      record["same_size_copy_ms"] = copy->medianMs;
  }
  record["gemm_time_ms"] = toJson(*gemmTime);
  record["unfused_time_ms"] = toJson(*unfusedTime);
  record["flops"] =
      2.0 * double(p.host.nodes()) * double(width) * double(width);

  // The fused layer: gnn.spmm with its linear epilogue, one kernel per
  // tile_rows the plan accepts (and the default), and from 32 rows on also
  // with half the default's threads per row (more neighbour loads in
  // flight per thread), each checked on a poisoned Y before it is timed;
  // the fastest that passed is fused_ms.
  const OpDesc fusedOp = layerFusedOp(kind, type, width);
  std::vector<std::optional<Schedule>> fusedSchedules = {std::nullopt};
  for (int32_t rows : {16, 32, 64, 128}) {
    Schedule s;
    s.strategy = Strategy::Batched;
    s.tileRows = rows;
    Expected<KernelPlan> planned = planWithDefaults(fusedOp, s);
    if (!planned)
      continue;
    fusedSchedules.push_back(s);
    if (rows < 32)
      continue;
    Schedule fewer = s;
    fewer.dimWorkers = planned->schedule.dimWorkers / 2;
    if (fewer.dimWorkers >= 1 && planWithDefaults(fusedOp, fewer))
      fusedSchedules.push_back(fewer);
  }
  std::string fusedText = "gnn.module @bf {\n";
  for (size_t i = 0; i < fusedSchedules.size(); ++i)
    fusedText += layerKernelText("fused" + std::to_string(i), kind, type, width,
                                 fusedSchedules[i], /*fused=*/true);
  fusedText += "}\n";
  Expected<CompiledModule> fusedModule =
      compileGnn(fusedText, "batched_fused_layer.gnn");
  if (!fusedModule)
    return error("compiling the fused layer", fusedModule.status());
  json fusedRuns = json::array();
  double fusedMs = 0;
  const ops::LinearOperands linear{&p.weight, &p.bias};
  for (size_t i = 0; i < fusedModule->kernels.size(); ++i) {
    const rt::KernelSpec &spec = fusedModule->kernels[i];
    json r = {{"schedule", spec.schedule.str()},
              {"default", !fusedSchedules[i].has_value()}};
    Expected<rt::LoadedKernel> kernel = bench.runtime().load(spec);
    if (!kernel)
      return error("loading the fused layer", kernel.status());
    auto fused = [&]() {
      return ops::launchSpmm(bench.runtime(), *kernel, p.graph, p.x, nullptr,
                             p.y, /*synchronize=*/false, p.columnNorm(),
                             nullptr, &linear);
    };
    Status ran = poison(p.y);
    if (ran)
      ran = fused();
    if (ran)
      ran = bench.runtime().synchronize();
    if (!ran)
      return error("running the fused layer", ran);
    Expected<ops::KernelCheck> fusedCheck = checkLayerOutput(p);
    if (!fusedCheck)
      return error("checking the fused layer", fusedCheck.status());
    if (!fusedCheck->ok) {
      r["status"] = "wrong";
      r["report"] = fusedCheck->report;
      ++failures;
      std::printf("wrong    layer %s fused %s: %s\n", tag.c_str(),
                  spec.schedule.str().c_str(), fusedCheck->report.c_str());
      fusedRuns.push_back(r);
      continue;
    }
    Expected<TimingStats> t = bench.time(fused);
    if (!t)
      return error("timing the fused layer", t.status());
    r["status"] = "ok";
    r["time_ms"] = toJson(*t);
    if (!fusedSchedules[i])
      record["fused_default_ms"] = t->medianMs;
    if (fusedMs == 0 || t->medianMs < fusedMs) {
      fusedMs = t->medianMs;
      record["fused_schedule"] = spec.schedule.str();
    }
    fusedRuns.push_back(r);
  }
  record["fused_runs"] = fusedRuns;
  if (fusedMs > 0) {
    record["fused_ms"] = fusedMs;
    if (backward)
      runLayerBackward(bench, p, *aggregate, seed, tag, record, failures);
  }

  const double backwardMs = record.value("fused_backward_ms", 0.0);
  std::printf("layer    %-12s %-3s %-4s w%-4lld spmm %8.4f ms  gemm %8.4f ms  "
              "unfused %8.4f ms  fused %8.4f ms  backward %8.4f ms  %s\n",
              name.c_str(), layerKindName(kind), elementTypeName(type),
              (long long)width, bestMs, gemmTime->medianMs,
              unfusedTime->medianMs, fusedMs, backwardMs,
              best->schedule.str().c_str());
  std::fflush(stdout);
  return record;
}

//===----------------------------------------------------------------------===//
// Readout
//===----------------------------------------------------------------------===//

std::string gnnc::bench::readoutKernelText(const std::string &name,
                                           ElementType type, int64_t width,
                                           Reduce reduce, bool grad) {
  const std::string g = "!gnn.graph<batched_csr, i64, i32>";
  const std::string t =
      "tensor<?x" + std::to_string(width) + "x" + elementTypeName(type) + ">";
  return "  gnn.kernel @" + name + "(%g: " + g + ", %x: " + t +
         (grad ? ", %y: " + t + ", %dy: " + t : "") + ") -> " + t +
         " {\n    %r = " +
         (grad ? "gnn.readout_grad %g, %x, %y, %dy" : "gnn.readout %g, %x") +
         " {reduce = #gnn<reduce " + reduceName(reduce) + ">} : " + g + ", " +
         t + (grad ? ", " + t + ", " + t : "") + " -> " + t +
         "\n    gnn.return %r : " + t + "\n  }\n";
}

double gnnc::bench::readoutBytes(int64_t nodes, int64_t graphs, int64_t width,
                                 ElementType type, Reduce reduce, bool grad) {
  const double s = double(elementSize(type));
  const double nodeRows = double(nodes) * double(width) * s;
  const double graphRows = double(graphs) * double(width) * s;
  const double offsets = double(graphs + 1) * sizeof(int64_t);
  double bytes = nodeRows + graphRows + offsets;
  if (grad && reduce == Reduce::Max)
    bytes += nodeRows + graphRows;
  return bytes;
}

json gnnc::bench::runBatchedReadoutCases(Bench &bench, const std::string &name,
                                         const graph::BatchedGraph &batch,
                                         ElementType type, int64_t width,
                                         const std::vector<Reduce> &reduces,
                                         double copyGbs, uint64_t seed,
                                         int &failures) {
  json records = json::array();
  const int64_t nodes = batch.graph.numRows, graphs = batch.numGraphs();
  const std::string tag =
      name + " " + elementTypeName(type) + " w" + std::to_string(width);
  auto base = [&](Reduce reduce) {
    return json{{"batch", name},
                {"type", elementTypeName(type)},
                {"width", width},
                {"reduce", reduceName(reduce)},
                {"graphs", graphs},
                {"nodes", nodes},
                {"forward_ms", nullptr},
                {"backward_ms", nullptr},
                {"forward_check", "error"},
                {"backward_check", "error"}};
  };
  auto failAll = [&](const std::string &what, const Status &status) {
    for (Reduce reduce : reduces) {
      json r = base(reduce);
      r["error"] = what + ": " + status.message();
      records.push_back(r);
      ++failures;
    }
    std::printf("error    readout %s: %s: %s\n", tag.c_str(), what.c_str(),
                status.message().c_str());
    return records;
  };
  std::string text = "gnn.module @br {\n";
  for (Reduce reduce : reduces)
    for (bool grad : {false, true})
      text += readoutKernelText(std::string(grad ? "grad_" : "fwd_") +
                                    reduceName(reduce),
                                type, width, reduce, grad);
  text += "}\n";
  Expected<CompiledModule> compiled = compileGnn(text, "batched_readout.gnn");
  if (!compiled)
    return failAll("compiling", compiled.status());
  if (compiled->kernels.size() != 2 * reduces.size())
    return failAll("compiling",
                   Status::error("expected a forward and a gradient kernel "
                                 "per reduction"));

  // Timing inputs: X drawn from the seed, Y the forward's result, dY drawn.
  Expected<ops::DeviceGraph> dg = ops::uploadBatch(batch, true, false);
  if (!dg)
    return failAll("uploading the batch", dg.status());
  Expected<rt::DeviceBuffer> x = ops::uploadTensor(
      ref::randomFeatures(nodes * width, graph::deriveSeed(seed, 11)), type);
  Expected<rt::DeviceBuffer> dy = ops::uploadTensor(
      ref::randomFeatures(graphs * width, graph::deriveSeed(seed, 12)), type);
  Expected<rt::DeviceBuffer> y =
      ops::allocatePoisoned(static_cast<size_t>(graphs * width), type);
  Expected<rt::DeviceBuffer> dx =
      ops::allocatePoisoned(static_cast<size_t>(nodes * width), type);
  for (const Status &s : {x.status(), dy.status(), y.status(), dx.status()})
    if (!s)
      return failAll("allocating", s);

  auto fraction = [&](double bytes, double ms) {
    return ms > 0 && copyGbs > 0 ? gigabytesPerSecond(bytes, ms) / copyGbs
                                 : 0.0;
  };
  for (size_t i = 0; i < reduces.size(); ++i) {
    const Reduce reduce = reduces[i];
    json r = base(reduce);
    const double fwdBytes =
        readoutBytes(nodes, graphs, width, type, reduce, false);
    const double bwdBytes =
        readoutBytes(nodes, graphs, width, type, reduce, true);
    r["forward_compulsory_bytes"] = fwdBytes;
    r["backward_compulsory_bytes"] = bwdBytes;
    Expected<rt::LoadedKernel> fwd =
        bench.runtime().load(compiled->kernels[2 * i]);
    Expected<rt::LoadedKernel> bwd =
        bench.runtime().load(compiled->kernels[2 * i + 1]);
    if (!fwd || !bwd) {
      r["error"] = fwd ? bwd.message() : fwd.message();
      ++failures;
      records.push_back(r);
      continue;
    }
    auto forward = [&]() {
      return ops::launchReadout(bench.runtime(), *fwd, *dg, *x, *y,
                                /*synchronize=*/false);
    };
    auto backward = [&]() {
      return ops::launchReadoutGrad(bench.runtime(), *bwd, *dg, *x, *y, *dy,
                                    *dx, /*synchronize=*/false);
    };
    // The gate: each kernel against the reference on its own inputs.
    auto gate = [&](const rt::LoadedKernel &k, const char *key,
                    const std::function<Status()> &work, const char *msKey,
                    const char *fractionKey, double bytes) -> double {
      Expected<ops::KernelCheck> check =
          ops::checkReadout(bench.runtime(), k, batch, seed);
      if (!check || !check->ok) {
        r[key] = check ? "wrong" : "error";
        r[std::string(key) + "_report"] =
            check ? check->report : check.message();
        ++failures;
        std::printf("%s    readout %s %s %s: %s\n", check ? "wrong" : "error",
                    tag.c_str(), reduceName(reduce), key,
                    (check ? check->report : check.message()).c_str());
        return 0;
      }
      r[key] = "ok";
      Expected<TimingStats> t = bench.time(work);
      if (!t) {
        r[key] = "error";
        r[std::string(key) + "_report"] = t.message();
        ++failures;
        return 0;
      }
      r[msKey] = t->medianMs;
      r[std::string(msKey) + "_stats"] = toJson(*t);
      r[fractionKey] = fraction(bytes, t->medianMs);
      return t->medianMs;
    };
    const double fwdMs = gate(*fwd, "forward_check", forward, "forward_ms",
                              "forward_copy_fraction", fwdBytes);
    // Y for the gradient: the forward's result (max reads it).
    Status ready = forward();
    if (ready)
      ready = bench.runtime().synchronize();
    double bwdMs = 0;
    if (!ready) {
      r["backward_check"] = "error";
      r["backward_check_report"] = ready.message();
      ++failures;
    } else {
      bwdMs = gate(*bwd, "backward_check", backward, "backward_ms",
                   "backward_copy_fraction", bwdBytes);
    }
    std::printf("readout  %-12s %-4s w%-4lld %-4s forward %8.4f ms (copy "
                "%3.0f%%)  backward %8.4f ms (copy %3.0f%%)\n",
                name.c_str(), elementTypeName(type), (long long)width,
                reduceName(reduce), fwdMs, 100 * fraction(fwdBytes, fwdMs),
                bwdMs, 100 * fraction(bwdBytes, bwdMs));
    records.push_back(r);
  }
  std::fflush(stdout);
  return records;
}
