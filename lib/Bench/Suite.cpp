//===- Suite.cpp - The gnn-bench cases ------------------------------------===//
#include "gnnc/Bench/Suite.h"

#include "gnnc/Bench/Bytes.h"
#include "gnnc/Bench/Json.h"
#include "gnnc/graph/Readers.h"
#include "gnnc/graph/Reorder.h"
#include "gnnc/graph/Rmat.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

using namespace gnnc;
using namespace gnnc::bench;
using nlohmann::json;

namespace {

json shapeJson(const ByteCounts &bytes) {
  return {{"compulsory", bytes.compulsory}, {"gather", bytes.gather}};
}

json libraryJson(const LibraryResult &r, const ByteCounts &bytes,
                 double copyGbs) {
  json j;
  j["algorithm"] = r.algorithm;
  j["status"] = r.status;
  j["types"] = r.types;
  j["buffer_bytes"] = r.bufferBytes;
  if (!r.note.empty())
    j["note"] = r.note;
  j["checked"] = r.checked;
  if (r.checked) {
    j["check_ok"] = r.checkOk;
    j["check_report"] = r.checkReport;
  }
  if (r.timing) {
    j["time_ms"] = toJson(*r.timing);
    j.update(bandwidthJson(bytes, r.timing->medianMs, copyGbs));
  } else {
    j["time_ms"] = nullptr;
  }
  return j;
}

/// The fastest timed entry of `results` (nullptr if none).
const LibraryResult *fastest(const std::vector<LibraryResult> &results) {
  const LibraryResult *best = nullptr;
  for (const LibraryResult &r : results)
    if (r.timing && (!best || r.timing->medianMs < best->timing->medianMs))
      best = &r;
  return best;
}

/// Keeps in `best` the fastest result that passed, or the first failure
/// (a wrong or failed kernel fails the case).
void keepFastest(std::optional<KernelResult> &best, const KernelResult &r) {
  const bool failed = r.status != "ok";
  const bool faster = r.timing && (!best || !best->timing ||
                                   r.timing->medianMs < best->timing->medianMs);
  if (!best || (failed && best->status == "ok") ||
      (!failed && best->status == "ok" && faster))
    best = r;
}

/// The record of a GAT result (the chain's or the fused kernel's): one
/// head of `width` features, `ops` saying what ran.
json gatJson(const KernelResult &r, int64_t width, ElementType type,
             const char *ops) {
  json j = toJson(r, ByteCounts(), 0, 0, 0);
  for (const char *key :
       {"bytes_compulsory", "bytes_gather", "gbs_compulsory", "gbs_gather"})
    j.erase(key);
  j["heads"] = 1;
  j["width"] = width;
  j["leaky_relu"] = kGatLeakySlope;
  j["ops"] = ops;
  j["tolerance"] = gatChainTolerance(type);
  return j;
}

} // namespace

std::string gnnc::bench::tableHeader() {
  char line[256];
  std::snprintf(line, sizeof(line),
                "%-28s %-4s %4s | %9s %-8s | %9s | %9s %-8s | %6s %6s | "
                "%7s %5s %7s %5s | %5s",
                "graph", "type", "w", "gnnc ms", "sched", "cuSP def",
                "cuSP best", "alg", "x def", "x best", "GB/s c", "frac",
                "GB/s g", "frac", "bound");
  return line;
}

