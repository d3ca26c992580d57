//===- Driver.cpp - The CUDA driver API, loaded at run time ---------------===//

#include "gnnc/runtime/Driver.h"

// Types and enums only: libcuda is opened with dlopen, never linked.
#include <cuda.h>

#include <algorithm>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <optional>
#include <type_traits>

namespace gnnc::rt {

namespace {

/// The driver entry points the runtime uses. The types come from cuda.h,
/// whose macros map the names to their current versions (cuMemAlloc ->
/// cuMemAlloc_v2, ...); the symbols are looked up by those versioned names.
struct DriverApi {
  decltype(&::cuInit) init;
  decltype(&::cuDriverGetVersion) driverGetVersion;
  decltype(&::cuGetErrorName) getErrorName;
  decltype(&::cuGetErrorString) getErrorString;
  decltype(&::cuDeviceGetCount) deviceGetCount;
  decltype(&::cuDeviceGet) deviceGet;
  decltype(&::cuDeviceGetName) deviceGetName;
  decltype(&::cuDeviceGetAttribute) deviceGetAttribute;
  decltype(&::cuDeviceTotalMem) deviceTotalMem;
  decltype(&::cuDevicePrimaryCtxRetain) primaryCtxRetain;
  decltype(&::cuDevicePrimaryCtxRelease) primaryCtxRelease;
  decltype(&::cuCtxSetCurrent) ctxSetCurrent;
  decltype(&::cuCtxGetCurrent) ctxGetCurrent;
  decltype(&::cuCtxSynchronize) ctxSynchronize;
  decltype(&::cuMemGetInfo) memGetInfo;
  decltype(&::cuMemAlloc) memAlloc;
  decltype(&::cuMemFree) memFree;
  decltype(&::cuMemcpyHtoD) memcpyHtoD;
  decltype(&::cuMemcpyDtoH) memcpyDtoH;
  decltype(&::cuMemsetD8) memsetD8;
  decltype(&::cuModuleLoadDataEx) moduleLoadDataEx;
  decltype(&::cuModuleUnload) moduleUnload;
  decltype(&::cuModuleGetFunction) moduleGetFunction;
  decltype(&::cuFuncSetAttribute) funcSetAttribute;
  decltype(&::cuLaunchKernel) launchKernel;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor) occupancy;
  decltype(&::cuEventCreate) eventCreate;
  decltype(&::cuEventRecord) eventRecord;
  decltype(&::cuEventSynchronize) eventSynchronize;
  decltype(&::cuEventElapsedTime) eventElapsedTime;
  decltype(&::cuEventDestroy) eventDestroy;
  decltype(&::cuStreamCreate) streamCreate;
  decltype(&::cuStreamDestroy) streamDestroy;
  decltype(&::cuStreamSynchronize) streamSynchronize;
  decltype(&::cuStreamWaitEvent) streamWaitEvent;
};

struct DriverState {
  DriverApi api{};
  Status status;
  int deviceCount = 0;
};

std::string cudaErrorText(const DriverApi &api, CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (api.getErrorName)
    api.getErrorName(result, &name);
  if (api.getErrorString)
    api.getErrorString(result, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

DriverState loadDriver() {
  DriverState state;
  void *library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *reason = ::dlerror();
    state.status = Status::error(
        std::string("no CUDA driver: libcuda.so.1 not found") +
        (reason ? std::string(" (") + reason + ")" : std::string()));
    return state;
  }
  std::string missing;
  auto bind = [&](auto &slot, const char *symbol,
                  const char *fallback = nullptr) {
    void *address = ::dlsym(library, symbol);
    if (!address && fallback)
      address = ::dlsym(library, fallback);
    if (!address && missing.empty())
      missing = symbol;
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(address);
  };
  DriverApi &api = state.api;
  bind(api.init, "cuInit");
  bind(api.driverGetVersion, "cuDriverGetVersion");
  bind(api.getErrorName, "cuGetErrorName");
  bind(api.getErrorString, "cuGetErrorString");
  bind(api.deviceGetCount, "cuDeviceGetCount");
  bind(api.deviceGet, "cuDeviceGet");
  bind(api.deviceGetName, "cuDeviceGetName");
  bind(api.deviceGetAttribute, "cuDeviceGetAttribute");
  bind(api.deviceTotalMem, "cuDeviceTotalMem_v2");
  bind(api.primaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(api.primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
       "cuDevicePrimaryCtxRelease");
  bind(api.ctxSetCurrent, "cuCtxSetCurrent");
  bind(api.ctxGetCurrent, "cuCtxGetCurrent");
  bind(api.ctxSynchronize, "cuCtxSynchronize");
  bind(api.memGetInfo, "cuMemGetInfo_v2");
  bind(api.memAlloc, "cuMemAlloc_v2");
  bind(api.memFree, "cuMemFree_v2");
  bind(api.memcpyHtoD, "cuMemcpyHtoD_v2");
  bind(api.memcpyDtoH, "cuMemcpyDtoH_v2");
  bind(api.memsetD8, "cuMemsetD8_v2");
  bind(api.moduleLoadDataEx, "cuModuleLoadDataEx");
  bind(api.moduleUnload, "cuModuleUnload");
  bind(api.moduleGetFunction, "cuModuleGetFunction");
  bind(api.funcSetAttribute, "cuFuncSetAttribute");
  bind(api.launchKernel, "cuLaunchKernel");
  bind(api.occupancy, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  bind(api.eventCreate, "cuEventCreate");
  bind(api.eventRecord, "cuEventRecord");
  bind(api.eventSynchronize, "cuEventSynchronize");
  bind(api.eventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
  bind(api.eventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
  bind(api.streamWaitEvent, "cuStreamWaitEvent");
  bind(api.streamCreate, "cuStreamCreate");
  bind(api.streamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy");
  bind(api.streamSynchronize, "cuStreamSynchronize");
  if (!missing.empty()) {
    state.status = Status::error("CUDA driver libcuda.so.1 has no '" + missing +
                                 "' (the driver is too old)");
    return state;
  }
  CUresult result = api.init(0);
  if (result == CUDA_ERROR_NO_DEVICE) {
    state.status =
        Status::error("no CUDA device: " + cudaErrorText(api, result));
    return state;
  }
  if (result != CUDA_SUCCESS) {
    state.status = Status::error("initialising the CUDA driver: cuInit: " +
                                 cudaErrorText(api, result));
    return state;
  }
  result = api.deviceGetCount(&state.deviceCount);
  if (result != CUDA_SUCCESS) {
    state.status =
        Status::error("counting CUDA devices: " + cudaErrorText(api, result));
    return state;
  }
  if (state.deviceCount <= 0)
    state.status = Status::error("no CUDA device");
  return state;
}

const DriverState &driverState() {
  static const DriverState state = loadDriver();
  return state;
}

/// The API, for objects that exist only once the driver loaded.
const DriverApi &api() { return driverState().api; }

Status cudaFailure(const std::string &what, CUresult result) {
  std::string text = what + ": " + cudaErrorText(api(), result);
  // Work gnnc does on an op's first call (compiling, uploading, allocating)
  // cannot run while a stream is captured into a CUDA graph.
  if (result >= CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED &&
      result <= CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD)
    text += "; a stream is being captured into a CUDA graph: run each gnnc "
            "op once on the capture stream before capturing it, so that its "
            "first-call uploads and allocations happen outside the capture";
  return Status::error(text);
}

} // namespace

namespace detail {

/// A context used by runtime objects. When `ownsPrimary`, this holds one
/// retain of the device's primary context, released on destruction.
struct ContextRef {
  CUdevice device = 0;
  CUcontext context = nullptr;
  bool ownsPrimary = false;

  ContextRef() = default;
  ContextRef(const ContextRef &) = delete;
  ContextRef &operator=(const ContextRef &) = delete;
  ~ContextRef() {
    if (ownsPrimary)
      api().primaryCtxRelease(device);
  }

  /// Makes the context current on the calling thread.
  Status makeCurrent() const {
    CUcontext current = nullptr;
    if (api().ctxGetCurrent(&current) == CUDA_SUCCESS && current == context)
      return Status::ok();
    CUresult result = api().ctxSetCurrent(context);
    if (result != CUDA_SUCCESS)
      return cudaFailure("making the CUDA context current", result);
    return Status::ok();
  }
};

struct ModuleState {
  std::shared_ptr<ContextRef> context;
  CUmodule module = nullptr;

  ModuleState() = default;
  ModuleState(const ModuleState &) = delete;
  ModuleState &operator=(const ModuleState &) = delete;
  ~ModuleState() {
    if (module && context->makeCurrent())
      api().moduleUnload(module);
  }
};

} // namespace detail

using detail::ContextRef;

namespace {

std::mutex registryMutex;
/// The contexts retained by Device::open, so that objects created later in
/// the current context can keep it alive.
std::map<CUcontext, std::weak_ptr<ContextRef>> &contextRegistry() {
  static std::map<CUcontext, std::weak_ptr<ContextRef>> registry;
  return registry;
}

/// The calling thread's current context, or an error when there is none.
Expected<std::shared_ptr<ContextRef>> currentContext(const std::string &what) {
  const DriverState &state = driverState();
  if (!state.status)
    return state.status.withContext(what);
  CUcontext current = nullptr;
  CUresult result = state.api.ctxGetCurrent(&current);
  if (result != CUDA_SUCCESS)
    return cudaFailure(what + ": getting the current context", result);
  if (!current)
    return Status::error(what + ": no current CUDA context (open a "
                                "gnnc::rt::Device first)");
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = contextRegistry().find(current);
  if (it != contextRegistry().end())
    if (std::shared_ptr<ContextRef> known = it->second.lock())
      return known;
  // A context the runtime did not create: use it without owning it.
  auto foreign = std::make_shared<ContextRef>();
  foreign->context = current;
  return foreign;
}

} // namespace

//===----------------------------------------------------------------------===//
// Driver queries
//===----------------------------------------------------------------------===//

bool gpuAvailable(std::string *why) {
  const DriverState &state = driverState();
  if (!state.status.isOk() && why)
    *why = state.status.message();
  return state.status.isOk();
}

Expected<int> driverVersion() {
  const DriverState &state = driverState();
  if (!state.api.driverGetVersion)
    return state.status;
  int version = 0;
  CUresult result = state.api.driverGetVersion(&version);
  if (result != CUDA_SUCCESS)
    return cudaFailure("getting the CUDA driver version", result);
  return version;
}

Expected<int> deviceCount() {
  const DriverState &state = driverState();
  if (!state.status)
    return state.status;
  return state.deviceCount;
}

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

Expected<Device> Device::open(int ordinal) {
  std::string what = "opening CUDA device " + std::to_string(ordinal);
  const DriverState &state = driverState();
  if (!state.status)
    return state.status.withContext(what);
  if (ordinal < 0 || ordinal >= state.deviceCount)
    return Status::error(what + ": there are only " +
                         std::to_string(state.deviceCount) + " devices");
  const DriverApi &driver = state.api;
  auto context = std::make_shared<ContextRef>();
  CUresult result = driver.deviceGet(&context->device, ordinal);
  if (result != CUDA_SUCCESS)
    return cudaFailure(what, result);
  result = driver.primaryCtxRetain(&context->context, context->device);
  if (result != CUDA_SUCCESS)
    return cudaFailure(what + ": retaining the primary context", result);
  context->ownsPrimary = true;
  GNNC_RETURN_IF_ERROR(context->makeCurrent().withContext(what));
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    contextRegistry()[context->context] = context;
  }

  Device device;
  device.context_ = context;
  device.ordinal_ = ordinal;
  char name[256] = {0};
  result = driver.deviceGetName(name, sizeof(name) - 1, context->device);
  if (result != CUDA_SUCCESS)
    return cudaFailure(what + ": getting the name", result);
  device.name_ = name;
  auto attribute = [&](CUdevice_attribute which, const char *label,
                       int &out) -> Status {
    CUresult got = driver.deviceGetAttribute(&out, which, context->device);
    if (got != CUDA_SUCCESS)
      return cudaFailure(what + ": getting " + label, got);
    return Status::ok();
  };
  int major = 0, minor = 0, sms = 0, l2 = 0, sharedOptin = 0, shared = 0;
  GNNC_RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                 "the compute capability", major));
  GNNC_RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                 "the compute capability", minor));
  GNNC_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "the SM count", sms));
  GNNC_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "the L2 size", l2));
  GNNC_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                "the opt-in shared memory size", sharedOptin));
  GNNC_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
                "the shared memory size", shared));
  size_t total = 0;
  result = driver.deviceTotalMem(&total, context->device);
  if (result != CUDA_SUCCESS)
    return cudaFailure(what + ": getting the memory size", result);
  device.capability_ = {major, minor};
  device.smCount_ = sms;
  device.l2Bytes_ = static_cast<size_t>(l2);
  device.maxSharedOptin_ = static_cast<size_t>(std::max(sharedOptin, shared));
  device.maxSharedDefault_ = static_cast<size_t>(shared);
  device.totalMemory_ = total;
  return device;
}

