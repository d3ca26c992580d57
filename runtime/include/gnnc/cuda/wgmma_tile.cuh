//===- wgmma_tile.cuh - Warpgroup tensor-core tiles (sm_90a) --*- CUDA -*-===//
//
// The pieces of a warpgroup tensor-core tile (Hopper's wgmma, sm_90a
// through NVRTC) that any gnnc kernel can reuse:
//  - copySwizzledAsync: a block's share of a tile whose rows are 128 bytes
//    (64 halves or 32 floats), stored in shared memory with the 128-byte
//    swizzle the tensor cores read (16-byte chunk c of row r at chunk c ^ (r %
//    8));
//  - descriptor: the 64-bit shared-memory matrix descriptor of such a tile;
//  - Wgmma<T>: wgmma.mma_async m64n64 with f32 accumulators: k16 of f16
//    or bf16 inputs, A and B from shared memory, each K-major or
//    transposed (A M-major, B N-major); or k8 of f32 inputs read as TF32,
//    both K-major;
//  - fence / commit / waitGroup / fenceAsyncShared: the ordering wgmma
//    needs (registers, groups, and shared memory written by cp.async).
//
// Layouts. A K-major operand (rows along M or N, each 128 bytes of the
// reduction) is rows of 128 bytes, 8 rows to a 1024-byte swizzle atom: the
// descriptor's stride byte offset is 1024, its leading byte offset unused.
// An N-major B (rows along the reduction, 64 result columns each) is the
// same picture turned round: 8 reduction rows of 128 bytes to an atom. A
// tile wider than 64 columns is several such panels, one per instruction,
// so the descriptors never step between atoms along N. Each instruction's
// slice of a K-major tile (k16 halves, k8 floats) starts 32 bytes further into
// its rows (the hardware applies the swizzle to the address bits), each of an
// N-major tile 16 rows (2048 bytes) further. Tiles start on 1024 bytes.
//
// The accumulators of an m64nN tile, warp w of the warpgroup, lane l with
// g = l / 4 and t = l % 4: register 4j + i holds row 16w + g + 8 (i / 2),
// column 8j + 2t + i % 2, the layout of mma.sync's 16 x 8 fragments
// (mma_tile.cuh's storeFragments writes them).
//
// Compiled for a target without wgmma (anything but sm_90a), every use
// stops the compilation with a static_assert that says so.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_WGMMA_TILE_CUH
#define GNNC_CUDA_WGMMA_TILE_CUH

#include "gnnc/cuda/mma_tile.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GNNC_HAS_WGMMA 1
#else
#define GNNC_HAS_WGMMA 0
#endif

