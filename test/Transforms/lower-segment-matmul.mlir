// RUN: gnn-opt %s --gnn-lower --split-input-file --verify-diagnostics | FileCheck %s

// gnn.segment_matmul reads no graph: its weights and segment offsets have
// roles of their own, the routing table and the persistent blocks follow
// the result, and the grid counts the blocks the host chose.
// CHECK-LABEL: gnn.kernel @typed
// CHECK-SAME: gnn.abi = [#gnn.param<"x", input>, #gnn.param<"w", segment_weights>, #gnn.param<"seg", segment_offsets>, #gnn.param<"y", result>, #gnn.param<"route_tiles", route_tiles>, #gnn.param<"num_route_tiles", num_route_tiles>, #gnn.param<"route_blocks", route_blocks>]
// CHECK-SAME: gnn.launch = #gnn.launch<block = 256, grid = [route_blocks], per_block = 1, shared = 8192, min_blocks = 1>
// CHECK: gnn.segment_matmul
// CHECK-SAME: schedule = #gnn.schedule<strategy = tile_routed, vector_width = 4, dim_workers = 8, threads_per_block = 256, tile_routing = true, tile_rows = 64, math = simt>
gnn.module @m {
  gnn.kernel @typed(%x: tensor<?x64xf32>, %w: tensor<?x64x32xf32>, %seg: tensor<?xi64>) -> tensor<?x32xf32> {
    %y = gnn.segment_matmul %x, %w, %seg : tensor<?x64xf32>, tensor<?x64x32xf32>, tensor<?xi64> -> tensor<?x32xf32>
    gnn.return %y : tensor<?x32xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @wide(%x: tensor<?x256xf32>, %w: tensor<?x256x128xf32>, %seg: tensor<?xi64>) -> tensor<?x128xf32> {
    // expected-error @+1 {{gnn.segment_matmul (tile_routed) stages a type's whole weight matrix in shared memory: K 256 x M 128 x 4 bytes = 131072 bytes, over 98304; splitting K over several passes is not implemented yet; use a smaller K or M, 16-bit weights, or math = tensor_core (K and M multiples of 8)}}
    %y = gnn.segment_matmul %x, %w, %seg : tensor<?x256xf32>, tensor<?x256x128xf32>, tensor<?xi64> -> tensor<?x128xf32>
    gnn.return %y : tensor<?x128xf32>
  }
}

// -----

gnn.module @m {
  gnn.kernel @clash(%x: tensor<?x8xf32> {gnn.name = "route_tiles"}, %w: tensor<?x8x8xf32>, %seg: tensor<?xi64>) -> tensor<?x8xf32> {
    // expected-error @-1 {{a kernel parameter is named 'route_tiles', which tile_routed (the routing table) needs; rename it with gnn.name}}
    %y = gnn.segment_matmul %x, %w, %seg : tensor<?x8xf32>, tensor<?x8x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
    gnn.return %y : tensor<?x8xf32>
  }
}
