//===- gnn-bench.cpp - Benchmark gnnc's kernels against cuSPARSE ----------===//
//
// Times gnnc's SpMM and SDDMM kernels next to cuSPARSE (SpMM with every CSR
// algorithm, SDDMM) and gnnc's GAT attention chain on the datasets and on
// R-MAT graphs (or, with --segments, the segmented matmuls next to cuBLAS),
// checks every gnnc kernel before timing it, and writes one JSON file plus a
// table on stdout. See bench/NOTES.md; bench/run.sh runs it together with the
// PyTorch baseline.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Bench/Batched.h"
#include "gnnc/Bench/Cusparse.h"
#include "gnnc/Bench/Harness.h"
#include "gnnc/Bench/NpyWriter.h"
#include "gnnc/Bench/Segments.h"
#include "gnnc/Bench/Snapshots.h"
#include "gnnc/Bench/Suite.h"
#include "gnnc/Plan/Limits.h"
#include "gnnc/Tools/ToolSupport.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/Tuning/SegmentModel.h"
#include "gnnc/graph/Csr.h"
#include "gnnc/graph/Parallel.h"
#include "gnnc/graph/Reorder.h"
#include "gnnc/runtime/Nvrtc.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

using namespace gnnc;
using namespace gnnc::bench;
using nlohmann::json;

namespace {

/// --no-flush: launches per timed run, back to back (TimingOptions).
constexpr int kNoFlushBackToBack = 10;

void usage() {
  std::printf(
      "usage: gnn-bench [options]\n"
      "Times gnnc's gnn.spmm and gnn.sddmm kernels against cuSPARSE (SpMM,\n"
      "every CSR algorithm; SDDMM) and gnnc's GAT attention chain on real\n"
      "and R-MAT graphs. Every gnnc kernel (and the chain) is checked\n"
      "against a double-precision CPU reference before it is timed; a wrong\n"
      "one gets no time and makes the exit status 1.\n"
      "\n"
      "graphs:\n"
      "  --datasets DIR      every static CSR graph (*.npz with indptr and\n"
      "                      indices; hetero_* and temporal_* are skipped)\n"
      "  --no-relabel        skip the randomly relabeled copy of each dataset\n"
      "  --orders LIST       also each dataset renumbered for locality,\n"
      "                      named <name>-<order>: degree, rcm, community\n"
      "                      (host time of the renumbering in the JSON)\n"
      "  --rmat LIST         R-MAT scales, Graph500 parameters, 16 edges per\n"
      "                      node (default 18,19,20,21,22; 'none')\n"
      "  --graphs LIST       only these graph names (comma-separated)\n"
      "cases:\n"
      "  --widths LIST       feature widths (default 32,64,128)\n"
      "  --types LIST        f32,f16,bf16 (default all three)\n"
      "  --schedules N       gnnc schedules per case, default first (4)\n"
      "  --large-nnz N       graphs with more edges than N (30000000) run\n"
      "  --large-schedules K only the first K schedules (2)\n"
      "  --no-edge-values    skip the SpMMve kernel (edge values)\n"
      "  --no-sddmm          skip cuSPARSE SDDMM\n"
      "  --no-gnnc-sddmm     skip gnnc SDDMM (dot; f32 and f16, the same\n"
      "                      schedule count as SpMM)\n"
      "  --no-gat            skip the GAT chain and the fused GAT kernels\n"
      "                      (f32 and f16, one head, at the width of\n"
      "                      --gat-width)\n"
      "  --gat-width N       feature width of the GAT chain (64)\n"
      "  --no-cusparse       skip cuSPARSE altogether (with --segments:\n"
      "                      cuBLAS)\n"
      "  --offsets i64|i32   row offset width of the gnnc kernels (i64)\n"
      "  --check shared|per-kernel\n"
      "                      the reference is computed once per problem\n"
      "                      (shared, default) or by ops::checkSpmm per "
      "kernel\n"
      "timing:\n"
      "  --warmups N         untimed runs (5)\n"
      "  --runs N            timed runs (20)\n"
      "  --no-flush          do not flush the L2 before each run; each\n"
      "                      timed run is then the mean of %d launches\n"
      "                      back to back (the host's launch calls overlap\n"
      "                      the GPU's work instead of being timed)\n"
      "  --no-gather-bound   do not time each case's gather stream alone\n"
      "                      (every edge's row summed in column order, no\n"
      "                      sparse bookkeeping) nor the L2 gather bandwidth\n"
      "  --copy-mib N        size of the bandwidth copy in MiB (1024)\n"
      "  --seed N            input seed (1)\n"
      "  --time-limit S      skip the cases that would start after S seconds\n"
      "                      (recorded as skipped; 0 = no limit)\n"
      "  --cache-dir DIR     NVRTC kernel cache ('off': none)\n"
      "output:\n"
      "  --out FILE          JSON results\n"
      "  --dump-graphs DIR   write every graph as DIR/<name>.indptr.npy "
      "(int64)\n"
      "                      and .indices.npy (int32), plus DIR/graphs.json\n"
      "  --dump-only         only write the graphs (--dump-graphs) or the\n"
      "                      batches (--dump-batches); no GPU needed\n"
      "  --batched LIST      instead of the cases above: batches of small\n"
      "                      graphs (tu_PROTEINS from --datasets, mol<N>\n"
      "                      molecule-like graphs, prot<N> graphs of\n"
      "                      PROTEINS' sizes): cuSPARSE and gnnc's general\n"
      "                      schedules on the block-diagonal graph, and the\n"
      "                      batched strategy (--types; widths 16,32,64,128,\n"
      "                      256 unless --widths); then per batch, type and\n"
      "                      width the unfused layers of --layers and the\n"
      "                      readouts of --readouts\n"
      "  --layers LIST       layers for --batched: gcn (ReLU(N X W + b), N =\n"
      "                      D^-1/2 (A + I) D^-1/2), gin (ReLU((X + A X) W +\n"
      "                      b)): gnnc's batched aggregation, then\n"
      "                      cuBLASLt's GEMM with the bias and ReLU epilogue\n"
      "                      (K = M = width); default gcn,gin; 'none'\n"
      "  --no-layer-backward the layers' fused forward only: the backward\n"
      "                      is neither checked nor timed\n"
      "  --readouts LIST     gnn.readout and gnn.readout_grad for --batched:\n"
      "                      sum,mean,max (default all three); 'none'\n"
      "  --dump-batches DIR  write each --batched batch as DIR/<name>.npz in\n"
      "                      the TU layout (indptr, indices, num_nodes,\n"
      "                      graph_ptr, edge_graph_ptr); never replaces a\n"
      "                      file\n"
      "  --snapshots LIST    instead of the cases above: series of graph\n"
      "                      snapshots (rmat<scale>c<churn %%>, e.g.\n"
      "                      rmat18c10: 8 snapshots of an evolving R-MAT\n"
      "                      graph; temporal_england_covid and\n"
      "                      temporal_bitcoinalpha from --datasets): gnnc's\n"
      "                      multi-snapshot aggregation of a group against\n"
      "                      gnnc per snapshot and cuSPARSE on the\n"
      "                      block-diagonal graph (--types; widths 8,16,32,64\n"
      "                      unless --widths)\n"
      "  --group LIST        snapshots per group for --snapshots (2,4,8);\n"
      "                      'auto' adds the size the runtime tuner picks\n"
      "                      (each of 2, 4 and 8 timed on the series)\n"
      "  --segments LIST     instead of the cases above: segmented matmuls\n"
      "                      (Y_t = X_t W_t per type; forward, and dX + dW)\n"
      "                      on segment sets: names of <datasets>/segments/\n"
      "                      *.csv (--datasets, else $GNNC_DATASETS), CSV\n"
      "                      paths, gen<types>x<mean rows>, or 'all' (every\n"
      "                      set found and gen100x1000): a cuBLAS GEMM per\n"
      "                      type, cuBLAS's grouped GEMM, gnnc with the\n"
      "                      tuner's choice and the best of a measured sweep\n"
      "  --dims LIST         K = M of --segments (32,64,128,256)\n"
      "  --dtypes LIST       tf32,f16 for --segments (both)\n"
      "  --sweep N           gnnc schedules timed per pass for --segments (8)\n"
      "  --check-rows N      rows the --segments checks sample (256)\n"
      "  --quick             cora_planetoid + rmat18, width 64, f32 + f16,\n"
      "                      the default schedule, no SpMMve (SDDMM and the\n"
      "                      GAT chain included)\n"
      "  -h, --help\n",
      kNoFlushBackToBack);
}

int fail(const std::string &message, int code = 2) {
  std::fprintf(stderr, "gnn-bench: error: %s\n", message.c_str());
  return code;
}

std::vector<std::string> splitList(const std::string &text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ','))
    if (!item.empty())
      items.push_back(item);
  return items;
}

