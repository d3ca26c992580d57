//===- Nvrtc.h - Compiling CUDA C++ with NVRTC ------------------*- C++ -*-===//
//
// Compiles a CUDA C++ translation unit to a cubin (or PTX) in-process. Works
// without a GPU: only the target architecture is needed. Generated kernels
// include gnnc's device helpers (runtime/include/gnnc/cuda/*.cuh, e.g.
// `#include "gnnc/cuda/f16.cuh"`); the build embeds copies of them in the
// runtime, and every compilation hands them to NVRTC from memory, so that
// no file of the source tree is needed at run time.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_RUNTIME_NVRTC_H
#define GNNC_RUNTIME_NVRTC_H

#include "gnnc/runtime/Status.h"

#include <string>
#include <vector>

namespace gnnc::rt {

/// A header NVRTC takes from memory: `#include "<name>"` finds `text`.
struct InMemoryHeader {
  /// The include name, "gnnc/cuda/f16.cuh".
  std::string name;
  std::string text;
};

/// gnnc's device helpers, runtime/include/gnnc/cuda/*.cuh, as the build
/// embedded them in the runtime (in name order).
const std::vector<InMemoryHeader> &deviceHeaders();

/// How to compile.
struct CompileOptions {
  /// The target, "sm_90" (also "sm_90a"; "compute_90" is accepted for PTX).
  std::string arch;
  /// Produce PTX for compute_XX instead of a cubin for sm_XX.
  bool ptx = false;
  /// More NVRTC flags, appended after the defaults.
  std::vector<std::string> extraFlags;
  /// The headers NVRTC takes from memory: gnnc's device helpers. (The
  /// kernel cache's key covers their names and contents.)
  std::vector<InMemoryHeader> headers = deviceHeaders();
};

/// The output of one compilation.
struct CompiledKernel {
  /// The cubin (an ELF image) or the PTX text.
  std::string binary;
  /// The NVRTC log (warnings); may be empty.
  std::string log;
  bool isPtx = false;
};

/// Finds the CUDA header directories for NVRTC: the first of
/// $CUDA_HOME/include, $CUDA_PATH/include and /usr/local/cuda/include that
/// holds cuda_fp16.h, plus its cccl/ subdirectory when present. The result is
/// computed once per process.
Expected<std::vector<std::string>> findCudaIncludeDirs();

/// The NVRTC version, "13.0".
std::string nvrtcVersionString();

/// The complete NVRTC flag list used for `options` (without include dirs):
/// --gpu-architecture=..., -std=c++17, -default-device, then extraFlags.
Expected<std::vector<std::string>> nvrtcFlags(const CompileOptions &options);

/// Compiles `source` (named `programName` in diagnostics), with
/// `options.headers` in memory and the CUDA headers on the include path. On
/// a compile failure the error message holds the NVRTC log verbatim.
Expected<CompiledKernel> compileCuda(const std::string &source,
                                     const std::string &programName,
                                     const CompileOptions &options);

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_NVRTC_H
