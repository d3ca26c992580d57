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

/// Double-precision input gradient of gnn.segment_matmul (its
/// transpose_weights form): dx[r, i] = sum over j < m of dy[r, j] *
/// w[t, i, j] for the rows r of each type t. `dy` holds seg[numTypes] rows
/// of `m`, `w` numTypes matrices of k x m (the forward's layout); `dx` is
/// resized to seg[numTypes] x k, `magnitude` as in segmentMatmul.
void segmentMatmulInputGrad(const float *dy, const float *w, const int64_t *seg,
                            int64_t numTypes, int64_t k, int64_t m,
                            std::vector<double> &dx,
                            std::vector<double> *magnitude = nullptr);

/// Double-precision weight gradient: dw[t, i, j] = sum over the rows r of
/// type t of x[r, i] * dy[r, j] (0 for a type without rows). `x` holds
/// seg[numTypes] rows of `k`, `dy` rows of `m`; `dw` is resized to
/// numTypes x k x m, `magnitude` as in segmentMatmul.
void segmentMatmulWeightGrad(const float *x, const float *dy,
                             const int64_t *seg, int64_t numTypes, int64_t k,
                             int64_t m, std::vector<double> &dw,
                             std::vector<double> *magnitude = nullptr);

} // namespace gnnc::ref

#endif // GNNC_REFERENCE_SEGMENT_MATMUL_H
