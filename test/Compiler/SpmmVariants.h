//===- SpmmVariants.h - Generated gnn.spmm kernels for tests ----*- C++ -*-===//
#ifndef GNNC_TEST_COMPILER_SPMMVARIANTS_H
#define GNNC_TEST_COMPILER_SPMMVARIANTS_H

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::test {

/// One gnn.spmm, gnn.sddmm or gnn.edge_softmax kernel to generate.
struct SpmmVariant {
  std::string type;        // f32, f16, bf16
  int64_t width = 0;       // feature width; edge_softmax: heads (1: 1-D)
  bool values = false;     // spmm: with edge values; sddmm: with leaky ReLU
  std::string offsets;     // i32 or i64
  std::string schedule;    // "" = default, else #gnn.schedule<...> body
  std::string op = "spmm"; // spmm, sddmm_dot, sddmm_add, edge_softmax
  std::string reduce;      // spmm: "" (sum), mean or max
  std::string scale;       // spmm: "" (none), left, right or both
  std::string self;        // spmm: "" (none) or the self_weight, e.g. "0.25"
  /// Names a non-default schedule in the kernel name ("" = "scalar").
  std::string tag;
  /// spmm: 0 (unpadded rows) or the row stride of x and y,
  /// `#gnn.rows<stride = ...>`.
  int64_t stride = 0;
  std::string kernelName() const;
  /// The type of x (and y for spmm and sddmm_add): `tensor<?xWxT>`, with
  /// `#gnn.rows<stride = S>` when padded.
  std::string featureType() const;
};

/// The cross product the tests cover: every type, the widths
/// {1, 3, 16, 32, 41, 64, 128, 256}, with and without edge values, the
/// default schedule and a one-element-per-lane schedule, i64 and (for some)
/// i32 row offsets.
std::vector<SpmmVariant> allSpmmVariants();

/// Edge-parallel gnn.spmm schedules: `kEdgeSchedule` (64 edges per warp,
/// default loads) and `kSmallEdgeSchedule` (8 edges per worker of 8 scalar
/// threads: a long row is split between very many workers).
extern const char *const kEdgeSchedule;
extern const char *const kSmallEdgeSchedule;
/// Edge-parallel with 2-element vectors (a 16-bit pair in one word).
extern const char *const kPairEdgeSchedule;

/// The SDDMM space: dot and add forms, every type and width above, with and
/// without leaky ReLU, the default, the one-element-per-lane and the 64-item
/// edge-parallel schedule (and the 8-item one at widths 3 and 64).
std::vector<SpmmVariant> allSddmmVariants();

/// gnn.spmm with reduce = mean and max and with scale = left, right and
/// both (and mean and max with both): every type, widths {1, 41, 64}, with and
/// without edge values, the default and the one-element-per-lane schedule.
std::vector<SpmmVariant> allScaledSpmmVariants();

/// gnn.edge_softmax: every type, 1 (1-D logits), 4 and 8 heads, the default
/// schedule and one with 8 threads per row and scalar loads, i64 and (for 4
/// heads) i32 row offsets.
std::vector<SpmmVariant> allEdgeSoftmaxVariants();

/// gnn.spmm with f16 accumulation and discretized reduction: f16 features,
/// accumulate = f16 with disc_batch 32 (vertex_parallel and edge_parallel)
/// and 4 (8 edges per worker), sum, mean, mean with GCN scaling and right
/// scaling, widths 3 and 64; and f32 accumulation with disc_batch = 8 (the
/// row factor applied per batch) for every type. Every variant here is
/// accurate at any degree, so the GPU suite checks them all.
std::vector<SpmmVariant> allAccumulateSpmmVariants();

/// gnn.spmm with GIN's self term: every type, widths 1, 3 and 64, sum
/// (vertex_parallel) and mean (edge_parallel, and vertex_parallel with GCN
/// scaling and f16 discretized accumulation).
std::vector<SpmmVariant> allSelfTermSpmmVariants();

/// gnn.spmm with atomic additions: edge_parallel with write = atomic (64 and
/// 8 edges per worker) and neighbor_group (default, and groups of 4 with 8
/// scalar threads in blocks of 64): every type, widths {1, 3, 16, 32, 41, 64,
/// 128, 256}, with and without edge values; mean with GCN scaling, mean with
/// the self term, and f16 discretized accumulation. Their results may differ in
/// the last bits run to run.
std::vector<SpmmVariant> allAtomicSpmmVariants();

/// edge_parallel gnn.spmm with a smaller edge batch than the default (4
/// staged, 2 atomic): every type, widths {1, 3, 16, 32, 41, 64, 128, 256},
/// with and without edge values, and mean with GCN scaling; 512-item
/// stretches in blocks of 128 with a batch of 4 at widths 64 and 128.
std::vector<SpmmVariant> allEdgeBatchSpmmVariants();

/// gnn.spmm with padded rows (`#gnn.rows<stride = ...>`), the last vector
/// of each row partly padding: f16 width 41 stride 48 (vector widths 8 and
/// 2) and width 7 stride 8, f32 width 41 stride 44 (vector width 4), bf16
/// width 3 stride 4 (vector widths 4 and 2); vertex_parallel and
/// edge_parallel (64 and 8 items per worker), with and without edge values,
/// the default schedule, i32 offsets, mean with GCN scaling, max, the self
/// term, f16 accumulation with disc_batch = 32, atomic pieces (8 edges per
/// worker) and neighbour groups of 4.
std::vector<SpmmVariant> allPaddedSpmmVariants();

/// gnn.spmm edge_parallel with write = shared (64 and 8 edges per worker):
/// every type, widths {1, 3, 16, 32, 41, 64, 128, 256}, with and without edge
/// values; mean with GCN scaling, max, and mean with the self term; f16
/// discretized accumulation, and padded rows.
std::vector<SpmmVariant> allSharedMergeSpmmVariants();

/// Kernels that are compiled but not checked on a GPU by the whole-suite
/// checks: a plain f16 running sum (accumulate = f16, disc_batch = 0),
/// whose error grows with the degree (SpmmGpu.F16Accumulation* tests it
/// on its own).
std::vector<SpmmVariant> compileOnlyVariants();

/// All of the above but compileOnlyVariants: allSpmmVariants,
/// allSddmmVariants, allScaledSpmmVariants, allEdgeSoftmaxVariants,
/// allAccumulateSpmmVariants, allSelfTermSpmmVariants,
/// allAtomicSpmmVariants, allPaddedSpmmVariants,
/// allSharedMergeSpmmVariants and allEdgeBatchSpmmVariants.
std::vector<SpmmVariant> allVariants();

/// A .gnn module (`gnn.module @t`) holding one kernel per variant.
std::string spmmModuleText(const std::vector<SpmmVariant> &variants);

} // namespace gnnc::test

#endif // GNNC_TEST_COMPILER_SPMMVARIANTS_H
