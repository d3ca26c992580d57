//===- Snapshots.h - gnn-bench's cases on snapshot groups -------*- C++ -*-===//
//
// One case is a series of graph snapshots (an evolving R-MAT graph or a
// temporal dataset), a group size S, an element type and a feature width F.
// On the series' first group of S snapshots it times, after checking each
// kernel against the CPU reference: gnnc's multi-snapshot aggregation
// (gnn.spmm over the group, strategy = sliced, several slice sizes); gnnc's
// general schedules on each snapshot alone, the best per snapshot summed
// over the group; and the fastest cuSPARSE CSR algorithm on one
// block-diagonal graph of the S snapshots (one call for the window). All
// three compute the same sums (reduce = sum, no scaling).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_SNAPSHOTS_H
#define GNNC_BENCH_SNAPSHOTS_H

#include "gnnc/Bench/Bench.h"
#include "gnnc/Bench/Cusparse.h"
#include "gnnc/graph/Snapshots.h"
#include "gnnc/runtime/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace gnnc::bench {

/// A named series: "rmat<scale>c<churn percent>" (an evolving R-MAT graph
/// of 8 snapshots, e.g. rmat18c10) drawn from `seed`, or a temporal set of
/// `datasets` by file stem (temporal_england_covid, temporal_bitcoinalpha).
Expected<graph::SnapshotSeries> loadSnapshotSeries(const std::string &name,
                                                   const std::string &datasets,
                                                   uint64_t seed);

/// Runs one case (see the file comment) and returns its record; a kernel
/// that fails its check is recorded as wrong and not timed, and counts in
/// `failures`. `libraries` may be null (no cuSPARSE).
nlohmann::json runSnapshotCase(Bench &bench, CudaLibraries *libraries,
                               const std::string &name,
                               const graph::SnapshotSeries &series,
                               int64_t groupSize, ElementType type,
                               int64_t width, uint64_t seed, int &failures);

/// The case at the group size tuning::chooseSnapshotGroup picks for the
/// series, type and width (its candidates recorded under "group_choice";
/// "tuned": true); where no size fits, the choice alone.
nlohmann::json runTunedSnapshotCase(Bench &bench, CudaLibraries *libraries,
                                    const std::string &name,
                                    const graph::SnapshotSeries &series,
                                    ElementType type, int64_t width,
                                    uint64_t seed, int &failures);

} // namespace gnnc::bench

#endif // GNNC_BENCH_SNAPSHOTS_H
