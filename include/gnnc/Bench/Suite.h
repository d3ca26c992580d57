//===- Suite.h - The gnn-bench cases ----------------------------*- C++ -*-===//
//
// One case = one graph x element type x feature width: gnnc's SpMM kernels
// (schedule variants, SpMMv and SpMMve), cuSPARSE SpMM with every CSR
// algorithm, gnnc SDDMM (dot; schedule variants) beside cuSPARSE SDDMM, and
// the GAT attention chain (gnn.sddmm add + leaky_relu, gnn.edge_softmax,
// gnn.spmm with edge values), with the derived numbers (speedups, bandwidth
// against the two byte bounds, time against the measured gather stream) as
// one JSON record.
// Also the list of graphs the suite runs on.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_SUITE_H
#define GNNC_BENCH_SUITE_H

#include "gnnc/Bench/Bench.h"
#include "gnnc/Bench/Cusparse.h"
#include "gnnc/Bench/GatherBound.h"
#include "gnnc/Bench/KernelRuns.h"
#include "gnnc/Bench/Kernels.h"
#include "gnnc/Bench/Problems.h"
#include "gnnc/graph/Csr.h"
#include "gnnc/runtime/Float16.h"
#include "gnnc/runtime/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::bench {

/// What each case runs.
struct CaseOptions {
  /// Also run the default SpMMve kernel (edge values).
  bool edgeValues = true;
  /// Run cuSPARSE SDDMM (for f32 and f16).
  bool sddmm = true;
  /// Run the GAT chain when its kernels are among the case's kernels.
  bool gatChain = true;
  CheckMode checkMode = CheckMode::Shared;
  uint64_t seed = 1;
  /// The measured copy bandwidth in GB/s (<= 0: unknown).
  double copyGbs = 0;
  /// Times the gather stream of each case and the L2's gather bandwidth
  /// (null: not measured); SpMM times are reported as fractions of it.
  GatherBound *gatherBound = nullptr;
};

/// The outcome of one case.
struct CaseOutcome {
  nlohmann::json record;
  /// gnnc kernels that were wrong or failed to run.
  int failures = 0;
  /// One row for the stdout table.
  std::string row;
};

/// Runs one case. `kernels` are the compiled kernels for (type, width)
/// (SpMMv variants, optionally the SpMMve default, SDDMM variants and the
/// GAT chain; see compileBenchKernels); `libraries` may be
/// null (no cuSPARSE). `compileError`, when not empty, says why there are
/// no kernels (recorded, counted as a failure).
CaseOutcome runCase(Bench &bench, CudaLibraries *libraries,
                    const DeviceGraphs &graphs, ElementType type, int64_t width,
                    const std::vector<BenchKernel> &kernels,
                    const std::string &compileError,
                    const CaseOptions &options);

/// The header of the stdout table (matches CaseOutcome::row).
std::string tableHeader();

/// Where a benchmarked graph comes from.
struct GraphSource {
  /// The name used in reports and dump files.
  std::string name;
  /// A dataset file (.npz CSR), or empty for R-MAT.
  std::string path;
  /// The R-MAT scale (when path is empty).
  int rmatScale = 0;
  /// Apply graph::permuteRandomly to the loaded graph.
  bool relabel = false;
  /// Renumber the loaded graph for locality: an order graph::orderByName
  /// knows; empty for none.
  std::string order;
};

/// The static graphs in `dir`: every .npz with top-level `indptr` and
/// `indices` members, except hetero_* and temporal_* files, sorted by name;
/// each followed by its relabeled copy when `relabel` and by one renumbered
/// copy `<name>-<order>` per entry of `orders`. `skipped` receives
/// "file: why" for files that were left out.
Expected<std::vector<GraphSource>>
datasetSources(const std::string &dir, bool relabel,
               std::vector<std::string> *skipped,
               const std::vector<std::string> &orders = {});

/// The R-MAT seed for a scale (fixed, so every run sees the same graphs).
uint64_t rmatSeed(int scale);
/// The seed of the random relabeling.
constexpr uint64_t kRelabelSeed = 0x7e1abe1ull;

/// Loads or generates a graph; drops stored edge values (the suite
/// benchmarks patterns), names it source.name. `base` (optional) caches the
/// last unpermuted graph so a relabeled or renumbered copy does not reload
/// it. With source.order, `orderSeconds` (optional) receives the host time
/// of computing the order and applying it to the graph.
Expected<graph::CsrGraph> loadGraph(const GraphSource &source,
                                    graph::CsrGraph *base = nullptr,
                                    double *orderSeconds = nullptr);

} // namespace gnnc::bench

#endif // GNNC_BENCH_SUITE_H
