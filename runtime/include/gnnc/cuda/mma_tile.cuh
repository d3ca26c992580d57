//===- mma_tile.cuh - Tensor-core tiles: cp.async, fragments, mma -*- CUDA
//-*-===//
//
// The pieces of a tensor-core block tile that any gnnc kernel can reuse
// (sm_80 and later, through NVRTC):
//  - copyAsync16 / commitAsync / waitAsync: 16-byte cp.async copies from
//    global to shared memory (zero-filled when out of bounds) and their
//    groups, for a pipeline of several shared-memory buffers;
//  - copyTileAsync: a block's share of one tile, rows of 16-byte chunks;
//  - pipelineItems: a block's run of work items through one pipeline of
//    buffers that keeps loading across the items' boundaries;
//  - Fragments<T>: a warp's A (16 x k) and B (k x 8, or two side by side)
//    fragments from shared tiles stored either way round (rows along the
//    reduction, or along the result), with ldmatrix for 16-bit types and
//    TF32 conversion for f32;
//  - Mma<T>: mma.sync.aligned.m16n8k8 (TF32) or m16n8k16 (f16, bf16) with
//    f32 accumulators;
//  - zeroAccumulators, mmaStep: a warp's FragsM x FragsN accumulator
//    fragments set to zero, and one reduction step of them (register
//    blocking);
//  - storePair, storeFragments, storeFragmentsWide: accumulators to memory
//    of type T (two adjacent ones; a warp's fragments, 8 or 16 bytes a
//    lane);
//  - gnnc::cuda::toFloat: an element of any of the three types as a float.
//
// Fragment layouts follow the PTX ISA's description of mma.m16n8k8 and
// mma.m16n8k16: with g = lane / 4 and t = lane % 4, the accumulators of a
// 16 x 8 fragment are (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1).
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_MMA_TILE_CUH
#define GNNC_CUDA_MMA_TILE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace gnnc::cuda {

/// An element of f32, f16 or bf16 as a float (what a tile's epilogue and a
/// SIMT fallback compute in).
__device__ __forceinline__ float toFloat(float v) { return v; }
__device__ __forceinline__ float toFloat(__half v) { return __half2float(v); }
__device__ __forceinline__ float toFloat(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

} // namespace gnnc::cuda

namespace gnnc::cuda::mma {

//===----------------------------------------------------------------------===//
// Asynchronous copies
//===----------------------------------------------------------------------===//

__device__ __forceinline__ unsigned sharedAddress(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Copies 16 bytes from global `src` to shared `dst` without waiting; when
/// `valid` is false nothing is read and `dst` gets 16 zero bytes.
__device__ __forceinline__ void copyAsync16(void *dst, const void *src,
                                            bool valid) {
  const int bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                   sharedAddress(dst)),
               "l"(src), "r"(bytes)
               : "memory");
}

/// Closes the group of copies this thread issued since the last commit.
__device__ __forceinline__ void commitAsync() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Waits until at most `Pending` of this thread's groups are in flight.
template <int Pending> __device__ __forceinline__ void waitAsync() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

/// The block's threads copy a Rows x Cols tile whose rows lie `ld`
/// elements apart in global memory, from (row0, col0), into shared rows of
/// Stride elements; chunks at rows >= rowEnd or columns >= colEnd are
/// zero-filled. Cols, col0 and colEnd are multiples of 16 bytes' elements
/// (so a chunk is wholly inside or outside), `src` 16-byte aligned.
template <typename T, int Rows, int Cols, int Stride, int Threads>
__device__ __forceinline__ void
copyTileAsync(T *dst, const T *__restrict__ src, long long ld, long long row0,
              long long rowEnd, long long col0, long long colEnd) {
  constexpr int Chunk = 16 / sizeof(T);
  static_assert(Cols % Chunk == 0, "tile rows are whole 16-byte chunks");
  static_assert((Stride * sizeof(T)) % 16 == 0,
                "shared rows start on 16 bytes");
  constexpr int ChunksPerRow = Cols / Chunk;
  constexpr int Chunks = Rows * ChunksPerRow;
  if constexpr (Threads % ChunksPerRow == 0 && Chunks % Threads == 0) {
    // Every thread copies the same column of Chunks / Threads rows,
    // RowStep apart: one address and one bound per thread, then
    // constant offsets (no per-chunk division or 64-bit products).
    constexpr int RowStep = Threads / ChunksPerRow;
    const int r = threadIdx.x / ChunksPerRow;
    const int k = (threadIdx.x % ChunksPerRow) * Chunk;
    const long long rowsLeft = rowEnd - row0 - r;
    const bool colValid = col0 + k < colEnd;
    const T *s = src + (row0 + r) * ld + col0 + k;
    T *d = dst + r * Stride + k;
#pragma unroll
    for (int i = 0; i < Chunks / Threads; ++i) {
      const bool valid = colValid && i * RowStep < rowsLeft;
      copyAsync16(d + i * RowStep * Stride,
                  valid ? s + (long long)i * RowStep * ld : src, valid);
    }
  } else {
    for (int c = threadIdx.x; c < Chunks; c += Threads) {
      const int r = c / ChunksPerRow, k = (c % ChunksPerRow) * Chunk;
      const long long gr = row0 + r, gc = col0 + k;
      const bool valid = gr < rowEnd && gc < colEnd;
      copyAsync16(dst + r * Stride + k, valid ? src + gr * ld + gc : src,
                  valid);
    }
  }
}

