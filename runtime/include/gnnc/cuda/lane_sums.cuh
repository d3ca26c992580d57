//===- lane_sums.cuh - Several sums across a group of lanes ----*- CUDA -*-===//
//
// Each of a worker's `Lanes` threads holds `Values` partial sums (an SDDMM
// worker: one per edge of a batch, each over the thread's share of the
// features); the worker wants the `Values` totals. Summing each value on
// its own takes Values x log2(Lanes) shuffles. Exchanging halves takes
// about Values + log2(Lanes / Values): at each step a thread keeps one
// half of its values, sends the other half to its partner (which keeps
// that half) and adds what it receives, so every step halves the values a
// thread holds. Each total ends in known threads (`owner`, `index`).
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_LANE_SUMS_CUH
#define GNNC_CUDA_LANE_SUMS_CUH

/// The least power of two at or above n (1 for n <= 1).
constexpr int gnnc_pow2_ceil(int n) {
  return n <= 1 ? 1 : 2 * gnnc_pow2_ceil((n + 1) / 2);
}

/// `Lanes` (a power of two up to 32) threads, each with `Values` partial
/// sums. Values that are not a power of two are padded with zeros to
/// `kSlots`.
template <int Values, int Lanes> struct gnnc_lane_sums {
  static_assert(Lanes >= 1 && Lanes <= 32 && (Lanes & (Lanes - 1)) == 0,
                "a worker's threads are a power of two up to 32");
  static_assert(Values >= 1, "at least one value");
  static constexpr int kSlots = gnnc_pow2_ceil(Values);
  /// Totals each thread holds afterwards (in v[0..kKept)).
  static constexpr int kKept = kSlots > Lanes ? kSlots / Lanes : 1;
  /// Threads that hold the same total afterwards.
  static constexpr int kShared = kSlots < Lanes ? Lanes / kSlots : 1;

  /// Replaces v[0..kKept) of each thread by totals over the worker's
  /// threads; `mask` holds the worker's bits in the warp and `lane` is the
  /// thread's index among them. The other entries of v are left spent.
  static __device__ __forceinline__ void reduce(float (&v)[Values],
                                                unsigned mask, int lane) {
    step<kSlots / 2, Lanes / 2>(v, mask, lane);
  }

  /// The value whose total thread `lane` holds in v[i] after reduce.
  static __device__ __forceinline__ int index(int lane, int i) {
    return kSlots > Lanes ? lane * kKept + i : lane / kShared;
  }

  /// The first thread that holds value u's total after reduce.
  static __device__ __forceinline__ int owner(int u) {
    return kSlots > Lanes ? u / kKept : u * kShared;
  }

private:
  // One exchange with the thread `Offset` lanes away, holding 2 x Half
  // values (Half = 0: one value, summed). Template parameters rather than
  // loop counters, so that every index into v is a constant and v stays in
  // registers.
  template <int Half, int Offset>
  static __device__ __forceinline__ void step(float (&v)[Values],
                                              unsigned mask, int lane) {
    if constexpr (Offset >= 1) {
      if constexpr (Half >= 1) {
        // The partner keeps the half this thread sends.
        const bool upper = (lane & Offset) != 0;
#pragma unroll
        for (int i = 0; i < Half; ++i) {
          const float hi = i + Half < Values ? v[i + Half] : 0.0f;
          const float send = upper ? v[i] : hi;
          const float keep = upper ? hi : v[i];
          v[i] = keep + __shfl_xor_sync(mask, send, Offset, Lanes);
        }
      } else {
        v[0] += __shfl_xor_sync(mask, v[0], Offset, Lanes);
      }
      step<Half / 2, Offset / 2>(v, mask, lane);
    }
  }
};

#endif // GNNC_CUDA_LANE_SUMS_CUH
