//===- Segments.cpp - gnn-bench's segmented-matmul cases ------------------===//
#include "gnnc/Bench/Segments.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/OpText.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/Tuning/SegmentModel.h"
#include "gnnc/ops/SegmentMatmul.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/reference/Spmm.h"
#include "gnnc/runtime/Float16.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>

using namespace gnnc;
using namespace gnnc::bench;
using json = nlohmann::json;

// cublasGemmGroupedBatchedEx came with cuBLAS 12.5.
#if CUBLAS_VER_MAJOR > 12 || (CUBLAS_VER_MAJOR == 12 && CUBLAS_VER_MINOR >= 5)
#define GNNC_HAVE_GROUPED_GEMM 1
#else
#define GNNC_HAVE_GROUPED_GEMM 0
#endif

SegmentWork gnnc::bench::segmentWork(int64_t rows, int64_t types, int64_t k,
                                     int64_t m, ElementType type,
                                     bool backward) {
  const double e = static_cast<double>(elementSize(type));
  const double r = static_cast<double>(rows), t = static_cast<double>(types);
  const double weights = t * static_cast<double>(k * m) * e;
  SegmentWork w;
  if (!backward) {
    w.bytes = r * static_cast<double>(k + m) * e + weights;
    w.flops = 2.0 * r * static_cast<double>(k * m);
  } else {
    // dY and X read, dX written; W read and dW written.
    w.bytes = r * static_cast<double>(m + 2 * k) * e + 2 * weights;
    w.flops = 4.0 * r * static_cast<double>(k * m);
  }
  return w;
}

Expected<SegmentDtype> gnnc::bench::parseSegmentDtype(const std::string &name) {
  if (name == "tf32")
    return SegmentDtype{name, ElementType::F32, MathMode::TensorCore};
  if (name == "f16")
    return SegmentDtype{name, ElementType::F16, MathMode::Auto};
  return Status::error("unknown segment dtype '" + name +
                       "' (expected tf32 or f16)");
}

namespace {

cublasHandle_t asHandle(void *handle) {
  return static_cast<cublasHandle_t>(handle);
}

std::string cublasText(cublasStatus_t status) {
  return std::string(cublasGetStatusName(status)) + " (" +
         cublasGetStatusString(status) + ")";
}

std::string cudaText(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" +
         cudaGetErrorString(error) + ")";
}

/// The device address of `buffer` plus `bytes`.
void *at(const rt::DeviceBuffer &buffer, int64_t bytes = 0) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(buffer.address()) +
                                  static_cast<uintptr_t>(bytes));
}

Status cublasCall(cublasStatus_t status, const char *what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  return Status::error(std::string(what) + ": " + cublasText(status));
}

} // namespace

Expected<Cublas> Cublas::create(Bench &bench) {
  cudaError_t error = cudaSetDevice(bench.device().ordinal());
  if (error != cudaSuccess)
    return Status::error("cudaSetDevice: " + cudaText(error));
  cublasHandle_t handle = nullptr;
  cublasStatus_t status = cublasCreate(&handle);
  if (status != CUBLAS_STATUS_SUCCESS)
    return Status::error("cublasCreate: " + cublasText(status));
  Cublas c;
  c.handle_ = handle;
  cublasGetVersion(handle, &c.version_);
  // The default stream, which gnnc's launches and the timer's events use.
  cublasSetStream(handle, nullptr);
  return c;
}

Cublas::Cublas(Cublas &&other) noexcept
    : handle_(other.handle_), version_(other.version_) {
  other.handle_ = nullptr;
}

Cublas &Cublas::operator=(Cublas &&other) noexcept {
  if (this != &other) {
    if (handle_)
      cublasDestroy(asHandle(handle_));
    handle_ = other.handle_;
    version_ = other.version_;
    other.handle_ = nullptr;
  }
  return *this;
}

Cublas::~Cublas() {
  if (handle_)
    cublasDestroy(asHandle(handle_));
}

std::string Cublas::version() const {
  return std::to_string(version_ / 10000) + "." +
         std::to_string(version_ / 100 % 100) + "." +
         std::to_string(version_ % 100);
}

namespace {

/// One case's problem: the segments, the host inputs (rounded through the
/// element type, so that the reference sees what the GPU reads) and the
/// device buffers, with the outputs poisoned before each check.
struct SegmentProblem {
  std::vector<int64_t> seg;
  int64_t rows = 0, types = 0, k = 0, m = 0;
  SegmentDtype dtype;
  std::vector<float> x, w, dy;
  rt::DeviceBuffer xDev, wDev, dyDev, yDev, dxDev, dwDev, segDev;