/// Runs a block's work items [first, last) through one cp.async pipeline of
/// Stages shared-memory buffers that does not drain between items: item i
/// takes max(1, stepsOf(i)) steps, and while the block multiplies step s
/// the next Stages - 1 steps (of this item or the items after it) are on
/// their way. load(item, step, slot) issues one step's copies into buffer
/// `slot`; compute(item, step, slot) reads that buffer once it has landed
/// (every thread of the block has then waited for it); finish(item) runs
/// after an item's last step, from registers (no buffer is touched). Every
/// thread of the block calls this with the same range. With AsyncReads
/// (the tensor cores read the buffers through the async proxy: wgmma) each
/// thread fences its landed copies for that proxy before the barrier.
template <int Stages, bool AsyncReads = false, typename StepsOf, typename Load,
          typename Compute, typename Finish>
__device__ __forceinline__ void pipelineItems(long long first, long long last,
                                              StepsOf stepsOf, Load load,
                                              Compute compute, Finish finish) {
  static_assert(Stages >= 2, "the pipeline has at least two buffers");
  auto stepsAt = [&](long long item) {
    if (item >= last)
      return 0;
    const int steps = stepsOf(item);
    return steps > 0 ? steps : 1;
  };
  // The producer: the next (item, step) whose copies are issued. Every
  // call commits a group, empty past the end, so that the groups in flight
  // count steps.
  long long loadItem = first;
  int loadStep = 0, loadSteps = stepsAt(first);
  auto issue = [&](int slot) {
    if (loadItem < last) {
      load(loadItem, loadStep, slot);
      if (++loadStep == loadSteps) {
        ++loadItem;
        loadStep = 0;
        loadSteps = stepsAt(loadItem);
      }
    }
    commitAsync();
  };
#pragma unroll
  for (int s = 0; s < Stages - 1; ++s)
    issue(s);
  long long item = first;
  int step = 0, steps = stepsAt(first), slot = 0;
  while (item < last) {
    // This step's group has landed, and every warp is done with the buffer
    // the next copies overwrite (the one the previous step read).
    waitAsync<Stages - 2>();
    if constexpr (AsyncReads)
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    issue(slot == 0 ? Stages - 1 : slot - 1);
    compute(item, step, slot);
    slot = slot + 1 == Stages ? 0 : slot + 1;
    if (++step == steps) {
      finish(item);
      ++item;
      step = 0;
      steps = stepsAt(item);
    }
  }
  waitAsync<0>();
}

//===----------------------------------------------------------------------===//
// mma.sync
//===----------------------------------------------------------------------===//

/// D = A B + D on one 16 x 8 fragment: A four 32-bit registers, B two, the
/// accumulators four floats. kDepth is the k of one instruction.
template <typename T> struct Mma;

template <> struct Mma<float> {
  static constexpr int kDepth = 8;
  static __device__ __forceinline__ void
  run(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
  }
};

template <> struct Mma<__half> {
  static constexpr int kDepth = 16;
  static __device__ __forceinline__ void
  run(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
  }
};

template <> struct Mma<__nv_bfloat16> {
  static constexpr int kDepth = 16;
  static __device__ __forceinline__ void
  run(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
  }
};

