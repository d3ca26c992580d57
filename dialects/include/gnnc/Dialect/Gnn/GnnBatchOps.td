//===- GnnBatchOps.td - Ops on batches of graphs -------------------------===//
//
// Per-graph pooling of a batch (`!gnn.graph<batched_csr, ...>`) and its
// backward. (gnn.spmm itself runs on a batch with strategy = batched.)
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_DIALECT_GNN_BATCH_OPS_TD
#define GNNC_DIALECT_GNN_BATCH_OPS_TD

def Gnn_ReadoutOp : Gnn_Op<"readout", [Pure, Gnn_ScheduledOpInterface]> {
  let summary = "per-graph pooling of a batch: one row per graph";
  let description = [{
    `y[g] = reduce over the nodes n of graph g of x[n]`: the sum, the mean
    or the largest value (per feature) of each graph's node rows, one row
    per graph of the batch; an empty graph gives 0.

    ```mlir
    %y = gnn.readout %g, %x {reduce = #gnn<reduce mean>}
           : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32>
           -> tensor<?x64xf32>
    ```

    One launch for the batch (strategy = batched, the default): a block per
    graph, sub-warps over its nodes, lanes over vector chunks of the
    features, partial results combined in shared memory.
  }];
  let arguments = (ins Gnn_GraphType:$graph,
                       Gnn_FeatureTensor:$features,
                       DefaultValuedAttr<Gnn_ReduceAttr,
                         "::gnnc::gnn::Reduce::sum">:$reduce,
                       OptionalAttr<Gnn_ScheduleAttr>:$schedule);
  let results = (outs Gnn_FeatureTensor:$result);
  let assemblyFormat = [{
    $graph `,` $features attr-dict `:` qualified(type($graph)) `,`
    type($features) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// ScheduledOpInterface.
    ::gnnc::OpDesc describe();
    ::llvm::SmallVector<::mlir::Value> getInputs();
    ::mlir::Value getEdgeValues() { return nullptr; }
  }];
}

def Gnn_ReadoutGradOp : Gnn_Op<"readout_grad",
                               [Pure, Gnn_ScheduledOpInterface]> {
  let summary = "the backward of gnn.readout: node gradients from graph ones";
  let description = [{
    `dx[n] = dy[g(n)]` (sum), `dy[g(n)] / |g(n)|` (mean) or, for max, per
    feature f, `dy[g(n), f]` on the first node n of its graph whose
    `x[n, f]` equals the forward's `y[g(n), f]` and 0 on the others. The
    operands are the forward's features `x` and result `y` (read only for
    max) and the output gradient `dy` (one row per graph).

    ```mlir
    %dx = gnn.readout_grad %g, %x, %y, %dy {reduce = #gnn<reduce max>}
            : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32>,
              tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Gnn_GraphType:$graph,
                       Gnn_FeatureTensor:$features,
                       Gnn_FeatureTensor:$output,
                       Gnn_FeatureTensor:$gradOutput,
                       DefaultValuedAttr<Gnn_ReduceAttr,
                         "::gnnc::gnn::Reduce::sum">:$reduce,
                       OptionalAttr<Gnn_ScheduleAttr>:$schedule);
  let results = (outs Gnn_FeatureTensor:$result);
  let assemblyFormat = [{
    $graph `,` $features `,` $output `,` $gradOutput attr-dict `:`
    qualified(type($graph)) `,` type($features) `,` type($output) `,`
    type($gradOutput) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// ScheduledOpInterface.
    ::gnnc::OpDesc describe();
    ::llvm::SmallVector<::mlir::Value> getInputs();
    ::mlir::Value getEdgeValues() { return nullptr; }
  }];
}

#endif // GNNC_DIALECT_GNN_BATCH_OPS_TD
