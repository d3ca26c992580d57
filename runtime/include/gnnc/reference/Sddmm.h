//===- Sddmm.h - CPU reference for SDDMM ------------------------*- C++ -*-===//
#ifndef GNNC_REFERENCE_SDDMM_H
#define GNNC_REFERENCE_SDDMM_H

#include "gnnc/Plan/Types.h"
#include "gnnc/graph/Csr.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace gnnc::ref {

/// Double-precision SDDMM over the non-zeros of `g`. For non-zero e = (r, c):
/// Dot: out[e] = sum_f a[r,f] * b[c,f] (out has nnz elements);
/// Add: out[e,f] = a[r,f] + b[c,f] (out has nnz * width elements).
/// A leaky ReLU with `slope` follows when given. `magnitude` (optional)
/// receives the sum of the magnitudes of each output's terms, the scale of
/// its rounding error. Runs on `numThreads` threads (0: graph::hostThreads())
/// when the work is large enough; the result does not depend on the count.
void sddmm(const graph::CsrGraph &g, const float *a, const float *b,
           int64_t width, SddmmForm form, std::optional<float> slope,
           std::vector<double> &out, std::vector<double> *magnitude = nullptr,
           int numThreads = 0);

} // namespace gnnc::ref

#endif // GNNC_REFERENCE_SDDMM_H