//===----------------------------------------------------------------------===//
// Fragments from shared memory
//===----------------------------------------------------------------------===//

/// f32 rounded to TF32 (round to nearest, ties away: 10 mantissa bits).
__device__ __forceinline__ unsigned toTf32(float v) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
  return r;
}

/// A warp's fragments from shared tiles. A tile whose rows run along the
/// reduction holds A(m, k) at a[m * Stride + k]; one whose rows run along
/// the result holds it at a[k * Stride + m] (A read transposed). Likewise
/// B(k, n) at b[n * Stride + k] (rows along the reduction: B read
/// transposed) or b[k * Stride + n]. (m0, k0) and (k0, n0) are the
/// fragment's first element.
template <typename T> struct Fragments {
  // 16-bit types: ldmatrix gives every lane the pairs the mma expects
  // (.trans for tiles stored the other way round); each lane names the
  // 16-byte row of one 8 x 8 matrix.
  template <bool ReductionRows, int Stride>
  static __device__ __forceinline__ void loadA(unsigned (&a)[4], const T *s,
                                               int m0, int k0) {
    const int lane = threadIdx.x % 32;
    if constexpr (ReductionRows) {
      // Matrices: (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15),
      // (m 8-15, k 8-15).
      const T *p = s + (m0 + (lane & 7) + ((lane >> 3) & 1) * 8) * Stride + k0 +
                   (lane >> 4) * 8;
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
                   "{%0, %1, %2, %3}, [%4];\n"
                   : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                   : "r"(sharedAddress(p)));
    } else {
      // The same matrices from k rows, transposed.
      const T *p = s + (k0 + (lane & 7) + (lane >> 4) * 8) * Stride + m0 +
                   ((lane >> 3) & 1) * 8;
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
                   "{%0, %1, %2, %3}, [%4];\n"
                   : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                   : "r"(sharedAddress(p)));
    }
  }

  template <bool ReductionRows, int Stride>
  static __device__ __forceinline__ void loadB(unsigned (&b)[2], const T *s,
                                               int k0, int n0) {
    const int lane = threadIdx.x % 32;
    if constexpr (ReductionRows) {
      // Matrices (n 0-7, k 0-7) and (n 0-7, k 8-15) from n rows.
      const T *p = s + (n0 + (lane & 7)) * Stride + k0 + ((lane >> 3) & 1) * 8;
      asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                   : "=r"(b[0]), "=r"(b[1])
                   : "r"(sharedAddress(p)));
    } else {
      // Matrices (k 0-7, n 0-7) and (k 8-15, n 0-7) from k rows,
      // transposed.
      const T *p = s + (k0 + (lane & 7) + ((lane >> 3) & 1) * 8) * Stride + n0;
      asm volatile(
          "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
          : "=r"(b[0]), "=r"(b[1])
          : "r"(sharedAddress(p)));
    }
  }
  /// Two adjacent B fragments, (k0, n0) and (k0, n0 + 8), with one
  /// ldmatrix.x4: `b0` and `b1` as two loadB calls would give them.
  template <bool ReductionRows, int Stride>
  static __device__ __forceinline__ void
  loadB2(unsigned (&b0)[2], unsigned (&b1)[2], const T *s, int k0, int n0) {
    const int lane = threadIdx.x % 32;
    if constexpr (ReductionRows) {
      // Matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7),
      // (n 8-15, k 8-15) from n rows.
      const T *p = s + (n0 + (lane & 7) + (lane >> 4) * 8) * Stride + k0 +
                   ((lane >> 3) & 1) * 8;
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
                   "{%0, %1, %2, %3}, [%4];\n"
                   : "=r"(b0[0]), "=r"(b0[1]), "=r"(b1[0]), "=r"(b1[1])
                   : "r"(sharedAddress(p)));
    } else {
      // The same four from k rows, transposed.
      const T *p = s + (k0 + (lane & 7) + ((lane >> 3) & 1) * 8) * Stride + n0 +
                   (lane >> 4) * 8;
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
                   "{%0, %1, %2, %3}, [%4];\n"
                   : "=r"(b0[0]), "=r"(b0[1]), "=r"(b1[0]), "=r"(b1[1])
                   : "r"(sharedAddress(p)));
    }
  }
};

