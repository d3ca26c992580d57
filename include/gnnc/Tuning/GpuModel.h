//===- GpuModel.h - What the cost model knows about a GPU -------*- C++ -*-===//
//
// A GpuModel is the handful of numbers the SpMM cost model needs: the shape
// of the machine (SMs, L2, thread limits, clock) from datasheets or the
// driver, and calibration constants (bandwidths, load latencies, launch
// overhead) that micro-benchmarks measure. Built-in defaults exist for sm_80
// and sm_90; the same values live as plain text files, one `key = value` per
// line, in lib/Tuning/calibration/<arch>.txt, and `gnn-tune --calibrate`
// rewrites such a file from measurements on the local GPU.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_GPUMODEL_H
#define GNNC_TUNING_GPUMODEL_H

#include "gnnc/runtime/Status.h"

#include <optional>
#include <string>
#include <vector>

namespace gnnc::rt {
class Device;
} // namespace gnnc::rt

namespace gnnc::tuning {

/// The machine as the cost model sees it. Every field has a calibration-file
/// key of the same name in snake_case (see gpuModelKeys()).
struct GpuModel {
  /// The NVRTC target, e.g. "sm_90".
  std::string arch = "sm_90";
  /// Where the numbers came from ("built-in sm_90 defaults", a file path,
  /// "device NVIDIA H200", ...), for reports.
  std::string source;

  // Shape of the machine (datasheet or driver).
  int smCount = 132;
  double l2Bytes = 50.0 * 1024 * 1024;
  int maxThreadsPerSm = 2048;
  int maxBlocksPerSm = 32;
  int registersPerSm = 65536;
  double clockHz = 1.98e9;
  /// Bytes the L1/load path of one SM returns per clock (one 128-byte
  /// wavefront).
  double l1BytesPerClock = 128;

  // Calibration constants (micro-benchmarks).
  /// Device-to-device copy bandwidth, bytes read plus bytes written per
  /// second: what a streaming kernel really gets from DRAM.
  double dramBytesPerSecond = 4.231e12;
  /// Bandwidth of L2 hits.
  double l2BytesPerSecond = 10.0e12;
  /// Latency of one dependent global load that misses the L2 (pointer chase
  /// over a buffer larger than the L2).
  double loadLatencySeconds = 0.5e-6;
  /// Latency of one dependent load that hits the L2.
  double l2LatencySeconds = 0.25e-6;
  /// Fixed cost of one kernel launch as CUDA events see it.
  double launchSeconds = 3.0e-6;
  /// How many times the unloaded latency a dependent batch of feature (or
  /// index) loads waits while the whole GPU is gathering: the queueing the
  /// pointer chase does not see. Fitted on R-MAT graphs (bench/NOTES.md),
  /// never on the graphs the tuner is evaluated on.
  double loadedLatencyFactor = 1.0;
  /// Edge-parallel workers: SM issue cycles per warp step (one merge-path
  /// item for each worker sharing the warp) and chunk of features a lane
  /// owns: the loop's bookkeeping and arithmetic between its loads.
  /// Fitted on R-MAT kernels by `gnn-tune --calibrate` (fitKernelCosts).
  double edgeStepCycles = 0;
  /// Edge-parallel workers: SM cycles per row end for each worker sharing
  /// the warp (a row end in one worker runs the warp's divergent flush
  /// path: the row's store and the next row end). Fitted with
  /// edgeStepCycles.
  double rowEndCycles = 0;
};

/// The calibration-file keys, in the order files are written.
const std::vector<std::string> &gpuModelKeys();

/// Whether kernels for `gpu` may use math = wgmma: compute capability 9.0,
/// whose kernels the runtime compiles for sm_90a (rt::Device::compileTarget).
inline bool hasWgmma(const GpuModel &gpu) {
  return gpu.arch == "sm_90" || gpu.arch == "sm_90a";
}

/// The built-in defaults for `arch` ("sm_80" or "sm_90"; others fail).
Expected<GpuModel> builtinGpuModel(const std::string &arch);

/// Parses calibration text over `base`: `key = value` lines, `#` comments
/// and blank lines ignored. An unknown key, a missing `=`, a value that is
/// not a positive number (or, for `arch`, not sm_XX) fails with
/// `name:line: message`.
Expected<GpuModel> parseCalibration(const std::string &text,
                                    const std::string &name, GpuModel base);

/// The model for `arch`: the built-in defaults, overridden by the file at
/// `path` when given (which must then exist and parse).
Expected<GpuModel> loadGpuModel(const std::string &arch,
                                const std::optional<std::string> &path = {});

/// The built-in (or, without one for the device's architecture, the sm_90)
/// defaults with arch, SM count and L2 size taken from the driver.
GpuModel fromDevice(const rt::Device &device);

/// Renders `model` as a calibration file (every key, `# comment` header).
std::string formatCalibration(const GpuModel &model,
                              const std::string &comment = "");

/// Writes formatCalibration(model) to `path` (through a temporary file and a
/// rename, so readers never see half a file).
Status writeCalibration(const GpuModel &model, const std::string &path,
                        const std::string &comment = "");

/// The directory of the calibration files shipped with the sources.
std::string calibrationSourceDir();

} // namespace gnnc::tuning

#endif // GNNC_TUNING_GPUMODEL_H
