//===- Batched.h - gnn-bench's cases on batches of small graphs -*- C++ -*-===//
//
// One case is a batch of small graphs (TU PROTEINS, or generated
// molecule-like batches), an element type and a feature width. In one run
// it times, after checking each against the CPU reference: the fastest
// cuSPARSE CSR algorithm on the block-diagonal graph, gnnc's general
// schedules (vertex_parallel, edge_parallel, neighbor_group) on the same
// block-diagonal graph, and gnnc's batched schedules; and reports the
// fraction of the copy bandwidth each reaches on the compulsory bytes (X
// read once, Y written once, the graph read once).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_BATCHED_H
#define GNNC_BENCH_BATCHED_H

#include "gnnc/Bench/Bench.h"
#include "gnnc/Bench/Cusparse.h"
#include "gnnc/graph/Batch.h"
#include "gnnc/runtime/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::bench {

/// A named batch: "tu_PROTEINS" (read from `datasets`), "mol<N>" (N
/// molecule-like graphs) or "prot<N>" (N graphs of PROTEINS' sizes), with
/// generated batches drawn from `seed`.
Expected<graph::BatchedGraph>
loadBatch(const std::string &name, const std::string &datasets, uint64_t seed);

/// The schedules a batched case times: the general ones (on the
/// block-diagonal graph, as `!gnn.graph<csr, ...>`) and the batched ones,
/// each a `#gnn.schedule<...>` that the plans accept for the op.
std::vector<std::string> generalBatchSchedules(ElementType type, int64_t width);
std::vector<std::string> batchedSchedules(ElementType type, int64_t width);

/// Runs one case (see the file comment) and returns its record; a kernel
/// that fails its check is recorded as wrong and not timed, and counts in
/// `failures`. `copyGbs` is the copy bandwidth (read + write) the fractions
/// are taken of; `libraries` may be null (no cuSPARSE).
nlohmann::json runBatchedCase(Bench &bench, CudaLibraries *libraries,
                              const std::string &name,
                              const graph::BatchedGraph &batch,
                              ElementType type, int64_t width, double copyGbs,
                              uint64_t seed, int &failures);

} // namespace gnnc::bench

#endif // GNNC_BENCH_BATCHED_H
