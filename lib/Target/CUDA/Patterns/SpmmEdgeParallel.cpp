//===- SpmmEdgeParallel.cpp - gnn.spmm, edge_parallel ---------------------===//
//
// Workers walk equal stretches of the merge path (row ends and edges). Rows
// that cross a stretch boundary reach the result in pieces: with atomics
// (write = atomic; the prelude sets every row to its self term or 0), or
// through the workspace, which the follow-up (fix-up) kernel adds in worker
// order (write = staged; write = shared first merges the pieces of rows
// that lie within a block in shared memory).
//
//===----------------------------------------------------------------------===//
#include "../SpmmSupport.h"
#include "Patterns.h"

using namespace llvm;
using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

class SpmmEdgePrinter : public SpmmPrinter {
public:
  explicit SpmmEdgePrinter(const OpContext &c)
      : SpmmPrinter(c), items(c.plan.itemsPerWorker), numRows(c.graph.numRows) {
  }

  void printMain();
  void printFixup();

private:
  /// The opening comment of the main kernel.
  std::string mainComment() const;
  /// write = shared: what the main kernel declares before its active
  /// workers (the block's slots, the row to merge, helpers).
  void blockMergeHeader();
  /// The ends of the worker's rows in shared memory, `ends`.
  void rowEnds();
  /// `batch_scale_of(rr)`, the row factor of row rr for the batches of its
  /// pieces (disc_batch with a row factor).
  void batchScaleOf();
  /// `flush(r)`, which ends row i0 + r.
  void flushLambda();
  /// Row i1, which goes on past the stretch: this worker's piece of it.
  void lastPiece();
  /// The rows split between the block's workers (write = shared).
  void blockMerge();
  /// `split_rows`, the row index list after the workspace slots.
  void splitRows();

  const int64_t items;
  const StringRef numRows;
};

std::string SpmmEdgePrinter::mainComment() const {
  int64_t lanes = plan.lanes;
  std::string text =
      ("gnn.spmm, edge_parallel: the merge path of row ends and edges in "
       "stretches of " +
       Twine(items) + " per worker of " + Twine(lanes) + " thread" +
       (lanes == 1 ? "" : "s") + ", " + Twine(plan.rowsPerBlock) +
       " workers per block, " + Twine(p.vw) + " elements per load. ")
          .str();
  if (p.atomic)
    text += "Rows that cross a stretch boundary are added to the result in "
            "pieces with atomics (the first kernel set those rows to their "
            "self term or 0).";
  else if (p.sharedMerge)
    text += "Rows that cross a stretch boundary leave pieces in shared memory "
            "when the row lies within the block (its first worker adds them "
            "after the block's barrier), in the workspace otherwise (the "
            "fix-up kernel adds those).";
  else
    text += "Rows that cross a stretch boundary go to the workspace in "
            "pieces; the fix-up kernel adds them.";
  return text;
}

void SpmmEdgePrinter::blockMergeHeader() {
  int64_t perBlock = plan.rowsPerBlock;
  os << "// write = shared: this block's workers, the slots of their pieces "
        "in\n// shared memory after the row ends, and the row this worker "
        "began and\n// leaves to the block (-1: none).\n";
  os << "extern __shared__ unsigned int gnnc_row_ends[];\n";
  os << "const long long block_first = (long long)blockIdx.x * " << perBlock
     << ";\n";
  os << "const long long block_last = min(block_first + " << perBlock
     << ", workers) - 1;\n";
  os << "float *block_slots =\n    reinterpret_cast<float *>(gnnc_row_ends + "
     << perBlock * (items + 1) << ");\n";
  os << "long long merge_row = -1, merge_last = 0;\n";
  os << "// The worker that began row rr (that holds the end of row rr - 1),\n"
        "// and the one that holds its end.\n";
  os << "auto began_in = [&](long long rr) {\n";
  os << "  return rr == 0 ? 0ll : (rr - 1 + (long long)" << graph.rowPtr
     << "[rr]) / " << items << ";\n";
  os << "};\n";
  os << "auto ends_in = [&](long long rr) {\n";
  os << "  return (rr + (long long)" << graph.rowPtr << "[rr + 1]) / " << items
     << ";\n";
  os << "};\n";
}

void SpmmEdgePrinter::rowEnds() {
  int64_t lanes = plan.lanes;
  os << "// The ends of rows i0..i1 relative to j0, in shared memory.\n";
  if (!p.sharedMerge)
    os << "extern __shared__ unsigned int gnnc_row_ends[];\n";
  os << "unsigned int *ends = gnnc_row_ends + threadIdx.x / " << lanes << " * "
     << items + 1 << ";\n";
  os << "const int rows_here = (int)(min(i1, " << numRows
     << " - 1) - i0 + 1);\n";
  os << "for (int r = lane; r < rows_here; r += " << lanes << ")\n";
  os << "  ends[r] = (unsigned int)min((long long)" << graph.rowPtr
     << "[i0 + r + 1] - begin, 0xffffffffll);\n";
  os << "__syncwarp(group_mask);\n";
}