CaseOutcome gnnc::bench::runCase(Bench &bench, CudaLibraries *libraries,
                                 const DeviceGraphs &graphs, ElementType type,
                                 int64_t width,
                                 const std::vector<BenchKernel> &kernels,
                                 const std::string &compileError,
                                 const CaseOptions &options) {
  const graph::CsrGraph &g = *graphs.host;
  CaseOutcome out;
  json &rec = out.record;
  rec["graph"] = g.name;
  rec["type"] = elementTypeName(type);
  rec["width"] = width;
  rec["num_rows"] = g.numRows;
  rec["num_cols"] = g.numCols;
  rec["nnz"] = g.nnz();
  bench.resetPeak();

  ProblemShape shapeV;
  shapeV.numRows = g.numRows;
  shapeV.numCols = g.numCols;
  shapeV.nnz = g.nnz();
  shapeV.width = width;
  shapeV.elementBytes = elementSize(type);
  shapeV.offsetBytes = graphs.gnnc.offsets64 ? 8 : 4;
  shapeV.indexBytes = 4;
  ProblemShape shapeVe = shapeV;
  shapeVe.edgeValues = true;
  // cuSPARSE always reads a value per edge and 32-bit offsets.
  ProblemShape shapeCusparse = shapeVe;
  shapeCusparse.offsetBytes = 4;
  const ByteCounts bytesV = spmmBytes(shapeV), bytesVe = spmmBytes(shapeVe),
                   bytesCusparse = spmmBytes(shapeCusparse);
  rec["bytes"] = {{"gnnc_spmm_v", shapeJson(bytesV)},
                  {"gnnc_spmm_ve", shapeJson(bytesVe)},
                  {"cusparse_spmm", shapeJson(bytesCusparse)}};
  rec["gnnc_offsets"] = graphs.gnnc.offsets64 ? "i64" : "i32";

  std::vector<KernelResult> gnncResults, sddmmResults;
  std::optional<KernelResult> gatResult;
  // The fused GAT kernels (gnn.spmm with attention); gatFused is the
  // fastest that passed, or the first failure.
  std::vector<KernelResult> fusedResults;
  std::optional<KernelResult> gatFused;
  std::vector<LibraryResult> spmmResults;
  double referenceSeconds = 0, sddmmSeconds = 0, gatSeconds = 0;
  // The gather stream of the case and the L2's gather bandwidth.
  std::optional<Expected<GatherRun>> gatherRun;
  std::optional<Expected<double>> l2Gbs;
  size_t problemBytes = 0;
  auto recordError = [&](const BenchKernel &k, const std::string &why) {
    KernelResult r;
    r.label = k.request.schedule.label;
    r.kernelName = k.spec.name;
    r.schedule = k.spec.schedule.str();
    r.edgeValues = k.request.edgeValues;
    r.status = "error";
    r.report = why;
    if (k.request.op == BenchOp::SddmmDot) {
      r.op = "sddmm";
      sddmmResults.push_back(r);
    } else if (k.request.op == BenchOp::GatFused) {
      r.op = "gat_fused";
      fusedResults.push_back(r);
    } else if (k.request.op != BenchOp::Spmm) {
      r.op = "gat_chain";
      if (!gatResult)
        gatResult = r;
    } else {
      gnncResults.push_back(r);
    }
  };
  auto isSpmm = [](const BenchKernel &k, bool edgeValues) {
    return k.request.op == BenchOp::Spmm && k.request.edgeValues == edgeValues;
  };
  // The GAT chain's kernels, when the case runs it.
  GatKernels gat;
  std::vector<const BenchKernel *> aggregates, fused;
  std::map<std::string, const rt::KernelSpec *> logitsByLabel;
  bool anySddmm = false;
  for (const BenchKernel &k : kernels) {
    anySddmm |= k.request.op == BenchOp::SddmmDot;
    if (k.request.op == BenchOp::GatLogits)
      logitsByLabel[k.request.schedule.label] = &k.spec;
    else if (k.request.op == BenchOp::GatSoftmax)
      gat.softmax = &k.spec;
    else if (k.request.op == BenchOp::GatAggregate)
      aggregates.push_back(&k);
    else if (k.request.op == BenchOp::GatFused)
      fused.push_back(&k);
  }
  if (logitsByLabel.count("default"))
    gat.logits = logitsByLabel["default"];
  const bool runGat =
      options.gatChain && (!logitsByLabel.empty() || gat.softmax ||
                           !aggregates.empty() || !fused.empty());
  if (!compileError.empty()) {
    KernelResult r;
    r.label = "default";
    r.status = "error";
    r.report = "compile: " + compileError;
    gnncResults.push_back(r);
  }

  {
    // SpMMv: the schedule variants and cuSPARSE on the same inputs. The host
    // arrays come from the last case and go back to the bench at the end;
    // the device buffers are freed at the end of this block.
    auto problem = makeSpmmProblem(graphs, type, width, false, options.seed,
                                   std::move(bench.spareHost()));
    if (!problem) {
      for (const BenchKernel &k : kernels)
        if (!isSpmm(k, true))
          recordError(k, "inputs: " + problem.message());
    } else {
      bench.sampleMemory();
      problemBytes = std::max(problemBytes, problem->deviceBytes());
      for (const BenchKernel &k : kernels)
        if (isSpmm(k, false))
          gnncResults.push_back(runGnncKernel(bench, k.spec, *problem,
                                              options.checkMode,
                                              k.request.schedule.label));
      if (libraries)
        spmmResults = libraries->spmm(bench, *problem);
      referenceSeconds += problem->referenceSeconds;
      if (options.gatherBound) {
        gatherRun = options.gatherBound->time(
            bench, graphs.gnnc.colIdx, g.colIdx.data(), g.nnz(), problem->x,
            problem->host.x.data(), type, width);
        l2Gbs = options.gatherBound->l2GatherGbs(bench, type, width);
      }
    }
    // SpMMve: the default schedule on the same features plus random edge
    // values (a new reference, in the same arrays).
    if (options.edgeValues) {
      bool any = false;
      for (const BenchKernel &k : kernels)
        any |= isSpmm(k, true);
      if (any) {
        Status ready = problem ? addEdgeValues(*problem, options.seed + 1)
                               : problem.status();
        for (const BenchKernel &k : kernels) {
          if (!isSpmm(k, true))
            continue;
          if (!ready) {
            recordError(k, "inputs: " + ready.message());
            continue;
          }
          bench.sampleMemory();
          problemBytes = std::max(problemBytes, problem->deviceBytes());
          gnncResults.push_back(runGnncKernel(bench, k.spec, *problem,
                                              options.checkMode,
                                              k.request.schedule.label));
        }
        if (ready)
          referenceSeconds += problem->referenceSeconds;
      }
    }
    // gnnc SDDMM (dot) on the graph, with the SpMM features as the column
    // features and fresh row features; one reference for every schedule.
    if (problem && anySddmm) {
      auto sddmm = makeSddmmProblem(*problem, options.seed + 3);
      for (const BenchKernel &k : kernels) {
        if (k.request.op != BenchOp::SddmmDot)
          continue;
        if (!sddmm) {
          recordError(k, "inputs: " + sddmm.message());
          continue;
        }
        bench.sampleMemory();
        sddmmResults.push_back(
            runGnncSddmm(bench, k.spec, *sddmm, k.request.schedule.label));
      }
      if (sddmm) {
        problemBytes = std::max(problemBytes,
                                problem->deviceBytes() + sddmm->deviceBytes());
        sddmmSeconds = sddmm->referenceSeconds;
      }
    }
    // The GAT chain, last: its reference takes the SpMM reference's arrays.
    if (problem && runGat) {
      auto chain = makeGatProblem(*problem, options.seed + 4);
      if (!chain) {
        KernelResult r;
        r.label = "gat";
        r.op = "gat_chain";
        r.status = "error";
        r.report = "inputs: " + chain.message();
        gatResult = r;
      } else {
        // One chain per aggregation schedule (vertex- and edge-parallel
        // SpMM); the fastest that passed is reported, a wrong one fails
        // the case.
        std::vector<KernelResult> chains;
        for (const BenchKernel *k : aggregates) {
          GatKernels one = gat;
          one.aggregate = &k->spec;
          auto logits = logitsByLabel.find(k->request.schedule.label);
          if (logits != logitsByLabel.end())
            one.logits = logits->second;
          bench.sampleMemory();
          chains.push_back(runGatChain(bench, one, *chain));
          chains.back().label = "gat " + k->request.schedule.label;
        }
        if (chains.empty())
          chains.push_back(runGatChain(bench, gat, *chain));
        for (const KernelResult &r : chains)
          keepFastest(gatResult, r);
        gatSeconds = chain->referenceSeconds;
        // The fused kernels, after the chains: their reference replaces
        // the chain's.
        for (const BenchKernel *k : fused) {
          bench.sampleMemory();
          fusedResults.push_back(runGatFused(
              bench, k->spec, *chain, "fused " + k->request.schedule.label));
        }
        if (!fused.empty())
          gatSeconds += chain->referenceSeconds;
        problemBytes = std::max(problemBytes,
                                problem->deviceBytes() + chain->deviceBytes());
      }
    }
    if (problem)
      bench.spareHost() = std::move(problem->host);
  }

  // cuSPARSE SpMM: default and fastest algorithm.
  const LibraryResult *defaultAlg = nullptr;
  for (const LibraryResult &r : spmmResults)
    if (r.algorithm == "default" && r.timing)
      defaultAlg = &r;
  const LibraryResult *fastestAlg = fastest(spmmResults);
  const double cusparseDefaultMs =
      defaultAlg ? defaultAlg->timing->medianMs : 0;
  const double cusparseFastestMs =
      fastestAlg ? fastestAlg->timing->medianMs : 0;
  json cusparse = json::array();
  for (const LibraryResult &r : spmmResults)
    cusparse.push_back(libraryJson(r, bytesCusparse, options.copyGbs));
  rec["cusparse_spmm"] = cusparse;
  rec["cusparse_default"] = defaultAlg ? json{{"algorithm", "default"},
                                              {"median_ms", cusparseDefaultMs}}
                                       : json(nullptr);
  rec["cusparse_fastest"] = fastestAlg
                                ? json{{"algorithm", fastestAlg->algorithm},
                                       {"median_ms", cusparseFastestMs}}
                                : json(nullptr);
  if (!libraries)
    rec["cusparse_note"] = "cuSPARSE not available in this run";

  // The gather stream: the time an SpMM's gathers alone take on this case;
  // each timed SpMM below as a fraction of it (1 = as fast as its gathers).
  double boundMs = 0;
  if (gatherRun) {
    json j;
    const GatherShape shape = gatherShape(type, width);
    j["shape"] = {{"vector_width", shape.vectorWidth},
                  {"lanes", shape.lanes},
                  {"chunks", shape.chunks},
                  {"unroll", kGatherUnroll}};
    double gbs = 0;
    if (!*gatherRun) {
      j["status"] = "error";
      j["report"] = gatherRun->message();
      ++out.failures;
    } else {
      const GatherRun &run = **gatherRun;
      j["status"] = run.checkOk ? "ok" : "wrong";
      j["check_report"] = run.checkReport;
      j["bytes"] = run.bytes;
      j["shape"]["run_edges"] = run.runEdges;
      if (!run.checkOk) {
        ++out.failures;
      } else if (g.nnz() > 0) {
        boundMs = run.timing.medianMs;
        gbs = gigabytesPerSecond(run.bytes, boundMs);
        j["time_ms"] = toJson(run.timing);
        j["gbs"] = gbs;
      }
    }
    if (l2Gbs && *l2Gbs) {
      j["l2_gather_gbs"] = **l2Gbs;
      if (gbs > 0)
        j["fraction_of_l2"] = gbs / **l2Gbs;
    } else if (l2Gbs) {
      j["l2_report"] = l2Gbs->message();
    }
    rec["gather_bound"] = j;
  } else {
    rec["gather_bound"] = nullptr;
  }

  // gnnc: every kernel, and the best SpMMv kernel that passed.
  json gnnc = json::array();
  const KernelResult *best = nullptr;
  auto ofBound = [&](json &j, double ms) {
    if (boundMs > 0 && ms > 0)
      j["of_gather_bound"] = boundMs / ms;
  };
  if (fastestAlg)
    ofBound(rec["cusparse_fastest"], cusparseFastestMs);
  for (const KernelResult &r : gnncResults) {
    gnnc.push_back(toJson(r, r.edgeValues ? bytesVe : bytesV, options.copyGbs,
                          cusparseDefaultMs, cusparseFastestMs));
    if (r.timing)
      ofBound(gnnc.back(), r.timing->medianMs);
    if (r.status != "ok")
      ++out.failures;
    else if (!r.edgeValues &&
             (!best || r.timing->medianMs < best->timing->medianMs))
      best = &r;
  }
  rec["gnnc"] = gnnc;
  if (best) {
    json b = toJson(*best, bytesV, options.copyGbs, cusparseDefaultMs,
                    cusparseFastestMs);
    b.erase("report");
    ofBound(b, best->timing->medianMs);
    rec["gnnc_best"] = b;
  } else {
    rec["gnnc_best"] = nullptr;
  }

  // cuSPARSE SDDMM on the same graph (its own random inputs).
  json sddmm = json::array();
  std::vector<LibraryResult> sddmmLibrary;
  if (libraries && options.sddmm &&
      (type == ElementType::F32 || type == ElementType::F16)) {
    ProblemShape shape = shapeCusparse;
    sddmmLibrary =
        libraries->sddmm(bench, graphs, type, width, options.seed + 2);
    for (const LibraryResult &r : sddmmLibrary) {
      // Output values are f32 when the f16 output was refused.
      ByteCounts bytes = sddmmBytes(shape);
      bool f32Out = r.types.find("C f32") != std::string::npos;
      double extra = f32Out ? double(g.nnz()) * (4.0 - elementSize(type)) : 0;
      bytes.compulsory += extra;
      bytes.gather += extra;
      sddmm.push_back(libraryJson(r, bytes, options.copyGbs));
    }
  }
  rec["cusparse_sddmm"] = sddmm;

  // gnnc SDDMM beside cuSPARSE SDDMM of the same case (the f16 case's
  // cuSPARSE entry is f16 output, or f32 output where f16 was refused).
  const LibraryResult *cusparseSddmm = fastest(sddmmLibrary);
  const double cusparseSddmmMs =
      cusparseSddmm ? cusparseSddmm->timing->medianMs : 0;
  ProblemShape shapeSddmm = shapeV;
  const ByteCounts bytesSddmm = sddmmBytes(shapeSddmm);
  json gnncSddmm = json::array();
  const KernelResult *bestSddmm = nullptr;
  for (const KernelResult &r : sddmmResults) {
    json j = toJson(r, bytesSddmm, options.copyGbs, 0, 0);
    if (r.timing && cusparseSddmmMs > 0)
      j["speedup_vs_cusparse_sddmm"] = cusparseSddmmMs / r.timing->medianMs;
    gnncSddmm.push_back(j);
    if (r.status != "ok")
      ++out.failures;
    else if (!bestSddmm || r.timing->medianMs < bestSddmm->timing->medianMs)
      bestSddmm = &r;
  }
  rec["gnnc_sddmm"] = gnncSddmm;
  if (bestSddmm) {
    json b = gnncSddmm[bestSddmm - sddmmResults.data()];
    b.erase("report");
    rec["gnnc_sddmm_best"] = b;
  } else {
    rec["gnnc_sddmm_best"] = nullptr;
  }
  rec["cusparse_sddmm_best"] = cusparseSddmm
                                   ? json{{"types", cusparseSddmm->types},
                                          {"median_ms", cusparseSddmmMs}}
                                   : json(nullptr);
  rec["bytes"]["gnnc_sddmm"] = shapeJson(bytesSddmm);
  rec["sddmm_reference_seconds"] = sddmmSeconds;

  // The GAT chain.
  if (gatResult) {
    json j = gatJson(*gatResult, width, type,
                     "gnn.sddmm add + leaky_relu, gnn.edge_softmax, gnn.spmm "
                     "with the weights as edge values (three launches, timed "
                     "together)");
    j["reference_seconds"] = gatSeconds;
    rec["gat_chain"] = j;
    if (gatResult->status != "ok")
      ++out.failures;
  } else {
    rec["gat_chain"] = nullptr;
  }
  // The fused GAT kernel: the fastest that passed (any failure fails the
  // case), and the chain's time over its.
  for (const KernelResult &r : fusedResults) {
    if (r.status != "ok")
      ++out.failures;
    keepFastest(gatFused, r);
  }
  double fusedVsChain = 0;
  if (gatFused) {
    json j = gatJson(*gatFused, width, type,
                     "gnn.spmm with attention: the chain's logits, softmax "
                     "and aggregation in one launch");
    json variants = json::array();
    for (const KernelResult &r : fusedResults)
      variants.push_back(
          {{"label", r.label},
           {"status", r.status},
           {"median_ms", r.timing ? json(r.timing->medianMs) : json(nullptr)}});
    j["variants"] = variants;
    if (gatFused->timing && gatResult && gatResult->timing)
      fusedVsChain = gatResult->timing->medianMs / gatFused->timing->medianMs;
    j["vs_chain"] = fusedVsChain > 0 ? json(fusedVsChain) : json(nullptr);
    rec["gat_fused"] = j;
  } else {
    rec["gat_fused"] = nullptr;
  }
  rec["reference_seconds"] = referenceSeconds;
  rec["case_device_bytes"] = graphs.bytes + problemBytes;
  rec["peak_device_used_bytes"] = bench.peakUsedBytes();

  // The stdout row.
  char row[320];
  double frac = options.copyGbs > 0 ? 1.0 / options.copyGbs : 0;
  if (best) {
    double ms = best->timing->medianMs;
    double gc = gigabytesPerSecond(bytesV.compulsory, ms);
    double gg = gigabytesPerSecond(bytesV.gather, ms);
    std::snprintf(row, sizeof(row),
                  "%-28.28s %-4s %4lld | %9.4f %-8.8s | %9.4f | %9.4f %-8.8s | "
                  "%5.2fx %5.2fx | %7.1f %5.2f %7.1f %5.2f | %5.2f",
                  g.name.c_str(), elementTypeName(type), (long long)width, ms,
                  best->label.c_str(), cusparseDefaultMs, cusparseFastestMs,
                  fastestAlg ? fastestAlg->algorithm.c_str() : "-",
                  cusparseDefaultMs > 0 ? cusparseDefaultMs / ms : 0.0,
                  cusparseFastestMs > 0 ? cusparseFastestMs / ms : 0.0, gc,
                  gc * frac, gg, gg * frac, boundMs > 0 ? boundMs / ms : 0.0);
  } else {
    std::snprintf(row, sizeof(row),
                  "%-28.28s %-4s %4lld | %9s %-8s | %9.4f | %9.4f %-8.8s | "
                  "(no gnnc kernel passed)",
                  g.name.c_str(), elementTypeName(type), (long long)width, "-",
                  "WRONG", cusparseDefaultMs, cusparseFastestMs,
                  fastestAlg ? fastestAlg->algorithm.c_str() : "-");
  }
  out.row = row;
  if (!sddmmResults.empty()) {
    char library[160] = "cuSPARSE -";
    if (cusparseSddmm)
      std::snprintf(library, sizeof(library), "cuSPARSE %.4f ms (%s)",
                    cusparseSddmmMs, cusparseSddmm->types.c_str());
    if (bestSddmm) {
      double ms = bestSddmm->timing->medianMs;
      char speedup[32] = "-";
      if (cusparseSddmmMs > 0)
        std::snprintf(speedup, sizeof(speedup), "%.2fx", cusparseSddmmMs / ms);
      std::snprintf(row, sizeof(row), "%-28s %-4s %4s | %9.4f %-8.8s | %s | %s",
                    "  sddmm (dot)", "", "", ms, bestSddmm->label.c_str(),
                    library, speedup);
    } else {
      std::snprintf(row, sizeof(row), "%-28s %-4s %4s | %9s %-8s | %s",
                    "  sddmm (dot)", "", "", "-", "WRONG", library);
    }
    out.row += "\n" + std::string(row);
  }
  if (gatResult) {
    if (gatResult->timing)
      std::snprintf(row, sizeof(row),
                    "%-28s %-4s %4s | %9.4f %-8.8s | GAT chain, 1 head: "
                    "sddmm add + leaky_relu, edge_softmax, spmm",
                    "  gat chain", "", "", gatResult->timing->medianMs, "H=1");
    else
      std::snprintf(row, sizeof(row), "%-28s %-4s %4s | %9s %-8s |",
                    "  gat chain", "", "", "-", "WRONG");
    out.row += "\n" + std::string(row);
  }
  if (gatFused) {
    if (gatFused->timing)
      std::snprintf(row, sizeof(row),
                    "%-28s %-4s %4s | %9.4f %-8.8s | one launch (gnn.spmm "
                    "with attention): %.2fx the chain",
                    "  gat fused", "", "", gatFused->timing->medianMs,
                    gatFused->label.c_str(), fusedVsChain);
    else
      std::snprintf(row, sizeof(row), "%-28s %-4s %4s | %9s %-8s |",
                    "  gat fused", "", "", "-", "WRONG");
    out.row += "\n" + std::string(row);
  }
  std::vector<const KernelResult *> all;
  for (const std::vector<KernelResult> *list :
       {&gnncResults, &sddmmResults, &fusedResults})
    for (const KernelResult &r : *list)
      all.push_back(&r);
  if (gatResult)
    all.push_back(&*gatResult);
  for (const KernelResult *r : all)
    if (r->status != "ok")
      out.row += "\n    " + r->status + ": " + r->kernelName + " [" + r->label +
                 "] " + r->report;
  return out;
}

