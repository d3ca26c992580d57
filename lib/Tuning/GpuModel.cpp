//===- GpuModel.cpp - GPU descriptions and calibration files --------------===//
//
// The built-in numbers below are the same as lib/Tuning/calibration/*.txt
// (a test checks that they agree). Machine shape: public datasheets (A100
// SXM for sm_80, H200 SXM for sm_90). Calibration constants: for sm_90 the
// copy bandwidth measured by gnn-bench (bench/NOTES.md, 4231 GB/s on an
// H200) and the ~0.5 us dependent-load latency stated there; for sm_80
// about 85% of the datasheet bandwidth and published micro-benchmark
// latencies. `gnn-tune --calibrate` replaces them with local measurements.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Tuning/GpuModel.h"

#include "NumberedLines.h"
#include "gnnc/runtime/Driver.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace gnnc;
using namespace gnnc::tuning;

namespace {

/// One floating-point calibration key and the field it sets.
struct Field {
  const char *key;
  double GpuModel::*member;
  /// Whether 0 is a valid value (a cost the fit found absent).
  bool zeroAllowed = false;
};
const Field kFields[] = {
    {"l2_bytes", &GpuModel::l2Bytes},
    {"clock_hz", &GpuModel::clockHz},
    {"l1_bytes_per_clock", &GpuModel::l1BytesPerClock},
    {"dram_bytes_per_second", &GpuModel::dramBytesPerSecond},
    {"l2_bytes_per_second", &GpuModel::l2BytesPerSecond},
    {"load_latency_seconds", &GpuModel::loadLatencySeconds},
    {"l2_latency_seconds", &GpuModel::l2LatencySeconds},
    {"launch_seconds", &GpuModel::launchSeconds},
    {"loaded_latency_factor", &GpuModel::loadedLatencyFactor},
    {"edge_step_cycles", &GpuModel::edgeStepCycles, true},
    {"row_end_cycles", &GpuModel::rowEndCycles, true},
};

/// Loaded over unloaded latency of a dependent gather batch: the geomean of
/// measured over predicted latency-bound times of vertex-parallel SpMM on
/// R-MAT 18-21 (H100, 2026-11-23; bench/NOTES.md).
constexpr double kLoadedLatencyFactor = 4.3;

/// The edge-parallel loop's instruction costs, fitted by `gnn-tune --fit`
/// on 93 edge-parallel kernels measured on R-MAT 16 and 17 (H100,
/// 2026-11-25; bench/results/nvidia-h100/2026-11-25-kernel-costs). Cycles of
/// an SM, assumed to carry over to sm_80.
constexpr double kEdgeStepCycles = 1.153;
constexpr double kRowEndCycles = 22.41;

/// What the built-in models of each architecture set apart from what they
/// share (2048 threads, 32 blocks and 64 Ki registers per SM, 128 L1 bytes
/// per clock, 3 us per launch).
struct BuiltinGpu {
  const char *arch;
  int smCount;
  double l2MiB;
  double clockHz;
  double dramBytesPerSecond;
  double l2BytesPerSecond;
  /// Unloaded dependent-load latencies; loadedLatencyFactor scales them.
  double loadLatencySeconds;
  double l2LatencySeconds;
};
const BuiltinGpu kBuiltinGpus[] = {
    // H200 SXM: 132 SMs, 50 MiB L2, 1.98 GHz boost, 4.8 TB/s HBM3e
    // (4.23 TB/s measured copy). Latencies as `gnn-tune --calibrate`
    // measured them on an H100 (2026-11-23).
    {"sm_90", 132, 50.0, 1.98e9, 4.231e12, 10.0e12, 0.334e-6, 0.142e-6},
    // A100 SXM 80 GB: 108 SMs, 40 MiB L2, 1.41 GHz boost, 2.04 TB/s HBM2e.
    // Pointer-chase estimates, not measured by gnnc; the loaded latency
    // factor fitted on an H100 is assumed to carry over.
    {"sm_80", 108, 40.0, 1.41e9, 1.73e12, 5.0e12, 0.55e-6, 0.25e-6},
};

/// The integer keys and their fields.
struct IntField {
  const char *key;
  int GpuModel::*member;
};
const IntField kIntFields[] = {
    {"sm_count", &GpuModel::smCount},
    {"max_threads_per_sm", &GpuModel::maxThreadsPerSm},
    {"max_blocks_per_sm", &GpuModel::maxBlocksPerSm},
    {"registers_per_sm", &GpuModel::registersPerSm},
};

bool isArch(const std::string &a) {
  if (a.size() < 5 || a.compare(0, 3, "sm_") != 0)
    return false;
  for (size_t i = 3; i < a.size(); ++i)
    if (!(std::isdigit(static_cast<unsigned char>(a[i])) ||
          (i + 1 == a.size() && a[i] == 'a')))
      return false;
  return true;
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos)
    return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::string formatNumber(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

} // namespace

const std::vector<std::string> &gnnc::tuning::gpuModelKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {"arch"};
    for (const IntField &f : kIntFields)
      k.push_back(f.key);
    for (const Field &f : kFields)
      k.push_back(f.key);
    return k;
  }();
  return keys;
}

