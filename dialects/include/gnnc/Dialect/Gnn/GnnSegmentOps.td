//===- GnnSegmentOps.td - Segmented matmul -------------------------------===//
//
// Rows grouped by type, each type multiplied by its own weight matrix
// (heterogeneous GNNs: RGCN, HGT). The op takes no graph.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_DIALECT_GNN_SEGMENT_OPS_TD
#define GNNC_DIALECT_GNN_SEGMENT_OPS_TD

def Gnn_SegmentMatmulOp : Gnn_Op<"segment_matmul",
                                 [Pure, Gnn_ScheduledOpInterface]> {
  let summary = "segmented matmul: each type's rows times its own weights";
  let description = [{
    `Y_t = X_t W_t` for every type `t`: the rows of `x` are grouped by
    type, `seg` holds `num_types + 1` sorted row offsets (rows
    `seg[t]` to `seg[t+1]` have type `t`, `seg[0] = 0`, the last one the
    number of rows), and `w` holds one `K x M` matrix per type.

    ```mlir
    %y = gnn.segment_matmul %x, %w, %seg
           : tensor<?x64xf32>, tensor<?x64x32xf32>, tensor<?xi64>
           -> tensor<?x32xf32>
    ```

    K and M are static; the element types are f32, f16 or bf16, the same
    for `x`, `w` and `y`. The strategy `tile_routed` (FASTEN) cuts each
    type's rows into tiles listed in a routing table built on the host.

    With `transpose_weights`, `Y_t = X_t W_tᵀ`: `x` has M columns, `y` K,
    and `w` keeps its `K x M` layout (read transposed, not copied). This is
    the input gradient of the op, `dX_t = dY_t W_tᵀ`.
  }];
  let arguments = (ins Gnn_FeatureTensor:$input,
                       Gnn_FeatureTensor:$weights,
                       TensorOf<[I64]>:$segments,
                       UnitAttr:$transpose_weights,
                       OptionalAttr<Gnn_ScheduleAttr>:$schedule);
  let results = (outs Gnn_FeatureTensor:$result);
  let assemblyFormat = [{
    $input `,` $weights `,` $segments attr-dict `:` type($input) `,`
    type($weights) `,` type($segments) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// ScheduledOpInterface. The op as its kernel computes it
    /// (OpKind::SegmentMatmul: width M, inputWidth K); it reads no graph.
    ::gnnc::OpDesc describe();
    ::mlir::Value getGraph() { return nullptr; }
    ::llvm::SmallVector<::mlir::Value> getInputs() {
      return {getInput(), getWeights(), getSegments()};
    }
    ::mlir::Value getEdgeValues() { return nullptr; }
  }];
}

def Gnn_SegmentMatmulWeightGradOp
    : Gnn_Op<"segment_matmul_weight_grad",
             [Pure, Gnn_ScheduledOpInterface]> {
  let summary = "weight gradient of the segmented matmul";
  let description = [{
    `dW_t = X_tᵀ dY_t` for every type `t`: the rows of `x` (K columns) and
    `dy` (M columns) are grouped by the same `num_types + 1` segment
    offsets as in `gnn.segment_matmul`; the result holds one `K x M`
    matrix per type (zeros for a type without rows).

    ```mlir
    %dw = gnn.segment_matmul_weight_grad %x, %dy, %seg
            : tensor<?x64xf32>, tensor<?x32xf32>, tensor<?xi64>
            -> tensor<?x64x32xf32>
    ```

    The strategy `tile_routed` takes splits of each type's rows from the
    routing table (`tile_rows` rows each, 256 by default); each split's
    partial goes to a workspace and a second kernel adds them in order.
  }];
  let arguments = (ins Gnn_FeatureTensor:$input,
                       Gnn_FeatureTensor:$output_grad,
                       TensorOf<[I64]>:$segments,
                       OptionalAttr<Gnn_ScheduleAttr>:$schedule);
  let results = (outs Gnn_FeatureTensor:$result);
  let assemblyFormat = [{
    $input `,` $output_grad `,` $segments attr-dict `:` type($input) `,`
    type($output_grad) `,` type($segments) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// ScheduledOpInterface. The op as its kernel computes it
    /// (OpKind::SegmentMatmulWeightGrad: width M, inputWidth K).
    ::gnnc::OpDesc describe();
    ::mlir::Value getGraph() { return nullptr; }
    ::llvm::SmallVector<::mlir::Value> getInputs() {
      return {getInput(), getOutputGrad(), getSegments()};
    }
    ::mlir::Value getEdgeValues() { return nullptr; }
  }];
}

#endif // GNNC_DIALECT_GNN_SEGMENT_OPS_TD
