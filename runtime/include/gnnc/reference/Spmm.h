//===- Spmm.h - CPU reference for sparse aggregation ------------*- C++ -*-===//
//
// Double-precision CPU reference for SpMM-style aggregation, and comparison
// of device results against it.
//
// Suggested tolerances:
//  - f32 inputs and outputs: compareToReference with relTol 1e-5 and absTol
//    ~1e-6 (times the typical magnitude), or compareToReferenceScaled with
//    tol ~1e-6 * (max degree)^0.5 .. 1e-5.
//  - f16 / bf16 inputs: round the inputs first (roundThrough) so the
//    reference sees exactly the values the GPU sees; if the kernel
//    accumulates in f32 and stores f16 (bf16) output, the error is dominated
//    by the final rounding: use compareToReferenceScaled with tol ~1e-3 for
//    f16 (2^-11 unit roundoff) and ~8e-3 for bf16 (2^-8), or ~1e-2 to be safe,
//    and for f16 output an absolute floor absTol ~3e-8 (f16 subnormals).
//    Scaling by sum |val * x| (absRef) rather than |ref| keeps rows with
//    cancellation from producing false mismatches.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_REFERENCE_SPMM_H
#define GNNC_REFERENCE_SPMM_H

#include "gnnc/graph/Csr.h"
#include "gnnc/runtime/Float16.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gnnc::ref {

/// Y[r, :] = sum over entries e of row r of val_e * X[colIdx[e], :], with
/// double accumulation. `edgeValues` (nnz floats) overrides g.values when
/// non-null; otherwise g.values is used, or ones when it is empty. `x` is
/// numCols x featWidth row-major; `y` is resized to numRows x featWidth. If
/// `absRef` is non-null it receives sum |val_e * X[c, j]| per output element
/// (the scale for compareToReferenceScaled). Runs on `numThreads` threads (0:
/// graph::hostThreads() when the work is large enough); each row is summed
/// by one thread in the order of its non-zeros, so the result is the same
/// for every thread count. A `y` (`absRef`) that already has the right size
/// is overwritten without being cleared first.
void spmmSum(const graph::CsrGraph &g, const float *edgeValues, const float *x,
             int64_t featWidth, std::vector<double> &y,
             std::vector<double> *absRef = nullptr, int numThreads = 0);

/// spmmSum into caller storage: `y` (and `absRef` when non-null) hold
/// numRows x featWidth doubles, all of which are written (they need no
/// initialization: uninitialized memory is first touched by the threads that
/// compute its rows, so large outputs are not paged in by one thread).
void spmmSumInto(const graph::CsrGraph &g, const float *edgeValues,
                 const float *x, int64_t featWidth, double *y,
                 double *absRef = nullptr, int numThreads = 0);

/// gnn.spmm with attention, in double: the weight of edge e = (r, c) is
/// exp(l_e - m_r) / sum over row r of exp(l_e' - m_r), with the logit l_e =
/// leaky_relu(dst[r] + src[c], slope) (slope 1: the plain sum) and m_r the
/// row's largest logit; Y[r, :] = sum of w_e X[c, :] (0 for an empty row).
/// `y` (and `absRef`, the sums of w_e |X[c, j]|) are resized to numRows x
/// featWidth.
void attentionSpmm(const graph::CsrGraph &g, const float *dst, const float *src,
                   const float *x, int64_t featWidth, double slope,
                   std::vector<double> &y,
                   std::vector<double> *absRef = nullptr);

/// attentionSpmm into numRows x featWidth values at `y` and `absRef` (every
/// one written), with the logits and the weights rounded to
/// `intermediates` when given, as a chain of kernels that stores them in
/// that type computes them (gnn.sddmm with leaky_relu, gnn.edge_softmax,
/// gnn.spmm with edge values). Runs on all host threads; the result does
/// not depend on their number.
void attentionSpmmInto(const graph::CsrGraph &g, const float *dst,
                       const float *src, const float *x, int64_t featWidth,
                       double slope, std::optional<ElementType> intermediates,
                       double *y, double *absRef);

/// 1/sqrt(deg_in(c)) for every column c of `g` (deg_in(c): non-zeros in
/// column c), 0 for a column without non-zeros: the `col_norm` factors of
/// gnn.spmm with scale = right or both.
/// With `exponent` p the factors are deg_in(c)^-p instead (gnn.spmm's
/// col_norm_exponent).
std::vector<double> columnNormFactors(const graph::CsrGraph &g,
                                      double exponent = 0.5);

/// The row factors of gnn.spmm with `reduce` and `scale`, or empty when
/// every factor is 1: 1/deg_out(r) for reduce = mean times
/// 1/sqrt(deg_out(r)) for scale = left or both, 0 for an empty row.
std::vector<double> rowFactors(const graph::CsrGraph &g, gnnc::Reduce reduce,
                               DegreeScale scale);

/// spmmSum with gnn.spmm's reduction and degree scaling:
/// Y[r, :] = rowFactor(r) * sum over e = (r, c) of val_e * colFactor(c) *
/// X[c, :], where rowFactor is 1/deg_out(r) for Mean times 1/sqrt(deg_out(r))
/// for Left/Both (0 for an empty row) and colFactor is 1/sqrt(deg_in(c)) for
/// Right/Both (0 for an empty column), 1 otherwise. Max takes the largest
/// term instead of the sum (then the row factor of Left/Both). `absRef`
/// receives rowFactor(r) * sum |val_e * colFactor(c) * X[c, j]|, or for Max
/// |Y[r, j]| (the result is one term, rounded on its own scale).
/// `colNormExponent` p makes colFactor(c) deg_in(c)^-p (gnn.spmm's
/// col_norm_exponent).
void spmm(const graph::CsrGraph &g, const float *edgeValues, const float *x,
          int64_t featWidth, gnnc::Reduce reduce, DegreeScale scale,
          std::vector<double> &y, std::vector<double> *absRef = nullptr,
          int numThreads = 0, double colNormExponent = 0.5);

