//===- Runtime.cpp - Just-in-time kernels for host programs ---------------===//

#include "gnnc/runtime/Runtime.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

namespace gnnc::rt {

//===----------------------------------------------------------------------===//
// ArgPack
//===----------------------------------------------------------------------===//

ArgPack &ArgPack::bind(const std::string &name, const DeviceBuffer &buffer) {
  return bindAddress(name, buffer.address());
}

ArgPack &ArgPack::bindAddress(const std::string &name, uint64_t address) {
  Value value;
  value.kind = ParamKind::Pointer;
  value.address = address;
  values_[name] = value;
  return *this;
}

ArgPack &ArgPack::bind(const std::string &name, int32_t v) {
  Value value;
  value.kind = ParamKind::Int32;
  value.i64 = 0;
  value.i32 = v;
  values_[name] = value;
  return *this;
}

ArgPack &ArgPack::bind(const std::string &name, int64_t v) {
  Value value;
  value.kind = ParamKind::Int64;
  value.i64 = v;
  values_[name] = value;
  return *this;
}

ArgPack &ArgPack::bind(const std::string &name, float v) {
  Value value;
  value.kind = ParamKind::Float32;
  value.i64 = 0;
  value.f32 = v;
  values_[name] = value;
  return *this;
}

ArgPack &ArgPack::bind(ParamRole role, const DeviceBuffer &buffer,
                       int32_t operand) {
  Value value;
  value.kind = ParamKind::Pointer;
  value.address = buffer.address();
  roleValues_[{role, role == ParamRole::Input ? operand : 0}] = value;
  return *this;
}

ArgPack &ArgPack::bind(ParamRole role, int64_t v) {
  Value value;
  value.kind = ParamKind::Int64;
  value.i64 = v;
  roleValues_[{role, 0}] = value;
  return *this;
}

Expected<ArgPack> ArgPack::byName(const KernelSpec &spec) const {
  ArgPack named;
  named.values_ = values_;
  for (const auto &[key, value] : roleValues_) {
    const KernelParam *param = spec.findRole(key.first, key.second);
    std::string role = paramRoleName(key.first);
    if (key.first == ParamRole::Input)
      role += " " + std::to_string(key.second);
    if (!param)
      return Status::error("kernel '" + spec.name +
                           "': an argument is bound "
                           "to the role " +
                           role + ", which no parameter has");
    if (!named.values_.emplace(param->name, value).second)
      return Status::error("kernel '" + spec.name + "': parameter '" +
                           param->name + "' (role " + role +
                           ") is bound both by name and by role");
  }
  return named;
}

/// Checks the bindings of `args` against the parameters of `spec`.
static Status checkArguments(const KernelSpec &spec, const ArgPack &args) {
  for (const KernelParam &param : spec.params) {
    auto it = args.values().find(param.name);
    if (it == args.values().end())
      return Status::error("kernel '" + spec.name + "': parameter '" +
                           param.name + "' (" + paramKindName(param.kind) +
                           ") is not bound");
    if (it->second.kind != param.kind)
      return Status::error("kernel '" + spec.name + "': parameter '" +
                           param.name + "' is " + paramKindName(param.kind) +
                           " but was bound to a " +
                           paramKindName(it->second.kind) + " value");
  }
  for (const auto &[name, value] : args.values())
    if (!spec.findParam(name))
      return Status::error("kernel '" + spec.name +
                           "': an argument is bound "
                           "to '" +
                           name + "', which is not a parameter");
  return Status::ok();
}

/// The sum of the values of the integer parameters of `spec` with the
/// roles `roles`, bound by name in `args`; `use` names their use in errors.
static Expected<int64_t> integerArgument(const KernelSpec &spec,
                                         const ArgPack &args,
                                         const std::vector<ParamRole> &roles,
                                         const char *use) {
  int64_t sum = 0;
  for (ParamRole partRole : roles) {
    const KernelParam *param = spec.findRole(partRole);
    if (!param)
      return Status::error("kernel '" + spec.name + "': " + use + " '" +
                           paramRoleName(partRole) +
                           "' is the role of no parameter");
    const std::string &part = param->name;
    const char *role = use;
    auto it = args.values().find(part);
    if (it == args.values().end())
      return Status::error("kernel '" + spec.name + "': " + role + " '" + part +
                           "' is not bound");
    int64_t items = 0;
    if (it->second.kind == ParamKind::Int32)
      items = it->second.i32;
    else if (it->second.kind == ParamKind::Int64)
      items = it->second.i64;
    else
      return Status::error("kernel '" + spec.name + "': " + role + " '" + part +
                           "' must be bound to an integer");
    if (items < 0)
      return Status::error("kernel '" + spec.name + "': " + role + " '" + part +
                           "' is negative (" + std::to_string(items) + ")");
    if (items > std::numeric_limits<int64_t>::max() - sum)
      return Status::error("kernel '" + spec.name + "': the " + role +
                           " overflows");
    sum += items;
  }
  return sum;
}

Expected<uint64_t> gridBlocks(const KernelSpec &spec, const LaunchRule &rule,
                              const ArgPack &given) {
  if (rule.grid.empty())
    return std::max<uint64_t>(1, rule.minBlocks);
  Expected<ArgPack> args = given.byName(spec);
  if (!args)
    return args.status();
  Expected<int64_t> items =
      integerArgument(spec, *args, rule.grid, "grid parameter");
  if (!items)
    return items.status();
  uint64_t perBlock = rule.itemsPerBlock ? rule.itemsPerBlock : 1;
  // (Rounded up without forming items + perBlock - 1, which may wrap.)
  uint64_t n = static_cast<uint64_t>(*items);
  uint64_t blocks = n / perBlock + (n % perBlock != 0);
  return std::max(blocks, rule.minBlocks);
}

Expected<uint64_t> gridBlocks(const KernelSpec &spec, const ArgPack &args) {
  return gridBlocks(spec, spec.launch, args);
}

Expected<uint64_t> workspaceBytes(const KernelSpec &spec,
                                  const ArgPack &given) {
  if (!spec.workspace)
    return uint64_t(0);
  const WorkspaceRule &ws = *spec.workspace;
  Expected<ArgPack> args = given.byName(spec);
  if (!args)
    return args.status();
  Expected<int64_t> items =
      integerArgument(spec, *args, ws.count, "workspace count");
  if (!items)
    return items.status();
  uint64_t perUnit = ws.itemsPerUnit ? ws.itemsPerUnit : 1;
  uint64_t n = static_cast<uint64_t>(*items);
  uint64_t units =
      std::max<uint64_t>(n / perUnit + (n % perUnit != 0), ws.minUnits);
  if (ws.bytesPerUnit &&
      units > std::numeric_limits<uint64_t>::max() / ws.bytesPerUnit)
    return Status::error("kernel '" + spec.name +
                         "': the workspace size overflows");
  return units * ws.bytesPerUnit;
}

//===----------------------------------------------------------------------===//
// Runtime
//===----------------------------------------------------------------------===//

/// The NVRTC program name of every kernel description.
static const char *const kProgramName = "gnnc.cu";

/// The options a kernel is compiled with for `arch` unless the caller
/// changes a Runtime's compileOptions().
static CompileOptions defaultOptions(const std::string &arch) {
  CompileOptions options;
  options.arch = arch;
  return options;
}

Status compileAhead(const KernelCache &cache, const KernelSpec &spec,
                    const std::string &arch, bool *hit) {
  GNNC_RETURN_IF_ERROR(validateKernelSpec(spec).withContext(
      "compiling kernel '" + spec.name + "' ahead"));
  Expected<CompiledKernel> compiled =
      cache.getOrCompile(spec.source, kProgramName, defaultOptions(arch), hit);
  if (!compiled)
    return compiled.status().withContext("compiling kernel '" + spec.name +
                                         "' for " + arch);
  return Status::ok();
}

Expected<Runtime> Runtime::create(int device, std::string cacheDir) {
  Expected<Device> opened = Device::open(device);
  if (!opened)
    return opened.status();
  Runtime runtime(opened.take(), KernelCache(std::move(cacheDir)));
  runtime.options_ = defaultOptions(runtime.device_.compileTarget());
  return runtime;
}

static double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

Expected<LoadedKernel> Runtime::load(const KernelSpec &spec, LoadStats *stats) {
  auto start = std::chrono::steady_clock::now();
  std::string what = "loading kernel '" + spec.name + "'";
  GNNC_RETURN_IF_ERROR(validateKernelSpec(spec).withContext(what));
  // Kernels of one translation unit share one compilation and one module.
  const std::string key = cache_.key(spec.source, kProgramName, options_);
  bool hit = false;
  double compileMs = 0;
  auto loadStart = start;
  auto loaded = modules_.find(key);
  if (loaded == modules_.end()) {
    Expected<CompiledKernel> compiled =
        cache_.getOrCompile(spec.source, kProgramName, options_, &hit);
    if (!compiled)
      return compiled.status().withContext(what);
    compileMs = millisecondsSince(start);
    loadStart = std::chrono::steady_clock::now();
    Expected<Module> module = Module::load(compiled->binary);
    if (!module)
      return module.status().withContext(what);
    loaded = modules_.emplace(key, module.take()).first;
  } else {
    hit = true;
  }
  const Module *module = &loaded->second;
  Expected<Function> function = module->function(spec.name);
  if (!function)
    return function.status().withContext(what);
  if (stats) {
    stats->compileMs = compileMs;
    stats->moduleLoadMs = millisecondsSince(loadStart);
    stats->totalMs = millisecondsSince(start);
    stats->cacheHit = hit;
  }
  LoadedKernel kernel;
  kernel.spec = spec;
  kernel.function = function.take();
  // Asked once here, not at every launch; a driver that cannot answer
  // leaves the launch code to its own estimate.
  if (Expected<int> perSm = residentBlocksPerSm(
          kernel.function, spec.launch.blockX, spec.launch.sharedBytes))
    kernel.residentBlocksPerSm = *perSm;
  for (const auto &[list, functions] :
       {std::pair{&spec.preludes, &kernel.preludes},
        std::pair{&spec.followUps, &kernel.followUps}})
    for (const FollowUpKernel &next : *list) {
      Expected<Function> f = module->function(next.name);
      if (!f)
        return f.status().withContext(what);
      functions->push_back(f.take());
    }
  return kernel;
}

Status Runtime::launch(const LoadedKernel &kernel, const ArgPack &unresolved,
                       bool synchronize, void *stream) {
  const KernelSpec &spec = kernel.spec;
  Expected<ArgPack> named = unresolved.byName(spec);
  if (!named)
    return named.status();
  const ArgPack &given = *named;
  // An unbound workspace gets the runtime's scratch buffer.
  const ArgPack *bound = &given;
  ArgPack withWorkspace;
  const KernelParam *workspace = spec.findRole(ParamRole::Workspace);
  if (spec.workspace && workspace && !given.values().count(workspace->name)) {
    Expected<uint64_t> bytes = workspaceBytes(spec, given);
    if (!bytes)
      return bytes.status();
    DeviceBuffer &scratch = scratch_[stream];
    if (*bytes > scratch.size()) {
      // The old buffer may still be used by queued kernels and by CUDA
      // graphs captured with it: it is kept while the runtime lives, and
      // nothing waits for the device. The size at least doubles where
      // memory allows, so the kept buffers add up to about the current one.
      // (Inside a capture the allocation fails, and cudaFailure's message
      // says to run the op once before capturing.)
      Expected<DeviceBuffer> grown = DeviceBuffer::allocate(
          std::max<uint64_t>(*bytes, 2 * uint64_t(scratch.size())));
      if (!grown)
        grown = DeviceBuffer::allocate(*bytes);
      if (!grown)
        return grown.status().withContext("kernel '" + spec.name +
                                          "': allocating its workspace");
      if (scratch.size() > 0)
        retiredScratch_.push_back(std::move(scratch));
      scratch = grown.take();
    }
    withWorkspace = given;
    withWorkspace.bindAddress(workspace->name, scratch.address());
    bound = &withWorkspace;
  }
  const ArgPack &args = *bound;
  GNNC_RETURN_IF_ERROR(checkArguments(spec, args));

  // Parameter storage in launch order; kernelParams points into it.
  std::vector<ArgPack::Value> storage;
  storage.reserve(spec.params.size());
  std::vector<void *> pointers;
  pointers.reserve(spec.params.size());
  for (const KernelParam &param : spec.params)
    storage.push_back(args.values().at(param.name));
  for (ArgPack::Value &value : storage) {
    switch (value.kind) {
    case ParamKind::Pointer:
      pointers.push_back(&value.address);
      break;
    case ParamKind::Int32:
      pointers.push_back(&value.i32);
      break;
    case ParamKind::Int64:
      pointers.push_back(&value.i64);
      break;
    case ParamKind::Float32:
      pointers.push_back(&value.f32);
      break;
    }
  }
  auto launchOne = [&](const std::string &entry, const Function &function,
                       const LaunchRule &rule, bool last) -> Status {
    Expected<uint64_t> blocks = gridBlocks(spec, rule, args);
    if (!blocks)
      return blocks.status();
    if (*blocks == 0)
      return last && synchronize ? device_.synchronize() : Status::ok();
    if (*blocks > uint64_t(std::numeric_limits<int32_t>::max()))
      return Status::error("kernel '" + entry + "': the grid needs " +
                           std::to_string(*blocks) +
                           " blocks, more than a launch allows");
    return rt::launch(function, {static_cast<unsigned>(*blocks), 1u, 1u},
                      {rule.blockX, rule.blockY, rule.blockZ}, rule.sharedBytes,
                      pointers.empty() ? nullptr : pointers.data(),
                      synchronize && last, stream);
  };
  if (kernel.followUps.size() != spec.followUps.size() ||
      kernel.preludes.size() != spec.preludes.size())
    return Status::error("kernel '" + spec.name +
                         "' was not loaded with its prelude and follow-up "
                         "kernels");
  for (size_t i = 0; i < spec.preludes.size(); ++i)
    GNNC_RETURN_IF_ERROR(launchOne(spec.preludes[i].name, kernel.preludes[i],
                                   spec.preludes[i].launch, false));
  GNNC_RETURN_IF_ERROR(launchOne(spec.name, kernel.function, spec.launch,
                                 spec.followUps.empty()));
  for (size_t i = 0; i < spec.followUps.size(); ++i)
    GNNC_RETURN_IF_ERROR(launchOne(spec.followUps[i].name, kernel.followUps[i],
                                   spec.followUps[i].launch,
                                   i + 1 == spec.followUps.size()));
  return Status::ok();
}

} // namespace gnnc::rt
