//===- Spmm.cpp - CPU reference for sparse aggregation --------------------===//

#include "gnnc/reference/Spmm.h"
#include "gnnc/graph/Random.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <thread>

using namespace gnnc;
using namespace gnnc::ref;

namespace {

/// spmmSum with optional factors: each term of column c is multiplied by
/// colScale[c] and each output of row r by rowScale[r] (null: no factor).
void spmmScaled(const graph::CsrGraph &g, const float *edgeValues,
                const float *x, int64_t featWidth, std::vector<double> &y,
                std::vector<double> *absRef, int numThreads,
                const double *colScale, const double *rowScale,
                bool max = false) {
  const float *vals =
      edgeValues ? edgeValues : (g.hasValues() ? g.values.data() : nullptr);
  size_t outSize = static_cast<size_t>(g.numRows * featWidth);
  y.assign(outSize, 0.0);
  if (absRef)
    absRef->assign(outSize, 0.0);
  double work = static_cast<double>(g.nnz() + g.numRows) *
                static_cast<double>(std::max<int64_t>(featWidth, 1));
  if (numThreads <= 0) {
    unsigned hw = std::thread::hardware_concurrency();
    numThreads = work < (1 << 20) ? 1 : static_cast<int>(hw ? hw : 1);
  }
  numThreads = static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(numThreads, g.numRows)));

  auto runRows = [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      double *out = y.data() + r * featWidth;
      double *absOut = absRef ? absRef->data() + r * featWidth : nullptr;
      if (max && g.rowPtr[r + 1] > g.rowPtr[r])
        std::fill(out, out + featWidth,
                  -std::numeric_limits<double>::infinity());
      for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e) {
        double v = vals ? static_cast<double>(vals[e]) : 1.0;
        if (colScale)
          v *= colScale[g.colIdx[e]];
        const float *xr = x + g.colIdx[e] * featWidth;
        for (int64_t j = 0; j < featWidth; ++j) {
          double term = v * static_cast<double>(xr[j]);
          if (max) {
            out[j] = std::fmax(out[j], term);
            continue;
          }
          out[j] += term;
          if (absOut)
            absOut[j] += std::fabs(term);
        }
      }
      if (max && absOut)
        for (int64_t j = 0; j < featWidth; ++j)
          absOut[j] = std::fabs(out[j]);
      if (rowScale) {
        for (int64_t j = 0; j < featWidth; ++j) {
          out[j] *= rowScale[r];
          if (absOut)
            absOut[j] *= std::fabs(rowScale[r]);
        }
      }
    }
  };
  if (numThreads == 1) {
    runRows(0, g.numRows);
    return;
  }
  // Split rows so that each thread gets about the same nnz + rows.
  std::vector<int64_t> bounds(numThreads + 1, g.numRows);
  bounds[0] = 0;
  int64_t total = g.nnz() + g.numRows;
  for (int t = 1; t < numThreads; ++t) {
    int64_t target = total * t / numThreads;
    int64_t lo = 0, hi = g.numRows;
    while (lo < hi) {
      int64_t mid = (lo + hi) / 2;
      if (g.rowPtr[mid] + mid < target)
        lo = mid + 1;
      else
        hi = mid;
    }
    bounds[t] = std::max(lo, bounds[t - 1]);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < numThreads; ++t)
    threads.emplace_back(runRows, bounds[t], bounds[t + 1]);
  for (std::thread &th : threads)
    th.join();
}

} // namespace

void gnnc::ref::spmmSum(const graph::CsrGraph &g, const float *edgeValues,
                        const float *x, int64_t featWidth,
                        std::vector<double> &y, std::vector<double> *absRef,
                        int numThreads) {
  spmmScaled(g, edgeValues, x, featWidth, y, absRef, numThreads,
             /*colScale=*/nullptr, /*rowScale=*/nullptr);
}

std::vector<double> gnnc::ref::columnNormFactors(const graph::CsrGraph &g) {
  std::vector<int64_t> degree(static_cast<size_t>(g.numCols), 0);
  for (int64_t e = 0; e < g.nnz(); ++e)
    ++degree[g.colIdx[e]];
  std::vector<double> factors(degree.size(), 0.0);
  for (size_t c = 0; c < degree.size(); ++c)
    if (degree[c] > 0)
      factors[c] = 1.0 / std::sqrt(static_cast<double>(degree[c]));
  return factors;
}

void gnnc::ref::spmm(const graph::CsrGraph &g, const float *edgeValues,
                     const float *x, int64_t featWidth, SpmmReduce reduce,
                     DegreeScale scale, std::vector<double> &y,
                     std::vector<double> *absRef, int numThreads) {
  bool left = scale == DegreeScale::Left || scale == DegreeScale::Both;
  bool right = scale == DegreeScale::Right || scale == DegreeScale::Both;
  bool mean = reduce == SpmmReduce::Mean;
  bool max = reduce == SpmmReduce::Max;
  std::vector<double> colScale, rowScale;
  if (right)
    colScale = columnNormFactors(g);
  if (left || mean) {
    rowScale.assign(static_cast<size_t>(g.numRows), 0.0);
    for (int64_t r = 0; r < g.numRows; ++r) {
      double degree = static_cast<double>(g.degree(r));
      if (degree == 0)
        continue;
      double factor = 1.0;
      if (mean)
        factor /= degree;
      if (left)
        factor /= std::sqrt(degree);
      rowScale[r] = factor;
    }
  }
  spmmScaled(g, edgeValues, x, featWidth, y, absRef, numThreads,
             right ? colScale.data() : nullptr,
             left || mean ? rowScale.data() : nullptr, max);
}

