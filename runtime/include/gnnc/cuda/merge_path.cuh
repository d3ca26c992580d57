//===- merge_path.cuh - Where a merge-path item's row is ------*- CUDA -*-===//
//
// The merge-path search of gnnc's edge_parallel kernels: a worker takes an
// equal stretch of the merge path of a CSR graph and needs the rows its
// stretch starts and ends in.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_MERGE_PATH_CUH
#define GNNC_CUDA_MERGE_PATH_CUH

// The merge path of a CSR graph lists, row by row, the row's edges
// and then its end; the end of row i is item i + row_ptr[i + 1].
// Finds, for items d0 and d1, the first row whose end is that item
// or later (num_rows if none): the row the item belongs to. The
// `Lanes` threads of a worker search together: each step probes
// Lanes points of both ranges at once and keeps the piece between
// the last probe before the answer and the first one at or after
// it, so a search takes log_(Lanes+1)(num_rows) dependent loads.
// `mask` holds the bits of the worker's threads in the warp; `lane` is
// this thread's index among them.
template <int Lanes, typename Offset>
__device__ __forceinline__ void
gnnc_merge_rows(const Offset *__restrict__ row_ptr, long long num_rows,
                long long d0, long long d1, unsigned mask, int lane,
                long long &i0, long long &i1) {
  const unsigned group = Lanes == 32 ? 0xffffffffu : (1u << Lanes) - 1u;
  const int base = threadIdx.x % 32 / Lanes * Lanes;
  long long lo[2] = {0, 0}, hi[2] = {num_rows, num_rows};
  const long long d[2] = {d0, d1};
  while (lo[0] < hi[0] || lo[1] < hi[1]) {
    long long probe[2];
    bool before[2];
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      probe[s] = lo[s] + (hi[s] - lo[s]) * (lane + 1) / (Lanes + 1);
      before[s] =
          lo[s] < hi[s] && probe[s] + (long long)row_ptr[probe[s] + 1] < d[s];
    }
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      // The end test is monotone, so the probes that pass are the first c.
      const int c = __popc((__ballot_sync(mask, before[s]) >> base) & group);
      const long long below =
          __shfl_sync(mask, probe[s], c > 0 ? c - 1 : 0, Lanes);
      const long long above =
          __shfl_sync(mask, probe[s], c < Lanes ? c : 0, Lanes);
      if (lo[s] < hi[s]) {
        if (c > 0)
          lo[s] = below + 1;
        if (c < Lanes)
          hi[s] = above;
      }
    }
  }
  i0 = lo[0];
  i1 = lo[1];
}

#endif // GNNC_CUDA_MERGE_PATH_CUH
