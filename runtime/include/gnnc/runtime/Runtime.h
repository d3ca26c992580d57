//===- Runtime.h - Just-in-time kernels for host programs -------*- C++ -*-===//
//
// The front door for host programs: open a device, load KernelSpecs (compiled
// by NVRTC for the device through the on-disk cache), bind arguments by
// parameter name and launch.
//
//   auto runtime = gnnc::rt::Runtime::create();
//   auto kernel = runtime->load(spec);
//   gnnc::rt::ArgPack args;
//   args.bind("x", xBuffer).bind("y", yBuffer).bind("n", int64_t(n));
//   gnnc::Status status = runtime->launch(*kernel, args);
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_RUNTIME_RUNTIME_H
#define GNNC_RUNTIME_RUNTIME_H

#include "gnnc/runtime/Cache.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/KernelSpec.h"
#include "gnnc/runtime/Nvrtc.h"
#include "gnnc/runtime/Status.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gnnc::rt {

/// How long Runtime::load took.
struct LoadStats {
  /// Cache lookup plus NVRTC compilation (if the cache missed).
  double compileMs = 0;
  /// cuModuleLoadData plus the function lookup.
  double moduleLoadMs = 0;
  /// The whole call: API call to launch-ready kernel.
  double totalMs = 0;
  bool cacheHit = false;
};

/// A kernel ready to launch. Keeps its module alive.
struct LoadedKernel {
  KernelSpec spec;
  Function function;
  /// The entry points of spec.preludes, in order.
  std::vector<Function> preludes;
  /// The entry points of spec.followUps, in order.
  std::vector<Function> followUps;
  /// How many blocks of `function` at the spec's launch an SM holds, as
  /// the driver counted when the kernel was loaded (0: not known).
  int residentBlocksPerSm = 0;
};

/// Kernel arguments, bound by parameter role (how gnnc's host ops bind
/// them, whatever the parameters are called) or by parameter name.
class ArgPack {
public:
  /// Binds the pointer parameter with `role` (and, for role input,
  /// `operand`) to the buffer's device address.
  ArgPack &bind(ParamRole role, const DeviceBuffer &buffer,
                int32_t operand = 0);
  /// Binds the i64 parameter with `role` (a count).
  ArgPack &bind(ParamRole role, int64_t value);

  /// Binds a "ptr" parameter to the buffer's device address.
  ArgPack &bind(const std::string &name, const DeviceBuffer &buffer);
  /// Binds a "ptr" parameter to a raw device address.
  ArgPack &bindAddress(const std::string &name, uint64_t address);
  /// Binds an "i32" parameter.
  ArgPack &bind(const std::string &name, int32_t value);
  /// Binds an "i64" parameter.
  ArgPack &bind(const std::string &name, int64_t value);
  /// Binds an "f32" parameter.
  ArgPack &bind(const std::string &name, float value);

  /// One bound value; all kinds are stored in 8 bytes.
  struct Value {
    ParamKind kind;
    union {
      uint64_t address;
      int32_t i32;
      int64_t i64;
      float f32;
    };
  };
  const std::map<std::string, Value> &values() const { return values_; }
  using RoleKey = std::pair<ParamRole, int32_t>;
  const std::map<RoleKey, Value> &roleValues() const { return roleValues_; }

  /// The arguments of `spec` by name: those bound by name, and those bound
  /// by role under the name of the parameter with that role. Fails on a
  /// role `spec` has no parameter for, or a parameter bound both ways.
  Expected<ArgPack> byName(const KernelSpec &spec) const;

private:
  std::map<std::string, Value> values_;
  std::map<RoleKey, Value> roleValues_;
};

/// The number of blocks `spec` launches with `args` (0: skip the launch).
Expected<uint64_t> gridBlocks(const KernelSpec &spec, const ArgPack &args);
/// The same for one launch rule of `spec` (its own or a follow-up's).
Expected<uint64_t> gridBlocks(const KernelSpec &spec, const LaunchRule &rule,
                              const ArgPack &args);
/// The workspace bytes `spec` needs with `args` (0 without a workspace).
Expected<uint64_t> workspaceBytes(const KernelSpec &spec, const ArgPack &args);

/// Compiles `spec` into `cache` for a GPU of architecture `arch` the way
/// Runtime::load compiles it on such a GPU (the same program name and
/// default options, so the same cache key), without a GPU: a later load
/// there finds the cubin. `hit` (optional) says whether the cache already
/// held it. Fails with the NVRTC log when compilation fails.
Status compileAhead(const KernelCache &cache, const KernelSpec &spec,
                    const std::string &arch, bool *hit = nullptr);

/// A device plus a kernel cache.
class Runtime {
public:
  /// Opens device `device` and a kernel cache in `cacheDir` (empty: the
  /// default from the environment; "off": no cache).
  static Expected<Runtime> create(int device = 0, std::string cacheDir = "");

  const Device &device() const { return device_; }
  const KernelCache &cache() const { return cache_; }
  KernelCache &cache() { return cache_; }
  /// The options kernels are compiled with (arch = the device's).
  const CompileOptions &compileOptions() const { return options_; }
  CompileOptions &compileOptions() { return options_; }

  /// Validates `spec`, compiles it through the cache for the device and
  /// loads it. `stats` (optional) receives the timings.
  Expected<LoadedKernel> load(const KernelSpec &spec,
                              LoadStats *stats = nullptr);

  /// Checks that every parameter of the kernel is bound with its kind and
  /// that nothing else is bound, computes the grid from the launch rule and
  /// launches (nothing when the grid is empty), then its follow-ups; with
  /// `synchronize` waits for them and reports errors raised while they ran.
  /// A workspace parameter left unbound gets the runtime's scratch buffer
  /// of `stream`: one per stream, so launches queued on different streams
  /// never share one, reused by later launches on the same stream and grown
  /// as needed (after waiting for the context's work, which may still use
  /// the old one). All launches are queued on `stream` (a CUstream; null:
  /// the default stream).
  Status launch(const LoadedKernel &kernel, const ArgPack &args,
                bool synchronize = true, void *stream = nullptr);

  /// Waits for all launched work.
  Status synchronize() const { return device_.synchronize(); }

private:
  Runtime(Device device, KernelCache cache)
      : device_(std::move(device)), cache_(std::move(cache)) {}
  Device device_;
  KernelCache cache_;
  CompileOptions options_;
  /// Modules loaded so far, by cache key: kernels of one translation unit
  /// are compiled and loaded once.
  std::map<std::string, Module> modules_;
  /// Workspace for kernels whose caller binds none, by stream.
  std::map<void *, DeviceBuffer> scratch_;
  /// Workspaces outgrown, kept for the kernels and CUDA graphs that still
  /// use them.
  std::vector<DeviceBuffer> retiredScratch_;
};

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_RUNTIME_H
