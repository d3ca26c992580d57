//===- packed16.cuh - Helpers shared by f16 and bf16 -----------*- CUDA -*-===//
//
// The loads, stores and atomic adds of 16-bit element types, written once
// for f16 (f16.cuh) and bf16 (bf16.cuh). A vector of VW 16-bit elements
// travels in one raw unsigned word of 2 * VW bytes (RawWord); the kernels
// may keep such words packed in registers and widen them to floats only
// when they are used (the gnnc_unpack_* helpers), which halves the
// registers a batch of loads takes. Elements go to and from memory in
// pairs (__half2, __nv_bfloat162) whenever VW >= 2.
//
// Each element type describes itself in a specialisation of Packed16<T>:
//   Pair                        the two-element vector type
//   toFloat(T), fromFloat(float)        one element, rounding to nearest
//   fromBits(unsigned short)            an element from its bits
//   pairToFloat2(Pair), floatsToPair(float, float)   two elements
// and names its helpers with GNNC_PACKED16_HELPERS (below).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_PACKED16_CUH
#define GNNC_CUDA_PACKED16_CUH

namespace gnnc::cuda {

/// The unsigned type that moves `Bytes` bytes in one load or store.
template <int Bytes> struct RawWord;
template <> struct RawWord<2> { using type = unsigned short; };
template <> struct RawWord<4> { using type = unsigned int; };
template <> struct RawWord<8> { using type = uint2; };
template <> struct RawWord<16> { using type = uint4; };

/// The raw word of VW 16-bit elements.
template <int VW> using Raw16 = typename RawWord<2 * VW>::type;

/// What the helpers below need of a 16-bit element type T (see the file
/// comment); f16.cuh and bf16.cuh specialise it.
template <typename T> struct Packed16;

/// f[0..VW) = the VW elements held in the raw word `v` (VW >= 2).
template <typename T, int VW>
__device__ __forceinline__ void unpack(const Raw16<VW> v, float *f) {
  static_assert(VW >= 2, "a raw word holds pairs of 16-bit elements");
  using Pair = typename Packed16<T>::Pair;
  const unsigned *w = reinterpret_cast<const unsigned *>(&v);
#pragma unroll
  for (int i = 0; i < VW / 2; ++i) {
    const float2 t =
        Packed16<T>::pairToFloat2(*reinterpret_cast<const Pair *>(&w[i]));
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}

/// f[0..VW) = p[0..VW) as floats, in one load through the read-only data
/// cache.
template <int VW, typename T>
__device__ __forceinline__ void load(const T *__restrict__ p, float *f) {
  if constexpr (VW == 1) {
    const unsigned short raw =
        __ldg(reinterpret_cast<const unsigned short *>(p));
    f[0] = Packed16<T>::toFloat(Packed16<T>::fromBits(raw));
  } else {
    unpack<T, VW>(__ldg(reinterpret_cast<const Raw16<VW> *>(p)), f);
  }
}

/// f[0..VW) = p[0..VW) as floats, in one load from shared memory (a tile
/// a block staged).
template <int VW, typename T>
__device__ __forceinline__ void loadShared(const T *p, float *f) {
  if constexpr (VW == 1) {
    const unsigned short raw = *reinterpret_cast<const unsigned short *>(p);
    f[0] = Packed16<T>::toFloat(Packed16<T>::fromBits(raw));
  } else {
    unpack<T, VW>(*reinterpret_cast<const Raw16<VW> *>(p), f);
  }
}

/// p[0..VW) = f[0..VW), rounded to nearest, in one store.
template <int VW, typename T>
__device__ __forceinline__ void store(T *__restrict__ p, const float *f) {
  if constexpr (VW == 1) {
    *p = Packed16<T>::fromFloat(f[0]);
  } else {
    using Pair = typename Packed16<T>::Pair;
    Raw16<VW> v;
    unsigned *w = reinterpret_cast<unsigned *>(&v);
#pragma unroll
    for (int i = 0; i < VW / 2; ++i) {
      const Pair h = Packed16<T>::floatsToPair(f[2 * i], f[2 * i + 1]);
      w[i] = *reinterpret_cast<const unsigned *>(&h);
    }
    *reinterpret_cast<Raw16<VW> *>(p) = v;
  }
}

/// p[i] += f[i] for i < VW, rounded to nearest, with atomicAdd on pairs
/// (on the one element when VW = 1).
template <int VW, typename T>
__device__ __forceinline__ void atomicAddFloats(T *p, const float *f) {
  if constexpr (VW == 1) {
    atomicAdd(p, Packed16<T>::fromFloat(f[0]));
  } else {
    using Pair = typename Packed16<T>::Pair;
#pragma unroll
    for (int i = 0; i < VW / 2; ++i)
      atomicAdd(reinterpret_cast<Pair *>(p) + i,
                Packed16<T>::floatsToPair(f[2 * i], f[2 * i + 1]));
  }
}

} // namespace gnnc::cuda

/// The helpers gnnc's kernels call for the 16-bit element type T, named
/// after TAG (f16, bf16), each the template above of its width VW:
///   gnnc_unpack_<TAG>x<VW>(raw word, f)   VW = 2, 4, 8: unpack
///   gnnc_load_<TAG>x<VW>(p, f)            VW = 1, 2, 4, 8: load, through
///                                         the read-only data cache
///   gnnc_load_shared_<TAG>x<VW>(p, f)     VW = 1, 2, 4, 8: loadShared
///   gnnc_store_<TAG>x<VW>(p, f)           VW = 1, 2, 4, 8: store, rounded
///                                         to nearest, in one store
///   gnnc_atomic_add_<TAG>x<VW>(p, f)      VW = 1, 2, 4, 8: atomicAddFloats
#define GNNC_PACKED16_HELPERS(TAG, T)                                          \
  GNNC_PACKED16_UNPACK(TAG, T, 2)                                              \
  GNNC_PACKED16_UNPACK(TAG, T, 4)                                              \
  GNNC_PACKED16_UNPACK(TAG, T, 8)                                              \
  GNNC_PACKED16_MOVES(TAG, T, 1)                                               \
  GNNC_PACKED16_MOVES(TAG, T, 2)                                               \
  GNNC_PACKED16_MOVES(TAG, T, 4)                                               \
  GNNC_PACKED16_MOVES(TAG, T, 8)

/// gnnc_unpack_<TAG>x<VW> (GNNC_PACKED16_HELPERS).
#define GNNC_PACKED16_UNPACK(TAG, T, VW)                                       \
  __device__ __forceinline__ void gnnc_unpack_##TAG##x##VW(                    \
      const gnnc::cuda::Raw16<VW> v, float *f) {                               \
    gnnc::cuda::unpack<T, VW>(v, f);                                           \
  }

/// gnnc_load_, gnnc_store_ and gnnc_atomic_add_<TAG>x<VW>
/// (GNNC_PACKED16_HELPERS).
#define GNNC_PACKED16_MOVES(TAG, T, VW)                                        \
  __device__ __forceinline__ void gnnc_load_##TAG##x##VW(                      \
      const T *__restrict__ p, float *f) {                                     \
    gnnc::cuda::load<VW>(p, f);                                                \
  }                                                                            \
  __device__ __forceinline__ void gnnc_load_shared_##TAG##x##VW(const T *p,    \
                                                                float *f) {    \
    gnnc::cuda::loadShared<VW>(p, f);                                          \
  }                                                                            \
  __device__ __forceinline__ void gnnc_store_##TAG##x##VW(T *__restrict__ p,   \
                                                          const float *f) {    \
    gnnc::cuda::store<VW>(p, f);                                               \
  }                                                                            \
  __device__ __forceinline__ void gnnc_atomic_add_##TAG##x##VW(                \
      T *p, const float *f) {                                                  \
    gnnc::cuda::atomicAddFloats<VW>(p, f);                                     \
  }

#endif // GNNC_CUDA_PACKED16_CUH
