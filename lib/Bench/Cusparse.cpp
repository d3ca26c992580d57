//===- Cusparse.cpp - cuSPARSE and CUDA runtime baselines -----------------===//
#include "gnnc/Bench/Cusparse.h"

#include "gnnc/Bench/Bytes.h"
#include "gnnc/Bench/Host.h"

#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>

using namespace gnnc;
using namespace gnnc::bench;

namespace {

cusparseHandle_t asHandle(void *handle) {
  return static_cast<cusparseHandle_t>(handle);
}

void *devicePointer(const rt::DeviceBuffer &buffer) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(buffer.address()));
}

std::string statusText(cusparseStatus_t status) {
  return std::string(cusparseGetErrorName(status)) + " (" +
         cusparseGetErrorString(status) + ")";
}

std::string cudaText(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" +
         cudaGetErrorString(error) + ")";
}

cudaDataType cudaTypeOf(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return CUDA_R_32F;
  case ElementType::F16:
    return CUDA_R_16F;
  case ElementType::BF16:
    return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

/// Destroys cuSPARSE descriptors on scope exit.
struct SpMatGuard {
  cusparseSpMatDescr_t descr = nullptr;
  ~SpMatGuard() {
    if (descr)
      cusparseDestroySpMat(descr);
  }
};
struct DnMatGuard {
  cusparseDnMatDescr_t descr = nullptr;
  ~DnMatGuard() {
    if (descr)
      cusparseDestroyDnMat(descr);
  }
};

/// Fills `result` for a cuSPARSE call that said no.
void refuse(LibraryResult &result, const char *call, cusparseStatus_t status) {
  if (status == CUSPARSE_STATUS_NOT_SUPPORTED ||
      status == CUSPARSE_STATUS_INVALID_VALUE ||
      status == CUSPARSE_STATUS_ARCH_MISMATCH)
    result.status = "unsupported: " + statusText(status) + " (" + call + ")";
  else
    result.status = "error: " + statusText(status) + " (" + call + ")";
}

/// Runs one configured cuSPARSE operation through the shared steps: a
/// buffer of the size asked for, preprocessing (a refusal is noted, not
/// fatal), one untimed run that is checked, then the timed runs.
/// `bufferSize`, `preprocess` and `run` wrap the three cuSPARSE calls.
void runConfigured(Bench &bench, LibraryResult &result,
                   const std::function<cusparseStatus_t(size_t *)> &bufferSize,
                   const std::function<cusparseStatus_t(void *)> &preprocess,
                   const std::function<cusparseStatus_t(void *)> &run,
                   const std::function<Status()> &prepareOutput,
                   const std::function<Expected<ops::SpmmCheck>()> &check) {
  size_t bytes = 0;
  cusparseStatus_t status = bufferSize(&bytes);
  if (status != CUSPARSE_STATUS_SUCCESS)
    return refuse(result, "bufferSize", status);
  result.bufferBytes = bytes;
  auto buffer = rt::DeviceBuffer::allocate(std::max<size_t>(bytes, 1));
  if (!buffer) {
    result.status = "error: " + buffer.message();
    return;
  }
  bench.sampleMemory();
  void *external = devicePointer(*buffer);
  status = preprocess(external);
  if (status != CUSPARSE_STATUS_SUCCESS)
    result.note = "preprocess refused: " + statusText(status);
  Status prepared = prepareOutput();
  if (!prepared) {
    result.status = "error: " + prepared.message();
    return;
  }
  status = run(external);
  if (status != CUSPARSE_STATUS_SUCCESS)
    return refuse(result, "run", status);
  cudaError_t error = cudaDeviceSynchronize();
  if (error != cudaSuccess) {
    result.status = "error: " + cudaText(error) + " after the first run";
    return;
  }
  auto checked = check();
  result.checked = true;
  if (checked) {
    result.checkOk = checked->ok;
    result.checkReport = checked->report;
  } else {
    result.checkOk = false;
    result.checkReport = "check failed to run: " + checked.message();
  }
  auto timing = bench.time([&]() -> Status {
    cusparseStatus_t s = run(external);
    if (s != CUSPARSE_STATUS_SUCCESS)
      return Status::error("cuSPARSE: " + statusText(s));
    return Status::ok();
  });
  if (!timing) {
    result.status = "error: " + timing.message();
    return;
  }
  result.status = "ok";
  result.timing = *timing;
}

} // namespace

