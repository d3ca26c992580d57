//===- GnnOps.td - Operations of the gnn dialect -------------------------===//
#ifndef GNNC_DIALECT_GNN_OPS_TD
#define GNNC_DIALECT_GNN_OPS_TD

include "gnnc/Dialect/Gnn/GnnBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

class Gnn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Gnn_Dialect, mnemonic, traits>;

def Gnn_FeatureTensor : TensorOf<[F32, F16, BF16]>;

//===----------------------------------------------------------------------===//
// Interfaces
//===----------------------------------------------------------------------===//

def Gnn_ScheduledOpInterface : OpInterface<"ScheduledOpInterface"> {
  let cppNamespace = "::gnnc::gnn";
  let description = [{
    An op that becomes a kernel under a `#gnn.schedule`: the passes, the CUDA
    printer and the tuner reach every such op through this interface, never
    through a list of op classes. `describe()` gives the op as its kernel
    computes it (gnnc::OpDesc, gnnc/Plan/Types.h): the kernel plans, the
    manifest and the host all read that description.
  }];
  let methods = [
    InterfaceMethod<[{The graph the op runs over; null for an op that
                      reads none (gnn.segment_matmul).}], "::mlir::Value",
                    "getGraph">,
    InterfaceMethod<"The op's schedule, if it has one.",
                    "::gnnc::gnn::ScheduleAttr", "getScheduleAttr">,
    InterfaceMethod<"Sets the op's schedule.", "void", "setScheduleAttr",
                    (ins "::gnnc::gnn::ScheduleAttr":$schedule)>,
    InterfaceMethod<"The op as its kernel computes it.", "::gnnc::OpDesc",
                    "describe">,
    InterfaceMethod<[{The op's tensor inputs besides edge values, in the order
                      of their parameters' operand numbers (role input).}],
                    "::llvm::SmallVector<::mlir::Value>", "getInputs">,
    InterfaceMethod<"The op's edge values (role edge_values), or null.",
                    "::mlir::Value", "getEdgeValues">,
  ];
}

//===----------------------------------------------------------------------===//
// Containers
//===----------------------------------------------------------------------===//

def Gnn_GnnModuleOp : Gnn_Op<"module", [
    IsolatedFromAbove, NoTerminator, SingleBlock, SymbolTable, Symbol,
    NoRegionArguments, GraphRegionNoTerminator]> {
  let summary = "a named collection of kernels";
  let description = [{
    One `.gnn` file holds one or more `gnn.module`s; each holds named
    `gnn.kernel`s that gnnc compiles into one CUDA translation unit.

    ```mlir
    gnn.module @gcn {
      gnn.kernel @aggregate(...) -> ... { ... }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name)>];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
  }];
}

def Gnn_KernelOp : Gnn_Op<"kernel", [
    FunctionOpInterface, IsolatedFromAbove, HasParent<"::gnnc::gnn::GnnModuleOp">]> {
  let summary = "a kernel: graph and tensor arguments in, tensors out";
  let description = [{
    A kernel becomes one `__global__` CUDA function. Its arguments are
    graphs (`!gnn.graph<...>`) and tensors (features `tensor<?xFxT>`, edge
    values `tensor<?xT>`); its results are the tensors it writes.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
  }];
}

def Gnn_ReturnOp : Gnn_Op<"return", [Pure, HasParent<"::gnnc::gnn::KernelOp">,
                                     ReturnLike, Terminator]> {
  let summary = "returns the kernel's results";
  let arguments = (ins Variadic<AnyType>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Aggregation
//===----------------------------------------------------------------------===//

def Gnn_SpmmOp : Gnn_Op<"spmm", [Pure, AttrSizedOperandSegments,
                                  Gnn_ScheduledOpInterface]> {
  let summary = "sparse-dense product: aggregate neighbour features";
  let description = [{
    `y[r] = reduce over non-zeros e of row r of (value[e] * x[col[e]])`,
    where `value[e]` is 1 when no edge values are given (SpMMv) and the
    given value otherwise (SpMMve).

    ```mlir
    %y = gnn.spmm %g, %x values(%w : tensor<?xf16>)
           {schedule = #gnn.schedule<vector_width = 8>}
           : !gnn.graph<csr, i64, i32>, tensor<?x64xf16> -> tensor<?x64xf16>
    ```

    Features and result may have padded rows, `tensor<?x41xf16,
    #gnn.rows<stride = 48>>` (both the same stride): `vector_width` must
    then divide the stride rather than the width. The last vector of a row
    reads into the padding; only the first `width` elements of each result
    row are written.

    Over a group of S snapshots (`!gnn.graph<snapshot_csr, ...>`, PiPAD)
    features and result are 3-D, `tensor<?xSxFxf32>`: a node's row holds
    the S snapshots' F features side by side, and snapshot s's result is
    the aggregation over snapshot s's edges (the overlap and s's exclusive
    edges) of snapshot s's features, with snapshot s's degrees in mean and
    the scaling (the column factors: S x nodes, snapshot by snapshot).
    Only `strategy = sliced` runs it (sum or mean, any scaling, no edge
    values or self term).

    `reduce` is sum, mean or max; `scale` fuses degree scaling (GCN: both);
    `self_weight` adds (1 + eps) * x[r] (GIN). `schedule` says how it runs.

    With `deg_out(r)` the number of non-zeros of row r and `deg_in(c)` the
    number of non-zeros in column c:
    - `reduce = mean` divides row r's sum by `deg_out(r)`; an empty row
      gives 0.
    - `reduce = max` takes, per feature, the largest of row r's terms
      `value[e] * x[col[e]]` (times the right factor); an empty row gives 0.
    - `scale = left` multiplies row r's result by `1/sqrt(deg_out(r))`;
      `scale = right` multiplies each neighbour term of column c by
      `1/sqrt(deg_in(c))`; `scale = both` does both (GCN's
      `D^-1/2 A D^-1/2`). A degree of 0 gives the factor 0.
    - `reduce` and `scale` compose: the row factors multiply.
    The right factor needs the column degrees: `gnn-lower-to-kernels` adds a
    kernel parameter `<p>col_norm` (after the results) holding
    `1/sqrt(deg_in(c))` for every column c as f32, computed on the host.
    - `self_weight = eps` (reduce sum or mean) adds `(1 + eps) * x[r]`
      after the aggregation and its row factor: the self term is not
      scaled. Row r of `x` must exist (as many feature rows as graph rows
      at least; the runtime checks it at launch).
    - With `#gnn.schedule<accumulate = f16>` (f16 features) the terms are
      added in half2; with `disc_batch = B` each batch of at most B
      neighbours is summed (in the accumulation precision), multiplied by
      the row factor and added to an f32 running total, so the result stays
      accurate at any degree. Without `disc_batch` an f16 accumulation is
      one running f16 sum per row (or per piece of a row, edge_parallel),
      scaled at the end.
    `col_norm_exponent = p : f32` (only with `scale = right` or `both`)
    makes the column factor `deg_in(c)^-p` instead (0 for an empty column);
    the kernel is the same, only what the host fills `col_norm` with
    changes.

    Backward. The gradient with respect to the features of a forward
    `gnn.spmm` with `reduce = sum` or `mean` over graph A is a `gnn.spmm`
    (`reduce = sum`) over the transpose A^T, of the output gradient, with
    the edge values (if any) permuted to A^T's edge order: A's column
    factor becomes A^T's row factor (`right` on A gives `left` on A^T) and
    A's row factor `deg_out(r)^-p` (p = 1 for mean, 1/2 for scale = left
    or both, 3/2 for mean with left or both) becomes A^T's column factor:
    `scale = right` (or `both`) with `col_norm_exponent = p`. The gradient
    with respect to the edge values is the dot form of gnn.sddmm of the
    output gradient and the features, times each edge's row and column
    factors. `gnnc/ops/Backward.h` builds the kernel text, the transposed
    graph and the checks. `reduce = max` has no backward yet (it needs the
    argmax of every output).

    Linear epilogue (a batch's fused GCN or GIN layer). Over a batch of
    graphs (`!gnn.graph<batched_csr, ...>`), `weight(%w : tensor<KxMxT>)`
    multiplies each aggregated row (K features, every option above) by W,
    `bias(%b : tensor<MxT>)` adds b and `activation = #gnn<activation relu>`
    applies ReLU: the result, `tensor<?xMxT>`, is `act(spmm(x) W + b)` in
    one launch, the aggregated rows of a block kept in shared memory and
    multiplied on tensor cores (TF32 for f32, f16 and bf16 with f32
    accumulation). Only `strategy = batched` runs it; features and result
    are unpadded. With `transpose_weights` the weight is `tensor<MxKxT>`
    (torch.nn.Linear's (out, in) layout), read transposed: the result is
    `act(spmm(x) Wᵀ + b)`; K must then be a multiple of 8.

    Attention (GAT's aggregation in one launch). `attention(%dst, %src :
    tensor<?xT>, tensor<?xT>)` gives one score per row and one per column;
    the weight of non-zero e = (r, c) is the softmax over row r of
    `leaky_relu(dst[r] + src[c])` (slope `leaky_relu = s : f32`; without
    it the plain sum):
    `y[r] = sum_e exp(l_e - m_r) / (sum_e' exp(l_e' - m_r)) * x[c]`, with
    `m_r` the row's largest logit. The kernel's threads of a row first take
    the running maximum and sum of the row's logits (from the scores, one
    per edge), then aggregate as above with each weight computed as it is
    needed: the logits and the weights never reach memory. Only
    `strategy = vertex_parallel` runs it (rows are not split), with
    `reduce = sum` and no edge values, degree scaling or self term; an
    empty row gives 0. For H heads, one such op per head over strided rows.

    ```mlir
    %y = gnn.spmm %g, %x attention(%dst, %src : tensor<?xf16>, tensor<?xf16>)
           {leaky_relu = 0.2 : f32}
           : !gnn.graph<csr, i64, i32>, tensor<?x64xf16> -> tensor<?x64xf16>
    ```

    ```mlir
    %h = gnn.spmm %g, %x weight(%w : tensor<64x128xf32>)
           bias(%b : tensor<128xf32>)
           {scale = #gnn<scale both>, activation = #gnn<activation relu>}
           : !gnn.graph<batched_csr, i64, i32>, tensor<?x64xf32>
             -> tensor<?x128xf32>
    ```
  }];
  let arguments = (ins Gnn_GraphType:$graph,
                       Gnn_FeatureTensor:$features,
                       Optional<Gnn_FeatureTensor>:$values,
                       Optional<Gnn_FeatureTensor>:$weight,
                       Optional<Gnn_FeatureTensor>:$bias,
                       Optional<Gnn_FeatureTensor>:$attentionRows,
                       Optional<Gnn_FeatureTensor>:$attentionCols,
                       DefaultValuedAttr<Gnn_ReduceAttr,
                         "::gnnc::gnn::Reduce::sum">:$reduce,
                       DefaultValuedAttr<Gnn_DegreeScaleAttr,
                         "::gnnc::gnn::DegreeScale::none">:$scale,
                       OptionalAttr<F32Attr>:$self_weight,
                       OptionalAttr<Gnn_ScheduleAttr>:$schedule,
                       OptionalAttr<F32Attr>:$col_norm_exponent,
                       OptionalAttr<Gnn_ActivationAttr>:$activation,
                       UnitAttr:$transpose_weights,
                       OptionalAttr<F32Attr>:$leaky_relu);
  let results = (outs Gnn_FeatureTensor:$result);
  let assemblyFormat = [{
    $graph `,` $features (`values` `(` $values^ `:` type($values) `)`)?
    (`weight` `(` $weight^ `:` type($weight) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`attention` `(` $attentionRows^ `,` $attentionCols `:`
       type($attentionRows) `,` type($attentionCols) `)`)?
    attr-dict `:` qualified(type($graph)) `,` type($features) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// ScheduledOpInterface.
    ::gnnc::OpDesc describe();
    ::llvm::SmallVector<::mlir::Value> getInputs();
    ::mlir::Value getEdgeValues() { return getValues(); }
    /// The static feature width (columns of `features`; over a group of
    /// snapshots, the node row: snapshots x features of one snapshot).
    int64_t getFeatureWidth();
    /// Elements from one row of `features` (and of the result) to the
    /// next: the stride of a `#gnn.rows` encoding, else the width.
    int64_t getRowStride();
    /// The snapshots of a group (3-D features over a snapshot_csr graph),
    /// 0 otherwise.
    int64_t getSnapshots();
    /// The element type of features and result.
    ::mlir::Type getElementType();
  }];
}

//===----------------------------------------------------------------------===//
// Per-edge values
//===----------------------------------------------------------------------===//

def Gnn_SddmmOp : Gnn_Op<"sddmm", [Pure, Gnn_ScheduledOpInterface]> {
  let summary = "one value per edge from the features of its two endpoints";
  let description = [{
    For every non-zero e = (r, c) of the graph:
    - `form = dot`: `out[e] = sum_f a[r, f] * b[c, f]` (result `tensor<?xT>`);
    - `form = add`: `out[e, h] = a[r, h] + b[c, h]` (result `tensor<?xHxT>`),
      the attention logits of GAT with H heads.
    `leaky_relu = slope` applies a leaky ReLU to each value (GAT).

    ```mlir
    %e = gnn.sddmm %g, %a, %b {form = #gnn<sddmm_form dot>}
           : !gnn.graph<csr, i64, i32>, tensor<?x64xf16>, tensor<?x64xf16>
           -> tensor<?xf16>
    ```
  }];
  let arguments = (ins Gnn_GraphType:$graph,
                       Gnn_FeatureTensor:$rowFeatures,
                       Gnn_FeatureTensor:$colFeatures,
                       DefaultValuedAttr<Gnn_SddmmFormAttr,
                         "::gnnc::gnn::SddmmForm::dot">:$form,
                       OptionalAttr<F32Attr>:$leaky_relu,
                       OptionalAttr<Gnn_ScheduleAttr>:$schedule);
  let results = (outs Gnn_FeatureTensor:$result);
  let assemblyFormat = [{
    $graph `,` $rowFeatures `,` $colFeatures attr-dict `:`
    qualified(type($graph)) `,` type($rowFeatures) `,` type($colFeatures)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// ScheduledOpInterface.
    ::gnnc::OpDesc describe();
    ::llvm::SmallVector<::mlir::Value> getInputs();
    ::mlir::Value getEdgeValues() { return nullptr; }
    /// The static feature width of both operands.
    int64_t getFeatureWidth();
    ::mlir::Type getElementType();
  }];
}

//===----------------------------------------------------------------------===//
// Edge softmax
//===----------------------------------------------------------------------===//

def Gnn_EdgeSoftmaxOp : Gnn_Op<"edge_softmax", [Pure, Gnn_ScheduledOpInterface]> {
  let summary = "softmax of per-edge logits over each destination row";
  let description = [{
    For every row r of the graph and head h, a numerically stable softmax
    over the non-zeros e of row r:
    `out[e, h] = exp(x[e, h] - m) / sum_{e' in row r} exp(x[e', h] - m)`
    with `m = max_{e' in row r} x[e', h]`. Logits are `tensor<?xHxT>` for H
    heads (GAT) or `tensor<?xT>` for one; the result has the logits' type.
    An empty row has no edges and produces nothing.

    ```mlir
    %a = gnn.edge_softmax %g, %e
           : !gnn.graph<csr, i64, i32>, tensor<?x8xf16> -> tensor<?x8xf16>
    ```

    Under the vertex_parallel schedule the `dim_workers` threads of a row
    share its edges (lane i takes edges i, i + dim_workers, ...) and each
    thread loops over the H heads of an edge (`vector_width` heads per load),
    keeping the running maximum and sum of every head in registers.
  }];
  let arguments = (ins Gnn_GraphType:$graph,
                       Gnn_FeatureTensor:$logits,
                       OptionalAttr<Gnn_ScheduleAttr>:$schedule);
  let results = (outs Gnn_FeatureTensor:$result);
  let assemblyFormat = [{
    $graph `,` $logits attr-dict `:` qualified(type($graph)) `,`
    type($logits) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// ScheduledOpInterface.
    ::gnnc::OpDesc describe();
    ::llvm::SmallVector<::mlir::Value> getInputs();
    ::mlir::Value getEdgeValues() { return nullptr; }
    /// The number of heads: the static width of 2-D logits, 1 for 1-D.
    int64_t getNumHeads();
    ::mlir::Type getElementType();
  }];
}

def Gnn_EdgeSoftmaxGradOp : Gnn_Op<"edge_softmax_grad", [Pure, Gnn_ScheduledOpInterface]> {
  let summary = "gradient of gnn.edge_softmax with respect to its logits";
  let description = [{
    Given the output `out` of `gnn.edge_softmax` over the graph and the
    gradient `grad_out` of a loss with respect to it, gives the gradient
    with respect to the logits: for every row r, head h and non-zero e of
    row r,
    `dx[e, h] = out[e, h] * (grad_out[e, h] - s)` with
    `s = sum_{e' in row r} out[e', h] * grad_out[e', h]`.
    Operands and result have one type: `tensor<?xT>` (one head) or
    `tensor<?xHxT>` (H heads, H <= 64).

    ```mlir
    %dx = gnn.edge_softmax_grad %g, %a, %da
            : !gnn.graph<csr, i64, i32>, tensor<?x8xf16>, tensor<?x8xf16>
            -> tensor<?x8xf16>
    ```

    The schedule is that of gnn.edge_softmax: under vertex_parallel the
    `dim_workers` threads of a row share its edges, each thread loops over
    the H heads of an edge (`vector_width` heads per load), a first pass
    sums `out * grad_out` per head in f32 and a second writes the result.
  }];
  let arguments = (ins Gnn_GraphType:$graph,
                       Gnn_FeatureTensor:$output,
                       Gnn_FeatureTensor:$gradOutput,
                       OptionalAttr<Gnn_ScheduleAttr>:$schedule);
  let results = (outs Gnn_FeatureTensor:$result);
  let assemblyFormat = [{
    $graph `,` $output `,` $gradOutput attr-dict `:` qualified(type($graph))
    `,` type($output) `,` type($gradOutput) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// ScheduledOpInterface.
    ::gnnc::OpDesc describe();
    ::llvm::SmallVector<::mlir::Value> getInputs();
    ::mlir::Value getEdgeValues() { return nullptr; }
    /// The number of heads: the static width of 2-D operands, 1 for 1-D.
    int64_t getNumHeads();
    ::mlir::Type getElementType();
  }];
}

include "gnnc/Dialect/Gnn/GnnBatchOps.td"
include "gnnc/Dialect/Gnn/GnnSegmentOps.td"

#endif // GNNC_DIALECT_GNN_OPS_TD
