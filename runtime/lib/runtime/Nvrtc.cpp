//===- Nvrtc.cpp - Compiling CUDA C++ with NVRTC --------------------------===//

#include "gnnc/runtime/Nvrtc.h"

#include <nvrtc.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <sys/stat.h>

namespace gnnc::rt {

static bool isFile(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

static bool isDirectory(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

static Expected<std::vector<std::string>> searchCudaIncludeDirs() {
  std::vector<std::string> candidates;
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"}) {
    const char *value = std::getenv(variable);
    if (value && *value)
      candidates.push_back(std::string(value) + "/include");
  }
  candidates.push_back("/usr/local/cuda/include");

  std::string looked;
  for (const std::string &dir : candidates) {
    if (isFile(dir + "/cuda_fp16.h")) {
      std::vector<std::string> dirs{dir};
      if (isDirectory(dir + "/cccl"))
        dirs.push_back(dir + "/cccl");
      return dirs;
    }
    looked += (looked.empty() ? "" : ", ") + dir;
  }
  return Status::error("cannot find the CUDA headers for NVRTC: no "
                       "cuda_fp16.h in " +
                       looked + " (set CUDA_HOME to the CUDA toolkit)");
}

Expected<std::vector<std::string>> findCudaIncludeDirs() {
  static std::once_flag once;
  static std::optional<Expected<std::vector<std::string>>> result;
  std::call_once(once, [] { result.emplace(searchCudaIncludeDirs()); });
  return *result;
}

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

/// Splits "sm_90a" into its number ("90") and suffix ("a"); false when the
/// text after the prefix is not digits plus an optional letter.
static bool splitArch(const std::string &arch, const std::string &prefix,
                      std::string &number, std::string &suffix) {
  if (arch.compare(0, prefix.size(), prefix) != 0)
    return false;
  std::string rest = arch.substr(prefix.size());
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9')
    ++digits;
  if (digits == 0 || rest.size() - digits > 1)
    return false;
  if (digits < rest.size() && (rest[digits] < 'a' || rest[digits] > 'z'))
    return false;
  number = rest.substr(0, digits);
  suffix = rest.substr(digits);
  return true;
}

Expected<std::vector<std::string>> nvrtcFlags(const CompileOptions &options) {
  std::string number, suffix, target;
  if (splitArch(options.arch, "sm_", number, suffix))
    target = (options.ptx ? "compute_" : "sm_") + number + suffix;
  else if (options.ptx && splitArch(options.arch, "compute_", number, suffix))
    target = options.arch;
  else
    return Status::error(
        "invalid target architecture '" + options.arch + "' (expected " +
        (options.ptx ? "sm_XX or compute_XX" : "sm_XX, e.g. sm_90") + ")");
  std::vector<std::string> flags{"--gpu-architecture=" + target, "-std=c++17",
                                 "-default-device"};
  flags.insert(flags.end(), options.extraFlags.begin(),
               options.extraFlags.end());
  return flags;
}

static Status nvrtcFailure(const std::string &what, nvrtcResult result) {
  return Status::error(what + ": " + nvrtcGetErrorString(result));
}

namespace {
/// Destroys an NVRTC program on scope exit.
struct ProgramGuard {
  nvrtcProgram program = nullptr;
  ~ProgramGuard() {
    if (program)
      nvrtcDestroyProgram(&program);
  }
};
} // namespace

Expected<CompiledKernel> compileCuda(const std::string &source,
                                     const std::string &programName,
                                     const CompileOptions &options) {
  std::string context = "compiling '" + programName + "' with NVRTC " +
                        nvrtcVersionString() + " for " + options.arch;
  Expected<std::vector<std::string>> flags = nvrtcFlags(options);
  if (!flags)
    return flags.status().withContext(context);
  Expected<std::vector<std::string>> includeDirs = findCudaIncludeDirs();
  if (!includeDirs)
    return includeDirs.status().withContext(context);
  std::vector<std::string> allFlags = *flags;
  for (const std::string &dir : *includeDirs)
    allFlags.push_back("-I" + dir);
  std::vector<const char *> flagPointers;
  for (const std::string &flag : allFlags)
    flagPointers.push_back(flag.c_str());

  std::vector<const char *> headerTexts, headerNames;
  for (const InMemoryHeader &header : options.headers) {
    headerTexts.push_back(header.text.c_str());
    headerNames.push_back(header.name.c_str());
  }

  ProgramGuard guard;
  nvrtcResult result =
      nvrtcCreateProgram(&guard.program, source.c_str(), programName.c_str(),
                         static_cast<int>(headerTexts.size()),
                         headerTexts.data(), headerNames.data());
  if (result != NVRTC_SUCCESS)
    return nvrtcFailure(context + ": creating the program", result);

  nvrtcResult compiled =
      nvrtcCompileProgram(guard.program, static_cast<int>(flagPointers.size()),
                          flagPointers.data());
  CompiledKernel kernel;
  kernel.isPtx = options.ptx;
  size_t logSize = 0;
  if (nvrtcGetProgramLogSize(guard.program, &logSize) == NVRTC_SUCCESS &&
      logSize > 1) {
    kernel.log.resize(logSize);
    if (nvrtcGetProgramLog(guard.program, kernel.log.data()) != NVRTC_SUCCESS)
      kernel.log.clear();
    while (!kernel.log.empty() && kernel.log.back() == '\0')
      kernel.log.pop_back();
  }
  if (compiled != NVRTC_SUCCESS) {
    std::string flagText;
    for (const std::string &flag : allFlags)
      flagText += " " + flag;
    return Status::error(context + ": " + nvrtcGetErrorString(compiled) +
                         "\nflags:" + flagText + "\nNVRTC log:\n" + kernel.log);
  }

  size_t size = 0;
  if (options.ptx) {
    result = nvrtcGetPTXSize(guard.program, &size);
    if (result != NVRTC_SUCCESS)
      return nvrtcFailure(context + ": getting the PTX size", result);
    kernel.binary.resize(size);
    result = nvrtcGetPTX(guard.program, kernel.binary.data());
    if (result != NVRTC_SUCCESS)
      return nvrtcFailure(context + ": getting the PTX", result);
    // Keep the text without its terminating NUL; std::string adds one back
    // for c_str() when the module is loaded.
    while (!kernel.binary.empty() && kernel.binary.back() == '\0')
      kernel.binary.pop_back();
  } else {
    result = nvrtcGetCUBINSize(guard.program, &size);
    if (result != NVRTC_SUCCESS)
      return nvrtcFailure(context + ": getting the cubin size", result);
    kernel.binary.resize(size);
    result = nvrtcGetCUBIN(guard.program, kernel.binary.data());
    if (result != NVRTC_SUCCESS)
      return nvrtcFailure(context + ": getting the cubin", result);
  }
  if (kernel.binary.empty())
    return Status::error(context + ": NVRTC produced an empty image");
  return kernel;
}

} // namespace gnnc::rt
