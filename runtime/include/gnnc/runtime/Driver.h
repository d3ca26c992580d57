//===- Driver.h - The CUDA driver API, loaded at run time -------*- C++ -*-===//
//
// libcuda.so.1 is opened with dlopen on first use, so binaries build and run
// on machines without a GPU driver; every entry point then reports "no CUDA
// driver" or "no CUDA device" as an error instead of failing to load.
//
// All objects use the device's primary context. Buffers, modules and timers
// keep that context alive and make it current on the calling thread before
// every driver call, so they may outlive the Device that created them and be
// used from any thread.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_RUNTIME_DRIVER_H
#define GNNC_RUNTIME_DRIVER_H

#include "gnnc/runtime/Status.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace gnnc::rt {

namespace detail {
struct ContextRef;
struct ModuleState;
} // namespace detail

/// True when the driver loads, initialises and reports at least one device;
/// otherwise false with the reason in `why` (when given).
bool gpuAvailable(std::string *why = nullptr);

/// The driver's CUDA version, e.g. 13000 for CUDA 13.0.
Expected<int> driverVersion();

/// The number of CUDA devices.
Expected<int> deviceCount();

/// One GPU, with its primary context retained while any copy is alive.
class Device {
public:
  /// Opens device `ordinal`, retains its primary context and makes it current
  /// on the calling thread.
  static Expected<Device> open(int ordinal = 0);

  int ordinal() const { return ordinal_; }
  const std::string &name() const { return name_; }
  /// (major, minor), e.g. (9, 0).
  std::pair<int, int> computeCapability() const { return capability_; }
  /// The NVRTC target for this device, e.g. "sm_90".
  std::string archString() const;
  /// The target gnnc compiles this device's kernels for: archString()
  /// with the arch-specific suffix on compute capability 9.0 ("sm_90a",
  /// which math = wgmma needs); a cubin for it runs on such devices only,
  /// which is where the runtime loads it.
  std::string compileTarget() const;
  int smCount() const { return smCount_; }
  size_t l2Bytes() const { return l2Bytes_; }
  /// The most dynamic shared memory one block can opt in to, in bytes.
  size_t maxSharedPerBlock() const { return maxSharedOptin_; }
  /// Shared memory per block available without opting in (48 KiB).
  size_t defaultSharedPerBlock() const { return maxSharedDefault_; }
  size_t totalMemory() const { return totalMemory_; }

  /// Makes this device's primary context current on the calling thread.
  Status makeCurrent() const;
  /// Waits for all work on this device's context.
  Status synchronize() const;
  /// (free, total) device memory in bytes.
  Expected<std::pair<size_t, size_t>> memoryInfo() const;

private:
  Device() = default;
  std::shared_ptr<detail::ContextRef> context_;
  int ordinal_ = 0;
  std::string name_;
  std::pair<int, int> capability_{0, 0};
  int smCount_ = 0;
  size_t l2Bytes_ = 0, maxSharedOptin_ = 0, maxSharedDefault_ = 0,
         totalMemory_ = 0;
};

/// Device memory, freed on destruction. Move-only.
class DeviceBuffer {
public:
  /// Allocates `bytes` in the current context (open a Device first). Zero
  /// bytes gives an empty buffer with address 0.
  static Expected<DeviceBuffer> allocate(size_t bytes);
  /// A buffer naming `bytes` of device memory at `address` that someone
  /// else owns (e.g. a PyTorch tensor): never freed, so that the host ops,
  /// which take DeviceBuffers, run on memory they did not allocate. The
  /// owner keeps the memory alive while the buffer is used. It cannot copy
  /// or fill (it knows no context).
  static DeviceBuffer borrow(uint64_t address, size_t bytes);

  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer();

  /// Copies `bytes` (at most size()) from host memory to the buffer start.
  Status copyFromHost(const void *data, size_t bytes);
  /// Copies `bytes` (at most size()) from the buffer start to host memory.
  Status copyToHost(void *data, size_t bytes) const;
  /// Sets every byte to `value` (used to poison outputs).
  Status fill(uint8_t value);

