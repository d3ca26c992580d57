// RUN: gnn-opt %s --gnn-lower --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: gnn.kernel @agg
// CHECK-SAME: gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"values", edge_values>, #gnn.param<"y", result>]
// CHECK-SAME: gnn.entry = "m_agg"
// CHECK-SAME: gnn.launch = #gnn.launch<block = 256, grid = [num_rows], per_block = 16>
// CHECK: gnn.spmm
// CHECK-SAME: gnn.plan = #gnn.plan<lanes = 16, rows_per_block = 16, vector_width = 4, chunks = 16, chunks_per_lane = 1, edge_unroll = 8>
gnn.module @m {
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>, %w: tensor<?xf32>) -> tensor<?x64xf32> {
    %y = gnn.spmm %g, %x values(%w : tensor<?xf32>) : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

// Names from gnn.name; the grid follows the graph the op reads.
// CHECK-LABEL: gnn.kernel @named
// CHECK-SAME: gnn.abi = [#gnn.param<"row_ptr", unused>, #gnn.param<"col_idx", unused>, #gnn.param<"num_rows", unused>, #gnn.param<"adj_row_ptr", row_offsets>, #gnn.param<"adj_col_idx", column_indices>, #gnn.param<"adj_num_rows", num_rows>, #gnn.param<"feat", input>, #gnn.param<"out", result>]
// CHECK-SAME: gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 2>
// CHECK: gnn.plan = #gnn.plan<lanes = 32, rows_per_block = 2, vector_width = 2, chunks = 128, chunks_per_lane = 4, edge_unroll = 8, packed = true>
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

// -----

// Right degree scaling adds the graph's column factors after the results.
// CHECK-LABEL: gnn.kernel @gcn
// CHECK-SAME: gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"values", edge_values>, #gnn.param<"y", result>, #gnn.param<"col_norm", column_factors>]
gnn.module @m {
  gnn.kernel @gcn(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>, %w: tensor<?xf32>) -> tensor<?x64xf32> {
    %y = gnn.spmm %g, %x values(%w : tensor<?xf32>) {scale = #gnn<scale both>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

// The factors take the graph's prefix; left scaling and mean need none.
// CHECK-LABEL: gnn.kernel @named_right
// CHECK-SAME: gnn.abi = [#gnn.param<"adj_row_ptr", row_offsets>, #gnn.param<"adj_col_idx", column_indices>, #gnn.param<"adj_num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>, #gnn.param<"adj_col_norm", column_factors>]
// CHECK-LABEL: gnn.kernel @left_mean
// CHECK-SAME: gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>]
gnn.module @m {
  gnn.kernel @named_right(%g: !gnn.graph<csr, i64, i32> {gnn.name = "adj"}, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    %y = gnn.spmm %g, %x {scale = #gnn<scale right>} : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
  gnn.kernel @left_mean(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce mean>, scale = #gnn<scale left>} : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @clash(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf32> {gnn.name = "col_norm"}) -> tensor<?x8xf32> {
    // expected-error @-1 {{a kernel parameter is named 'col_norm', which degree scaling (the column factors) needs; rename it with gnn.name}}
    %y = gnn.spmm %g, %x {scale = #gnn<scale right>} : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

// Edge softmax: lanes over a row's edges, each holding every head.
// CHECK-LABEL: gnn.kernel @softmax
// CHECK-SAME: gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>]
// CHECK-SAME: gnn.launch = #gnn.launch<block = 256, grid = [num_rows], per_block = 8>
// CHECK: gnn.edge_softmax
// CHECK-SAME: gnn.plan = #gnn.plan<lanes = 32, rows_per_block = 8, vector_width = 4, chunks = 2, chunks_per_lane = 2, edge_unroll = 1>
gnn.module @m {
  gnn.kernel @softmax(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?x8xf32>) -> tensor<?x8xf32> {
    %a = gnn.edge_softmax %g, %e : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %a : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @many_heads(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?x128xf32>) -> tensor<?x128xf32> {
    // expected-error @+1 {{128 heads need 256 running values per thread; at most 64 heads fit in registers}}
    %a = gnn.edge_softmax %g, %e : !gnn.graph<csr, i64, i32>, tensor<?x128xf32> -> tensor<?x128xf32>
    gnn.return %a : tensor<?x128xf32>
  }
}

// -----

// CHECK-LABEL: gnn.kernel @softmax_grad
// CHECK-SAME: gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"x1", input, operand = 1>, #gnn.param<"y", result>]
// CHECK-SAME: gnn.launch = #gnn.launch<block = 256, grid = [num_rows], per_block = 8>
// CHECK: gnn.edge_softmax_grad
// CHECK-SAME: gnn.plan = #gnn.plan<lanes = 32, rows_per_block = 8, vector_width = 8, chunks = 1, chunks_per_lane = 1, edge_unroll = 1, packed = true>
gnn.module @m {
  gnn.kernel @softmax_grad(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x8xf16>, %da: tensor<?x8xf16>) -> tensor<?x8xf16> {
    %dx = gnn.edge_softmax_grad %g, %a, %da : !gnn.graph<csr, i64, i32>, tensor<?x8xf16>, tensor<?x8xf16> -> tensor<?x8xf16>
    gnn.return %dx : tensor<?x8xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @many_heads_grad(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x65xf32>, %da: tensor<?x65xf32>) -> tensor<?x65xf32> {
    // expected-error @+1 {{65 heads need 195 values per thread (a running sum and two loads per head); at most 64 heads fit in registers}}
    %dx = gnn.edge_softmax_grad %g, %a, %da : !gnn.graph<csr, i64, i32>, tensor<?x65xf32>, tensor<?x65xf32> -> tensor<?x65xf32>
    gnn.return %dx : tensor<?x65xf32>
  }
}

// -----

// Symbols may hold characters C identifiers may not; the entry name replaces
// them, and two kernels that end up with one name are an error.
// CHECK-LABEL: gnn.kernel @"a-b"
// CHECK-SAME: gnn.entry = "m_a_b"
gnn.module @m {
  gnn.kernel @"a-b"(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @"a-b"(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
  // expected-error @+1 {{has the CUDA entry name 'm_a_b', like the kernel at}}
  gnn.kernel @a_b(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

// Edge-parallel: the grid counts rows plus edges (the merge path), the
// kernel takes the number of edges and a workspace, and each worker keeps
// the ends of its rows in shared memory: 8 workers x (64 + 1) x 4 bytes.
// CHECK-LABEL: gnn.kernel @ep
// CHECK-SAME: gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>, #gnn.param<"num_edges", num_edges>, #gnn.param<"workspace", workspace>]
// CHECK-SAME: gnn.follow_ups = [#gnn.companion<suffix = "_fixup", launch = <block = 256, grid = [num_rows, num_edges], per_block = 512, shared = 2080, min_blocks = 1>>]
// CHECK-SAME: gnn.launch = #gnn.launch<block = 256, grid = [num_rows, num_edges], per_block = 512, shared = 2080, min_blocks = 1>
// CHECK-SAME: gnn.workspace = #gnn.workspace<count = [num_rows, num_edges], items_per_unit = 64, bytes_per_unit = 1032, min_units = 1>
// CHECK: schedule = #gnn.schedule<strategy = edge_parallel, vector_width = 4, dim_workers = 32, threads_per_block = 256, edges_per_warp = 64, write = staged>
gnn.module @m {
  gnn.kernel @ep(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x128xf32>) -> tensor<?x128xf32> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = edge_parallel>} : !gnn.graph<csr, i64, i32>, tensor<?x128xf32> -> tensor<?x128xf32>
    gnn.return %y : tensor<?x128xf32>
  }
}

// -----

// A register cap for 4 blocks per SM reaches the launch.
// CHECK-LABEL: gnn.kernel @capped
// CHECK-SAME: gnn.launch = #gnn.launch<block = 256, grid = [num_rows, num_edges], per_block = 2048, shared = 8320, min_blocks = 1, blocks_per_sm = 4>
gnn.module @m {
  gnn.kernel @capped(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf16>) -> tensor<?x64xf16> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = edge_parallel, blocks_per_sm = 4>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf16> -> tensor<?x64xf16>
    gnn.return %y : tensor<?x64xf16>
  }
}

// -----

// The default block (256 threads) does not fit 16 times on an SM.
gnn.module @m {
  gnn.kernel @over(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{blocks_per_sm (16) blocks of threads_per_block (256) exceed the 2048 threads an SM holds}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<blocks_per_sm = 16>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @big(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x1xf32>) -> tensor<?x1xf32> {
    // expected-error @+1 {{edge_parallel keeps each worker's row ends in shared memory: 256 workers per block x (4096 + 1) x 4 bytes = 4195328 bytes, over 98304; lower edges_per_warp or threads_per_block}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = edge_parallel, edges_per_warp = 4096>} : !gnn.graph<csr, i64, i32>, tensor<?x1xf32> -> tensor<?x1xf32>
    gnn.return %y : tensor<?x1xf32>
  }
}

// -----

// Padded rows: ceil(41 / 8) = 6 chunks (the last one partly padding), on 8
// lanes: one chunk per lane.
// CHECK-LABEL: gnn.kernel @padded
// CHECK: gnn.plan = #gnn.plan<lanes = 8, rows_per_block = 32, vector_width = 8, chunks = 6, chunks_per_lane = 1, edge_unroll = 8, packed = true>
gnn.module @m {
  gnn.kernel @padded(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x41xf16, #gnn.rows<stride = 48>>) -> tensor<?x41xf16, #gnn.rows<stride = 48>> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x41xf16, #gnn.rows<stride = 48>> -> tensor<?x41xf16, #gnn.rows<stride = 48>>
    gnn.return %y : tensor<?x41xf16, #gnn.rows<stride = 48>>
  }
}

// -----

// The register budget counts the padded chunk: 1001 f32 features in
// stride 1004 with 4-element loads are ceil(1001 / 4) = 251 chunks, all on
// one lane: 1004 accumulators.
gnn.module @m {
  gnn.kernel @wide(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x1001xf32, #gnn.rows<stride = 1004>>) -> tensor<?x1001xf32, #gnn.rows<stride = 1004>> {
    // expected-error @+1 {{feature width 1001 needs 1004 accumulators per thread with vector_width 4 and dim_workers 1; at most 128 fit in registers (raise dim_workers or vector_width)}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 4, dim_workers = 1, threads_per_block = 32>} : !gnn.graph<csr, i64, i32>, tensor<?x1001xf32, #gnn.rows<stride = 1004>> -> tensor<?x1001xf32, #gnn.rows<stride = 1004>>
    gnn.return %y : tensor<?x1001xf32, #gnn.rows<stride = 1004>>
  }
}
