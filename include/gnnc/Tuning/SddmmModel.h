//===- SddmmModel.h - Predicted time of a gnn.sddmm schedule ----*- C++ -*-===//
//
// A first-principles model of gnnc's gnn.sddmm kernels (form = dot: one
// value per edge, the dot product of the row's and the column's features;
// form = add: width values per edge, their sum; either optionally through a
// leaky_relu), in the terms of the gnn.spmm model (CostModel.h): the
// predicted time is the largest of four lower bounds plus the launch.
//
// vertex_parallel: a group of `dim_workers` lanes owns a row. It loads the
// row's features once into registers, then walks the row's neighbours a
// window of `lanes` at a time (each lane loads one column index), taking
// the window's neighbours one after another with `edge batch` of them
// unrolled (the batch is at most the lanes), gathering each neighbour's
// features and writing the edge's output (dot: after a shuffle reduction
// across the lanes, one coalesced store per window).
//
// edge_parallel: workers of `dim_workers` lanes take equal stretches of
// `edges_per_warp` merge-path items (row ends and edges) and issue the
// column loads of `edge batch` edges at once (SpMM's batch). With f32 (or
// scalar 16-bit) features a worker keeps its current row's features in
// registers and reloads them when an edge passes the row's end, found by
// reading row_ptr as it goes: each row end crossed is a dependent row_ptr
// load and, for a row with edges, a dependent feature load. With packed
// 16-bit vectors (vector_width >= 2) each edge finds its row in the
// stretch's row ends in shared memory and both endpoints' features are
// loaded with the batch. Every edge has its own output, so there is no
// workspace and no second kernel.
//
// The bounds:
//  - bandwidth: CSR arrays once, the row side's features once per row (per
//    row touched by a worker for edge_parallel, in the L2), the column side
//    gathered per edge (the graph analysis' reuse estimate says which part
//    the L2 serves), the outputs written once: one element per edge (dot)
//    or width elements (add);
//  - latency: the longest row's (edge_parallel: the longer of a stretch of
//    edges only and a typical stretch's) chain of dependent loads, plus the
//    load issue and the dot form's shuffle reduction of each batch;
//  - waves: rounds of resident blocks (workers), each a typical block's
//    slowest row (a typical worker's chain);
//  - issue: L1 wavefronts of all loads and stores and the shuffle
//    instructions over the SMs, with vertex_parallel warps running as long
//    as their longest row.
// A dependent load waits the GpuModel's loadedLatencyFactor times its
// unloaded latency in proportion to the share of the GPU's resident warp
// slots the grid fills (a small graph leaves the memory system idle). An
// unpacked edge-parallel warp runs its workers' row ends one after another
// (the branch diverges). Residency comes from register counts that follow
// what the CUDA compiler allocates for these kernels. No constant is fitted
// to measured kernel times; the GPU numbers are the GpuModel's. The
// arithmetic (width multiply-adds per edge against at least width *
// element bytes gathered) is far below the FP32 rate per byte of DRAM
// bandwidth, so no compute bound is modelled; nor is the leaky_relu, which
// moves no bytes.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_SDDMMMODEL_H
#define GNNC_TUNING_SDDMMMODEL_H

#include "gnnc/Tuning/CostModel.h"

#include <string>

namespace gnnc::tuning {

/// Predicts the time of the gnn.sddmm `op` run as `plan` on a graph with
/// profile `profile` (best made with profileOptionsFor; without a reuse
/// estimate every gather is assumed to miss). Prediction::workspaceBytes is
/// 0; Prediction::workers counts edge_parallel workers.
Prediction predictSddmm(const GpuModel &gpu, const graph::GraphProfile &profile,
                        const OpDesc &op, const KernelPlan &plan);

} // namespace gnnc::tuning

#endif // GNNC_TUNING_SDDMMMODEL_H
