//===- f16.cuh - gnnc's device helpers for f16 features --------*- CUDA -*-===//
//
// The vector loads, stores and atomic adds that gnnc's kernels call for
// f16 features (__half): gnnc_<verb>_f16x<VW> moves VW consecutive
// elements (VW = 1, 2, 4 or 8: at most 16 bytes) between memory and a
// thread's float registers, and gnnc_unpack_f16x<VW> widens a raw word
// that a kernel loaded itself (packed16.cuh). A vector pointer is aligned
// to its width.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_F16_CUH
#define GNNC_CUDA_F16_CUH

#include <cuda_fp16.h>

#include "gnnc/cuda/packed16.cuh"

namespace gnnc::cuda {

/// __half as the 16-bit helpers of packed16.cuh see it.
template <> struct Packed16<__half> {
  using Pair = __half2;
  static __device__ __forceinline__ float toFloat(__half h) {
    return __half2float(h);
  }
  static __device__ __forceinline__ __half fromFloat(float f) {
    return __float2half_rn(f);
  }
  static __device__ __forceinline__ __half fromBits(unsigned short bits) {
    return __ushort_as_half(bits);
  }
  static __device__ __forceinline__ float2 pairToFloat2(__half2 h) {
    return __half22float2(h);
  }
  static __device__ __forceinline__ __half2 floatsToPair(float lo, float hi) {
    return __floats2half2_rn(lo, hi);
  }
};

} // namespace gnnc::cuda

/// gnnc_unpack_f16x<VW>, gnnc_load_f16x<VW>, gnnc_store_f16x<VW> and
/// gnnc_atomic_add_f16x<VW> (packed16.cuh).
GNNC_PACKED16_HELPERS(f16, __half)

#endif // GNNC_CUDA_F16_CUH