  int64_t rowsOf(int64_t t) const { return seg[t + 1] - seg[t]; }
  size_t e() const { return elementSize(dtype.type); }
};

Expected<rt::DeviceBuffer> allocateElements(int64_t count, ElementType type) {
  return ops::allocatePoisoned(static_cast<size_t>(std::max<int64_t>(1, count)),
                               type);
}

Expected<SegmentProblem> makeProblem(const std::vector<int64_t> &seg,
                                     const SegmentDtype &dtype, int64_t dim,
                                     uint64_t seed) {
  SegmentProblem p;
  p.seg = seg;
  p.rows = seg.back();
  p.types = int64_t(seg.size()) - 1;
  p.k = p.m = dim;
  p.dtype = dtype;
  auto random = [&](int64_t count, uint64_t s) {
    return ref::roundThrough(
        ref::randomFeatures(std::max<int64_t>(1, count), s), dtype.type);
  };
  p.x = random(p.rows * p.k, seed);
  p.dy = random(p.rows * p.m, seed ^ 0xd1);
  p.w = random(p.types * p.k * p.m, seed ^ 0x5eed);
  auto x = ops::uploadTensor(p.x, dtype.type);
  auto dy = ops::uploadTensor(p.dy, dtype.type);
  auto w = ops::uploadTensor(p.w, dtype.type);
  auto y = allocateElements(p.rows * p.m, dtype.type);
  auto dx = allocateElements(p.rows * p.k, dtype.type);
  auto dw = allocateElements(p.types * p.k * p.m, dtype.type);
  auto segDev = rt::DeviceBuffer::allocate(seg.size() * sizeof(int64_t));
  for (auto *b : {&x, &dy, &w, &y, &dx, &dw, &segDev})
    if (!*b)
      return b->status();
  GNNC_RETURN_IF_ERROR(
      segDev->copyFromHost(seg.data(), seg.size() * sizeof(int64_t)));
  p.xDev = x.take();
  p.dyDev = dy.take();
  p.wDev = w.take();
  p.yDev = y.take();
  p.dxDev = dx.take();
  p.dwDev = dw.take();
  p.segDev = segDev.take();
  return p;
}

/// What the checks sample: rows (the first and last of up to 64 types with
/// rows, evenly spread, and random ones, `count` in all) and types for dW
/// (up to 16 with rows and up to 16 without).
struct Sample {
  std::vector<int64_t> rows;
  std::vector<int64_t> typesWithRows, emptyTypes;
  std::vector<std::pair<int64_t, int64_t>> entries;
};

Sample drawSample(const SegmentProblem &p, int64_t count, uint64_t seed) {
  Sample s;
  std::vector<int64_t> withRows, empty;
  for (int64_t t = 0; t < p.types; ++t)
    (p.rowsOf(t) > 0 ? withRows : empty).push_back(t);
  auto spread = [](const std::vector<int64_t> &all, size_t n) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < std::min(n, all.size()); ++i)
      out.push_back(all[i * all.size() / std::min(n, all.size())]);
    return out;
  };
  std::set<int64_t> rows;
  for (int64_t t : spread(withRows, 64)) {
    rows.insert(p.seg[t]);
    rows.insert(p.seg[t + 1] - 1);
  }
  std::mt19937_64 rng(seed);
  while (p.rows > 0 && int64_t(rows.size()) < std::min(count, p.rows))
    rows.insert(static_cast<int64_t>(rng() % uint64_t(p.rows)));
  s.rows.assign(rows.begin(), rows.end());
  s.typesWithRows = spread(withRows, 16);
  s.emptyTypes = spread(empty, 16);
  s.entries = {{0, 0}, {p.k - 1, p.m - 1}};
  while (int64_t(s.entries.size()) < std::min<int64_t>(16, p.k * p.m))
    s.entries.push_back({static_cast<int64_t>(rng() % uint64_t(p.k)),
                         static_cast<int64_t>(rng() % uint64_t(p.m))});
  return s;
}

