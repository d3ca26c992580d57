// RUN: gnn-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect

// expected-error @+1 {{graph row offsets must be i32 or i64, got 'i16'}}
"test.types"() {t = !gnn.graph<csr, i16, i32>} : () -> ()

// -----

// expected-error @+1 {{graph column indices ('i64') are wider than its row offsets ('i32')}}
"test.types"() {t = !gnn.graph<csr, i32, i64>} : () -> ()

// -----

// expected-error @+1 {{vector_width must be 1, 2, 4 or 8 (0 = choose), got 3}}
module attributes {s = #gnn.schedule<vector_width = 3>} {}

// -----

// expected-error @+1 {{dim_workers must be a power of two from 1 to 32 (0 = choose), got 64}}
module attributes {s = #gnn.schedule<dim_workers = 64>} {}

// -----

// expected-error @+1 {{blocks_per_sm must be from 0 to 32 (0 = no register cap), got 33}}
module attributes {s = #gnn.schedule<blocks_per_sm = 33>} {}

// -----

// expected-error @+1 {{blocks_per_sm (8) blocks of threads_per_block (512) exceed the 2048 threads an SM holds}}
module attributes {s = #gnn.schedule<threads_per_block = 512, blocks_per_sm = 8>} {}

// -----

// expected-error @+1 {{threads_per_block must be a multiple of 32 from 32 to 1024 (0 = choose), got 100}}
module attributes {s = #gnn.schedule<threads_per_block = 100>} {}

// -----

// expected-error @+1 {{group_size applies to the neighbor_group strategy, not vertex_parallel}}
module attributes {s = #gnn.schedule<group_size = 4>} {}

// -----

// expected-error @+1 {{slice_size applies to the sliced strategy, not edge_parallel}}
module attributes {s = #gnn.schedule<strategy = edge_parallel, slice_size = 32>} {}

// -----

// expected-error @+1 {{tile_routing applies to the tile_routed strategy, not vertex_parallel}}
module attributes {s = #gnn.schedule<tile_routing = true>} {}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{strategy = sliced aggregates a group of snapshots at once; the graph must be a !gnn.graph<snapshot_csr, ...>}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = sliced, slice_size = 16>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{edges_per_warp must be from 8 to 1048576 (0 = choose), got 4}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = edge_parallel, edges_per_warp = 4>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{write = atomic adds the pieces of split rows with atomicAdd, which cannot take a maximum; use write = staged with reduce = max}}
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce max>, schedule = #gnn.schedule<strategy = edge_parallel, write = atomic>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?xf32>) -> tensor<?xf32> {
    // expected-error @+1 {{schedule strategy 'edge_parallel' is not implemented for gnn.edge_softmax yet; implemented: vertex_parallel}}
    %a = gnn.edge_softmax %g, %e {schedule = #gnn.schedule<strategy = edge_parallel>} : !gnn.graph<csr, i64, i32>, tensor<?xf32> -> tensor<?xf32>
    gnn.return %a : tensor<?xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf16>) -> tensor<?x64xf16> {
    // expected-error @+1 {{disc_batch must be from 1 to 1024 (0 = no discretized reduction), got 2048}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<accumulate = f16, disc_batch = 2048>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf16> -> tensor<?x64xf16>
    gnn.return %y : tensor<?x64xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf16>) -> tensor<?x64xf16> {
    // expected-error @+1 {{disc_batch must be from 1 to 1024 (0 = no discretized reduction), got -1}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<disc_batch = -1>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf16> -> tensor<?x64xf16>
    gnn.return %y : tensor<?x64xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x64xf16>, %b: tensor<?x64xf16>) -> tensor<?xf16> {
    // expected-error @+1 {{discretized reduction (disc_batch = 32) is not implemented for gnn.sddmm; use disc_batch = 0}}
    %e = gnn.sddmm %g, %a, %b {schedule = #gnn.schedule<disc_batch = 32>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf16>, tensor<?x64xf16> -> tensor<?xf16>
    gnn.return %e : tensor<?xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{accumulate = f16 needs f16 features; 'f32' features accumulate in f32}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<accumulate = f16, disc_batch = 32>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xbf16>) -> tensor<?x64xbf16> {
    // expected-error @+1 {{accumulate = f16 needs f16 features; 'bf16' features accumulate in f32}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<accumulate = f16>} : !gnn.graph<csr, i64, i32>, tensor<?x64xbf16> -> tensor<?x64xbf16>
    gnn.return %y : tensor<?x64xbf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf16>) -> tensor<?x64xf16> {
    // expected-error @+1 {{accumulate = f16 and disc_batch apply to reduce = sum or mean; max takes the largest term and accumulates in f32}}
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce max>, schedule = #gnn.schedule<accumulate = f16>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf16> -> tensor<?x64xf16>
    gnn.return %y : tensor<?x64xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?x4xf16>) -> tensor<?x4xf16> {
    // expected-error @+1 {{accumulate = f16 is not implemented for gnn.edge_softmax; it accumulates in f32}}
    %a = gnn.edge_softmax %g, %e {schedule = #gnn.schedule<accumulate = f16>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf16> -> tensor<?x4xf16>
    gnn.return %a : tensor<?x4xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{write = atomic is not implemented yet}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<write = atomic>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{vector_width 8 of 'f32' is 32 bytes; a GPU loads at most 16 bytes per thread}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 8>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x41xf16>) -> tensor<?x41xf16> {
    // expected-error @+1 {{vector_width 2 does not divide the feature width 41; declare a padded row stride, e.g. tensor<?x41xf16, #gnn.rows<stride = 42>>}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 2>} : !gnn.graph<csr, i64, i32>, tensor<?x41xf16> -> tensor<?x41xf16>
    gnn.return %y : tensor<?x41xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<sliced_csr, i64, i32>, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    // expected-error @+1 {{graph format 'sliced_csr' is not supported by gnn.spmm yet; use csr, batched_csr or snapshot_csr}}
    %y = gnn.spmm %g, %x : !gnn.graph<sliced_csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x?xf32>) -> tensor<?x?xf32> {
    // expected-error @+1 {{feature width must be static and positive}}
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x?xf32> -> tensor<?x?xf32>
    gnn.return %y : tensor<?x?xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf32>) -> tensor<?x16xf32> {
    // expected-error @+1 {{must be a 2-D tensor with the element type and feature width of the features}}
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x16xf32>
    gnn.return %y : tensor<?x16xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf16>, %w: tensor<?xf32>) -> tensor<?x8xf16> {
    // expected-error @+1 {{edge values must be a 1-D tensor of 'f16', got 'tensor<?xf32>'}}
    %y = gnn.spmm %g, %x values(%w : tensor<?xf32>) : !gnn.graph<csr, i64, i32>, tensor<?x8xf16> -> tensor<?x8xf16>
    gnn.return %y : tensor<?x8xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    // expected-error @+1 {{self_weight applies to reduce = sum or mean, not max}}
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce max>, self_weight = 0.5 : f32} : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    // expected-error @+1 {{accumulate = f16 and disc_batch apply to reduce = sum or mean; max takes the largest term and accumulates in f32}}
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce max>, scale = #gnn<scale both>, schedule = #gnn.schedule<disc_batch = 8>} : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?x4xf32>) -> tensor<?x8xf32> {
    // expected-error @+1 {{result 'tensor<?x8xf32>' must have the rank, element type and number of heads of the logits 'tensor<?x4xf32>'}}
    %a = gnn.edge_softmax %g, %e : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x8xf32>
    gnn.return %a : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?x?xf16>) -> tensor<?x?xf16> {
    // expected-error @+1 {{logits must be a 1-D tensor (one value per edge) or a 2-D tensor with a static, positive number of heads, got 'tensor<?x?xf16>'}}
    %a = gnn.edge_softmax %g, %e : !gnn.graph<csr, i64, i32>, tensor<?x?xf16> -> tensor<?x?xf16>
    gnn.return %a : tensor<?x?xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?xf16>) -> tensor<?xf32> {
    // expected-error @+1 {{must have the rank, element type and number of heads of the logits}}
    %a = gnn.edge_softmax %g, %e : !gnn.graph<csr, i64, i32>, tensor<?xf16> -> tensor<?xf32>
    gnn.return %a : tensor<?xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<sliced_csr, i64, i32>, %e: tensor<?x4xf32>) -> tensor<?x4xf32> {
    // expected-error @+1 {{graph format 'sliced_csr' is not supported by gnn.edge_softmax yet; use csr}}
    %a = gnn.edge_softmax %g, %e : !gnn.graph<sliced_csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %a : tensor<?x4xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?x4xf32>) -> tensor<?x4xf32> {
    // expected-error @+1 {{vector_width 8 of 'f32' is 32 bytes; a GPU loads at most 16 bytes per thread}}
    %a = gnn.edge_softmax %g, %e {schedule = #gnn.schedule<vector_width = 8>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %a : tensor<?x4xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf32>) -> tensor<?x4xf32> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    // expected-error @+1 {{result #0 has type 'tensor<?x8xf32>', but kernel @k declares 'tensor<?x4xf32>'}}
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  // expected-error @+1 {{argument #1 must be a !gnn.graph or a ranked tensor of rank 1, 2 or 3, got 'i32'}}
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %n: i32) {
    gnn.return
  }
}

// -----

// expected-error @+1 {{expects parent op 'gnn.module'}}
gnn.kernel @orphan() {
  gnn.return
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x8xf32> {
    // expected-error @+1 {{form = dot gives one value per edge: the result must be 1-D, got 'tensor<?x8xf32>'}}
    %e = gnn.sddmm %g, %a, %b : !gnn.graph<csr, i64, i32>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %e : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?xf32> {
    // expected-error @+1 {{form = add gives one value per edge and column: the result must be 2-D with width 8, got 'tensor<?xf32>'}}
    %e = gnn.sddmm %g, %a, %b {form = #gnn<sddmm_form add>} : !gnn.graph<csr, i64, i32>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?xf32>
    gnn.return %e : tensor<?xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x8xf32>, %b: tensor<?x16xf32>) -> tensor<?xf32> {
    // expected-error @+1 {{row features 'tensor<?x8xf32>' and column features 'tensor<?x16xf32>' must have the same element type and width}}
    %e = gnn.sddmm %g, %a, %b : !gnn.graph<csr, i64, i32>, tensor<?x8xf32>, tensor<?x16xf32> -> tensor<?xf32>
    gnn.return %e : tensor<?xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?xf32> {
    // expected-error @+1 {{schedule strategy 'tile_routed' is not implemented for gnn.sddmm yet; implemented: vertex_parallel, edge_parallel, neighbor_group}}
    %e = gnn.sddmm %g, %a, %b {schedule = #gnn.schedule<strategy = tile_routed>} : !gnn.graph<csr, i64, i32>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?xf32>
    gnn.return %e : tensor<?xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    // expected-error @+1 {{self_weight must be finite}}
    %y = gnn.spmm %g, %x {self_weight = 0x7F800000 : f32} : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x4xf32>, %da: tensor<?x4xf16>) -> tensor<?x4xf32> {
    // expected-error @+1 {{the output gradient 'tensor<?x4xf16>' must have the type of the softmax output 'tensor<?x4xf32>'}}
    %dx = gnn.edge_softmax_grad %g, %a, %da : !gnn.graph<csr, i64, i32>, tensor<?x4xf32>, tensor<?x4xf16> -> tensor<?x4xf32>
    gnn.return %dx : tensor<?x4xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x4xf32>, %da: tensor<?x4xf32>) -> tensor<?x8xf32> {
    // expected-error @+1 {{result 'tensor<?x8xf32>' must have the type of the softmax output 'tensor<?x4xf32>'}}
    %dx = gnn.edge_softmax_grad %g, %a, %da : !gnn.graph<csr, i64, i32>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x8xf32>
    gnn.return %dx : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x?xf16>, %da: tensor<?x?xf16>) -> tensor<?x?xf16> {
    // expected-error @+1 {{the softmax output must be a 1-D tensor (one value per edge) or a 2-D tensor with a static, positive number of heads, got 'tensor<?x?xf16>'}}
    %dx = gnn.edge_softmax_grad %g, %a, %da : !gnn.graph<csr, i64, i32>, tensor<?x?xf16>, tensor<?x?xf16> -> tensor<?x?xf16>
    gnn.return %dx : tensor<?x?xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<sliced_csr, i64, i32>, %a: tensor<?xf32>, %da: tensor<?xf32>) -> tensor<?xf32> {
    // expected-error @+1 {{graph format 'sliced_csr' is not supported by gnn.edge_softmax_grad yet; use csr}}
    %dx = gnn.edge_softmax_grad %g, %a, %da : !gnn.graph<sliced_csr, i64, i32>, tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
    gnn.return %dx : tensor<?xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x4xf32>, %da: tensor<?x4xf32>) -> tensor<?x4xf32> {
    // expected-error @+1 {{vector_width 8 of 'f32' is 32 bytes; a GPU loads at most 16 bytes per thread}}
    %dx = gnn.edge_softmax_grad %g, %a, %da {schedule = #gnn.schedule<vector_width = 8>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %dx : tensor<?x4xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    // expected-error @+1 {{col_norm_exponent sets the column factors of scale = right or both, but scale is left}}
    %y = gnn.spmm %g, %x {scale = #gnn<scale left>, col_norm_exponent = 1.0 : f32} : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    // expected-error @+1 {{col_norm_exponent must be finite and positive, got -1}}
    %y = gnn.spmm %g, %x {scale = #gnn<scale right>, col_norm_exponent = -1.0 : f32} : !gnn.graph<csr, i64, i32>, tensor<?x8xf32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?xf32> {
    // expected-error @+1 {{write = atomic applies to gnn.spmm; gnn.sddmm writes each edge's value once (use write = staged)}}
    %e = gnn.sddmm %g, %a, %b {schedule = #gnn.schedule<strategy = edge_parallel, write = atomic>} : !gnn.graph<csr, i64, i32>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?xf32>
    gnn.return %e : tensor<?xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{neighbor_group adds the rows that span blocks to the result atomically: use write = atomic (or leave it out)}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = neighbor_group, group_size = 16, write = staged>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{neighbor_group adds the rows that span blocks with atomicAdd, which cannot take a maximum; use vertex_parallel or edge_parallel with reduce = max}}
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce max>, schedule = #gnn.schedule<strategy = neighbor_group>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?xf32> {
    // expected-error @+1 {{write = shared applies to gnn.spmm; gnn.sddmm writes each edge's value once (use write = staged)}}
    %e = gnn.sddmm %g, %a, %b {schedule = #gnn.schedule<strategy = edge_parallel, write = shared>} : !gnn.graph<csr, i64, i32>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?xf32>
    gnn.return %e : tensor<?xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{strategy = batched runs over a batch of graphs; the graph must be a !gnn.graph<batched_csr, ...>}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = batched>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{tile_rows applies to the batched and tile_routed strategies, not vertex_parallel}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<tile_rows = 32>} : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{graphs_per_block must be from 1 to 1024 (0 = choose), got 2000}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = batched, graphs_per_block = 2000>} : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{write = atomic is not implemented yet; batched writes each row directly}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = batched, write = atomic>} : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{graph format 'batched_csr' is not supported by gnn.sddmm yet; use csr}}
    %y = gnn.sddmm %g, %x, %x : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?xf32>
    gnn.return %y : tensor<?xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{pools each graph of a batch: the graph must be a !gnn.graph<batched_csr, ...>, got '!gnn.graph<csr, i64, i32>'}}
    %y = gnn.readout %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x32xf32> {
    // expected-error @+1 {{'tensor<?x32xf32>' must have the element type and width of the features 'tensor<?x64xf32>'}}
    %y = gnn.readout %g, %x : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x32xf32>
    gnn.return %y : tensor<?x32xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{tile_rows applies to gnn.spmm; gnn.readout reads each node's features once and stages nothing}}
    %y = gnn.readout %g, %x {schedule = #gnn.schedule<strategy = batched, tile_rows = 8>} : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{schedule strategy 'vertex_parallel' is not implemented for gnn.readout yet; implemented: batched}}
    %y = gnn.readout %g, %x {schedule = #gnn.schedule<dim_workers = 4>} : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>, %y: tensor<?x64xf16>) -> tensor<?x64xf32> {
    // expected-error @+1 {{'tensor<?x64xf16>' must have the element type and width of the features 'tensor<?x64xf32>'}}
    %dx = gnn.readout_grad %g, %x, %y, %x : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32>, tensor<?x64xf16>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %dx : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%x: tensor<?x64xf32>, %w: tensor<?x32x16xf32>, %seg: tensor<?xi64>) -> tensor<?x16xf32> {
    // expected-error @+1 {{weights' K (32) differs from the input's width (64)}}
    %y = gnn.segment_matmul %x, %w, %seg : tensor<?x64xf32>, tensor<?x32x16xf32>, tensor<?xi64> -> tensor<?x16xf32>
    gnn.return %y : tensor<?x16xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%dy: tensor<?x32xf32>, %w: tensor<?x32x16xf32>, %seg: tensor<?xi64>) -> tensor<?x32xf32> {
    // expected-error @+1 {{weights' M (16) differs from the input's width (32) (transpose_weights)}}
    %dx = gnn.segment_matmul %dy, %w, %seg {transpose_weights} : tensor<?x32xf32>, tensor<?x32x16xf32>, tensor<?xi64> -> tensor<?x32xf32>
    gnn.return %dx : tensor<?x32xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%x: tensor<?x33xf32>, %w: tensor<?x33x16xf32>, %seg: tensor<?xi64>) -> tensor<?x16xf32> {
    // expected-error @+1 {{gnn.segment_matmul with math = tensor_core: tensor cores take K and M in multiples of 8 up to 512, got K 33 and M 16 (math = simt takes any K and M)}}
    %y = gnn.segment_matmul %x, %w, %seg {schedule = #gnn.schedule<strategy = tile_routed, math = tensor_core>} : tensor<?x33xf32>, tensor<?x33x16xf32>, tensor<?xi64> -> tensor<?x16xf32>
    gnn.return %y : tensor<?x16xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%x: tensor<?x16xf32>, %dy: tensor<?x8xf32>, %seg: tensor<?xi64>) -> tensor<?x8x16xf32> {
    // expected-error @+1 {{result must be types x 16 x 8 (the input's and the output gradient's widths), got 'tensor<?x8x16xf32>'}}
    %dw = gnn.segment_matmul_weight_grad %x, %dy, %seg : tensor<?x16xf32>, tensor<?x8xf32>, tensor<?xi64> -> tensor<?x8x16xf32>
    gnn.return %dw : tensor<?x8x16xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%x: tensor<?x64xf32>, %w: tensor<?x64x16xf32>, %seg: tensor<?xi64>) -> tensor<?x8xf32> {
    // expected-error @+1 {{result's width (8) differs from the weights' M (16)}}
    %y = gnn.segment_matmul %x, %w, %seg : tensor<?x64xf32>, tensor<?x64x16xf32>, tensor<?xi64> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%x: tensor<?x64xf32>, %w: tensor<?x64x?xf32>, %seg: tensor<?xi64>) -> tensor<?x8xf32> {
    // expected-error @+1 {{weights must be 3-D (types x K x M) with static K and M, got 'tensor<?x64x?xf32>'}}
    %y = gnn.segment_matmul %x, %w, %seg : tensor<?x64xf32>, tensor<?x64x?xf32>, tensor<?xi64> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%x: tensor<?x?xf32>, %w: tensor<?x64x8xf32>, %seg: tensor<?xi64>) -> tensor<?x8xf32> {
    // expected-error @+1 {{input must be 2-D (rows x K) with a static K, got 'tensor<?x?xf32>'}}
    %y = gnn.segment_matmul %x, %w, %seg : tensor<?x?xf32>, tensor<?x64x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%x: tensor<?x64xf16>, %w: tensor<?x64x8xf32>, %seg: tensor<?xi64>) -> tensor<?x8xf16> {
    // expected-error @+1 {{input, weights and result must have one element type, got 'f16', 'f32' and 'f16'}}
    %y = gnn.segment_matmul %x, %w, %seg : tensor<?x64xf16>, tensor<?x64x8xf32>, tensor<?xi64> -> tensor<?x8xf16>
    gnn.return %y : tensor<?x8xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%x: tensor<?x64xf32>, %w: tensor<3x64x8xf32>, %seg: tensor<3xi64>) -> tensor<?x8xf32> {
    // expected-error @+1 {{segment offsets must hold num_types + 1 = 4 entries (one weight matrix per type), got 3}}
    %y = gnn.segment_matmul %x, %w, %seg : tensor<?x64xf32>, tensor<3x64x8xf32>, tensor<3xi64> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%x: tensor<?x64xf32>, %w: tensor<?x64x8xf32>, %seg: tensor<?xi32>) -> tensor<?x8xf32> {
    // expected-error @+1 {{operand #2 must be tensor of 64-bit signless integer values}}
    %y = gnn.segment_matmul %x, %w, %seg : tensor<?x64xf32>, tensor<?x64x8xf32>, tensor<?xi32> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%x: tensor<?x64xi32>, %w: tensor<?x64x8xf32>, %seg: tensor<?xi64>) -> tensor<?x8xf32> {
    // expected-error @+1 {{operand #0 must be tensor of 32-bit float or 16-bit float or bfloat16 type values}}
    %y = gnn.segment_matmul %x, %w, %seg : tensor<?x64xi32>, tensor<?x64x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%x: tensor<?x2000000xf32>, %w: tensor<?x2000000x8xf32>, %seg: tensor<?xi64>) -> tensor<?x8xf32> {
    // expected-error @+1 {{input width (K) 2000000 of gnn.segment_matmul must be from 1 to 1048576}}
    %y = gnn.segment_matmul %x, %w, %seg : tensor<?x2000000xf32>, tensor<?x2000000x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%x: tensor<?x64xf32>, %w: tensor<?x64x8xf32>, %seg: tensor<?xi64>) -> tensor<?x8xf32> {
    // expected-error @+1 {{schedule strategy 'vertex_parallel' is not implemented for gnn.segment_matmul yet; implemented: tile_routed}}
    %y = gnn.segment_matmul %x, %w, %seg {schedule = #gnn.schedule<dim_workers = 4>} : tensor<?x64xf32>, tensor<?x64x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%x: tensor<?x64xf32>, %w: tensor<?x64x6xf32>, %seg: tensor<?xi64>) -> tensor<?x6xf32> {
    // expected-error @+1 {{vector_width 4 does not divide the feature width 6; use a vector_width that divides it (padded rows are implemented for gnn.spmm only)}}
    %y = gnn.segment_matmul %x, %w, %seg {schedule = #gnn.schedule<strategy = tile_routed, vector_width = 4, tile_rows = 32>} : tensor<?x64xf32>, tensor<?x64x6xf32>, tensor<?xi64> -> tensor<?x6xf32>
    gnn.return %y : tensor<?x6xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<snapshot_csr, i64, i32>, %x: tensor<?x32xf32>) -> tensor<?x32xf32> {
    // expected-error @+1 {{features over a group of snapshots must be a 3-D tensor (nodes x snapshots x feature width) with static positive snapshots and width, got 'tensor<?x32xf32>'}}
    %y = gnn.spmm %g, %x : !gnn.graph<snapshot_csr, i64, i32>, tensor<?x32xf32> -> tensor<?x32xf32>
    gnn.return %y : tensor<?x32xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
    // expected-error @+1 {{features must be a 2-D tensor (nodes x feature width), got 'tensor<?x4x8xf32>' (3-D features take a !gnn.graph<snapshot_csr, ...>)}}
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x4x8xf32> -> tensor<?x4x8xf32>
    gnn.return %y : tensor<?x4x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<snapshot_csr, i64, i32>, %x: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
    // expected-error @+1 {{a group of snapshots (snapshot_csr) is aggregated by strategy = sliced, not vertex_parallel}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 4>} : !gnn.graph<snapshot_csr, i64, i32>, tensor<?x4x8xf32> -> tensor<?x4x8xf32>
    gnn.return %y : tensor<?x4x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<snapshot_csr, i64, i32>, %x: tensor<?x4x6xf32>) -> tensor<?x4x6xf32> {
    // expected-error @+1 {{vector_width 4 does not divide the features of one snapshot (6); a vector load must not straddle two snapshots}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = sliced, vector_width = 4>} : !gnn.graph<snapshot_csr, i64, i32>, tensor<?x4x6xf32> -> tensor<?x4x6xf32>
    gnn.return %y : tensor<?x4x6xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<snapshot_csr, i64, i32>, %x: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
    // expected-error @+1 {{a group of snapshots is aggregated with reduce = sum or mean and degree scaling; edge values, reduce = max, self_weight and padded rows are not implemented for it}}
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce max>, schedule = #gnn.schedule<strategy = sliced>} : !gnn.graph<snapshot_csr, i64, i32>, tensor<?x4x8xf32> -> tensor<?x4x8xf32>
    gnn.return %y : tensor<?x4x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<snapshot_csr, i64, i32>, %x: tensor<?x4x8xf32>) -> tensor<?x4x16xf32> {
    // expected-error @+1 {{result 'tensor<?x4x16xf32>' must be a 3-D tensor with the element type, snapshots and feature width of the features 'tensor<?x4x8xf32>'}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = sliced>} : !gnn.graph<snapshot_csr, i64, i32>, tensor<?x4x8xf32> -> tensor<?x4x16xf32>
    gnn.return %y : tensor<?x4x16xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<snapshot_csr, i64, i32>, %x: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
    // expected-error @+1 {{slice_size must be from 1 to 4096 (0 = choose), got 100000}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = sliced, slice_size = 100000>} : !gnn.graph<snapshot_csr, i64, i32>, tensor<?x4x8xf32> -> tensor<?x4x8xf32>
    gnn.return %y : tensor<?x4x8xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{bias, activation and transpose_weights belong to a linear epilogue; give its weight(...) too}}
    %y = gnn.spmm %g, %x bias(%b : tensor<64xf32>) : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x32xf32> {
    // expected-error @+1 {{a linear epilogue (weight) runs over a batch of graphs; the graph must be a !gnn.graph<batched_csr, ...>}}
    %y = gnn.spmm %g, %x weight(%w : tensor<64x32xf32>) : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x32xf32>
    gnn.return %y : tensor<?x32xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>, %w: tensor<32x32xf32>) -> tensor<?x32xf32> {
    // expected-error @+1 {{weight 'tensor<32x32xf32>' must be a static 2-D tensor 64 x M of the features' element type 'f32'}}
    %y = gnn.spmm %g, %x weight(%w : tensor<32x32xf32>) : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x32xf32>
    gnn.return %y : tensor<?x32xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{result 'tensor<?x64xf32>' must be a 2-D tensor of the features' element type and the weight's 32 columns}}
    %y = gnn.spmm %g, %x weight(%w : tensor<64x32xf32>) : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %b: tensor<64xf32>) -> tensor<?x32xf32> {
    // expected-error @+1 {{bias 'tensor<64xf32>' must be a 1-D tensor of 32 'f32'}}
    %y = gnn.spmm %g, %x weight(%w : tensor<64x32xf32>) bias(%b : tensor<64xf32>) : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x32xf32>
    gnn.return %y : tensor<?x32xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x32xf32> {
    // expected-error @+1 {{a linear epilogue (weight) runs only with strategy = batched, not vertex_parallel}}
    %y = gnn.spmm %g, %x weight(%w : tensor<64x32xf32>) {schedule = #gnn.schedule<strategy = vertex_parallel>} : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x32xf32>
    gnn.return %y : tensor<?x32xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>, %w: tensor<64x20xf32>) -> tensor<?x20xf32> {
    // expected-error @+1 {{a linear epilogue runs on tensor cores: the weight's columns (M) must be a multiple of 8 and K and M at most 512, got K 64 and M 20}}
    %y = gnn.spmm %g, %x weight(%w : tensor<64x20xf32>) {schedule = #gnn.schedule<strategy = batched>} : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x20xf32>
    gnn.return %y : tensor<?x20xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x32xf32> {
    // expected-error @+1 {{a linear epilogue takes tile_rows 16, 32, 64 or 128 (a block's rows of 16-row fragments), got 12}}
    %y = gnn.spmm %g, %x weight(%w : tensor<64x32xf32>) {schedule = #gnn.schedule<strategy = batched, tile_rows = 12>} : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x32xf32>
    gnn.return %y : tensor<?x32xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x32xf32> {
    // expected-error @+1 {{the linear epilogue's tile of 64 x 32 runs a multiple of 128 threads up to 512 (4 x 1 warps multiply), not threads_per_block 1024; leave threads_per_block out}}
    %y = gnn.spmm %g, %x weight(%w : tensor<64x32xf32>) {schedule = #gnn.schedule<strategy = batched, tile_rows = 64, threads_per_block = 1024>} : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32> -> tensor<?x32xf32>
    gnn.return %y : tensor<?x32xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>, %d: tensor<?xf16>, %s: tensor<?xf16>) -> tensor<?x64xf32> {
    // expected-error @+1 {{attention scores must be 1-D tensors of 'f32' (one per row, one per column), got 'tensor<?xf16>'}}
    %y = gnn.spmm %g, %x attention(%d, %s : tensor<?xf16>, tensor<?xf16>) : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>, %d: tensor<?xf32>, %s: tensor<?xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{attention weighs each edge by the softmax of its row; it takes reduce = sum, no edge values, degree scaling, self_weight, linear epilogue or snapshot group}}
    %y = gnn.spmm %g, %x attention(%d, %s : tensor<?xf32>, tensor<?xf32>) {reduce = #gnn<reduce mean>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{leaky_relu of gnn.spmm applies to its attention logits; give attention(...) too}}
    %y = gnn.spmm %g, %x {leaky_relu = 0.2 : f32} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>, %d: tensor<?xf32>, %s: tensor<?xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{attention takes the softmax over whole rows: it runs with strategy = vertex_parallel (a row's threads find its maximum and sum first) or neighbor_group (two first kernels leave them in a workspace), not edge_parallel}}
    %y = gnn.spmm %g, %x attention(%d, %s : tensor<?xf32>, tensor<?xf32>) {schedule = #gnn.schedule<strategy = edge_parallel>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x1xf32>, %b: tensor<?x1xf32>) -> tensor<?x1xf32> {
    // expected-error @+1 {{leaky_relu slope must be finite}}
    %e = gnn.sddmm %g, %a, %b {form = #gnn<sddmm_form add>, leaky_relu = 0x7F800000 : f32} : !gnn.graph<csr, i64, i32>, tensor<?x1xf32>, tensor<?x1xf32> -> tensor<?x1xf32>
    gnn.return %e : tensor<?x1xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>, %d: tensor<?xf32>, %s: tensor<?xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{leaky_relu slope must be finite}}
    %y = gnn.spmm %g, %x attention(%d, %s : tensor<?xf32>, tensor<?xf32>) {leaky_relu = 0x7FC00000 : f32} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}
