//===- CublasLt.cpp - cuBLASLt's GEMM with a bias and ReLU ----------------===//
#include "gnnc/Bench/CublasLt.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <utility>

using namespace gnnc;
using namespace gnnc::bench;

namespace {

cublasLtHandle_t asHandle(void *handle) {
  return static_cast<cublasLtHandle_t>(handle);
}

Status ltCall(cublasStatus_t status, const char *what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  return Status::error(std::string(what) + ": " +
                       cublasLtGetStatusName(status) + " (" +
                       cublasLtGetStatusString(status) + ")");
}

void *pointer(const rt::DeviceBuffer &buffer) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(buffer.address()));
}

} // namespace

Expected<CublasLt> CublasLt::create(Bench &bench) {
  cudaError_t error = cudaSetDevice(bench.device().ordinal());
  if (error != cudaSuccess)
    return Status::error(std::string("cudaSetDevice: ") +
                         cudaGetErrorName(error));
  cublasLtHandle_t handle = nullptr;
  GNNC_RETURN_IF_ERROR(ltCall(cublasLtCreate(&handle), "cublasLtCreate"));
  CublasLt lt;
  lt.handle_ = handle;
  Expected<rt::DeviceBuffer> workspace =
      rt::DeviceBuffer::allocate(kWorkspaceBytes);
  if (!workspace)
    return workspace.status().withContext("cuBLASLt workspace");
  lt.workspace_ = workspace.take();
  return lt;
}

CublasLt::CublasLt(CublasLt &&other) noexcept
    : handle_(other.handle_), workspace_(std::move(other.workspace_)) {
  other.handle_ = nullptr;
}

CublasLt &CublasLt::operator=(CublasLt &&other) noexcept {
  if (this != &other) {
    if (handle_)
      cublasLtDestroy(asHandle(handle_));
    handle_ = other.handle_;
    workspace_ = std::move(other.workspace_);
    other.handle_ = nullptr;
  }
  return *this;
}

CublasLt::~CublasLt() {
  if (handle_)
    cublasLtDestroy(asHandle(handle_));
}

