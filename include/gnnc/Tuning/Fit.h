//===- Fit.h - Kernel-cost constants fitted on synthetic graphs -*- C++ -*-===//
//
// Two constants of the cost model, GpuModel::edgeStepCycles and
// GpuModel::rowEndCycles, stand for instructions that no datasheet number
// or micro-benchmark gives: the work an edge-parallel worker does between
// its loads. They are fitted to measured gnn.spmm kernels on R-MAT graphs
// (Graph500 parameters, 16 edges per node, seed 1), never on the graphs
// the tuner is used on. `gnn-tune --calibrate` measures the samples of
// calibrationPlan() on the GPU and fits them; `gnn-tune --fit SAMPLES`
// refits stored samples without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_FIT_H
#define GNNC_TUNING_FIT_H

#include "gnnc/Tuning/CostModel.h"
#include "gnnc/runtime/Status.h"

#include <functional>
#include <string>
#include <vector>

namespace gnnc::rt {
class Runtime;
} // namespace gnnc::rt

namespace gnnc::tuning {

/// One measured kernel: a gnn.spmm (sum) `op` (gnnc::spmmOp) with
/// `schedule` on the R-MAT graph of `rmatScale`.
struct KernelSample {
  int rmatScale = 0;
  OpDesc op;
  Schedule schedule;
  /// Median measured seconds (0 in a plan not yet measured).
  double measuredSeconds = 0;
};

/// The samples `gnn-tune --calibrate` measures: R-MAT 16 and 17, f32 and
/// f16, widths 32, 64 and 128, every edge-parallel schedule the tuner
/// enumerates for them.
std::vector<KernelSample> calibrationPlan();

/// One line per sample: `rmat SCALE spmm TYPE WIDTH SECONDS SCHEDULE`, the
/// schedule in its text form (`#gnn.schedule<...>`).
std::string formatSamples(const std::vector<KernelSample> &samples);

/// Reads formatSamples() text (`#` comments and blank lines ignored). A
/// malformed line fails with `name:line: message`.
Expected<std::vector<KernelSample>> parseSamples(const std::string &text,
                                                 const std::string &name);

/// What fitKernelCosts found.
struct FitReport {
  /// Edge-parallel samples used (other samples are ignored).
  size_t samples = 0;
  double edgeStepCycles = 0;
  double rowEndCycles = 0;
  /// Root mean square of log(measured / predicted) over the samples, with
  /// both constants 0 and with the fitted ones; the largest ratio after.
  double rmsLogBefore = 0;
  double rmsLogAfter = 0;
  double worstRatioAfter = 1;
  /// A few lines for a report or a calibration file's header.
  std::string text() const;
};

/// Fits gpu.edgeStepCycles and gpu.rowEndCycles (non-negative) to the
/// edge-parallel samples by least squares on the relative error of the
/// predicted time, the other constants of `gpu` held fixed, and stores them
/// in `gpu`. Fails without an edge-parallel sample or with a sample whose
/// schedule is illegal or whose time is not positive.
Expected<FitReport> fitKernelCosts(GpuModel &gpu,
                                   const std::vector<KernelSample> &samples);

/// Measures every sample of `plan` on the runtime's GPU (each kernel
/// checked against the CPU reference first, as measureSchedule does).
/// `progress`, when given, receives a line per sample. Samples that fail
/// are left out and reported through `progress`. Needs a GPU; untested
/// without one.
Expected<std::vector<KernelSample>>
measureSamples(rt::Runtime &runtime, const std::vector<KernelSample> &plan,
               const std::function<void(const std::string &)> &progress = {});

} // namespace gnnc::tuning

#endif // GNNC_TUNING_FIT_H
