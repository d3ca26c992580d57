//===- SddmmEdgeParallel.cpp - gnn.sddmm, edge_parallel -------------------===//
//
// Workers walk equal stretches of the merge path (row ends and edges); every
// edge has its own output, so a row split between workers needs no merging.
// A batch of edges issues all its feature loads before the first is used.
// Packed 16-bit features find each edge's row in the row ends kept in shared
// memory, so that the loads of both endpoints go out together; f32 (and
// scalar 16-bit) features keep the current row's features in registers and
// reload them when an edge passes the row's end.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

using namespace llvm;
using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

class SddmmEdgePrinter : public BodyPrinter {
public:
  explicit SddmmEdgePrinter(const OpContext &c)
      : BodyPrinter(c), vw(c.plan.vectorWidth), lanes(c.plan.lanes),
        cpl(c.plan.chunksPerLane), regs(cpl * vw), batch(c.plan.edgeUnroll),
        items(c.plan.itemsPerWorker), ragged(c.plan.chunks % lanes != 0),
        dot(c.desc.form == SddmmForm::Dot), packed(c.plan.packed),
        raw(rawVectorType(vw * 2)) {}

  void print();

private:
  /// packed: the row ends of the stretch in shared memory; otherwise the
  /// current row's features in registers, `ra`, and `load_row`.
  void rowSide();
  /// The loads of one batch of edges: `fb` (and packed, `fa`).
  void batchLoads();
  /// `ha` and `hb`, edge u's features as floats (packed: unpacked here).
  void floatsOf();
  /// The dot form: one value per edge, reduced across the worker's threads.
  void dotBatch();
  /// The add form: one row of sums per edge.
  void addBatch();

  const int64_t vw, lanes, cpl, regs, batch, items;
  const bool ragged, dot, packed;
  const StringRef raw;
};

void SddmmEdgePrinter::rowSide() {
  if (packed) {
    os << "// The ends of rows i0..i1 relative to j0, in shared memory: the\n";
    os << "// row of each edge is found there, so the loads of both\n";
    os << "// endpoints of a batch's edges go out together.\n";
    os << "extern __shared__ unsigned int gnnc_row_ends[];\n";
    os << "unsigned int *ends = gnnc_row_ends + threadIdx.x / " << lanes
       << " * " << items + 1 << ";\n";
    os << "const int rows_here = (int)(min(i1, " << graph.numRows
       << " - 1) - i0 + 1);\n";
    os << "for (int q = lane; q < rows_here; q += " << lanes << ")\n";
    os << "  ends[q] = (unsigned int)min((long long)" << graph.rowPtr
       << "[i0 + q + 1] - begin, 0xffffffffll);\n";
    os << "__syncwarp(group_mask);\n";
    return;
  }
  // f32 (and scalar 16-bit) features: the row's features stay in
  // registers and are reloaded when an edge passes the row's end (read
  // from row_ptr, whose entries a stretch walks in order), which keeps
  // the batch of column loads as deep as SpMM's.
  os << "long long row_end = " << graph.rowPtr << "[i0 + 1];\n";
  os << "float ra[" << regs << "];\n";
  os << "auto load_row = [&]() {\n";
  os.indent();
  os << "const " << e.cType << " *src_a = " << c.input(0) << " + (i0 + r) * "
     << desc.width << ";\n";
  os << "#pragma unroll\n";
  os << "for (int k = 0; k < " << cpl << "; ++k) {\n";
  os.indent();
  os << "const int chunk = lane + k * " << lanes << ";\n";
  if (ragged)
    os << "if (chunk < " << plan.chunks << ")\n  ";
  os << load(vw) << "(src_a + chunk * " << vw << ", ra + k * " << vw << ");\n";
  if (ragged) {
    os << "else\n";
    os << "  for (int i = 0; i < " << vw << "; ++i)\n";
    os << "    ra[k * " << vw << " + i] = 0.0f;\n";
  }
  closeBlock();
  os.unindent();
  os << "};\n";
  os << "load_row();\n";
}