std::string Device::archString() const {
  return "sm_" + std::to_string(capability_.first) +
         std::to_string(capability_.second);
}

std::string Device::compileTarget() const {
  return archString() + (capability_ == std::make_pair(9, 0) ? "a" : "");
}

Status Device::makeCurrent() const { return context_->makeCurrent(); }

Status Device::synchronize() const {
  GNNC_RETURN_IF_ERROR(context_->makeCurrent());
  CUresult result = api().ctxSynchronize();
  if (result != CUDA_SUCCESS)
    return cudaFailure("synchronizing CUDA device " + std::to_string(ordinal_),
                       result);
  return Status::ok();
}

Expected<std::pair<size_t, size_t>> Device::memoryInfo() const {
  GNNC_RETURN_IF_ERROR(context_->makeCurrent());
  size_t freeBytes = 0, totalBytes = 0;
  CUresult result = api().memGetInfo(&freeBytes, &totalBytes);
  if (result != CUDA_SUCCESS)
    return cudaFailure("getting the free device memory", result);
  return std::make_pair(freeBytes, totalBytes);
}

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

Expected<DeviceBuffer> DeviceBuffer::allocate(size_t bytes) {
  std::string what =
      "allocating " + std::to_string(bytes) + " bytes of device memory";
  Expected<std::shared_ptr<ContextRef>> context = currentContext(what);
  if (!context)
    return context.status();
  DeviceBuffer buffer;
  buffer.context_ = *context;
  buffer.size_ = bytes;
  if (bytes == 0)
    return buffer;
  CUdeviceptr address = 0;
  CUresult result = api().memAlloc(&address, bytes);
  if (result != CUDA_SUCCESS)
    return cudaFailure(what, result);
  buffer.address_ = address;
  return buffer;
}

