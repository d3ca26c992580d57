// RUN: gnn-opt %s --split-input-file --verify-diagnostics

gnn.module @m {
  // expected-error @+1 {{#gnn.rows stride 40 is smaller than the feature width 41; a row stride holds at least one row}}
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x41xf16, #gnn.rows<stride = 40>>) -> tensor<?x41xf16> {
  }
}

// -----

gnn.module @m {
  // expected-error @+1 {{#gnn.rows stride must be positive, got 0}}
  gnn.kernel @k(%x: tensor<?x41xf16, #gnn.rows<stride = 0>>) -> tensor<?x41xf16> {
  }
}

// -----

gnn.module @m {
  // expected-error @+1 {{#gnn.rows lays out the rows of a 2-D feature tensor, not a tensor of rank 1}}
  gnn.kernel @k(%w: tensor<?xf16, #gnn.rows<stride = 8>>) -> tensor<?x8xf16> {
  }
}

// -----

gnn.module @m {
  // expected-error @+1 {{#gnn.rows<stride = 64> needs a static feature width}}
  gnn.kernel @k(%x: tensor<?x?xf16, #gnn.rows<stride = 64>>) -> tensor<?x8xf16> {
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x41xf32, #gnn.rows<stride = 42>>) -> tensor<?x41xf32, #gnn.rows<stride = 42>> {
    // expected-error @+1 {{vector_width 4 does not divide the row stride 42 (feature width 41); padded rows must start on vector boundaries: use a stride that is a multiple of 4, e.g. 44}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 4>} : !gnn.graph<csr, i64, i32>, tensor<?x41xf32, #gnn.rows<stride = 42>> -> tensor<?x41xf32, #gnn.rows<stride = 42>>
    gnn.return %y : tensor<?x41xf32, #gnn.rows<stride = 42>>
  }
}

// -----

// The byte rule is unchanged: 8 f32 are 32 bytes whatever the stride.
gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x41xf32, #gnn.rows<stride = 48>>) -> tensor<?x41xf32, #gnn.rows<stride = 48>> {
    // expected-error @+1 {{vector_width 8 of 'f32' is 32 bytes; a GPU loads at most 16 bytes per thread}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 8>} : !gnn.graph<csr, i64, i32>, tensor<?x41xf32, #gnn.rows<stride = 48>> -> tensor<?x41xf32, #gnn.rows<stride = 48>>
    gnn.return %y : tensor<?x41xf32, #gnn.rows<stride = 48>>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x41xf16>) -> tensor<?x41xf16> {
    // expected-error @+1 {{vector_width 8 does not divide the feature width 41; declare a padded row stride, e.g. tensor<?x41xf16, #gnn.rows<stride = 48>>}}
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 8>} : !gnn.graph<csr, i64, i32>, tensor<?x41xf16> -> tensor<?x41xf16>
    gnn.return %y : tensor<?x41xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x41xf16, #gnn.rows<stride = 48>>) -> tensor<?x41xf16, #gnn.rows<stride = 56>> {
    // expected-error @+1 {{result row stride 56 differs from the features' row stride 48; a gnn.spmm kernel has one row stride: give the features and the result the same #gnn.rows layout}}
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x41xf16, #gnn.rows<stride = 48>> -> tensor<?x41xf16, #gnn.rows<stride = 56>>
    gnn.return %y : tensor<?x41xf16, #gnn.rows<stride = 56>>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x41xf16, #gnn.rows<stride = 48>>) -> tensor<?x41xf16> {
    // expected-error @+1 {{result row stride 41 differs from the features' row stride 48}}
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x41xf16, #gnn.rows<stride = 48>> -> tensor<?x41xf16>
    gnn.return %y : tensor<?x41xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x41xf16, #gnn.rows<stride = 48>>, %b: tensor<?x41xf16>) -> tensor<?xf16> {
    // expected-error @+1 {{padded rows (#gnn.rows) are not implemented for gnn.sddmm; got 'tensor<?x41xf16, #gnn.rows<stride = 48>>' (use the tensor without the encoding)}}
    %e = gnn.sddmm %g, %a, %b : !gnn.graph<csr, i64, i32>, tensor<?x41xf16, #gnn.rows<stride = 48>>, tensor<?x41xf16> -> tensor<?xf16>
    gnn.return %e : tensor<?xf16>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?x4xf32, #gnn.rows<stride = 8>>) -> tensor<?x4xf32, #gnn.rows<stride = 8>> {
    // expected-error @+1 {{padded rows (#gnn.rows) are not implemented for gnn.edge_softmax}}
    %a = gnn.edge_softmax %g, %e : !gnn.graph<csr, i64, i32>, tensor<?x4xf32, #gnn.rows<stride = 8>> -> tensor<?x4xf32, #gnn.rows<stride = 8>>
    gnn.return %a : tensor<?x4xf32, #gnn.rows<stride = 8>>
  }
}

// -----

gnn.module @m {
  gnn.kernel @k(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x41xf16>, %b: tensor<?x41xf16>) -> tensor<?xf16> {
    // expected-error @+1 {{vector_width 2 does not divide the feature width 41; use a vector_width that divides it (padded rows are implemented for gnn.spmm only)}}
    %e = gnn.sddmm %g, %a, %b {schedule = #gnn.schedule<vector_width = 2>} : !gnn.graph<csr, i64, i32>, tensor<?x41xf16>, tensor<?x41xf16> -> tensor<?xf16>
    gnn.return %e : tensor<?xf16>
  }
}
