// gnn-translate --gnn-to-cuda prints lowered IR as gnnc prints the same
// kernels: one printer behind both.
// RUN: gnn-opt %s --gnn-lower | gnn-translate --gnn-to-cuda > %t.translated.cu
// RUN: gnnc %s -o - > %t.gnnc.cu
// RUN: diff %t.translated.cu %t.gnnc.cu
// RUN: FileCheck %s < %t.translated.cu

// CHECK: #include "gnnc/cuda/f32.cuh"
// CHECK-NEXT: #include "gnnc/cuda/merge_path.cuh"
// CHECK-LABEL: // @m::@agg
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(64)
// CHECK-NEXT: m_agg(const long long *__restrict__ row_ptr, const int *__restrict__ col_idx, long long num_rows, const float *__restrict__ x, float *__restrict__ y) {
// CHECK-LABEL: // @m::@split
// CHECK: m_split(
// CHECK: gnnc_merge_rows<4>(row_ptr, num_rows, d0, d1, group_mask, lane, i0, i1);
// CHECK-LABEL: // @m::@split, second kernel
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(64)
// CHECK-NEXT: m_split_fixup(
gnn.module @m {
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
  gnn.kernel @split(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x16xf32>) -> tensor<?x16xf32> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = edge_parallel, vector_width = 4, dim_workers = 4, threads_per_block = 64, edges_per_warp = 32, write = staged>} : !gnn.graph<csr, i64, i32>, tensor<?x16xf32> -> tensor<?x16xf32>
    gnn.return %y : tensor<?x16xf32>
  }
}