DeviceBuffer DeviceBuffer::borrow(uint64_t address, size_t bytes) {
  DeviceBuffer buffer;
  buffer.address_ = address;
  buffer.size_ = bytes;
  buffer.borrowed_ = true;
  return buffer;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : context_(std::move(other.context_)), address_(other.address_),
      size_(other.size_), borrowed_(other.borrowed_) {
  other.address_ = 0;
  other.size_ = 0;
  other.borrowed_ = false;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    release();
    context_ = std::move(other.context_);
    address_ = other.address_;
    size_ = other.size_;
    borrowed_ = other.borrowed_;
    other.address_ = 0;
    other.size_ = 0;
    other.borrowed_ = false;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() {
  if (address_ && !borrowed_ && context_ && context_->makeCurrent())
    api().memFree(address_);
  address_ = 0;
  size_ = 0;
  borrowed_ = false;
  context_.reset();
}

Status DeviceBuffer::requireContext(const char *what) const {
  if (context_)
    return Status::ok();
  return Status::error(std::string(what) + ": the buffer of " +
                       std::to_string(size_) +
                       (borrowed_ ? " bytes is borrowed and knows no context"
                                  : " bytes was never allocated"));
}

Status DeviceBuffer::copyFromHost(const void *data, size_t bytes) {
  if (bytes > size_)
    return Status::error("copying " + std::to_string(bytes) +
                         " bytes to a device buffer of " +
                         std::to_string(size_) + " bytes: too many");
  if (bytes == 0)
    return Status::ok();
  GNNC_RETURN_IF_ERROR(requireContext("copying from host to device"));
  GNNC_RETURN_IF_ERROR(context_->makeCurrent());
  CUresult result = api().memcpyHtoD(address_, data, bytes);
  if (result != CUDA_SUCCESS)
    return cudaFailure("copying " + std::to_string(bytes) +
                           " bytes from host to device",
                       result);
  return Status::ok();
}

Status DeviceBuffer::copyToHost(void *data, size_t bytes) const {
  if (bytes > size_)
    return Status::error("copying " + std::to_string(bytes) +
                         " bytes from a device buffer of " +
                         std::to_string(size_) + " bytes: too many");
  if (bytes == 0)
    return Status::ok();
  GNNC_RETURN_IF_ERROR(requireContext("copying from device to host"));
  GNNC_RETURN_IF_ERROR(context_->makeCurrent());
  CUresult result = api().memcpyDtoH(data, address_, bytes);
  if (result != CUDA_SUCCESS)
    return cudaFailure("copying " + std::to_string(bytes) +
                           " bytes from device to host",
                       result);
  return Status::ok();
}

Status DeviceBuffer::fill(uint8_t value) {
  if (size_ == 0)
    return Status::ok();
  GNNC_RETURN_IF_ERROR(requireContext("filling device memory"));
  GNNC_RETURN_IF_ERROR(context_->makeCurrent());
  CUresult result = api().memsetD8(address_, value, size_);
  if (result != CUDA_SUCCESS)
    return cudaFailure(
        "filling " + std::to_string(size_) + " bytes of device memory", result);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Module and launch
//===----------------------------------------------------------------------===//

Expected<Module> Module::load(const std::string &image) {
  bool isElf = image.size() >= 4 && image.compare(0, 4,
                                                  "\x7f"
                                                  "ELF") == 0;
  std::string what = std::string("loading a CUDA module from ") +
                     (isElf ? "a cubin" : "PTX") + " of " +
                     std::to_string(image.size()) + " bytes";
  Expected<std::shared_ptr<ContextRef>> context = currentContext(what);
  if (!context)
    return context.status();
  auto state = std::make_shared<detail::ModuleState>();
  state->context = *context;
  char errorLog[8192] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {errorLog,
                    reinterpret_cast<void *>(uintptr_t(sizeof(errorLog) - 1))};
  CUresult result =
      api().moduleLoadDataEx(&state->module, image.c_str(), 2, options, values);
  if (result != CUDA_SUCCESS) {
    state->module = nullptr;
    Status failure = cudaFailure(what, result);
    if (errorLog[0])
      failure = Status::error(failure.message() + "\n" + errorLog);
    return failure;
  }
  Module module;
  module.state_ = std::move(state);
  return module;
}

Expected<Function> Module::function(const std::string &name) const {
  if (!state_)
    return Status::error("looking up kernel '" + name + "': no module loaded");
  GNNC_RETURN_IF_ERROR(state_->context->makeCurrent());
  CUfunction handle = nullptr;
  CUresult result =
      api().moduleGetFunction(&handle, state_->module, name.c_str());
  if (result != CUDA_SUCCESS)
    return cudaFailure("looking up kernel '" + name + "' in the module",
                       result);
  Function function;
  function.handle = handle;
  function.name = name;
  function.module = state_;
  return function;
}

namespace {

/// Raises the dynamic shared memory limit of `cuFunction` when
/// `sharedBytes` exceeds the 48 KiB every kernel may take, and asks for
/// the largest shared-memory carveout, so that as many such blocks share
/// an SM as its shared memory holds (the driver otherwise may size the
/// carveout for fewer).
CUresult allowSharedBytes(CUfunction cuFunction, unsigned sharedBytes) {
  if (sharedBytes <= 48 * 1024)
    return CUDA_SUCCESS;
  CUresult result = api().funcSetAttribute(
      cuFunction, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
      static_cast<int>(sharedBytes));
  if (result != CUDA_SUCCESS)
    return result;
  return api().funcSetAttribute(
      cuFunction, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
      CU_SHAREDMEM_CARVEOUT_MAX_SHARED);
}

} // namespace

Expected<int> residentBlocksPerSm(const Function &function,
                                  unsigned blockThreads, unsigned sharedBytes) {
  const std::string what = "the resident blocks of kernel '" + function.name +
                           "' (" + std::to_string(blockThreads) + " threads, " +
                           std::to_string(sharedBytes) + " shared bytes)";
  if (!function.handle || !function.module)
    return Status::error(what + ": the function is not loaded");
  GNNC_RETURN_IF_ERROR(
      function.module->context->makeCurrent().withContext(what));
  auto cuFunction = static_cast<CUfunction>(function.handle);
  if (CUresult result = allowSharedBytes(cuFunction, sharedBytes);
      result != CUDA_SUCCESS)
    return cudaFailure(what + ": raising the dynamic shared memory limit",
                       result);
  int blocks = 0;
  if (CUresult result =
          api().occupancy(&blocks, cuFunction, static_cast<int>(blockThreads),
                          static_cast<size_t>(sharedBytes));
      result != CUDA_SUCCESS)
    return cudaFailure(what, result);
  return blocks;
}

Status launch(const Function &function, const std::array<unsigned, 3> &grid,
              const std::array<unsigned, 3> &block, unsigned sharedBytes,
              void **args, bool synchronize, void *stream) {
  std::string what = "kernel '" + function.name + "' (grid " +
                     std::to_string(grid[0]) + "x" + std::to_string(grid[1]) +
                     "x" + std::to_string(grid[2]) + ", block " +
                     std::to_string(block[0]) + "x" + std::to_string(block[1]) +
                     "x" + std::to_string(block[2]) + ", " +
                     std::to_string(sharedBytes) + " shared bytes)";
  if (!function.handle || !function.module)
    return Status::error("launching " + what + ": the function is not loaded");
  GNNC_RETURN_IF_ERROR(
      function.module->context->makeCurrent().withContext("launching " + what));
  auto cuFunction = static_cast<CUfunction>(function.handle);
  if (CUresult result = allowSharedBytes(cuFunction, sharedBytes);
      result != CUDA_SUCCESS)
    return cudaFailure("launching " + what +
                           ": raising the dynamic shared memory limit",
                       result);
  CUresult result = api().launchKernel(
      cuFunction, grid[0], grid[1], grid[2], block[0], block[1], block[2],
      sharedBytes, static_cast<CUstream>(stream), args, nullptr);
  if (result != CUDA_SUCCESS)
    return cudaFailure("launching " + what, result);
  if (synchronize) {
    result = api().ctxSynchronize();
    if (result != CUDA_SUCCESS)
      return cudaFailure("running " + what, result);
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Stream
//===----------------------------------------------------------------------===//

Expected<Stream> Stream::create() {
  std::string what = "creating a CUDA stream";
  Expected<std::shared_ptr<ContextRef>> context = currentContext(what);
  if (!context)
    return context.status();
  Stream stream;
  stream.context_ = *context;
  CUstream handle = nullptr;
  CUresult result = api().streamCreate(&handle, CU_STREAM_NON_BLOCKING);
  if (result != CUDA_SUCCESS)
    return cudaFailure(what, result);
  stream.stream_ = handle;
  return stream;
}

Stream::Stream(Stream &&other) noexcept
    : context_(std::move(other.context_)), stream_(other.stream_) {
  other.stream_ = nullptr;
}

Stream &Stream::operator=(Stream &&other) noexcept {
  if (this != &other) {
    release();
    context_ = std::move(other.context_);
    stream_ = other.stream_;
    other.stream_ = nullptr;
  }
  return *this;
}

Stream::~Stream() { release(); }

void Stream::release() {
  if (stream_ && context_ && context_->makeCurrent())
    api().streamDestroy(static_cast<CUstream>(stream_));
  stream_ = nullptr;
  context_.reset();
}

Status Stream::synchronize() const {
  if (!stream_ || !context_)
    return Status::error("synchronizing a CUDA stream: none was created");
  GNNC_RETURN_IF_ERROR(context_->makeCurrent());
  CUresult result = api().streamSynchronize(static_cast<CUstream>(stream_));
  if (result != CUDA_SUCCESS)
    return cudaFailure("synchronizing a CUDA stream", result);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// EventTimer
//===----------------------------------------------------------------------===//

Expected<EventTimer> EventTimer::create() {
  std::string what = "creating CUDA timing events";
  Expected<std::shared_ptr<ContextRef>> context = currentContext(what);
  if (!context)
    return context.status();
  EventTimer timer;
  timer.context_ = *context;
  CUevent start = nullptr, stop = nullptr;
  CUresult result = api().eventCreate(&start, CU_EVENT_DEFAULT);
  if (result != CUDA_SUCCESS)
    return cudaFailure(what, result);
  timer.startEvent_ = start;
  result = api().eventCreate(&stop, CU_EVENT_DEFAULT);
  if (result != CUDA_SUCCESS)
    return cudaFailure(what, result);
  timer.stopEvent_ = stop;
  return timer;
}

EventTimer::EventTimer(EventTimer &&other) noexcept
    : context_(std::move(other.context_)), startEvent_(other.startEvent_),
      stopEvent_(other.stopEvent_) {
  other.startEvent_ = nullptr;
  other.stopEvent_ = nullptr;
}

EventTimer &EventTimer::operator=(EventTimer &&other) noexcept {
  if (this != &other) {
    release();
    context_ = std::move(other.context_);
    startEvent_ = other.startEvent_;
    stopEvent_ = other.stopEvent_;
    other.startEvent_ = nullptr;
    other.stopEvent_ = nullptr;
  }
  return *this;
}

EventTimer::~EventTimer() { release(); }

void EventTimer::release() {
  if (context_ && context_->makeCurrent()) {
    if (startEvent_)
      api().eventDestroy(static_cast<CUevent>(startEvent_));
    if (stopEvent_)
      api().eventDestroy(static_cast<CUevent>(stopEvent_));
  }
  startEvent_ = stopEvent_ = nullptr;
  context_.reset();
}

Status EventTimer::start() {
  GNNC_RETURN_IF_ERROR(context_->makeCurrent());
  CUresult result =
      api().eventRecord(static_cast<CUevent>(startEvent_), nullptr);
  if (result != CUDA_SUCCESS)
    return cudaFailure("recording the start event", result);
  return Status::ok();
}

Status EventTimer::stop() {
  GNNC_RETURN_IF_ERROR(context_->makeCurrent());
  CUresult result =
      api().eventRecord(static_cast<CUevent>(stopEvent_), nullptr);
  if (result != CUDA_SUCCESS)
    return cudaFailure("recording the stop event", result);
  return Status::ok();
}

Expected<float> EventTimer::elapsedMs() const {
  GNNC_RETURN_IF_ERROR(context_->makeCurrent());
  CUresult result = api().eventSynchronize(static_cast<CUevent>(stopEvent_));
  if (result != CUDA_SUCCESS)
    return cudaFailure("waiting for the stop event", result);
  float ms = 0;
  result = api().eventElapsedTime(&ms, static_cast<CUevent>(startEvent_),
                                  static_cast<CUevent>(stopEvent_));
  if (result != CUDA_SUCCESS)
    return cudaFailure("reading the elapsed time", result);
  return ms;
}

//===----------------------------------------------------------------------===//
// StreamEvent
//===----------------------------------------------------------------------===//

Expected<StreamEvent> StreamEvent::create() {
  std::string what = "creating a CUDA event";
  Expected<std::shared_ptr<ContextRef>> context = currentContext(what);
  if (!context)
    return context.status();
  StreamEvent event;
  event.context_ = *context;
  CUevent made = nullptr;
  CUresult result = api().eventCreate(&made, CU_EVENT_DISABLE_TIMING);
  if (result != CUDA_SUCCESS)
    return cudaFailure(what, result);
  event.event_ = made;
  return event;
}

StreamEvent::StreamEvent(StreamEvent &&other) noexcept
    : context_(std::move(other.context_)), event_(other.event_) {
  other.event_ = nullptr;
}

StreamEvent &StreamEvent::operator=(StreamEvent &&other) noexcept {
  if (this != &other) {
    release();
    context_ = std::move(other.context_);
    event_ = other.event_;
    other.event_ = nullptr;
  }
  return *this;
}

StreamEvent::~StreamEvent() { release(); }

void StreamEvent::release() {
  if (event_ && context_ && context_->makeCurrent())
    api().eventDestroy(static_cast<CUevent>(event_));
  event_ = nullptr;
  context_.reset();
}

Status StreamEvent::record(void *stream) {
  GNNC_RETURN_IF_ERROR(context_->makeCurrent());
  CUresult result = api().eventRecord(static_cast<CUevent>(event_),
                                      static_cast<CUstream>(stream));
  if (result != CUDA_SUCCESS)
    return cudaFailure("recording an event", result);
  return Status::ok();
}

Status StreamEvent::waitOn(void *stream) const {
  GNNC_RETURN_IF_ERROR(context_->makeCurrent());
  CUresult result = api().streamWaitEvent(static_cast<CUstream>(stream),
                                          static_cast<CUevent>(event_), 0);
  if (result != CUDA_SUCCESS)
    return cudaFailure("making a stream wait for an event", result);
  return Status::ok();
}

} // namespace gnnc::rt
