//===- snapshots.cuh - Aggregation over a group of snapshots --*- CUDA -*-===//
//
// gnn.spmm over a group of S snapshots of one node set (snapshot_csr) with
// the sliced strategy (PiPAD). The group is the CSR of the edges every
// snapshot shares (the overlap) plus each snapshot's exclusive edges
// (excl_ptr: S x (rows + 1) offsets into one array excl_idx). A node's
// feature row holds the S snapshots' F features side by side, so one pass
// over an overlap edge gathers S x F contiguous features: the structure is
// read once for the group and every gather moves S times as many bytes.
//
// The kernel walks a table of work items (slice_begin, slice_rows; built
// on the GPU by snapshot_slices.cuh, or on the host by the same rules):
// slices of at most SliceSize of a row's overlap edges (every row at least
// one, possibly empty), then slices of one snapshot's exclusive edges of a
// row.
// A worker of Lanes threads takes one item; lane l owns the chunks l,
// l + Lanes, ... of VW features of the node row, each inside one snapshot
// (VW divides F). On a slice of overlap edges every lane gathers its chunks
// for every edge; the row's first slice also adds, chunk by chunk, the
// first SliceSize exclusive edges of the chunk's snapshot. On a slice of
// snapshot s's exclusive edges the lanes of the chunks of snapshot g take
// every S-th edge from the g-th, gathering snapshot s's features: all
// lanes busy, S gathers in flight. So a row with thousands of exclusive
// edges (a hub of a power-law graph) is spread over many workers instead
// of one. Mean and left scaling use snapshot s's degree (its overlap plus
// exclusive edges); right scaling reads snapshot s's column factors
// col_norm[s x rows + c]. A row with one work item is stored; the items of
// a row with several (flag Split) are added atomically to the zeros that
// gnnc_snapshot_spmm_zero_split left there (the table lists those rows'
// first slices at the front, so that a group without any needs no
// zeroing launch).
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_SNAPSHOTS_CUH
#define GNNC_CUDA_SNAPSHOTS_CUH

#include "gnnc/cuda/element_io.cuh"

namespace gnnc::cuda {

/// The row factor of a row of `deg` edges: 1/deg for mean times
/// 1/sqrt(deg) for left scaling; 0 for an empty row.
template <bool Mean, bool Left>
__device__ __forceinline__ float snapshotRowFactor(long long deg) {
  if (deg == 0)
    return 0.0f;
  float f = 1.0f;
  if constexpr (Mean)
    f = 1.0f / static_cast<float>(deg);
  if constexpr (Left)
    f *= rsqrtf(static_cast<float>(deg));
  return f;
}

/// Adds to the lane's accumulators `acc` the features of the neighbours
/// cols[e] for e = begin, begin + Stride, ... below end, Unroll
/// neighbours' loads in flight at once. `element` is the first feature of
/// the chunk in a node's row; `snap` the snapshot whose column factors
/// apply.
template <typename T, typename Index, int RowLen, int VW, int Unroll,
          bool Right, int Stride = 1>
__device__ __forceinline__ void
snapshotGather(float *acc, const Index *__restrict__ cols, long long begin,
               long long end, const T *__restrict__ x, int element, int snap,
               const float *__restrict__ col_norm, long long num_rows) {
  long long e = begin;
  for (; e + (Unroll - 1) * Stride < end; e += Unroll * Stride) {
    long long c[Unroll];
    float v[Unroll][VW];
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
      c[u] = static_cast<long long>(cols[e + u * Stride]);
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
      ElementIo<T>::template load<VW>(x + c[u] * RowLen + element, v[u]);
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const float w = Right ? __ldg(col_norm + snap * num_rows + c[u]) : 1.0f;
#pragma unroll
      for (int k = 0; k < VW; ++k)
        acc[k] += w * v[u][k];
    }
  }
  for (; e < end; e += Stride) {
    const long long c = static_cast<long long>(cols[e]);
    float v[VW];
    ElementIo<T>::template load<VW>(x + c * RowLen + element, v);
    const float w = Right ? __ldg(col_norm + snap * num_rows + c) : 1.0f;
#pragma unroll
    for (int k = 0; k < VW; ++k)
      acc[k] += w * v[k];
  }
}

/// Calls f(k, chunk) for the lane's chunks chunk = lane + k x Lanes of a
/// row of Chunks chunks (k below ChunksPerLane), unrolled.
template <int ChunksPerLane, int Lanes, int Chunks, typename F>
__device__ __forceinline__ void forEachLaneChunk(int lane, F &&f) {
#pragma unroll
  for (int k = 0; k < ChunksPerLane; ++k) {
    const int chunk = lane + k * Lanes;
    if (Chunks % Lanes != 0 && chunk >= Chunks)
      break;
    f(k, chunk);
  }
}

} // namespace gnnc::cuda

/// The sliced aggregation of one group of S snapshots of F features (see
/// the file comment). One worker of Lanes threads per work item; Unroll
/// neighbours' loads in flight per lane. A work item is its first edge
/// (slice_begin) and its word: the row in the low 32 bits, snapshot + 1
/// from bit SnapShift (16 bits), the item's edge count from bit LenShift
/// (13 bits), and the flags First and Split.
template <typename T, int S, int F, int VW, int Lanes, int ChunksPerLane,
          int SliceSize, int Unroll, bool Mean, bool Left, bool Right,
          int SnapShift, int LenShift, long long First, long long Split,
          typename Offset, typename Index>
