//===- Readout.cpp - CPU reference for per-graph pooling ------------------===//
#include "gnnc/reference/Readout.h"

#include <cmath>
#include <limits>

using namespace gnnc;

void gnnc::ref::readout(const graph::BatchedGraph &batch, const float *x,
                        int64_t width, Reduce reduce, std::vector<double> &y,
                        std::vector<double> *magnitude) {
  const int64_t graphs = batch.numGraphs();
  y.assign(static_cast<size_t>(graphs * width), 0.0);
  if (magnitude)
    magnitude->assign(y.size(), 0.0);
  for (int64_t g = 0; g < graphs; ++g) {
    const int64_t n0 = batch.graphPtr[g], n1 = batch.graphPtr[g + 1];
    if (n0 == n1)
      continue;
    for (int64_t f = 0; f < width; ++f) {
      double acc = reduce == Reduce::Max
                       ? -std::numeric_limits<double>::infinity()
                       : 0.0;
      double mag = 0;
      for (int64_t n = n0; n < n1; ++n) {
        const double v = x[n * width + f];
        acc = reduce == Reduce::Max ? std::max(acc, v) : acc + v;
        mag += std::fabs(v);
      }
      if (reduce == Reduce::Mean) {
        acc /= double(n1 - n0);
        mag /= double(n1 - n0);
      }
      if (reduce == Reduce::Max)
        mag = std::fabs(acc);
      y[g * width + f] = acc;
      if (magnitude)
        (*magnitude)[g * width + f] = mag;
    }
  }
}

void gnnc::ref::readoutGrad(const graph::BatchedGraph &batch, const float *x,
                            const float *y, const float *dy, int64_t width,
                            Reduce reduce, std::vector<double> &dx) {
  dx.assign(static_cast<size_t>(batch.graph.numRows * width), 0.0);
  for (int64_t g = 0; g < batch.numGraphs(); ++g) {
    const int64_t n0 = batch.graphPtr[g], n1 = batch.graphPtr[g + 1];
    for (int64_t f = 0; f < width; ++f) {
      const double d = dy[g * width + f];
      if (reduce == Reduce::Max) {
        for (int64_t n = n0; n < n1; ++n)
          if (x[n * width + f] == y[g * width + f]) {
            dx[n * width + f] = d;
            break;
          }
        continue;
      }
      const double share = reduce == Reduce::Mean ? d / double(n1 - n0) : d;
      for (int64_t n = n0; n < n1; ++n)
        dx[n * width + f] = share;
    }
  }
}
