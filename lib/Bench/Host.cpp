//===- Host.cpp - Host arrays and their transfers -------------------------===//
#include "gnnc/Bench/Host.h"

#include "gnnc/graph/Parallel.h"
#include "gnnc/reference/Spmm.h"

#include <cmath>
#include <cstdio>
#include <mutex>

using namespace gnnc;
using namespace gnnc::bench;

void gnnc::bench::parallelFor(int64_t n,
                              const std::function<void(int64_t, int64_t)> &fn) {
  graph::parallelForRange(n, int64_t(1) << 16, /*numThreads=*/0, fn);
}

void gnnc::bench::randomInputsInto(HostVector<float> &out, int64_t n,
                                   uint64_t seed, ElementType type, float lo,
                                   float hi) {
  n = std::max<int64_t>(n, 0);
  resizeForOverwrite(out, static_cast<size_t>(n));
  ref::randomFeaturesInto(out.data(), n, seed, lo, hi);
  if (type == ElementType::F32)
    return;
  parallelFor(n, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      out[i] = roundToElementType(out[i], type);
  });
}

HostVector<float> gnnc::bench::randomInputs(int64_t n, uint64_t seed,
                                            ElementType type) {
  HostVector<float> out;
  randomInputsInto(out, n, seed, type);
  return out;
}

Expected<rt::DeviceBuffer>
gnnc::bench::uploadConverted(const float *host, size_t count, ElementType type,
                             HostVector<uint16_t> *scratch) {
  size_t bytes = count * elementSize(type);
  auto buffer = rt::DeviceBuffer::allocate(std::max<size_t>(bytes, 1));
  if (!buffer)
    return buffer.status();
  if (count == 0)
    return buffer;
  if (type == ElementType::F32) {
    GNNC_RETURN_IF_ERROR(buffer->copyFromHost(host, bytes));
    return buffer;
  }
  HostVector<uint16_t> local;
  HostVector<uint16_t> &bits = scratch ? *scratch : local;
  resizeForOverwrite(bits, count);
  parallelFor(static_cast<int64_t>(count), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      bits[i] = type == ElementType::F16 ? floatToHalf(host[i])
                                         : floatToBf16(host[i]);
  });
  GNNC_RETURN_IF_ERROR(buffer->copyFromHost(bits.data(), bytes));
  return buffer;
}

Expected<rt::DeviceBuffer> gnnc::bench::uploadRandomInputs(
    HostVector<float> &host, int64_t n, uint64_t seed, ElementType type,
    HostVector<uint16_t> *scratch, float lo, float hi) {
  randomInputsInto(host, n, seed, type, lo, hi);
  return uploadConverted(host.data(), host.size(), type, scratch);
}

Expected<rt::DeviceBuffer> gnnc::bench::uploadFilled(size_t count, float value,
                                                     ElementType type) {
  HostVector<float> host;
  resizeForOverwrite(host, count);
  parallelFor(static_cast<int64_t>(count), [&](int64_t lo, int64_t hi) {
    std::fill(host.begin() + lo, host.begin() + hi, value);
  });
  return uploadConverted(host.data(), count, type);
}

Status gnnc::bench::downloadConverted(const rt::DeviceBuffer &buffer,
                                      size_t count, ElementType type,
                                      HostVector<float> &out,
                                      HostVector<uint16_t> *scratch) {
  size_t bytes = count * elementSize(type);
  if (bytes > buffer.size())
    return Status::error("download of " + std::to_string(count) + " " +
                         elementTypeName(type) + " elements exceeds the " +
                         std::to_string(buffer.size()) + "-byte buffer");
  if (count == 0) {
    out.clear();
    return Status::ok();
  }
  if (type == ElementType::F32) {
    // The driver copies on one thread: page the array in on all first.
    resizeForOverwrite(out, count, /*touch=*/true);
    return buffer.copyToHost(out.data(), bytes);
  }
  HostVector<uint16_t> local;
  HostVector<uint16_t> &bits = scratch ? *scratch : local;
  resizeForOverwrite(bits, count, /*touch=*/true);
  GNNC_RETURN_IF_ERROR(buffer.copyToHost(bits.data(), bytes));
  resizeForOverwrite(out, count);
  parallelFor(static_cast<int64_t>(count), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      out[i] = type == ElementType::F16 ? halfToFloat(bits[i])
                                        : bf16ToFloat(bits[i]);
  });
  return Status::ok();
}

ops::SpmmCheck gnnc::bench::compareScaled(const float *got,
                                          const double *expected,
                                          const double *magnitude, size_t count,
                                          int64_t width, double tol,
                                          double absTol) {
  ops::SpmmCheck check;
  std::mutex mutex;
  int64_t mismatches = 0;
  double worst = 0; // largest |got - ref| / bound among passing elements
  parallelFor(static_cast<int64_t>(count), [&](int64_t lo, int64_t hi) {
    int64_t bad = 0;
    double localWorst = 0;
    for (int64_t i = lo; i < hi; ++i) {
      double g = got[i], r = expected[i];
      bool ok;
      double bound = tol * magnitude[i] + absTol + 1e-30;
      if (std::isnan(g) || std::isnan(r)) {
        ok = false;
      } else if (std::isinf(g) || std::isinf(r)) {
        ok = g == r;
      } else {
        double diff = std::fabs(g - r);
        ok = diff <= bound;
        if (ok)
          localWorst = std::max(localWorst, diff / bound);
      }
      bad += ok ? 0 : 1;
    }
    std::lock_guard<std::mutex> lock(mutex);
    mismatches += bad;
    worst = std::max(worst, localWorst);
  });
  check.ok = mismatches == 0;
  if (check.ok) {
    char text[192];
    std::snprintf(text, sizeof(text),
                  "all %zu elements within %.3g * sum|terms| (largest "
                  "error / allowed = %.3g)",
                  count, tol, worst);
    check.report = text;
    return check;
  }
  // The detailed report (first mismatches, norms) from the reference
  // library; single-threaded and on copies, but only on failure.
  std::string report;
  Status cmp = ref::compareToReferenceScaled(
      std::vector<float>(got, got + count),
      std::vector<double>(expected, expected + count),
      std::vector<double>(magnitude, magnitude + count), width, tol, &report,
      absTol);
  check.report = cmp.isOk() ? report : cmp.message();
  return check;
}
