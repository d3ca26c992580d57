// RUN: gnn-opt %s | FileCheck %s
// RUN: gnn-opt %s --mlir-print-op-generic | gnn-opt | FileCheck %s

// Padded rows: 41 features per row, rows 48 (f16) or 44 (f32) elements
// apart, on the features and the result of gnn.spmm.

// CHECK-LABEL: gnn.module @rows
gnn.module @rows {
  // CHECK-LABEL: gnn.kernel @padded
  // CHECK-SAME: (%{{.*}}: !gnn.graph<csr, i64, i32>, %{{.*}}: tensor<?x41xf16, #gnn.rows<stride = 48>>) -> tensor<?x41xf16, #gnn.rows<stride = 48>>
  gnn.kernel @padded(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x41xf16, #gnn.rows<stride = 48>>) -> tensor<?x41xf16, #gnn.rows<stride = 48>> {
    // CHECK: gnn.spmm %{{.*}}, %{{.*}} {schedule = #gnn.schedule<vector_width = 8>} : !gnn.graph<csr, i64, i32>, tensor<?x41xf16, #gnn.rows<stride = 48>> -> tensor<?x41xf16, #gnn.rows<stride = 48>>
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 8>} : !gnn.graph<csr, i64, i32>, tensor<?x41xf16, #gnn.rows<stride = 48>> -> tensor<?x41xf16, #gnn.rows<stride = 48>>
    gnn.return %y : tensor<?x41xf16, #gnn.rows<stride = 48>>
  }

  // Edge values stay unpadded 1-D tensors; a stride equal to the width is
  // the plain layout spelled out.
  // CHECK-LABEL: gnn.kernel @values
  // CHECK: gnn.spmm %{{.*}}, %{{.*}} values(%{{.*}} : tensor<?xf32>) {reduce = #gnn<reduce mean>, schedule = #gnn.schedule<strategy = edge_parallel, vector_width = 4>} : !gnn.graph<csr, i64, i32>, tensor<?x41xf32, #gnn.rows<stride = 44>> -> tensor<?x41xf32, #gnn.rows<stride = 44>>
  // CHECK: gnn.spmm %{{.*}}, %{{.*}} : !gnn.graph<csr, i64, i32>, tensor<?x8xbf16, #gnn.rows<stride = 8>> -> tensor<?x8xbf16, #gnn.rows<stride = 8>>
  gnn.kernel @values(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x41xf32, #gnn.rows<stride = 44>>, %w: tensor<?xf32>, %z: tensor<?x8xbf16, #gnn.rows<stride = 8>>) -> tensor<?x41xf32, #gnn.rows<stride = 44>> {
    %y = gnn.spmm %g, %x values(%w : tensor<?xf32>) {reduce = #gnn<reduce mean>, schedule = #gnn.schedule<strategy = edge_parallel, vector_width = 4>} : !gnn.graph<csr, i64, i32>, tensor<?x41xf32, #gnn.rows<stride = 44>> -> tensor<?x41xf32, #gnn.rows<stride = 44>>
    %u = gnn.spmm %g, %z : !gnn.graph<csr, i64, i32>, tensor<?x8xbf16, #gnn.rows<stride = 8>> -> tensor<?x8xbf16, #gnn.rows<stride = 8>>
    gnn.return %y : tensor<?x41xf32, #gnn.rows<stride = 44>>
  }
}
