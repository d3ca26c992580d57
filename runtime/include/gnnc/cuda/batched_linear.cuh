//===- batched_linear.cuh - A batch's fused layer: aggregate, then W -*- CUDA
//-*-===//
//
// The linear epilogue of a batched gnn.spmm (a GCN or GIN layer in one
// launch): the block's rows, aggregated into the shared tile H (Rows x K in
// the element type, rows HStride apart), are multiplied by W (K x M in
// global memory) on tensor cores, Cols result columns at a time; W streams
// through a pipeline of Stages shared buffers of Depth x Cols (cp.async);
// the bias is added and the activation applied to the f32 accumulators
// before the result rows are stored. The tile pieces (copies, fragments,
// mma.sync) are mma_tile.cuh's.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_BATCHED_LINEAR_CUH
#define GNNC_CUDA_BATCHED_LINEAR_CUH

#include "gnnc/cuda/mma_tile.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

/// Zeroes columns K to KPadded of the Rows rows of H, which the
/// aggregation never writes and the last reduction step reads. All threads
/// of the block call it; the caller's __syncthreads() publishes it.
template <typename T, int K, int KPadded, int Rows, int HStride>
__device__ __forceinline__ void gnnc_linear_clear_padding(T *h) {
  constexpr int Pad = KPadded - K;
  if constexpr (Pad > 0)
    for (int i = threadIdx.x; i < Rows * Pad; i += blockDim.x)
      h[(i / Pad) * HStride + K + i % Pad] = T(0.0f);
}

/// Starts copying the weights of the pass from result column col0 (all K
/// rows of Cols columns; TransW: Cols rows of K, W stored M x K) into
/// `wtile` (rows of BStride, zero beyond K and M) and commits them as one
/// group of asynchronous copies. All threads of the block (Threads) call
/// it; a later cp.async wait (gnnc_stage_wait, or the pass's own) and a
/// barrier make them visible.
template <typename T, int K, int KPadded, int M, int Cols, int BStride,
          bool TransW, int Threads>
__device__ __forceinline__ void
gnnc_linear_load_weights(const T *__restrict__ w, T *wtile, int col0) {
  namespace mma = gnnc::cuda::mma;
  if constexpr (TransW)
    mma::copyTileAsync<T, Cols, KPadded, BStride, Threads>(wtile, w, K, col0, M,
                                                           0, K);
  else
    mma::copyTileAsync<T, KPadded, Cols, BStride, Threads>(wtile, w, M, 0, K,
                                                           col0, M);
  mma::commitAsync();
}

/// y[row0 + r] = act(H[r] W + bias) for the block's `rows` rows (at most
/// Rows); with TransW, W is stored M x K (torch.nn.Linear's layout). Every
/// thread of the block (Threads, at least 32 x WarpsM x WarpsN: the warps
/// beyond those only load and wait) calls it after writing its
/// rows of H, with the first pass's weights already requested into `wtile`
/// (gnnc_linear_load_weights from column 0); later passes load their own.
/// M is a multiple of 8; H's columns from K to KPadded hold zeros.
template <typename T, int K, int KPadded, int M, int Rows, int Cols, int WarpsM,
          int WarpsN, int FragsM, int FragsN, int HStride, int BStride,
          bool TransW, bool Bias, bool Relu, int Threads>
__device__ __forceinline__ void
gnnc_batched_linear(const T *h, const T *__restrict__ w,
                    const T *__restrict__ bias, T *__restrict__ y,
                    long long row0, long long rows, T *wtile) {
  namespace mma = gnnc::cuda::mma;
  static_assert(Rows == WarpsM * FragsM * 16 && Cols == WarpsN * FragsN * 8,
                "the warps cover the block tile");
  static_assert(Threads >= 32 * WarpsM * WarpsN, "the tile's warps run");
  static_assert(KPadded % 32 == 0, "H holds whole reduction steps");
  const int warp = threadIdx.x / 32;
  const int m0 = (warp / WarpsN) * FragsM * 16,
            n0 = (warp % WarpsN) * FragsN * 8;
  const int lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  for (int col0 = 0; col0 < M; col0 += Cols) {
    if (col0 > 0) {
      // Every warp is done with the previous pass's weights.
      __syncthreads();
      gnnc_linear_load_weights<T, K, KPadded, M, Cols, BStride, TransW,
                               Threads>(w, wtile, col0);
    }
    // The pass's weights have landed, and (first pass) every row of H.
    mma::waitAsync<0>();
    __syncthreads();
    if (warp >= WarpsM * WarpsN)
      continue; // no part of the tile: on to the next pass's barrier
    float acc[FragsM][FragsN][4];
    mma::zeroAccumulators(acc);
#pragma unroll 1
    for (int k0 = 0; k0 < KPadded; k0 += 32)
      mma::mmaStep<T, FragsM, FragsN, 32, true, TransW, HStride, BStride>(
          acc, h + k0, TransW ? wtile + k0 : wtile + k0 * BStride, m0, n0);
      // The epilogue: bias, activation, the store of the block's rows.
#pragma unroll
    for (int j = 0; j < FragsN; ++j) {
      const int col = col0 + n0 + j * 8 + 2 * t;
      if (col >= M)
        continue;
      float b0 = 0.0f, b1 = 0.0f;
      if constexpr (Bias) {
        b0 = gnnc::cuda::toFloat(bias[col]);
        b1 = gnnc::cuda::toFloat(bias[col + 1]);
      }
#pragma unroll
      for (int i = 0; i < FragsM; ++i) {
        float v[4] = {acc[i][j][0] + b0, acc[i][j][1] + b1, acc[i][j][2] + b0,
                      acc[i][j][3] + b1};
        if constexpr (Relu) {
          // As torch.relu: a NaN stays NaN.
#pragma unroll
          for (int q = 0; q < 4; ++q)
            v[q] = v[q] < 0.0f ? 0.0f : v[q];
        }
        const int r = m0 + i * 16 + g;
        if (r < rows)
          mma::storePair(y + (row0 + r) * M + col, v[0], v[1]);
        if (r + 8 < rows)
          mma::storePair(y + (row0 + r + 8) * M + col, v[2], v[3]);
      }
    }
  }
}

#endif // GNNC_CUDA_BATCHED_LINEAR_CUH
