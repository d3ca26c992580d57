//===- SddmmVertexParallel.cpp - gnn.sddmm, vertex_parallel ---------------===//
//
// `lanes` threads per row keep the row's features in registers and take its
// edges `lanes` indices at a time: the dot form loads the column features of
// a batch of edge_batch edges before it reduces any (one dependent load per
// batch, not per edge), then sums the batch's products across the row's
// threads together (gnnc_lane_sums; lane t keeps the value of edge base + t,
// so the stores coalesce); the add form writes each edge's sum of features.
//
// neighbor_group runs the same worker over a group of at most group_size of
// a row's edges instead of the whole row: the group's row comes from
// group_rows, its edges from group_begins, side by side. A hub row is
// spread over many workers, and no worker searches or walks row ends: on
// small graphs, where an SDDMM is a chain of dependent loads, the chain is
// three loads long (group row and edge range; row features and column
// indices; column features). Groups of one edge (group_size = 1) need no
// range: the column index loads beside the row, and the chain is two.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

using namespace llvm;
using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

class SddmmVertexPrinter : public BodyPrinter {
public:
  SddmmVertexPrinter(const OpContext &c, bool groups)
      : BodyPrinter(c), groups(groups) {}
  void print();

private:
  /// neighbor_group: `row`, `lane`, and the group's edges [begin, end).
  void groupPrologue(StringRef what);
  bool groups;
  void printDot(int64_t vw, int64_t lanes);
  void printAdd(int64_t vw);
};

void SddmmVertexPrinter::print() {
  int64_t vw = plan.vectorWidth;
  int64_t regs = plan.chunksPerLane * vw;
  bool dot = desc.form == SddmmForm::Dot;
  const char *what = dot ? "gnn.sddmm (dot)" : "gnn.sddmm (add)";
  if (groups)
    groupPrologue(what);
  else
    vertexPrologue(what);
  // The row's features stay in registers for all its edges.
  os << "float ra[" << regs << "];\n";
  os << "#pragma unroll\n";
  os << "for (int i = 0; i < " << regs << "; ++i)\n";
  os << "  ra[i] = 0.0f;\n";
  openChunkLoop();
  os << load(vw) << "(" << c.input(0) << " + row * " << desc.width
     << " + chunk * " << vw << ", ra + k * " << vw << ");\n";
  closeBlock();
  if (dot) {
    printDot(vw, plan.lanes);
    return;
  }
  neighbourLoopHead(/*ownRange=*/groups);
  os << "const " << e.cType << " *src = " << c.input(1) << " + col * "
     << desc.width << ";\n";
  printAdd(vw);
}

void SddmmVertexPrinter::groupPrologue(StringRef what) {
  const int64_t lanes = plan.lanes;
  StringRef numGroups = c.params.name(ParamRole::NumGroups);
  StringRef groupRows = c.params.name(ParamRole::GroupRows);
  os << "// " << what << ", neighbor_group: groups of at most "
     << plan.groupSize << " neighbours of one row, a worker of " << lanes
     << " thread" << (lanes == 1 ? "" : "s") << " per group, "
     << plan.rowsPerBlock << " groups per block, " << plan.vectorWidth
     << " elements per load; every edge has its own output\n";
  os << "const long long group = (long long)blockIdx.x * " << plan.rowsPerBlock
     << " + threadIdx.x / " << lanes << ";\n";
  os << "const int lane = threadIdx.x % " << lanes << ";\n";
  os << "if (group >= " << numGroups << ")\n";
  os << "  return;\n";
  if (plan.edgeGroups) {
    os << "// A group of one edge: the group is the edge, so its column index "
          "loads\n// beside its row.\n";
    os << "const long long row = " << groupRows << "[group];\n";
    os << "const long long begin = group;\n";
    os << "const long long end = group + 1;\n";
    return;
  }
  StringRef groupBegins = c.params.name(ParamRole::GroupBegins);
  os << "// The group's row and edges, three loads side by side.\n";
  os << "const long long row = " << groupRows << "[group];\n";
  os << "const long long begin = " << groupBegins << "[group];\n";
  os << "const long long end = " << groupBegins << "[group + 1];\n";
}