void SddmmEdgePrinter::batchLoads() {
  // Every feature load of the batch (row and column side) is issued before
  // the first is used.
  if (packed)
    os << raw << " fa[" << batch << "][" << cpl << "], fb[" << batch << "]["
       << cpl << "];\n";
  else
    os << "float fb[" << batch << "][" << regs << "];\n";
  os << "#pragma unroll\n";
  os << "for (int u = 0; u < " << batch << "; ++u) {\n";
  os.indent();
  os << "const long long col = __shfl_sync(group_mask, my_col[u], j, " << lanes
     << ");\n";
  os << "const bool live = j * " << batch << " + u < n;\n";
  if (packed) {
    os << "const unsigned int e = (unsigned int)(base - begin) + j * " << batch
       << " + u;\n";
    os << "if (live)\n";
    os << "  while (e >= ends[r])\n";
    os << "    ++r;\n";
    os << "const " << e.cType << " *src_a = " << c.input(0) << " + (i0 + r) * "
       << desc.width << ";\n";
  }
  os << "const " << e.cType << " *src_b = " << c.input(1) << " + col * "
     << desc.width << ";\n";
  os << "#pragma unroll\n";
  os << "for (int k = 0; k < " << cpl << "; ++k) {\n";
  os.indent();
  os << "const int chunk = lane + k * " << lanes << ";\n";
  os << "if (live";
  if (ragged)
    os << " && chunk < " << plan.chunks;
  os << ") {\n";
  os.indent();
  if (packed) {
    os << "fa[u][k] = __ldg(reinterpret_cast<const " << raw
       << " *>(src_a + chunk * " << vw << "));\n";
    os << "fb[u][k] = __ldg(reinterpret_cast<const " << raw
       << " *>(src_b + chunk * " << vw << "));\n";
    os.unindent();
    os << "} else {\n";
    os.indent();
    os << "fa[u][k] = {};\n";
    os << "fb[u][k] = {};\n";
  } else {
    os << load(vw) << "(src_b + chunk * " << vw << ", fb[u] + k * " << vw
       << ");\n";
    os.unindent();
    os << "} else {\n";
    os.indent();
    os << "for (int i = 0; i < " << vw << "; ++i)\n";
    os << "  fb[u][k * " << vw << " + i] = 0.0f;\n";
  }
  closeBlock(); // live
  closeBlock(); // chunks
  closeBlock(); // loads
}

void SddmmEdgePrinter::floatsOf() {
  if (!packed) {
    os << "if (j * " << batch << " + u < n) {\n";
    os.indent();
    os << "const long long edge = base + j * " << batch << " + u;\n";
    os << "if (edge >= row_end) {\n";
    os << "  do {\n";
    os << "    ++r;\n";
    os << "    row_end = " << graph.rowPtr << "[i0 + r + 1];\n";
    os << "  } while (edge >= row_end);\n";
    os << "  load_row();\n";
    os << "}\n";
    closeBlock();
    os << "const float *ha = ra, *hb = fb[u];\n";
    return;
  }
  os << "float ha[" << regs << "], hb[" << regs << "];\n";
  os << "#pragma unroll\n";
  os << "for (int k = 0; k < " << cpl << "; ++k) {\n";
  os << "  " << unpack(vw) << "(fa[u][k], ha + k * " << vw << ");\n";
  os << "  " << unpack(vw) << "(fb[u][k], hb + k * " << vw << ");\n";
  os << "}\n";
}

void SddmmEdgePrinter::dotBatch() {
  StringRef y = c.result();
  os << "float partial[" << batch << "];\n";
  os << "#pragma unroll\n";
  os << "for (int u = 0; u < " << batch << "; ++u) {\n";
  os.indent();
  floatsOf();
  os << "partial[u] = 0.0f;\n";
  os << "#pragma unroll\n";
  os << "for (int i = 0; i < " << regs << "; ++i)\n";
  os << "  partial[u] += ha[i] * hb[i];\n";
  closeBlock();
  // The batch's sums across the worker's threads together
  // (gnnc_lane_sums): each thread is left with kKept of the totals, and
  // the first of the threads that hold a total writes it.
  os << "using sums = gnnc_lane_sums<" << batch << ", " << lanes << ">;\n";
  os << "sums::reduce(partial, group_mask, lane);\n";
  os << "#pragma unroll\n";
  os << "for (int i = 0; i < sums::kKept; ++i) {\n";
  os.indent();
  os << "const int u = sums::index(lane, i);\n";
  leakyRelu("partial[i]");
  os << "if (u < " << batch << " && j * " << batch
     << " + u < n && lane == sums::owner(u))\n";
  if (e.fromFloat.empty())
    os << "  " << y << "[base + j * " << batch << " + u] = partial[i];\n";
  else
    os << "  " << y << "[base + j * " << batch << " + u] = " << e.fromFloat
       << "(partial[i]);\n";
  closeBlock();
}