std::string CublasLt::version() const {
  const size_t v = cublasLtGetVersion();
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

/// The descriptors, the chosen algorithm and where the workspace is.
struct LinearReluGemm::State {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t w = nullptr, h = nullptr, y = nullptr;
  cublasLtMatmulAlgo_t algo{};
  void *workspace = nullptr;
  size_t workspaceBytes = 0;

  ~State() {
    if (y)
      cublasLtMatrixLayoutDestroy(y);
    if (h)
      cublasLtMatrixLayoutDestroy(h);
    if (w)
      cublasLtMatrixLayoutDestroy(w);
    if (desc)
      cublasLtMatmulDescDestroy(desc);
  }
};

Expected<LinearReluGemm> LinearReluGemm::plan(const CublasLt &lt,
                                              ElementType type, int64_t rows,
                                              int64_t k, int64_t m) {
  if (rows < 1 || k < 1 || m < 1)
    return Status::error("cuBLASLt GEMM: " + std::to_string(rows) + " x " +
                         std::to_string(k) + " times " + std::to_string(k) +
                         " x " + std::to_string(m) +
                         "; every dimension must be at least 1");
  cudaDataType data = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  LinearReluGemm g;
  switch (type) {
  case ElementType::F32:
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    g.description_ = "tf32 (COMPUTE_32F_FAST_TF32)";
    break;
  case ElementType::F16:
    data = CUDA_R_16F;
    g.description_ = "f16 (COMPUTE_32F)";
    break;
  case ElementType::BF16:
    data = CUDA_R_16BF;
    g.description_ = "bf16 (COMPUTE_32F)";
    break;
  default:
    return Status::error(std::string("cuBLASLt GEMM: no ") +
                         elementTypeName(type) + " form (f32, f16, bf16)");
  }
  g.state_ = std::make_unique<State>();
  State &s = *g.state_;
  s.handle = asHandle(lt.handle());
  s.workspace = pointer(lt.workspace());
  s.workspaceBytes = lt.workspace().size();
  // Row-major Y = H W is column-major Yᵀ (m x rows) = Wᵀ (m x k) Hᵀ (k x
  // rows): the same bytes, no transposes; the bias runs along Yᵀ's m rows,
  // one value per output feature, as the epilogue adds it.
  GNNC_RETURN_IF_ERROR(
      ltCall(cublasLtMatmulDescCreate(&s.desc, compute, CUDA_R_32F),
             "cublasLtMatmulDescCreate"));
  cublasOperation_t op = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
  GNNC_RETURN_IF_ERROR(
      ltCall(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                            &op, sizeof(op)),
             "cublasLtMatmulDescSetAttribute(TRANSA)"));
  GNNC_RETURN_IF_ERROR(
      ltCall(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                            &op, sizeof(op)),
             "cublasLtMatmulDescSetAttribute(TRANSB)"));
  GNNC_RETURN_IF_ERROR(ltCall(
      cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                     &epilogue, sizeof(epilogue)),
      "cublasLtMatmulDescSetAttribute(EPILOGUE)"));
  GNNC_RETURN_IF_ERROR(ltCall(cublasLtMatrixLayoutCreate(&s.w, data, m, k, m),
                              "cublasLtMatrixLayoutCreate(W)"));
  GNNC_RETURN_IF_ERROR(
      ltCall(cublasLtMatrixLayoutCreate(&s.h, data, k, rows, k),
             "cublasLtMatrixLayoutCreate(H)"));
  GNNC_RETURN_IF_ERROR(
      ltCall(cublasLtMatrixLayoutCreate(&s.y, data, m, rows, m),
             "cublasLtMatrixLayoutCreate(Y)"));
  cublasLtMatmulPreference_t preference = nullptr;
  GNNC_RETURN_IF_ERROR(ltCall(cublasLtMatmulPreferenceCreate(&preference),
                              "cublasLtMatmulPreferenceCreate"));
  uint64_t workspaceBytes = s.workspaceBytes;
  Status set = ltCall(cublasLtMatmulPreferenceSetAttribute(
                          preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                          &workspaceBytes, sizeof(workspaceBytes)),
                      "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  Status heuristic = set ? ltCall(cublasLtMatmulAlgoGetHeuristic(
                                      s.handle, s.desc, s.w, s.h, s.y, s.y,
                                      preference, 1, &result, &found),
                                  "cublasLtMatmulAlgoGetHeuristic")
                         : set;
  cublasLtMatmulPreferenceDestroy(preference);
  GNNC_RETURN_IF_ERROR(heuristic);
  if (found < 1)
    return Status::error("cuBLASLt offers no algorithm for " + g.description_ +
                         " " + std::to_string(rows) + " x " +
                         std::to_string(k) + " x " + std::to_string(m) +
                         " with the RELU_BIAS epilogue");
  s.algo = result.algo;
  return g;
}

LinearReluGemm::LinearReluGemm(LinearReluGemm &&) noexcept = default;
LinearReluGemm &LinearReluGemm::operator=(LinearReluGemm &&) noexcept = default;
LinearReluGemm::~LinearReluGemm() = default;

Status LinearReluGemm::run(const rt::DeviceBuffer &h, const rt::DeviceBuffer &w,
                           const rt::DeviceBuffer &bias,
                           rt::DeviceBuffer &y) const {
  const State &s = *state_;
  void *b = pointer(bias);
  GNNC_RETURN_IF_ERROR(
      ltCall(cublasLtMatmulDescSetAttribute(
                 s.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &b, sizeof(b)),
             "cublasLtMatmulDescSetAttribute(BIAS_POINTER)"));
  const float alpha = 1.0f, beta = 0.0f;
  return ltCall(cublasLtMatmul(s.handle, s.desc, &alpha, pointer(w), s.w,
                               pointer(h), s.h, &beta, pointer(y), s.y,
                               pointer(y), s.y, &s.algo, s.workspace,
                               s.workspaceBytes, /*stream=*/nullptr),
                "cublasLtMatmul");
}