Expected<std::vector<GraphSource>>
gnnc::bench::datasetSources(const std::string &dir, bool relabel,
                            std::vector<std::string> *skipped,
                            const std::vector<std::string> &orders) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Status::error(dir + ": not a directory");
  std::vector<std::string> files;
  for (const fs::directory_entry &entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".npz")
      files.push_back(entry.path().string());
  if (ec)
    return Status::error(dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<GraphSource> sources;
  for (const std::string &file : files) {
    std::string stem = fs::path(file).stem().string();
    auto note = [&](const std::string &why) {
      if (skipped)
        skipped->push_back(fs::path(file).filename().string() + ": " + why);
    };
    if (stem.rfind("hetero_", 0) == 0 || stem.rfind("temporal_", 0) == 0) {
      note("heterogeneous or temporal");
      continue;
    }
    auto npz = graph::readNpz(file);
    if (!npz) {
      note(npz.message());
      continue;
    }
    if (!npz->has("indptr") || !npz->has("indices")) {
      note("no indptr/indices members");
      continue;
    }
    sources.push_back({stem, file, 0, false, ""});
    if (relabel)
      sources.push_back({stem + "-relabeled", file, 0, true, ""});
    for (const std::string &order : orders)
      sources.push_back({stem + "-" + order, file, 0, false, order});
  }
  return sources;
}

