//===- Sddmm.cpp - CPU reference for SDDMM --------------------------------===//
#include "gnnc/reference/Sddmm.h"
#include "gnnc/graph/Parallel.h"

#include <algorithm>
#include <cmath>

using namespace gnnc;

void gnnc::ref::sddmm(const graph::CsrGraph &g, const float *a, const float *b,
                      int64_t width, SddmmForm form, std::optional<float> slope,
                      std::vector<double> &out, std::vector<double> *magnitude,
                      int numThreads) {
  const int64_t perEdge = form == SddmmForm::Dot ? 1 : width;
  // Every element is written below: a vector of the right size is not
  // cleared first.
  out.resize(static_cast<size_t>(g.nnz() * perEdge));
  if (magnitude)
    magnitude->resize(out.size());
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
  // Pieces of about equal work (rows + non-zeros), several per thread; each
  // output belongs to one row, so the result ignores the thread count.
  if (g.nnz() * width < (int64_t(1) << 20))
    numThreads = 1;
  graph::parallelForRowsByWork(g.rowPtr.data(), g.numRows, numThreads, rows);
}
