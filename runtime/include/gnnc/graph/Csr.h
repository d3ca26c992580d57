//===- Csr.h - Compressed sparse row graphs ---------------------*- C++ -*-===//
//
// The host representation of a graph's adjacency matrix: row r holds the
// edges r -> colIdx[rowPtr[r] .. rowPtr[r+1]). For message passing, row =
// destination node and columns = the source nodes it aggregates from.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_GRAPH_CSR_H
#define GNNC_GRAPH_CSR_H

#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::graph {

/// A sparse matrix in CSR form with 64-bit offsets and indices.
struct CsrGraph {
  int64_t numRows = 0;
  int64_t numCols = 0;
  /// numRows + 1 monotone offsets into colIdx, starting at 0.
  std::vector<int64_t> rowPtr;
  /// Column index of each stored entry, in [0, numCols).
  std::vector<int64_t> colIdx;
  /// Value of each stored entry; empty means every value is 1.
  std::vector<float> values;
  /// Where the graph came from (file name, generator parameters).
  std::string name;

  /// Number of stored entries.
  int64_t nnz() const { return static_cast<int64_t>(colIdx.size()); }
  /// Whether values are stored (otherwise all ones).
  bool hasValues() const { return !values.empty(); }
  /// Number of entries in row `row`.
  int64_t degree(int64_t row) const { return rowPtr[row + 1] - rowPtr[row]; }

  /// Checks the structural invariants and reports the first violation with
  /// its position: rowPtr has numRows + 1 entries, starts at 0, is monotone
  /// and ends at colIdx.size(); every column index is in [0, numCols); values
  /// is empty or has nnz entries.
  Status validate() const;

  /// Whether every row's column indices are strictly increasing.
  bool isSortedAndUnique() const;

  /// colIdx as 32-bit integers; fails if an index does not fit.
  Expected<std::vector<int32_t>> colIdx32() const;
  /// rowPtr as 32-bit integers; fails if nnz does not fit ("32-bit overflow:
  /// nnz 3000000000 does not fit i32 row offsets").
  Expected<std::vector<int32_t>> rowPtr32() const;
  /// Values as floats with ones filled in when none are stored.
  std::vector<float> valuesOrOnes() const;
};

/// Returns the transpose (numCols x numRows); rows of the result are sorted.
CsrGraph transpose(const CsrGraph &g);

/// The transpose of a graph and, for each of its edges, the edge of the
/// original it came from.
struct TransposedGraph {
  /// numCols x numRows; each row lists its columns in increasing order
  /// (the original's rows, in the order of the original's edges).
  CsrGraph graph;
  /// edgeOf[i] is the position in the original's colIdx of the transpose's
  /// i-th edge: a permutation of [0, nnz).
  std::vector<int64_t> edgeOf;
};

/// transpose, keeping the map from the transpose's edges to the original's;
/// O(numRows + numCols + nnz) time.
TransposedGraph transposeWithEdgeMap(const CsrGraph &g);

/// Moves per-edge data of a graph (`width` values per edge, row-major) into
/// the edge order of its transpose: out[i * width + h] = data[edgeOf[i] *
/// width + h].
std::vector<float> permuteEdgeData(const std::vector<float> &data,
                                   const std::vector<int64_t> &edgeOf,
                                   int64_t width = 1);

/// How fromCoo treats repeated (row, col) pairs.
enum class Duplicates {
  Sum,      ///< Merge into one entry whose value is the sum.
  KeepFirst ///< Merge into one entry keeping the first value seen.
};

/// Builds a CSR matrix from coordinates. `vals` may be empty (all ones; the
/// result then has no values unless duplicates are summed). Each row of the
/// result is sorted by column and holds no duplicates. Fails with the
/// position of the first out-of-range coordinate or on a size mismatch.
Expected<CsrGraph> fromCoo(int64_t numRows, int64_t numCols,
                           const std::vector<int64_t> &rows,
                           const std::vector<int64_t> &cols,
                           const std::vector<float> &vals,
                           Duplicates duplicates = Duplicates::Sum);

/// Degree statistics over rows.
struct Stats {
  int64_t numRows = 0;
  int64_t numCols = 0;
  int64_t nnz = 0;
  int64_t minDegree = 0;
  int64_t maxDegree = 0;
  double meanDegree = 0;
  double stddevDegree = 0;
  int64_t emptyRows = 0;
  int64_t selfLoops = 0;
};

/// Computes degree statistics of `g`.
Stats computeStats(const CsrGraph &g);

/// One-line summary of stats, e.g. "2708x2708 nnz=10556 deg min/mean/max =
/// 1/3.90/168 empty=0".
std::string formatStats(const Stats &stats);

/// Applies a random relabeling of node ids (the same permutation to rows and
/// columns, so a square graph stays the same graph up to isomorphism). For a
/// non-square matrix rows and columns are permuted independently.
/// Deterministic for a seed. Rows of the result are sorted.
CsrGraph permuteRandomly(const CsrGraph &g, uint64_t seed);

/// Permutes with explicit maps: entry (r, c) moves to (rowPerm[r],
/// colPerm[c]). The maps must be permutations of the right sizes.
CsrGraph permute(const CsrGraph &g, const std::vector<int64_t> &rowPerm,
                 const std::vector<int64_t> &colPerm);

} // namespace gnnc::graph

#endif // GNNC_GRAPH_CSR_H
