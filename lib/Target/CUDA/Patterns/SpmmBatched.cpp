//===- SpmmBatched.cpp - gnn.spmm, batched --------------------------------===//
//
// A block takes `graphs_per_block` consecutive graphs of a batch, in
// segments: consecutive graphs whose nodes fit the tile together. For each
// column block of a segment that fits, the block stages the segment's
// feature rows in shared memory (gnnc_stage_rows, batched.cuh) and its
// sub-warps of `lanes` threads reduce one row each from there; a graph
// larger than the tile is reduced from global memory in the same launch.
// The reduction, the end of a row and the store are gnn.spmm's own
// (SpmmSupport).
//
//===----------------------------------------------------------------------===//
#include "../SpmmSupport.h"
#include "Patterns.h"

using namespace llvm;
using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

class SpmmBatchedPrinter : public SpmmPrinter {
public:
  using SpmmPrinter::SpmmPrinter;

  void print() {
    const KernelParams &params = c.params;
    StringRef graphPtr = params.name(ParamRole::GraphOffsets);
    StringRef numGraphs = params.name(ParamRole::NumGraphs);
    const Schedule &s = c.schedule;
    const int64_t lanes = plan.lanes, vw = p.vw;
    const int64_t tileChunks = plan.laneChunks();
    const int64_t tileRows = s.tileRows;
    const int64_t blocks = plan.columnBlocks();
    StringRef raw =
        rawVectorType(vw * static_cast<int64_t>(elementSize(desc.type)));
    os << "// gnn.spmm, batched: " << s.graphsPerBlock << " graph"
       << (s.graphsPerBlock == 1 ? "" : "s") << " per block, in segments of "
       << "at most " << tileRows << " nodes staged in shared memory (" << blocks
       << " column block" << (blocks == 1 ? "" : "s") << " of "
       << tileChunks * vw << " features); " << lanes << " thread"
       << (lanes == 1 ? "" : "s") << " per row, " << plan.rowsPerBlock
       << " rows at a time, " << vw
       << " elements per load. A graph larger than the tile is reduced from "
          "global memory.\n";
    os << "extern __shared__ __align__(16) unsigned char gnnc_tile_bytes[];\n";
    os << e.cType << " *tile = reinterpret_cast<" << e.cType
       << " *>(gnnc_tile_bytes);\n";
    os << "const int lane = threadIdx.x % " << lanes << ";\n";
    os << "const int sub = threadIdx.x / " << lanes << ";\n";
    os << "const long long first_graph = (long long)blockIdx.x * "
       << s.graphsPerBlock << ";\n";
    os << "const long long last_graph = min(first_graph + " << s.graphsPerBlock
       << ", " << numGraphs << ");\n";
    os << "for (long long g = first_graph; g < last_graph;) {\n";
    os.indent();
    os << "// The segment: graph g and the graphs after it whose nodes fit "
          "the tile with it.\n";
    os << "const long long seg_begin = " << graphPtr << "[g];\n";
    os << "long long next = g + 1;\n";
    os << "while (next < last_graph && " << graphPtr
       << "[next + 1] - seg_begin <= " << tileRows << ")\n";
    os << "  ++next;\n";
    os << "const long long seg_end = " << graphPtr << "[next];\n";
    os << "g = next;\n";
    os << "const bool staged = seg_end - seg_begin <= " << tileRows << ";\n";
    bool columnBlocks = plan.columnChunks != 0;
    if (columnBlocks) {
      os << "for (int chunk0 = 0; chunk0 < " << plan.chunks
         << "; chunk0 += " << tileChunks << ") {\n";
      os.indent();
      os << "const int chunk_end = min(chunk0 + " << tileChunks << ", "
         << plan.chunks << ");\n";
    }
    os << "if (staged) {\n";
    os.indent();
    os << "__syncthreads(); // the previous tile is no longer read\n";
    os << "gnnc_stage_rows<" << raw << ", " << tileChunks
       << ">(reinterpret_cast<" << raw << " *>(tile), reinterpret_cast<const "
       << raw << " *>(" << p.x << " + seg_begin * " << p.stride
       << (columnBlocks ? " + chunk0 * " + std::to_string(vw) : "") << "), "
       << p.stride / vw << ", seg_end - seg_begin, "
       << (columnBlocks ? "chunk_end - chunk0" : std::to_string(tileChunks))
       << ");\n";
    os << "__syncthreads();\n";
    closeBlock();
    os << "for (long long row = seg_begin + sub; row < seg_end; row += "
       << plan.rowsPerBlock << ") {\n";
    os.indent();
    rowRange();
    if (p.scalesBatches()) {
      os << "const long long batch_deg = end - begin;\n";
      os << "const float batch_scale = " << RowFactor{desc, "batch_deg"}
         << ";\n";
    }
    os << "float acc[" << p.accs << "];\n";
    os << "if (staged) {\n";
    os.indent();
    reduceNeighbours("tile");
    os.unindent();
    os << "} else {\n";
    os.indent();
    reduceNeighbours();
    closeBlock();
    finish(RowDegree::Range);
    closeBlock(); // rows
    if (columnBlocks)
      closeBlock(); // column blocks
    closeBlock();   // segments
  }
};

class SpmmBatchedPattern : public EmissionPattern {
  void addHeaders(const OpDesc &op,
                  std::set<std::string> &headers) const override {
    EmissionPattern::addHeaders(op, headers);
    headers.insert(kBatchedHeader);
  }
  void emitKernel(const OpContext &c) const override {
    SpmmBatchedPrinter(c).print();
  }
};

} // namespace

const EmissionPattern &gnnc::ExportCUDA::spmmBatchedPattern() {
  static const SpmmBatchedPattern pattern;
  return pattern;
}
