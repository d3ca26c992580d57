//===- SpmmSupport.h - What the gnn.spmm patterns share ---------*- C++ -*-===//
//
// The printing pieces of the gnn.spmm patterns (vertex_parallel,
// edge_parallel and neighbor_group): the accumulators and the batch partial
// sums, the gather of a range of neighbours, the end of a row (empty-row
// rule, row factor, self term, store), the atomic addition of a piece of a
// row, the workspace and shared-memory slots, and the body of the first
// kernel of write = atomic.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_LIB_TARGET_CUDA_SPMMSUPPORT_H
#define GNNC_LIB_TARGET_CUDA_SPMMSUPPORT_H

#include "EmitterSupport.h"

namespace gnnc::ExportCUDA {

/// Where the end of a row finds the row's degree.
enum class RowDegree {
  /// `end - begin`: the row's whole range of edges.
  Range,
  /// The row ends of the worker's stretch in shared memory (`ends[r]`).
  SharedRowEnds,
  /// The graph's row offsets, read for the row.
  RowOffsets,
  /// The loaded `row_end` and the row's first offset.
  LoadedRowEnd,
  /// No neighbours: the first kernel of write = atomic.
  Empty
};

/// The factor a batch of neighbours is multiplied by when it is folded into
/// `acc` (disc_batch with a row factor): none, the row's `batch_scale`, or
/// `batch_scale_of(<row>)` for the row `row` names.
struct BatchScale {
  enum class Kind { None, OfThisRow, OfRow };
  Kind kind = Kind::None;
  llvm::StringRef row;

  static BatchScale none() { return {}; }
  static BatchScale ofThisRow() { return {Kind::OfThisRow, ""}; }
  static BatchScale of(llvm::StringRef row) { return {Kind::OfRow, row}; }
  explicit operator bool() const { return kind != Kind::None; }
};
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const BatchScale &scale);

/// The row factor of a gnn.spmm for a row of `deg` neighbours (a variable):
/// 1/deg for mean times 1/sqrt(deg) for left scaling, 0 for an empty row.
struct RowFactor {
  const OpDesc &desc;
  llvm::StringRef deg;
};
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const RowFactor &factor);

/// What the printers of one gnn.spmm read, beyond the op's context.
struct SpmmParts {
  explicit SpmmParts(const OpContext &c);

  /// The kernel's parameters (empty when it has none).
  llvm::StringRef x, y, colNorm, values, workspace;
  /// attention: the scores of the rows and of the columns.
  llvm::StringRef attDst, attSrc;
  /// neighbor_group: the host's groups.
  llvm::StringRef groupPtr, groupRows, groupBegins, numGroups;
  int64_t width = 0, vw = 0, accs = 0;
  /// Elements from one row of x (and y) to the next: the width, or the
  /// stride of padded rows. Workspace slot rows have this size too.
  int64_t stride = 0;
  bool max = false;
  /// accumulate = f16: terms are added in half2 pairs into `part`.
  bool half = false;
  /// disc_batch: `part` is folded into `acc` after this many neighbours.
  int64_t disc = 0;
  /// Whether the row has a factor of its degree (mean, left scaling).
  bool rowFactor = false;
  /// Loaded feature vectors stay raw 16-bit words until they are added.
  bool packed = false;
  /// write = atomic: pieces of split rows are added to `y` atomically.
  bool atomic = false;
  /// write = shared: pieces of rows split inside a block meet in shared
  /// memory.
  bool sharedMerge = false;

  /// Each term has a weight: an edge value, or (attention) the edge's
  /// softmax weight, computed where a value would be loaded.
  bool weighted() const { return !values.empty() || !attSrc.empty(); }
  /// Elements of the last chunk of a row that are stored (the rest is
  /// padding); 0 when the width is a multiple of the vector width.
  int64_t tail() const { return width % vw; }
  /// Terms go to `part` rather than straight to `acc`.
  bool usesPart() const { return half || disc > 0; }
  /// The row factor multiplies each batch, not the finished row.
  bool scalesBatches() const { return disc > 0 && rowFactor; }
  /// The batch factor of a row with its own `batch_scale`.
  BatchScale thisRowBatchScale() const {
    return scalesBatches() ? BatchScale::ofThisRow() : BatchScale::none();
  }
  /// Number of half2 pairs in `part` (f16 accumulation).
  int64_t pairs() const { return (accs + 1) / 2; }
};

/// The printing pieces of the gnn.spmm patterns.
class SpmmPrinter : public BodyPrinter {
public:
  explicit SpmmPrinter(const OpContext &c) : BodyPrinter(c), p(c) {}