void SddmmEdgePrinter::addBatch() {
  os << "#pragma unroll\n";
  os << "for (int u = 0; u < " << batch << "; ++u) {\n";
  os.indent();
  os << "if (j * " << batch << " + u >= n)\n";
  os << "  break;\n";
  floatsOf();
  os << e.cType << " *dst = " << c.result() << " + (base + j * " << batch
     << " + u) * " << desc.width << ";\n";
  os << "#pragma unroll\n";
  os << "for (int k = 0; k < " << cpl << "; ++k) {\n";
  os.indent();
  os << "const int chunk = lane + k * " << lanes << ";\n";
  if (ragged) {
    os << "if (chunk >= " << plan.chunks << ")\n";
    os << "  break;\n";
  }
  os << "float v[" << vw << "];\n";
  os << "#pragma unroll\n";
  os << "for (int i = 0; i < " << vw << "; ++i) {\n";
  os.indent();
  os << "v[i] = ha[k * " << vw << " + i] + hb[k * " << vw << " + i];\n";
  leakyRelu("v[i]");
  closeBlock();
  os << store(vw) << "(dst + chunk * " << vw << ", v);\n";
  closeBlock(); // chunks
  closeBlock(); // edges of the batch
}

void SddmmEdgePrinter::print() {
  int64_t window = lanes * batch;
  edgeWorkerPrologue(
      items,
      ("gnn.sddmm (" + Twine(dot ? "dot" : "add") +
       "), edge_parallel: the merge path of row ends and edges in stretches "
       "of " +
       Twine(items) + " per worker of " + Twine(lanes) + " thread" +
       (lanes == 1 ? "" : "s") + ", " + Twine(plan.rowsPerBlock) +
       " workers per block, " + Twine(batch) +
       " edges per batch. Every edge has its own output, so a row split "
       "between workers needs no merging.")
          .str(),
      /*search=*/true);
  os << "const long long begin = d0 - i0; // j0\n";
  os << "const long long end = d1 - i1;   // j1\n";
  os << "// Only edges have outputs: a stretch of row ends alone (or a graph\n";
  os << "// without rows) has nothing to do.\n";
  os << "if (begin >= end)\n";
  os << "  return;\n";
  os << "int r = 0;\n";
  rowSide();
  os << "for (long long base = begin; base < end; base += " << window
     << ") {\n";
  os.indent();
  os << "const int n = (int)min((long long)" << window << ", end - base);\n";
  os << c.indexType() << " my_col[" << batch << "];\n";
  os << "#pragma unroll\n";
  os << "for (int m = 0; m < " << batch << "; ++m) {\n";
  os.indent();
  os << "const int t = lane * " << batch << " + m;\n";
  os << "my_col[m] = t < n ? " << graph.colIdx << "[base + t] : 0;\n";
  closeBlock();
  os << "for (int j = 0; j * " << batch << " < n; ++j) {\n";
  os.indent();
  batchLoads();
  if (dot)
    dotBatch();
  else
    addBatch();
  closeBlock(); // batches
  closeBlock(); // index windows
}

class SddmmEdgeParallelPattern : public SddmmPattern {
  void addHeaders(const OpDesc &op,
                  std::set<std::string> &headers) const override {
    SddmmPattern::addHeaders(op, headers);
    headers.insert(kMergePathHeader);
  }
  void emitKernel(const OpContext &c) const override {
    SddmmEdgePrinter(c).print();
  }
};

} // namespace

const EmissionPattern &gnnc::ExportCUDA::sddmmEdgeParallelPattern() {
  static const SddmmEdgeParallelPattern pattern;
  return pattern;
}
