//===- snapshot_slices.cuh - The work items of a sliced kernel -*- CUDA -*-===//
//
// The work items of gnnc_snapshot_spmm_sliced (snapshots.cuh), built from a
// group's row offsets: the overlap's (i32 or i64) and the snapshots'
// exclusive ones (graph::stackExclusive: S x (rows + 1), i64). A row's
// items, in order: its shared edges in slices of at most SliceSize (at
// least one slice, possibly empty; the first also takes SliceSize of each
// snapshot's exclusive edges), then for each snapshot s the exclusive edges
// beyond those in slices of at most SliceSize. A row with several items is
// split: its first item goes to the front of the table (the split rows'
// first items in row order), every other item after them (row by row).
//
// The rules of one row are __host__ __device__ functions here, so that the
// host (ops::snapshotSlices) and a GPU build the same table from one
// source. On a GPU it takes three steps, each a kernel below:
//   count: each row's items, as (items - split, split), split = items > 1;
//   scan:  an exclusive scan of those pairs over the rows, in tiles of
//          kSliceScanTile rows (a tile's scan, the tiles' totals scanned
//          the same way, then added back);
//   fill:  each row's items, written by Lanes threads at their places:
//          the first of a split row at its split prefix, the rest at the
//          number of split rows plus its (items - split) prefix.
// The host reads the two totals between scan and fill (the table's size).
//
// This file is also plain C++ (without __CUDACC__ only the row rules are
// seen): the host builder includes it.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_SNAPSHOT_SLICES_CUH
#define GNNC_CUDA_SNAPSHOT_SLICES_CUH

#if defined(__CUDACC__)
#define GNNC_SLICES_HD __host__ __device__ __forceinline__
#else
#define GNNC_SLICES_HD inline
#endif

