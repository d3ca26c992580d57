//===- CheckSupport.h - What the kernel checks share -----------*- C++ -*-===//
//
// Internal to runtime/lib/ops: the pieces of checkSpmm (Spmm.cpp),
// checkSddmm (Sddmm.cpp), the backward checks that run gnn.spmm and
// gnn.sddmm kernels (Backward.cpp) and checkSpmmInUserOrder
// (Renumber.cpp). Not an API.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_LIB_OPS_CHECKSUPPORT_H
#define GNNC_LIB_OPS_CHECKSUPPORT_H

#include "gnnc/ops/Sddmm.h"
#include "gnnc/ops/Spmm.h"

#include <algorithm>
#include <vector>

namespace gnnc::ops::checks {

/// `host` in a new device buffer; an empty vector still gets a buffer (of
/// one byte), so that a kernel has an address to take.
template <typename T>
Expected<rt::DeviceBuffer> uploadVector(const std::vector<T> &host) {
  auto buffer =
      rt::DeviceBuffer::allocate(std::max<size_t>(host.size() * sizeof(T), 1));
  if (!buffer)
    return buffer.status();
  if (!host.empty())
    GNNC_RETURN_IF_ERROR(
        buffer->copyFromHost(host.data(), host.size() * sizeof(T)));
  return buffer;
}

/// The random inputs of a gnn.spmm check, rounded through the kernel's
/// element type: `x`, rows of the feature width, and the edge values when
/// the kernel takes them (empty otherwise).
struct SpmmInputs {
  std::vector<float> x;
  bool edgeValues = false;
  std::vector<float> values;
  /// A linear epilogue's weights (K x M) and bias (M), when it has them.
  std::vector<float> weight, bias;
  /// Attention's scores of the rows and of the columns, when it has them.
  std::vector<float> rowScores, colScores;
  /// The edge values as the reference takes them: null without.
  const float *valuesOrNull() const {
    return edgeValues ? values.data() : nullptr;
  }
};
/// `xRows` rows of x drawn with `seed`, and `nnz` edge values drawn with
/// `seed ^ 0x5eed` when `sig` takes edge values.
SpmmInputs randomSpmmInputs(const SpmmSignature &sig, int64_t xRows,
                            int64_t nnz, uint64_t seed);

/// A gnn.spmm kernel's output, as runSpmm leaves it.
struct SpmmOutput {
  /// The device buffer (rows of the row stride).
  rt::DeviceBuffer y;
  /// Its elements as floats.
  std::vector<float> got;
};
/// Runs `kernel` (of signature `sig`) once on `g`, uploaded with the
/// kernel's index widths, with the features `x` (rows of the row stride),
/// the edge values `values` when the kernel takes them and the column
/// factors of `g` when it reads them, into a NaN-poisoned output of
/// `g.numRows` rows; waits for it and downloads the output.
/// With `batch`, `g` is its graph, uploaded with uploadBatch. A linear
/// epilogue's weights and bias, and attention's scores, come from
/// `linearFrom`.
Expected<SpmmOutput> runSpmm(rt::Runtime &runtime,
                             const rt::LoadedKernel &kernel,
                             const SpmmSignature &sig, const graph::CsrGraph &g,
                             const std::vector<float> &x,
                             const std::vector<float> &values,
                             const graph::BatchedGraph *batch = nullptr,
                             const SpmmInputs *linearFrom = nullptr);

/// checkSpmm on `g`, or on `batch` (whose graph `g` is) when given.
Expected<SpmmCheck> checkSpmmOn(rt::Runtime &runtime,
                                const rt::LoadedKernel &kernel,
                                const graph::CsrGraph &g, uint64_t seed,
                                const graph::BatchedGraph *batch);

/// The first `width` elements of each of `numRows` rows laid out `stride`
/// apart (what padRows padded).
std::vector<float> unpadRows(const std::vector<float> &rows, int64_t numRows,
                             int64_t width, int64_t stride);

/// Compares `got` (rows of the feature width) with the reference gnn.spmm
/// of `in` on `g`, allowing each row the tolerance of its degree
/// (spmmTolerance(sig, degree)).
KernelCheck compareSpmm(const rt::KernelSpec &spec, const graph::CsrGraph &g,
                        const SpmmSignature &sig, const SpmmInputs &in,
                        const std::vector<float> &got);

/// compareSpmm for a kernel with a linear epilogue: `got` (rows of M)
/// against the reference aggregation followed by ref::linearEpilogue, each
/// row allowed its degree's aggregation bound plus linearTolerance.
KernelCheck compareSpmmLinear(const rt::KernelSpec &spec,
                              const graph::CsrGraph &g,
                              const SpmmSignature &sig, const SpmmInputs &in,
                              const std::vector<float> &got);

/// The random features of a gnn.sddmm check, rounded through `type`:
/// `rows` rows of `width` (drawn with `seed`) and `cols` columns of
/// `width` (drawn with `seed ^ 0xb0b`).
struct SddmmInputs {
  std::vector<float> a;
  std::vector<float> b;
};
SddmmInputs randomSddmmInputs(ElementType type, int64_t width, int64_t rows,
                              int64_t cols, uint64_t seed);

/// Runs `kernel` (of signature `sig`) once on `g`, uploaded with the
/// kernel's index widths, with the row features `a` and the column
/// features `b`, into a NaN-poisoned output of the graph's edges; waits
/// for it and returns the output as floats.
Expected<std::vector<float>>
runSddmm(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
         const SddmmSignature &sig, const graph::CsrGraph &g,
         const std::vector<float> &a, const std::vector<float> &b);

} // namespace gnnc::ops::checks

#endif // GNNC_LIB_OPS_CHECKSUPPORT_H
