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
// gnnc_segment_matmul_routed is the SIMT version (exact f32 arithmetic):
// no K-blocking (the whole W_t is staged), no pipelining. With TransW it
// computes the input gradient, dX_t = dY_t W_tᵀ, reading the staged W_t
// transposed.
//
// gnnc_segment_matmul_mma is the tensor-core version (gnnc/cuda/
// mma_tile.cuh): a work item is (routing tile, column block); the block's
// warps multiply 16 x 8 fragments of the tile with mma.sync while cp.async
// brings the next K steps of X and W_t into a pipeline of Stages buffers
// that runs on across the block's items (mma::pipelineItems): the first
// steps of the next tile load while the last of this one multiply.
// TransW reads W_t transposed from its stored layout (no transposed copy).
// A block takes a contiguous run of items where W_t stays resident, and
// every gridDim.x-th item where it streams (RouteRun).
//
// gnnc_segment_matmul_wgmma does the same with Hopper's warpgroup
// instructions; TF32 there reads W_t K-major only, so an f32 forward first
// leaves a transposed, TF32-rounded copy in the workspace
// (gnnc_segment_transpose_weights, the kernel's prelude).
//
// The weight gradient, dW_t = X_tᵀ dY_t, takes the routing table as splits
// of each type's rows: gnnc_segment_weight_grad_mma (tensor cores),
// gnnc_segment_weight_grad_wgmma (warpgroups; f16, bf16) or
// gnnc_segment_weight_grad_simt leaves each split's K x M partial in f32,
// and gnnc_segment_weight_grad_reduce adds each type's partials, lanes of
// a block over the splits where types have many, the lanes' sums in a
// fixed order (deterministic, no atomics), writing zeros for a type
// without rows.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_SEGMENT_MATMUL_CUH
#define GNNC_CUDA_SEGMENT_MATMUL_CUH

#include "gnnc/cuda/mma_tile.cuh"
#include "gnnc/cuda/segment_reduce.cuh"
#include "gnnc/cuda/wgmma_tile.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace gnnc::cuda {

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
/// divides Threads), ChunksPerLane the VW-column chunks of a lane. With
/// TransW each of w's matrices is stored M x K and read transposed.
template <typename T, int K, int M, int Threads, int Lanes, int VW,
          int ChunksPerLane, bool TransW = false>