namespace gnnc::cuda::slices {

/// The scan's block: kSliceScanThreads threads, kSliceScanItems rows each,
/// kSliceScanTile rows per tile.
constexpr int kSliceScanThreads = 256;
constexpr int kSliceScanItems = 4;
constexpr long long kSliceScanTile = kSliceScanThreads * kSliceScanItems;
/// The count and fill kernels' blocks, and the threads that fill one row.
constexpr int kSliceRowThreads = 256;
constexpr int kSliceFillLanes = 8;

/// The fields of an item's word (gnnc/Plan/Abi.h: kSliceSnapshotShift,
/// kSliceLengthShift, kSliceFirst, kSliceSplit): the row in the low 32
/// bits, snapshot + 1 (0 for shared edges) from SnapShift, the edge count
/// from LenShift, and the flags.
template <int SnapShift, int LenShift, long long First, long long Split>
struct SliceWord {
  static GNNC_SLICES_HD long long make(long long row, long long snapPlusOne,
                                       long long length, bool first,
                                       bool split) {
    return row | (snapPlusOne << SnapShift) | (length << LenShift) |
           (first ? First : 0ll) | (split ? Split : 0ll);
  }
};

/// The slices of a row's `edges` shared edges: at least one.
GNNC_SLICES_HD long long sharedSlices(long long edges, long long sliceSize) {
  return edges <= sliceSize ? 1 : (edges + sliceSize - 1) / sliceSize;
}

/// The slices of one snapshot's `edges` exclusive edges of a row beyond the
/// `sliceSize` its first shared slice takes.
GNNC_SLICES_HD long long exclusiveSlices(long long edges, long long sliceSize) {
  return edges <= sliceSize ? 0 : (edges - 1) / sliceSize;
}

/// The end of the slice from `at`: at most `sliceSize` edges, none past
/// `end`.
GNNC_SLICES_HD long long sliceEnd(long long at, long long end,
                                  long long sliceSize) {
  return end - at < sliceSize ? end : at + sliceSize;
}

/// The items of row `row` of a group of `snapshots` over `rows` rows.
template <typename Offset, typename ExclOffset>
GNNC_SLICES_HD long long
rowItems(const Offset *rowPtr, const ExclOffset *exclPtr, long long rows,
         long long snapshots, long long row, long long sliceSize) {
  long long items = sharedSlices(static_cast<long long>(rowPtr[row + 1]) -
                                     static_cast<long long>(rowPtr[row]),
                                 sliceSize);
  for (long long s = 0; s < snapshots; ++s) {
    const ExclOffset *ptr = exclPtr + s * (rows + 1);
    items += exclusiveSlices(static_cast<long long>(ptr[row + 1]) -
                                 static_cast<long long>(ptr[row]),
                             sliceSize);
  }
  return items;
}

/// Writes the items lane, lane + lanes, ... of row `row` (in the row's
/// order) into `begin` and `words`: a split row's first item at `front`,
/// its item j > 0 at rest + j - 1; the only item of an unsplit row at
/// `rest`.
template <class Word, typename Offset, typename ExclOffset, typename Item>
GNNC_SLICES_HD void
fillRowItems(const Offset *rowPtr, const ExclOffset *exclPtr, long long rows,
             long long snapshots, long long row, long long sliceSize,
             long long front, long long rest, Item *begin, Item *words,
             int lane, int lanes) {
  const bool split =
      rowItems(rowPtr, exclPtr, rows, snapshots, row, sliceSize) > 1;
  const long long skip = split ? 1 : 0;
  const long long b = static_cast<long long>(rowPtr[row]);
  const long long e = static_cast<long long>(rowPtr[row + 1]);
  const long long shared = sharedSlices(e - b, sliceSize);
  for (long long j = lane; j < shared; j += lanes) {
    const long long at = b + j * sliceSize;
    const long long i = j == 0 && split ? front : rest + j - skip;
    begin[i] = at;
    words[i] =
        Word::make(row, 0, sliceEnd(at, e, sliceSize) - at, j == 0, split);
  }
  long long j0 = shared;
  for (long long s = 0; s < snapshots; ++s) {
    const ExclOffset *ptr = exclPtr + s * (rows + 1);
    const long long eb = static_cast<long long>(ptr[row]);
    const long long ee = static_cast<long long>(ptr[row + 1]);
    const long long n = exclusiveSlices(ee - eb, sliceSize);
    for (long long k = lane; k < n; k += lanes) {
      const long long at = eb + (k + 1) * sliceSize;
      const long long i = rest + j0 + k - skip;
      begin[i] = at;
      words[i] = Word::make(row, s + 1, sliceEnd(at, ee, sliceSize) - at, false,
                            split);
    }
    j0 += n;
  }
}

#if defined(__CUDACC__)

/// Count: pairs[2r] = items - split and pairs[2r + 1] = split of row r, a
/// thread per row.
template <typename Offset>
__device__ __forceinline__ void
countRows(const Offset *__restrict__ row_ptr,
          const long long *__restrict__ excl_ptr, long long rows,
          long long snapshots, long long slice_size,
          long long *__restrict__ pairs) {
  const long long r =
      static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  const long long items =
      rowItems(row_ptr, excl_ptr, rows, snapshots, r, slice_size);
  const long long split = items > 1 ? 1 : 0;
  pairs[2 * r] = items - split;
  pairs[2 * r + 1] = split;
}

/// An inclusive scan of (a, b) over the 32 lanes of a warp.
__device__ __forceinline__ void warpInclusiveScan(long long &a, long long &b) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const long long ta = __shfl_up_sync(0xffffffffu, a, d);
    const long long tb = __shfl_up_sync(0xffffffffu, b, d);
    if (lane >= d) {
      a += ta;
      b += tb;
    }
  }
}