namespace {

/// Shared comparison: bound(i) gives the allowed |got - ref| for element i.
template <typename BoundFn>
Status compareImpl(const std::vector<float> &got,
                   const std::vector<double> &ref, int64_t featWidth,
                   BoundFn bound, const char *boundDesc, std::string *report) {
  auto fail = [&](const std::string &msg) {
    if (report)
      *report = msg;
    return Status::error(msg);
  };
  if (got.size() != ref.size())
    return fail("size mismatch: got " + std::to_string(got.size()) +
                " elements, expected " + std::to_string(ref.size()));
  if (featWidth <= 0)
    featWidth = 1;
  int64_t mismatches = 0;
  double maxRel = 0, diffSq = 0, refSq = 0;
  std::string firstFew;
  constexpr int kShown = 8;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], r = ref[i];
    double diff = std::fabs(g - r);
    bool ok;
    if (std::isnan(g) || std::isnan(r))
      ok = false;
    else if (std::isinf(g) || std::isinf(r))
      ok = g == r;
    else
      ok = diff <= bound(i);
    if (std::isfinite(g) && std::isfinite(r)) {
      diffSq += diff * diff;
      refSq += r * r;
      if (r != 0)
        maxRel = std::max(maxRel, diff / std::fabs(r));
    } else if (!ok) {
      maxRel = INFINITY;
      diffSq = INFINITY;
    }
    if (!ok) {
      if (mismatches < kShown) {
        char buf[192];
        std::snprintf(buf, sizeof(buf),
                      "\n  (row %lld, col %lld): got %.9g, expected %.9g "
                      "(|diff| %.3g, allowed %.3g)",
                      static_cast<long long>(i / featWidth),
                      static_cast<long long>(i % featWidth), g, r, diff,
                      bound(i));
        firstFew += buf;
      }
      ++mismatches;
    }
  }
  double relNorm =
      refSq > 0 ? std::sqrt(diffSq / refSq) : (diffSq > 0 ? INFINITY : 0.0);
  char summary[256];
  std::snprintf(summary, sizeof(summary),
                "%lld of %zu elements differ (%s); max relative error %.3g, "
                "||got-ref||/||ref|| = %.3g",
                static_cast<long long>(mismatches), got.size(), boundDesc,
                maxRel, relNorm);
  std::string text = summary + firstFew;
  if (mismatches > kShown)
    text += "\n  ...";
  if (report)
    *report = text;
  if (mismatches)
    return Status::error(text);
  return Status::ok();
}

} // namespace

Status gnnc::ref::compareToReference(const std::vector<float> &got,
                                     const std::vector<double> &ref,
                                     int64_t featWidth, double relTol,
                                     double absTol, std::string *report) {
  char desc[96];
  std::snprintf(desc, sizeof(desc), "bound %.3g + %.3g * |ref|", absTol,
                relTol);
  return compareImpl(
      got, ref, featWidth,
      [&](size_t i) { return absTol + relTol * std::fabs(ref[i]); }, desc,
      report);
}

Status gnnc::ref::compareToReferenceScaled(const std::vector<float> &got,
                                           const std::vector<double> &ref,
                                           const std::vector<double> &absRef,
                                           int64_t featWidth, double tol,
                                           std::string *report, double absTol) {
  if (absRef.size() != ref.size()) {
    std::string msg = "size mismatch: absRef has " +
                      std::to_string(absRef.size()) + " elements, ref has " +
                      std::to_string(ref.size());
    if (report)
      *report = msg;
    return Status::error(msg);
  }
  char desc[96];
  std::snprintf(desc, sizeof(desc), "bound %.3g + %.3g * sum|terms|", absTol,
                tol);
  return compareImpl(
      got, ref, featWidth,
      [&](size_t i) { return tol * absRef[i] + absTol + 1e-30; }, desc, report);
}

std::vector<float> gnnc::ref::randomFeatures(int64_t n, uint64_t seed, float lo,
                                             float hi) {
  std::vector<float> out(static_cast<size_t>(std::max<int64_t>(n, 0)));
  graph::Rng rng(seed);
  double width = static_cast<double>(hi) - static_cast<double>(lo);
  for (float &v : out) {
    v = static_cast<float>(lo + rng.nextDouble() * width);
    if (v >= hi && hi > lo) // Guard against rounding up to hi.
      v = std::nextafter(hi, lo);
  }
  return out;
}

std::vector<float> gnnc::ref::roundThrough(const std::vector<float> &values,
                                           ElementType type) {
  std::vector<float> out(values);
  roundThroughInPlace(out, type);
  return out;
}

void gnnc::ref::roundThroughInPlace(std::vector<float> &values,
                                    ElementType type) {
  if (type == ElementType::F32)
    return;
  for (float &v : values)
    v = roundToElementType(v, type);
}

std::vector<uint16_t> gnnc::ref::encode16(const std::vector<float> &values,
                                          ElementType type) {
  std::vector<uint16_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = type == ElementType::BF16 ? floatToBf16(values[i])
                                       : floatToHalf(values[i]);
  return out;
}

std::vector<float> gnnc::ref::decode16(const std::vector<uint16_t> &bits,
                                       ElementType type) {
  std::vector<float> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i)
    out[i] =
        type == ElementType::BF16 ? bf16ToFloat(bits[i]) : halfToFloat(bits[i]);
  return out;
}