bool parseInt(const std::string &text, long long &value) {
  char *end = nullptr;
  value = std::strtoll(text.c_str(), &end, 10);
  return !text.empty() && end && *end == '\0';
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

struct Options {
  std::string datasets, outFile, dumpDir, cacheDir;
  bool relabel = true, quick = false, dumpOnly = false, cusparse = true;
  bool gnncSddmm = true, gat = true, gatherBound = true;
  int64_t gatWidth = 64;
  std::vector<int> rmatScales{18, 19, 20, 21, 22};
  std::set<std::string> onlyGraphs;
  std::vector<std::string> orders;
  std::vector<int64_t> widths{32, 64, 128};
  std::vector<ElementType> types{ElementType::F32, ElementType::F16,
                                 ElementType::BF16};
  size_t schedules = 4;
  int64_t largeNnz = 30000000;
  size_t largeSchedules = 2;
  double timeLimit = 0;
  std::vector<std::string> batches;
  std::vector<LayerKind> layers{LayerKind::Gcn, LayerKind::Gin};
  bool layerBackward = true;
  std::vector<Reduce> readouts{Reduce::Sum, Reduce::Mean, Reduce::Max};
  std::string dumpBatchesDir;
  std::vector<std::string> snapshotSeries;
  std::vector<int64_t> groupSizes{2, 4, 8};
  /// --group auto: also the size tuning::chooseSnapshotGroup picks.
  bool tunedGroup = false;
  std::vector<std::string> segmentSets;
  SegmentCaseOptions segmentOptions;
  bool offsets64 = true;
  CaseOptions caseOptions;
  TimingOptions timing;
  size_t copyMiB = 1024;
};

/// Parses the command line; returns an error message or "" (and sets
/// `help` for --help).
std::string parseArgs(int argc, char **argv, Options &o, bool &help) {
  bool explicitRmat = false, explicitGraphs = false, explicitWidths = false,
       explicitTypes = false, explicitSchedules = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&](std::string &value) {
      if (i + 1 >= argc)
        return false;
      value = argv[++i];
      return true;
    };
    std::string v;
    long long n = 0;
    if (arg == "-h" || arg == "--help") {
      help = true;
      return "";
    } else if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--dump-only") {
      o.dumpOnly = true;
    } else if (arg == "--no-relabel") {
      o.relabel = false;
    } else if (arg == "--no-edge-values") {
      o.caseOptions.edgeValues = false;
    } else if (arg == "--no-sddmm") {
      o.caseOptions.sddmm = false;
    } else if (arg == "--no-gnnc-sddmm") {
      o.gnncSddmm = false;
    } else if (arg == "--no-gat") {
      o.gat = false;
      o.caseOptions.gatChain = false;
    } else if (arg == "--no-cusparse") {
      o.cusparse = false;
    } else if (arg == "--no-flush") {
      o.timing.flushL2 = false;
      o.timing.backToBack = kNoFlushBackToBack;
    } else if (arg == "--no-gather-bound") {
      o.gatherBound = false;
    } else if (arg == "--no-layer-backward") {
      o.layerBackward = false;
    } else if (!next(v)) {
      return "unknown option or missing value: '" + arg + "'";
    } else if (arg == "--datasets") {
      o.datasets = v;
    } else if (arg == "--batched") {
      o.batches = splitList(v);
    } else if (arg == "--layers") {
      o.layers.clear();
      if (v != "none")
        for (const std::string &s : splitList(v)) {
          auto kind = parseLayerKind(s);
          if (!kind)
            return "--layers: " + kind.message();
          o.layers.push_back(*kind);
        }
    } else if (arg == "--readouts") {
      o.readouts.clear();
      if (v != "none")
        for (const std::string &s : splitList(v)) {
          std::optional<Reduce> reduce = parseReduce(s);
          if (!reduce)
            return "--readouts: unknown reduction '" + s +
                   "' (expected sum, mean or max)";
          o.readouts.push_back(*reduce);
        }
    } else if (arg == "--dump-batches") {
      o.dumpBatchesDir = v;
    } else if (arg == "--snapshots") {
      o.snapshotSeries = splitList(v);
    } else if (arg == "--segments") {
      o.segmentSets = splitList(v);
      if (o.segmentSets.empty())
        return "--segments: expected set names";
    } else if (arg == "--dims") {
      o.segmentOptions.dims.clear();
      for (const std::string &s : splitList(v)) {
        if (!parseInt(s, n) || n < 1 || n > gnnc::limits::kMaxTensorCoreWidth)
          return "--dims: bad K = M '" + s + "' (1 to " +
                 std::to_string(gnnc::limits::kMaxTensorCoreWidth) + ")";
        o.segmentOptions.dims.push_back(n);
      }
    } else if (arg == "--dtypes") {
      o.segmentOptions.dtypes.clear();
      for (const std::string &s : splitList(v)) {
        auto dtype = parseSegmentDtype(s);
        if (!dtype)
          return "--dtypes: " + dtype.message();
        o.segmentOptions.dtypes.push_back(s);
      }
    } else if (arg == "--sweep") {
      if (!parseInt(v, n) || n < 1 || n > 64)
        return "--sweep: expected 1 to 64";
      o.segmentOptions.sweep = static_cast<size_t>(n);
    } else if (arg == "--check-rows") {
      if (!parseInt(v, n) || n < 1 || n > 1000000)
        return "--check-rows: expected 1 to 1000000";
      o.segmentOptions.checkRows = n;
    } else if (arg == "--group") {
      o.groupSizes.clear();
      o.tunedGroup = false;
      for (const std::string &s : splitList(v)) {
        if (s == "auto") {
          o.tunedGroup = true;
          continue;
        }
        if (!parseInt(s, n) || n < 1 || n > gnnc::limits::kMaxSnapshots)
          return "--group: bad group size '" + s + "' (1 to " +
                 std::to_string(gnnc::limits::kMaxSnapshots) + ")";
        o.groupSizes.push_back(n);
      }
      if (o.groupSizes.empty() && !o.tunedGroup)
        return "--group: no group size given (sizes from 1 to " +
               std::to_string(gnnc::limits::kMaxSnapshots) + ", or auto)";
    } else if (arg == "--out") {
      o.outFile = v;
    } else if (arg == "--dump-graphs") {
      o.dumpDir = v;
    } else if (arg == "--cache-dir") {
      o.cacheDir = v;
    } else if (arg == "--rmat") {
      explicitRmat = true;
      o.rmatScales.clear();
      if (v != "none")
        for (const std::string &s : splitList(v)) {
          if (!parseInt(s, n) || n < 1 || n > 30)
            return "--rmat: bad scale '" + s + "' (1 to 30)";
          o.rmatScales.push_back(static_cast<int>(n));
        }
    } else if (arg == "--orders") {
      o.orders.clear();
      for (const std::string &s : splitList(v)) {
        if (!graph::isKnownOrder(s))
          return "--orders: unknown order '" + s +
                 "' (expected degree, rcm or community)";
        o.orders.push_back(s);
      }
    } else if (arg == "--graphs") {
      explicitGraphs = true;
      for (const std::string &s : splitList(v))
        o.onlyGraphs.insert(s);
    } else if (arg == "--widths") {
      explicitWidths = true;
      o.widths.clear();
      for (const std::string &s : splitList(v)) {
        if (!parseInt(s, n) || n < 1 || n > 4096)
          return "--widths: bad width '" + s + "'";
        o.widths.push_back(n);
      }
    } else if (arg == "--types") {
      explicitTypes = true;
      o.types.clear();
      for (const std::string &s : splitList(v)) {
        auto type = parseElementType(s);
        if (!type)
          return "--types: " + type.message();
        o.types.push_back(*type);
      }
    } else if (arg == "--schedules") {
      explicitSchedules = true;
      if (!parseInt(v, n) || n < 1 || n > 24)
        return "--schedules: expected 1 to 24";
      o.schedules = static_cast<size_t>(n);
    } else if (arg == "--gat-width") {
      if (!parseInt(v, n) || n < 1 || n > 4096)
        return "--gat-width: bad width '" + v + "'";
      o.gatWidth = n;
    } else if (arg == "--large-nnz") {
      if (!parseInt(v, n) || n < 0)
        return "--large-nnz: expected a count";
      o.largeNnz = n;
    } else if (arg == "--large-schedules") {
      if (!parseInt(v, n) || n < 1 || n > 24)
        return "--large-schedules: expected 1 to 24";
      o.largeSchedules = static_cast<size_t>(n);
    } else if (arg == "--time-limit") {
      if (!parseInt(v, n) || n < 0)
        return "--time-limit: expected seconds";
      o.timeLimit = static_cast<double>(n);
    } else if (arg == "--offsets") {
      if (v != "i64" && v != "i32")
        return "--offsets: expected i64 or i32";
      o.offsets64 = v == "i64";
    } else if (arg == "--check") {
      if (v != "shared" && v != "per-kernel")
        return "--check: expected shared or per-kernel";
      o.caseOptions.checkMode =
          v == "shared" ? CheckMode::Shared : CheckMode::PerKernel;
    } else if (arg == "--warmups") {
      if (!parseInt(v, n) || n < 0 || n > 1000)
        return "--warmups: expected 0 to 1000";
      o.timing.warmups = static_cast<int>(n);
    } else if (arg == "--runs") {
      if (!parseInt(v, n) || n < 1 || n > 100000)
        return "--runs: expected a positive count";
      o.timing.runs = static_cast<int>(n);
    } else if (arg == "--copy-mib") {
      if (!parseInt(v, n) || n < 1 || n > (1 << 20))
        return "--copy-mib: expected a positive size";
      o.copyMiB = static_cast<size_t>(n);
    } else if (arg == "--seed") {
      if (!parseInt(v, n))
        return "--seed: expected an integer";
      o.caseOptions.seed = static_cast<uint64_t>(n);
    } else {
      return "unknown option '" + arg + "'";
    }
  }
  if (o.quick) {
    if (!explicitRmat)
      o.rmatScales = {18};
    if (!explicitGraphs)
      o.onlyGraphs = {"cora_planetoid", "rmat18"};
    if (!explicitWidths)
      o.widths = {64};
    if (!explicitTypes)
      o.types = {ElementType::F32, ElementType::F16};
    if (!explicitSchedules)
      o.schedules = 1;
    o.caseOptions.edgeValues = false;
    o.relabel = false;
  }
  if (!o.batches.empty() && !explicitWidths)
    o.widths = {16, 32, 64, 128, 256};
  if (!o.snapshotSeries.empty() && !explicitWidths)
    o.widths = {8, 16, 32, 64};
  if (!o.dumpBatchesDir.empty() && o.batches.empty())
    return "--dump-batches needs --batched LIST (the batches it writes)";
  if (o.dumpOnly && o.dumpDir.empty() && o.dumpBatchesDir.empty())
    return "--dump-only needs --dump-graphs DIR or --dump-batches DIR";
  return "";
}

