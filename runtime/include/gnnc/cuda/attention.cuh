//===- attention.cuh - GAT's softmax weights inside an SpMM ----*- CUDA -*-===//
//
// The pieces of gnn.spmm with attention: the weight of edge e = (r, c) is
// the softmax over row r of the logit leaky_relu(dst[r] + src[c]). A row's
// threads first take the row's largest logit and the sum of exp(logit -
// largest) (each over its share of the edges, then combined), and the
// aggregation then weighs each neighbour by exp(logit - largest) / sum.
// Running values are f32 whatever the element type. Under neighbor_group
// the groups of a row first leave its largest logit and its sum in a
// workspace (two kernels: gnnc_atomic_max_float, then atomicAdd), and the
// aggregation reads them.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_ATTENTION_CUH
#define GNNC_CUDA_ATTENTION_CUH

/// An edge's logit: leaky_relu(dst + src) with `slope` (slope 1 is the
/// plain sum).
__device__ __forceinline__ float gnnc_attention_logit(float dst, float src,
                                                      float slope) {
  const float x = dst + src;
  return x > 0.0f ? x : x * slope;
}

/// Adds `logit` to the running maximum `m` (from -infinity) and the sum
/// `s` of exp(logit - m) (from 0) of one thread.
__device__ __forceinline__ void gnnc_softmax_add(float &m, float &s,
                                                 float logit) {
  if (logit > m) {
    s = s * expf(m - logit) + 1.0f;
    m = logit;
  } else {
    s += expf(logit - m);
  }
}

/// Combines the running maxima and sums of the `Lanes` threads of a row
/// (`mask`: their bits in the warp); every thread ends with the row's. A
/// thread that saw no edge (m = -infinity, s = 0) adds nothing.
template <int Lanes>
__device__ __forceinline__ void gnnc_softmax_combine(float &m, float &s,
                                                     unsigned mask) {
#pragma unroll
  for (int offset = Lanes / 2; offset > 0; offset /= 2) {
    const float m2 = __shfl_xor_sync(mask, m, offset, Lanes);
    const float s2 = __shfl_xor_sync(mask, s, offset, Lanes);
    const float top = fmaxf(m, m2);
    // Equal maxima (both -infinity included) keep their sums as they are.
    s = (m == top ? s : s * expf(m - top)) +
        (m2 == top ? s2 : s2 * expf(m2 - top));
    m = top;
  }
}

/// The largest of `v` over the `Lanes` threads of a group (`mask`: their
/// bits in the warp), in every one of them.
template <int Lanes>
__device__ __forceinline__ float gnnc_lanes_max(float v, unsigned mask) {
#pragma unroll
  for (int offset = Lanes / 2; offset > 0; offset /= 2)
    v = fmaxf(v, __shfl_xor_sync(mask, v, offset, Lanes));
  return v;
}

/// The sum of `v` over the `Lanes` threads of a group, in every one.
template <int Lanes>
__device__ __forceinline__ float gnnc_lanes_sum(float v, unsigned mask) {
#pragma unroll
  for (int offset = Lanes / 2; offset > 0; offset /= 2)
    v += __shfl_xor_sync(mask, v, offset, Lanes);
  return v;
}

/// *p = max(*p, v) for floats, atomically: a non-negative float orders as
/// its bits read as a signed integer, a negative one reversed as unsigned
/// (so -infinity, 0xff800000, is below every other value either way).
__device__ __forceinline__ void gnnc_atomic_max_float(float *p, float v) {
  if (v >= 0.0f)
    atomicMax(reinterpret_cast<int *>(p), __float_as_int(v));
  else
    atomicMin(reinterpret_cast<unsigned int *>(p), __float_as_uint(v));
}

/// The softmax weight of an edge of `logit` in a row of maximum `m` whose
/// sum has the inverse `inv_s`.
__device__ __forceinline__ float gnnc_attention_weight(float logit, float m,
                                                       float inv_s) {
  return expf(logit - m) * inv_s;
}

#endif // GNNC_CUDA_ATTENTION_CUH
