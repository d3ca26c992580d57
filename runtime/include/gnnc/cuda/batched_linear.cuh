//===- batched_linear.cuh - A batch's fused layer: aggregate, then W -*- CUDA
//-*-===//
//
// The linear epilogue of a batched gnn.spmm (a GCN or GIN layer in one
// launch): the block's rows, aggregated into the shared tile H (Rows x K in
// the element type, rows HStride apart), are multiplied by W (K x M in
// global memory) on tensor cores. gnnc_batched_linear stages W in shared
// memory, Cols result columns a pass (cp.async), for weights that fit one
// pass; gnnc_batched_linear_streamed has each warp stream its columns of W
// through a small ring of its own for wider ones. The bias is added
// and the activation applied to the f32 accumulators before the result rows
// are stored. The tile pieces (copies, fragments, mma.sync) are
// mma_tile.cuh's.
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

/// The epilogue of a warp's FragsM x FragsN fragments, whose first element
/// is (m0, n0) of the block's result (rows m0.., columns n0.. of M): the
/// bias added and the activation applied to the f32 accumulators, then the
/// rows below `rows` stored to y from row0 on.
template <typename T, int M, int FragsM, int FragsN, bool Bias, bool Relu>
__device__ __forceinline__ void
gnnc_linear_store(const float (&acc)[FragsM][FragsN][4],
                  const T *__restrict__ bias, T *__restrict__ y, long long row0,
                  long long rows, int m0, int n0) {
  namespace mma = gnnc::cuda::mma;
  const int lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int j = 0; j < FragsN; ++j) {
    const int col = n0 + j * 8 + 2 * t;
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
    gnnc_linear_store<T, M, FragsM, FragsN, Bias, Relu>(acc, bias, y, row0,
                                                        rows, m0, col0 + n0);
  }
}

/// y[row0 + r] = act(H[r] W + bias) as gnnc_batched_linear, for weights
/// too large to stage whole: every warp of the block (Threads / 32) takes
/// items of FragsM x 16 rows by FragsN x 8 columns in turn and streams its
/// columns of W (from L2, after the first blocks) through its own ring of
/// Stages shared buffers of one mma step (Step x 8 FragsN, rows of
/// BStride; TransW: 8 FragsN x Step), Stages - 1 steps ahead of its
/// multiplies, with cp.async; only the warp waits for its copies, so no
/// barrier separates the items. Items whose rows all lie beyond `rows` are
/// skipped, and so are a partial item's 16-row fragments beyond them.
/// Every thread calls it after writing its rows of H (it opens with the
/// barrier that publishes them); `ring` holds Threads / 32 rings. H's
/// columns from K to KPadded hold zeros.
template <typename T, int K, int KPadded, int M, int Rows, int FragsM,
          int FragsN, int HStride, int BStride, int Stages, bool TransW,
          bool Bias, bool Relu, int Threads>
__device__ __forceinline__ void
gnnc_batched_linear_streamed(const T *h, const T *__restrict__ w,
                             const T *__restrict__ bias, T *__restrict__ y,
                             long long row0, long long rows, T *ring) {
  namespace mma = gnnc::cuda::mma;
  constexpr int Warps = Threads / 32;
  constexpr int RowGroups = Rows / (16 * FragsM);
  constexpr int Cols = 8 * FragsN;
  constexpr int ColChunks = (M + Cols - 1) / Cols;
  constexpr int Step = mma::Mma<T>::kDepth;
  constexpr int Steps = KPadded / Step;
  constexpr int StageElems = (TransW ? Cols : Step) * BStride;
  constexpr int Chunk = 16 / sizeof(T);
  static_assert(Rows % (16 * FragsM) == 0, "items cover the block's rows");
  static_assert(KPadded % Step == 0, "H holds whole mma steps");
  static_assert((TransW ? Step : Cols) % Chunk == 0,
                "a stage's rows are whole 16-byte chunks");
  __syncthreads(); // every row of H
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T *mine = ring + warp * Stages * StageElems;
  // Requests step `step`'s weights of the item's columns into its stage
  // (zero beyond K and M) and closes the group; past the last step the
  // group is empty, so that every step waits for the same count.
  auto request = [&](int step, int n0) {
    if (step < Steps) {
      T *dst = mine + (step % Stages) * StageElems;
      const int k0 = step * Step;
      constexpr int PerRow = (TransW ? Step : Cols) / Chunk;
      constexpr int Total = (TransW ? Cols : Step) * PerRow;
      for (int c = lane; c < Total; c += 32) {
        const int r = c / PerRow, e = (c % PerRow) * Chunk;
        // TransW: rows are result columns n0 + r along k0 + e; otherwise
        // rows are k0 + r along result columns n0 + e.
        const int k = TransW ? k0 + e : k0 + r, n = TransW ? n0 + r : n0 + e;
        const bool valid = k < K && n < M;
        const T *src = TransW ? w + static_cast<long long>(n) * K + k
                              : w + static_cast<long long>(k) * M + n;
        mma::copyAsync16(dst + r * BStride + e, valid ? src : w, valid);
      }
    }
    mma::commitAsync();
  };
#pragma unroll 1
  for (int item = warp; item < RowGroups * ColChunks; item += Warps) {
    const int m0 = (item % RowGroups) * FragsM * 16;
    const int n0 = (item / RowGroups) * Cols;
    if (m0 >= rows)
      continue;
    float acc[FragsM][FragsN][4];
    mma::zeroAccumulators(acc);
#pragma unroll
    for (int s = 0; s < Stages - 1; ++s)
      request(s, n0);
#pragma unroll 1
    for (int step = 0; step < Steps; ++step) {
      request(step + Stages - 1, n0);
      mma::waitAsync<Stages - 1>();
      __syncwarp();
      const T *b = mine + (step % Stages) * StageElems;
      unsigned bf[FragsN][2];
#pragma unroll
      for (int j = 0; j < FragsN; ++j)
        mma::Fragments<T>::template loadB<TransW, BStride>(bf[j], b, 0, j * 8);
#pragma unroll
      for (int i = 0; i < FragsM; ++i) {
        if (m0 + i * 16 >= rows)
          break;
        unsigned a[4];
        mma::Fragments<T>::template loadA<true, HStride>(a, h, m0 + i * 16,
                                                         step * Step);
#pragma unroll
        for (int j = 0; j < FragsN; ++j)
          mma::Mma<T>::run(acc[i][j], a, bf[j]);
      }
      // Every lane is done with this stage before it is refilled.
      __syncwarp();
    }
    gnnc_linear_store<T, M, FragsM, FragsN, Bias, Relu>(acc, bias, y, row0,
                                                        rows, m0, n0);
  }
  mma::waitAsync<0>();
}

#endif // GNNC_CUDA_BATCHED_LINEAR_CUH
