//===- Spmm.cpp - CPU reference for sparse aggregation --------------------===//

#include "gnnc/reference/Spmm.h"
#include "gnnc/graph/Parallel.h"
#include "gnnc/graph/Random.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

using namespace gnnc;
using namespace gnnc::ref;

namespace {

/// How many non-zeros ahead spmmRows prefetches feature rows, and at most
/// how many 64-byte lines of each.
constexpr int64_t kPrefetchAhead = 8;
constexpr int64_t kMaxPrefetchLines = 16;

/// The rows [lo, hi) of spmmScaled. Every output element of these rows is
/// written (no initialization needed); the arithmetic per element is the
/// same whichever thread runs the rows.
template <bool Max, bool WithAbs>
void spmmRows(const graph::CsrGraph &g, const float *vals, const float *x,
              int64_t featWidth, double *y, double *absRef,
              const double *colScale, const double *rowScale, int64_t lo,
              int64_t hi) {
  const int64_t nnz = g.nnz();
  const int64_t prefetchLines =
      std::min<int64_t>((featWidth * 4 + 63) / 64, kMaxPrefetchLines);
  for (int64_t r = lo; r < hi; ++r) {
    double *__restrict out = y + r * featWidth;
    double *__restrict absOut = WithAbs ? absRef + r * featWidth : nullptr;
    const int64_t begin = g.rowPtr[r], end = g.rowPtr[r + 1];
    std::fill(out, out + featWidth,
              Max && end > begin ? -std::numeric_limits<double>::infinity()
                                 : 0.0);
    if (WithAbs)
      std::fill(absOut, absOut + featWidth, 0.0);
    for (int64_t e = begin; e < end; ++e) {
      // The feature rows are gathered at random: ask for the row a few
      // non-zeros ahead so that its misses overlap with this row's work.
      if (e + kPrefetchAhead < nnz) {
        const char *ahead = reinterpret_cast<const char *>(
            x + g.colIdx[e + kPrefetchAhead] * featWidth);
        for (int64_t line = 0; line < prefetchLines; ++line)
          __builtin_prefetch(ahead + line * 64);
      }
      double v = vals ? static_cast<double>(vals[e]) : 1.0;
      if (colScale)
        v *= colScale[g.colIdx[e]];
      const float *__restrict xr = x + g.colIdx[e] * featWidth;
      if (Max) {
        for (int64_t j = 0; j < featWidth; ++j)
          out[j] = std::fmax(out[j], v * static_cast<double>(xr[j]));
      } else if (WithAbs) {
        for (int64_t j = 0; j < featWidth; ++j) {
          double term = v * static_cast<double>(xr[j]);
          out[j] += term;
          absOut[j] += std::fabs(term);
        }
      } else {
        for (int64_t j = 0; j < featWidth; ++j)
          out[j] += v * static_cast<double>(xr[j]);
      }
    }
    if (Max && WithAbs)
      for (int64_t j = 0; j < featWidth; ++j)
        absOut[j] = std::fabs(out[j]);
    if (rowScale) {
      const double factor = rowScale[r], absFactor = std::fabs(rowScale[r]);
      for (int64_t j = 0; j < featWidth; ++j) {
        out[j] *= factor;
        if (WithAbs)
          absOut[j] *= absFactor;
      }
    }
  }
}

/// spmmSum with optional factors: each term of column c is multiplied by
/// colScale[c] and each output of row r by rowScale[r] (null: no factor).
/// Writes all numRows * featWidth elements of y (and absRef, when non-null).
/// Rows are cut into pieces of about equal work that threads take in turn;
/// each row is computed by one thread in the order of its non-zeros, so the
/// result does not depend on the thread count. The output pages are first
/// touched by the threads that compute them.
void spmmScaled(const graph::CsrGraph &g, const float *edgeValues,
                const float *x, int64_t featWidth, double *y, double *absRef,
                int numThreads, const double *colScale, const double *rowScale,
                bool max = false) {
  const float *vals =
      edgeValues ? edgeValues : (g.hasValues() ? g.values.data() : nullptr);
  if (g.numRows <= 0 || featWidth <= 0)
    return;
  double work =
      static_cast<double>(g.nnz() + g.numRows) * static_cast<double>(featWidth);
  if (numThreads <= 0)
    numThreads = work < (1 << 20) ? 1 : graph::hostThreads();
  auto runRows = [&](int64_t lo, int64_t hi) {
    if (max)
      absRef ? spmmRows<true, true>(g, vals, x, featWidth, y, absRef, colScale,
                                    rowScale, lo, hi)
             : spmmRows<true, false>(g, vals, x, featWidth, y, absRef, colScale,
                                     rowScale, lo, hi);
    else
      absRef ? spmmRows<false, true>(g, vals, x, featWidth, y, absRef, colScale,
                                     rowScale, lo, hi)
             : spmmRows<false, false>(g, vals, x, featWidth, y, absRef,
                                      colScale, rowScale, lo, hi);
  };
  graph::parallelForRowsByWork(g.rowPtr.data(), g.numRows, numThreads, runRows);
}

/// Sizes y (and absRef) for spmmScaled, which overwrites every element:
/// a vector that already has the size is not filled again.
void sizeOutputs(const graph::CsrGraph &g, int64_t featWidth,
                 std::vector<double> &y, std::vector<double> *absRef) {
  size_t outSize = static_cast<size_t>(std::max<int64_t>(g.numRows, 0) *
                                       std::max<int64_t>(featWidth, 0));
  y.resize(outSize);
  if (absRef)
    absRef->resize(outSize);
}

} // namespace

