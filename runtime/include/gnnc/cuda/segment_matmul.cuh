//===- segment_matmul.cuh - Segmented matmul, tile routed -----*- CUDA -*-===//
//
// gnn.segment_matmul with the tile_routed strategy (FASTEN): Y_t = X_t W_t
// for rows grouped by type. The host lists tiles of at most tile_rows rows
// of one type in a routing table (type, first row, end row; tiles of one
// type adjacent). Each persistent block walks a contiguous run of the table
// and stages its current type's K x M weights in shared memory once for
// all of that type's tiles in its run. Sub-warps of Lanes threads take one
// result row at a time; lane l owns the chunks l, l + Lanes, ... of VW
// columns each and accumulates over K in f32, reading the input row from
// global memory (every lane of a row reads the same element: a broadcast).
//
// This is the SIMT version: no tensor cores, no K-blocking (the whole W_t
// is staged), no pipelining of the next tile's loads.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_SEGMENT_MATMUL_CUH
#define GNNC_CUDA_SEGMENT_MATMUL_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace gnnc::cuda {

__device__ __forceinline__ float segmentToFloat(float v) { return v; }
__device__ __forceinline__ float segmentToFloat(__half v) {
  return __half2float(v);
}
__device__ __forceinline__ float segmentToFloat(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T> struct SegmentFromFloat;
template <> struct SegmentFromFloat<float> {
  static __device__ __forceinline__ float get(float v) { return v; }
};
template <> struct SegmentFromFloat<__half> {
  static __device__ __forceinline__ __half get(float v) {
    return __float2half_rn(v);
  }
};
template <> struct SegmentFromFloat<__nv_bfloat16> {
  static __device__ __forceinline__ __nv_bfloat16 get(float v) {
    return __float2bfloat16_rn(v);
  }
};

} // namespace gnnc::cuda

/// The words of one tile of the routing table: type, first row, end row
/// (gnnc::kRouteTileWords on the host).
#define GNNC_ROUTE_TILE_WORDS 3

/// Y_t = X_t W_t over the tiles of `tiles` (num_tiles of them) that this
/// block takes: x holds K elements per row, w num_types matrices of K x M,
/// y M elements per row; w_tile is K x M elements of shared memory. Threads
/// is the block's size, Lanes the threads of a row (a power of two that
/// divides Threads), ChunksPerLane the VW-column chunks of a lane.
template <typename T, int K, int M, int Threads, int Lanes, int VW,
          int ChunksPerLane>
__device__ __forceinline__ void gnnc_segment_matmul_routed(
    const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ y,
    const long long *__restrict__ tiles, long long num_tiles, T *w_tile) {
  using gnnc::cuda::segmentToFloat;
  static_assert(Threads % Lanes == 0, "a block holds whole sub-warps");
  constexpr int Rows = Threads / Lanes;
  const long long blocks = gridDim.x;
  const long long first = (long long)blockIdx.x * num_tiles / blocks;
  const long long last = ((long long)blockIdx.x + 1) * num_tiles / blocks;
  const int sub = threadIdx.x / Lanes, lane = threadIdx.x % Lanes;
  long long staged = -1;
  for (long long i = first; i < last; ++i) {
    const long long *tile = tiles + i * GNNC_ROUTE_TILE_WORDS;
    const long long type = tile[0], r0 = tile[1], r1 = tile[2];
    if (type != staged) {
      // Every thread is done with the previous type's weights.
      __syncthreads();
      const T *wt = w + type * (long long)K * M;
      for (int e = threadIdx.x; e < K * M; e += Threads)
        w_tile[e] = wt[e];
      __syncthreads();
      staged = type;
    }
    for (long long r = r0 + sub; r < r1; r += Rows) {
      float acc[ChunksPerLane * VW];
#pragma unroll
      for (int a = 0; a < ChunksPerLane * VW; ++a)
        acc[a] = 0.0f;
      const T *xr = x + r * K;
      for (int k = 0; k < K; ++k) {
        const float xv = segmentToFloat(xr[k]);
        const T *wk = w_tile + k * M;
#pragma unroll
        for (int j = 0; j < ChunksPerLane; ++j) {
          const int c0 = (lane + j * Lanes) * VW;
          if (c0 < M) {
#pragma unroll
            for (int v = 0; v < VW; ++v)
              acc[j * VW + v] += xv * segmentToFloat(wk[c0 + v]);
          }
        }
      }
      T *yr = y + r * M;
#pragma unroll
      for (int j = 0; j < ChunksPerLane; ++j) {
        const int c0 = (lane + j * Lanes) * VW;
        if (c0 < M) {
#pragma unroll
          for (int v = 0; v < VW; ++v)
            yr[c0 + v] = gnnc::cuda::SegmentFromFloat<T>::get(acc[j * VW + v]);
        }
      }
    }
  }
}

#endif // GNNC_CUDA_SEGMENT_MATMUL_CUH
