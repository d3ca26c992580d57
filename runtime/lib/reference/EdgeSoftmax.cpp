//===- EdgeSoftmax.cpp - CPU reference for edge softmax -------------------===//
#include "gnnc/reference/EdgeSoftmax.h"

#include <cmath>
#include <limits>

using namespace gnnc;

void gnnc::ref::edgeSoftmax(const graph::CsrGraph &g, const float *logits,
                            int64_t heads, std::vector<double> &out) {
  out.assign(static_cast<size_t>(g.nnz() * heads), 0.0);
  for (int64_t r = 0; r < g.numRows; ++r) {
    const int64_t begin = g.rowPtr[r], end = g.rowPtr[r + 1];
    for (int64_t h = 0; h < heads; ++h) {
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t e = begin; e < end; ++e)
        max = std::fmax(max, static_cast<double>(logits[e * heads + h]));
      double sum = 0;
      for (int64_t e = begin; e < end; ++e)
        sum += std::exp(static_cast<double>(logits[e * heads + h]) - max);
      for (int64_t e = begin; e < end; ++e)
        out[e * heads + h] =
            std::exp(static_cast<double>(logits[e * heads + h]) - max) / sum;
    }
  }
}