Expected<CudaLibraries> CudaLibraries::create(Bench &bench) {
  cudaError_t error = cudaSetDevice(bench.device().ordinal());
  if (error == cudaSuccess)
    error = cudaFree(nullptr); // initializes the runtime on the context
  if (error != cudaSuccess)
    return Status::error("CUDA runtime: " + cudaText(error));
  CudaLibraries libraries;
  cudaRuntimeGetVersion(&libraries.runtimeVersion_);
  cusparseHandle_t handle = nullptr;
  cusparseStatus_t status = cusparseCreate(&handle);
  if (status != CUSPARSE_STATUS_SUCCESS)
    return Status::error("cusparseCreate: " + statusText(status));
  libraries.handle_ = handle;
  cusparseGetVersion(handle, &libraries.cusparseVersion_);
  cusparseSetStream(handle, nullptr); // the legacy default stream
  return libraries;
}

CudaLibraries::CudaLibraries(CudaLibraries &&other) noexcept
    : handle_(other.handle_), runtimeVersion_(other.runtimeVersion_),
      cusparseVersion_(other.cusparseVersion_) {
  other.handle_ = nullptr;
}

CudaLibraries &CudaLibraries::operator=(CudaLibraries &&other) noexcept {
  if (this != &other) {
    if (handle_)
      cusparseDestroy(asHandle(handle_));
    handle_ = other.handle_;
    runtimeVersion_ = other.runtimeVersion_;
    cusparseVersion_ = other.cusparseVersion_;
    other.handle_ = nullptr;
  }
  return *this;
}

CudaLibraries::~CudaLibraries() {
  if (handle_)
    cusparseDestroy(asHandle(handle_));
}

std::string CudaLibraries::cusparseVersion() const {
  int v = cusparseVersion_;
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 100) + "." +
         std::to_string(v % 100);
}

Expected<TimingStats> gnnc::bench::timeDeviceCopy(Bench &bench, size_t bytes,
                                                  double *gbs) {
  auto src = rt::DeviceBuffer::allocate(bytes);
  if (!src)
    return src.status();
  auto dst = rt::DeviceBuffer::allocate(bytes);
  if (!dst)
    return dst.status();
  bench.sampleMemory();
  GNNC_RETURN_IF_ERROR(src->fill(0x3c));
  void *from = devicePointer(*src);
  void *to = devicePointer(*dst);
  auto timing = bench.time([&]() -> Status {
    cudaError_t error =
        cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, nullptr);
    if (error != cudaSuccess)
      return Status::error("cudaMemcpyAsync: " + cudaText(error));
    return Status::ok();
  });
  if (timing && gbs)
    *gbs = gigabytesPerSecond(2.0 * double(bytes), timing->medianMs);
  return timing;
}