/// The graphs to run, in order: datasets (each with its relabeled copy),
/// then R-MAT by increasing scale; filtered by --graphs.
Expected<std::vector<GraphSource>> graphSources(const Options &o) {
  std::vector<GraphSource> all;
  if (!o.datasets.empty()) {
    std::vector<std::string> skipped;
    auto found = datasetSources(o.datasets, o.relabel, &skipped, o.orders);
    if (!found)
      return found.status();
    for (const std::string &s : skipped)
      std::printf("skip     %s\n", s.c_str());
    all = found.take();
  }
  for (int scale : o.rmatScales)
    all.push_back({"rmat" + std::to_string(scale), "", scale, false});
  if (o.onlyGraphs.empty())
    return all;
  std::vector<GraphSource> chosen;
  for (const GraphSource &s : all)
    if (o.onlyGraphs.count(s.name))
      chosen.push_back(s);
  return chosen;
}

json optionsJson(const Options &o) {
  json types = json::array();
  for (ElementType t : o.types)
    types.push_back(elementTypeName(t));
  return {{"widths", o.widths},
          {"types", types},
          {"rmat_scales", o.rmatScales},
          {"rmat_edge_factor", 16},
          {"relabel", o.relabel},
          {"relabel_seed", kRelabelSeed},
          {"orders", o.orders},
          {"schedules", o.schedules},
          {"large_nnz", o.largeNnz},
          {"large_schedules", o.largeSchedules},
          {"time_limit_seconds", o.timeLimit},
          {"edge_values", o.caseOptions.edgeValues},
          {"sddmm", o.caseOptions.sddmm},
          {"gnnc_sddmm", o.gnncSddmm},
          {"gat_chain", o.gat},
          {"gat_width", o.gatWidth},
          {"gat_heads", 1},
          {"cusparse", o.cusparse},
          {"gnnc_offsets", o.offsets64 ? "i64" : "i32"},
          {"check", o.caseOptions.checkMode == CheckMode::Shared
                        ? "shared"
                        : "per-kernel"},
          {"warmups", o.timing.warmups},
          {"runs", o.timing.runs},
          {"flush_l2", o.timing.flushL2},
          {"back_to_back", rt::launchesPerRun(o.timing)},
          {"gather_bound", o.gatherBound},
          {"seed", o.caseOptions.seed},
          {"quick", o.quick}};
}

