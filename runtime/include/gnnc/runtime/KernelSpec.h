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
/// parameter `gridParam` / itemsPerBlock) blocks in x (and 1 in y and z;
/// `gridParam` may also be a sum of integer parameters, "a+b"),
/// raised to `minBlocks`; a grid of 0 blocks means the launch is skipped. An
/// empty `gridParam` means a grid of exactly one block.
struct LaunchRule {
  unsigned blockX = 256, blockY = 1, blockZ = 1;
  std::string gridParam;
  uint64_t itemsPerBlock = 1;
  /// Dynamic shared memory per block, in bytes.
  unsigned sharedBytes = 0;
  /// The fewest blocks launched, whatever the grid parameter says (a kernel
  /// over edges still has rows to write when a graph has no edges).
  uint64_t minBlocks = 0;
};

/// A kernel launched before or after the main one, on the same stream and
/// with the same arguments (for instance to initialize the rows that blocks
/// add to atomically, or to finish rows split between blocks).
struct FollowUpKernel {
  /// Its extern "C" entry point, in the same translation unit.
  std::string name;
  LaunchRule launch;
};

/// Device scratch memory a kernel needs: ceil(value of the integer parameter
/// `countParam` (or sum "a+b") / itemsPerUnit), at least `minUnits`, times
/// `bytesPerUnit` bytes, passed in the pointer parameter `param`. The runtime
/// allocates it when the caller does not bind `param`; its contents on entry
/// are unspecified.
struct WorkspaceRule {
  std::string param;
  std::string countParam;
  uint64_t itemsPerUnit = 1;
  uint64_t bytesPerUnit = 0;
  uint64_t minUnits = 0;
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
  /// Kernels launched before this one, in order, with the same arguments.
  std::vector<FollowUpKernel> preludes;
  /// Kernels launched after this one, in order, with the same arguments.
  std::vector<FollowUpKernel> followUps;
  /// Scratch memory, if the kernel needs any.
  std::optional<WorkspaceRule> workspace;
  /// The #gnn.schedule text, for reports.
  std::string schedule;
  /// Free-form facts (op, element type, feature width...).
  std::map<std::string, std::string> info;

  /// Returns the parameter called `paramName`, or nullptr.
  const KernelParam *findParam(const std::string &paramName) const;
};

/// Splits "a+b+c" into {"a", "b", "c"} (a single name gives itself).
std::vector<std::string> splitParamSum(const std::string &text);

/// Checks that `spec` is launchable: valid C identifiers as kernel names
/// (preludes and follow-ups included, all distinct), unique parameter names,
/// positive blocks, items per block >= 1, grid parameters (when given) that
/// name i32/i64 parameters, and a workspace (when given) whose parameter is a
/// pointer and whose count is an i32/i64 parameter.
Status validateKernelSpec(const KernelSpec &spec);

/// Renders the manifest (pretty JSON, format version 1) of `kernels`, whose
/// sources all live in the file `sourceFileName` (stored as "source"):
///   {"version":1,"source":"kernels.cu","kernels":[{"name":..,
///    "params":[{"name":..,"kind":"ptr"}],"launch":{"block":[x,y,z],
///    "grid_param":..,"items_per_block":..,"shared_bytes":..,
///    "min_blocks":..}, "preludes":[{"name":..,"launch":{..}}],
///    "follow_ups":[{"name":..,"launch":{..}}],
///    "workspace":{"param":..,"count_param":..,"items_per_unit":..,
///    "bytes_per_unit":..,"min_units":..}, "schedule":..,"info":{..}}]}
/// (min_blocks, preludes, follow_ups and workspace only when used).
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