  /// The device address (a CUdeviceptr).
  uint64_t address() const { return address_; }
  size_t size() const { return size_; }
  /// Whether the buffer was borrowed (see borrow) rather than allocated.
  bool borrowed() const { return borrowed_; }

private:
  void release();
  /// The context of an allocated buffer, or an error naming `what`.
  Status requireContext(const char *what) const;
  std::shared_ptr<detail::ContextRef> context_;
  uint64_t address_ = 0;
  size_t size_ = 0;
  bool borrowed_ = false;
};

/// A CUDA stream (CUstream) of the current context, destroyed with the
/// object. Move-only. Work on a stream of gnnc's is ordered only within it.
class Stream {
public:
  /// Creates a stream that does not synchronize with the default stream.
  static Expected<Stream> create();

  Stream() = default;
  Stream(Stream &&other) noexcept;
  Stream &operator=(Stream &&other) noexcept;
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  ~Stream();

  /// The CUstream.
  void *handle() const { return stream_; }
  /// Waits for the work queued on the stream.
  Status synchronize() const;

private:
  void release();
  std::shared_ptr<detail::ContextRef> context_;
  void *stream_ = nullptr;
};

/// A kernel entry point in a loaded module; keeps the module alive.
struct Function {
  /// The CUfunction.
  void *handle = nullptr;
  std::string name;
  std::shared_ptr<detail::ModuleState> module;
};

/// A loaded cubin or PTX image. Copies share the module.
class Module {
public:
  /// Loads a cubin (ELF) or PTX text into the current context.
  static Expected<Module> load(const std::string &image);
  /// Looks up the extern "C" kernel `name`.
  Expected<Function> function(const std::string &name) const;

private:
  std::shared_ptr<detail::ModuleState> state_;
};

/// Launches `function` on `stream` (a CUstream; null: the default stream),
/// raising its dynamic shared memory limit first when `sharedBytes`
/// exceeds 48 KiB; with `synchronize` waits for the context's work and
/// reports errors raised while it ran. Errors name the kernel, grid, block
/// and shared bytes, and carry the CUDA error.
Status launch(const Function &function, const std::array<unsigned, 3> &grid,
              const std::array<unsigned, 3> &block, unsigned sharedBytes,
              void **args, bool synchronize = true, void *stream = nullptr);

/// How many blocks of `blockThreads` threads and `sharedBytes` bytes of
/// dynamic shared memory of `function` one SM holds at once (registers,
/// shared memory and threads all counted, as the driver computes it).
Expected<int> residentBlocksPerSm(const Function &function,
                                  unsigned blockThreads, unsigned sharedBytes);

/// Times GPU work on the default stream with a pair of CUDA events.
/// Move-only.
class EventTimer {
public:
  /// Creates the events in the current context.
  static Expected<EventTimer> create();

  EventTimer(EventTimer &&other) noexcept;
  EventTimer &operator=(EventTimer &&other) noexcept;
  EventTimer(const EventTimer &) = delete;
  EventTimer &operator=(const EventTimer &) = delete;
  ~EventTimer();

  /// Records the start event.
  Status start();
  /// Records the stop event.
  Status stop();
  /// Waits for the stop event; milliseconds between start and stop.
  Expected<float> elapsedMs() const;

private:
  EventTimer() = default;
  void release();
  std::shared_ptr<detail::ContextRef> context_;
  void *startEvent_ = nullptr;
  void *stopEvent_ = nullptr;
};

/// Orders work across streams: recorded where some work was queued, other
/// streams wait for it on the GPU (the host never waits). Move-only.
class StreamEvent {
public:
  /// Creates the event (no timing) in the current context.
  static Expected<StreamEvent> create();

  StreamEvent(StreamEvent &&other) noexcept;
  StreamEvent &operator=(StreamEvent &&other) noexcept;
  StreamEvent(const StreamEvent &) = delete;
  StreamEvent &operator=(const StreamEvent &) = delete;
  ~StreamEvent();

  /// Records the event after the work queued so far on `stream` (a
  /// CUstream; null: the default stream).
  Status record(void *stream);
  /// Makes the work queued next on `stream` wait for the recorded work.
  Status waitOn(void *stream) const;

private:
  StreamEvent() = default;
  void release();
  std::shared_ptr<detail::ContextRef> context_;
  void *event_ = nullptr;
};

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_DRIVER_H
