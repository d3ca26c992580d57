//===- Problems.cpp - SpMM, SDDMM and GAT-chain problems ------------------===//
#include "gnnc/Bench/Problems.h"

#include "gnnc/Bench/Kernels.h"
#include "gnnc/graph/Parallel.h"
#include "gnnc/ops/Sddmm.h"
#include "gnnc/reference/Sddmm.h"
#include "gnnc/reference/Spmm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <vector>

using namespace gnnc;
using namespace gnnc::bench;

namespace {

/// Room on the device for `count` elements of `type` (at least a byte, so
/// that an empty output still has an address).
Expected<rt::DeviceBuffer> allocateElements(size_t count, ElementType type) {
  return rt::DeviceBuffer::allocate(
      std::max<size_t>(count * elementSize(type), 1));
}

/// Moves `made` into `slot`, or passes its error on.
template <typename T> Status assign(T &slot, Expected<T> made) {
  if (!made)
    return made.status();
  slot = made.take();
  return Status::ok();
}

/// Runs `compute`, which fills `problem`'s reference, unless the problem has
/// its reference already; times it.
template <typename Problem, typename Compute>
void computeReferenceOnce(Problem &problem, Compute compute) {
  if (problem.hasReference)
    return;
  auto start = std::chrono::steady_clock::now();
  compute();
  problem.referenceSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  problem.hasReference = true;
}

} // namespace

std::string gnnc::bench::reportOnGraph(const std::string &what,
                                       const graph::CsrGraph &g,
                                       const std::string &edges, int64_t width,
                                       ElementType type,
                                       const std::string &report) {
  return what + " on '" + g.name + "' (" + std::to_string(g.numRows) +
         " rows, " + std::to_string(g.nnz()) + " " + edges + ", width " +
         std::to_string(width) + ", " + elementTypeName(type) + "): " + report;
}

Expected<DeviceGraphs> gnnc::bench::uploadGraphs(const graph::CsrGraph &g,
                                                 bool offsets64) {
  DeviceGraphs graphs;
  graphs.host = &g;
  auto gnncGraph = ops::uploadGraph(g, offsets64, /*indices64=*/false);
  if (!gnncGraph)
    return gnncGraph.status();
  graphs.gnnc = gnncGraph.take();
  auto rowPtr32 = g.rowPtr32();
  if (!rowPtr32)
    return rowPtr32.status().withContext("graph '" + g.name +
                                         "' for cuSPARSE's 32-bit offsets");
  auto buffer = rt::DeviceBuffer::allocate(rowPtr32->size() * 4);
  if (!buffer)
    return buffer.status();
  GNNC_RETURN_IF_ERROR(
      buffer->copyFromHost(rowPtr32->data(), rowPtr32->size() * 4));
  graphs.rowPtr32 = buffer.take();
  graphs.bytes = graphs.gnnc.rowPtr.size() + graphs.gnnc.colIdx.size() +
                 graphs.rowPtr32.size();
  return graphs;
}

Expected<SpmmProblem>
gnnc::bench::makeSpmmProblem(const DeviceGraphs &graphs, ElementType type,
                             int64_t width, bool edgeValues, uint64_t seed,
                             HostBuffers recycled) {
  const graph::CsrGraph &g = *graphs.host;
  SpmmProblem p;
  p.graphs = &graphs;
  p.type = type;
  p.width = width;
  p.seed = seed;
  p.host = std::move(recycled);
  GNNC_RETURN_IF_ERROR(
      assign(p.x, uploadRandomInputs(p.host.x, g.numCols * width, seed, type,
                                     &p.host.bits)));
  GNNC_RETURN_IF_ERROR(assign(p.y, allocateElements(p.outputCount(), type)));
  if (edgeValues)
    GNNC_RETURN_IF_ERROR(addEdgeValues(p, seed));
  return p;
}

