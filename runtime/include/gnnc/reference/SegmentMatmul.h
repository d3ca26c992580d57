//===- SegmentMatmul.h - CPU reference for segmented matmul -----*- C++ -*-===//
#ifndef GNNC_REFERENCE_SEGMENT_MATMUL_H
#define GNNC_REFERENCE_SEGMENT_MATMUL_H

#include <cstdint>
#include <vector>

namespace gnnc::ref {

/// Double-precision gnn.segment_matmul: y[r, j] = sum over i < k of
/// x[r, i] * w[t, i, j] for the rows r of each type t, seg[t] <= r <
/// seg[t + 1]. `x` holds seg[numTypes] rows of `k` values, `w` numTypes
/// matrices of k x m (row-major), `seg` numTypes + 1 offsets that
/// ops::checkSegmentOffsets accepts. `y` is resized to seg[numTypes] x m;
/// `magnitude` (if non-null) receives the matching sums of |x| |w|, the
/// scale of each output's rounding error.
void segmentMatmul(const float *x, const float *w, const int64_t *seg,
                   int64_t numTypes, int64_t k, int64_t m,
                   std::vector<double> &y,
                   std::vector<double> *magnitude = nullptr);

} // namespace gnnc::ref

#endif // GNNC_REFERENCE_SEGMENT_MATMUL_H
