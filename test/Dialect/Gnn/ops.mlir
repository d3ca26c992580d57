// RUN: gnn-opt %s | FileCheck %s
// RUN: gnn-opt %s --mlir-print-op-generic | gnn-opt | FileCheck %s
// RUN: gnn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: gnn.module @ops
gnn.module @ops {
  // CHECK-LABEL: gnn.kernel @sum
  // CHECK-SAME: (%[[G:.*]]: !gnn.graph<csr, i64, i32>, %[[X:.*]]: tensor<?x64xf32>) -> tensor<?x64xf32>
  gnn.kernel @sum(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // CHECK-NEXT: %[[Y:.*]] = gnn.spmm %[[G]], %[[X]] : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    // CHECK-NEXT: gnn.return %[[Y]] : tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }

  // CHECK-LABEL: gnn.kernel @weighted
  gnn.kernel @weighted(%g: !gnn.graph<csr, i32, i32>, %x: tensor<?x41xf16>, %w: tensor<?xf16>) -> tensor<?x41xf16> {
    // CHECK: gnn.spmm %{{.*}}, %{{.*}} values(%{{.*}} : tensor<?xf16>) {schedule = #gnn.schedule<vector_width = 1, dim_workers = 32, threads_per_block = 128>}
    %y = gnn.spmm %g, %x values(%w : tensor<?xf16>) {schedule = #gnn.schedule<strategy = vertex_parallel, vector_width = 1, dim_workers = 32, threads_per_block = 128>} : !gnn.graph<csr, i32, i32>, tensor<?x41xf16> -> tensor<?x41xf16>
    gnn.return %y : tensor<?x41xf16>
  }

  // CHECK-LABEL: gnn.kernel @bf16
  // CHECK-SAME: !gnn.graph<csr, i64, i64>
  gnn.kernel @bf16(%g: !gnn.graph<csr, i64, i64>, %x: tensor<100x8xbf16>) -> tensor<?x8xbf16> {
    // The default reduction is not printed.
    // CHECK: gnn.spmm %{{.*}}, %{{.*}} : !gnn.graph
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce sum>} : !gnn.graph<csr, i64, i64>, tensor<100x8xbf16> -> tensor<?x8xbf16>
    gnn.return %y : tensor<?x8xbf16>
  }
}

// CHECK-LABEL: gnn.module @sddmm
gnn.module @sddmm {
  // CHECK: gnn.sddmm %{{.*}}, %{{.*}}, %{{.*}} : !gnn.graph<csr, i64, i32>, tensor<?x64xf16>, tensor<?x64xf16> -> tensor<?xf16>
  gnn.kernel @dot(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x64xf16>, %b: tensor<?x64xf16>) -> tensor<?xf16> {
    %e = gnn.sddmm %g, %a, %b : !gnn.graph<csr, i64, i32>, tensor<?x64xf16>, tensor<?x64xf16> -> tensor<?xf16>
    gnn.return %e : tensor<?xf16>
  }
  // CHECK: gnn.sddmm %{{.*}}, %{{.*}}, %{{.*}} {form = #gnn<sddmm_form add>, leaky_relu = 2.000000e-01 : f32}
  gnn.kernel @gat(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %e = gnn.sddmm %g, %a, %b {form = #gnn<sddmm_form add>, leaky_relu = 0.2 : f32} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %e : tensor<?x4xf32>
  }
}

// CHECK-LABEL: gnn.module @gcn
gnn.module @gcn {
  // CHECK: gnn.spmm %{{.*}}, %{{.*}} {reduce = #gnn<reduce mean>} :
  gnn.kernel @mean(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x16xf32>) -> tensor<?x16xf32> {
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce mean>} : !gnn.graph<csr, i64, i32>, tensor<?x16xf32> -> tensor<?x16xf32>
    gnn.return %y : tensor<?x16xf32>
  }
  // CHECK: gnn.spmm %{{.*}}, %{{.*}} values(%{{.*}} : tensor<?xf16>) {scale = #gnn<scale both>} :
  gnn.kernel @both(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x16xf16>, %w: tensor<?xf16>) -> tensor<?x16xf16> {
    %y = gnn.spmm %g, %x values(%w : tensor<?xf16>) {scale = #gnn<scale both>} : !gnn.graph<csr, i64, i32>, tensor<?x16xf16> -> tensor<?x16xf16>
    gnn.return %y : tensor<?x16xf16>
  }
  // CHECK: gnn.spmm %{{.*}}, %{{.*}} {reduce = #gnn<reduce mean>, scale = #gnn<scale left>} :
  gnn.kernel @left(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x16xbf16>) -> tensor<?x16xbf16> {
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce mean>, scale = #gnn<scale left>} : !gnn.graph<csr, i64, i32>, tensor<?x16xbf16> -> tensor<?x16xbf16>
    gnn.return %y : tensor<?x16xbf16>
  }
}

// CHECK-LABEL: gnn.module @gin
gnn.module @gin {
  // CHECK: gnn.spmm %{{.*}}, %{{.*}} {reduce = #gnn<reduce mean>, schedule = #gnn.schedule<disc_batch = 32, accumulate = f16>, self_weight = 1.000000e-01 : f32} :
  gnn.kernel @self(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x16xf16>) -> tensor<?x16xf16> {
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce mean>, self_weight = 0.1 : f32, schedule = #gnn.schedule<accumulate = f16, disc_batch = 32>} : !gnn.graph<csr, i64, i32>, tensor<?x16xf16> -> tensor<?x16xf16>
    gnn.return %y : tensor<?x16xf16>
  }
}

// CHECK-LABEL: gnn.module @sage
gnn.module @sage {
  // CHECK: gnn.spmm %{{.*}}, %{{.*}} {reduce = #gnn<reduce max>, scale = #gnn<scale right>} :
  gnn.kernel @max(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x16xf32>) -> tensor<?x16xf32> {
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce max>, scale = #gnn<scale right>} : !gnn.graph<csr, i64, i32>, tensor<?x16xf32> -> tensor<?x16xf32>
    gnn.return %y : tensor<?x16xf32>
  }
}

// CHECK-LABEL: gnn.module @softmax
gnn.module @softmax {
  // CHECK: %[[A:.*]] = gnn.edge_softmax %{{.*}}, %{{.*}} : !gnn.graph<csr, i64, i32>, tensor<?x8xf16> -> tensor<?x8xf16>
  // CHECK-NEXT: gnn.return %[[A]] : tensor<?x8xf16>
  gnn.kernel @heads(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?x8xf16>) -> tensor<?x8xf16> {
    %a = gnn.edge_softmax %g, %e : !gnn.graph<csr, i64, i32>, tensor<?x8xf16> -> tensor<?x8xf16>
    gnn.return %a : tensor<?x8xf16>
  }
  // CHECK: gnn.edge_softmax %{{.*}}, %{{.*}} {schedule = #gnn.schedule<vector_width = 1, dim_workers = 8>} : !gnn.graph<csr, i32, i32>, tensor<?xf32> -> tensor<?xf32>
  gnn.kernel @one(%g: !gnn.graph<csr, i32, i32>, %e: tensor<?xf32>) -> tensor<?xf32> {
    %a = gnn.edge_softmax %g, %e {schedule = #gnn.schedule<vector_width = 1, dim_workers = 8>} : !gnn.graph<csr, i32, i32>, tensor<?xf32> -> tensor<?xf32>
    gnn.return %a : tensor<?xf32>
  }
}

// Graph types of formats no op consumes yet still parse and print.
// CHECK-LABEL: gnn.module @backward
gnn.module @backward {
  // CHECK: gnn.edge_softmax_grad %{{.*}}, %{{.*}}, %{{.*}} : !gnn.graph<csr, i64, i32>, tensor<?x8xf16>, tensor<?x8xf16> -> tensor<?x8xf16>
  gnn.kernel @softmax_grad(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x8xf16>, %da: tensor<?x8xf16>) -> tensor<?x8xf16> {
    %dx = gnn.edge_softmax_grad %g, %a, %da : !gnn.graph<csr, i64, i32>, tensor<?x8xf16>, tensor<?x8xf16> -> tensor<?x8xf16>
    gnn.return %dx : tensor<?x8xf16>
  }
  // CHECK: gnn.edge_softmax_grad %{{.*}}, %{{.*}}, %{{.*}} {schedule = #gnn.schedule<vector_width = 1, dim_workers = 8>} : !gnn.graph<csr, i32, i32>, tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  gnn.kernel @softmax_grad_one(%g: !gnn.graph<csr, i32, i32>, %a: tensor<?xf32>, %da: tensor<?xf32>) -> tensor<?xf32> {
    %dx = gnn.edge_softmax_grad %g, %a, %da {schedule = #gnn.schedule<vector_width = 1, dim_workers = 8>} : !gnn.graph<csr, i32, i32>, tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
    gnn.return %dx : tensor<?xf32>
  }
  // CHECK: gnn.spmm %{{.*}}, %{{.*}} {col_norm_exponent = 1.500000e+00 : f32, scale = #gnn<scale both>} :
  gnn.kernel @mean_both_grad(%gt: !gnn.graph<csr, i64, i32>, %dy: tensor<?x16xf32>) -> tensor<?x16xf32> {
    %dx = gnn.spmm %gt, %dy {scale = #gnn<scale both>, col_norm_exponent = 1.5 : f32} : !gnn.graph<csr, i64, i32>, tensor<?x16xf32> -> tensor<?x16xf32>
    gnn.return %dx : tensor<?x16xf32>
  }
}

// CHECK-LABEL: gnn.module @formats
gnn.module @formats {
  // CHECK: !gnn.graph<sliced_csr, i64, i32>, %{{.*}}: !gnn.graph<batched_csr, i32, i32>, %{{.*}}: !gnn.graph<segmented_csr, i64, i64>, %{{.*}}: !gnn.graph<snapshot_csr, i64, i32>
  gnn.kernel @unused(%a: !gnn.graph<sliced_csr, i64, i32>, %b: !gnn.graph<batched_csr, i32, i32>, %c: !gnn.graph<segmented_csr, i64, i64>, %d: !gnn.graph<snapshot_csr, i64, i32>) {
    gnn.return
  }
}

// GENERIC: "gnn.module"()
// GENERIC: "gnn.kernel"()
// GENERIC: "gnn.spmm"(%{{.*}}, %{{.*}})
// GENERIC: "gnn.return"(%{{.*}})
// GENERIC: "gnn.edge_softmax"(%{{.*}}, %{{.*}})
// GENERIC: "gnn.edge_softmax_grad"(%{{.*}}, %{{.*}}, %{{.*}})

// CHECK-LABEL: gnn.module @batch
gnn.module @batch {
  // CHECK: gnn.spmm %{{.*}}, %{{.*}} {schedule = #gnn.schedule<strategy = batched, tile_rows = 32, graphs_per_block = 4>} : !gnn.graph<batched_csr, i64, i32>
  gnn.kernel @aggregate(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = batched, graphs_per_block = 4, tile_rows = 32>} : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
  // CHECK: gnn.spmm %{{.*}}, %{{.*}} weight(%{{.*}} : tensor<64x128xf16>) bias(%{{.*}} : tensor<128xf16>) {activation = #gnn<activation relu>, scale = #gnn<scale both>} : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf16> -> tensor<?x128xf16>
  gnn.kernel @layer(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf16>, %w: tensor<64x128xf16>, %b: tensor<128xf16>) -> tensor<?x128xf16> {
    %y = gnn.spmm %g, %x weight(%w : tensor<64x128xf16>) bias(%b : tensor<128xf16>) {scale = #gnn<scale both>, activation = #gnn<activation relu>} : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf16> -> tensor<?x128xf16>
    gnn.return %y : tensor<?x128xf16>
  }
  // CHECK: gnn.spmm %{{.*}}, %{{.*}} values(%{{.*}} : tensor<?xf32>) weight(%{{.*}} : tensor<3x8xf32>) {self_weight = 0.000000e+00 : f32} : !gnn.graph<batched_csr, i64, i32>, tensor<?x3xf32> -> tensor<?x8xf32>
  gnn.kernel @gin(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x3xf32>, %v: tensor<?xf32>, %w: tensor<3x8xf32>) -> tensor<?x8xf32> {
    %y = gnn.spmm %g, %x values(%v : tensor<?xf32>) weight(%w : tensor<3x8xf32>) {self_weight = 0.0 : f32} : !gnn.graph<batched_csr, i64, i32>, tensor<?x3xf32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
  // CHECK: gnn.spmm %{{.*}}, %{{.*}} attention(%{{.*}}, %{{.*}} : tensor<?xf16>, tensor<?xf16>) {leaky_relu = 2.000000e-01 : f32} : !gnn.graph<csr, i64, i32>, tensor<?x64xf16> -> tensor<?x64xf16>
  gnn.kernel @gat(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf16>, %d: tensor<?xf16>, %s: tensor<?xf16>) -> tensor<?x64xf16> {
    %y = gnn.spmm %g, %x attention(%d, %s : tensor<?xf16>, tensor<?xf16>) {leaky_relu = 0.2 : f32} : !gnn.graph<csr, i64, i32>, tensor<?x64xf16> -> tensor<?x64xf16>
    gnn.return %y : tensor<?x64xf16>
  }
  // CHECK: gnn.readout %{{.*}}, %{{.*}} {reduce = #gnn<reduce max>} : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
  gnn.kernel @pool(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = gnn.readout %g, %x {reduce = #gnn<reduce max>} : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
  // CHECK: gnn.readout_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !gnn.graph<batched_csr, i64, i32>, tensor<?x8xf16>, tensor<?x8xf16>, tensor<?x8xf16> -> tensor<?x8xf16>
  gnn.kernel @pool_grad(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x8xf16>, %y: tensor<?x8xf16>, %dy: tensor<?x8xf16>) -> tensor<?x8xf16> {
    %dx = gnn.readout_grad %g, %x, %y, %dy : !gnn.graph<batched_csr, i64, i32>, tensor<?x8xf16>, tensor<?x8xf16>, tensor<?x8xf16> -> tensor<?x8xf16>
    gnn.return %dx : tensor<?x8xf16>
  }
}

// CHECK-LABEL: gnn.module @segment
gnn.module @segment {
  // CHECK: gnn.kernel @typed(%{{.*}}: tensor<?x64xf32>, %{{.*}}: tensor<?x64x32xf32>, %{{.*}}: tensor<?xi64>) -> tensor<?x32xf32>
  // CHECK-NEXT: gnn.segment_matmul %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<?x64x32xf32>, tensor<?xi64> -> tensor<?x32xf32>
  gnn.kernel @typed(%x: tensor<?x64xf32>, %w: tensor<?x64x32xf32>, %seg: tensor<?xi64>) -> tensor<?x32xf32> {
    %y = gnn.segment_matmul %x, %w, %seg : tensor<?x64xf32>, tensor<?x64x32xf32>, tensor<?xi64> -> tensor<?x32xf32>
    gnn.return %y : tensor<?x32xf32>
  }
  // Static types and odd sizes; bf16.
  // CHECK: gnn.segment_matmul %{{.*}}, %{{.*}}, %{{.*}} : tensor<10x3xbf16>, tensor<4x3x5xbf16>, tensor<5xi64> -> tensor<10x5xbf16>
  gnn.kernel @odd(%x: tensor<10x3xbf16>, %w: tensor<4x3x5xbf16>, %seg: tensor<5xi64>) -> tensor<10x5xbf16> {
    %y = gnn.segment_matmul %x, %w, %seg : tensor<10x3xbf16>, tensor<4x3x5xbf16>, tensor<5xi64> -> tensor<10x5xbf16>
    gnn.return %y : tensor<10x5xbf16>
  }
  // CHECK: gnn.segment_matmul %{{.*}}, %{{.*}}, %{{.*}} {schedule = #gnn.schedule<strategy = tile_routed, tile_routing = true, tile_rows = 32>} : tensor<?x16xf16>
  gnn.kernel @routed(%x: tensor<?x16xf16>, %w: tensor<?x16x8xf16>, %seg: tensor<?xi64>) -> tensor<?x8xf16> {
    %y = gnn.segment_matmul %x, %w, %seg {schedule = #gnn.schedule<strategy = tile_routed, tile_rows = 32, tile_routing = true>} : tensor<?x16xf16>, tensor<?x16x8xf16>, tensor<?xi64> -> tensor<?x8xf16>
    gnn.return %y : tensor<?x8xf16>
  }
  // The backward: the input gradient (weights read transposed) on tensor
  // cores, and the weight gradient.
  // CHECK: gnn.segment_matmul %{{.*}}, %{{.*}}, %{{.*}} {schedule = #gnn.schedule<strategy = tile_routed, math = tensor_core, stages = 3>, transpose_weights} : tensor<?x8xf16>, tensor<?x16x8xf16>, tensor<?xi64> -> tensor<?x16xf16>
  gnn.kernel @input_grad(%dy: tensor<?x8xf16>, %w: tensor<?x16x8xf16>, %seg: tensor<?xi64>) -> tensor<?x16xf16> {
    %dx = gnn.segment_matmul %dy, %w, %seg {transpose_weights, schedule = #gnn.schedule<strategy = tile_routed, math = tensor_core, stages = 3>} : tensor<?x8xf16>, tensor<?x16x8xf16>, tensor<?xi64> -> tensor<?x16xf16>
    gnn.return %dx : tensor<?x16xf16>
  }
  // CHECK: gnn.segment_matmul_weight_grad %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x16xf16>, tensor<?x8xf16>, tensor<?xi64> -> tensor<?x16x8xf16>
  gnn.kernel @weight_grad(%x: tensor<?x16xf16>, %dy: tensor<?x8xf16>, %seg: tensor<?xi64>) -> tensor<?x16x8xf16> {
    %dw = gnn.segment_matmul_weight_grad %x, %dy, %seg : tensor<?x16xf16>, tensor<?x8xf16>, tensor<?xi64> -> tensor<?x16x8xf16>
    gnn.return %dw : tensor<?x16x8xf16>
  }
}
// GENERIC: "gnn.segment_matmul"(%{{.*}}, %{{.*}}, %{{.*}})