void SddmmVertexPrinter::printDot(int64_t vw, int64_t lanes) {
  StringRef y = c.result();
  const int64_t regs = plan.chunksPerLane * vw;
  const int64_t batch = plan.edgeUnroll;
  // Lane t keeps the value of edge base + t; the stores coalesce.
  neighbourWindowHead(/*ownRange=*/groups);
  os << "for (int t0 = 0; t0 < n; t0 += " << batch << ") {\n";
  os.indent();
  os << "// The batch's column features, all loads in flight at once.\n";
  os << "float fb[" << batch << "][" << regs << "];\n";
  os << "#pragma unroll\n";
  os << "for (int u = 0; u < " << batch << "; ++u) {\n";
  os.indent();
  os << "const long long col = __shfl_sync(group_mask, my_col, t0 + u, "
     << lanes << ");\n";
  os << "const " << e.cType << " *src = " << c.input(1) << " + col * "
     << desc.width << ";\n";
  openChunkLoop();
  os << "if (t0 + u < n) {\n";
  os << "  " << load(vw) << "(src + chunk * " << vw << ", fb[u] + k * " << vw
     << ");\n";
  os << "} else {\n";
  os << "  #pragma unroll\n";
  os << "  for (int j = 0; j < " << vw << "; ++j)\n";
  os << "    fb[u][k * " << vw << " + j] = 0.0f;\n";
  os << "}\n";
  closeBlock(); // chunks
  closeBlock(); // loads
  // The batch's sums, each over the worker's threads at once
  // (gnnc_lane_sums: about batch + log2(lanes / batch) shuffles instead
  // of batch x log2(lanes)); edge t0 + u's total moves to lane t0 + u.
  os << "float partial[" << batch << "];\n";
  os << "#pragma unroll\n";
  os << "for (int u = 0; u < " << batch << "; ++u) {\n";
  os.indent();
  os << "partial[u] = 0.0f;\n";
  openChunkLoop();
  os << "#pragma unroll\n";
  os << "for (int j = 0; j < " << vw << "; ++j)\n";
  os << "  partial[u] += ra[k * " << vw << " + j] * fb[u][k * " << vw
     << " + j];\n";
  closeBlock();
  closeBlock(); // products
  os << "using sums = gnnc_lane_sums<" << batch << ", " << lanes << ">;\n";
  os << "sums::reduce(partial, group_mask, lane);\n";
  os << "const float total = __shfl_sync(group_mask, partial[0], "
        "sums::owner((lane - t0) & "
     << lanes - 1 << "), " << lanes << ");\n";
  os << "if (lane >= t0 && lane < t0 + " << batch << ")\n";
  os << "  my_out = total;\n";
  closeBlock(); // batches
  leakyRelu("my_out");
  os << "if (lane < n)\n";
  if (e.fromFloat.empty())
    os << "  " << y << "[base + lane] = my_out;\n";
  else
    os << "  " << y << "[base + lane] = " << e.fromFloat << "(my_out);\n";
  closeBlock(); // index windows
}

void SddmmVertexPrinter::printAdd(int64_t vw) {
  os << e.cType << " *dst = " << c.result() << " + (base + t) * " << desc.width
     << ";\n";
  openChunkLoop();
  os << "float f[" << vw << "];\n";
  os << load(vw) << "(src + chunk * " << vw << ", f);\n";
  os << "#pragma unroll\n";
  os << "for (int j = 0; j < " << vw << "; ++j) {\n";
  os.indent();
  os << "f[j] += ra[k * " << vw << " + j];\n";
  leakyRelu("f[j]");
  closeBlock();
  os << store(vw) << "(dst + chunk * " << vw << ", f);\n";
  closeBlock(); // chunks
  closeBlock(); // neighbours
  closeBlock(); // index batches
}

class SddmmVertexParallelPattern : public SddmmPattern {
  void emitKernel(const OpContext &c) const override {
    SddmmVertexPrinter(c, /*groups=*/false).print();
  }
};

class SddmmNeighborGroupPattern : public SddmmPattern {
  void emitKernel(const OpContext &c) const override {
    SddmmVertexPrinter(c, /*groups=*/true).print();
  }
};

} // namespace

const EmissionPattern &gnnc::ExportCUDA::sddmmVertexParallelPattern() {
  static const SddmmVertexParallelPattern pattern;
  return pattern;
}

const EmissionPattern &gnnc::ExportCUDA::sddmmNeighborGroupPattern() {
  static const SddmmNeighborGroupPattern pattern;
  return pattern;
}