Status gnnc::bench::addEdgeValues(SpmmProblem &problem, uint64_t seed) {
  HostBuffers &host = problem.host;
  GNNC_RETURN_IF_ERROR(assign(
      problem.values,
      uploadRandomInputs(host.values, problem.graph().nnz(),
                         seed ^ 0x5eedf00dull, problem.type, &host.bits)));
  problem.edgeValues = true;
  problem.seed = seed;
  problem.hasReference = false;
  problem.referenceSeconds = 0;
  return Status::ok();
}

void gnnc::bench::ensureReference(SpmmProblem &problem) {
  computeReferenceOnce(problem, [&] {
    HostBuffers &host = problem.host;
    // Overwritten in full, and paged in by the threads that compute the rows.
    resizeForOverwrite(host.expected, problem.outputCount());
    resizeForOverwrite(host.magnitude, problem.outputCount());
    ref::spmmSumInto(problem.graph(),
                     problem.edgeValues ? host.values.data() : nullptr,
                     host.x.data(), problem.width, host.expected.data(),
                     host.magnitude.data(), /*numThreads=*/0);
  });
}

Expected<ops::SpmmCheck> gnnc::bench::checkOutput(SpmmProblem &problem,
                                                  double tolerance) {
  ensureReference(problem);
  HostBuffers &host = problem.host;
  GNNC_RETURN_IF_ERROR(downloadConverted(problem.y, problem.outputCount(),
                                         problem.type, host.got, &host.bits));
  return compareScaled(host.got, host.expected, host.magnitude, problem.width,
                       tolerance > 0 ? tolerance
                                     : ops::spmmTolerance(problem.type),
                       ops::spmmAbsoluteTolerance(problem.type));
}

Expected<ops::SpmmCheck>
gnnc::bench::checkOnProblem(Bench &bench, const rt::LoadedKernel &kernel,
                            SpmmProblem &problem) {
  auto sig = ops::spmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  const ops::DeviceGraph &dg = problem.graphs->gnnc;
  if (sig->type != problem.type || sig->featureWidth != problem.width ||
      sig->padded() || sig->edgeValues != problem.edgeValues ||
      sig->offsets64 != dg.offsets64 || sig->indices64 != dg.indices64)
    return Status::error("kernel '" + kernel.spec.name +
                         "' does not match the problem (type, width, unpadded "
                         "rows, edge values or index widths)");
  ensureReference(problem);
  // All-ones bytes are NaN in f32, f16 and bf16: an unwritten output fails.
  GNNC_RETURN_IF_ERROR(problem.y.fill(0xff));
  GNNC_RETURN_IF_ERROR(
      ops::launchSpmm(bench.runtime(), kernel, dg, problem.x,
                      problem.edgeValues ? &problem.values : nullptr, problem.y,
                      /*synchronize=*/true));
  // Atomic pieces of 16-bit results round once more each: the bound of the
  // graph's longest row applies (ops::checkSpmm bounds each row alone).
  int64_t maxDegree = 0;
  if (sig->atomicPieceEdges > 0)
    for (int64_t r = 0; r < problem.graph().numRows; ++r)
      maxDegree = std::max(maxDegree, problem.graph().degree(r));
  auto checked = checkOutput(problem, ops::spmmTolerance(*sig, maxDegree));
  if (!checked)
    return checked.status();
  ops::SpmmCheck check = checked.take();
  check.report = reportOnGraph(kernel.spec.name, problem.graph(), "nnz",
                               problem.width, problem.type, check.report);
  return check;
}

Expected<SddmmProblem> gnnc::bench::makeSddmmProblem(SpmmProblem &base,
                                                     uint64_t seed) {
  const graph::CsrGraph &g = base.graph();
  SddmmProblem p;
  p.base = &base;
  HostBuffers &host = base.host;
  GNNC_RETURN_IF_ERROR(
      assign(p.rowX, uploadRandomInputs(host.rowX, g.numRows * base.width, seed,
                                        base.type, &host.bits)));
  GNNC_RETURN_IF_ERROR(
      assign(p.out, allocateElements(p.outputCount(), base.type)));
  return p;
}