template <> struct Fragments<float> {
  // TF32 m16n8k8: A registers (g, t), (g + 8, t), (g, t + 4), (g + 8,
  // t + 4); B registers (t, g), (t + 4, g).
  template <bool ReductionRows, int Stride>
  static __device__ __forceinline__ void loadA(unsigned (&a)[4], const float *s,
                                               int m0, int k0) {
    const int lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
    auto at = [&](int m, int k) {
      return ReductionRows ? s[(m0 + m) * Stride + k0 + k]
                           : s[(k0 + k) * Stride + m0 + m];
    };
    a[0] = toTf32(at(g, t));
    a[1] = toTf32(at(g + 8, t));
    a[2] = toTf32(at(g, t + 4));
    a[3] = toTf32(at(g + 8, t + 4));
  }

  template <bool ReductionRows, int Stride>
  static __device__ __forceinline__ void loadB(unsigned (&b)[2], const float *s,
                                               int k0, int n0) {
    const int lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
    auto at = [&](int k, int n) {
      return ReductionRows ? s[(n0 + n) * Stride + k0 + k]
                           : s[(k0 + k) * Stride + n0 + n];
    };
    b[0] = toTf32(at(t, g));
    b[1] = toTf32(at(t + 4, g));
  }

  template <bool ReductionRows, int Stride>
  static __device__ __forceinline__ void
  loadB2(unsigned (&b0)[2], unsigned (&b1)[2], const float *s, int k0, int n0) {
    loadB<ReductionRows, Stride>(b0, s, k0, n0);
    loadB<ReductionRows, Stride>(b1, s, k0, n0 + 8);
  }
};

/// Sets a warp's FragsM x FragsN accumulator fragments to zero.
template <int FragsM, int FragsN>
__device__ __forceinline__ void
zeroAccumulators(float (&acc)[FragsM][FragsN][4]) {
#pragma unroll
  for (int i = 0; i < FragsM; ++i)
#pragma unroll
    for (int j = 0; j < FragsN; ++j)
#pragma unroll
      for (int v = 0; v < 4; ++v)
        acc[i][j][v] = 0.0f;
}

/// One Depth-deep step of a warp's FragsM x FragsN fragments of 16 x 8,
/// whose first result element is (m0, n0) of the block tile: `a` and `b`
/// are the step's shared tiles (see Fragments for their layouts).
template <typename T, int FragsM, int FragsN, int Depth, bool AReductionRows,
          bool BReductionRows, int AStride, int BStride>
