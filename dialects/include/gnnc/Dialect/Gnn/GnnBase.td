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

def Gnn_Activation : I32EnumAttr<"Activation", "a linear epilogue's activation", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"relu", 1>]> {
  let cppNamespace = "::gnnc::gnn";
  let genSpecializedAttr = 0;
}

def Gnn_ReduceAttr : EnumAttr<Gnn_Dialect, Gnn_Reduce, "reduce">;
def Gnn_ActivationAttr : EnumAttr<Gnn_Dialect, Gnn_Activation, "activation">;
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
    columns of its non-zeros. `batched_csr` is a batch of small graphs (a
    block-diagonal CSR with each graph's first node); `snapshot_csr` is a
    group of snapshots over one node set: the CSR of the edges every
    snapshot shares (the overlap) plus each snapshot's exclusive edges,
    aggregated at once by gnn.spmm with 3-D features. `sliced_csr` and
    `segmented_csr` are declared for the ops that will consume them.
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
    Holds a `gnnc::Schedule` (gnnc/Plan/Schedule.h), which lists every
    schedule parameter gnnc knows, its spelling and its default: the
    attribute's text is the schedule's one text form,
    `#gnn.schedule<strategy = edge_parallel, vector_width = 4>`, with the
    fields that hold their defaults left out. A value of 0 means "let the
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
    - `edges_per_warp`: merge-path items per worker (edge_parallel).
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

    The verifier checks the fields against each other (checkScheduleFields);
    each op checks the schedule against itself through its kernel plans.
  }];
  let parameters = (ins "::gnnc::Schedule":$value);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Shorthands for the fields the passes read most.
    ::gnnc::Strategy getStrategy() const { return getValue().strategy; }
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

def Gnn_ParamRoleList : ArrayRefParameter<"::gnnc::ParamRole",
                                          "roles of kernel parameters"> {
  let printer = "printRoleList($_printer, $_self)";
  let parser = "parseRoleList($_parser)";
}

def Gnn_ParamAttr : AttrDef<Gnn_Dialect, "Param"> {
  let mnemonic = "param";
  let summary = "one parameter of a lowered kernel: its name and role";
  let description = [{
    Written by `gnn-lower-to-kernels` into the kernel's `gnn.abi` list, in
    launch order: `#gnn.param<"row_ptr", row_offsets>`, and for the op's
    tensor inputs their position, `#gnn.param<"x1", input, operand = 1>`.
    The roles are gnnc::ParamRole (gnnc/Plan/Abi.h); the host binds
    arguments by role, so a parameter may have any name.
  }];
  let parameters = (ins StringRefParameter<>:$name, "::gnnc::ParamRole":$role,
                        DefaultValuedParameter<"int32_t", "0">:$operand);
  let assemblyFormat =
      "`<` $name `,` $role (`,` `operand` `=` $operand^)? `>`";
}

def Gnn_LaunchAttr : AttrDef<Gnn_Dialect, "Launch"> {
  let mnemonic = "launch";
  let summary = "launch configuration of a lowered kernel";
  let description = [{
    Written by `gnn-lower-to-kernels` from the kernel plan: `block` threads
    per block, one block per `per_block` items of the sum of the parameters
    whose roles `grid` lists (at least `min_blocks` blocks), `shared` bytes
    of dynamic shared memory; `blocks_per_sm` (from the schedule) caps
    registers so that many blocks fit on an SM.
  }];
  let parameters = (ins "int32_t":$block, Gnn_ParamRoleList:$grid,
                        "int64_t":$per_block,
                        DefaultValuedParameter<"int64_t", "0">:$shared,
                        DefaultValuedParameter<"int64_t", "0">:$min_blocks,
                        DefaultValuedParameter<"int32_t", "0">:$blocks_per_sm);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Gnn_CompanionAttr : AttrDef<Gnn_Dialect, "Companion"> {
  let mnemonic = "companion";
  let summary = "a kernel run before or after a lowered kernel";
  let description = [{
    A kernel with the parameters of the main one, named by the main one's
    entry name and `suffix`, launched as `launch` says: a prelude
    (`gnn.preludes`, e.g. `_init`, which sets the rows that atomic pieces
    are added to) or a follow-up (`gnn.follow_ups`, e.g. `_fixup`, which
    adds the pieces of split rows).
  }];
  let parameters = (ins StringRefParameter<>:$suffix,
                        "::gnnc::gnn::LaunchAttr":$launch);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Gnn_WorkspaceAttr : AttrDef<Gnn_Dialect, "Workspace"> {
  let mnemonic = "workspace";
  let summary = "the scratch memory of a lowered kernel";
  let description = [{
    ceil(sum of the parameters whose roles `count` lists / `items_per_unit`)
    units, at least `min_units`, of `bytes_per_unit` bytes each, passed in
    the parameter with the role `workspace`.
  }];
  let parameters = (ins Gnn_ParamRoleList:$count, "int64_t":$items_per_unit,
                        "int64_t":$bytes_per_unit, "int64_t":$min_units);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Gnn_PlanAttr : AttrDef<Gnn_Dialect, "Plan"> {
  let mnemonic = "plan";
  let summary = "the thread mapping of a lowered op";
  let description = [{
    Written by `gnn-lower-to-kernels` from the op's kernel plan
    (gnnc::ThreadMapping, gnnc/Plan/Plan.h): `lanes` threads per row (or
    worker, or group), `rows_per_block` of them per block, `vector_width`
    elements per load, `chunks` vector chunks per row, `chunks_per_lane`
    loop trips per lane, `edge_unroll` neighbours whose feature loads a
    thread issues before using the first, whether 16-bit vectors stay
    `packed`, the edge_parallel `items_per_worker` and `row_ends_bytes` of
    shared memory, the neighbor_group `group_size` and whether each group
    is one edge (`edge_groups`: no table of ranges), the most edges of a
    piece of a split row added atomically (`atomic_piece_edges`), and the
    batched strategy's vector chunks per column block (`column_chunks`).
    The CUDA printer prints exactly this.
  }];
  let parameters = (ins "int32_t":$lanes, "int32_t":$rows_per_block,
                        "int32_t":$vector_width, "int64_t":$chunks,
                        "int64_t":$chunks_per_lane, "int32_t":$edge_unroll,
                        DefaultValuedParameter<"bool", "false">:$packed,
                        DefaultValuedParameter<"int64_t", "0">:$items_per_worker,
                        DefaultValuedParameter<"int64_t", "0">:$group_size,
                        DefaultValuedParameter<"bool", "false">:$edge_groups,
                        DefaultValuedParameter<"int64_t", "0">:$row_ends_bytes,
                        DefaultValuedParameter<"int64_t", "0">:$atomic_piece_edges,
                        DefaultValuedParameter<"int64_t", "0">:$column_chunks);
  let assemblyFormat = "`<` struct(params) `>`";
}

#endif // GNNC_DIALECT_GNN_BASE_TD
