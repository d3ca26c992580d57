//===- segment_reduce.cuh - The weight gradient's reduction rules -*- CUDA
//-*-===//
//
// The shape of gnnc_segment_weight_grad_reduce (gnnc/cuda/segment_matmul.cuh)
// that the cost model prices too: how many lanes of a block share one
// output, and how many consecutive outputs a thread takes.
//
// This file is also plain C++ (without __CUDACC__ the rules are inline host
// functions): the segmented matmul's cost model includes it.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_SEGMENT_REDUCE_CUH
#define GNNC_CUDA_SEGMENT_REDUCE_CUH

#if defined(__CUDACC__)
#define GNNC_SEGMENT_REDUCE_HD __host__ __device__ __forceinline__
#else
#define GNNC_SEGMENT_REDUCE_HD inline
#endif

namespace gnnc::cuda {

/// The lanes of a block of `threads` that share one output: the fewest, a
/// power of two up to threads / columns, whose `loads` loads each cover a
/// type with the table's mean number of splits (num_tiles / num_types,
/// rounded up; the same for every type: it depends on the table alone).
GNNC_SEGMENT_REDUCE_HD int segmentReduceLanes(long long num_tiles,
                                              long long num_types, int threads,
                                              int columns, int loads) {
  const long long mean =
      num_types > 0 ? (num_tiles + num_types - 1) / num_types : 0;
  int lanes = 1;
  while (lanes < threads / columns && (long long)lanes * loads < mean)
    lanes *= 2;
  return lanes;
}

/// The consecutive outputs a thread takes for `perType` (K x M) outputs a
/// type: 4 (one 16-byte load of each split's partials) where they come in
/// whole vectors, else 1.
GNNC_SEGMENT_REDUCE_HD constexpr int segmentReduceVector(long long perType) {
  return perType % 4 == 0 ? 4 : 1;
}

} // namespace gnnc::cuda

#endif // GNNC_CUDA_SEGMENT_REDUCE_CUH
