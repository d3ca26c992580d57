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
// The host cuts each row's overlap edges into slices of at most SliceSize
// (every row at least one, possibly empty): slice_ptr holds each row's
// first slice, slice_rows each slice's row. A worker of Lanes threads
// takes one slice; lane l owns the chunks l, l + Lanes, ... of VW features
// of the node row, each inside one snapshot (VW divides F). The row's
// first slice also adds, chunk by chunk, the exclusive edges of the
// chunk's snapshot. Mean and left scaling use snapshot s's degree (its
// overlap plus exclusive edges); right scaling reads snapshot s's column
// factors col_norm[s x rows + c]. A row of one slice is stored; the slices
// of a row cut into several are added atomically to the zeros that
// gnnc_snapshot_spmm_zero_split left there.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_SNAPSHOTS_CUH
#define GNNC_CUDA_SNAPSHOTS_CUH

#include "gnnc/cuda/packed16.cuh"

namespace gnnc::cuda {

/// Loads, stores and atomic additions of VW elements of T as floats.
template <typename T> struct SnapshotIo {
  template <int VW>
  static __device__ __forceinline__ void load(const T *p, float *f) {
    gnnc::cuda::load<VW, T>(p, f);
  }
  template <int VW>
  static __device__ __forceinline__ void store(T *p, const float *f) {
    gnnc::cuda::store<VW, T>(p, f);
  }
  template <int VW>
  static __device__ __forceinline__ void atomicAdd(T *p, const float *f) {
    gnnc::cuda::atomicAddFloats<VW, T>(p, f);
  }
};

template <> struct SnapshotIo<float> {
  template <int VW>
  static __device__ __forceinline__ void load(const float *p, float *f) {
    if constexpr (VW == 4) {
      const float4 v = __ldg(reinterpret_cast<const float4 *>(p));
      f[0] = v.x, f[1] = v.y, f[2] = v.z, f[3] = v.w;
    } else if constexpr (VW == 2) {
      const float2 v = __ldg(reinterpret_cast<const float2 *>(p));
      f[0] = v.x, f[1] = v.y;
    } else {
#pragma unroll
      for (int i = 0; i < VW; ++i)
        f[i] = __ldg(p + i);
    }
  }
  template <int VW>
  static __device__ __forceinline__ void store(float *p, const float *f) {
    if constexpr (VW == 4) {
      *reinterpret_cast<float4 *>(p) = make_float4(f[0], f[1], f[2], f[3]);
    } else if constexpr (VW == 2) {
      *reinterpret_cast<float2 *>(p) = make_float2(f[0], f[1]);
    } else {
#pragma unroll
      for (int i = 0; i < VW; ++i)
        p[i] = f[i];
    }
  }
  template <int VW>
  static __device__ __forceinline__ void atomicAdd(float *p, const float *f) {
#pragma unroll
    for (int i = 0; i < VW; ++i)
      ::atomicAdd(p + i, f[i]);
  }
};

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

/// Adds the features of the neighbours in [begin, end) (column indices
/// `cols`) to the lane's chunk `chunk` (of snapshot `snap`), Unroll
/// neighbours' loads in flight at once.
template <typename T, typename Index, int RowLen, int VW, int Unroll,
          bool Right>
__device__ __forceinline__ void
snapshotGather(float *acc, const Index *__restrict__ cols, long long begin,
               long long end, const T *__restrict__ x, int chunk, int snap,
               const float *__restrict__ col_norm, long long num_rows) {
  long long e = begin;
  for (; e + Unroll <= end; e += Unroll) {
    long long c[Unroll];
    float v[Unroll][VW];
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
      c[u] = static_cast<long long>(cols[e + u]);
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
      SnapshotIo<T>::template load<VW>(x + c[u] * RowLen + chunk * VW, v[u]);
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const float w = Right ? __ldg(col_norm + snap * num_rows + c[u]) : 1.0f;
#pragma unroll
      for (int i = 0; i < VW; ++i)
        acc[i] += w * v[u][i];
    }
  }
  for (; e < end; ++e) {
    const long long c = static_cast<long long>(cols[e]);
    float v[VW];
    SnapshotIo<T>::template load<VW>(x + c * RowLen + chunk * VW, v);
    const float w = Right ? __ldg(col_norm + snap * num_rows + c) : 1.0f;
#pragma unroll
    for (int i = 0; i < VW; ++i)
      acc[i] += w * v[i];
  }
}

} // namespace gnnc::cuda

