//===- KernelRuns.h - Checking, then timing, gnnc kernels -------*- C++ -*-===//
//
// The correctness gate: a gnnc kernel (or the GAT chain) is run on a
// problem and compared with the problem's reference, and only a kernel that
// passed is timed. What happened is recorded, never returned as an error.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_KERNELRUNS_H
#define GNNC_BENCH_KERNELRUNS_H

#include "gnnc/Bench/Bench.h"
#include "gnnc/Bench/Problems.h"
#include "gnnc/runtime/KernelSpec.h"
#include "gnnc/runtime/Timing.h"

#include <optional>
#include <string>

namespace gnnc::bench {

/// How the correctness gate checks a kernel.
enum class CheckMode {
  /// Against the problem's shared reference (checkOnProblem).
  Shared,
  /// With ops::checkSpmm (its own inputs and reference, per kernel).
  PerKernel
};

/// What happened to one gnnc kernel.
struct KernelResult {
  std::string label;
  std::string kernelName;
  std::string schedule;
  bool edgeValues = false;
  /// "spmm", "sddmm" or "gat_chain".
  std::string op = "spmm";
  /// "ok" (checked and timed), "wrong" (failed the check: no timing) or
  /// "error" (could not be compiled, loaded or run).
  std::string status;
  /// The check report or the error.
  std::string report;
  std::optional<TimingStats> timing;
  double loadMs = 0;
};

/// The median time of a kernel that passed its check and was timed; 0
/// otherwise.
inline double passedMedianMs(const KernelResult &r) {
  return r.status == "ok" && r.timing ? r.timing->medianMs : 0;
}

/// Loads `spec`, checks it on `problem` (the gate), and times it only if it
/// passed. Never fails: problems are recorded in the result.
KernelResult runGnncKernel(Bench &bench, const rt::KernelSpec &spec,
                           SpmmProblem &problem, CheckMode mode,
                           const std::string &label = "");

/// The same gate for a gnn.sddmm kernel on a shared SDDMM problem.
KernelResult runGnncSddmm(Bench &bench, const rt::KernelSpec &spec,
                          SddmmProblem &problem, const std::string &label = "");

/// The GAT chain's three kernels, as compiled.
struct GatKernels {
  const rt::KernelSpec *logits = nullptr;
  const rt::KernelSpec *softmax = nullptr;
  const rt::KernelSpec *aggregate = nullptr;
};

/// Loads the chain, runs it once with every intermediate and the output
/// poisoned with NaN, compares the output with ensureGatReference's, and only
/// if it passed times the three launches as one region (Bench::time). The
/// result's kernelName and schedule list the three kernels.
KernelResult runGatChain(Bench &bench, const GatKernels &kernels,
                         GatProblem &problem);

/// The fused GAT kernel (gnn.spmm with attention, `spec`) on the chain's
/// problem: the output poisoned, one run compared with the fused
/// reference (ensureGatReference), then timed if it passed.
KernelResult runGatFused(Bench &bench, const rt::KernelSpec &spec,
                         GatProblem &problem, const std::string &label);

} // namespace gnnc::bench

#endif // GNNC_BENCH_KERNELRUNS_H
