//===- EdgeSoftmax.h - CPU reference for edge softmax -----------*- C++ -*-===//
#ifndef GNNC_REFERENCE_EDGESOFTMAX_H
#define GNNC_REFERENCE_EDGESOFTMAX_H

#include "gnnc/graph/Csr.h"

#include <cstdint>
#include <vector>

namespace gnnc::ref {

/// Double-precision edge softmax over the non-zeros of `g`: for each row r
/// and head h, out[e, h] = exp(logits[e, h] - m) / sum over e' of row r of
/// exp(logits[e', h] - m), with m the maximum of logits[e', h] over row r.
/// `logits` and `out` hold nnz x heads values, row-major; edges of empty
/// rows do not exist, so every output is written.
void edgeSoftmax(const graph::CsrGraph &g, const float *logits, int64_t heads,
                 std::vector<double> &out);

} // namespace gnnc::ref

#endif // GNNC_REFERENCE_EDGESOFTMAX_H
