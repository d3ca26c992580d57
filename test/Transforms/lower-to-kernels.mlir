// RUN: gnn-opt %s --gnn-lower --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: gnn.kernel @agg
// CHECK-SAME: gnn.launch = #gnn.launch<block = 256, grid = "num_rows", per_block = 16, shared = 0>
// CHECK-SAME: gnn.params = ["row_ptr", "col_idx", "num_rows", "x", "values", "y"]
// CHECK: gnn.spmm
// CHECK-SAME: gnn.plan = #gnn.vertex_plan<lanes = 16, rows_per_block = 16, vector_width = 4, chunks = 16, chunks_per_lane = 1, edge_unroll = 8>
gnn.module @m {
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>, %w: tensor<?xf32>) -> tensor<?x64xf32> {
    %y = gnn.spmm %g, %x values(%w : tensor<?xf32>) : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

// Names from gnn.name; the grid follows the graph the op reads.
// CHECK-LABEL: gnn.kernel @named
// CHECK-SAME: gnn.launch = #gnn.launch<block = 64, grid = "adj_num_rows", per_block = 2, shared = 0>
// CHECK-SAME: gnn.params = ["row_ptr", "col_idx", "num_rows", "adj_row_ptr", "adj_col_idx", "adj_num_rows", "feat", "out"]
// CHECK: gnn.plan = #gnn.vertex_plan<lanes = 32, rows_per_block = 2, vector_width = 2, chunks = 128, chunks_per_lane = 4, edge_unroll = 8>
gnn.module @m {
  gnn.kernel @named(%unused: !gnn.graph<csr, i64, i32>, %g: !gnn.graph<csr, i64, i32> {gnn.name = "adj"}, %x: tensor<?x256xf16> {gnn.name = "feat"}) -> (tensor<?x256xf16> {gnn.name = "out"}) {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 2, dim_workers = 32, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x256xf16> -> tensor<?x256xf16>
    gnn.return %y : tensor<?x256xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @too_wide(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4096xf32>) -> tensor<?x4096xf32> {
    // expected-error @+1 {{feature width 4096 needs 512 accumulators per thread with vector_width 4 and dim_workers 8; at most 128 fit}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 4, dim_workers = 8>} : !gnn.graph<csr, i64, i32>, tensor<?x4096xf32> -> tensor<?x4096xf32>
    gnn.return %y : tensor<?x4096xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @two(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    // expected-error @+1 {{cannot be emitted: a kernel currently holds exactly one gnn.spmm or gnn.sddmm}}
    %z = gnn.spmm %g, %y : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %z : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @dup(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf32> {gnn.name = "y"}) -> tensor<?x8xf32> {
    // expected-error @-1 {{two kernel parameters are named 'y'}}
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}