std::vector<LibraryResult> CudaLibraries::spmm(Bench &bench,
                                               SpmmProblem &problem) {
  struct Algorithm {
    const char *name;
    cusparseSpMMAlg_t alg;
  };
  const Algorithm algorithms[] = {{"default", CUSPARSE_SPMM_ALG_DEFAULT},
                                  {"csr_alg1", CUSPARSE_SPMM_CSR_ALG1},
                                  {"csr_alg2", CUSPARSE_SPMM_CSR_ALG2},
                                  {"csr_alg3", CUSPARSE_SPMM_CSR_ALG3}};
  const std::string typeName = elementTypeName(problem.type);
  const std::string types = "A,X,Y " + typeName + "; compute f32";
  std::vector<LibraryResult> results;
  auto failAll = [&](const std::string &status) {
    for (const Algorithm &a : algorithms) {
      LibraryResult r;
      r.algorithm = a.name;
      r.types = types;
      r.status = status;
      results.push_back(r);
    }
    return results;
  };

  const graph::CsrGraph &g = problem.graph();
  const DeviceGraphs &graphs = *problem.graphs;
  Expected<rt::DeviceBuffer> ones = Status::error("unused");
  const rt::DeviceBuffer *values = &problem.values;
  if (!problem.edgeValues) {
    ones = uploadFilled(static_cast<size_t>(g.nnz()), 1.0f, problem.type);
    if (!ones)
      return failAll("error: " + ones.message());
    values = &*ones;
  }
  ensureReference(problem);

  const cudaDataType dataType = cudaTypeOf(problem.type);
  SpMatGuard a;
  DnMatGuard x, y;
  cusparseStatus_t status = cusparseCreateCsr(
      &a.descr, g.numRows, g.numCols, g.nnz(), devicePointer(graphs.rowPtr32),
      devicePointer(graphs.gnnc.colIdx), devicePointer(*values),
      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
      dataType);
  if (status == CUSPARSE_STATUS_SUCCESS)
    status = cusparseCreateDnMat(&x.descr, g.numCols, problem.width,
                                 problem.width, devicePointer(problem.x),
                                 dataType, CUSPARSE_ORDER_ROW);
  if (status == CUSPARSE_STATUS_SUCCESS)
    status = cusparseCreateDnMat(&y.descr, g.numRows, problem.width,
                                 problem.width, devicePointer(problem.y),
                                 dataType, CUSPARSE_ORDER_ROW);
  if (status != CUSPARSE_STATUS_SUCCESS) {
    LibraryResult probe;
    refuse(probe, "create descriptors", status);
    return failAll(probe.status);
  }

  const float alpha = 1.0f, beta = 0.0f;
  cusparseHandle_t handle = asHandle(handle_);
  const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  for (const Algorithm &algorithm : algorithms) {
    LibraryResult result;
    result.algorithm = algorithm.name;
    result.types = types;
    const cusparseSpMMAlg_t alg = algorithm.alg;
    runConfigured(
        bench, result,
        [&](size_t *bytes) {
          return cusparseSpMM_bufferSize(handle, op, op, &alpha, a.descr,
                                         x.descr, &beta, y.descr, CUDA_R_32F,
                                         alg, bytes);
        },
        [&](void *buffer) {
          return cusparseSpMM_preprocess(handle, op, op, &alpha, a.descr,
                                         x.descr, &beta, y.descr, CUDA_R_32F,
                                         alg, buffer);
        },
        [&](void *buffer) {
          return cusparseSpMM(handle, op, op, &alpha, a.descr, x.descr, &beta,
                              y.descr, CUDA_R_32F, alg, buffer);
        },
        // Zeros, not NaN: with beta = 0 a library may still read C.
        [&]() { return problem.y.fill(0); },
        [&]() { return checkOutput(problem); });
    results.push_back(result);
  }
  return results;
}