void SpmmEdgePrinter::batchScaleOf() {
  os << "// The row factor of row rr, for the batches of its pieces.\n";
  os << "auto batch_scale_of = [&](long long rr) {\n";
  os.indent();
  os << "const long long batch_deg = " << graph.rowPtr << "[rr + 1] - "
     << graph.rowPtr << "[rr];\n";
  os << "return " << RowFactor{desc, "batch_deg"} << ";\n";
  os.unindent();
  os << "};\n";
}

void SpmmEdgePrinter::flushLambda() {
  // A row that ends here is written out, except the first row of a worker
  // after the first: it began in an earlier worker (even if with no edges
  // there), so it is a piece.
  os << "// Ends row i0 + r: writes it, or its last piece ("
     << (p.atomic ? "atomically" : "slot 0") << ") when it\n";
  os << "// began in an earlier worker; then restarts the accumulators.\n";
  os << "auto flush = [&](int r) {\n";
  os.indent();
  if (p.usesPart())
    fold(p.scalesBatches() ? BatchScale::of("i0 + r") : BatchScale::none());
  os << "if (r == 0 && worker > 0) {\n";
  os.indent();
  if (p.atomic) {
    atomicPiece("i0");
  } else if (p.sharedMerge) {
    os << "float *slot = began_in(i0) >= block_first\n"
       << "                  ? block_slots + (worker - block_first) * "
       << 2 * p.stride << "\n"
       << "                  : " << p.workspace << " + worker * "
       << 2 * p.stride << ";\n";
    slotLoop(SlotCopy::Store);
  } else {
    os << "float *slot = " << p.workspace << " + worker * " << 2 * p.stride
       << ";\n";
    slotLoop(SlotCopy::Store);
  }
  os.unindent();
  os << "} else {\n";
  os.indent();
  os << "const long long row = i0 + r;\n";
  finish(RowDegree::SharedRowEnds);
  closeBlock();
  resetAccumulators();
  os.unindent();
  os << "};\n";
}

void SpmmEdgePrinter::lastPiece() {
  BatchScale scale =
      p.scalesBatches() ? BatchScale::of("i1") : BatchScale::none();
  if (p.atomic) {
    os << "// Row i1 goes on past d1: add this worker's piece of it.\n";
    os << "if (i1 < " << numRows << ") {\n";
    os.indent();
    if (p.usesPart())
      fold(scale);
    atomicPiece("i1");
    closeBlock();
    return;
  }
  os << "// Row i1 goes on past d1: store this worker's piece of it (slot 0\n";
  os << "// if it began earlier, slot 1 if it began here).\n";
  os << "if (i1 < " << numRows << ") {\n";
  os.indent();
  if (p.usesPart())
    fold(scale);
  if (p.sharedMerge) {
    os << "const bool middle = i1 == i0 && worker > 0;\n";
    os << "const bool in_block =\n"
       << "    (!middle || began_in(i1) >= block_first) && ends_in(i1) <= "
          "block_last;\n";
    os << "float *slot = (in_block ? block_slots + (worker - block_first) * "
       << 2 * p.stride << "\n"
       << "                        : " << p.workspace << " + worker * "
       << 2 * p.stride << ") +\n"
       << "              (middle ? 0 : " << p.stride << ");\n";
    slotLoop(SlotCopy::Store);
    os << "if (in_block && !middle) {\n";
    os << "  merge_row = i1;\n";
    os << "  merge_last = ends_in(i1);\n";
    os << "}\n";
  } else {
    os << "float *slot = " << p.workspace << " + worker * " << 2 * p.stride
       << " + (i1 == i0 && worker > 0 ? 0 : " << p.stride << ");\n";
    slotLoop(SlotCopy::Store);
  }
  closeBlock();
  os << "// For the fix-up: the row this worker began and did not end"
     << (p.sharedMerge ? " (unless\n// the block finishes it)" : "")
     << ", or -1.\n";
  splitRows();
  os << "if (lane == 0)\n";
  os << "  split_rows[worker] = i1 < " << numRows
     << " && !(i1 == i0 && worker > 0)"
     << (p.sharedMerge ? " && merge_row < 0" : "") << " ? i1 : -1;\n";
}

