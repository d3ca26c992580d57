//===- batched.cuh - Device helpers for batches of graphs --*- CUDA -*-===//
//
// The batched strategy stages the feature rows of a segment of small graphs
// (one column block of them) in shared memory and reduces every row of the
// segment from there. gnnc_stage_array and gnnc_stage_rows copy with
// asynchronous copies (cp.async, sm_80 and later): each thread issues its
// share of the whole tile before waiting once (gnnc_stage_wait), so the
// tile's loads are all in flight together instead of one dependent chain
// per row.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_BATCHED_CUH
#define GNNC_CUDA_BATCHED_CUH

namespace gnnc::cuda {

/// One raw word of Bytes bytes from global `src` to shared `dst`,
/// asynchronously when cp.async can move it (4, 8 or 16 bytes).
template <int Bytes, typename Raw>
__device__ __forceinline__ void copyAsync(Raw *dst, const Raw *src) {
  if constexpr (Bytes == 4 || Bytes == 8 || Bytes == 16) {
    const unsigned shared =
        static_cast<unsigned>(__cvta_generic_to_shared(dst));
    if constexpr (Bytes == 16)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared),
                   "l"(src));
    else
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(shared),
                   "l"(src), "n"(Bytes));
  } else {
    *dst = __ldg(src);
  }
}

} // namespace gnnc::cuda

/// Starts copying `n` words of `src` to `dst` (shared memory) with the
/// block's threads; gnnc_stage_wait() waits for a thread's copies.
template <typename Word>
__device__ __forceinline__ void
gnnc_stage_array(Word *dst, const Word *__restrict__ src, long long n) {
  for (long long i = threadIdx.x; i < n; i += blockDim.x)
    gnnc::cuda::copyAsync<sizeof(Word)>(dst + i, src + i);
}

/// Starts copying `rows` rows of `valid` (<= Chunks) raw words each into
/// `tile`, whose rows are Chunks words apart: tile[r * Chunks + c] = src[r *
/// srcStride + c]. All threads of the block call it.
template <typename Raw, int Chunks>
__device__ __forceinline__ void
gnnc_stage_rows(Raw *tile, const Raw *__restrict__ src, long long srcStride,
                long long rows, int valid) {
  const long long n = rows * Chunks;
  for (long long i = threadIdx.x; i < n; i += blockDim.x) {
    const long long r = i / Chunks;
    const int c = static_cast<int>(i - r * Chunks);
    if (c < valid)
      gnnc::cuda::copyAsync<sizeof(Raw)>(tile + i, src + r * srcStride + c);
  }
}

/// Waits for the calling thread's copies; the caller's __syncthreads() then
/// makes the whole block's visible.
__device__ __forceinline__ void gnnc_stage_wait() {
  asm volatile("cp.async.wait_all;\n" ::);
}

#endif // GNNC_CUDA_BATCHED_CUH