__device__ __forceinline__ void gnnc_segment_matmul_routed(
    const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ y,
    const long long *__restrict__ tiles, long long num_tiles, T *w_tile) {
  using gnnc::cuda::toFloat;
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
        const float xv = toFloat(xr[k]);
        const T *wk = w_tile + k * M;
#pragma unroll
        for (int j = 0; j < ChunksPerLane; ++j) {
          const int c0 = (lane + j * Lanes) * VW;
          if (c0 < M) {
#pragma unroll
            for (int v = 0; v < VW; ++v)
              acc[j * VW + v] +=
                  xv * toFloat(TransW ? w_tile[(c0 + v) * K + k] : wk[c0 + v]);
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

namespace gnnc::cuda {

/// The run of `items` work items that this block takes: [first, last).
__device__ __forceinline__ void routedRun(long long items, long long &first,
                                          long long &last) {
  const long long blocks = gridDim.x;
  first = (long long)blockIdx.x * items / blocks;
  last = ((long long)blockIdx.x + 1) * items / blocks;
}

/// The forward's work items that this block takes, in order: with the
/// weights resident (Interleaved false), a contiguous run, so that a block
/// stages each type's weights once per run; with the weights streamed, every
/// gridDim.x-th item from blockIdx.x, so that the blocks running at once
/// work on neighbouring tiles (mostly one type) and find the weights they
/// stream, and the X tile of the column block beside theirs, in L2. (On
/// contiguous runs the blocks are spread over the whole table: with AM's
/// 266 types of 256 x 256 TF32 weights, 68 MB, each tile read its weights
/// from DRAM again.) pipelineItems walks j in [first, last); item(j) is the
/// work item.
template <bool Interleaved> struct RouteRun {
  long long first = 0, last = 0;
  __device__ __forceinline__ explicit RouteRun(long long items) {
    if constexpr (Interleaved)
      last = (long long)blockIdx.x < items
                 ? (items - blockIdx.x + gridDim.x - 1) / gridDim.x
                 : 0;
    else
      routedRun(items, first, last);
  }
  __device__ __forceinline__ long long item(long long j) const {
    return Interleaved ? (long long)blockIdx.x + j * gridDim.x : j;
  }
  /// The item after item(j), or -1 where j is the run's last.
  __device__ __forceinline__ long long after(long long j) const {
    return j + 1 < last ? item(j + 1) : -1;
  }
};

/// The first tile of the routing table (num_tiles tiles) whose type is at
/// least `type`.
__device__ __forceinline__ long long
firstTileOfType(const long long *__restrict__ tiles, long long num_tiles,
                long long type) {
  long long lo = 0, hi = num_tiles;
  while (lo < hi) {
    const long long mid = (lo + hi) / 2;
    if (tiles[mid * GNNC_ROUTE_TILE_WORDS] < type)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/// A forward work item of the tensor-core kernels, (routing tile, column
/// block of Cols): item / ColBlocks and item % ColBlocks, read from the
/// routing table once per item (the producer and the consumer each keep
/// one, since the producer runs Stages - 1 steps ahead). Reading an item
/// also loads the entry of the one after it (`after`, or -1 past the
/// block's run) into registers, so that moving on does not wait: an item
/// is a few steps long, and loading its entry only when it started held
/// every warp of the block for an L2 round trip per item.
template <int ColBlocks, int Cols> struct RouteItem {
  long long item = -1, type = 0, rowBegin = 0, rowEnd = 0, col0 = 0;
  /// The routing tile loaded ahead and its entry.
  long long aheadTile = -1, aheadType = 0, aheadBegin = 0, aheadEnd = 0;
  /// Moves to `next` (nothing to read when it is the current item).
  __device__ __forceinline__ void read(const long long *__restrict__ tiles,
                                       long long next, long long after) {
    if (next == item)
      return;
    const long long tile = next / ColBlocks;
    if (tile != aheadTile)
      loadAhead(tiles, tile);
    type = aheadType;
    rowBegin = aheadBegin;
    rowEnd = aheadEnd;
    col0 = (next % ColBlocks) * Cols;
    item = next;
    if (after >= 0 && after / ColBlocks != tile)
      loadAhead(tiles, after / ColBlocks);
  }
  /// W_t's column block of the item: type x ColBlocks + block.
  __device__ __forceinline__ long long weightBlock() const {
    return type * ColBlocks + col0 / Cols;
  }

private:
  __device__ __forceinline__ void loadAhead(const long long *__restrict__ tiles,
                                            long long tile) {
    const long long *entry = tiles + tile * GNNC_ROUTE_TILE_WORDS;
    aheadType = entry[0];
    aheadBegin = entry[1];
    aheadEnd = entry[2];
    aheadTile = tile;
  }
};

/// Restages a block's resident weights when the current item's weight
/// block `key` is not the one `staged`: copy() issues the copies, then the
/// block waits for them (fenced for the async proxy with AsyncReads, whose
/// tensor cores read them: wgmma) and for each other. Every thread calls
/// it with the same key, once no thread still reads the old weights.
template <bool AsyncReads, typename Copy>
__device__ __forceinline__ void restageOnChange(long long &staged,
                                                long long key, Copy copy) {
  if (key == staged)
    return;
  copy();
  mma::commitAsync();
  mma::waitAsync<0>();
  if constexpr (AsyncReads)
    wgmma::fenceAsyncShared();
  __syncthreads();
  staged = key;
}

/// The weight gradient's work items on tensor cores: (split of the routing
/// table, block of the K x M result), Blocks result blocks a split. With at
/// least Blocks blocks the grid runs in groups of Blocks, block b of a
/// group taking result block b of each split in the group's run: the
/// group's blocks read the same split's rows at about the same time, so
/// that all but one find them in L2 (walking all of a split's result
/// blocks one after another, a block read the split from DRAM once per
/// row block or column block). The runs are the host's partition after the
/// tiles (ops::uploadRouteTable: the groups G, then each group's first
/// tile and the end), which gives every group about the same rows and
/// splits; a table partitioned for other groups than the grid's falls back
/// on runs of equal counts. Fewer blocks walk the items in turn.
template <int Blocks> struct WeightGradItems {
  bool grouped;
  int resultBlock, perItem;
  long long first = 0, last = 0;
  __device__ __forceinline__
  WeightGradItems(const long long *__restrict__ tiles, long long num_tiles) {
    grouped = gridDim.x >= Blocks;
    resultBlock = grouped ? (int)(blockIdx.x % Blocks) : 0;
    perItem = grouped ? 1 : Blocks;
    if (grouped) {
      const long long groups = gridDim.x / Blocks, group = blockIdx.x / Blocks;
      const long long *runs = tiles + num_tiles * GNNC_ROUTE_TILE_WORDS;
      const bool partitioned = runs[0] == groups;
      if (group < groups) {
        first = partitioned ? runs[1 + group] : group * num_tiles / groups;
        last = partitioned ? runs[2 + group] : (group + 1) * num_tiles / groups;
      }
    } else {
      routedRun(num_tiles * Blocks, first, last);
    }
  }
  /// The item's split (its routing tile) and result block.
  __device__ __forceinline__ long long split(long long item) const {
    return item / perItem;
  }
  __device__ __forceinline__ int block(long long item) const {
    return grouped ? resultBlock : (int)(item % Blocks);
  }
  /// The item's routing tile: type, first row, end row.
  __device__ __forceinline__ const long long *
  tile(const long long *__restrict__ tiles, long long item) const {
    return tiles + split(item) * GNNC_ROUTE_TILE_WORDS;
  }
  /// The item's steps of Depth rows (at least one).
  template <int Depth>
  __device__ __forceinline__ int steps(const long long *__restrict__ tiles,
                                       long long item) const {
    const long long *t = tile(tiles, item);
    return (int)((t[2] - t[1] + Depth - 1) / Depth);
  }
  /// The first row and column of the item's Rows x Cols result block, of
  /// ColBlocks column blocks.
  template <int Rows, int Cols, int ColBlocks>
  __device__ __forceinline__ void origin(long long item, long long &i0,
                                         long long &j0) const {
    const int b = block(item);
    i0 = (long long)(b / ColBlocks) * Rows;
    j0 = (long long)(b % ColBlocks) * Cols;
  }
};

} // namespace gnnc::cuda

/// Y_t = X_t W_t (or X_t W_tᵀ with TransW) on tensor cores. x holds KIn
/// elements per row, y NOut; w num_types matrices of KIn x NOut (TransW:
/// NOut x KIn). A work item is (routing tile, column block of Cols);
/// WarpsM x WarpsN warps of FragsM x FragsN fragments cover the tile's
/// Rows x Cols. `smem` holds Stages buffers of an X tile (Rows x Depth,
/// rows of AStride) and, unless ResidentW, a W_t tile (Depth x Cols, rows
/// of BStride; TransW: Cols x Depth). With ResidentW the column block of
/// W_t (KIn x Cols, rows of BStride; TransW: Cols x KIn) lies before the
/// buffers (KIn rounded up to whole steps, zero-filled) and is staged when
/// an item's type or column block differs from the previous item's. KIn
/// and NOut are multiples of 8.
template <typename T, int KIn, int NOut, bool TransW, int Rows, int Cols,
          int WarpsM, int WarpsN, int FragsM, int FragsN, int Depth, int Stages,
          int AStride, int BStride, bool ResidentW = false>
__device__ __forceinline__ void
gnnc_segment_matmul_mma(const T *__restrict__ x, const T *__restrict__ w,
                        T *__restrict__ y, const long long *__restrict__ tiles,
                        long long num_tiles, unsigned char *smem) {
  namespace mma = gnnc::cuda::mma;
  constexpr int Threads = 32 * WarpsM * WarpsN;
  static_assert(Rows == WarpsM * FragsM * 16 && Cols == WarpsN * FragsN * 8,
                "the warps cover the block tile");
  static_assert(Stages >= 2, "the pipeline has at least two buffers");
  constexpr int ColBlocks = (NOut + Cols - 1) / Cols;
  constexpr int Steps = (KIn + Depth - 1) / Depth;
  constexpr int AElements = Rows * AStride;
  constexpr int BElements = ResidentW ? 0 : (TransW ? Cols : Depth) * BStride;
  // Resident weights cover whole steps (rows past KIn zero-filled).
  constexpr int KSteps = Steps * Depth;
  constexpr int WElements = ResidentW ? (TransW ? Cols : KSteps) * BStride : 0;
  T *resident = reinterpret_cast<T *>(smem);
  T *buffers = resident + WElements;
  const int warp = threadIdx.x / 32;
  const int m0 = (warp / WarpsN) * FragsM * 16,
            n0 = (warp % WarpsN) * FragsN * 8;
  const gnnc::cuda::RouteRun<!ResidentW> run(num_tiles * ColBlocks);
  // The producer's item and the consumer's (read at its first step).
  gnnc::cuda::RouteItem<ColBlocks, Cols> loading, current;
  // The column block of W_t now resident (RouteItem::weightBlock).
  long long staged = -1;
  float acc[FragsM][FragsN][4];
  mma::pipelineItems<Stages>(
      run.first, run.last, [](long long) { return Steps; },
      [&](long long j, int step, int slot) {
        loading.read(tiles, run.item(j), run.after(j));
        T *a = buffers + slot * (AElements + BElements);
        const long long k0 = (long long)step * Depth;
        mma::copyTileAsync<T, Rows, Depth, AStride, Threads>(
            a, x, KIn, loading.rowBegin, loading.rowEnd, k0, KIn);
        if constexpr (!ResidentW) {
          T *b = a + AElements;
          const T *wt = w + loading.type * (long long)KIn * NOut;
          if constexpr (TransW)
            mma::copyTileAsync<T, Cols, Depth, BStride, Threads>(
                b, wt, KIn, loading.col0, NOut, k0, KIn);
          else
            mma::copyTileAsync<T, Depth, Cols, BStride, Threads>(
                b, wt, NOut, k0, KIn, loading.col0, NOut);
        }
      },
      [&](long long j, int step, int slot) {
        const T *a = buffers + slot * (AElements + BElements);
        if (step == 0) {
          mma::zeroAccumulators(acc);
          current.read(tiles, run.item(j), run.after(j));
          if constexpr (ResidentW) {
            // Every warp is past the previous step (pipelineItems waits
            // for the block before each step), so the block may restage.
            gnnc::cuda::restageOnChange<false>(
                staged, current.weightBlock(), [&] {
                  const T *wt = w + current.type * (long long)KIn * NOut;
                  if constexpr (TransW)
                    mma::copyTileAsync<T, Cols, KSteps, BStride, Threads>(
                        resident, wt, KIn, current.col0, NOut, 0, KIn);
                  else
                    mma::copyTileAsync<T, KSteps, Cols, BStride, Threads>(
                        resident, wt, NOut, 0, KIn, current.col0, NOut);
                });
          }
        }
        if constexpr (ResidentW) {
          const T *b = TransW ? resident + step * Depth
                              : resident + step * Depth * BStride;
          mma::mmaStep<T, FragsM, FragsN, Depth, true, TransW, AStride,
                       BStride>(acc, a, b, m0, n0);
        } else {
          mma::mmaStep<T, FragsM, FragsN, Depth, true, TransW, AStride,
                       BStride>(acc, a, a + AElements, m0, n0);
        }
      },
      [&](long long) {
        mma::storeFragmentsWide<T, FragsM, FragsN>(
            y, NOut, acc, current.rowBegin + m0, current.rowEnd,
            current.col0 + n0, NOut);
      });
}

/// Y_t = X_t W_t (or X_t W_tᵀ with TransW) with Hopper's warpgroup
/// tensor-core instructions (gnnc/cuda/wgmma_tile.cuh; sm_90a): as
/// gnnc_segment_matmul_mma, a work item is (routing tile, column block of
/// Cols) and cp.async brings steps of the reduction (Depth: one 128-byte
/// row, 64 halves or 32 floats) through Stages buffers; here each
/// warpgroup (128 threads) owns 64 rows of the Rows x Cols block and
/// multiplies them with wgmma m64n64 (k16 halves, or k8 floats as TF32), A
/// and B read by the tensor cores from 128-byte-swizzled shared tiles (no
/// ldmatrix, no per-fragment instructions). A buffer holds X's Rows x Depth
/// tile and W_t's step: Cols / 64 panels of Depth reduction rows x 64
/// columns (N-major), or with TransW Cols rows of Depth reduction elements
/// (K-major; TF32 takes only this, so f32 forwards read the transposed
/// copy gnnc_segment_transpose_weights leaves). With ResidentW the column
/// block's whole reduction lies before the buffers as one such step after
/// another, staged when an item's type or column block changes. `smem`
/// must hold 1024 bytes more than the tiles (the tiles start on 1024
/// bytes). KIn is a multiple of Depth, NOut of 64; Threads is 128 per 64
/// rows.
template <typename T, int KIn, int NOut, bool TransW, int Rows, int Cols,
          int Depth, int Threads, int Stages, bool ResidentW = false>
__device__ __forceinline__ void
gnnc_segment_matmul_wgmma(const T *__restrict__ x, const T *__restrict__ w,
                          T *__restrict__ y,
                          const long long *__restrict__ tiles,
                          long long num_tiles, unsigned char *smem) {
  namespace mma = gnnc::cuda::mma;
  namespace wg = gnnc::cuda::wgmma;
  wg::requireWgmma<T>();
  static_assert(sizeof(T) == 2 || TransW,
                "TF32 wgmma reads W_t K-major: f32 forwards take the "
                "transposed copy (gnnc_segment_transpose_weights)");
  constexpr int KStep = wg::Wgmma<T>::kK;
  // The plan's tile (segmentMmaTile) against the instruction's layout.
  static_assert(Depth * sizeof(T) == wg::kRowBytes,
                "a step is one swizzled 128-byte row of each operand");
  static_assert(Threads == 128 * (Rows / 64), "a warpgroup per 64 rows");
  static_assert(Rows % 64 == 0 && Cols % 64 == 0,
                "warpgroups of 64 rows, instructions of 64 columns");
  static_assert(KIn % Depth == 0 && NOut % 64 == 0,
                "whole steps of the reduction and whole panels of columns");
  static_assert(Stages >= 2, "the pipeline has at least two buffers");
  constexpr int ColBlocks = (NOut + Cols - 1) / Cols;
  constexpr int Steps = KIn / Depth;
  constexpr int Panels = Cols / 64;
  constexpr int AElements = Rows * Depth;
  constexpr int StepBElements = Cols * Depth;
  constexpr int BElements = ResidentW ? 0 : StepBElements;
  constexpr int WElements = ResidentW ? Steps * StepBElements : 0;
  // The tiles start on a swizzle atom (the plan leaves its bytes spare).
  constexpr unsigned Atom = wg::kAtomBytes;
  T *resident = reinterpret_cast<T *>(
      smem + ((Atom - (mma::sharedAddress(smem) & (Atom - 1))) & (Atom - 1)));
  T *buffers = resident + WElements;
  const int group = threadIdx.x / 128;
  const int warp = threadIdx.x / 32;
  const gnnc::cuda::RouteRun<!ResidentW> run(num_tiles * ColBlocks);
  // One step of W_t's column block at col0 (reduction from k0) into `b`.
  auto copyWeights = [&](T *b, const T *wt, long long col0, long long k0) {
    if constexpr (TransW) {
      wg::copySwizzledAsync<T, Cols, Threads>(b, wt, KIn, col0, NOut, k0, KIn);
    } else {
#pragma unroll
      for (int p = 0; p < Panels; ++p)
        wg::copySwizzledAsync<T, Depth, Threads>(b + p * Depth * 64, wt, NOut,
                                                 k0, KIn, col0 + p * 64, NOut);
    }
  };
  gnnc::cuda::RouteItem<ColBlocks, Cols> loading, current;
  long long staged = -1;
  float acc[1][Cols / 8][4];
  mma::pipelineItems<Stages, true>(
      run.first, run.last, [](long long) { return Steps; },
      [&](long long j, int step, int slot) {
        loading.read(tiles, run.item(j), run.after(j));
        T *a = buffers + slot * (AElements + BElements);
        const long long k0 = (long long)step * Depth;
        wg::copySwizzledAsync<T, Rows, Threads>(a, x, KIn, loading.rowBegin,
                                                loading.rowEnd, k0, KIn);
        if constexpr (!ResidentW)
          copyWeights(a + AElements, w + loading.type * (long long)KIn * NOut,
                      loading.col0, k0);
      },
      [&](long long j, int step, int slot) {
        const T *a = buffers + slot * (AElements + BElements);
        if (step == 0) {
          mma::zeroAccumulators(acc);
          current.read(tiles, run.item(j), run.after(j));
          if constexpr (ResidentW) {
            // Every warpgroup waited for its last step's instructions, and
            // pipelineItems waits for the block before each step.
            gnnc::cuda::restageOnChange<true>(
                staged, current.weightBlock(), [&] {
                  const T *wt = w + current.type * (long long)KIn * NOut;
                  for (int s = 0; s < Steps; ++s)
                    copyWeights(resident + s * StepBElements, wt, current.col0,
                                (long long)s * Depth);
                });
          }
        }
        const T *b =
            ResidentW ? resident + step * StepBElements : a + AElements;
        const T *aRows = a + group * 64 * Depth;
        wg::fence();
#pragma unroll
        for (int k = 0; k < Depth / KStep; ++k) {
          const unsigned long long da = wg::descriptor(aRows + k * KStep);
#pragma unroll
          for (int p = 0; p < Panels; ++p) {
            // K-major B: panel p is 64 rows further, slice k 32 bytes into
            // them; N-major: panel p is the next Depth x 64, slice k KStep
            // rows on.
            const T *bp = TransW ? b + p * 64 * Depth + k * KStep
                                 : b + p * Depth * 64 + k * KStep * 64;
            wg::Wgmma<T>::template run<TransW ? 0 : 1>(
                *reinterpret_cast<float(*)[8][4]>(&acc[0][8 * p][0]), da,
                wg::descriptor(bp));
          }
        }
        wg::commit();
        wg::waitGroup<0>();
      },
      [&](long long) {
        mma::storeFragmentsWide<T, 1, Cols / 8>(
            y, NOut, acc, current.rowBegin + group * 64 + (warp % 4) * 16,
            current.rowEnd, current.col0, NOut);
      });
}

/// The K-major copy of the weights that a TF32 wgmma forward reads:
/// wt[t] = W_tᵀ (M x K) for the num_types K x M matrices of w, each value
/// rounded to TF32 (to nearest) on the way. Blocks of any size take tiles
/// of 32 rows of K by 64 columns of M in turn through shared memory (read
/// and written along rows), each thread with up to 8 loads in flight: the
/// copy streams at the memory's pace rather than one load latency a
/// tile. K is a multiple of 32, M of 64.
template <int K, int M>
__device__ __forceinline__ void
gnnc_segment_transpose_weights(const float *__restrict__ w,
                               float *__restrict__ wt, long long num_types) {
  static_assert(K % 32 == 0 && M % 64 == 0, "whole 32 x 64 tiles");
  constexpr int TileK = 32, TileM = 64, Elements = TileK * TileM, Batch = 8;
  constexpr long long TilesPerType = (long long)(K / TileK) * (M / TileM);
  __shared__ float tile[TileK][TileM + 1];
  const long long tiles = num_types * TilesPerType;
  const int threads = blockDim.x;
  for (long long i = blockIdx.x; i < tiles; i += gridDim.x) {
    const long long type = i / TilesPerType;
    const int at = (int)(i % TilesPerType);
    const int k0 = (at / (M / TileM)) * TileK, m0 = (at % (M / TileM)) * TileM;
    const float *src = w + type * K * M + (long long)k0 * M + m0;
    float *dst = wt + type * K * M + (long long)m0 * K + k0;
    for (int base = threadIdx.x; base < Elements; base += Batch * threads) {
      float v[Batch];
#pragma unroll
      for (int j = 0; j < Batch; ++j) {
        const int e = base + j * threads;
        v[j] = e < Elements ? src[(long long)(e / TileM) * M + e % TileM] : 0.f;
      }
#pragma unroll
      for (int j = 0; j < Batch; ++j) {
        const int e = base + j * threads;
        if (e < Elements)
          tile[e / TileM][e % TileM] = v[j];
      }
    }
    __syncthreads();
    for (int e = threadIdx.x; e < Elements; e += threads)
      dst[(long long)(e / TileK) * K + e % TileK] =
          __uint_as_float(gnnc::cuda::mma::toTf32(tile[e % TileK][e / TileK]));
    __syncthreads();
  }
}

/// The weight gradient's partials on tensor cores: for each split of the
/// routing table (a run of one type's rows) and each Rows x Cols tile of
/// the K x M result, partials[split] = X_splitᵀ dY_split in f32. x holds K
/// elements per row, dy M; the reduction runs over the split's rows in
/// steps of Depth, each buffer an X tile (Depth rows x Rows columns of K,
/// rows of AStride: read transposed) and a dY tile (Depth x Cols, rows of
/// BStride). K and M are multiples of 8.
template <typename T, int K, int M, int Rows, int Cols, int WarpsM, int WarpsN,
          int FragsM, int FragsN, int Depth, int Stages, int AStride,
          int BStride>
__device__ __forceinline__ void
gnnc_segment_weight_grad_mma(const T *__restrict__ x, const T *__restrict__ dy,
                             float *__restrict__ partials,
                             const long long *__restrict__ tiles,
                             long long num_tiles, unsigned char *smem) {
  namespace mma = gnnc::cuda::mma;
  constexpr int Threads = 32 * WarpsM * WarpsN;
  static_assert(Rows == WarpsM * FragsM * 16 && Cols == WarpsN * FragsN * 8,
                "the warps cover the block tile");
  static_assert(Stages >= 2, "the pipeline has at least two buffers");
  constexpr int RowBlocks = (K + Rows - 1) / Rows;
  constexpr int ColBlocks = (M + Cols - 1) / Cols;
  constexpr int AElements = Depth * AStride;
  constexpr int BElements = Depth * BStride;
  T *buffers = reinterpret_cast<T *>(smem);
  const int warp = threadIdx.x / 32;
  const int m0 = (warp / WarpsN) * FragsM * 16,
            n0 = (warp % WarpsN) * FragsN * 8;
  const gnnc::cuda::WeightGradItems<RowBlocks * ColBlocks> items(tiles,
                                                                 num_tiles);
  float acc[FragsM][FragsN][4];
  mma::pipelineItems<Stages>(
      items.first, items.last,
      [&](long long item) { return items.template steps<Depth>(tiles, item); },
      [&](long long item, int step, int slot) {
        const long long *tile = items.tile(tiles, item);
        const long long r1 = tile[2];
        long long i0, j0;
        items.template origin<Rows, Cols, ColBlocks>(item, i0, j0);
        T *a = buffers + slot * (AElements + BElements);
        T *b = a + AElements;
        const long long rr = tile[1] + (long long)step * Depth;
        mma::copyTileAsync<T, Depth, Rows, AStride, Threads>(a, x, K, rr, r1,
                                                             i0, K);
        mma::copyTileAsync<T, Depth, Cols, BStride, Threads>(b, dy, M, rr, r1,
                                                             j0, M);
      },
      [&](long long, int step, int slot) {
        if (step == 0)
          mma::zeroAccumulators(acc);
        const T *a = buffers + slot * (AElements + BElements);
        mma::mmaStep<T, FragsM, FragsN, Depth, false, false, AStride, BStride>(
            acc, a, a + AElements, m0, n0);
      },
      [&](long long item) {
        long long i0, j0;
        items.template origin<Rows, Cols, ColBlocks>(item, i0, j0);
        mma::storeFragments<float, FragsM, FragsN>(
            partials + items.split(item) * (long long)K * M, M, acc, i0 + m0, K,
            j0 + n0, M);
      });
}

/// The weight gradient's partials with Hopper's warpgroup instructions
/// (sm_90a; f16 and bf16, whose wgmma reads both operands transposed):
/// the work items of gnnc_segment_weight_grad_mma, Rows x Cols blocks of
/// the K x M result, a warpgroup per 64 of its rows. A step is Depth of
/// the split's rows (a multiple of 16); its buffer holds X's Rows / 64
/// panels and dY's Cols / 64 panels, each Depth rows of 64 columns (128
/// bytes, swizzled), so that X_splitᵀ is an M-major A and dY an N-major B
/// as they lie in memory: no transposition, no fragment loads. `smem`
/// holds 1024 bytes more than the stages (the tiles start on 1024 bytes).
/// K and M are multiples of 8 (panels past them zero-filled).
template <typename T, int K, int M, int Rows, int Cols, int Depth, int Threads,
          int Stages>
__device__ __forceinline__ void gnnc_segment_weight_grad_wgmma(
    const T *__restrict__ x, const T *__restrict__ dy,
    float *__restrict__ partials, const long long *__restrict__ tiles,
    long long num_tiles, unsigned char *smem) {
  namespace mma = gnnc::cuda::mma;
  namespace wg = gnnc::cuda::wgmma;
  wg::requireWgmma<T>();
  static_assert(sizeof(T) == 2,
                "TF32 wgmma reads its operands K-major only, and the weight "
                "gradient reads X and dY transposed: f32 takes "
                "math = tensor_core");
  constexpr int KStep = wg::Wgmma<T>::kK;
  constexpr int Panel = 64;
  static_assert(Panel * sizeof(T) == wg::kRowBytes,
                "a panel row is one swizzled 128-byte row");
  static_assert(Threads == 128 * (Rows / 64), "a warpgroup per 64 rows");
  static_assert(Rows % 64 == 0 && Cols % 64 == 0,
                "warpgroups of 64 rows, instructions of 64 columns");
  static_assert(Depth % KStep == 0 && Depth % 8 == 0,
                "whole instructions and swizzle atoms a step");
  static_assert(Stages >= 2, "the pipeline has at least two buffers");
  constexpr int RowBlocks = (K + Rows - 1) / Rows;
  constexpr int ColBlocks = (M + Cols - 1) / Cols;
  constexpr int PanelElements = Depth * Panel;
  constexpr int AElements = (Rows / Panel) * PanelElements;
  constexpr int BElements = (Cols / Panel) * PanelElements;
  constexpr unsigned Atom = wg::kAtomBytes;
  T *buffers = reinterpret_cast<T *>(
      smem + ((Atom - (mma::sharedAddress(smem) & (Atom - 1))) & (Atom - 1)));
  const int group = threadIdx.x / 128;
  const int warp = threadIdx.x / 32;
  const gnnc::cuda::WeightGradItems<RowBlocks * ColBlocks> items(tiles,
                                                                 num_tiles);
  float acc[1][Cols / 8][4];
  mma::pipelineItems<Stages, true>(
      items.first, items.last,
      [&](long long item) { return items.template steps<Depth>(tiles, item); },
      [&](long long item, int step, int slot) {
        const long long *tile = items.tile(tiles, item);
        const long long r1 = tile[2];
        long long i0, j0;
        items.template origin<Rows, Cols, ColBlocks>(item, i0, j0);
        T *a = buffers + slot * (AElements + BElements);
        T *b = a + AElements;
        const long long rr = tile[1] + (long long)step * Depth;
#pragma unroll
        for (int p = 0; p < Rows / Panel; ++p)
          wg::copySwizzledAsync<T, Depth, Threads>(a + p * PanelElements, x, K,
                                                   rr, r1, i0 + p * Panel, K);
#pragma unroll
        for (int p = 0; p < Cols / Panel; ++p)
          wg::copySwizzledAsync<T, Depth, Threads>(b + p * PanelElements, dy, M,
                                                   rr, r1, j0 + p * Panel, M);
      },
      [&](long long, int step, int slot) {
        if (step == 0)
          mma::zeroAccumulators(acc);
        const T *a = buffers + slot * (AElements + BElements);
        const T *b = a + AElements;
        const T *aPanel = a + group * PanelElements;
        wg::fence();
#pragma unroll
        for (int k = 0; k < Depth / KStep; ++k) {
          // Slice k of a panel is KStep reduction rows further.
          const unsigned long long da =
              wg::descriptor(aPanel + k * KStep * Panel);
#pragma unroll
          for (int p = 0; p < Cols / Panel; ++p)
            wg::Wgmma<T>::template run<1, 1>(
                *reinterpret_cast<float(*)[8][4]>(&acc[0][8 * p][0]), da,
                wg::descriptor(b + p * PanelElements + k * KStep * Panel));
        }
        wg::commit();
        wg::waitGroup<0>();
      },
      [&](long long item) {
        long long i0, j0;
        items.template origin<Rows, Cols, ColBlocks>(item, i0, j0);
        mma::storeFragments<float, 1, Cols / 8>(
            partials + items.split(item) * (long long)K * M, M, acc,
            i0 + group * 64 + (warp % 4) * 16, K, j0, M);
      });
}

/// The weight gradient's partials in SIMT f32: each block walks a run of
/// the splits; its Threads threads take the K x M outputs of a split in
/// turn, each summing x[r, i] dy[r, j] over the split's rows.
template <typename T, int K, int M, int Threads>
__device__ __forceinline__ void
gnnc_segment_weight_grad_simt(const T *__restrict__ x, const T *__restrict__ dy,
                              float *__restrict__ partials,
                              const long long *__restrict__ tiles,
                              long long num_tiles) {
  using gnnc::cuda::toFloat;
  long long first, last;
  gnnc::cuda::routedRun(num_tiles, first, last);
  for (long long split = first; split < last; ++split) {
    const long long *tile = tiles + split * GNNC_ROUTE_TILE_WORDS;
    const long long r0 = tile[1], r1 = tile[2];
    float *out = partials + split * (long long)K * M;
    for (int e = threadIdx.x; e < K * M; e += Threads) {
      const int i = e / M, j = e % M;
      float acc = 0.0f;
      for (long long r = r0; r < r1; ++r)
        acc += toFloat(x[r * K + i]) * toFloat(dy[r * M + j]);
      out[e] = acc;
    }
  }
}

/// The weight gradient from the partials: dw[t] = the sum of the partials
/// of type t's splits (0 for a type without rows), for the num_types x K x
/// M outputs. A thread takes Vec consecutive outputs (segmentReduceVector:
/// a 16-byte load of each split's partials where K x M allows); the
/// outputs come in chunks of blockDim.x / lanes threads' consecutive
/// outputs of one type (segmentReduceLanes, gnnc/cuda/segment_reduce.cuh),
/// each block a contiguous run of chunks, so that it
/// looks up a type's splits once per type it meets. Lane l of a chunk's
/// thread column sums its splits l, l + lanes, ..., Loads in flight, and
/// the lanes' sums are added in lane order: a type with thousands of
/// splits costs each thread a few dozen loads, one with a single split
/// one, and the order of the additions never depends on timing
/// (deterministic, no atomics). blockDim.x is a multiple of Columns, at
/// most 1024.
template <typename T, int K, int M, int Columns, int Loads>
__device__ __forceinline__ void
gnnc_segment_weight_grad_reduce(const float *__restrict__ partials,
                                T *__restrict__ dw,
                                const long long *__restrict__ tiles,
                                long long num_tiles, long long num_types) {
  constexpr long long PerType = (long long)K * M;
  constexpr int Vec = gnnc::cuda::segmentReduceVector(PerType);
  __shared__ float sums[1024 * Vec];
  const int lanes = gnnc::cuda::segmentReduceLanes(num_tiles, num_types,
                                                   blockDim.x, Columns, Loads);
  const int width = blockDim.x / lanes;
  const int column = threadIdx.x % width, lane = threadIdx.x / width;
  const long long chunksPerType = (PerType + width * Vec - 1) / (width * Vec);
  long long first, last;
  gnnc::cuda::routedRun(num_types * chunksPerType, first, last);
  long long cached = -1, begin = 0, end = 0;
  for (long long chunk = first; chunk < last; ++chunk) {
    const long long type = chunk / chunksPerType;
    const long long at = ((chunk % chunksPerType) * width + column) * Vec;
    if (type != cached) {
      begin = gnnc::cuda::firstTileOfType(tiles, num_tiles, type);
      end = gnnc::cuda::firstTileOfType(tiles, num_tiles, type + 1);
      cached = type;
    }
    float sum[Vec] = {};
    if (at < PerType) {
      const float *p = partials + at;
      for (long long s = begin + lane; s < end; s += (long long)Loads * lanes) {
        float v[Loads][Vec];
#pragma unroll
        for (int j = 0; j < Loads; ++j) {
          const long long split = s + (long long)j * lanes;
          if constexpr (Vec == 4) {
            const float4 f =
                split < end
                    ? *reinterpret_cast<const float4 *>(p + split * PerType)
                    : make_float4(0.f, 0.f, 0.f, 0.f);
            v[j][0] = f.x, v[j][1] = f.y, v[j][2] = f.z, v[j][3] = f.w;
          } else {
            v[j][0] = split < end ? p[split * PerType] : 0.0f;
          }
        }
#pragma unroll
        for (int j = 0; j < Loads; ++j)
#pragma unroll
          for (int c = 0; c < Vec; ++c)
            sum[c] += v[j][c];
      }
    }
    if (lanes > 1) {
#pragma unroll
      for (int c = 0; c < Vec; ++c)
        sums[c * blockDim.x + threadIdx.x] = sum[c];
      __syncthreads();
      if (lane == 0)
        for (int l = 1; l < lanes; ++l)
#pragma unroll
          for (int c = 0; c < Vec; ++c)
            sum[c] += sums[c * blockDim.x + l * width + column];
      __syncthreads();
    }
    if (lane == 0 && at < PerType)
#pragma unroll
      for (int c = 0; c < Vec; ++c)
        dw[type * PerType + at + c] =
            gnnc::cuda::SegmentFromFloat<T>::get(sum[c]);
  }
}

#endif // GNNC_CUDA_SEGMENT_MATMUL_CUH