std::vector<LibraryResult> CudaLibraries::sddmm(Bench &bench,
                                                const DeviceGraphs &graphs,
                                                ElementType type, int64_t width,
                                                uint64_t seed) {
  const graph::CsrGraph &g = *graphs.host;
  std::vector<LibraryResult> results;
  auto fail = [&](const std::string &status) {
    LibraryResult r;
    r.algorithm = "default";
    r.types = std::string("A,B ") + elementTypeName(type);
    r.status = status;
    results.push_back(r);
    return results;
  };
  HostVector<float> hostA = randomInputs(g.numRows * width, seed ^ 0xa11, type);
  HostVector<float> hostB = randomInputs(g.numCols * width, seed ^ 0xb22, type);
  auto devA = uploadConverted(hostA, type);
  if (!devA)
    return fail("error: " + devA.message());
  auto devB = uploadConverted(hostB, type);
  if (!devB)
    return fail("error: " + devB.message());

  // The sample of edges that is checked, with their reference dot products.
  const int64_t nnz = g.nnz();
  const int64_t sampleCount = std::min<int64_t>(nnz, int64_t(1) << 20);
  std::vector<int64_t> sample(sampleCount);
  std::vector<double> expected(sampleCount), magnitude(sampleCount);
  parallelFor(sampleCount, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      int64_t e = sampleCount == nnz ? i : i * (nnz / sampleCount);
      int64_t row = std::upper_bound(g.rowPtr.begin(), g.rowPtr.end(), e) -
                    g.rowPtr.begin() - 1;
      const float *ra = hostA.data() + row * width;
      const float *rb = hostB.data() + g.colIdx[e] * width;
      double sum = 0, mag = 0;
      for (int64_t k = 0; k < width; ++k) {
        double term = double(ra[k]) * double(rb[k]);
        sum += term;
        mag += std::fabs(term);
      }
      sample[i] = e;
      expected[i] = sum;
      magnitude[i] = mag;
    }
  });

  std::vector<ElementType> outputs{type};
  if (type != ElementType::F32)
    outputs.push_back(ElementType::F32);
  const float alpha = 1.0f, beta = 0.0f;
  cusparseHandle_t handle = asHandle(handle_);
  const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  for (ElementType out : outputs) {
    LibraryResult result;
    result.algorithm = "default";
    result.types = std::string("A,B ") + elementTypeName(type) + "; C " +
                   elementTypeName(out) + "; compute f32";
    auto devC = rt::DeviceBuffer::allocate(
        std::max<size_t>(size_t(nnz) * elementSize(out), 1));
    if (!devC) {
      result.status = "error: " + devC.message();
      results.push_back(result);
      continue;
    }
    SpMatGuard c;
    DnMatGuard a, b;
    // A is numRows x width row-major; B (width x numCols) is the row-major
    // numCols x width matrix read as column-major with leading dimension
    // width, so that C[r, c] = dot(A[r, :], Xb[c, :]).
    cusparseStatus_t status = cusparseCreateCsr(
        &c.descr, g.numRows, g.numCols, nnz, devicePointer(graphs.rowPtr32),
        devicePointer(graphs.gnnc.colIdx), devicePointer(*devC),
        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
        cudaTypeOf(out));
    if (status == CUSPARSE_STATUS_SUCCESS)
      status = cusparseCreateDnMat(&a.descr, g.numRows, width, width,
                                   devicePointer(*devA), cudaTypeOf(type),
                                   CUSPARSE_ORDER_ROW);
    if (status == CUSPARSE_STATUS_SUCCESS)
      status = cusparseCreateDnMat(&b.descr, width, g.numCols, width,
                                   devicePointer(*devB), cudaTypeOf(type),
                                   CUSPARSE_ORDER_COL);
    if (status != CUSPARSE_STATUS_SUCCESS) {
      refuse(result, "create descriptors", status);
      results.push_back(result);
      continue;
    }
    runConfigured(
        bench, result,
        [&](size_t *bytes) {
          return cusparseSDDMM_bufferSize(handle, op, op, &alpha, a.descr,
                                          b.descr, &beta, c.descr, CUDA_R_32F,
                                          CUSPARSE_SDDMM_ALG_DEFAULT, bytes);
        },
        [&](void *buffer) {
          return cusparseSDDMM_preprocess(handle, op, op, &alpha, a.descr,
                                          b.descr, &beta, c.descr, CUDA_R_32F,
                                          CUSPARSE_SDDMM_ALG_DEFAULT, buffer);
        },
        [&](void *buffer) {
          return cusparseSDDMM(handle, op, op, &alpha, a.descr, b.descr, &beta,
                               c.descr, CUDA_R_32F, CUSPARSE_SDDMM_ALG_DEFAULT,
                               buffer);
        },
        [&]() { return devC->fill(0); },
        [&]() -> Expected<ops::SpmmCheck> {
          HostVector<float> got;
          GNNC_RETURN_IF_ERROR(downloadConverted(*devC, size_t(nnz), out, got));
          std::vector<float> picked(sampleCount);
          for (int64_t i = 0; i < sampleCount; ++i)
            picked[i] = got[sample[i]];
          ops::SpmmCheck check = compareScaled(picked, expected, magnitude, 1,
                                               ops::spmmTolerance(out),
                                               ops::spmmAbsoluteTolerance(out));
          check.report =
              std::to_string(sampleCount) + " sampled edges: " + check.report;
          return check;
        });
    results.push_back(result);
    if (result.status == "ok")
      break;
  }
  return results;
}
