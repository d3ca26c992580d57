//===- Rmat.h - Synthetic graph generators ----------------------*- C++ -*-===//
//
// Deterministic generators for benchmark and test graphs: Graph500-style
// R-MAT, uniform random graphs, and an adversarial "ragged" graph. The output
// depends only on the arguments (own xoshiro256** streams; no std::
// distributions), not on the machine, thread count or standard library.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_GRAPH_RMAT_H
#define GNNC_GRAPH_RMAT_H

#include "gnnc/graph/Csr.h"

#include <cstdint>

namespace gnnc::graph {

/// R-MAT graph with 2^scale nodes from edgeFactor << scale sampled edges
/// (Graph500: a = 0.57, b = c = 0.19). Each edge descends `scale` levels of
/// the quadrant tree choosing top-left/top-right/bottom-left/bottom-right
/// with probability a/b/c/1-a-b-c (row bit from the bottom half, column bit
/// from the right half). Duplicates are removed (so nnz is somewhat below
/// the sampled count); with symmetrize every edge gets its reverse; with
/// removeSelfLoops diagonal entries are dropped. No values (all ones).
/// scale must be in [0, 31]. Runs on graph::hostThreads() threads; the
/// result does not depend on their number.
CsrGraph generateRmat(int scale, int edgeFactor, uint64_t seed, double a = 0.57,
                      double b = 0.19, double c = 0.19, bool symmetrize = false,
                      bool removeSelfLoops = true);

/// Uniform random graph: each row gets avgDegree distinct columns chosen
/// uniformly (a fractional avgDegree is met on average by random rounding;
/// the degree is capped at numCols). No values.
CsrGraph generateUniformRandom(int64_t numRows, int64_t numCols,
                               double avgDegree, uint64_t seed);

/// An adversarial square graph for kernel tests: row 0 and the last row are
/// empty, about a seventh of the rows are empty and a seventh have degree 1,
/// a few rows have degree in the hundreds, row numRows / 2 has degree
/// heavyDegree (capped at numCols = max(numRows, heavyDegree)), and the rest
/// have degree 2..64. With withValues, values are uniform in [-1, 1).
CsrGraph makeRaggedTestGraph(uint64_t seed, int64_t numRows = 20000,
                             int64_t heavyDegree = 10000,
                             bool withValues = false);

} // namespace gnnc::graph

#endif // GNNC_GRAPH_RMAT_H