void gnnc::ref::spmmSum(const graph::CsrGraph &g, const float *edgeValues,
                        const float *x, int64_t featWidth,
                        std::vector<double> &y, std::vector<double> *absRef,
                        int numThreads) {
  sizeOutputs(g, featWidth, y, absRef);
  spmmScaled(g, edgeValues, x, featWidth, y.data(),
             absRef ? absRef->data() : nullptr, numThreads,
             /*colScale=*/nullptr, /*rowScale=*/nullptr);
}

void gnnc::ref::spmmSumInto(const graph::CsrGraph &g, const float *edgeValues,
                            const float *x, int64_t featWidth, double *y,
                            double *absRef, int numThreads) {
  spmmScaled(g, edgeValues, x, featWidth, y, absRef, numThreads,
             /*colScale=*/nullptr, /*rowScale=*/nullptr);
}

void gnnc::ref::attentionSpmm(const graph::CsrGraph &g, const float *dst,
                              const float *src, const float *x,
                              int64_t featWidth, double slope,
                              std::vector<double> &y,
                              std::vector<double> *absRef) {
  const size_t size = static_cast<size_t>(g.numRows * featWidth);
  y.resize(size);
  std::vector<double> scratch;
  if (!absRef)
    scratch.resize(size);
  else
    absRef->resize(size);
  attentionSpmmInto(g, dst, src, x, featWidth, slope, std::nullopt, y.data(),
                    absRef ? absRef->data() : scratch.data());
}

void gnnc::ref::attentionSpmmInto(const graph::CsrGraph &g, const float *dst,
                                  const float *src, const float *x,
                                  int64_t featWidth, double slope,
                                  std::optional<ElementType> intermediates,
                                  double *y, double *absRef) {
  auto round = [&](double v) {
    return intermediates ? double(roundToElementType(static_cast<float>(v),
                                                     *intermediates))
                         : v;
  };
  auto rows = [&](int64_t first, int64_t last) {
    std::vector<double> weights;
    for (int64_t r = first; r < last; ++r) {
      double *row = y + r * featWidth;
      double *mag = absRef + r * featWidth;
      std::fill(row, row + featWidth, 0.0);
      std::fill(mag, mag + featWidth, 0.0);
      const int64_t begin = g.rowPtr[r], end = g.rowPtr[r + 1];
      if (begin == end)
        continue;
      weights.resize(static_cast<size_t>(end - begin));
      double top = -std::numeric_limits<double>::infinity();
      for (int64_t e = begin; e < end; ++e) {
        double l = static_cast<double>(dst[r]) + src[g.colIdx[e]];
        l = round(l > 0 ? l : l * slope);
        weights[e - begin] = l;
        top = std::max(top, l);
      }
      double sum = 0;
      for (double &w : weights) {
        w = std::exp(w - top);
        sum += w;
      }
      for (double &w : weights)
        w = round(w / sum);
      for (int64_t e = begin; e < end; ++e) {
        const double w = weights[e - begin];
        const float *xc = x + g.colIdx[e] * featWidth;
        for (int64_t j = 0; j < featWidth; ++j) {
          row[j] += w * xc[j];
          mag[j] += w * std::fabs(static_cast<double>(xc[j]));
        }
      }
    }
  };
  // Pieces of about equal work; each output row belongs to one piece.
  const bool small = g.nnz() * featWidth < (int64_t(1) << 20);
  graph::parallelForRowsByWork(g.rowPtr.data(), g.numRows,
                               /*numThreads=*/small ? 1 : 0, rows);
}