__device__ __forceinline__ void gnnc_snapshot_spmm_sliced(
    const Offset *__restrict__ row_ptr, const Index *__restrict__ col_idx,
    long long num_rows, const T *__restrict__ x, T *__restrict__ y,
    const float *__restrict__ col_norm, const long long *__restrict__ excl_ptr,
    const Index *__restrict__ excl_idx,
    const long long *__restrict__ slice_begin,
    const long long *__restrict__ slice_rows, long long num_slices) {
  using namespace gnnc::cuda;
  constexpr int RowLen = S * F;
  constexpr int Chunks = RowLen / VW;
  constexpr int SnapChunks = F / VW;
  const long long slice =
      static_cast<long long>(blockIdx.x) * (blockDim.x / Lanes) +
      threadIdx.x / Lanes;
  const int lane = threadIdx.x % Lanes;
  if (slice >= num_slices)
    return;
  const long long word = slice_rows[slice];
  const long long row = word & 0xffffffffll;
  const int snapPlusOne = static_cast<int>((word >> SnapShift) & 0xffff);
  const long long length = (word >> LenShift) & 0x1fff;
  const bool split = (word & Split) != 0;
  const long long begin = slice_begin[slice];
  float acc[ChunksPerLane][VW];
#pragma unroll
  for (int k = 0; k < ChunksPerLane; ++k)
#pragma unroll
    for (int i = 0; i < VW; ++i)
      acc[k][i] = 0.0f;
  auto chunks = [&](auto &&f) {
    forEachLaneChunk<ChunksPerLane, Lanes, Chunks>(lane, f);
  };
  if (snapPlusOne == 0) {
    // Shared edges, for every snapshot at once.
    chunks([&](int k, int chunk) {
      snapshotGather<T, Index, RowLen, VW, Unroll, Right>(
          acc[k], col_idx, begin, begin + length, x, chunk * VW,
          chunk / SnapChunks, col_norm, num_rows);
    });
    // The row's first slice adds the first SliceSize exclusive edges of
    // each chunk's snapshot (exclusive slices take the rest).
    if (word & First)
      chunks([&](int k, int chunk) {
        const int snap = chunk / SnapChunks;
        const long long *ptr = excl_ptr + snap * (num_rows + 1);
        const long long e0 = ptr[row];
        snapshotGather<T, Index, RowLen, VW, Unroll, Right>(
            acc[k], excl_idx, e0, min(e0 + SliceSize, ptr[row + 1]), x,
            chunk * VW, snap, col_norm, num_rows);
      });
  } else {
    // Snapshot s's exclusive edges: the lanes of snapshot g's chunks take
    // every S-th edge from the g-th, gathering snapshot s's features.
    const int s = snapPlusOne - 1;
    chunks([&](int k, int chunk) {
      const int g = chunk / SnapChunks;
      snapshotGather<T, Index, RowLen, VW, Unroll, Right, S>(
          acc[k], excl_idx, begin + g, begin + length, x,
          s * F + (chunk - g * SnapChunks) * VW, s, col_norm, num_rows);
    });
  }
  chunks([&](int k, int chunk) {
    const int g = chunk / SnapChunks;
    // The snapshot the chunk's sums belong to, and where they go.
    const int snap = snapPlusOne == 0 ? g : snapPlusOne - 1;
    const int element = snapPlusOne == 0
                            ? chunk * VW
                            : snap * F + (chunk - g * SnapChunks) * VW;
    if constexpr (Mean || Left) {
      const long long *ptr = excl_ptr + snap * (num_rows + 1);
      const float f = snapshotRowFactor<Mean, Left>(
          static_cast<long long>(row_ptr[row + 1] - row_ptr[row]) +
          (ptr[row + 1] - ptr[row]));
#pragma unroll
      for (int i = 0; i < VW; ++i)
        acc[k][i] *= f;
    }
    T *dst = y + row * RowLen + element;
    if (split)
      ElementIo<T>::template atomicAdd<VW>(dst, acc[k]);
    else
      ElementIo<T>::template store<VW>(dst, acc[k]);
  });
}

/// Sets the rows with several work items to 0 before the items are added:
/// the table lists their first slices (flags First and Split) at the front
/// of the work items, `num_split` of them. Lanes threads per row, a block
/// per blockDim.x / Lanes rows.
template <typename T, int RowLen, int Lanes, long long First, long long Split>
__device__ __forceinline__ void
gnnc_snapshot_spmm_zero_split(T *__restrict__ y,
                              const long long *__restrict__ slice_rows,
                              long long num_split) {
  const long long slice =
      static_cast<long long>(blockIdx.x) * (blockDim.x / Lanes) +
      threadIdx.x / Lanes;
  if (slice >= num_split)
    return;
  const long long word = slice_rows[slice];
  const long long row = word & 0xffffffffll;
  for (int i = threadIdx.x % Lanes; i < RowLen; i += Lanes)
    y[row * RowLen + i] = T(0.0f);
}

#endif // GNNC_CUDA_SNAPSHOTS_CUH
