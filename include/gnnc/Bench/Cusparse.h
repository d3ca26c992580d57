//===- Cusparse.h - cuSPARSE and CUDA runtime baselines ---------*- C++ -*-===//
//
// The vendor baselines gnn-bench times next to gnnc's kernels: cuSPARSE SpMM
// on CSR with every CSR algorithm, cuSPARSE SDDMM, and a device-to-device
// copy for the bandwidth yardstick. The cuSPARSE and CUDA runtime headers
// stay in the .cpp; everything here is plain data.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_CUSPARSE_H
#define GNNC_BENCH_CUSPARSE_H

#include "gnnc/Bench/Bench.h"
#include "gnnc/Bench/Problems.h"
#include "gnnc/runtime/Float16.h"
#include "gnnc/runtime/Status.h"
#include "gnnc/runtime/Timing.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gnnc::bench {

/// One library call configuration (an algorithm, a type combination).
struct LibraryResult {
  /// "default", "csr_alg1", "csr_alg2", "csr_alg3" (SpMM), "default" (SDDMM).
  std::string algorithm;
  /// "ok" (timed), "unsupported: <cuSPARSE status> (<call>)" or
  /// "error: <message>".
  std::string status;
  /// Element types used, e.g. "A,B,C f16; compute f32".
  std::string types;
  /// Whether the result was compared with the CPU reference, and how it
  /// went (reported, never fatal).
  bool checked = false;
  bool checkOk = false;
  std::string checkReport;
  std::optional<TimingStats> timing;
  /// The external buffer cuSPARSE asked for.
  size_t bufferBytes = 0;
  /// Notes, e.g. a preprocess call that was refused.
  std::string note;
};

/// A cuSPARSE handle on the bench's device (the CUDA runtime shares the
/// driver's primary context). Move-only.
/// Times a device-to-device copy of `bytes` bytes (cudaMemcpyAsync, the
/// L2 flushed before each run as for the kernels); `gbs`, when given,
/// receives the median bandwidth counting the bytes read and written (2 *
/// bytes). Needs no library handle.
Expected<TimingStats> timeDeviceCopy(Bench &bench, size_t bytes,
                                     double *gbs = nullptr);

class CudaLibraries {
public:
  /// Initializes the CUDA runtime on the bench's device and creates the
  /// cuSPARSE handle.
  static Expected<CudaLibraries> create(Bench &bench);

  CudaLibraries(CudaLibraries &&other) noexcept;
  CudaLibraries &operator=(CudaLibraries &&other) noexcept;
  CudaLibraries(const CudaLibraries &) = delete;
  CudaLibraries &operator=(const CudaLibraries &) = delete;
  ~CudaLibraries();

  /// e.g. "12.6.3".
  std::string cusparseVersion() const;
  /// The CUDA runtime version, e.g. 13000.
  int runtimeVersion() const { return runtimeVersion_; }

  /// cuSPARSE SpMM (CSR, 32-bit indices, row-major X and Y, compute f32)
  /// with every CSR algorithm on `problem`'s inputs (all-ones edge values
  /// when the problem has none). Each algorithm that runs is checked against
  /// the problem's reference (report only) and timed; the external buffer
  /// and the preprocessing stay outside the timed region.
  std::vector<LibraryResult> spmm(Bench &bench, SpmmProblem &problem);

  /// cuSPARSE SDDMM on the graph's pattern: C[e] = dot(A[r, :], B[c, :]) for
  /// every edge (r, c), with random A (numRows x width) and B (numCols x
  /// width) of `type`. f16 tries f16 output first, then f32 output. A sample
  /// of up to 2^20 edges is checked against a double-precision dot product.
  std::vector<LibraryResult> sddmm(Bench &bench, const DeviceGraphs &graphs,
                                   ElementType type, int64_t width,
                                   uint64_t seed);

private:
  CudaLibraries() = default;
  void *handle_ = nullptr;
  int runtimeVersion_ = 0;
  int cusparseVersion_ = 0;
};

} // namespace gnnc::bench

#endif // GNNC_BENCH_CUSPARSE_H