/// Scan: replaces the `n` pairs of tile blockIdx.x (kSliceScanTile pairs
/// from blockIdx.x x kSliceScanTile) by their exclusive prefix sums within
/// the tile and writes the tile's totals to tile_sums[2 x blockIdx.x] and
/// [2 x blockIdx.x + 1]. kSliceScanThreads threads.
__device__ __forceinline__ void scanTile(long long *__restrict__ pairs,
                                         long long n,
                                         long long *__restrict__ tile_sums) {
  constexpr int Threads = kSliceScanThreads, Items = kSliceScanItems;
  constexpr int Tile = Threads * Items, Warps = Threads / 32;
  static_assert(Threads % 32 == 0 && Warps <= 32, "one warp scans the warps");
  __shared__ long long a[Tile], b[Tile];
  __shared__ long long warpA[Warps], warpB[Warps];
  const long long tile0 = static_cast<long long>(blockIdx.x) * Tile;
  const int t = threadIdx.x;
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    const int i = t + k * Threads;
    const long long g = tile0 + i;
    a[i] = g < n ? pairs[2 * g] : 0;
    b[i] = g < n ? pairs[2 * g + 1] : 0;
  }
  __syncthreads();
  // Each thread sums its Items consecutive pairs; the threads' sums are
  // scanned in warps, then the warps' totals by the first warp.
  const int i0 = t * Items;
  long long sa = 0, sb = 0;
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    sa += a[i0 + k];
    sb += b[i0 + k];
  }
  long long ia = sa, ib = sb;
  warpInclusiveScan(ia, ib);
  const int lane = t & 31, warp = t >> 5;
  if (lane == 31) {
    warpA[warp] = ia;
    warpB[warp] = ib;
  }
  __syncthreads();
  if (warp == 0) {
    long long wa = lane < Warps ? warpA[lane] : 0;
    long long wb = lane < Warps ? warpB[lane] : 0;
    warpInclusiveScan(wa, wb);
    if (lane < Warps) {
      warpA[lane] = wa;
      warpB[lane] = wb;
    }
  }
  __syncthreads();
  long long oa = ia - sa + (warp > 0 ? warpA[warp - 1] : 0);
  long long ob = ib - sb + (warp > 0 ? warpB[warp - 1] : 0);
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    const long long va = a[i0 + k], vb = b[i0 + k];
    a[i0 + k] = oa;
    b[i0 + k] = ob;
    oa += va;
    ob += vb;
  }
  if (t == Threads - 1) {
    tile_sums[2 * blockIdx.x] = oa;
    tile_sums[2 * blockIdx.x + 1] = ob;
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    const int i = t + k * Threads;
    const long long g = tile0 + i;
    if (g < n) {
      pairs[2 * g] = a[i];
      pairs[2 * g + 1] = b[i];
    }
  }
}

/// Add-back: adds the scanned totals of the tiles before tile blockIdx.x
/// (tile_offsets[2 x blockIdx.x], [.. + 1]) to its pairs.
__device__ __forceinline__ void
addTileOffsets(long long *__restrict__ pairs, long long n,
               const long long *__restrict__ tile_offsets) {
  constexpr int Threads = kSliceScanThreads, Items = kSliceScanItems;
  const long long oa = tile_offsets[2 * blockIdx.x];
  const long long ob = tile_offsets[2 * blockIdx.x + 1];
  const long long tile0 = static_cast<long long>(blockIdx.x) * Threads * Items;
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    const long long g = tile0 + threadIdx.x + k * Threads;
    if (g < n) {
      pairs[2 * g] += oa;
      pairs[2 * g + 1] += ob;
    }
  }
}

/// Fill: kSliceFillLanes threads per row write its items, from the scanned
/// pairs (`prefix`) and the number of split rows.
template <class Word, typename Offset>
__device__ __forceinline__ void
fillRows(const Offset *__restrict__ row_ptr,
         const long long *__restrict__ excl_ptr, long long rows,
         long long snapshots, long long slice_size,
         const long long *__restrict__ prefix, long long num_split,
         long long *__restrict__ begin, long long *__restrict__ words) {
  const long long thread =
      static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long r = thread / kSliceFillLanes;
  if (r >= rows)
    return;
  fillRowItems<Word>(row_ptr, excl_ptr, rows, snapshots, r, slice_size,
                     prefix[2 * r + 1], num_split + prefix[2 * r], begin, words,
                     static_cast<int>(thread % kSliceFillLanes),
                     kSliceFillLanes);
}

#endif // __CUDACC__

} // namespace gnnc::cuda::slices

#undef GNNC_SLICES_HD

#endif // GNNC_CUDA_SNAPSHOT_SLICES_CUH
