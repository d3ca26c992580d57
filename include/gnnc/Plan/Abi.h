//===- Abi.h - The roles of a kernel's parameters ---------------*- C++ -*-===//
//
// A kernel parameter is "the graph's row offsets", not the string
// `row_ptr`: the lowering records each parameter's role, the manifest
// carries it, and the host binds arguments by role, so that renaming a
// parameter (`gnn.name`) breaks nothing. The launch grid and a workspace's
// size are lists of roles whose values are summed. Plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_PLAN_ABI_H
#define GNNC_PLAN_ABI_H

#include <optional>
#include <string>

namespace gnnc {

/// How a parameter is passed.
enum class ParamKind { Pointer, Int32, Int64, Float32 };

/// The manifest spelling of a parameter kind: "ptr", "i32", "i64" or "f32".
const char *paramKindName(ParamKind kind);
std::optional<ParamKind> parseParamKind(const std::string &text);

/// What a kernel parameter holds.
enum class ParamRole {
  /// A graph's row offsets (numRows + 1), column indices (one per edge) and
  /// number of rows.
  RowOffsets,
  ColumnIndices,
  NumRows,
  /// A tensor operand of the op, by position among its inputs (`operand`):
  /// gnn.spmm's features; gnn.sddmm's row and column features; the edge
  /// softmax's logits; its gradient's output and output gradient.
  Input,
  /// gnn.spmm's values, one per edge.
  EdgeValues,
  /// The op's result.
  Result,
  /// The graph's column factors (gnn.spmm with right or both scaling).
  ColumnFactors,
  /// The graph's number of edges (edge_parallel).
  NumEdges,
  /// Scratch memory sized by the kernel's workspace rule.
  Workspace,
  /// Neighbour groups (neighbor_group): the first group of each row, the
  /// row of each group, and their number.
  GroupOffsets,
  GroupRows,
  NumGroups,
  /// A batch of graphs (batched_csr): the first node of each graph and
  /// the node count (numGraphs + 1 entries), and the number of graphs.
  GraphOffsets,
  NumGraphs,
  /// The blocks of a batched gnn.spmm (graph::batchBlocks):
  /// kBatchBlockWords words per block, its first row (kBatchBlockFromGlobal
  /// set when its rows are a piece of a graph too large for a tile) and its
  /// first edge, then the node count and the edge count (numBlocks + 1
  /// entries); and their number.
  BatchBlocks,
  NumBatchBlocks,
  /// A kernel argument the op does not read.
  Unused,
  /// The work items of a kernel that is no gnn op (the runtime's own
  /// helpers, e.g. the row gathers of a renumbering): what its grid counts.
  NumItems,
  /// gnn.segment_matmul: the weights (num_types x K x M), the first input
  /// row of each type (num_types + 1 sorted offsets, i64) and the number
  /// of types.
  SegmentWeights,
  SegmentOffsets,
  NumSegments,
  /// gnn.segment_matmul's routing table (tile_routed, built on the host:
  /// kRouteTileWords i64 per tile, (type, first row, end row), tiles of one
  /// type adjacent) and its number of tiles; the persistent blocks the host
  /// launches to walk it (at most one per tile).
  RouteTiles,
  NumRouteTiles,
  RouteBlocks,
  /// A group of S snapshots (snapshot_csr): the row offsets of each
  /// snapshot's exclusive edges (S x (numRows + 1), i64, snapshot s's at
  /// s x (numRows + 1), all indexing one array) and their column indices;
  /// the overlap (the edges every snapshot shares) is the graph's own CSR.
  ExclusiveOffsets,
  ExclusiveIndices,
  /// The work items of a sliced kernel (PiPAD's sliced CSR, cut by the
  /// host: ops::snapshotSlices): slices of at most slice_size of a row's
  /// shared edges (every row at least one, possibly empty), then slices of
  /// the exclusive edges of one snapshot that a row's first slice leaves
  /// (it takes slice_size of each snapshot's). SliceOffsets: each slice's
  /// first edge (i64, into the overlap's or the exclusive column indices);
  /// SliceRows: each slice's word (i64: the row in the low 32 bits,
  /// snapshot + 1 of an exclusive slice from bit kSliceSnapshotShift, the
  /// slice's edge count from bit kSliceLengthShift, kSliceFirst on a row's
  /// first slice, kSliceSplit on every slice of a row that has several);
  /// NumSlices their number;
  /// NumSplitRows the items at the front of the list, the first slices of
  /// the rows with several items, which the zeroing kernel visits (none:
  /// no launch).
  SliceOffsets,
  SliceRows,
  NumSlices,
  NumSplitRows,
  /// gnn.spmm's linear epilogue: the weights (K x M, row-major) and the
  /// bias (M).
  LinearWeights,
  LinearBias,
  /// gnn.spmm's attention scores (OpDesc::attention): one per row (GAT's
  /// destination term, numRows) and one per column (its source term,
  /// numCols), of the op's element type.
  AttentionRows,
  AttentionColumns,
  /// Neighbour groups (neighbor_group): the first edge of each group and,
  /// last, the number of edges (numGroups + 1 entries, i64). Groups cut the
  /// rows in order, so group g's edges are [begin[g], begin[g + 1]): a
  /// worker finds its range without first loading its row.
  GroupBegins
};

/// The manifest spelling: "row_offsets", "column_indices", "num_rows",
/// "input", "edge_values", "result", "column_factors", "num_edges",
/// "workspace", "group_offsets", "group_rows", "num_groups",
/// "graph_offsets", "num_graphs", "batch_blocks", "num_batch_blocks",
/// "unused", "num_items", "segment_weights", "segment_offsets",
/// "num_segments", "route_tiles", "num_route_tiles", "route_blocks",
/// "exclusive_offsets", "exclusive_indices", "slice_offsets", "slice_rows",
/// "num_slices", "num_split_rows", "linear_weights", "linear_bias",
/// "attention_rows", "attention_columns".
const char *paramRoleName(ParamRole role);
std::optional<ParamRole> parseParamRole(const std::string &text);

/// How a parameter of `role` is passed: counts as i64, the rest as
/// pointers.
ParamKind paramKindOf(ParamRole role);

/// The name the lowering gives a parameter of `role` that the op needs
/// beyond its operands (after the graph's prefix): "col_norm",
/// "num_edges", "workspace", "group_ptr", "group_rows", "num_groups",
/// "graph_ptr", "num_graphs", "batch_blocks", "num_batch_blocks",
/// "num_types", "route_tiles", "num_route_tiles", "route_blocks",
/// "excl_ptr", "excl_idx", "slice_ptr", "slice_rows", "num_slices",
/// "num_split_rows".
const char *extraParamStem(ParamRole role);

/// The bit of a batch block's first row (ParamRole::BatchBlocks) that
/// says the block's rows are a piece of a graph larger than a tile: they
/// are reduced from global memory.
constexpr long long kBatchBlockFromGlobal = 1ll << 62;

/// The i64 words of each entry of ParamRole::BatchBlocks: the first row
/// (with kBatchBlockFromGlobal) and the first edge. With both, a block
/// knows its rows and its edges from one load and stages them together.
constexpr int kBatchBlockWords = 2;

/// The fields of a slice's word (ParamRole::SliceRows): the row in the low
/// 32 bits, the snapshot of an exclusive slice plus one (0 for a slice of
/// the shared edges) in the 16 bits from kSliceSnapshotShift, the slice's
/// edge count in the 13 bits from kSliceLengthShift (limits::kMaxSliceSize
/// fits), and two flags.
constexpr int kSliceSnapshotShift = 32;
constexpr int kSliceLengthShift = 48;
constexpr long long kSliceFirst = 1ll << 62;
constexpr long long kSliceSplit = 1ll << 61;

/// The i64 words of one tile of gnn.segment_matmul's routing table
/// (ParamRole::RouteTiles): its type, first row and end row.
constexpr int kRouteTileWords = 3;

} // namespace gnnc

#endif // GNNC_PLAN_ABI_H
