//===- Problems.h - SpMM, SDDMM and GAT-chain problems ----------*- C++ -*-===//
//
// A graph on the device, and the problems every kernel of a case solves:
// random inputs on the device and on the host, and a double-precision CPU
// reference computed once and shared by every kernel checked against it.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_PROBLEMS_H
#define GNNC_BENCH_PROBLEMS_H

#include "gnnc/Bench/Bench.h"
#include "gnnc/Bench/Host.h"
#include "gnnc/graph/Csr.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Float16.h"
#include "gnnc/runtime/Runtime.h"
#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace gnnc::bench {

/// A graph on the device in the layouts the kernels need.
struct DeviceGraphs {
  const graph::CsrGraph *host = nullptr;
  /// For gnnc kernels: 64- or 32-bit offsets, 32-bit indices.
  ops::DeviceGraph gnnc;
  /// 32-bit row offsets for cuSPARSE (its column indices are gnnc.colIdx).
  rt::DeviceBuffer rowPtr32;
  /// Total bytes allocated above.
  size_t bytes = 0;
};

/// "<what> on '<graph>' (<rows> rows, <nnz> <edges>, width <width>, <type>):
/// <report>": how a check on a problem reports what it compared.
std::string reportOnGraph(const std::string &what, const graph::CsrGraph &g,
                          const std::string &edges, int64_t width,
                          ElementType type, const std::string &report);

/// Uploads `g` (which must outlive the result). (Neighbour groups are built
/// by the first launch of a neighbor_group kernel.)
Expected<DeviceGraphs> uploadGraphs(const graph::CsrGraph &g, bool offsets64);

/// One SpMM problem: a graph, random features (and edge values) of one type
/// and width on the device and on the host, an output buffer, and the
/// double-precision CPU reference (computed on first use).
struct SpmmProblem {
  const DeviceGraphs *graphs = nullptr;
  ElementType type = ElementType::F32;
  int64_t width = 0;
  bool edgeValues = false;
  uint64_t seed = 0;
  /// Host inputs (already rounded to `type`), the reference and scratch.
  HostBuffers host;
  rt::DeviceBuffer x, values, y;
  bool hasReference = false;
  /// Seconds spent on the CPU reference.
  double referenceSeconds = 0;

  const graph::CsrGraph &graph() const { return *graphs->host; }
  size_t outputCount() const {
    return static_cast<size_t>(graphs->host->numRows * width);
  }
  /// Bytes of x, values and y on the device.
  size_t deviceBytes() const { return x.size() + values.size() + y.size(); }
};

/// Makes a problem with fresh random inputs drawn from `seed` (edge values
/// from a seed derived from it), in the host arrays of `recycled` (moved
/// from; see HostBuffers).
Expected<SpmmProblem> makeSpmmProblem(const DeviceGraphs &graphs,
                                      ElementType type, int64_t width,
                                      bool edgeValues, uint64_t seed,
                                      HostBuffers recycled = {});

/// Turns an SpMMv problem into the SpMMve problem on the same features:
/// adds random edge values drawn from `seed` and drops the reference (its
/// arrays are reused). On failure the problem is left without values.
Status addEdgeValues(SpmmProblem &problem, uint64_t seed);

/// Computes the CPU reference of `problem` (multithreaded) unless present.
void ensureReference(SpmmProblem &problem);

/// Downloads problem.y and compares it with the reference (computing it if
/// needed) at `tolerance`, or when 0 at the tolerance of the problem's type.
Expected<ops::SpmmCheck> checkOutput(SpmmProblem &problem,
                                     double tolerance = 0.0);

/// Poisons problem.y with NaN, runs `kernel` on the problem's inputs and
/// compares every output element with the reference.
Expected<ops::SpmmCheck> checkOnProblem(Bench &bench,
                                        const rt::LoadedKernel &kernel,
                                        SpmmProblem &problem);

/// An SDDMM (dot form) problem on the graph and column features of an SpMM
/// problem: out[e] = dot(rowX[r, :], x[c, :]) for every edge e = (r, c),
/// with rowX (numRows x width) drawn fresh. The host arrays live in the
/// SpMM problem's HostBuffers (rowX, edgeExpected, edgeMagnitude, got).
struct SddmmProblem {
  SpmmProblem *base = nullptr;
  rt::DeviceBuffer rowX, out;
  bool hasReference = false;
  double referenceSeconds = 0;

  const graph::CsrGraph &graph() const { return base->graph(); }
  size_t outputCount() const {
    return static_cast<size_t>(base->graph().nnz());
  }
  size_t deviceBytes() const { return rowX.size() + out.size(); }
};

/// Draws the row features from `seed` and allocates the output.
Expected<SddmmProblem> makeSddmmProblem(SpmmProblem &base, uint64_t seed);

/// Computes the per-edge reference (ref::sddmm, multithreaded) unless
/// present.
void ensureSddmmReference(SddmmProblem &problem);

/// Poisons the output with NaN, runs the gnn.sddmm `kernel` and compares
/// every edge's value with the reference (tolerance as ops::checkSddmm:
/// spmmTolerance of the sum of |terms|).
Expected<ops::KernelCheck> checkSddmmOnProblem(Bench &bench,
                                               const rt::LoadedKernel &kernel,
                                               SddmmProblem &problem);

/// The GAT attention chain with one head, on the graph, features `x` and
/// output `y` of an SpMM problem:
///   logits[e] = leaky_relu(attRow[r] + attCol[c], slope)   (gnn.sddmm add)
///   alpha = edge_softmax(logits) over each row's edges     (gnn.edge_softmax)
///   y[r, :] = sum over edges e = (r, c) of alpha[e] x[c, :] (gnn.spmm)
/// attRow (numRows) and attCol (numCols) are uniform in [-4, 4) (logits up
/// to +-8, so the softmax is far from uniform). Host arrays live in the SpMM
/// problem's HostBuffers; the reference uses its expected and magnitude
/// arrays (the SpMM reference there is dropped).
struct GatProblem {
  SpmmProblem *base = nullptr;
  rt::DeviceBuffer attRow, attCol, logits, alpha;
  bool hasReference = false;
  /// The reference is the fused kernel's (no intermediate rounded to the
  /// element type), not the chain's.
  bool fusedReference = false;
  double referenceSeconds = 0;

  const graph::CsrGraph &graph() const { return base->graph(); }
  size_t deviceBytes() const {
    return attRow.size() + attCol.size() + logits.size() + alpha.size();
  }
};

/// Draws the attention terms from `seed` and allocates the intermediates.
Expected<GatProblem> makeGatProblem(SpmmProblem &base, uint64_t seed);

/// The tolerance of a chain output, relative to its magnitude: 4x
/// spmmTolerance, since an intermediate value the GPU rounds may land one
/// unit in the last place away from the reference's (expf vs exp).
double gatChainTolerance(ElementType type);

/// Computes the chain reference unless present (ref::attentionSpmmInto
/// with the logits and the weights rounded to the element type, as the
/// chain's tensors hold them); with `fused`, the fused kernel's instead
/// (gnn.spmm with attention keeps them in f32 registers: rounded to f32).
void ensureGatReference(GatProblem &problem, bool fused = false);

} // namespace gnnc::bench

#endif // GNNC_BENCH_PROBLEMS_H