std::vector<double> gnnc::ref::columnNormFactors(const graph::CsrGraph &g,
                                                 double exponent) {
  std::vector<int64_t> degree(static_cast<size_t>(g.numCols), 0);
  for (int64_t e = 0; e < g.nnz(); ++e)
    ++degree[g.colIdx[e]];
  std::vector<double> factors(degree.size(), 0.0);
  for (size_t c = 0; c < degree.size(); ++c)
    if (degree[c] > 0)
      factors[c] = exponent == 0.5
                       ? 1.0 / std::sqrt(static_cast<double>(degree[c]))
                       : std::pow(static_cast<double>(degree[c]), -exponent);
  return factors;
}

std::vector<double> gnnc::ref::rowFactors(const graph::CsrGraph &g,
                                          gnnc::Reduce reduce,
                                          DegreeScale scale) {
  bool left = scale == DegreeScale::Left || scale == DegreeScale::Both;
  bool mean = reduce == gnnc::Reduce::Mean;
  std::vector<double> rowScale;
  if (!left && !mean)
    return rowScale;
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
  return rowScale;
}

namespace {

/// Adds the self term (1 + eps) * X[r, :] to every row r of y (and its
/// magnitude to absRef).
void addSelfTerm(const graph::CsrGraph &g, const float *x, int64_t featWidth,
                 double eps, std::vector<double> &y,
                 std::vector<double> *absRef) {
  const double factor = 1.0 + eps;
  for (int64_t r = 0; r < g.numRows; ++r)
    for (int64_t j = 0; j < featWidth; ++j) {
      double term = factor * static_cast<double>(x[r * featWidth + j]);
      y[r * featWidth + j] += term;
      if (absRef)
        (*absRef)[r * featWidth + j] += std::fabs(term);
    }
}

} // namespace

void gnnc::ref::spmm(const graph::CsrGraph &g, const float *edgeValues,
                     const float *x, int64_t featWidth, gnnc::Reduce reduce,
                     DegreeScale scale, std::vector<double> &y,
                     std::vector<double> *absRef, int numThreads,
                     double colNormExponent) {
  SpmmOptions options;
  options.reduce = reduce;
  options.scale = scale;
  options.colNormExponent = colNormExponent;
  spmm(g, edgeValues, x, featWidth, options, y, absRef, numThreads);
}

void gnnc::ref::spmm(const graph::CsrGraph &g, const float *edgeValues,
                     const float *x, int64_t featWidth,
                     const SpmmOptions &options, std::vector<double> &y,
                     std::vector<double> *absRef, int numThreads) {
  const gnnc::Reduce reduce = options.reduce;
  const DegreeScale scale = options.scale;
  bool left = scale == DegreeScale::Left || scale == DegreeScale::Both;
  bool right = scale == DegreeScale::Right || scale == DegreeScale::Both;
  bool mean = reduce == gnnc::Reduce::Mean;
  bool max = reduce == gnnc::Reduce::Max;
  std::vector<double> colScale;
  if (right)
    colScale = columnNormFactors(g, options.colNormExponent);
  std::vector<double> rowScale = rowFactors(g, reduce, scale);
  sizeOutputs(g, featWidth, y, absRef);
  spmmScaled(g, edgeValues, x, featWidth, y.data(),
             absRef ? absRef->data() : nullptr, numThreads,
             right ? colScale.data() : nullptr,
             left || mean ? rowScale.data() : nullptr, max);
  if (options.selfWeight)
    addSelfTerm(g, x, featWidth, *options.selfWeight, y, absRef);
}