__device__ __forceinline__ void mmaStep(float (&acc)[FragsM][FragsN][4],
                                        const T *a, const T *b, int m0,
                                        int n0) {
  constexpr int Step = Mma<T>::kDepth;
  static_assert(Depth % Step == 0, "a step holds whole mma depths");
#pragma unroll
  for (int k = 0; k < Depth; k += Step) {
    unsigned af[FragsM][4], bf[FragsN][2];
#pragma unroll
    for (int i = 0; i < FragsM; ++i) {
      Fragments<T>::template loadA<AReductionRows, AStride>(af[i], a,
                                                            m0 + i * 16, k);
    }
    // B fragments two at a time (one ldmatrix.x4 for 16-bit types).
#pragma unroll
    for (int j = 0; j + 1 < FragsN; j += 2)
      Fragments<T>::template loadB2<BReductionRows, BStride>(bf[j], bf[j + 1],
                                                             b, k, n0 + j * 8);
    if constexpr (FragsN % 2 != 0)
      Fragments<T>::template loadB<BReductionRows, BStride>(
          bf[FragsN - 1], b, k, n0 + (FragsN - 1) * 8);
#pragma unroll
    for (int i = 0; i < FragsM; ++i)
#pragma unroll
      for (int j = 0; j < FragsN; ++j)
        Mma<T>::run(acc[i][j], af[i], bf[j]);
  }
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

/// Stores two adjacent accumulators (an even column) as T.
__device__ __forceinline__ void storePair(float *p, float a, float b) {
  *reinterpret_cast<float2 *>(p) = make_float2(a, b);
}
__device__ __forceinline__ void storePair(__half *p, float a, float b) {
  *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(a, b);
}
__device__ __forceinline__ void storePair(__nv_bfloat16 *p, float a, float b) {
  *reinterpret_cast<__nv_bfloat162 *>(p) = __floats2bfloat162_rn(a, b);
}

/// Two adjacent accumulators as the 32-bit word of two 16-bit elements.
template <typename T>
__device__ __forceinline__ unsigned packPair(float a, float b);
template <>
__device__ __forceinline__ unsigned packPair<__half>(float a, float b) {
  __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<unsigned *>(&h);
}
template <>
__device__ __forceinline__ unsigned packPair<__nv_bfloat16>(float a, float b) {
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<unsigned *>(&h);
}

/// Stores one fragment's two rows (g and g + 8 of the 16) at `col`, rows
/// from rowEnd on left out.
template <typename T>
__device__ __forceinline__ void
storeFragment(T *out, long long ld, const float (&frag)[4], long long row,
              long long rowEnd, long long col) {
  if (row < rowEnd)
    storePair(out + row * ld + col, frag[0], frag[1]);
  if (row + 8 < rowEnd)
    storePair(out + (row + 8) * ld + col, frag[2], frag[3]);
}

/// Stores a warp's FragsM x FragsN fragments whose first element is (row0,
/// col0) of a result of `ld` columns: rows from rowEnd and columns from
/// colEnd (a multiple of 8) on are left out. f32 lanes write 8 bytes each,
/// so a warp's store covers whole 32-byte sectors. 16-bit lanes would
/// write 4 bytes (half sectors); for fragment pairs (j, j + 1) the lanes
/// of a quad swap one word first, so that even lanes hold 4 columns of
/// fragment j and odd lanes 4 of fragment j + 1, and each row's 32 bytes
/// leave in one store of 8 bytes per lane (ld and col0 multiples of 4; a
/// whole sector when col0 is a multiple of 16 elements).
template <typename T, int FragsM, int FragsN>
__device__ __forceinline__ void
storeFragments(T *out, long long ld, const float (&acc)[FragsM][FragsN][4],
               long long row0, long long rowEnd, long long col0,
               long long colEnd) {
  const int lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  constexpr bool Paired = sizeof(T) == 2;
  constexpr int Pairs = Paired ? FragsN / 2 : 0;
#pragma unroll
  for (int i = 0; i < FragsM; ++i) {
    const long long row = row0 + i * 16 + g;
    if constexpr (Paired) {
#pragma unroll
      for (int p = 0; p < Pairs; ++p) {
        const int j = 2 * p;
        // Whole pair inside the result (colEnd is a multiple of 8), or only
        // its first fragment: the shuffles run on every lane either way.
        const bool both = col0 + (j + 1) * 8 < colEnd;
        const bool odd = t & 1;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const unsigned mine0 =
              packPair<T>(acc[i][j][2 * half], acc[i][j][2 * half + 1]);
          const unsigned mine1 =
              packPair<T>(acc[i][j + 1][2 * half], acc[i][j + 1][2 * half + 1]);
          // Even lanes give their word of j + 1, odd lanes their word of j.
          const unsigned other =
              __shfl_xor_sync(0xffffffffu, odd ? mine0 : mine1, 1);
          const long long r = row + 8 * half;
          if (r >= rowEnd)
            continue;
          if (both) {
            // Even t: columns 2t..2t+3 of j; odd t: 2(t-1)..2t+1 of j + 1.
            const long long col =
                col0 + (odd ? (j + 1) * 8 + 2 * (t - 1) : j * 8 + 2 * t);
            const uint2 words =
                odd ? make_uint2(other, mine1) : make_uint2(mine0, other);
            *reinterpret_cast<uint2 *>(out + r * ld + col) = words;
          } else if (col0 + j * 8 < colEnd) {
            *reinterpret_cast<unsigned *>(out + r * ld + col0 + j * 8 + 2 * t) =
                mine0;
          }
        }
      }
    }
#pragma unroll
    for (int j = 2 * Pairs; j < FragsN; ++j) {
      const long long col = col0 + j * 8 + 2 * t;
      if (col < colEnd)
        storeFragment(out, ld, acc[i][j], row, rowEnd, col);
    }
  }
}