uint64_t gnnc::bench::rmatSeed(int scale) {
  return 0x5eed0000ull + static_cast<uint64_t>(scale);
}

Expected<graph::CsrGraph> gnnc::bench::loadGraph(const GraphSource &source,
                                                 graph::CsrGraph *base,
                                                 double *orderSeconds) {
  graph::CsrGraph g;
  const std::string baseName =
      source.path.empty() ? "rmat" + std::to_string(source.rmatScale)
                          : std::filesystem::path(source.path).stem().string();
  if (base && base->name == baseName) {
    g = *base;
  } else if (source.path.empty()) {
    if (source.rmatScale < 1 || source.rmatScale > 30)
      return Status::error("R-MAT scale " + std::to_string(source.rmatScale) +
                           " is out of range [1, 30]");
    g = graph::generateRmat(source.rmatScale, 16, rmatSeed(source.rmatScale));
  } else {
    auto loaded = graph::readNpzCsr(source.path);
    if (!loaded)
      return loaded.status();
    g = loaded.take();
  }
  g.values.clear();
  g.name = baseName;
  if (base && !source.relabel && source.order.empty() && !source.path.empty())
    *base = g; // datasets are followed by their relabeled copies
  if (source.relabel) {
    g = graph::permuteRandomly(g, kRelabelSeed);
    g.values.clear();
  }
  if (!source.order.empty()) {
    auto start = std::chrono::steady_clock::now();
    auto perm = graph::orderByName(g, source.order);
    if (!perm)
      return Status::error(source.name + ": " + perm.message());
    auto renumbered = graph::applyPermutation(g, *perm);
    if (!renumbered)
      return Status::error(source.name + ": " + renumbered.message());
    g = renumbered.take();
    g.values.clear();
    if (orderSeconds)
      *orderSeconds = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  }
  g.name = source.name;
  return g;
}
