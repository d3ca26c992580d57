//===- Backward.cpp - CPU reference for the backward of gnn ops -----------===//
#include "gnnc/reference/Backward.h"

#include <cmath>

using namespace gnnc;
using namespace gnnc::ref;

void gnnc::ref::edgeSoftmaxGrad(const graph::CsrGraph &g, const float *out,
                                const float *gradOut, int64_t heads,
                                std::vector<double> &dx,
                                std::vector<double> *magnitude) {
  const size_t count = static_cast<size_t>(g.nnz() * heads);
  dx.assign(count, 0.0);
  if (magnitude)
    magnitude->assign(count, 0.0);
  for (int64_t r = 0; r < g.numRows; ++r) {
    const int64_t begin = g.rowPtr[r], end = g.rowPtr[r + 1];
    for (int64_t h = 0; h < heads; ++h) {
      double sum = 0, abs = 0;
      for (int64_t e = begin; e < end; ++e) {
        double term = static_cast<double>(out[e * heads + h]) *
                      static_cast<double>(gradOut[e * heads + h]);
        sum += term;
        abs += std::fabs(term);
      }
      for (int64_t e = begin; e < end; ++e) {
        const int64_t i = e * heads + h;
        double o = out[i], d = gradOut[i];
        dx[i] = o * (d - sum);
        if (magnitude)
          (*magnitude)[i] = std::fabs(o) * (std::fabs(d) + abs);
      }
    }
  }
}

void gnnc::ref::spmmFactors(const graph::CsrGraph &g, gnnc::Reduce reduce,
                            DegreeScale scale, std::vector<double> &rowFactor,
                            std::vector<double> &colFactor,
                            double colNormExponent) {
  rowFactor = rowFactors(g, reduce, scale);
  if (rowFactor.empty())
    rowFactor.assign(static_cast<size_t>(g.numRows), 1.0);
  if (scale == DegreeScale::Right || scale == DegreeScale::Both)
    colFactor = columnNormFactors(g, colNormExponent);
  else
    colFactor.assign(static_cast<size_t>(g.numCols), 1.0);
}

static Status rejectMax(gnnc::Reduce reduce) {
  if (reduce == gnnc::Reduce::Max)
    return Status::error("the backward of gnn.spmm with reduce = max is not "
                         "implemented (it needs the argmax of every output)");
  return Status::ok();
}

Status gnnc::ref::spmmGradFeatures(const graph::CsrGraph &g,
                                   const float *edgeValues, const float *dY,
                                   int64_t width, gnnc::Reduce reduce,
                                   DegreeScale scale, std::vector<double> &dX,
                                   std::vector<double> *absRef) {
  GNNC_RETURN_IF_ERROR(rejectMax(reduce));
  std::vector<double> rowFactor, colFactor;
  spmmFactors(g, reduce, scale, rowFactor, colFactor);
  const size_t count = static_cast<size_t>(g.numCols * width);
  dX.assign(count, 0.0);
  if (absRef)
    absRef->assign(count, 0.0);
  for (int64_t r = 0; r < g.numRows; ++r)
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e) {
      const int64_t c = g.colIdx[e];
      double w = edgeValues      ? static_cast<double>(edgeValues[e])
                 : g.hasValues() ? static_cast<double>(g.values[e])
                                 : 1.0;
      double factor = w * rowFactor[r] * colFactor[c];
      for (int64_t j = 0; j < width; ++j) {
        double term = factor * static_cast<double>(dY[r * width + j]);
        dX[c * width + j] += term;
        if (absRef)
          (*absRef)[c * width + j] += std::fabs(term);
      }
    }
  return Status::ok();
}

Status gnnc::ref::spmmGradValues(const graph::CsrGraph &g, const float *x,
                                 const float *dY, int64_t width,
                                 gnnc::Reduce reduce, DegreeScale scale,
                                 std::vector<double> &dW,
                                 std::vector<double> *magnitude) {
  GNNC_RETURN_IF_ERROR(rejectMax(reduce));
  std::vector<double> rowFactor, colFactor;
  spmmFactors(g, reduce, scale, rowFactor, colFactor);
  dW.assign(static_cast<size_t>(g.nnz()), 0.0);
  if (magnitude)
    magnitude->assign(static_cast<size_t>(g.nnz()), 0.0);
  for (int64_t r = 0; r < g.numRows; ++r)
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e) {
      const int64_t c = g.colIdx[e];
      double factor = rowFactor[r] * colFactor[c];
      double sum = 0, abs = 0;
      for (int64_t j = 0; j < width; ++j) {
        double term = static_cast<double>(dY[r * width + j]) *
                      static_cast<double>(x[c * width + j]);
        sum += term;
        abs += std::fabs(term);
      }
      dW[e] = factor * sum;
      if (magnitude)
        (*magnitude)[e] = std::fabs(factor) * abs;
    }
  return Status::ok();
}

void gnnc::ref::sddmmGrad(const graph::CsrGraph &g, const float *a,
                          const float *b, int64_t width, SddmmForm form,
                          std::optional<float> slope, const float *gradOut,
                          std::vector<double> &dA, std::vector<double> &dB,
                          std::vector<double> *absA,
                          std::vector<double> *absB) {
  const bool dot = form == SddmmForm::Dot;
  dA.assign(static_cast<size_t>(g.numRows * width), 0.0);
  dB.assign(static_cast<size_t>(g.numCols * width), 0.0);
  if (absA)
    absA->assign(dA.size(), 0.0);
  if (absB)
    absB->assign(dB.size(), 0.0);
  for (int64_t r = 0; r < g.numRows; ++r)
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e) {
      const int64_t c = g.colIdx[e];
      // The pre-activation of a dot-form edge, for the leaky ReLU's slope.
      double dotValue = 0;
      if (dot && slope)
        for (int64_t j = 0; j < width; ++j)
          dotValue += static_cast<double>(a[r * width + j]) *
                      static_cast<double>(b[c * width + j]);
      for (int64_t j = 0; j < width; ++j) {
        double grad, pre;
        if (dot) {
          grad = gradOut[e];
          pre = dotValue;
        } else {
          grad = gradOut[e * width + j];
          pre = static_cast<double>(a[r * width + j]) +
                static_cast<double>(b[c * width + j]);
        }
        if (slope && pre < 0)
          grad *= *slope;
        double termA = dot ? grad * b[c * width + j] : grad;
        double termB = dot ? grad * a[r * width + j] : grad;
        dA[r * width + j] += termA;
        dB[c * width + j] += termB;
        if (absA)
          (*absA)[r * width + j] += std::fabs(termA);
        if (absB)
          (*absB)[c * width + j] += std::fabs(termB);
      }
    }
}