/// storeFragments with 16 bytes a lane, for result tiles whose stores lie
/// on a block's chain between short items (the segmented forwards): the
/// lanes of a quad first exchange their accumulators so that, in a group
/// of fragments side by side (2 of f32, 4 of 16-bit types), each lane
/// holds 16 contiguous bytes of one row, and a warp's store covers 64
/// contiguous bytes of each of its 8 rows: half the stores, and so half
/// the L1's tag lookups, for the same bytes. ld and col0 are multiples of 16
/// bytes' elements. A group that reaches past colEnd, and fragments beyond the
/// last whole group, are stored a fragment at a time.
template <typename T, int FragsM, int FragsN>
__device__ __forceinline__ void
storeFragmentsWide(T *out, long long ld, const float (&acc)[FragsM][FragsN][4],
                   long long row0, long long rowEnd, long long col0,
                   long long colEnd) {
  const int lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  constexpr bool Half = sizeof(T) == 2;
  constexpr int Group = Half ? 4 : 2;
  constexpr int Groups = FragsN / Group;
  const bool odd = t & 1, high = t & 2;
#pragma unroll
  for (int i = 0; i < FragsM; ++i) {
    const long long row = row0 + i * 16 + g;
#pragma unroll
    for (int q = 0; q < Groups; ++q) {
      const int j = q * Group;
      // Uniform over the warp: the shuffles below run on every lane.
      if (col0 + (j + Group) * 8 > colEnd) {
#pragma unroll
        for (int f = j; f < j + Group; ++f)
          if (col0 + f * 8 < colEnd)
            storeFragment(out, ld, acc[i][f], row, rowEnd,
                          col0 + f * 8 + 2 * t);
        continue;
      }
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const long long r = row + 8 * half;
        uint4 v;
        long long col;
        if constexpr (Half) {
          // Pairs (j, j + 1) and (j + 2, j + 3): even lanes give their word
          // of the second fragment, odd lanes of the first; an even lane
          // then holds columns 2t..2t+3 of the first, an odd lane
          // 2(t-1)..2t+1 of the second.
          uint2 pair[2];
#pragma unroll
          for (int p = 0; p < 2; ++p) {
            const float(&a)[4] = acc[i][j + 2 * p];
            const float(&b)[4] = acc[i][j + 2 * p + 1];
            const unsigned mine0 = packPair<T>(a[2 * half], a[2 * half + 1]);
            const unsigned mine1 = packPair<T>(b[2 * half], b[2 * half + 1]);
            const unsigned other =
                __shfl_xor_sync(0xffffffffu, odd ? mine0 : mine1, 1);
            pair[p] = odd ? make_uint2(other, mine1) : make_uint2(mine0, other);
          }
          // Lanes 0-1 hold columns 0-3 of both pairs, lanes 2-3 columns
          // 4-7: they swap halves, lane t ending with fragment j + t.
          const uint2 give = high ? pair[0] : pair[1];
          const uint2 got = make_uint2(__shfl_xor_sync(0xffffffffu, give.x, 2),
                                       __shfl_xor_sync(0xffffffffu, give.y, 2));
          v = high ? make_uint4(got.x, got.y, pair[1].x, pair[1].y)
                   : make_uint4(pair[0].x, pair[0].y, got.x, got.y);
          col = col0 + (j + t) * 8;
        } else {
          // Even lanes give their pair of fragment j + 1, odd lanes of j:
          // an even lane then holds columns 2t..2t+3 of j, an odd lane
          // 2(t-1)..2t+1 of j + 1.
          const float(&a)[4] = acc[i][j];
          const float(&b)[4] = acc[i][j + 1];
          const float send0 = odd ? a[2 * half] : b[2 * half];
          const float send1 = odd ? a[2 * half + 1] : b[2 * half + 1];
          const float got0 = __shfl_xor_sync(0xffffffffu, send0, 1);
          const float got1 = __shfl_xor_sync(0xffffffffu, send1, 1);
          const float4 f =
              odd ? make_float4(got0, got1, b[2 * half], b[2 * half + 1])
                  : make_float4(a[2 * half], a[2 * half + 1], got0, got1);
          v = *reinterpret_cast<const uint4 *>(&f);
          col = col0 + (j + (t & 1)) * 8 + 4 * (t >> 1);
        }
        if (r < rowEnd)
          *reinterpret_cast<uint4 *>(out + r * ld + col) = v;
      }
    }
#pragma unroll
    for (int f = Groups * Group; f < FragsN; ++f)
      if (col0 + f * 8 < colEnd)
        storeFragment(out, ld, acc[i][f], row, rowEnd, col0 + f * 8 + 2 * t);
  }
}

} // namespace gnnc::cuda::mma

#endif // GNNC_CUDA_MMA_TILE_CUH
