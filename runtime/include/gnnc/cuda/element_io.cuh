//===- element_io.cuh - VW elements of any type as floats ------*- CUDA -*-===//
//
// ElementIo<T>: loads, stores and atomic additions of VW consecutive
// elements of T (f32, f16 or bf16) as a thread's floats, one vector access
// each: the f32 helpers of f32.cuh (VW = 1, 2 or 4) or the 16-bit ones of
// packed16.cuh (a specialisation of Packed16<T> from f16.cuh or bf16.cuh
// must be visible for 16-bit T). For kernel templates written once for all
// three types.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_ELEMENT_IO_CUH
#define GNNC_CUDA_ELEMENT_IO_CUH

#include "gnnc/cuda/f32.cuh"
#include "gnnc/cuda/packed16.cuh"

namespace gnnc::cuda {

/// Loads, stores and atomic additions of VW elements of T as floats.
template <typename T> struct ElementIo {
  template <int VW>
  static __device__ __forceinline__ void load(const T *p, float *f) {
    gnnc::cuda::load<VW, T>(p, f);
  }
  template <int VW>
  static __device__ __forceinline__ void store(T *p, const float *f) {
    gnnc::cuda::store<VW, T>(p, f);
  }
  template <int VW>
  static __device__ __forceinline__ void atomicAdd(T *p, const float *f) {
    gnnc::cuda::atomicAddFloats<VW, T>(p, f);
  }
};

/// f32 takes the helpers of gnnc/cuda/f32.cuh (VW is 1, 2 or 4).
template <> struct ElementIo<float> {
  template <int VW>
  static __device__ __forceinline__ void load(const float *p, float *f) {
    if constexpr (VW == 4)
      gnnc_load_f32x4(p, f);
    else if constexpr (VW == 2)
      gnnc_load_f32x2(p, f);
    else
      gnnc_load_f32x1(p, f);
  }
  template <int VW>
  static __device__ __forceinline__ void store(float *p, const float *f) {
    if constexpr (VW == 4)
      gnnc_store_f32x4(p, f);
    else if constexpr (VW == 2)
      gnnc_store_f32x2(p, f);
    else
      gnnc_store_f32x1(p, f);
  }
  /// On sm_90 one vector reduction per chunk; gnnc_atomic_add_f32x* (one
  /// atomicAdd per element) elsewhere.
  template <int VW>
  static __device__ __forceinline__ void atomicAdd(float *p, const float *f) {
#if __CUDA_ARCH__ >= 900
    if constexpr (VW == 4)
      ::atomicAdd(reinterpret_cast<float4 *>(p),
                  make_float4(f[0], f[1], f[2], f[3]));
    else if constexpr (VW == 2)
      ::atomicAdd(reinterpret_cast<float2 *>(p), make_float2(f[0], f[1]));
    else
      ::atomicAdd(p, f[0]);
#else
    if constexpr (VW == 4)
      gnnc_atomic_add_f32x4(p, f);
    else if constexpr (VW == 2)
      gnnc_atomic_add_f32x2(p, f);
    else
      gnnc_atomic_add_f32x1(p, f);
#endif
  }
};

} // namespace gnnc::cuda

#endif // GNNC_CUDA_ELEMENT_IO_CUH
