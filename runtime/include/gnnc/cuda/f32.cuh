//===- f32.cuh - gnnc's device helpers for f32 features --------*- CUDA -*-===//
//
// The vector loads, stores and atomic adds that gnnc's kernels call for f32
// features: gnnc_<verb>_f32x<VW> moves VW consecutive floats (VW = 1, 2 or
// 4; 16 bytes is the widest load a thread issues) between memory and a
// thread's float registers. A vector pointer is aligned to its width.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_F32_CUH
#define GNNC_CUDA_F32_CUH

/// f[0..VW) = p[0..VW), through the read-only data cache.
__device__ __forceinline__ void gnnc_load_f32x1(const float *__restrict__ p,
                                                float *f) {
  f[0] = __ldg(p);
}

__device__ __forceinline__ void gnnc_load_f32x2(const float *__restrict__ p,
                                                float *f) {
  const float2 v = __ldg(reinterpret_cast<const float2 *>(p));
  f[0] = v.x;
  f[1] = v.y;
}

__device__ __forceinline__ void gnnc_load_f32x4(const float *__restrict__ p,
                                                float *f) {
  const float4 v = __ldg(reinterpret_cast<const float4 *>(p));
  f[0] = v.x;
  f[1] = v.y;
  f[2] = v.z;
  f[3] = v.w;
}

/// f[0..VW) = p[0..VW) from shared memory (a tile a block staged).
__device__ __forceinline__ void gnnc_load_shared_f32x1(const float *p,
                                                       float *f) {
  f[0] = *p;
}

__device__ __forceinline__ void gnnc_load_shared_f32x2(const float *p,
                                                       float *f) {
  const float2 v = *reinterpret_cast<const float2 *>(p);
  f[0] = v.x;
  f[1] = v.y;
}

__device__ __forceinline__ void gnnc_load_shared_f32x4(const float *p,
                                                       float *f) {
  const float4 v = *reinterpret_cast<const float4 *>(p);
  f[0] = v.x;
  f[1] = v.y;
  f[2] = v.z;
  f[3] = v.w;
}

/// p[0..VW) = f[0..VW), in one store.
__device__ __forceinline__ void gnnc_store_f32x1(float *__restrict__ p,
                                                 const float *f) {
  *p = f[0];
}

__device__ __forceinline__ void gnnc_store_f32x2(float *__restrict__ p,
                                                 const float *f) {
  float2 v;
  v.x = f[0];
  v.y = f[1];
  *reinterpret_cast<float2 *>(p) = v;
}

__device__ __forceinline__ void gnnc_store_f32x4(float *__restrict__ p,
                                                 const float *f) {
  float4 v;
  v.x = f[0];
  v.y = f[1];
  v.z = f[2];
  v.w = f[3];
  *reinterpret_cast<float4 *>(p) = v;
}

/// p[i] += f[i] for i < VW, one atomicAdd each: how the pieces of a row that
/// several workers share reach the result.
__device__ __forceinline__ void gnnc_atomic_add_f32x1(float *p,
                                                      const float *f) {
  atomicAdd(p, f[0]);
}

__device__ __forceinline__ void gnnc_atomic_add_f32x2(float *p,
                                                      const float *f) {
#pragma unroll
  for (int i = 0; i < 2; ++i)
    atomicAdd(p + i, f[i]);
}

__device__ __forceinline__ void gnnc_atomic_add_f32x4(float *p,
                                                      const float *f) {
#pragma unroll
  for (int i = 0; i < 4; ++i)
    atomicAdd(p + i, f[i]);
}

#endif // GNNC_CUDA_F32_CUH
