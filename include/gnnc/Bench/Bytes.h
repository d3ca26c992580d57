//===- Bytes.h - Traffic bounds of a sparse problem -------------*- C++ -*-===//
//
// The two traffic bounds gnn-bench reports bandwidth against: every input
// and output touched once (compulsory), and every edge reading its whole
// feature row (gather).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_BYTES_H
#define GNNC_BENCH_BYTES_H

#include <cstddef>
#include <cstdint>

namespace gnnc::bench {

/// The shape of one SpMM (or SDDMM) problem, enough to count its bytes.
struct ProblemShape {
  int64_t numRows = 0;
  int64_t numCols = 0;
  int64_t nnz = 0;
  int64_t width = 0;
  size_t elementBytes = 4;
  size_t offsetBytes = 8;
  size_t indexBytes = 4;
  /// Whether the kernel reads one value per edge (SpMMve, cuSPARSE).
  bool edgeValues = false;
};

/// The two traffic bounds of a problem, in bytes.
struct ByteCounts {
  /// Every input and output touched once: row_ptr + col_idx (+ values) +
  /// X + Y. No kernel can move less.
  double compulsory = 0;
  /// As if every edge read its whole feature row of X from memory (no
  /// reuse through the caches): row_ptr + col_idx (+ values) + nnz rows of
  /// X + Y once.
  double gather = 0;
};

/// Bytes of SpMM: Y (numRows x width) = A (numRows x numCols, CSR) * X
/// (numCols x width).
ByteCounts spmmBytes(const ProblemShape &shape);

/// Bytes of SDDMM on CSR: for every edge (r, c), C[e] = dot(A[r, :], B[c, :])
/// with A numRows x width and B numCols x width. The edge values are
/// written (counted once); compulsory reads A and B once, gather reads A once
/// and one row of B per edge.
ByteCounts sddmmBytes(const ProblemShape &shape);

/// `bytes` moved in `ms` milliseconds, in GB/s (1e9 bytes per second).
double gigabytesPerSecond(double bytes, double ms);

} // namespace gnnc::bench

#endif // GNNC_BENCH_BYTES_H
