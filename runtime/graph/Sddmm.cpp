//===- Sddmm.cpp - CPU reference for SDDMM --------------------------------===//
#include "gnnc/reference/Sddmm.h"

#include <algorithm>
#include <cmath>
#include <thread>

using namespace gnnc;

void gnnc::ref::sddmm(const graph::CsrGraph &g, const float *a, const float *b,
                      int64_t width, SddmmForm form, std::optional<float> slope,
                      std::vector<double> &out, std::vector<double> *magnitude,
                      int numThreads) {
  const int64_t perEdge = form == SddmmForm::Dot ? 1 : width;
  out.assign(static_cast<size_t>(g.nnz() * perEdge), 0.0);
  if (magnitude)
    magnitude->assign(out.size(), 0.0);
  auto leaky = [&](double v) {
    return slope && v < 0 ? v * static_cast<double>(*slope) : v;
  };
  auto rows = [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      const float *ar = a + r * width;
      for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e) {
        const float *bc = b + g.colIdx[e] * width;
        if (form == SddmmForm::Dot) {
          double sum = 0, mag = 0;
          for (int64_t f = 0; f < width; ++f) {
            double term = double(ar[f]) * double(bc[f]);
            sum += term;
            mag += std::fabs(term);
          }
          out[e] = leaky(sum);
          if (magnitude)
            (*magnitude)[e] = mag;
        } else {
          for (int64_t f = 0; f < width; ++f) {
            double v = double(ar[f]) + double(bc[f]);
            out[e * width + f] = leaky(v);
            if (magnitude)
              (*magnitude)[e * width + f] =
                  std::fabs(double(ar[f])) + std::fabs(double(bc[f]));
          }
        }
      }
    }
  };
  int threads =
      numThreads > 0
          ? numThreads
          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (threads == 1 || g.nnz() * width < (int64_t(1) << 20)) {
    rows(0, g.numRows);
    return;
  }
  // Split rows so that each thread gets about the same number of non-zeros.
  std::vector<std::thread> pool;
  int64_t first = 0;
  for (int t = 0; t < threads && first < g.numRows; ++t) {
    int64_t target = g.nnz() * (t + 1) / threads;
    int64_t last = t == threads - 1
                       ? g.numRows
                       : std::upper_bound(g.rowPtr.begin() + first,
                                          g.rowPtr.end() - 1, target) -
                             g.rowPtr.begin();
    last = std::max(last, first + 1);
    pool.emplace_back(rows, first, std::min(last, g.numRows));
    first = std::min(last, g.numRows);
  }
  for (std::thread &t : pool)
    t.join();
}
