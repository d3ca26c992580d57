//===- linear_grad.cuh - The backward of a linear epilogue's tail -*- CUDA
//-*-===//
//
// The elementwise end of a layer's backward, act(H W + b) -> (dZ, db):
// reluBiasGrad writes dZ = dY where the forward's Y > 0 and 0 elsewhere
// (PyTorch's threshold at 0: a zero output passes no gradient), and leaves
// each block's column sums of dZ (f32) in `partials`; columnSums adds the
// blocks' partials in block order (deterministic, no atomics) into db, in
// f32. Every element is read and written once, in vectors of up to 16
// bytes; a block owns a contiguous run of rows, its threads spread over a
// power of two of column vectors and the rest over rows.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_LINEAR_GRAD_CUH
#define GNNC_CUDA_LINEAR_GRAD_CUH

#include "gnnc/cuda/bf16.cuh"
#include "gnnc/cuda/element_io.cuh"
#include "gnnc/cuda/f16.cuh"

namespace gnnc::cuda::linear_grad {

/// The columns a block's threads spread over at once: the width rounded up
/// to a power of two, at most THREADS.
template <int THREADS>
__device__ __forceinline__ int columnLanes(long long width) {
  int lanes = 1;
  while (lanes < width && lanes < THREADS)
    lanes *= 2;
  return lanes;
}

/// dz = dy * [y > 0] over `rows` x `width` elements (rows contiguous), VW
/// consecutive elements per access (width a multiple of VW, the arrays
/// aligned to VW elements); with `partials` (null: no bias), block b writes
/// the sums of its rows' dz per column to partials[b * width + c]. Block b
/// owns rows [b * per, (b + 1) * per) with per = ceil(rows / gridDim.x).
/// THREADS is the block's size.
template <typename T, int VW, int THREADS>
__device__ __forceinline__ void
reluBiasGrad(const T *__restrict__ y, const T *__restrict__ dy,
             T *__restrict__ dz, float *__restrict__ partials, long long rows,
             long long width) {
  __shared__ float sums[THREADS];
  const long long chunks = width / VW;
  const int cols = columnLanes<THREADS>(chunks);
  const int rowLanes = THREADS / cols;
  const int colLane = threadIdx.x % cols, rowLane = threadIdx.x / cols;
  const long long per = (rows + gridDim.x - 1) / gridDim.x;
  const long long first = (long long)blockIdx.x * per;
  const long long end = first + per < rows ? first + per : rows;
  for (long long c0 = 0; c0 < chunks; c0 += cols) {
    const long long c = c0 + colLane;
    float acc[VW];
#pragma unroll
    for (int v = 0; v < VW; ++v)
      acc[v] = 0.f;
    if (c < chunks)
#pragma unroll 4
      for (long long r = first + rowLane; r < end; r += rowLanes) {
        const long long at = r * width + c * VW;
        float out[VW], grad[VW];
        ElementIo<T>::template load<VW>(y + at, out);
        ElementIo<T>::template load<VW>(dy + at, grad);
#pragma unroll
        for (int v = 0; v < VW; ++v) {
          grad[v] = out[v] > 0.f ? grad[v] : 0.f;
          acc[v] += grad[v];
        }
        ElementIo<T>::template store<VW>(dz + at, grad);
      }
    if (partials == nullptr)
      continue;
#pragma unroll
    for (int v = 0; v < VW; ++v) {
      sums[threadIdx.x] = acc[v];
      __syncthreads();
      if (rowLane == 0 && c < chunks) {
        float s = 0.f;
        for (int i = 0; i < rowLanes; ++i)
          s += sums[i * cols + colLane];
        partials[(long long)blockIdx.x * width + c * VW + v] = s;
      }
      __syncthreads();
    }
  }
}

/// db[c] = the sum over blocks b < `blocks` of partials[b * width + c]:
/// COLS columns per block of THREADS threads (COLS divides THREADS),
/// THREADS / COLS threads per column each summing every (THREADS / COLS)-th
/// block's partial, then those sums added in order (deterministic, no
/// atomics).
template <int THREADS, int COLS>
__device__ __forceinline__ void columnSums(const float *__restrict__ partials,
                                           long long blocks, long long width,
                                           float *__restrict__ db) {
  static_assert(THREADS % COLS == 0, "COLS must divide THREADS");
  constexpr int Parts = THREADS / COLS;
  __shared__ float sums[THREADS];
  const int lane = threadIdx.x % COLS, part = threadIdx.x / COLS;
  const long long c = (long long)blockIdx.x * COLS + lane;
  float s = 0.f;
  if (c < width)
    for (long long b = part; b < blocks; b += Parts)
      s += partials[b * width + c];
  sums[threadIdx.x] = s;
  __syncthreads();
  if (part == 0 && c < width) {
    float total = 0.f;
#pragma unroll
    for (int i = 0; i < Parts; ++i)
      total += sums[i * COLS + lane];
    db[c] = total;
  }
}

} // namespace gnnc::cuda::linear_grad

#endif // GNNC_CUDA_LINEAR_GRAD_CUH