Status writeText(const std::string &path, const std::string &text) {
  std::ofstream file(path, std::ios::binary);
  file << text;
  file.close();
  if (!file)
    return Status::error(path + ": write failed");
  return Status::ok();
}

/// Writes the results document to `path` (when one was given) and says so.
Status writeResults(const std::string &path, const json &doc) {
  if (path.empty())
    return Status::ok();
  GNNC_RETURN_IF_ERROR(writeText(path, doc.dump(1) + "\n"));
  std::printf("wrote    %s\n", path.c_str());
  return Status::ok();
}

} // namespace

int main(int argc, char **argv) {
  gnnc::tools::installFailureHandlers("gnn-bench");
  Options o;
  bool help = false;
  std::string error = parseArgs(argc, argv, o, help);
  if (help) {
    usage();
    return 0;
  }
  if (!error.empty()) {
    usage();
    return fail(error);
  }
  const auto start = std::chrono::steady_clock::now();

  std::string why;
  if (!o.dumpOnly && !rt::gpuAvailable(&why))
    return fail("no GPU: " + why, 3);
  // Batches of small graphs: loaded (and, with --dump-batches, written)
  // before anything is timed.
  std::vector<std::pair<std::string, Expected<graph::BatchedGraph>>>
      loadedBatches;
  if (!o.dumpBatchesDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.dumpBatchesDir, ec);
    if (ec)
      return fail(o.dumpBatchesDir + ": " + ec.message());
  }
  int batchLoadFailures = 0;
  for (const std::string &name : o.batches) {
    auto batch = loadBatch(name, o.datasets, o.caseOptions.seed);
    if (!batch) {
      ++batchLoadFailures;
    } else if (!o.dumpBatchesDir.empty()) {
      Status written = dumpBatch(*batch, o.dumpBatchesDir, name);
      if (!written)
        return fail("--dump-batches: " + written.message());
      std::printf("dumped   %s (%lld graphs, %lld nodes, %lld non-zeros) to "
                  "%s/%s.npz\n",
                  name.c_str(), (long long)batch->numGraphs(),
                  (long long)batch->graph.numRows,
                  (long long)batch->graph.nnz(), o.dumpBatchesDir.c_str(),
                  name.c_str());
    }
    loadedBatches.emplace_back(name, std::move(batch));
  }
  if (o.dumpOnly && !o.batches.empty()) {
    for (const auto &[name, batch] : loadedBatches)
      if (!batch)
        std::printf("skipped  %s: %s\n", name.c_str(), batch.message().c_str());
    return batchLoadFailures ? 1 : 0;
  }
  if (!o.dumpDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.dumpDir, ec);
    if (ec)
      return fail(o.dumpDir + ": " + ec.message());
  }
  auto sources = graphSources(o);
  if (!sources)
    return fail(sources.message());
  if (sources->empty() && o.segmentSets.empty())
    return fail("no graphs to run (check --datasets, --rmat and --graphs)");

  // The device, its yardstick, and the kernels.
  std::optional<Bench> bench;
  std::optional<CudaLibraries> libraries;
  GatherBound gatherBound;
  json doc;
  doc["tool"] = "gnn-bench";
  doc["format_version"] = 1;
  doc["date"] = utcTimestamp();
  doc["options"] = optionsJson(o);
  std::map<std::pair<int, int64_t>, std::vector<BenchKernel>> kernels;
  std::map<std::pair<int, int64_t>, std::string> compileErrors;
  if (!o.dumpOnly) {
    auto created = Bench::create(o.timing, o.cacheDir);
    if (!created)
      return fail(created.message(), 3);
    bench.emplace(created.take());
    const rt::Device &device = bench->device();
    auto driver = rt::driverVersion();
    json deviceJson = {{"name", device.name()},
                       {"sm_count", device.smCount()},
                       {"l2_bytes", device.l2Bytes()},
                       {"total_memory_bytes", device.totalMemory()},
                       {"compute_capability", device.archString()},
                       {"driver_version", driver ? *driver : 0},
                       {"nvrtc_version", rt::nvrtcVersionString()},
                       {"host_threads", graph::hostThreads()}};
    std::printf("device   %s (%s), %d SMs, %.0f MB L2, %.1f GiB; driver %d\n",
                device.name().c_str(), device.archString().c_str(),
                device.smCount(), device.l2Bytes() / 1e6,
                device.totalMemory() / double(1 << 30), driver ? *driver : 0);
    if (o.cusparse) {
      auto libs = CudaLibraries::create(*bench);
      if (libs) {
        libraries.emplace(libs.take());
        deviceJson["cuda_runtime_version"] = libraries->runtimeVersion();
        deviceJson["cusparse_version"] = libraries->cusparseVersion();
      } else {
        std::printf("warning  no cuSPARSE in this run: %s\n",
                    libs.message().c_str());
        doc["cusparse_error"] = libs.message();
      }
    }
    doc["device"] = deviceJson;

    // Copy bandwidth: the yardstick for the bandwidth fractions.
    double copyGbs = 0;
    if (libraries) {
      size_t bytes = o.copyMiB << 20;
      auto copy = timeDeviceCopy(*bench, bytes, &copyGbs);
      if (copy) {
        doc["copy"] = {{"bytes_each_way", bytes},
                       {"gbs", copyGbs},
                       {"time_ms", toJson(*copy)},
                       {"method", "cudaMemcpyAsync device to device; GB/s "
                                  "count read + write bytes (2 x size), "
                                  "median"}};
        std::printf("copy     %.0f GB/s (read + write, %zu MiB, median of "
                    "%d)\n",
                    copyGbs, o.copyMiB, copy->runs);
      } else {
        doc["copy"] = {{"error", copy.message()}};
        std::printf("warning  copy bandwidth: %s\n", copy.message().c_str());
      }
    }
    doc["copy_bandwidth_gbs"] = copyGbs;
    o.caseOptions.copyGbs = copyGbs;
    // The gather stream of every SpMM case (GatherBound.h).
    if (o.gatherBound)
      o.caseOptions.gatherBound = &gatherBound;

    if (!o.segmentSets.empty()) {
      // Segmented matmuls: a run of their own, in the record format the
      // PyTorch side shares ({"device", "date", "records": [...]}).
      o.segmentOptions.seed = o.caseOptions.seed;
      std::vector<std::string> names;
      for (const std::string &name : o.segmentSets) {
        if (name != "all") {
          names.push_back(name);
          continue;
        }
        auto found = tuning::segmentSetNames(o.datasets);
        if (found)
          names.insert(names.end(), found->begin(), found->end());
        else
          std::printf("note     --segments all: %s\n", found.message().c_str());
        names.push_back("gen100x1000");
      }
      std::optional<Cublas> cublas;
      json segDoc;
      segDoc["device"] = device.name();
      segDoc["date"] = doc["date"];
      if (o.cusparse) {
        auto created = Cublas::create(*bench);
        if (created) {
          cublas.emplace(created.take());
          deviceJson["cublas_version"] = cublas->version();
        } else {
          std::printf("warning  no cuBLAS in this run: %s\n",
                      created.message().c_str());
          segDoc["cublas_error"] = created.message();
        }
      }
      const tuning::GpuModel gpu = tuning::fromDevice(device);
      segDoc["device_info"] = deviceJson;
      segDoc["copy_gbs"] = copyGbs;
      segDoc["tensor_core_peak_flops"] = {
          {"tf32", tuning::tensorCorePeakFlops(gpu, ElementType::F32)},
          {"f16", tuning::tensorCorePeakFlops(gpu, ElementType::F16)},
          {"source", "datasheet dense rate per SM and clock x SMs x clock "
                     "of the cost model (SegmentModel.h)"}};
      segDoc["options"] = {{"dims", o.segmentOptions.dims},
                           {"dtypes", o.segmentOptions.dtypes},
                           {"sweep", o.segmentOptions.sweep},
                           {"check_rows", o.segmentOptions.checkRows},
                           {"warmups", o.timing.warmups},
                           {"runs", o.timing.runs},
                           {"flush_l2", o.timing.flushL2},
                           {"back_to_back", rt::launchesPerRun(o.timing)},
                           {"seed", o.caseOptions.seed}};
      json records = json::array(), sweeps = json::array(),
           notes = json::array();
      int failures = 0;
      for (const std::string &name : names) {
        auto seg = tuning::loadSegmentSet(name, o.datasets, o.caseOptions.seed);
        if (!seg) {
          std::printf("skipped  %s: %s\n", name.c_str(), seg.message().c_str());
          notes.push_back(
              {{"set", name}, {"note", "skipped: " + seg.message()}});
          continue;
        }
        const std::string setName = std::filesystem::path(name).stem().string();
        runSegmentSet(*bench, cublas ? &*cublas : nullptr, setName, *seg,
                      o.segmentOptions, records, sweeps, notes, failures);
        // After every set: a run cut short keeps what it measured.
        segDoc["records"] = records;
        segDoc["sweeps"] = sweeps;
        segDoc["notes"] = notes;
        if (!o.outFile.empty())
          (void)writeText(o.outFile, segDoc.dump(1) + "\n");
      }
      segDoc["records"] = records;
      segDoc["sweeps"] = sweeps;
      segDoc["notes"] = notes;
      segDoc["failures"] = failures;
      segDoc["wall_seconds"] = secondsSince(start);
      if (Status written = writeResults(o.outFile, segDoc); !written)
        return fail(written.message(), 1);
      std::printf("done     %zu segment records in %.0f s; %d failure%s\n",
                  records.size(), secondsSince(start), failures,
                  failures == 1 ? "" : "s");
      return failures ? 1 : 0;
    }

    if (!o.snapshotSeries.empty()) {
      // Series of snapshots: a run of their own.
      json cases = json::array();
      int failures = 0;
      for (const std::string &name : o.snapshotSeries) {
        auto series = loadSnapshotSeries(name, o.datasets, o.caseOptions.seed);
        if (!series) {
          std::printf("skipped  %s: %s\n", name.c_str(),
                      series.message().c_str());
          cases.push_back({{"series", name}, {"skipped", series.message()}});
          continue;
        }
        auto keep = [&](json record) {
          cases.push_back(std::move(record));
          doc["snapshot_cases"] = cases;
          if (!o.outFile.empty())
            (void)writeText(o.outFile, doc.dump(1) + "\n");
        };
        CudaLibraries *libs = libraries ? &*libraries : nullptr;
        for (int64_t group : o.groupSizes)
          for (ElementType type : o.types)
            for (int64_t width : o.widths)
              keep(runSnapshotCase(*bench, libs, name, *series, group, type,
                                   width, o.caseOptions.seed, failures));
        if (o.tunedGroup)
          for (ElementType type : o.types)
            for (int64_t width : o.widths)
              keep(runTunedSnapshotCase(*bench, libs, name, *series, type,
                                        width, o.caseOptions.seed, failures));
      }
      doc["snapshot_cases"] = cases;
      doc["failures"] = failures;
      doc["wall_seconds"] = secondsSince(start);
      if (Status written = writeResults(o.outFile, doc); !written)
        return fail(written.message(), 1);
      std::printf("done     %zu snapshot cases in %.0f s; %d failure%s\n",
                  cases.size(), secondsSince(start), failures,
                  failures == 1 ? "" : "s");
      return failures ? 1 : 0;
    }

    if (!o.batches.empty()) {
      // Batches of small graphs: a run of their own.
      json batchedCases = json::array(), layerCases = json::array(),
           readoutCases = json::array();
      int failures = 0;
      std::optional<CublasLt> lt;
      if (!o.layers.empty()) {
        auto created = CublasLt::create(*bench);
        if (created) {
          lt.emplace(created.take());
          deviceJson["cublaslt_version"] = lt->version();
          doc["device"] = deviceJson;
        } else {
          std::printf("warning  no cuBLASLt in this run (layers time the "
                      "aggregation alone): %s\n",
                      created.message().c_str());
          doc["cublaslt_error"] = created.message();
        }
      }
      json layerNames = json::array(), readoutNames = json::array();
      for (LayerKind kind : o.layers)
        layerNames.push_back(layerKindName(kind));
      for (Reduce reduce : o.readouts)
        readoutNames.push_back(reduceName(reduce));
      doc["options"]["batched_layers"] = layerNames;
      doc["options"]["batched_readouts"] = readoutNames;
      for (const auto &[name, batch] : loadedBatches) {
        if (!batch) {
          std::printf("skipped  %s: %s\n", name.c_str(),
                      batch.message().c_str());
          batchedCases.push_back(
              {{"batch", name}, {"skipped", batch.message()}});
          continue;
        }
        for (ElementType type : o.types)
          for (int64_t width : o.widths) {
            batchedCases.push_back(runBatchedCase(
                *bench, libraries ? &*libraries : nullptr, name, *batch, type,
                width, copyGbs, o.caseOptions.seed, failures));
            for (LayerKind kind : o.layers)
              layerCases.push_back(runBatchedLayerCase(
                  *bench, lt ? &*lt : nullptr, name, *batch, kind, type, width,
                  copyGbs, o.caseOptions.seed, failures, o.layerBackward));
            if (!o.readouts.empty())
              for (json &r : runBatchedReadoutCases(
                       *bench, name, *batch, type, width, o.readouts, copyGbs,
                       o.caseOptions.seed, failures))
                readoutCases.push_back(std::move(r));
            // After every case: a run cut short keeps what it measured.
            doc["batched_cases"] = batchedCases;
            doc["batched_layer_cases"] = layerCases;
            doc["batched_readout_cases"] = readoutCases;
            if (!o.outFile.empty())
              (void)writeText(o.outFile, doc.dump(1) + "\n");
          }
      }
      doc["batched_cases"] = batchedCases;
      doc["batched_layer_cases"] = layerCases;
      doc["batched_readout_cases"] = readoutCases;
      doc["failures"] = failures;
      doc["wall_seconds"] = secondsSince(start);
      if (Status written = writeResults(o.outFile, doc); !written)
        return fail(written.message(), 1);
      std::printf("done     %zu batched, %zu layer and %zu readout cases in "
                  "%.0f s; %d failure%s\n",
                  batchedCases.size(), layerCases.size(), readoutCases.size(),
                  secondsSince(start), failures, failures == 1 ? "" : "s");
      return failures ? 1 : 0;
    }

    for (ElementType type : o.types)
      for (int64_t width : o.widths) {
        auto key = std::make_pair(static_cast<int>(type), width);
        // SDDMM and the GAT chain run where cuSPARSE SDDMM does (f32, f16).
        const bool sddmmType =
            type == ElementType::F32 || type == ElementType::F16;
        KernelSetOptions set;
        set.spmmSchedules = o.schedules;
        set.edgeValues = o.caseOptions.edgeValues;
        set.sddmmSchedules = o.gnncSddmm && sddmmType ? o.schedules : 0;
        set.gatChain = o.gat && sddmmType && width == o.gatWidth;
        set.offsets64 = o.offsets64;
        auto compiled = compileBenchKernels(type, width, set);
        if (!compiled) {
          compileErrors[key] = compiled.message();
          std::printf("error    compiling %s width %lld: %s\n",
                      elementTypeName(type), (long long)width,
                      compiled.message().c_str());
          continue;
        }
        kernels[key] = compiled.take();
        // Load now so that NVRTC time is not mixed into the cases.
        auto loadStart = std::chrono::steady_clock::now();
        for (const BenchKernel &k : kernels[key]) {
          auto loaded = bench->runtime().load(k.spec);
          if (!loaded)
            std::printf("error    loading %s: %s\n", k.spec.name.c_str(),
                        loaded.message().c_str());
        }
        std::printf("kernels  %s width %lld: %zu kernels ready in %.1f s\n",
                    elementTypeName(type), (long long)width,
                    kernels[key].size(), secondsSince(loadStart));
      }
    std::printf("\n%s\n", tableHeader().c_str());
  }

  json cases = json::array(), graphsJson = json::array(),
       dumped = json::array(), skippedCases = json::array();
  auto overTime = [&]() {
    return o.timeLimit > 0 && secondsSince(start) > o.timeLimit;
  };
  int failures = 0;
  size_t peakUsed = 0;
  graph::CsrGraph base;
  for (const GraphSource &source : *sources) {
    auto graphStart = std::chrono::steady_clock::now();
    double orderSeconds = 0.0;
    auto loaded = loadGraph(source, &base, &orderSeconds);
    if (!loaded) {
      std::printf("error    %s: %s\n", source.name.c_str(),
                  loaded.message().c_str());
      graphsJson.push_back(
          {{"name", source.name}, {"error", loaded.message()}});
      ++failures;
      continue;
    }
    const graph::CsrGraph &g = *loaded;
    graph::Stats stats = graph::computeStats(g);
    double loadSeconds = secondsSince(graphStart);
    json graphJson = {
        {"name", g.name},
        {"source", source.path.empty()
                       ? "generateRmat(" + std::to_string(source.rmatScale) +
                             ", 16, " +
                             std::to_string(rmatSeed(source.rmatScale)) + ")"
                       : source.path},
        {"relabeled", source.relabel},
        {"order", source.order},
        {"order_seconds", orderSeconds},
        {"num_rows", g.numRows},
        {"num_cols", g.numCols},
        {"nnz", g.nnz()},
        {"max_degree", stats.maxDegree},
        {"mean_degree", stats.meanDegree},
        {"empty_rows", stats.emptyRows},
        {"stats", graph::formatStats(stats)},
        {"load_seconds", loadSeconds}};
    if (!o.dumpDir.empty()) {
      Status written = writeGraphNpy(g, o.dumpDir, g.name);
      if (!written) {
        std::printf("error    dumping %s: %s\n", g.name.c_str(),
                    written.message().c_str());
        ++failures;
      } else {
        dumped.push_back({{"name", g.name},
                          {"num_rows", g.numRows},
                          {"num_cols", g.numCols},
                          {"nnz", g.nnz()},
                          {"indptr", g.name + ".indptr.npy"},
                          {"indices", g.name + ".indices.npy"}});
      }
    }
    graphsJson.push_back(graphJson);
    if (o.dumpOnly) {
      std::printf("graph    %-28s %s (%.1f s)\n", g.name.c_str(),
                  graph::formatStats(stats).c_str(), loadSeconds);
      continue;
    }

    if (overTime()) {
      std::printf("skip     %s: past the time limit of %.0f s\n",
                  g.name.c_str(), o.timeLimit);
      skippedCases.push_back({{"graph", g.name}, {"why", "time limit"}});
      continue;
    }
    auto graphs = uploadGraphs(g, o.offsets64);
    if (!graphs) {
      std::printf("error    %s: %s\n", g.name.c_str(),
                  graphs.message().c_str());
      ++failures;
      continue;
    }
    for (ElementType type : o.types)
      for (int64_t width : o.widths) {
        if (overTime()) {
          skippedCases.push_back({{"graph", g.name},
                                  {"type", elementTypeName(type)},
                                  {"width", width},
                                  {"why", "time limit"}});
          continue;
        }
        auto key = std::make_pair(static_cast<int>(type), width);
        // Large graphs run the first schedules only (and SpMMve and the
        // GAT chain).
        std::vector<BenchKernel> chosen;
        if (auto found = kernels.find(key); found != kernels.end()) {
          size_t spmmVariants = 0, sddmmVariants = 0;
          size_t limit = g.nnz() > o.largeNnz ? o.largeSchedules : o.schedules;
          for (const BenchKernel &k : found->second) {
            const KernelRequest &r = k.request;
            if (r.op == BenchOp::Spmm && !r.edgeValues)
              if (spmmVariants++ >= limit)
                continue;
            if (r.op == BenchOp::SddmmDot && sddmmVariants++ >= limit)
              continue;
            chosen.push_back(k);
          }
        }
        auto errorIt = compileErrors.find(key);
        CaseOutcome outcome = runCase(
            *bench, libraries ? &*libraries : nullptr, *graphs, type, width,
            chosen, errorIt == compileErrors.end() ? "" : errorIt->second,
            o.caseOptions);
        failures += outcome.failures;
        peakUsed = std::max<size_t>(
            peakUsed,
            outcome.record.value("peak_device_used_bytes", size_t(0)));
        cases.push_back(std::move(outcome.record));
        std::printf("%s\n", outcome.row.c_str());
        std::fflush(stdout);
      }
    std::printf("         (%s: %.1f s, %.0f s so far)\n", g.name.c_str(),
                secondsSince(graphStart), secondsSince(start));
  }

  if (!o.dumpDir.empty()) {
    json types = json::array();
    for (ElementType t : o.types)
      types.push_back(elementTypeName(t));
    json manifest = {{"graphs", dumped},
                     {"widths", o.widths},
                     {"types", types},
                     {"warmups", o.timing.warmups},
                     {"runs", o.timing.runs},
                     {"seed", o.caseOptions.seed},
                     {"gat_width", o.gat ? o.gatWidth : 0}};
    Status written =
        writeText(o.dumpDir + "/graphs.json", manifest.dump(1) + "\n");
    if (!written)
      return fail(written.message(), 1);
    std::printf("dumped   %zu graphs to %s\n", dumped.size(),
                o.dumpDir.c_str());
  }
  if (o.dumpOnly)
    return failures ? 1 : 0;

  doc["graphs"] = graphsJson;
  doc["cases"] = cases;
  doc["skipped"] = skippedCases;
  doc["failures"] = failures;
  doc["peak_device_used_bytes"] = peakUsed;
  doc["wall_seconds"] = secondsSince(start);
  if (Status written = writeResults(o.outFile, doc); !written)
    return fail(written.message(), 1);
  std::printf("done     %zu cases in %.0f s; %zu skipped; %d failure%s\n",
              cases.size(), secondsSince(start), skippedCases.size(), failures,
              failures == 1 ? "" : "s");
  if (failures) {
    std::fprintf(stderr,
                 "gnn-bench: %d gnnc kernel%s failed the check or did not "
                 "run (see \"status\" in the JSON)\n",
                 failures, failures == 1 ? "" : "s");
    return 1;
  }
  return 0;
}
