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
  }];
  let arguments = (ins Gnn_FeatureTensor:$input,
                       Gnn_FeatureTensor:$weights,
                       TensorOf<[I64]>:$segments,
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

#endif // GNNC_DIALECT_GNN_SEGMENT_OPS_TD
