//===- GnnBase.td - The gnn dialect, its enums, types and attributes ------===//
//
// The `gnn` dialect describes the sparse kernels of graph neural networks:
// *what* is computed. How an op runs is a separate, verified attribute,
// `#gnn.schedule<...>`, which is the only thing a tuner writes.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_DIALECT_GNN_BASE_TD
#define GNNC_DIALECT_GNN_BASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/DialectBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/TensorEncoding.td"

def Gnn_Dialect : Dialect {
  let name = "gnn";
  let cppNamespace = "::gnnc::gnn";
  let summary = "Sparse kernels of graph neural networks";
  let description = [{
    Ops for neighbour aggregation (SpMM), per-edge values (SDDMM), edge
    softmax, segmented matmul, batched and multi-snapshot aggregation, over
    graph operands of type `!gnn.graph<...>`. Each op may carry a
    `#gnn.schedule<...>` that says how it is run on a GPU.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Gnn_GraphFormat : I32EnumAttr<"GraphFormat", "storage format of a graph", [
    I32EnumAttrCase<"csr", 0>,
    I32EnumAttrCase<"sliced_csr", 1>,
    I32EnumAttrCase<"batched_csr", 2>,
    I32EnumAttrCase<"segmented_csr", 3>,
    I32EnumAttrCase<"snapshot_csr", 4>]> {
  let cppNamespace = "::gnnc::gnn";
  let genSpecializedAttr = 0;
}

def Gnn_Strategy : I32EnumAttr<"Strategy", "parallelization strategy", [
    I32EnumAttrCase<"vertex_parallel", 0>,
    I32EnumAttrCase<"neighbor_group", 1>,
    I32EnumAttrCase<"edge_parallel", 2>,
    I32EnumAttrCase<"sliced", 3>,
    I32EnumAttrCase<"batched", 4>,
    I32EnumAttrCase<"tile_routed", 5>]> {
  let cppNamespace = "::gnnc::gnn";
  let genSpecializedAttr = 0;
}

def Gnn_Accumulate : I32EnumAttr<"Accumulate", "accumulation precision", [
    I32EnumAttrCase<"f32", 0>,
    I32EnumAttrCase<"f16", 1>]> {
  let cppNamespace = "::gnnc::gnn";
  let genSpecializedAttr = 0;
}

def Gnn_WriteMode : I32EnumAttr<"WriteMode", "how partial results reach memory", [
    I32EnumAttrCase<"direct", 0>,
    I32EnumAttrCase<"atomic", 1>,
    I32EnumAttrCase<"staged", 2>,
    I32EnumAttrCase<"shared", 3>]> {
  let cppNamespace = "::gnnc::gnn";
  let genSpecializedAttr = 0;
}

def Gnn_Reduce : I32EnumAttr<"Reduce", "neighbour reduction", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>]> {
  let cppNamespace = "::gnnc::gnn";
  let genSpecializedAttr = 0;
}

def Gnn_DegreeScale : I32EnumAttr<"DegreeScale", "fused degree scaling", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"left", 1>,
    I32EnumAttrCase<"right", 2>,
    I32EnumAttrCase<"both", 3>]> {
  let cppNamespace = "::gnnc::gnn";
  let genSpecializedAttr = 0;
}

def Gnn_SddmmForm : I32EnumAttr<"SddmmForm", "how an edge value is formed", [
    I32EnumAttrCase<"dot", 0>,
    I32EnumAttrCase<"add", 1>]> {
  let cppNamespace = "::gnnc::gnn";
  let genSpecializedAttr = 0;
}

def Gnn_ReduceAttr : EnumAttr<Gnn_Dialect, Gnn_Reduce, "reduce">;
def Gnn_SddmmFormAttr : EnumAttr<Gnn_Dialect, Gnn_SddmmForm, "sddmm_form">;
def Gnn_DegreeScaleAttr : EnumAttr<Gnn_Dialect, Gnn_DegreeScale, "scale">;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Gnn_GraphType : TypeDef<Gnn_Dialect, "GnnGraph"> {
  let mnemonic = "graph";
  let summary = "a sparse graph (adjacency) in a given storage format";
  let description = [{
    `!gnn.graph<csr, i64, i32>` is a CSR graph with 64-bit row offsets and
    32-bit column indices. Rows are destinations: row r aggregates from the
    columns of its non-zeros. Other formats (`sliced_csr`, `batched_csr`,
    `segmented_csr`, `snapshot_csr`) are declared for the ops that will
    consume them.
  }];
  let parameters = (ins EnumParameter<Gnn_GraphFormat>:$format,
                        "::mlir::IntegerType":$offsetType,
                        "::mlir::IntegerType":$indexType);
  let assemblyFormat = "`<` $format `,` $offsetType `,` $indexType `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Gnn_ScheduleAttr : AttrDef<Gnn_Dialect, "Schedule"> {
  let mnemonic = "schedule";
  let summary = "how a gnn op is run on a GPU";
  let description = [{
    Every schedule parameter gnnc knows. A value of 0 means "let the
    compiler choose" (the `gnn-default-schedule` pass fills it in).

    - `strategy`: vertex_parallel (a warp or sub-warp per row),
      neighbor_group (GNNAdvisor), edge_parallel (HalfGNN), sliced (PiPAD),
      batched (many small graphs), tile_routed (FASTEN).
    - `vector_width`: elements per vector load (1, 2, 4, 8).
    - `disc_batch`: neighbours reduced before scaling (discretized
      reduction, HalfGNN; 1 to 1024, 0 = none). gnn.spmm sums each batch of
      at most this many neighbours in the accumulation precision, multiplies
      the batch by the row's factor (mean, left scaling) and adds it to an
      f32 running total.
    - `group_size`: neighbours per neighbour group.
    - `dim_workers`: threads sharing one row (or group) along the features.
    - `threads_per_block`: CUDA block size.
    - `edges_per_warp`: edges per warp for edge-parallel schedules.
    - `slice_size`: non-zeros per slice of sliced CSR.
    - `tile_routing`: route segmented-matmul tiles through a table.
    - `accumulate`: accumulation precision (f32 or f16). gnn.spmm on f16
      features only: with f16, each thread adds its terms in half2; with
      `disc_batch = 0` the whole row is one f16 running sum (it stalls or
      overflows on long rows), otherwise each batch is.
    - `write`: how rows split between workers are finished: direct (no
      splits), atomic (pieces added to the result), staged (pieces staged in
      a workspace, a fix-up kernel adds them), shared (pieces of rows split
      inside a block meet in shared memory; those of rows that cross blocks
      are staged).
    - `blocks_per_sm`: blocks of `threads_per_block` that must fit on one
      SM at once; the CUDA compiler caps each thread's registers to allow
      it (`__launch_bounds__`), spilling if it must. 0: no cap.
  }];
  let parameters = (ins
    DefaultValuedParameter<"::gnnc::gnn::Strategy",
      "::gnnc::gnn::Strategy::vertex_parallel">:$strategy,
    DefaultValuedParameter<"int32_t", "0">:$vector_width,
    DefaultValuedParameter<"int32_t", "0">:$disc_batch,
    DefaultValuedParameter<"int32_t", "0">:$group_size,
    DefaultValuedParameter<"int32_t", "0">:$dim_workers,
    DefaultValuedParameter<"int32_t", "0">:$threads_per_block,
    DefaultValuedParameter<"int32_t", "0">:$edges_per_warp,
    DefaultValuedParameter<"int32_t", "0">:$slice_size,
    DefaultValuedParameter<"bool", "false">:$tile_routing,
    DefaultValuedParameter<"::gnnc::gnn::Accumulate",
      "::gnnc::gnn::Accumulate::f32">:$accumulate,
    DefaultValuedParameter<"::gnnc::gnn::WriteMode",
      "::gnnc::gnn::WriteMode::direct">:$write,
    DefaultValuedParameter<"int32_t", "0">:$blocks_per_sm);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True when every parameter the strategy uses has a concrete value.
    bool isComplete() const;
  }];
}

