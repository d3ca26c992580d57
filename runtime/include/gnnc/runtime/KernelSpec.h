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

#include "gnnc/Plan/Abi.h"
#include "gnnc/Plan/Schedule.h"
#include "gnnc/Plan/Types.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gnnc::rt {

using gnnc::ParamKind;
using gnnc::paramKindName;
using gnnc::parseParamKind;

/// One kernel parameter: its name, how it is passed and what it holds.
struct KernelParam {
  std::string name;
  ParamKind kind = ParamKind::Pointer;
  ParamRole role = ParamRole::Unused;
  /// Role input: the op's input it holds (see ParamRole::Input).
  int32_t operand = 0;
};

/// How a kernel is launched. The grid has ceil(sum of the values of the
/// parameters with the roles `grid` / itemsPerBlock) blocks in x (and 1 in
/// y and z), raised to `minBlocks`; a grid of 0 blocks means the launch is
/// skipped. An empty `grid` means a grid of exactly one block.
struct LaunchRule {
  unsigned blockX = 256, blockY = 1, blockZ = 1;
  std::vector<ParamRole> grid;
  uint64_t itemsPerBlock = 1;
  /// Dynamic shared memory per block, in bytes.
  unsigned sharedBytes = 0;
  /// The fewest blocks launched, whatever the grid parameters say (a kernel
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

/// Device scratch memory a kernel needs: ceil(sum of the values of the
/// parameters with the roles `count` / itemsPerUnit), at least `minUnits`,
/// times `bytesPerUnit` bytes, passed in the parameter with the role
/// Workspace. The runtime allocates it when the caller does not bind that
/// parameter; its contents on entry are unspecified.
struct WorkspaceRule {
  std::vector<ParamRole> count;
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
  /// What the kernel computes (absent for kernels not made by gnnc).
  std::optional<OpDesc> op;
  /// The complete schedule it runs.
  Schedule schedule;
  /// write = atomic: the most edges of one piece of a split row added
  /// atomically to the result (KernelPlan::atomicPieceEdges); 0 otherwise.
  int64_t atomicPieceEdges = 0;

  /// Returns the parameter called `paramName`, or nullptr.
  const KernelParam *findParam(const std::string &paramName) const;
  /// Returns the parameter with `role` (and, for role input, `operand`), or
  /// nullptr.
  const KernelParam *findRole(ParamRole role, int32_t operand = 0) const;
};

/// Checks that `spec` is launchable: valid C identifiers as kernel names
/// (preludes and follow-ups included, all distinct), unique parameter names,
/// each parameter passed as its role requires, positive blocks, items per
/// block >= 1, grid roles (when given) held by i32/i64 parameters, and a
/// workspace (when given) with a workspace parameter and a count of i32/i64
/// parameters.
Status validateKernelSpec(const KernelSpec &spec);

/// The manifest format this runtime reads and writes.
constexpr int kManifestVersion = 2;

/// Renders the manifest (pretty JSON, format version 2) of `kernels`, whose
/// sources all live in the file `sourceFileName` (stored as "source"):
///   {"version":2,"source":"kernels.cu","kernels":[{"name":..,
///    "params":[{"name":..,"kind":"ptr","role":"row_offsets"},
///              {"name":..,"kind":"ptr","role":"input","operand":1}],
///    "launch":{"block":[x,y,z],"grid":["num_rows",..],
///    "items_per_block":..,"shared_bytes":..,"min_blocks":..},
///    "preludes":[{"name":..,"launch":{..}}],
///    "follow_ups":[{"name":..,"launch":{..}}],
///    "workspace":{"count":[..],"items_per_unit":..,"bytes_per_unit":..,
///    "min_units":..}, "schedule":"#gnn.schedule<..>",
///    "op":{"kind":"spmm","element_type":"f32","width":..,"row_stride":..,
///    "offset_type":"i64","index_type":"i32",...},"atomic_piece_edges":..}]}
/// (min_blocks, preludes, follow_ups, workspace, op and atomic_piece_edges
/// only when used).
std::string writeManifest(const std::vector<KernelSpec> &kernels,
                          const std::string &sourceFileName);

/// Parses and validates a manifest. `manifestPath` only prefixes error
/// messages ("path: kernels[2].launch.block: expected 3 positive
/// integers"); every returned spec gets `source` as its source text. A
/// manifest of another version is refused with a message that says so.
Expected<std::vector<KernelSpec>> readManifest(const std::string &json,
                                               const std::string &manifestPath,
                                               const std::string &source);

/// Reads the manifest file at `manifestPath` and the source file it names
/// (relative to the manifest's directory), then parses it as readManifest.
Expected<std::vector<KernelSpec>>
readManifestFile(const std::string &manifestPath);

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_KERNELSPEC_H
