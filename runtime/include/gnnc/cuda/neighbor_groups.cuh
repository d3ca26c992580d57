//===- neighbor_groups.cuh - Which rows a group's leader writes -*- CUDA -*-===//
//
// Under neighbor_group the host cuts every row into groups of neighbours
// (group_ptr[r] is row r's first group) and each block takes
// `GroupsPerBlock` consecutive groups. A row whose groups all lie in one
// block is summed there and stored by its leader; any other row (one that
// spans blocks, or one without groups) is set by the first kernel, and the
// blocks that hold its groups add their pieces to it atomically. Both
// kernels ask this one question.
//
// gnnc's runtime hands this header to NVRTC from a copy embedded at build
// time; to compile a gnnc .cu file elsewhere, add -I <gnnc>/runtime/include.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_CUDA_NEIGHBOR_GROUPS_CUH
#define GNNC_CUDA_NEIGHBOR_GROUPS_CUH

/// Whether row `row` has groups and they all lie in one block of
/// `GroupsPerBlock` consecutive groups.
template <long long GroupsPerBlock>
__device__ __forceinline__ bool
gnnc_group_row_in_one_block(const long long *group_ptr, long long row) {
  const long long first = group_ptr[row];
  const long long last = group_ptr[row + 1] - 1;
  return last >= first && first / GroupsPerBlock == last / GroupsPerBlock;
}

#endif // GNNC_CUDA_NEIGHBOR_GROUPS_CUH
