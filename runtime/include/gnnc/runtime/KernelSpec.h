//===- KernelSpec.h - The compiler/runtime kernel contract ------*- C++ -*-===//
//
// A KernelSpec describes one generated CUDA kernel: its source, its entry
// point, its parameters in launch order and how to size its grid. The
// compiler writes a list of them as a JSON manifest next to the generated
// source file; the runtime reads the manifest back and launches the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_RUNTIME_KERNELSPEC_H
#define GNNC_RUNTIME_KERNELSPEC_H

#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gnnc::rt {

/// The kind of one kernel parameter.
enum class ParamKind { Pointer, Int32, Int64, Float32 };

/// The manifest spelling of a parameter kind: "ptr", "i32", "i64" or "f32".
const char *paramKindName(ParamKind kind);
/// Parses a manifest spelling; std::nullopt for an unknown one.
std::optional<ParamKind> parseParamKind(const std::string &text);

/// One kernel parameter.
struct KernelParam {
  std::string name;
  ParamKind kind = ParamKind::Pointer;
};

/// How a kernel is launched. The grid has ceil(value of the integer
/// parameter `gridParam` / itemsPerBlock) blocks in x (and 1 in y and z); a
/// value of 0 means the launch is skipped. An empty `gridParam` means a grid
/// of exactly one block.
struct LaunchRule {
  unsigned blockX = 256, blockY = 1, blockZ = 1;
  std::string gridParam;
  uint64_t itemsPerBlock = 1;
  /// Dynamic shared memory per block, in bytes.
  unsigned sharedBytes = 0;
};

/// One generated kernel.
struct KernelSpec {
  /// The extern "C" __global__ entry point name.
  std::string name;
  /// The complete CUDA C++ translation unit that defines the kernel.
  std::string source;
  /// The parameters, in launch order.
  std::vector<KernelParam> params;
  LaunchRule launch;
  /// The #gnn.schedule text, for reports.
  std::string schedule;
  /// Free-form facts (op, element type, feature width...).
  std::map<std::string, std::string> info;

  /// Returns the parameter called `paramName`, or nullptr.
  const KernelParam *findParam(const std::string &paramName) const;
};

/// Checks that `spec` is launchable: a valid C identifier as name, unique
/// parameter names, a positive block, items per block >= 1, and a grid
/// parameter (when given) that names an i32/i64 parameter.
Status validateKernelSpec(const KernelSpec &spec);

/// Renders the manifest (pretty JSON, format version 1) of `kernels`, whose
/// sources all live in the file `sourceFileName` (stored as "source"):
///   {"version":1,"source":"kernels.cu","kernels":[{"name":..,
///    "params":[{"name":..,"kind":"ptr"}],"launch":{"block":[x,y,z],
///    "grid_param":..,"items_per_block":..,"shared_bytes":..},
///    "schedule":..,"info":{..}}]}
std::string writeManifest(const std::vector<KernelSpec> &kernels,
                          const std::string &sourceFileName);

/// Parses and validates a manifest. `manifestPath` only prefixes error
/// messages ("path: kernels[2].launch.block: expected 3 positive
/// integers"); every returned spec gets `source` as its source text.
Expected<std::vector<KernelSpec>> readManifest(const std::string &json,
                                               const std::string &manifestPath,
                                               const std::string &source);

/// Reads the manifest file at `manifestPath` and the source file it names
/// (relative to the manifest's directory), then parses it as readManifest.
Expected<std::vector<KernelSpec>>
readManifestFile(const std::string &manifestPath);

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_KERNELSPEC_H