  /// attention: `att_row` (the row's score), `att_max` and `att_scale` (the
  /// row's largest logit and the inverse of its sum of exp(logit -
  /// att_max), 0 for an empty row), from one pass of the row's threads over
  /// its edges.
  void attentionStatistics();
  /// The same three values from the workspace the first kernels of
  /// neighbor_group left (`row` defined).
  void loadAttentionStatistics();

  /// The body of the kernel that runs before an edge_parallel gnn.spmm
  /// whose split rows are added atomically (write = atomic): every row of
  /// the result is set to its self term, or 0.
  void printInit();
  /// The same for neighbor_group, where most rows are stored by the main
  /// kernel: a thread per row asks `storedByMain` (a condition on
  /// `my_row`), then the warp's workers set the rows it does not store, one
  /// worker per row in turn. A worker's `lanes` threads own a row's
  /// features, as in the main kernel. With attention, every row's softmax
  /// statistics start at -infinity and 0.
  void printCheckedInit(llvm::StringRef storedByMain);
  /// The bodies of the two kernels that make the softmax statistics of
  /// neighbor_group gnn.spmm with attention: a worker per group takes the
  /// largest logit of its edges (`sums` false) or their sum of exp(logit -
  /// the row's largest) (`sums` true) and adds it to its row's slot of the
  /// workspace atomically.
  void printAttentionGroupPass(bool sums);

protected:
  /// What `gather` prints besides the additions.
  struct GatherOptions {
    /// Printed after each addition, with `e` the neighbour's position from
    /// `begin`.
    llvm::function_ref<void()> afterAdd = nullptr;
    BatchScale batchScale;
    /// A batch that lies wholly inside the current row and does not reach
    /// its end (`row_end`, from `begin`) skips `afterAdd` and the
    /// per-neighbour tests.
    bool skipInsideRow = false;
    /// The neighbours' feature rows come from this shared-memory tile
    /// (batched), which holds the rows of the nodes from `seg_begin` and
    /// the chunks of the column block from `chunk0`; empty: from x.
    llvm::StringRef tile;
    /// The neighbours' column indices come from this shared-memory array,
    /// which holds those of the segment's edges from `seg_e0`; empty: from
    /// the graph's column indices.
    llvm::StringRef tileColumns;
  };

  /// `acc[i] = <identity>` for every accumulator.
  void resetAccumulators();
  /// Declares the batch partial sums `part` (and the batch counter), when
  /// the op uses them.
  void declarePart();
  /// The fold of `part` into `acc`, times `scale`, and the restart of
  /// `part`.
  void fold(BatchScale scale);
  /// Declares `acc` and reduces the neighbours in [begin, end) into it.
  void accumulate();
  /// Reduces the neighbours in [begin, end) into `acc`, declared already,
  /// from x or (non-empty `tile`) from a staged tile, with the column
  /// indices of the graph or of a staged array (GatherOptions).
  void reduceNeighbours(llvm::StringRef tile = "",
                        llvm::StringRef tileColumns = "");
  /// The loop over the neighbours in [begin, end) that adds each into
  /// `acc`.
  void gather(const GatherOptions &options);
  /// The end of row `row`: the empty-row rule of max, mean and left scaling
  /// with the degree `degree` says, the self term, and the store of `acc`
  /// to the result's row, or to the row `dst` points at (an expression of
  /// the element type's pointer type, e.g. a row of a shared tile).
  void finish(RowDegree degree, llvm::StringRef dst = "");
  /// The addition of `acc`, a piece of row `row` (a variable), to the
  /// result with atomics, after the row factor (unless the batches carry
  /// it).
  void atomicPiece(llvm::StringRef row);
  /// The store of `acc` to the row `slot` points at (f32, of the row
  /// stride), or its combination into `acc`.
  enum class SlotCopy { Store, Combine };
  void slotLoop(SlotCopy copy);

  const SpmmParts p;

  /// The score at `index` of the array `scores`, as a float.
  std::string score(llvm::StringRef scores, llvm::StringRef index) const;

private:
  /// The addition of neighbour `u`'s term `f[u]` to `part`, and the fold of
  /// a full batch.
  void addToPart(BatchScale scale);
  void printDegree(RowDegree degree);
  /// The chunk loop that writes `acc` to the row at `dst` (a variable) with
  /// the helper `verb` (store, atomic_add), short of the row's padding.
  void writeAcc(llvm::StringRef dst, llvm::StringRef verb);
};

} // namespace gnnc::ExportCUDA

#endif // GNNC_LIB_TARGET_CUDA_SPMMSUPPORT_H
