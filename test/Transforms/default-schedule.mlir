// RUN: gnn-opt %s --gnn-default-schedule | FileCheck %s

gnn.module @m {
  // f32, width 64: float4 loads (16 bytes), 16 chunks -> 16 threads per row.
  // CHECK-LABEL: gnn.kernel @f32_64
  // CHECK: schedule = #gnn.schedule<vector_width = 4, dim_workers = 16, threads_per_block = 256>
  gnn.kernel @f32_64(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
  // f16, width 128: 8 halves per load, 16 chunks -> 16 threads per row.
  // CHECK-LABEL: gnn.kernel @f16_128
  // CHECK: schedule = #gnn.schedule<vector_width = 8, dim_workers = 16, threads_per_block = 256>
  gnn.kernel @f16_128(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x128xf16>) -> tensor<?x128xf16> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x128xf16> -> tensor<?x128xf16>
    gnn.return %y : tensor<?x128xf16>
  }
  // Odd width: scalar loads; 41 chunks -> a full warp per row.
  // CHECK-LABEL: gnn.kernel @bf16_41
  // CHECK: schedule = #gnn.schedule<vector_width = 1, dim_workers = 32, threads_per_block = 256>
  gnn.kernel @bf16_41(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x41xbf16>) -> tensor<?x41xbf16> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x41xbf16> -> tensor<?x41xbf16>
    gnn.return %y : tensor<?x41xbf16>
  }
  // Width 1: one thread per row.
  // CHECK-LABEL: gnn.kernel @f32_1
  // CHECK: schedule = #gnn.schedule<vector_width = 1, dim_workers = 1, threads_per_block = 256>
  gnn.kernel @f32_1(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x1xf32>) -> tensor<?x1xf32> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x1xf32> -> tensor<?x1xf32>
    gnn.return %y : tensor<?x1xf32>
  }
  // Explicit choices are kept; only the zeros are filled.
  // CHECK-LABEL: gnn.kernel @partial
  // CHECK: schedule = #gnn.schedule<vector_width = 2, dim_workers = 32, threads_per_block = 128>
  gnn.kernel @partial(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf16>) -> tensor<?x64xf16> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 2, threads_per_block = 128>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf16> -> tensor<?x64xf16>
    gnn.return %y : tensor<?x64xf16>
  }
}

// gnn.edge_softmax: a warp per row over its edges; the widest load of heads.
gnn.module @softmax {
  // CHECK-LABEL: gnn.kernel @f16_8
  // CHECK: gnn.edge_softmax {{.*}}schedule = #gnn.schedule<vector_width = 8, dim_workers = 32, threads_per_block = 256>
  gnn.kernel @f16_8(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?x8xf16>) -> tensor<?x8xf16> {
    %a = gnn.edge_softmax %g, %e : !gnn.graph<csr, i64, i32>, tensor<?x8xf16> -> tensor<?x8xf16>
    gnn.return %a : tensor<?x8xf16>
  }
  // CHECK-LABEL: gnn.kernel @f32_1
  // CHECK: schedule = #gnn.schedule<vector_width = 1, dim_workers = 32, threads_per_block = 256>
  gnn.kernel @f32_1(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?xf32>) -> tensor<?xf32> {
    %a = gnn.edge_softmax %g, %e : !gnn.graph<csr, i64, i32>, tensor<?xf32> -> tensor<?xf32>
    gnn.return %a : tensor<?xf32>
  }
  // gnn.edge_softmax_grad gets the same default.
  // CHECK-LABEL: gnn.kernel @grad_f16_8
  // CHECK: gnn.edge_softmax_grad {{.*}}schedule = #gnn.schedule<vector_width = 8, dim_workers = 32, threads_per_block = 256>
  gnn.kernel @grad_f16_8(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x8xf16>, %da: tensor<?x8xf16>) -> tensor<?x8xf16> {
    %dx = gnn.edge_softmax_grad %g, %a, %da : !gnn.graph<csr, i64, i32>, tensor<?x8xf16>, tensor<?x8xf16> -> tensor<?x8xf16>
    gnn.return %dx : tensor<?x8xf16>
  }
  // Padded rows: the widest load that divides the stride (48), here 8
  // halves; ceil(41 / 8) = 6 chunks -> 8 threads per row.
  // CHECK-LABEL: gnn.kernel @padded_f16_41
  // CHECK: schedule = #gnn.schedule<vector_width = 8, dim_workers = 8, threads_per_block = 256>
  gnn.kernel @padded_f16_41(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x41xf16, #gnn.rows<stride = 48>>) -> tensor<?x41xf16, #gnn.rows<stride = 48>> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x41xf16, #gnn.rows<stride = 48>> -> tensor<?x41xf16, #gnn.rows<stride = 48>>
    gnn.return %y : tensor<?x41xf16, #gnn.rows<stride = 48>>
  }
  // An explicit dim_workers is kept.
  // CHECK-LABEL: gnn.kernel @given
  // CHECK: schedule = #gnn.schedule<vector_width = 4, dim_workers = 4, threads_per_block = 256>
  gnn.kernel @given(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %a = gnn.edge_softmax %g, %e {schedule = #gnn.schedule<dim_workers = 4>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %a : tensor<?x4xf32>
  }
  // neighbor_group gets GNNAdvisor's 32 neighbours per group and atomic
  // additions of the rows that span blocks.
  // CHECK-LABEL: gnn.kernel @groups
  // CHECK: schedule = #gnn.schedule<strategy = neighbor_group, vector_width = 4, group_size = 32, dim_workers = 16, threads_per_block = 256, write = atomic>
  gnn.kernel @groups(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = neighbor_group>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}
