//===- CublasLt.h - cuBLASLt's GEMM with a bias and ReLU --------*- C++ -*-===//
//
// The dense half of an unfused GCN or GIN layer as a library runs it: Y =
// ReLU(H W + b) in one cublasLtMatmul with the RELU_BIAS epilogue, on
// row-major H (rows x K), W (K x M), b (M) and Y (rows x M) of one element
// type. f32 multiplies on TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32);
// f16 and bf16 accumulate in f32. Work goes to the default stream, which
// gnnc's launches and the bench's timer use.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_CUBLASLT_H
#define GNNC_BENCH_CUBLASLT_H

#include "gnnc/Bench/Bench.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Float16.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>

namespace gnnc::bench {

/// A cuBLASLt handle and the workspace its matmuls may use.
class CublasLt {
public:
  /// The workspace offered to the heuristic (cuBLAS's own default on
  /// Hopper).
  static constexpr size_t kWorkspaceBytes = size_t(32) << 20;

  /// Creates the handle on the bench's device.
  static Expected<CublasLt> create(Bench &bench);
  CublasLt(CublasLt &&) noexcept;
  CublasLt &operator=(CublasLt &&) noexcept;
  CublasLt(const CublasLt &) = delete;
  CublasLt &operator=(const CublasLt &) = delete;
  ~CublasLt();

  void *handle() const { return handle_; }
  const rt::DeviceBuffer &workspace() const { return workspace_; }
  /// "13.0.2" (cublasLtGetVersion).
  std::string version() const;

private:
  CublasLt() = default;
  void *handle_ = nullptr;
  rt::DeviceBuffer workspace_;
};

/// One planned Y = ReLU(H W + b): the descriptors and the algorithm the
/// heuristic ranked first for this shape and type.
class LinearReluGemm {
public:
  /// Plans the GEMM for `rows` x `k` H and `k` x `m` W of `type`; fails when
  /// cuBLASLt offers no algorithm.
  static Expected<LinearReluGemm> plan(const CublasLt &lt, ElementType type,
                                       int64_t rows, int64_t k, int64_t m);
  LinearReluGemm(LinearReluGemm &&) noexcept;
  LinearReluGemm &operator=(LinearReluGemm &&) noexcept;
  LinearReluGemm(const LinearReluGemm &) = delete;
  LinearReluGemm &operator=(const LinearReluGemm &) = delete;
  ~LinearReluGemm();

  /// Queues the GEMM on the default stream (no wait).
  Status run(const rt::DeviceBuffer &h, const rt::DeviceBuffer &w,
             const rt::DeviceBuffer &bias, rt::DeviceBuffer &y) const;
  /// "tf32 (32F_FAST_TF32)" or "f16 (32F)": inputs and compute type.
  const std::string &description() const { return description_; }

private:
  LinearReluGemm() = default;
  struct State;
  std::unique_ptr<State> state_;
  std::string description_;
};

} // namespace gnnc::bench

#endif // GNNC_BENCH_CUBLASLT_H