void gnnc::ref::spmmHalfRunningSum(const graph::CsrGraph &g,
                                   const float *edgeValues, const float *x,
                                   int64_t featWidth,
                                   const SpmmOptions &options,
                                   std::vector<double> &y) {
  const float *vals =
      edgeValues ? edgeValues : (g.hasValues() ? g.values.data() : nullptr);
  bool right =
      options.scale == DegreeScale::Right || options.scale == DegreeScale::Both;
  std::vector<double> colScale;
  if (right)
    colScale = columnNormFactors(g, options.colNormExponent);
  std::vector<double> rowScale = rowFactors(g, options.reduce, options.scale);
  y.assign(static_cast<size_t>(std::max<int64_t>(g.numRows, 0) *
                               std::max<int64_t>(featWidth, 0)),
           0.0);
  std::vector<float> h(static_cast<size_t>(std::max<int64_t>(featWidth, 0)));
  for (int64_t r = 0; r < g.numRows; ++r) {
    std::fill(h.begin(), h.end(), 0.0f);
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e) {
      const int64_t c = g.colIdx[e];
      bool scaled = vals || right;
      float factor = 1.0f;
      if (scaled)
        factor = roundToHalf(static_cast<float>(
            (vals ? static_cast<double>(vals[e]) : 1.0) *
            (right ? static_cast<double>(static_cast<float>(colScale[c]))
                   : 1.0)));
      for (int64_t j = 0; j < featWidth; ++j) {
        double sum = static_cast<double>(h[j]) +
                     static_cast<double>(factor) *
                         static_cast<double>(x[c * featWidth + j]);
        h[j] = roundToHalf(static_cast<float>(sum));
      }
    }
    const float factor =
        rowScale.empty() ? 1.0f : static_cast<float>(rowScale[r]);
    for (int64_t j = 0; j < featWidth; ++j)
      y[r * featWidth + j] = static_cast<double>(h[j] * factor);
  }
  if (options.selfWeight)
    addSelfTerm(g, x, featWidth, *options.selfWeight, y, nullptr);
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

void gnnc::ref::randomFeaturesInto(float *out, int64_t n, uint64_t seed,
                                   float lo, float hi, int numThreads) {
  if (n <= 0)
    return;
  const int64_t blocks = (n + kRandomBlock - 1) / kRandomBlock;
  if (numThreads <= 0)
    numThreads = n < (int64_t(1) << 20) ? 1 : graph::hostThreads();
  const double width = static_cast<double>(hi) - static_cast<double>(lo);
  // Block b has its own stream, seeded from (seed, b): the values do not
  // depend on how blocks are shared out among threads.
  graph::parallelForEach(blocks, numThreads, [&](int64_t b) {
    graph::Rng rng(graph::deriveSeed(seed, static_cast<uint64_t>(b)));
    const int64_t end = std::min(n, (b + 1) * kRandomBlock);
    for (int64_t i = b * kRandomBlock; i < end; ++i) {
      float v = static_cast<float>(lo + rng.nextDouble() * width);
      if (v >= hi && hi > lo) // Guard against rounding up to hi.
        v = std::nextafter(hi, lo);
      out[i] = v;
    }
  });
}

std::vector<float> gnnc::ref::randomFeatures(int64_t n, uint64_t seed, float lo,
                                             float hi) {
  std::vector<float> out(static_cast<size_t>(std::max<int64_t>(n, 0)));
  randomFeaturesInto(out.data(), n, seed, lo, hi);
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

void gnnc::ref::linearEpilogue(const std::vector<double> &h, int64_t rows,
                               int64_t k, const float *w, int64_t m,
                               const float *bias, bool relu,
                               std::vector<double> &out,
                               const std::vector<double> *hAbs,
                               std::vector<double> *outAbs, bool transposed) {
  out.assign(static_cast<size_t>(rows * m), 0.0);
  if (outAbs)
    outAbs->assign(out.size(), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double *o = out.data() + r * m;
    double *oa = outAbs ? outAbs->data() + r * m : nullptr;
    for (int64_t j = 0; j < k; ++j) {
      const double hv = h[r * k + j];
      const double ha = hAbs ? (*hAbs)[r * k + j] : 0.0;
      for (int64_t n = 0; n < m; ++n) {
        const double wv = transposed ? w[n * k + j] : w[j * m + n];
        o[n] += hv * wv;
        if (oa)
          oa[n] += ha * std::fabs(wv);
      }
    }
    for (int64_t n = 0; n < m; ++n) {
      if (bias) {
        o[n] += bias[n];
        if (oa)
          oa[n] += std::fabs(static_cast<double>(bias[n]));
      }
      if (relu && o[n] < 0)
        o[n] = 0;
    }
  }
}
