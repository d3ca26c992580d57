//===- Context.h - What the C entry points on a device share --*- C++ -*-===//
//-*-===//
//
// Internal to lib/CApi: a context's state (the runtime, its lock, the
// tuning options), the lock every call on a context holds, and the checks
// of the device buffers a launch borrows. Device.cpp (graphs, snapshot
// groups) and SegmentMatmul.cpp (segment layouts) both use them. Not an
// API.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_LIB_CAPI_CONTEXT_H
#define GNNC_LIB_CAPI_CONTEXT_H

#include "Support.h"

#include "gnnc/Tuning/TunedCompile.h"
#include "gnnc/runtime/Runtime.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

namespace gnnc::capi {

struct ContextState {
  ContextState(rt::Runtime runtime) : runtime(std::move(runtime)) {}
  std::mutex mutex;
  rt::Runtime runtime;
  tuning::TunedCompileOptions tuning;
};

/// Locks `context` and makes its device current on the calling thread.
struct ContextLock {
  explicit ContextLock(ContextState &context) : lock(context.mutex) {
    status = context.runtime.device().makeCurrent();
  }
  std::unique_lock<std::mutex> lock;
  Status status;
};

/// `a` * `b` * `c`, or an error naming `what` when it overflows 64 bits.
inline Expected<uint64_t> product(uint64_t a, uint64_t b, uint64_t c,
                                  const std::string &what) {
  uint64_t ab = 0, abc = 0;
  if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc))
    return Status::error(what + ": the size overflows 64 bits");
  return abc;
}

/// Checks that `buffer` (called `name`) holds the `rows` x `perRow` elements
/// of `type` that the kernel `verb`s ("reads", "writes"), starting at a
/// multiple of `alignment` bytes, and borrows it.
inline Expected<rt::DeviceBuffer>
operand(const gnnc_buffer &buffer, const char *name, const char *verb,
        int64_t rows, int64_t perRow, ElementType type,
        const char *rowWord = "rows", uint64_t alignment = 1) {
  Expected<uint64_t> need =
      product(static_cast<uint64_t>(rows), static_cast<uint64_t>(perRow),
              elementSize(type), name);
  if (!need)
    return need.status();
  const std::string shape = "(" + std::to_string(rows) + " " + rowWord + " x " +
                            std::to_string(perRow) + " x " +
                            elementTypeName(type) + ")";
  if (buffer.bytes < *need)
    return Status::error(std::string(name) + " has " +
                         std::to_string(buffer.bytes) + " bytes, the kernel " +
                         verb + " " + std::to_string(*need) + " " + shape);
  if (buffer.address == 0 && *need > 0)
    return Status::error(std::string(name) + " is a NULL address, the kernel " +
                         verb + " " + std::to_string(*need) + " bytes " +
                         shape);
  if (alignment > 1 && buffer.address % alignment != 0) {
    char address[32];
    std::snprintf(address, sizeof(address), "0x%llx",
                  static_cast<unsigned long long>(buffer.address));
    return Status::error(std::string(name) + " starts at address " + address +
                         ", not a multiple of " + std::to_string(alignment) +
                         " bytes: the kernel " + verb + " it " +
                         std::to_string(alignment) + " bytes at a time " +
                         shape);
  }
  return rt::DeviceBuffer::borrow(buffer.address, buffer.bytes);
}

/// The CUstream of a C stream argument.
inline void *streamOf(uint64_t stream) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(stream));
}

/// `a` and `b` share a byte.
inline bool overlapping(uint64_t a, uint64_t aBytes, uint64_t b,
                        uint64_t bBytes) {
  return aBytes > 0 && bBytes > 0 && a < b + bBytes && b < a + aBytes;
}

} // namespace gnnc::capi

struct gnnc_context_s {
  std::shared_ptr<gnnc::capi::ContextState> state;
};

#endif // GNNC_LIB_CAPI_CONTEXT_H