/// The sliced aggregation of one group of S snapshots of F features (see
/// the file comment). One worker of Lanes threads per slice; Unroll
/// neighbours' loads in flight per lane.
template <typename T, int S, int F, int VW, int Lanes, int ChunksPerLane,
          int SliceSize, int Unroll, bool Mean, bool Left, bool Right,
          typename Offset, typename Index>
__device__ __forceinline__ void gnnc_snapshot_spmm_sliced(
    const Offset *__restrict__ row_ptr, const Index *__restrict__ col_idx,
    long long num_rows, const T *__restrict__ x, T *__restrict__ y,
    const float *__restrict__ col_norm, const long long *__restrict__ excl_ptr,
    const Index *__restrict__ excl_idx, const long long *__restrict__ slice_ptr,
    const int *__restrict__ slice_rows, long long num_slices) {
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
  const long long row = slice_rows[slice];
  const long long first = slice_ptr[row];
  const long long slices = slice_ptr[row + 1] - first;
  const long long row_begin = static_cast<long long>(row_ptr[row]);
  const long long row_end = static_cast<long long>(row_ptr[row + 1]);
  const long long begin = row_begin + (slice - first) * SliceSize;
  const long long end = min(begin + SliceSize, row_end);
  float acc[ChunksPerLane][VW];
#pragma unroll
  for (int k = 0; k < ChunksPerLane; ++k)
#pragma unroll
    for (int i = 0; i < VW; ++i)
      acc[k][i] = 0.0f;
  // The overlap edges of the slice, for every snapshot at once.
#pragma unroll
  for (int k = 0; k < ChunksPerLane; ++k) {
    const int chunk = lane + k * Lanes;
    if (Chunks % Lanes != 0 && chunk >= Chunks)
      break;
    snapshotGather<T, Index, RowLen, VW, Unroll, Right>(
        acc[k], col_idx, begin, end, x, chunk, chunk / SnapChunks, col_norm,
        num_rows);
  }
  // The row's first slice adds each snapshot's exclusive edges to that
  // snapshot's chunks.
  if (slice == first) {
#pragma unroll
    for (int k = 0; k < ChunksPerLane; ++k) {
      const int chunk = lane + k * Lanes;
      if (Chunks % Lanes != 0 && chunk >= Chunks)
        break;
      const int snap = chunk / SnapChunks;
      const long long *ptr = excl_ptr + snap * (num_rows + 1);
      snapshotGather<T, Index, RowLen, VW, Unroll, Right>(
          acc[k], excl_idx, ptr[row], ptr[row + 1], x, chunk, snap, col_norm,
          num_rows);
    }
  }
#pragma unroll
  for (int k = 0; k < ChunksPerLane; ++k) {
    const int chunk = lane + k * Lanes;
    if (Chunks % Lanes != 0 && chunk >= Chunks)
      break;
    if constexpr (Mean || Left) {
      const long long *ptr = excl_ptr + (chunk / SnapChunks) * (num_rows + 1);
      const float f = snapshotRowFactor<Mean, Left>(
          (row_end - row_begin) + (ptr[row + 1] - ptr[row]));
#pragma unroll
      for (int i = 0; i < VW; ++i)
        acc[k][i] *= f;
    }
    T *dst = y + row * RowLen + chunk * VW;
    if (slices == 1)
      SnapshotIo<T>::template store<VW>(dst, acc[k]);
    else
      SnapshotIo<T>::template atomicAdd<VW>(dst, acc[k]);
  }
}

/// Sets the rows cut into several slices to 0 before their slices are
/// added: Lanes threads per row, a block per blockDim.x / Lanes rows.
template <typename T, int RowLen, int Lanes>
__device__ __forceinline__ void
gnnc_snapshot_spmm_zero_split(T *__restrict__ y, long long num_rows,
                              const long long *__restrict__ slice_ptr) {
  const long long row =
      static_cast<long long>(blockIdx.x) * (blockDim.x / Lanes) +
      threadIdx.x / Lanes;
  if (row >= num_rows || slice_ptr[row + 1] - slice_ptr[row] <= 1)
    return;
  for (int i = threadIdx.x % Lanes; i < RowLen; i += Lanes)
    y[row * RowLen + i] = T(0.0f);
}

#endif // GNNC_CUDA_SNAPSHOTS_CUH
