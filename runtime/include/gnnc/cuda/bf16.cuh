//===- bf16.cuh - gnnc's device helpers for bf16 features ------*- CUDA -*-===//
//
// The vector loads, stores and atomic adds that gnnc's kernels call for
// bf16 features (__nv_bfloat16): gnnc_<verb>_bf16x<VW> moves VW consecutive
// elements (VW = 1, 2, 4 or 8: at most 16 bytes) between memory and a
// thread's float registers, and gnnc_unpack_bf16x<VW> widens a raw word
// that a kernel loaded itself (packed16.cuh). A vector pointer is aligned
// to its width.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_BF16_CUH
#define GNNC_CUDA_BF16_CUH

#include <cuda_bf16.h>

#include "gnnc/cuda/packed16.cuh"

namespace gnnc::cuda {

/// __nv_bfloat16 as the 16-bit helpers of packed16.cuh see it.
template <> struct Packed16<__nv_bfloat16> {
  using Pair = __nv_bfloat162;
  static __device__ __forceinline__ float toFloat(__nv_bfloat16 h) {
    return __bfloat162float(h);
  }
  static __device__ __forceinline__ __nv_bfloat16 fromFloat(float f) {
    return __float2bfloat16_rn(f);
  }
  static __device__ __forceinline__ __nv_bfloat16
  fromBits(unsigned short bits) {
    return __ushort_as_bfloat16(bits);
  }
  static __device__ __forceinline__ float2 pairToFloat2(__nv_bfloat162 h) {
    return __bfloat1622float2(h);
  }
  static __device__ __forceinline__ __nv_bfloat162 floatsToPair(float lo,
                                                                float hi) {
    return __floats2bfloat162_rn(lo, hi);
  }
};

} // namespace gnnc::cuda

/// gnnc_unpack_bf16x<VW>, gnnc_load_bf16x<VW>, gnnc_store_bf16x<VW> and
/// gnnc_atomic_add_bf16x<VW> (packed16.cuh).
GNNC_PACKED16_HELPERS(bf16, __nv_bfloat16)

#endif // GNNC_CUDA_BF16_CUH
