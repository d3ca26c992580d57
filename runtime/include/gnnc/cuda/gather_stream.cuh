//===- gather_stream.cuh - The gather stream of an SpMM, alone -*- CUDA -*-===//
//
// What an SpMM cannot avoid doing, without its sparse bookkeeping: for every
// edge, in the graph's column order, read the feature row of its column and
// add it up. No row offsets, no row ends, no result rows: the edges are cut
// into equal runs of run_edges, one run per group of Lanes threads, and each
// thread writes one float (its sum) to `sink` at the end, so that the loads
// cannot be dropped. run_edges is the host's choice: short runs on small
// graphs, so that enough groups run to fill the GPU. The time this takes on
// a graph is the bound that an SpMM's gathers reach on that graph, reported
// by gnn-bench beside every SpMM case; run over a random column order into a feature matrix that fits
// in the L2, it measures the L2's gather bandwidth for that row size.
//
// Lane l of a group owns the chunks l, l + Lanes, ... (Chunks of them) of VW
// elements of a row of `width` elements; chunks past the width are skipped.
// Unroll edges are in flight per thread.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile it elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_GATHER_STREAM_CUH
#define GNNC_CUDA_GATHER_STREAM_CUH

#include "gnnc/cuda/bf16.cuh"
#include "gnnc/cuda/f16.cuh"
#include "gnnc/cuda/element_io.cuh"

namespace gnnc::cuda::bound {

/// f[0..VW) += p[0..VW) for float, f16 and bf16 rows.
template <typename T, int VW>
__device__ __forceinline__ void addRow(const T *__restrict__ p, float *f) {
  float v[VW];
  ElementIo<T>::template load<VW>(p, v);
#pragma unroll
  for (int i = 0; i < VW; ++i)
    f[i] += v[i];
}

template <typename T, int VW, int Lanes, int Chunks, int Unroll>
__device__ __forceinline__ void
gatherStream(const int *__restrict__ cols, const T *__restrict__ x,
             long long numEdges, long long runEdges, long long width,
             long long rowStride, float *__restrict__ sink,
             long long numThreads) {
  const long long thread = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (thread >= numThreads)
    return;
  const int lane = static_cast<int>(thread % Lanes);
  const long long group = thread / Lanes;
  const long long first = group * runEdges;
  const long long last =
      first + runEdges < numEdges ? first + runEdges : numEdges;
  float acc[Chunks][VW];
#pragma unroll
  for (int c = 0; c < Chunks; ++c)
#pragma unroll
    for (int i = 0; i < VW; ++i)
      acc[c][i] = 0.f;
  long long e = first;
  for (; e + Unroll <= last; e += Unroll) {
    int col[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
      col[u] = __ldg(cols + e + u);
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const T *row = x + (long long)col[u] * rowStride;
#pragma unroll
      for (int c = 0; c < Chunks; ++c) {
        const long long at = (long long)(c * Lanes + lane) * VW;
        if (at < width)
          addRow<T, VW>(row + at, acc[c]);
      }
    }
  }
  for (; e < last; ++e) {
    const T *row = x + (long long)__ldg(cols + e) * rowStride;
#pragma unroll
    for (int c = 0; c < Chunks; ++c) {
      const long long at = (long long)(c * Lanes + lane) * VW;
      if (at < width)
        addRow<T, VW>(row + at, acc[c]);
    }
  }
  float sum = 0.f;
#pragma unroll
  for (int c = 0; c < Chunks; ++c)
#pragma unroll
    for (int i = 0; i < VW; ++i)
      sum += acc[c][i];
  sink[thread] = sum;
}

} // namespace gnnc::cuda::bound

#endif // GNNC_CUDA_GATHER_STREAM_CUH
