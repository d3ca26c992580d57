//===- KernelLimits.h - Limits of gnnc's generated kernels ------*- C++ -*-===//
//
// The limits the schedule verifier and the lowering enforce and the cost
// models mirror, in one place (plain constants, no MLIR).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_DIALECTS_GNN_KERNELLIMITS_H
#define GNNC_DIALECTS_GNN_KERNELLIMITS_H

#include <cstdint>

namespace gnnc::limits {

/// Most accumulators (floats) one thread keeps in registers.
constexpr int64_t kMaxAccumulatorsPerThread = 128;
/// Most neighbours whose feature loads a thread keeps in flight, and most
/// registers (floats) those loads may occupy.
constexpr int64_t kMaxEdgeBatch = 8;
constexpr int64_t kMaxPrefetchRegisters = 64;
/// Most heads gnn.edge_softmax keeps (a running maximum and sum each) per
/// thread.
constexpr int64_t kMaxSoftmaxHeads = 64;
/// Most dynamic shared memory per block a kernel may ask for.
constexpr int64_t kMaxSharedBytes = 96 * 1024;
/// What one SM holds on sm_80 and sm_90 (sm_90 has 228 KiB of shared
/// memory per SM, sm_80 164 KiB; 1 KiB of it per block is reserved).
constexpr int64_t kMaxThreadsPerSm = 2048;
constexpr int64_t kMaxSharedBytesPerSm = 160 * 1024;
/// Most merge-path items per edge_parallel worker (`edges_per_warp`) and
/// neighbours per group (`group_size`).
constexpr int32_t kMaxEdgesPerWorker = 1 << 20;
/// Most blocks per SM a schedule may ask for (`blocks_per_sm`).
constexpr int32_t kMaxBlocksPerSm = 32;

} // namespace gnnc::limits

#endif // GNNC_DIALECTS_GNN_KERNELLIMITS_H