/// Element `index` of a downloaded tensor of `type`, as a float.
float elementAt(const std::vector<uint8_t> &bytes, size_t index,
                ElementType type) {
  if (type == ElementType::F32) {
    float v;
    std::memcpy(&v, bytes.data() + index * 4, 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, bytes.data() + index * 2, 2);
  return type == ElementType::F16 ? halfToFloat(h) : bf16ToFloat(h);
}

/// `count` elements of `buffer` from element `first`, as floats.
Expected<std::vector<float>> download(const rt::DeviceBuffer &buffer,
                                      int64_t first, int64_t count,
                                      ElementType type) {
  const size_t e = elementSize(type);
  std::vector<uint8_t> bytes(static_cast<size_t>(count) * e);
  if (count > 0) {
    cudaError_t error = cudaMemcpy(bytes.data(), at(buffer, first * int64_t(e)),
                                   bytes.size(), cudaMemcpyDeviceToHost);
    if (error != cudaSuccess)
      return Status::error("downloading a result: " + cudaText(error));
  }
  std::vector<float> out(static_cast<size_t>(count));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = elementAt(bytes, i, type);
  return out;
}

/// The comparison of sampled outputs with the double reference: an output
/// passes when finite and within `tolerance` of its terms' magnitude (the
/// sum of |products|), as ops::compareWithReference allows.
class Comparison {
public:
  explicit Comparison(double tolerance) : tolerance_(tolerance) {}
  void add(const std::string &where, double got, double expected,
           double magnitude) {
    ++checked_;
    const double allowed = tolerance_ * magnitude + 1e-30;
    if (std::isfinite(got) && std::abs(got - expected) <= allowed)
      return;
    if (++wrong_ <= 3) {
      char buf[160];
      std::snprintf(buf, sizeof(buf),
                    "%s: got %.8g, expected %.8g (allowed %.3g); ",
                    where.c_str(), got, expected, allowed);
      report_ += buf;
    }
  }
  bool ok() const { return wrong_ == 0 && checked_ > 0; }
  std::string report() const {
    return std::to_string(checked_) + " sampled outputs, " +
           std::to_string(wrong_) + " wrong" +
           (report_.empty() ? "" : ": " + report_);
  }
  int64_t checked() const { return checked_; }

private:
  double tolerance_;
  int64_t checked_ = 0, wrong_ = 0;
  std::string report_;
};

int64_t typeOfRow(const std::vector<int64_t> &seg, int64_t row) {
  return int64_t(std::upper_bound(seg.begin(), seg.end(), row) - seg.begin()) -
         1;
}

/// Checks sampled rows of the forward result (Y = X W_t) or the input
/// gradient (dX = dY W_tᵀ) in `out`.
Status checkRows(const SegmentProblem &p, const Sample &s,
                 const rt::DeviceBuffer &out, bool inputGrad, Comparison &cmp) {
  const int64_t width = inputGrad ? p.k : p.m;
  for (int64_t r : s.rows) {
    const int64_t t = typeOfRow(p.seg, r);
    Expected<std::vector<float>> got =
        download(out, r * width, width, p.dtype.type);
    if (!got)
      return got.status();
    const float *wt = p.w.data() + t * p.k * p.m;
    for (int64_t c = 0; c < width; ++c) {
      double sum = 0, magnitude = 0;
      if (!inputGrad)
        for (int64_t i = 0; i < p.k; ++i) {
          double term = double(p.x[r * p.k + i]) * wt[i * p.m + c];
          sum += term;
          magnitude += std::abs(term);
        }
      else
        for (int64_t j = 0; j < p.m; ++j) {
          double term = double(p.dy[r * p.m + j]) * wt[c * p.m + j];
          sum += term;
          magnitude += std::abs(term);
        }
      cmp.add("row " + std::to_string(r) + " col " + std::to_string(c),
              (*got)[c], sum, magnitude);
    }
  }
  return Status::ok();
}

/// Checks sampled entries of the weight gradient (dW_t = X_tᵀ dY_t) in
/// `out`, and that the sampled types without rows are exactly zero.
Status checkWeightGrad(const SegmentProblem &p, const Sample &s,
                       const rt::DeviceBuffer &out, Comparison &cmp) {
  for (int64_t t : s.typesWithRows) {
    Expected<std::vector<float>> got =
        download(out, t * p.k * p.m, p.k * p.m, p.dtype.type);
    if (!got)
      return got.status();
    for (auto [i, j] : s.entries) {
      double sum = 0, magnitude = 0;
      for (int64_t r = p.seg[t]; r < p.seg[t + 1]; ++r) {
        double term = double(p.x[r * p.k + i]) * p.dy[r * p.m + j];
        sum += term;
        magnitude += std::abs(term);
      }
      cmp.add("dW type " + std::to_string(t) + " (" + std::to_string(i) + ", " +
                  std::to_string(j) + ")",
              (*got)[i * p.m + j], sum, magnitude);
    }
  }
  for (int64_t t : s.emptyTypes) {
    Expected<std::vector<float>> got =
        download(out, t * p.k * p.m, p.k * p.m, p.dtype.type);
    if (!got)
      return got.status();
    for (auto [i, j] : s.entries)
      cmp.add("dW of empty type " + std::to_string(t), (*got)[i * p.m + j], 0,
              0);
  }
  return Status::ok();
}

/// The outputs a check covers.
struct Outputs {
  bool y = false, dx = false, dw = false;
  static Outputs of(bool backward) {
    return backward ? Outputs{false, true, true} : Outputs{true, false, false};
  }
};

/// Poisons `what`, runs `work` once, synchronizes and checks the sampled
/// outputs of `what` within `tolerance`.
Expected<ops::KernelCheck> runChecked(SegmentProblem &p, const Sample &s,
                                      Outputs what, double tolerance,
                                      const std::function<Status()> &work) {
  if (what.y)
    GNNC_RETURN_IF_ERROR(p.yDev.fill(0xff));
  if (what.dx)
    GNNC_RETURN_IF_ERROR(p.dxDev.fill(0xff));
  if (what.dw)
    GNNC_RETURN_IF_ERROR(p.dwDev.fill(0xff));
  GNNC_RETURN_IF_ERROR(work());
  cudaError_t error = cudaDeviceSynchronize();
  if (error != cudaSuccess)
    return Status::error("after the first run: " + cudaText(error));
  Comparison cmp(tolerance);
  if (what.y)
    GNNC_RETURN_IF_ERROR(checkRows(p, s, p.yDev, false, cmp));
  if (what.dx)
    GNNC_RETURN_IF_ERROR(checkRows(p, s, p.dxDev, true, cmp));
  if (what.dw)
    GNNC_RETURN_IF_ERROR(checkWeightGrad(p, s, p.dwDev, cmp));
  // A problem without rows has no rows to compare: it passes when it ran
  // (and wrote zeros for the types without rows, when dW is checked).
  const bool nothing = cmp.checked() == 0 && p.rows == 0;
  return ops::KernelCheck{cmp.ok() || nothing, cmp.report()};
}

/// cuBLAS's types and compute type of a dtype.
struct CublasTypes {
  cudaDataType data;
  cublasComputeType_t compute;
};
CublasTypes cublasTypes(const SegmentDtype &d) {
  if (d.type == ElementType::F32)
    return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
  return {d.type == ElementType::F16 ? CUDA_R_16F : CUDA_R_16BF,
          CUBLAS_COMPUTE_32F};
}

/// One GEMM in cuBLAS's column-major terms.
struct Gemm {
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  int m = 0, n = 0, k = 0;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  int lda = 0, ldb = 0, ldc = 0;
};

/// The GEMMs of a pass, one per type with rows (row-major data seen
/// column-major: Y_tᵀ = W_tᵀ X_tᵀ; dX_tᵀ = W_t dY_tᵀ; dW_tᵀ = dY_tᵀ X_t),
/// and the dW blocks of the types without rows, which are set to zero.
struct PassGemms {
  std::vector<Gemm> gemms;
  std::vector<std::pair<void *, size_t>> zeros;
};

PassGemms passGemms(const SegmentProblem &p, bool backward) {
  PassGemms out;
  const int64_t e = int64_t(p.e());
  const int k = int(p.k), m = int(p.m);
  for (int64_t t = 0; t < p.types; ++t) {
    const int rows = int(p.rowsOf(t));
    void *wt = at(p.wDev, t * p.k * p.m * e);
    if (!backward) {
      if (rows > 0)
        out.gemms.push_back({CUBLAS_OP_N, CUBLAS_OP_N, m, rows, k, wt,
                             at(p.xDev, p.seg[t] * p.k * e),
                             at(p.yDev, p.seg[t] * p.m * e), m, k, m});
      continue;
    }
    if (rows > 0) {
      out.gemms.push_back({CUBLAS_OP_T, CUBLAS_OP_N, k, rows, m, wt,
                           at(p.dyDev, p.seg[t] * p.m * e),
                           at(p.dxDev, p.seg[t] * p.k * e), m, m, k});
      out.gemms.push_back({CUBLAS_OP_N, CUBLAS_OP_T, m, k, rows,
                           at(p.dyDev, p.seg[t] * p.m * e),
                           at(p.xDev, p.seg[t] * p.k * e),
                           at(p.dwDev, t * p.k * p.m * e), m, k, m});
    } else {
      out.zeros.push_back(
          {at(p.dwDev, t * p.k * p.m * e), size_t(p.k * p.m * e)});
    }
  }
  return out;
}

Status zeroBlocks(const PassGemms &g) {
  for (const auto &[address, bytes] : g.zeros) {
    cudaError_t error = cudaMemsetAsync(address, 0, bytes, nullptr);
    if (error != cudaSuccess)
      return Status::error("cudaMemsetAsync: " + cudaText(error));
  }
  return Status::ok();
}

/// The per-type loop: one cublasGemmEx per GEMM.
Status runLoop(cublasHandle_t h, const SegmentDtype &d, const PassGemms &g) {
  const CublasTypes ct = cublasTypes(d);
  const float alpha = 1.0f, beta = 0.0f;
  for (const Gemm &x : g.gemms)
    GNNC_RETURN_IF_ERROR(cublasCall(
        cublasGemmEx(h, x.ta, x.tb, x.m, x.n, x.k, &alpha, x.a, ct.data, x.lda,
                     x.b, ct.data, x.ldb, &beta, x.c, ct.data, x.ldc,
                     ct.compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx"));
  return zeroBlocks(g);
}

/// The grouped call's arrays: one group of one GEMM per entry of `g`, the
/// pointer arrays on the device.
struct Grouped {
  std::vector<cublasOperation_t> ta, tb;
  std::vector<int> m, n, k, lda, ldb, ldc, size;
  std::vector<float> alpha, beta;
  rt::DeviceBuffer a, b, c;
};

Expected<Grouped> groupedArrays(const PassGemms &g) {
  Grouped out;
  std::vector<uint64_t> a, b, c;
  for (const Gemm &x : g.gemms) {
    out.ta.push_back(x.ta);
    out.tb.push_back(x.tb);
    out.m.push_back(x.m);
    out.n.push_back(x.n);
    out.k.push_back(x.k);
    out.lda.push_back(x.lda);
    out.ldb.push_back(x.ldb);
    out.ldc.push_back(x.ldc);
    out.size.push_back(1);
    out.alpha.push_back(1.0f);
    out.beta.push_back(0.0f);
    a.push_back(reinterpret_cast<uintptr_t>(x.a));
    b.push_back(reinterpret_cast<uintptr_t>(x.b));
    c.push_back(reinterpret_cast<uintptr_t>(x.c));
  }
  for (auto [host, dev] :
       {std::pair{&a, &out.a}, std::pair{&b, &out.b}, std::pair{&c, &out.c}}) {
    auto buffer = rt::DeviceBuffer::allocate(
        std::max<size_t>(8, host->size() * sizeof(uint64_t)));
    if (!buffer)
      return buffer.status();
    GNNC_RETURN_IF_ERROR(
        buffer->copyFromHost(host->data(), host->size() * sizeof(uint64_t)));
    *dev = buffer.take();
  }
  return out;
}

Status runGrouped(cublasHandle_t h, const SegmentDtype &d, const PassGemms &g,
                  const Grouped &arrays) {
#if GNNC_HAVE_GROUPED_GEMM
  const CublasTypes ct = cublasTypes(d);
  if (!arrays.m.empty())
    GNNC_RETURN_IF_ERROR(cublasCall(
        cublasGemmGroupedBatchedEx(
            h, arrays.ta.data(), arrays.tb.data(), arrays.m.data(),
            arrays.n.data(), arrays.k.data(), arrays.alpha.data(),
            static_cast<const void *const *>(at(arrays.a)), ct.data,
            arrays.lda.data(), static_cast<const void *const *>(at(arrays.b)),
            ct.data, arrays.ldb.data(), arrays.beta.data(),
            static_cast<void *const *>(at(arrays.c)), ct.data,
            arrays.ldc.data(), int(arrays.m.size()), arrays.size.data(),
            ct.compute),
        "cublasGemmGroupedBatchedEx"));
  return zeroBlocks(g);
#else
  (void)h;
  (void)d;
  (void)g;
  (void)arrays;
  return Status::error("cublasGemmGroupedBatchedEx needs cuBLAS 12.5 or "
                       "later; this build has " +
                       std::to_string(CUBLAS_VER_MAJOR) + "." +
                       std::to_string(CUBLAS_VER_MINOR));
#endif
}

/// One gnnc kernel of a pass, loaded, with its routing table.
struct GnncKernel {
  rt::LoadedKernel kernel;
  ops::DeviceRouteTable table;
  Schedule schedule;
};

/// The record of one timing (the shared record format).
json record(const std::string &set, const SegmentProblem &p, bool backward,
            const std::string &impl, std::optional<double> ms, bool ok,
            const std::string &schedule = "") {
  const SegmentWork w =
      segmentWork(p.rows, p.types, p.k, p.m, p.dtype.type, backward);
  json r = {{"set", set},
            {"dtype", p.dtype.name},
            {"K", p.k},
            {"M", p.m},
            {"pass", backward ? "backward" : "forward"},
            {"impl", impl},
            {"ms", ms ? json(*ms) : json(nullptr)},
            {"ok", ok},
            {"bytes", w.bytes},
            {"flops", w.flops}};
  if (impl.rfind("gnnc", 0) == 0)
    r["schedule"] = schedule;
  return r;
}

/// Everything one case records.
struct CaseOutput {
  json &records, &sweeps, &notes;
  int &failures;
  void note(const std::string &set, const SegmentProblem &p, bool backward,
            const std::string &impl, const std::string &what) {
    notes.push_back({{"set", set},
                     {"dtype", p.dtype.name},
                     {"K", p.k},
                     {"pass", backward ? "backward" : "forward"},
                     {"impl", impl},
                     {"note", what}});
    std::printf("note     %s %s K%lld %s %s: %s\n", set.c_str(),
                p.dtype.name.c_str(), (long long)p.k,
                backward ? "backward" : "forward", impl.c_str(), what.c_str());
  }
};

/// Checks `work` and, if it passed, times it; records the outcome as
/// `impl`. Returns the median ms when timed.
std::optional<double>
checkAndTime(Bench &bench, SegmentProblem &p, const Sample &s,
             const std::string &set, bool backward, const std::string &impl,
             double tolerance, const std::function<Status()> &work,
             CaseOutput &out, const std::string &schedule = "",
             bool recordIt = true) {
  Expected<ops::KernelCheck> check =
      runChecked(p, s, Outputs::of(backward), tolerance, work);
  if (!check || !check->ok) {
    ++out.failures;
    out.note(set, p, backward, impl,
             check ? "wrong: " + check->report : "error: " + check.message());
    if (recordIt)
      out.records.push_back(
          record(set, p, backward, impl, std::nullopt, false, schedule));
    return std::nullopt;
  }
  Expected<TimingStats> timing = bench.time(work);
  if (!timing) {
    ++out.failures;
    out.note(set, p, backward, impl, "error: " + timing.message());
    if (recordIt)
      out.records.push_back(
          record(set, p, backward, impl, std::nullopt, false, schedule));
    return std::nullopt;
  }
  if (recordIt)
    out.records.push_back(
        record(set, p, backward, impl, timing->medianMs, true, schedule));
  return timing->medianMs;
}

/// The gnnc candidates of one op on the set: the tuner's choice first,
/// then each other math's leader the model puts within 2x of it, then the
/// model's next ranked, `count` in all (tuning::segmentMeasurementOrder).
std::vector<Schedule> candidates(const OpDesc &op,
                                 const tuning::SegmentStats &stats,
                                 const tuning::GpuModel &gpu, MathMode math,
                                 size_t count) {
  const std::vector<tuning::Candidate> ranked =
      tuning::rankedSegmentCandidates(op, stats, gpu, math);
  std::vector<Schedule> out;
  for (size_t i :
       tuning::segmentMeasurementOrder(ranked, std::max<size_t>(1, count)))
    out.push_back(ranked[i].schedule);
  return out;
}

} // namespace

void gnnc::bench::runSegmentSet(Bench &bench, Cublas *cublas,
                                const std::string &name,
                                const std::vector<int64_t> &seg,
                                const SegmentCaseOptions &options,
                                json &records, json &sweeps, json &notes,
                                int &failures) {
  CaseOutput out{records, sweeps, notes, failures};
  Expected<tuning::SegmentStats> stats = tuning::segmentStats(seg);
  if (!stats) {
    ++failures;
    notes.push_back({{"set", name}, {"note", "error: " + stats.message()}});
    std::printf("error    %s: %s\n", name.c_str(), stats.message().c_str());
    return;
  }
  const tuning::GpuModel gpu = tuning::fromDevice(bench.device());
  std::printf("segments %s: %lld types (%lld empty), %lld rows, mean %.1f, "
              "spread %.2f, longest %lld\n",
              name.c_str(), (long long)stats->types,
              (long long)stats->emptyTypes, (long long)stats->rows,
              stats->meanRows, stats->spread, (long long)stats->maxRows);
  for (const std::string &dtypeName : options.dtypes) {
    Expected<SegmentDtype> dtype = parseSegmentDtype(dtypeName);
    if (!dtype) {
      ++failures;
      notes.push_back({{"set", name}, {"note", dtype.message()}});
      continue;
    }
    for (int64_t dim : options.dims) {
      const OpDesc fwd = segmentMatmulOp(dtype->type, dim, dim);
      const OpDesc dx = segmentMatmulInputGradOp(dtype->type, dim, dim);
      const OpDesc dw = segmentMatmulWeightGradOp(dtype->type, dim, dim);
      const OpDesc opOf[] = {fwd, dx, dw};
      const char *prefixes[] = {"f", "dx", "dw"};
      std::vector<Schedule> lists[3];
      std::string text = "gnn.module @sg {\n";
      for (int form = 0; form < 3; ++form) {
        lists[form] =
            candidates(opOf[form], *stats, gpu, dtype->math, options.sweep);
        for (size_t i = 0; i < lists[form].size(); ++i)
          text += opKernelText(prefixes[form] + std::to_string(i), opOf[form],
                               lists[form][i]);
      }
      text += "}\n";

      Expected<SegmentProblem> made =
          makeProblem(seg, *dtype, dim, options.seed + uint64_t(dim));
      if (!made) {
        ++failures;
        notes.push_back({{"set", name},
                         {"dtype", dtype->name},
                         {"K", dim},
                         {"note", "error: " + made.message()}});
        std::printf("error    %s %s K%lld: %s\n", name.c_str(),
                    dtype->name.c_str(), (long long)dim,
                    made.message().c_str());
        continue;
      }
      SegmentProblem &p = *made;
      bench.sampleMemory();
      const Sample sample =
          drawSample(p, options.checkRows, options.seed ^ uint64_t(dim));
      Schedule tensorCore;
      tensorCore.math = MathMode::TensorCore;
      // cuBLAS's tolerance is that of gnnc's tensor cores on the same
      // inputs (TF32: 2^-9 of the terms; f16: the result's rounding).
      const double libraryTolerance =
          ops::segmentMatmulTolerance(fwd, tensorCore);

      // Every candidate of the three forms in one module, compiled (and
      // loaded through NVRTC) once for both passes.
      Expected<CompiledModule> compiled = compileGnn(text, "segments.gnn");
      for (bool backward : {false, true}) {
        std::map<std::string, double> ms;
        if (cublas) {
          cublasHandle_t h = asHandle(cublas->handle());
          const PassGemms gemms = passGemms(p, backward);
          if (auto t = checkAndTime(
                  bench, p, sample, name, backward, "cublas_loop",
                  libraryTolerance, [&] { return runLoop(h, *dtype, gemms); },
                  out))
            ms["cublas_loop"] = *t;
          Expected<Grouped> arrays = groupedArrays(gemms);
          if (!arrays) {
            ++failures;
            out.note(name, p, backward, "cublas_grouped",
                     "error: " + arrays.message());
            records.push_back(record(name, p, backward, "cublas_grouped",
                                     std::nullopt, false));
          } else if (auto t = checkAndTime(
                         bench, p, sample, name, backward, "cublas_grouped",
                         libraryTolerance,
                         [&] { return runGrouped(h, *dtype, gemms, *arrays); },
                         out)) {
            ms["cublas_grouped"] = *t;
          }
        }

        // gnnc: the forms of this pass, each candidate compiled once.
        std::vector<int> forms =
            backward ? std::vector<int>{1, 2} : std::vector<int>{0};
        if (!compiled) {
          ++failures;
          out.note(name, p, backward, "gnnc", "error: " + compiled.message());
          for (const char *impl : {"gnnc_tuned", "gnnc_best"})
            records.push_back(
                record(name, p, backward, impl, std::nullopt, false));
          continue;
        }
        // Per form: every candidate loaded with its routing table, and its
        // time alone (the sweep).
        std::vector<GnncKernel> kernels[3];
        std::vector<bool> loaded[3];
        std::vector<std::optional<double>> alone[3];
        for (int form : forms) {
          kernels[form].resize(lists[form].size());
          loaded[form].assign(lists[form].size(), false);
          alone[form].assign(lists[form].size(), std::nullopt);
          for (size_t i = 0; i < lists[form].size(); ++i) {
            const std::string entry =
                "sg_" + std::string(prefixes[form]) + std::to_string(i);
            Expected<rt::KernelSpec> spec = findKernel(*compiled, entry);
            Expected<rt::LoadedKernel> kernel =
                spec ? bench.runtime().load(*spec)
                     : Expected<rt::LoadedKernel>(spec.status());
            Expected<ops::DeviceRouteTable> table =
                kernel ? ops::uploadRouteTable(bench.runtime(), *kernel, seg,
                                               p.rows)
                       : Expected<ops::DeviceRouteTable>(kernel.status());
            if (!table) {
              ++failures;
              out.note(name, p, backward, "gnnc " + entry,
                       "error: " + table.message());
              continue;
            }
            kernels[form][i] = {kernel.take(), table.take(), lists[form][i]};
            loaded[form][i] = true;
          }
        }
        auto launch = [&](int form, size_t i) -> Status {
          GnncKernel &k = kernels[form][i];
          if (form == 0)
            return ops::launchSegmentMatmul(bench.runtime(), k.kernel, p.xDev,
                                            p.wDev, p.segDev, k.table, p.yDev,
                                            false);
          if (form == 1)
            return ops::launchSegmentMatmul(bench.runtime(), k.kernel, p.dyDev,
                                            p.wDev, p.segDev, k.table, p.dxDev,
                                            false);
          return ops::launchSegmentMatmulWeightGrad(
              bench.runtime(), k.kernel, p.xDev, p.dyDev, p.segDev, p.types,
              k.table, p.dwDev, false);
        };
        // The sweep: each candidate checked on its own output, then timed
        // alone.
        for (int form : forms)
          for (size_t i = 0; i < kernels[form].size(); ++i) {
            if (!loaded[form][i])
              continue;
            const Schedule &s = kernels[form][i].schedule;
            Outputs what;
            (form == 0 ? what.y : form == 1 ? what.dx : what.dw) = true;
            Expected<ops::KernelCheck> check = runChecked(
                p, sample, what, ops::segmentMatmulTolerance(opOf[form], s),
                [&] { return launch(form, i); });
            std::optional<double> time;
            std::string status = "ok";
            if (!check || !check->ok) {
              status = check ? "wrong: " + check->report
                             : "error: " + check.message();
            } else {
              Expected<TimingStats> timing =
                  bench.time([&] { return launch(form, i); });
              if (timing)
                time = timing->medianMs;
              else
                status = "error: " + timing.message();
            }
            if (!time) {
              ++failures;
              out.note(name, p, form != 0,
                       std::string("gnnc ") + prefixes[form] +
                           std::to_string(i),
                       status);
            }
            alone[form][i] = time;
            sweeps.push_back(
                {{"set", name},
                 {"dtype", dtype->name},
                 {"K", dim},
                 {"M", dim},
                 {"op",
                  std::string(opKindName(opOf[form].kind)) +
                      (opOf[form].transposeWeights ? " (transposed)" : "")},
                 {"rank", i},
                 {"schedule", s.str()},
                 {"ms", time ? json(*time) : json(nullptr)},
                 {"status", status}});
          }
        // gnnc_tuned: the model's choice (rank 0) of each form; gnnc_best:
        // the fastest of each form's sweep, timed together.
        auto choose = [&](bool best) {
          std::vector<std::pair<int, size_t>> picks;
          for (int form : forms) {
            std::optional<size_t> pick;
            for (size_t i = 0; i < alone[form].size(); ++i)
              if (alone[form][i] &&
                  (!pick || *alone[form][i] < *alone[form][*pick]))
                pick = i;
            if (!best)
              pick = 0;
            if (alone[form].empty() || !pick || !alone[form][*pick])
              return std::vector<std::pair<int, size_t>>{};
            picks.push_back({form, *pick});
          }
          return picks;
        };
        for (bool best : {false, true}) {
          const std::string impl = best ? "gnnc_best" : "gnnc_tuned";
          std::vector<std::pair<int, size_t>> picks = choose(best);
          std::string schedule;
          for (auto [form, i] : picks)
            schedule += (schedule.empty() ? "" : "; ") +
                        (backward ? std::string(form == 1 ? "dx " : "dw ")
                                  : std::string()) +
                        kernels[form][i].schedule.str();
          if (picks.empty()) {
            ++failures;
            out.note(name, p, backward, impl, "no candidate passed its check");
            records.push_back(
                record(name, p, backward, impl, std::nullopt, false));
            continue;
          }
          // The region: each picked kernel once (forward: one; backward:
          // dX, then dW with its reduction).
          double tolerance = 0;
          for (auto [form, i] : picks)
            tolerance =
                std::max(tolerance, ops::segmentMatmulTolerance(
                                        opOf[form], kernels[form][i].schedule));
          if (auto t = checkAndTime(
                  bench, p, sample, name, backward, impl, tolerance,
                  [&]() -> Status {
                    for (auto [form, i] : picks)
                      GNNC_RETURN_IF_ERROR(launch(form, i));
                    return Status::ok();
                  },
                  out, schedule))
            ms[impl] = *t;
        }
        std::printf("case     %-10s %-4s K=M=%-4lld %-8s", name.c_str(),
                    dtype->name.c_str(), (long long)dim,
                    backward ? "backward" : "forward");
        for (const char *impl :
             {"cublas_loop", "cublas_grouped", "gnnc_tuned", "gnnc_best"}) {
          auto it = ms.find(impl);
          if (it == ms.end())
            std::printf("  %s -", impl);
          else
            std::printf("  %s %.4f ms", impl, it->second);
        }
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  }
}