def Gnn_RowsAttr : AttrDef<Gnn_Dialect, "Rows",
    [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let mnemonic = "rows";
  let summary = "row layout of a 2-D feature tensor: its row stride";
  let description = [{
    A tensor encoding for feature matrices stored with padded rows:
    `tensor<?x41xf16, #gnn.rows<stride = 48>>` holds 41 features per row,
    and row r starts `r * 48` elements after row 0. The 7 padding elements
    of each row are allocated: a kernel may read them (and ignores what it
    reads) but never writes them, so the caller owns their contents. A
    stride that is a multiple of the vector width keeps every row aligned
    for vector loads when the width itself is not (HalfGNN's padding).

    The stride must be at least the width; the tensor must be 2-D with a
    static width. A tensor without the encoding has stride == width.
    Only gnn.spmm reads and writes padded tensors, and its features and
    result share one stride.
  }];
  let parameters = (ins "int64_t":$stride);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Gnn_LaunchAttr : AttrDef<Gnn_Dialect, "Launch"> {
  let mnemonic = "launch";
  let summary = "launch configuration of a lowered kernel";
  let description = [{
    Written by `gnn-lower-to-kernels`: `block` threads per block, one block
    per `per_block` items of the integer kernel parameter `grid` (at least
    `min_blocks` blocks), and `shared` bytes of dynamic shared memory;
    `blocks_per_sm` (from the schedule) caps registers so that many blocks
    fit on an SM.
  }];
  let parameters = (ins "int32_t":$block, StringRefParameter<>:$grid,
                        "int64_t":$per_block, "int32_t":$shared,
                        DefaultValuedParameter<"int64_t", "0">:$min_blocks,
                        DefaultValuedParameter<"int32_t", "0">:$blocks_per_sm);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Gnn_VertexPlanAttr : AttrDef<Gnn_Dialect, "VertexPlan"> {
  let mnemonic = "vertex_plan";
  let summary = "resolved mapping of a vertex-parallel kernel";
  let description = [{
    Derived from the schedule and the op by `gnn-lower-to-kernels`: `lanes`
    threads per row, `rows_per_block` rows per block, `vector_width`
    elements per load, `chunks` vector chunks per row, `chunks_per_lane`
    loop trips per lane, and `edge_unroll` neighbours whose feature loads a
    thread issues before using the first (the threads of a row load `lanes`
    column indices at once and pass them round with shuffles). The CUDA
    printer prints exactly this.
  }];
  let parameters = (ins "int32_t":$lanes, "int32_t":$rows_per_block,
                        "int32_t":$vector_width, "int32_t":$chunks,
                        "int32_t":$chunks_per_lane, "int32_t":$edge_unroll);
  let assemblyFormat = "`<` struct(params) `>`";
}

#endif // GNNC_DIALECT_GNN_BASE_TD
