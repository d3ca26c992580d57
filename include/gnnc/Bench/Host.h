//===- Host.h - Host arrays and their transfers -----------------*- C++ -*-===//
//
// Large host arrays allocated without zeroing and paged in by the threads
// that write them, the arrays a problem keeps (HostBuffers), random inputs,
// uploads and downloads converted to and from 16-bit types, and the
// multithreaded comparison with a reference.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_HOST_H
#define GNNC_BENCH_HOST_H

#include "gnnc/ops/Spmm.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Float16.h"
#include "gnnc/runtime/Status.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace gnnc::bench {

/// std::allocator, except that resize() and the size constructor leave new
/// elements of trivial types uninitialized: the large host arrays below are
/// then paged in by the threads that first write them, in parallel, rather
/// than zeroed by one thread first.
template <typename T> struct DefaultInitAllocator : std::allocator<T> {
  template <typename U> struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() noexcept = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U> &) noexcept {}
  template <typename U>
  void
  construct(U *p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void *>(p)) U;
  }
  template <typename U, typename... Args> void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
};

/// A host array whose resize() does not initialize (see
/// DefaultInitAllocator).
template <typename T>
using HostVector = std::vector<T, DefaultInitAllocator<T>>;

/// Gives `v` exactly `n` elements whose values are unspecified (the caller
/// overwrites them all). Never copies the old contents: an array too small
/// is dropped and allocated anew. With `touch`, newly allocated elements are
/// zeroed on all threads (for memory that a single thread, e.g. the CUDA
/// driver, would otherwise page in).
template <typename T>
void resizeForOverwrite(HostVector<T> &v, size_t n, bool touch = false);

/// The host arrays of one SpmmProblem. A problem takes them from the last
/// one (Bench::spareHost()), so the large arrays are allocated and paged in
/// once per size rather than once per problem.
struct HostBuffers {
  /// Inputs, rounded to the problem's type.
  HostVector<float> x, values;
  /// The reference and the sum of |terms| per output element.
  HostVector<double> expected, magnitude;
  /// Scratch for downloads and 16-bit conversions.
  HostVector<float> got;
  HostVector<uint16_t> bits;
  /// SDDMM: the row features, and the reference and sum of |terms| per
  /// edge (std::vector: what ref::sddmm fills).
  HostVector<float> rowX;
  std::vector<double> edgeExpected, edgeMagnitude;
  /// GAT chain: the per-node attention terms of the rows and the columns.
  HostVector<float> attRow, attCol;
};

/// Runs fn(begin, end) over [0, n) split into contiguous pieces on
/// graph::hostThreads() threads (one piece when n is small).
void parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &fn);

template <typename T>
void resizeForOverwrite(HostVector<T> &v, size_t n, bool touch) {
  if (n > v.capacity())
    HostVector<T>().swap(v);
  size_t old = v.size();
  v.resize(n);
  if (touch && n > old)
    parallelFor(static_cast<int64_t>(n - old), [&](int64_t lo, int64_t hi) {
      std::fill(v.begin() + old + lo, v.begin() + old + hi, T());
    });
}

/// Fills `out` (resized to n) with floats uniform in [lo, hi) (default
/// [-1, 1)), rounded to `type`, deterministic for the seed and independent
/// of the thread count (ref::randomFeaturesInto, then rounding, on all
/// threads).
void randomInputsInto(HostVector<float> &out, int64_t n, uint64_t seed,
                      ElementType type, float lo = -1.0f, float hi = 1.0f);

/// randomInputsInto a new array.
HostVector<float> randomInputs(int64_t n, uint64_t seed, ElementType type);

/// Uploads `count` floats converted to `type` (conversion on all threads,
/// into `scratch` when given); at least one byte is allocated so that empty
/// tensors still have an address.
Expected<rt::DeviceBuffer>
uploadConverted(const float *host, size_t count, ElementType type,
                HostVector<uint16_t> *scratch = nullptr);
template <typename Alloc>
Expected<rt::DeviceBuffer>
uploadConverted(const std::vector<float, Alloc> &host, ElementType type) {
  return uploadConverted(host.data(), host.size(), type);
}

/// randomInputsInto `host` (which keeps the inputs, rounded to `type`, for
/// the reference), then uploads them converted to `type` through `scratch`.
Expected<rt::DeviceBuffer>
uploadRandomInputs(HostVector<float> &host, int64_t n, uint64_t seed,
                   ElementType type, HostVector<uint16_t> *scratch,
                   float lo = -1.0f, float hi = 1.0f);

/// Uploads `count` copies of `value` converted to `type`.
Expected<rt::DeviceBuffer> uploadFilled(size_t count, float value,
                                        ElementType type);

/// Downloads `count` elements of `type` as floats into `out` (resized;
/// decoding on all threads, through `scratch` when given).
Status downloadConverted(const rt::DeviceBuffer &buffer, size_t count,
                         ElementType type, HostVector<float> &out,
                         HostVector<uint16_t> *scratch = nullptr);

/// Compares `got` with a reference the way ops::checkSpmm does (element i
/// passes when |got - ref| <= tol * magnitude[i] + absTol; NaN never
/// passes), on all threads. On failure the report lists the first
/// mismatches (from ref::compareToReferenceScaled).
ops::SpmmCheck compareScaled(const float *got, const double *expected,
                             const double *magnitude, size_t count,
                             int64_t width, double tol, double absTol);
template <typename GotAlloc, typename RefAlloc, typename MagAlloc>
ops::SpmmCheck compareScaled(const std::vector<float, GotAlloc> &got,
                             const std::vector<double, RefAlloc> &expected,
                             const std::vector<double, MagAlloc> &magnitude,
                             int64_t width, double tol, double absTol) {
  if (got.size() != expected.size() || magnitude.size() != expected.size()) {
    ops::SpmmCheck check;
    check.report = "size mismatch: got " + std::to_string(got.size()) +
                   " elements, expected " + std::to_string(expected.size());
    return check;
  }
  return compareScaled(got.data(), expected.data(), magnitude.data(),
                       got.size(), width, tol, absTol);
}

} // namespace gnnc::bench

#endif // GNNC_BENCH_HOST_H
