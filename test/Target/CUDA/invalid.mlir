// RUN: gnn-translate --gnn-to-cuda %s --split-input-file --verify-diagnostics --allow-unregistered-dialect

// What the CUDA printer refuses. Each case is lowered IR (gnn-opt --gnn-lower)
// with one thing missing or wrong.

// expected-error @+1 {{no gnn.kernel to emit}}
module {
  gnn.module @m {
  }
}

// -----

gnn.module @m {
  // expected-error @+1 {{has no gnn.abi/gnn.launch; run gnn-lower-to-kernels before printing}}
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.entry = "m_agg", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>} {
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>, schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}

// -----

gnn.module @m {
  // expected-error @+1 {{has no gnn.abi/gnn.launch; run gnn-lower-to-kernels before printing}}
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>], gnn.entry = "m_agg"} {
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>, schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}

// -----

gnn.module @m {
  // expected-error @+1 {{has no gnn.entry; run gnn-lower-to-kernels before printing}}
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>], gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>} {
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>, schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>], gnn.entry = "m_agg", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>} {
    // expected-error @+1 {{has no gnn.plan; run gnn-lower-to-kernels before printing}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>], gnn.entry = "m_agg", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>} {
    // expected-error @+1 {{has no #gnn.schedule; run gnn-default-schedule and gnn-lower-to-kernels before printing}}
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}

// -----

gnn.module @m {
  // expected-error @+1 {{has no op to print}}
  gnn.kernel @copy(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>], gnn.entry = "m_copy", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>} {
    gnn.return %x : tensor<?x4xf32>
  }
}

// -----

// An op the printer has no pattern for.
gnn.module @m {
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>], gnn.entry = "m_agg", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>} {
    // expected-error @+1 {{no CUDA emission pattern for test.gather}}
    %y = "test.gather"(%g, %x) : (!gnn.graph<csr, i64, i32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @twice(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>], gnn.entry = "m_twice", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>} {
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>, schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    // expected-error @+1 {{is the second op of its kernel; the CUDA printer prints one op per kernel}}
    %z = gnn.spmm %g, %y {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>, schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %z : tensor<?x4xf32>
  }
}

// -----

gnn.module @m {
  // expected-error @+1 {{has an entry in gnn.abi that is no #gnn.param}}
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, "x", #gnn.param<"y", result>], gnn.entry = "m_agg", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>} {
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>, schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}

// -----

gnn.module @m {
  // expected-error @+1 {{has fewer parameters in gnn.abi (4) than its arguments and results need}}
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>], gnn.entry = "m_agg", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>} {
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>, schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}

// -----

gnn.module @m {
  // expected-error @+1 {{has parameter 'x2' with role input after its arguments and results in gnn.abi, where only the parameters a kernel plan adds belong}}
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>, #gnn.param<"x2", input, operand = 1>], gnn.entry = "m_agg", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>} {
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>, schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}

// -----

// A kernel argument of an element type CUDA kernels do not take.
gnn.module @m {
  // expected-error @+1 {{no CUDA spelling for element type 'i32'}}
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>, %ids: tensor<?xi32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"ids", unused>, #gnn.param<"y", result>], gnn.entry = "m_agg", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>} {
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>, schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}

// -----

// vertex_parallel runs no kernel before the main one.
gnn.module @m {
  // expected-error @+1 {{lists 1 kernels in gnn.preludes, but the CUDA emission pattern for gnn.spmm with strategy vertex_parallel prints 0}}
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>], gnn.entry = "m_agg", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>, gnn.preludes = [#gnn.companion<suffix = "_init", launch = <block = 64, grid = [num_rows], per_block = 64>>]} {
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>, schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}

// -----

// edge_parallel prints one follow-up (the fix-up), not two.
gnn.module @m {
  // expected-error @+1 {{lists 2 kernels in gnn.follow_ups, but the CUDA emission pattern for gnn.spmm with strategy edge_parallel prints 1}}
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>, #gnn.param<"num_edges", num_edges>, #gnn.param<"workspace", workspace>], gnn.entry = "m_agg", gnn.launch = #gnn.launch<block = 64, grid = [num_rows, num_edges], per_block = 4096, shared = 16640, min_blocks = 1>, gnn.follow_ups = [#gnn.companion<suffix = "_fixup", launch = <block = 64, grid = [num_rows, num_edges], per_block = 4096, shared = 16640, min_blocks = 1>>, #gnn.companion<suffix = "_again", launch = <block = 64, grid = [num_rows, num_edges], per_block = 4096, shared = 16640, min_blocks = 1>>], gnn.workspace = #gnn.workspace<count = [num_rows, num_edges], items_per_unit = 64, bytes_per_unit = 40, min_units = 1>} {
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8, items_per_worker = 64, row_ends_bytes = 16640>, schedule = #gnn.schedule<strategy = edge_parallel, vector_width = 4, dim_workers = 1, threads_per_block = 64, edges_per_warp = 64, write = staged>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}

// -----

gnn.module @m {
  // expected-error @+1 {{has an entry in gnn.preludes that is no #gnn.companion}}
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>], gnn.entry = "m_agg", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>, gnn.preludes = ["_init"]} {
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>, schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}

// -----

// A plan that is not the one of the op's schedule (here two lanes where the
// schedule says one) is refused rather than printed.
gnn.module @m {
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>], gnn.entry = "m_agg", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>} {
    // expected-error @+1 {{carries a gnn.plan or gnn.launch that is not the kernel plan of its schedule; run gnn-lower-to-kernels on the op as it is}}
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 2, rows_per_block = 32, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>, schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}

// -----

// So is a launch that is not the plan's.
gnn.module @m {
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>], gnn.entry = "m_agg", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 9999>} {
    // expected-error @+1 {{carries a gnn.plan or gnn.launch that is not the kernel plan of its schedule}}
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>, schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 64>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}
