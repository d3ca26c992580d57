//===- Runtime.cpp - Just-in-time kernels for host programs ---------------===//

#include "gnnc/runtime/Runtime.h"

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

Expected<uint64_t> gridBlocks(const KernelSpec &spec, const ArgPack &args) {
  const LaunchRule &rule = spec.launch;
  if (rule.gridParam.empty())
    return uint64_t(1);
  auto it = args.values().find(rule.gridParam);
  if (it == args.values().end())
    return Status::error("kernel '" + spec.name + "': grid parameter '" +
                         rule.gridParam + "' is not bound");
  int64_t items = 0;
  if (it->second.kind == ParamKind::Int32)
    items = it->second.i32;
  else if (it->second.kind == ParamKind::Int64)
    items = it->second.i64;
  else
    return Status::error("kernel '" + spec.name + "': grid parameter '" +
                         rule.gridParam + "' must be bound to an integer");
  if (items < 0)
    return Status::error("kernel '" + spec.name + "': grid parameter '" +
                         rule.gridParam + "' is negative (" +
                         std::to_string(items) + ")");
  uint64_t perBlock = rule.itemsPerBlock ? rule.itemsPerBlock : 1;
  return (static_cast<uint64_t>(items) + perBlock - 1) / perBlock;
}

//===----------------------------------------------------------------------===//
// Runtime
//===----------------------------------------------------------------------===//

Expected<Runtime> Runtime::create(int device, std::string cacheDir) {
  Expected<Device> opened = Device::open(device);
  if (!opened)
    return opened.status();
  Runtime runtime(opened.take(), KernelCache(std::move(cacheDir)));
  runtime.options_.arch = runtime.device_.archString();
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
  const std::string key = cache_.key(spec.source, "gnnc.cu", options_);
  bool hit = false;
  double compileMs = 0;
  auto loadStart = start;
  auto loaded = modules_.find(key);
  if (loaded == modules_.end()) {
    Expected<CompiledKernel> compiled =
        cache_.getOrCompile(spec.source, "gnnc.cu", options_, &hit);
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
  return kernel;
}

Status Runtime::launch(const LoadedKernel &kernel, const ArgPack &args,
                       bool synchronize) {
  const KernelSpec &spec = kernel.spec;
  GNNC_RETURN_IF_ERROR(checkArguments(spec, args));
  Expected<uint64_t> blocks = gridBlocks(spec, args);
  if (!blocks)
    return blocks.status();
  if (*blocks == 0)
    return Status::ok();
  if (*blocks > uint64_t(std::numeric_limits<int32_t>::max()))
    return Status::error("kernel '" + spec.name + "': the grid needs " +
                         std::to_string(*blocks) +
                         " blocks, more than a launch allows");

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
  const LaunchRule &rule = spec.launch;
  return rt::launch(kernel.function, {static_cast<unsigned>(*blocks), 1u, 1u},
                    {rule.blockX, rule.blockY, rule.blockZ}, rule.sharedBytes,
                    pointers.empty() ? nullptr : pointers.data(), synchronize);
}

} // namespace gnnc::rt
