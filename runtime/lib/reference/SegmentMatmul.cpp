//===- SegmentMatmul.cpp - CPU reference for segmented matmul -------------===//
#include "gnnc/reference/SegmentMatmul.h"

#include <cmath>

void gnnc::ref::segmentMatmul(const float *x, const float *w,
                              const int64_t *seg, int64_t numTypes, int64_t k,
                              int64_t m, std::vector<double> &y,
                              std::vector<double> *magnitude) {
  const int64_t rows = seg[numTypes];
  y.assign(static_cast<size_t>(rows * m), 0.0);
  if (magnitude)
    magnitude->assign(y.size(), 0.0);
  for (int64_t t = 0; t < numTypes; ++t) {
    const float *wt = w + t * k * m;
    for (int64_t r = seg[t]; r < seg[t + 1]; ++r)
      for (int64_t j = 0; j < m; ++j) {
        double acc = 0, mag = 0;
        for (int64_t i = 0; i < k; ++i) {
          const double term = double(x[r * k + i]) * double(wt[i * m + j]);
          acc += term;
          mag += std::fabs(term);
        }
        y[r * m + j] = acc;
        if (magnitude)
          (*magnitude)[r * m + j] = mag;
      }
  }
}

void gnnc::ref::segmentMatmulInputGrad(const float *dy, const float *w,
                                       const int64_t *seg, int64_t numTypes,
                                       int64_t k, int64_t m,
                                       std::vector<double> &dx,
                                       std::vector<double> *magnitude) {
  const int64_t rows = seg[numTypes];
  dx.assign(static_cast<size_t>(rows * k), 0.0);
  if (magnitude)
    magnitude->assign(dx.size(), 0.0);
  for (int64_t t = 0; t < numTypes; ++t) {
    const float *wt = w + t * k * m;
    for (int64_t r = seg[t]; r < seg[t + 1]; ++r)
      for (int64_t i = 0; i < k; ++i) {
        double acc = 0, mag = 0;
        for (int64_t j = 0; j < m; ++j) {
          const double term = double(dy[r * m + j]) * double(wt[i * m + j]);
          acc += term;
          mag += std::fabs(term);
        }
        dx[r * k + i] = acc;
        if (magnitude)
          (*magnitude)[r * k + i] = mag;
      }
  }
}

void gnnc::ref::segmentMatmulWeightGrad(const float *x, const float *dy,
                                        const int64_t *seg, int64_t numTypes,
                                        int64_t k, int64_t m,
                                        std::vector<double> &dw,
                                        std::vector<double> *magnitude) {
  dw.assign(static_cast<size_t>(numTypes * k * m), 0.0);
  if (magnitude)
    magnitude->assign(dw.size(), 0.0);
  for (int64_t t = 0; t < numTypes; ++t)
    for (int64_t r = seg[t]; r < seg[t + 1]; ++r)
      for (int64_t i = 0; i < k; ++i) {
        const double xv = x[r * k + i];
        double *out = dw.data() + (t * k + i) * m;
        double *mag = magnitude ? magnitude->data() + (t * k + i) * m : nullptr;
        for (int64_t j = 0; j < m; ++j) {
          const double term = xv * double(dy[r * m + j]);
          out[j] += term;
          if (mag)
            mag[j] += std::fabs(term);
        }
      }
}