namespace gnnc::cuda::wgmma {

/// Bytes of one swizzled row, and of the 8-row atom.
constexpr int kRowBytes = 128;
constexpr int kAtomBytes = 8 * kRowBytes;

/// Fails the compilation where wgmma is missing (a dependent false, so
/// that only an instantiation trips it).
template <typename T> __device__ __forceinline__ void requireWgmma() {
  static_assert(GNNC_HAS_WGMMA || sizeof(T) == 0,
                "math = wgmma needs Hopper's arch-specific target sm_90a "
                "(compute capability 9.0)");
}

/// The block's threads copy Rows rows of 128 bytes, rows `ld` elements
/// apart in global memory from (row0, col0), into `dst` (1024-byte
/// aligned) swizzled; rows >= rowEnd and chunks at columns >= colEnd are
/// zero-filled. col0 and colEnd are multiples of 8 halves.
template <typename T, int Rows, int Threads>
__device__ __forceinline__ void
copySwizzledAsync(T *dst, const T *__restrict__ src, long long ld,
                  long long row0, long long rowEnd, long long col0,
                  long long colEnd) {
  constexpr int Chunk = 16 / sizeof(T);
  constexpr int ChunksPerRow = kRowBytes / 16;
  constexpr int RowElements = kRowBytes / sizeof(T);
  constexpr int Chunks = Rows * ChunksPerRow;
  if constexpr (Threads % ChunksPerRow == 0 && Chunks % Threads == 0) {
    // Each thread keeps its chunk column; rows RowStep apart keep their
    // row % 8 (RowStep is a multiple of 8), so its swizzled chunk is fixed.
    constexpr int RowStep = Threads / ChunksPerRow;
    static_assert(RowStep % 8 == 0 || Chunks / Threads == 1,
                  "rows a thread copies share their swizzle");
    const int r = threadIdx.x / ChunksPerRow;
    const int c = threadIdx.x % ChunksPerRow;
    const long long rowsLeft = rowEnd - row0 - r;
    const bool colValid = col0 + c * Chunk < colEnd;
    const T *s = src + (row0 + r) * ld + col0 + c * Chunk;
    T *d = dst + r * RowElements + ((c ^ (r & 7)) * Chunk);
#pragma unroll
    for (int i = 0; i < Chunks / Threads; ++i) {
      const bool valid = colValid && i * RowStep < rowsLeft;
      gnnc::cuda::mma::copyAsync16(
          d + i * RowStep * RowElements,
          valid ? s + (long long)i * RowStep * ld : src, valid);
    }
  } else {
    for (int e = threadIdx.x; e < Chunks; e += Threads) {
      const int r = e / ChunksPerRow, c = e % ChunksPerRow;
      const long long gr = row0 + r, gc = col0 + c * Chunk;
      const bool valid = gr < rowEnd && gc < colEnd;
      gnnc::cuda::mma::copyAsync16(dst + r * RowElements +
                                       ((c ^ (r & 7)) * Chunk),
                                   valid ? src + gr * ld + gc : src, valid);
    }
  }
}

/// The descriptor of a 128-byte-swizzled operand starting at `p` (shared
/// memory): 8-row groups 1024 bytes apart. The leading byte offset is set to
/// the same 1024: unused by K-major operands, and by N-major ones whose
/// instruction reads one 64-column panel.
__device__ __forceinline__ unsigned long long descriptor(const void *p) {
  const unsigned long long address = gnnc::cuda::mma::sharedAddress(p);
  const unsigned long long encoded1024 = kAtomBytes >> 4;
  return ((address & 0x3FFFF) >> 4) | (encoded1024 << 16) |
         (encoded1024 << 32) | (1ull << 62);
}

/// Orders this thread's earlier generic-proxy writes to shared memory
/// (cp.async copies included, once waited for) before the tensor cores'
/// reads; each writing thread runs it before the block's barrier.
__device__ __forceinline__ void fenceAsyncShared() {
#if GNNC_HAS_WGMMA
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

/// Makes the accumulators' registers, written by ordinary instructions,
/// safe for the wgmma instructions that follow.
__device__ __forceinline__ void fence() {
#if GNNC_HAS_WGMMA
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

/// Closes the group of wgmma instructions issued since the last commit.
__device__ __forceinline__ void commit() {
#if GNNC_HAS_WGMMA
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

/// Waits until at most `Pending` of the warpgroup's groups are in flight.
template <int Pending> __device__ __forceinline__ void waitGroup() {
#if GNNC_HAS_WGMMA
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
#endif
}

#define GNNC_WGMMA_D8(j)                                                       \
  "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
/// One m64n64 instruction: `kind` names the reduction and the types
/// ("k16.f32.f16.f16"), `tail` the operands after the scales of A and B
/// (the transpositions), `...` their constraints after a comma.
#define GNNC_WGMMA_M64N64(kind, tail, ...)                                     \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                    \
               "wgmma.mma_async.sync.aligned.m64n64" kind " "                  \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "      \
               "%13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "       \
               "%24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, "     \
               "1" tail ";\n}\n"                                               \
               : GNNC_WGMMA_D8(0), GNNC_WGMMA_D8(1), GNNC_WGMMA_D8(2),         \
                 GNNC_WGMMA_D8(3), GNNC_WGMMA_D8(4), GNNC_WGMMA_D8(5),         \
                 GNNC_WGMMA_D8(6), GNNC_WGMMA_D8(7)                            \
               : "l"(a), "l"(b), "r"(1)__VA_ARGS__)

template <typename T> struct IsHalf { static constexpr bool value = false; };
template <> struct IsHalf<__half> { static constexpr bool value = true; };

/// D (64 x 64, f32) += A (64 x kK; K-major, or M-major with TransA) B (kK
/// x 64; K-major, or N-major with TransB) from two shared-memory
/// descriptors. `d` is the thread's 8 fragments of 4 accumulators. One
/// instruction reduces over 32 bytes of each row: kK = 16 halves (f16,
/// bf16) or 8 floats, which the tensor cores read as TF32 (the low 13
/// mantissa bits dropped); TF32 takes both operands K-major only. An
/// M-major A is laid out as an N-major B: 64-element panels of kK
/// reduction rows.
template <typename T> struct Wgmma {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4,
                "wgmma here takes f16, bf16 or f32 (as TF32)");
  static constexpr int kK = 32 / sizeof(T);
  template <int TransB, int TransA = 0>
  static __device__ __forceinline__ void
  run(float (&d)[8][4], unsigned long long a, unsigned long long b) {
#if GNNC_HAS_WGMMA
    if constexpr (sizeof(T) == 4) {
      static_assert(TransA == 0 && TransB == 0,
                    "TF32 wgmma reads A and B K-major only");
      GNNC_WGMMA_M64N64("k8.f32.tf32.tf32", "", );
    } else if constexpr (IsHalf<T>::value) {
      GNNC_WGMMA_M64N64("k16.f32.f16.f16", ", %35, %36", , "n"(TransA),
                        "n"(TransB));
    } else {
      GNNC_WGMMA_M64N64("k16.f32.bf16.bf16", ", %35, %36", , "n"(TransA),
                        "n"(TransB));
    }
#else
    requireWgmma<T>();
#endif
  }
};

#undef GNNC_WGMMA_M64N64
#undef GNNC_WGMMA_D8

} // namespace gnnc::cuda::wgmma

#endif // GNNC_CUDA_WGMMA_TILE_CUH