void gnnc::bench::ensureSddmmReference(SddmmProblem &problem) {
  computeReferenceOnce(problem, [&] {
    SpmmProblem &base = *problem.base;
    ref::sddmm(base.graph(), base.host.rowX.data(), base.host.x.data(),
               base.width, gnnc::SddmmForm::Dot, std::nullopt,
               base.host.edgeExpected, &base.host.edgeMagnitude,
               /*numThreads=*/0);
  });
}

Expected<ops::KernelCheck>
gnnc::bench::checkSddmmOnProblem(Bench &bench, const rt::LoadedKernel &kernel,
                                 SddmmProblem &problem) {
  auto sig = ops::sddmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  SpmmProblem &base = *problem.base;
  const ops::DeviceGraph &dg = base.graphs->gnnc;
  if (sig->type != base.type || sig->featureWidth != base.width ||
      sig->form != gnnc::SddmmForm::Dot || sig->leakyRelu ||
      sig->offsets64 != dg.offsets64 || sig->indices64 != dg.indices64)
    return Status::error("kernel '" + kernel.spec.name +
                         "' does not match the SDDMM problem (type, width, "
                         "form, leaky ReLU or index widths)");
  ensureSddmmReference(problem);
  GNNC_RETURN_IF_ERROR(problem.out.fill(0xff)); // NaN in every type
  GNNC_RETURN_IF_ERROR(ops::launchSddmm(bench.runtime(), kernel, dg,
                                        problem.rowX, base.x, problem.out,
                                        /*synchronize=*/true));
  HostBuffers &host = base.host;
  GNNC_RETURN_IF_ERROR(downloadConverted(problem.out, problem.outputCount(),
                                         base.type, host.got, &host.bits));
  ops::KernelCheck check =
      compareScaled(host.got.data(), host.edgeExpected.data(),
                    host.edgeMagnitude.data(), problem.outputCount(),
                    /*width=*/1, ops::spmmTolerance(base.type),
                    ops::spmmAbsoluteTolerance(base.type));
  check.report = reportOnGraph(kernel.spec.name, base.graph(), "edge values",
                               base.width, base.type, check.report);
  return check;
}

Expected<GatProblem> gnnc::bench::makeGatProblem(SpmmProblem &base,
                                                 uint64_t seed) {
  const graph::CsrGraph &g = base.graph();
  GatProblem p;
  p.base = &base;
  HostBuffers &host = base.host;
  GNNC_RETURN_IF_ERROR(
      assign(p.attRow, uploadRandomInputs(host.attRow, g.numRows, seed,
                                          base.type, &host.bits, -4.0f, 4.0f)));
  GNNC_RETURN_IF_ERROR(assign(
      p.attCol, uploadRandomInputs(host.attCol, g.numCols, seed ^ 0xa77c01ull,
                                   base.type, &host.bits, -4.0f, 4.0f)));
  GNNC_RETURN_IF_ERROR(assign(
      p.logits, allocateElements(static_cast<size_t>(g.nnz()), base.type)));
  GNNC_RETURN_IF_ERROR(assign(
      p.alpha, allocateElements(static_cast<size_t>(g.nnz()), base.type)));
  return p;
}

double gnnc::bench::gatChainTolerance(ElementType type) {
  return 4 * ops::spmmTolerance(type);
}

void gnnc::bench::ensureGatReference(GatProblem &problem, bool fused) {
  if (problem.hasReference && problem.fusedReference != fused)
    problem.hasReference = false;
  problem.fusedReference = fused;
  computeReferenceOnce(problem, [&] {
    SpmmProblem &base = *problem.base;
    HostBuffers &host = base.host;
    // The SpMM problem's reference arrays now hold the chain's.
    base.hasReference = false;
    resizeForOverwrite(host.expected, base.outputCount());
    resizeForOverwrite(host.magnitude, base.outputCount());
    ref::attentionSpmmInto(base.graph(), host.attRow.data(), host.attCol.data(),
                           host.x.data(), base.width, kGatLeakySlope,
                           fused ? ElementType::F32 : base.type,
                           host.expected.data(), host.magnitude.data());
  });
}