void SpmmEdgePrinter::blockMerge() {
  os << "// The rows split between this block's workers: the worker that "
        "began\n// one adds its pieces in worker order and writes it.\n";
  os << "__syncthreads();\n";
  os << "if (merge_row >= 0) {\n";
  os.indent();
  os << "const long long row = merge_row;\n";
  os << "float acc[" << p.accs << "];\n";
  resetAccumulators();
  os << "for (long long w = worker; w <= merge_last; ++w) {\n";
  os.indent();
  os << "const float *slot = block_slots + (w - block_first) * " << 2 * p.stride
     << " + (w == worker ? " << p.stride << " : 0);\n";
  slotLoop(SlotCopy::Combine);
  closeBlock();
  finish(RowDegree::RowOffsets);
  closeBlock();
}

void SpmmEdgePrinter::splitRows() {
  // The workspace holds two f32 rows (of the row stride) per worker, then
  // one row index each.
  os << "long long *split_rows = reinterpret_cast<long long *>(" << p.workspace
     << " + workers * " << 2 * p.stride << ");\n";
}

void SpmmEdgePrinter::printMain() {
  if (p.sharedMerge)
    edgeWorkerPrologue(items, mainComment(), /*search=*/true,
                       [&] { blockMergeHeader(); });
  else
    edgeWorkerPrologue(items, mainComment(), /*search=*/true);
  os << "const long long begin = d0 - i0; // j0\n";
  os << "const long long end = d1 - i1;   // j1\n";
  rowEnds();
  os << "float acc[" << p.accs << "];\n";
  resetAccumulators();
  declarePart();
  if (p.scalesBatches())
    batchScaleOf();
  flushLambda();
  // Rows are written as soon as their last edge is added. The current
  // row's end stays in a register; row i1, which goes on past this
  // worker, never ends here.
  os << "int r = 0;\n";
  os << "auto end_of = [&](int rr) {\n";
  os << "  return i0 + rr < i1 ? ends[rr] : 0xffffffffu;\n";
  os << "};\n";
  os << "unsigned int row_end = end_of(0);\n";
  os << "// Rows that end before this worker's first edge: the last (empty)\n";
  os << "// piece of a row that began earlier, and rows without edges.\n";
  os << "while (row_end == 0) {\n";
  os << "  flush(r);\n";
  os << "  row_end = end_of(++r);\n";
  os << "}\n";
  // After each neighbour: flush the rows that end with it.
  auto flushEnded = [&] {
    os << "while (e + 1 >= row_end) {\n";
    os << "  flush(r);\n";
    os << "  row_end = end_of(++r);\n";
    os << "}\n";
  };
  GatherOptions options;
  options.afterAdd = flushEnded;
  options.batchScale =
      p.scalesBatches() ? BatchScale::of("i0 + r") : BatchScale::none();
  options.skipInsideRow = true;
  gather(options);
  lastPiece();
  if (!p.sharedMerge)
    return;
  closeBlock(); // the active workers
  blockMerge();
}

void SpmmEdgePrinter::printFixup() {
  edgeWorkerPrologue(
      items,
      "gnn.spmm, edge_parallel fix-up: the worker in which a row began and "
      "which did not end it adds the row's pieces in worker order (the "
      "result does not depend on timing) and writes the row",
      /*search=*/false);
  splitRows();
  os << "const long long row = split_rows[worker];\n";
  os << "if (row < 0)\n";
  os << "  return;\n";
  os << "const long long row_end = " << graph.rowPtr << "[row + 1];\n";
  os << "// The worker whose stretch holds the row's end.\n";
  os << "const long long last = (row + row_end) / " << items << ";\n";
  os << "float acc[" << p.accs << "];\n";
  resetAccumulators();
  os << "#pragma unroll 8\n";
  os << "for (long long w = worker; w <= last; ++w) {\n";
  os.indent();
  os << "const float *slot = " << p.workspace << " + w * " << 2 * p.stride
     << " + (w == worker ? " << p.stride << " : 0);\n";
  slotLoop(SlotCopy::Combine);
  closeBlock();
  finish(RowDegree::LoadedRowEnd);
}

/// The main kernel; prelude 0 sets the rows that atomic pieces are added to
/// (write = atomic), follow-up 0 adds the pieces in the workspace (write =
/// staged, shared).
class SpmmEdgeParallelPattern : public EmissionPattern {
  void addHeaders(const OpDesc &op,
                  std::set<std::string> &headers) const override {
    EmissionPattern::addHeaders(op, headers);
    headers.insert(kMergePathHeader);
  }
  void emitKernel(const OpContext &c) const override {
    SpmmEdgePrinter(c).printMain();
  }
  unsigned numPreludes() const override { return 1; }
  void emitPrelude(const OpContext &c, unsigned) const override {
    SpmmPrinter(c).printInit();
  }
  unsigned numFollowUps() const override { return 1; }
  void emitFollowUp(const OpContext &c, unsigned) const override {
    SpmmEdgePrinter(c).printFixup();
  }
};

} // namespace

const EmissionPattern &gnnc::ExportCUDA::spmmEdgeParallelPattern() {
  static const SpmmEdgeParallelPattern pattern;
  return pattern;
}