Expected<GpuModel> gnnc::tuning::builtinGpuModel(const std::string &arch) {
  const std::string name = arch == "sm_90a" ? "sm_90" : arch;
  const BuiltinGpu *gpu = nullptr;
  for (const BuiltinGpu &known : kBuiltinGpus)
    if (name == known.arch)
      gpu = &known;
  if (!gpu)
    return Status::error("no built-in GPU model for '" + arch +
                         "' (known: sm_80, sm_90); give a calibration file");
  GpuModel m;
  m.arch = gpu->arch;
  m.smCount = gpu->smCount;
  m.l2Bytes = gpu->l2MiB * 1024 * 1024;
  m.maxThreadsPerSm = 2048;
  m.maxBlocksPerSm = 32;
  m.registersPerSm = 65536;
  m.clockHz = gpu->clockHz;
  m.l1BytesPerClock = 128;
  m.dramBytesPerSecond = gpu->dramBytesPerSecond;
  m.l2BytesPerSecond = gpu->l2BytesPerSecond;
  m.loadLatencySeconds = gpu->loadLatencySeconds;
  m.l2LatencySeconds = gpu->l2LatencySeconds;
  m.launchSeconds = 3.0e-6;
  m.loadedLatencyFactor = kLoadedLatencyFactor;
  m.edgeStepCycles = kEdgeStepCycles;
  m.rowEndCycles = kRowEndCycles;
  m.source = "built-in " + m.arch + " defaults";
  return m;
}

Expected<GpuModel> gnnc::tuning::parseCalibration(const std::string &text,
                                                  const std::string &name,
                                                  GpuModel base) {
  NumberedLines lines(text, name);
  std::string line;
  while (lines.next(line)) {
    size_t hash = line.find('#');
    if (hash != std::string::npos)
      line = line.substr(0, hash);
    line = trim(line);
    if (line.empty())
      continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos)
      return lines.error("expected 'key = value', got '" + line + "'");
    std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (value.empty())
      return lines.error("'" + key + "' has no value");
    if (key == "arch") {
      if (!isArch(value))
        return lines.error("arch must read sm_XX, got '" + value + "'");
      base.arch = value;
      continue;
    }
    errno = 0;
    char *end = nullptr;
    double number = std::strtod(value.c_str(), &end);
    bool parsed = end && *end == '\0' && errno == 0 && std::isfinite(number);
    bool known = false;
    for (const IntField &f : kIntFields) {
      if (key != f.key)
        continue;
      known = true;
      if (!parsed || number < 1 || number != std::floor(number) || number > 1e9)
        return lines.error("'" + key + "' must be a positive integer, got '" +
                           value + "'");
      base.*f.member = static_cast<int>(number);
    }
    for (const Field &f : kFields) {
      if (key != f.key)
        continue;
      known = true;
      if (!parsed || number < 0 || (number == 0 && !f.zeroAllowed))
        return lines.error("'" + key + "' must be a " +
                           (f.zeroAllowed ? "non-negative" : "positive") +
                           " number, got '" + value + "'");
      base.*f.member = number;
    }
    if (!known)
      return lines.error("unknown key '" + key + "'");
  }
  base.source = name;
  return base;
}

Expected<GpuModel>
gnnc::tuning::loadGpuModel(const std::string &arch,
                           const std::optional<std::string> &path) {
  Expected<GpuModel> base = builtinGpuModel(arch);
  if (!path) {
    return base;
  }
  GpuModel start = base ? *base : GpuModel();
  if (!base)
    start.arch = arch;
  std::ifstream in(*path);
  if (!in)
    return Status::error(*path + ": cannot read calibration file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parseCalibration(buffer.str(), *path, start);
}

GpuModel gnnc::tuning::fromDevice(const rt::Device &device) {
  Expected<GpuModel> builtin = builtinGpuModel(device.archString());
  GpuModel m = builtin ? *builtin : *builtinGpuModel("sm_90");
  m.arch = device.archString();
  if (device.smCount() > 0)
    m.smCount = device.smCount();
  if (device.l2Bytes() > 0)
    m.l2Bytes = static_cast<double>(device.l2Bytes());
  m.source = "device " + device.name() + " (" + m.arch + "; " +
             (builtin ? "built-in constants" : "sm_90 constants") + ")";
  return m;
}

std::string gnnc::tuning::formatCalibration(const GpuModel &model,
                                            const std::string &comment) {
  std::ostringstream os;
  os << "# gnnc cost-model calibration, one `key = value` per line.\n";
  if (!comment.empty()) {
    std::istringstream lines(comment);
    std::string line;
    while (std::getline(lines, line))
      os << "# " << line << "\n";
  }
  os << "arch = " << model.arch << "\n";
  for (const IntField &f : kIntFields)
    os << f.key << " = " << model.*f.member << "\n";
  for (const Field &f : kFields)
    os << f.key << " = " << formatNumber(model.*f.member) << "\n";
  return os.str();
}

Status gnnc::tuning::writeCalibration(const GpuModel &model,
                                      const std::string &path,
                                      const std::string &comment) {
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    if (!out)
      return Status::error(temp + ": cannot write");
    out << formatCalibration(model, comment);
    if (!out.flush())
      return Status::error(temp + ": write failed");
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return Status::error(path + ": cannot rename the temporary file into "
                                "place");
  }
  return Status::ok();
}

std::string gnnc::tuning::calibrationSourceDir() {
  return GNNC_TUNING_CALIBRATION_DIR;
}