/// What gnn.spmm computes beyond the graph and its operands.
struct SpmmOptions {
  gnnc::Reduce reduce = gnnc::Reduce::Sum;
  DegreeScale scale = DegreeScale::None;
  /// GIN's self term: when set to eps, (1 + eps) * X[r, :] is added to row
  /// r after the row factor (the self term is not scaled). Sum and Mean
  /// only; X must hold a row for every graph row (numRows <= numCols).
  std::optional<double> selfWeight;
  /// colFactor(c) = deg_in(c)^-colNormExponent (gnn.spmm's
  /// `col_norm_exponent`; 1/2 by default).
  double colNormExponent = 0.5;
};

/// spmm with `options`; with a self weight, `absRef` also counts
/// |(1 + eps) * X[r, j]|.
void spmm(const graph::CsrGraph &g, const float *edgeValues, const float *x,
          int64_t featWidth, const SpmmOptions &options, std::vector<double> &y,
          std::vector<double> *absRef = nullptr, int numThreads = 0);

/// Emulates a gnn.spmm kernel with `accumulate = f16` and no discretized
/// reduction, vertex_parallel: every output element of row r is one f16
/// running sum over the row's non-zeros in order, each step rounding
/// `h + factor_e * X[c, j]` to f16 (factor_e = val_e * colFactor(c), rounded
/// to f16 when there is one), then widened, multiplied by the row factor in
/// f32 and (with a self weight) given the self term. The sum is formed in
/// double and rounded through f32 to f16, so a result can differ from the
/// GPU's single rounding in rare ties; it shows how such a sum stalls (once
/// the sum's spacing exceeds twice a term, adding it changes nothing) or
/// overflows to infinity. Sum and Mean only.
void spmmHalfRunningSum(const graph::CsrGraph &g, const float *edgeValues,
                        const float *x, int64_t featWidth,
                        const SpmmOptions &options, std::vector<double> &y);

/// Checks every element: |got - ref| <= absTol + relTol * |ref|; NaN or
/// infinity in `got` never passes (unless ref is the same infinity). On
/// mismatch returns an error saying how many elements differ and listing the
/// first few as (row, col, got, expected); the report (if non-null) always
/// gets a summary including the max relative error and ||got-ref||/||ref||.
Status compareToReference(const std::vector<float> &got,
                          const std::vector<double> &ref, int64_t featWidth,
                          double relTol, double absTol,
                          std::string *report = nullptr);

/// Like compareToReference, but the bound per element is tol * absRef[i] +
/// absTol (absRef = sum of |terms|, from spmmSum); with absTol 0, rows whose
/// terms are all zero must be (almost) exactly zero. For f16 output pass
/// absTol >= 2^-25 (~3e-8, half the f16 subnormal spacing): results in the
/// f16 subnormal range lose relative precision.
Status compareToReferenceScaled(const std::vector<float> &got,
                                const std::vector<double> &ref,
                                const std::vector<double> &absRef,
                                int64_t featWidth, double tol,
                                std::string *report = nullptr,
                                double absTol = 0.0);

/// The elements of randomFeatures come in blocks of this many, each drawn
/// from its own stream seeded from (seed, block index).
constexpr int64_t kRandomBlock = int64_t(1) << 16;

/// n floats uniform in [lo, hi), deterministic for a seed (and independent
/// of the thread count: see kRandomBlock). Large n use graph::hostThreads()
/// threads.
std::vector<float> randomFeatures(int64_t n, uint64_t seed, float lo = -1.0f,
                                  float hi = 1.0f);

/// randomFeatures into caller storage of n floats (uninitialized is fine),
/// on `numThreads` threads (0: graph::hostThreads() when n is large).
void randomFeaturesInto(float *out, int64_t n, uint64_t seed, float lo = -1.0f,
                        float hi = 1.0f, int numThreads = 0);

/// Returns `values` rounded to `type` and back (a copy; identity for F32).
std::vector<float> roundThrough(const std::vector<float> &values,
                                ElementType type);

/// Rounds `values` to `type` in place.
void roundThroughInPlace(std::vector<float> &values, ElementType type);

/// Encodes floats as 16-bit patterns of `type` (F16 or BF16).
std::vector<uint16_t> encode16(const std::vector<float> &values,
                               ElementType type);

/// Decodes 16-bit patterns of `type` (F16 or BF16) to floats.
std::vector<float> decode16(const std::vector<uint16_t> &bits,
                            ElementType type);

/// gnn.spmm's linear epilogue in double: out[r, n] = act(sum_k h[r, k] *
/// w[k, n] + bias[n]) for `rows` rows of h (k features each), w k x m
/// row-major (m x k with `transposed`: w[n, k]), `bias` null for none,
/// ReLU when `relu`. With `hAbs` (the
/// magnitudes of h's terms, as spmm's absRef), `outAbs` receives sum_k
/// hAbs[r, k] * |w[k, n]| + |bias[n]|: the scale of the result's rounding
/// error (ReLU only shrinks it).
void linearEpilogue(const std::vector<double> &h, int64_t rows, int64_t k,
                    const float *w, int64_t m, const float *bias, bool relu,
                    std::vector<double> &out,
                    const std::vector<double> *hAbs = nullptr,
                    std::vector<double> *outAbs = nullptr,
                    bool transposed = false);

} // namespace gnnc::ref

#endif // GNNC_REFERENCE_SPMM_H
