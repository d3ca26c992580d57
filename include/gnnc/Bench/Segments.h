//===- Segments.h - gnn-bench's segmented-matmul cases ----------*- C++ -*-===//
//
// One case is a segment set (rows grouped by type: FASTEN's published
// heterogeneous-graph workloads, or a generated set), an element type
// (tf32: f32 data on tensor cores; f16: f16 data, f32 sums) and K = M. For
// the forward pass (Y_t = X_t W_t) and the backward pass (dX_t = dY_t
// W_tᵀ and dW_t = X_tᵀ dY_t, timed together) it times
//   cublas_loop     one cublasGemmEx per type with rows
//   cublas_grouped  one cublasGemmGroupedBatchedEx call (a group per type)
//   gnnc_tuned      gnnc's tile_routed kernel with the cost model's choice
//                   (tuning::chooseSegmentSchedule)
//   gnnc_best       the fastest of a measured sweep of the model's ranked,
//                   pruned candidates (the choice among them)
// Every implementation runs once on NaN-poisoned outputs first and is
// checked against a double-precision reference on sampled rows (and, for
// dW, sampled entries of sampled types and every type without rows); one
// that fails is recorded with ok = false and not timed. Each record holds
// the compulsory bytes (inputs, weights and results once) and flops, so a
// summary can take fractions of the copy bandwidth and of the tensor-core
// peak.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_SEGMENTS_H
#define GNNC_BENCH_SEGMENTS_H

#include "gnnc/Bench/Bench.h"
#include "gnnc/Plan/Schedule.h"
#include "gnnc/Plan/Types.h"
#include "gnnc/runtime/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gnnc::bench {

/// The compulsory work of one pass: bytes (forward: X, W, Y; backward: dY,
/// X and W read, dX and dW written, each once) and flops (2 K M per row and
/// product: one product forward, two backward).
struct SegmentWork {
  double bytes = 0;
  double flops = 0;
};
SegmentWork segmentWork(int64_t rows, int64_t types, int64_t k, int64_t m,
                        ElementType type, bool backward);

/// A record's dtype: "tf32" (f32 on tensor cores) or "f16".
struct SegmentDtype {
  std::string name;
  ElementType type = ElementType::F32;
  /// The math gnnc's candidates may use (tensor cores for tf32; either
  /// for f16).
  MathMode math = MathMode::Auto;
};
/// "tf32" or "f16"; anything else is an error naming both.
Expected<SegmentDtype> parseSegmentDtype(const std::string &name);

/// How the segment cases run.
struct SegmentCaseOptions {
  std::vector<int64_t> dims{32, 64, 128, 256};
  std::vector<std::string> dtypes{"tf32", "f16"};
  /// gnnc schedules timed per pass (the model's first ones, after
  /// pruning); gnnc_best is the fastest of them.
  size_t sweep = 8;
  /// Rows (and dW entries per type) the checks sample.
  int64_t checkRows = 256;
  uint64_t seed = 1;
};

/// A cuBLAS handle on the bench's device. Move-only.
class Cublas {
public:
  static Expected<Cublas> create(Bench &bench);
  Cublas(Cublas &&other) noexcept;
  Cublas &operator=(Cublas &&other) noexcept;
  Cublas(const Cublas &) = delete;
  Cublas &operator=(const Cublas &) = delete;
  ~Cublas();
  /// e.g. "13.0.0".
  std::string version() const;
  void *handle() const { return handle_; }

private:
  Cublas() = default;
  void *handle_ = nullptr;
  int version_ = 0;
};

/// Runs every case of the set `name` (offsets `seg`): appends its records
/// (the field names of the shared record format) to `records`, each gnnc
/// schedule timed in the sweep to `sweeps`, and why something did not run
/// to `notes`; every failed check or error counts in `failures`.
/// `cublas` may be null (no cuBLAS records).
void runSegmentSet(Bench &bench, Cublas *cublas, const std::string &name,
                   const std::vector<int64_t> &seg,
                   const SegmentCaseOptions &options, nlohmann::json &records,
                   nlohmann::json &sweeps, nlohmann::json &notes,
                   int &failures);

} // namespace gnnc::bench

#endif // GNNC_BENCH_SEGMENTS_H
