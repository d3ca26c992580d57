//===- SpmmBatched.cpp - gnn.spmm, batched --------------------------------===//
//
// A block takes one of the host's blocks (graph::batchBlocks), whose entry
// gives its rows and its edges: a run of whole graphs that fits a tile,
// whose row offsets, column indices and feature rows (a column block at a
// time) it stages in shared memory (gnnc_stage_array, gnnc_stage_rows,
// batched.cuh), all in flight together, before its sub-warps of `lanes`
// threads reduce one row each from there; or a piece of a graph larger
// than a tile, which stages its offsets and column indices when they fit
// and gathers its neighbours' rows from global memory.
// The reduction, the end of a row and the store are gnn.spmm's own
// (SpmmSupport). With a linear epilogue a block stages its offsets and
// column indices alone and reduces its rows from global memory into a
// shared tile of aggregated rows (its shared memory holds that tile, the
// weights and the staged indices, so that several blocks share an SM);
// gnnc_batched_linear (batched_linear.cuh) multiplies it by W.
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
    StringRef blocksParam = params.name(ParamRole::BatchBlocks);
    const Schedule &s = c.schedule;
    const int64_t lanes = plan.lanes, vw = p.vw;
    const int64_t tileChunks = plan.laneChunks();
    const int64_t blocks = plan.columnBlocks();
    const BatchedTile tile = batchedTile(desc, s, tileChunks);
    StringRef raw =
        rawVectorType(vw * static_cast<int64_t>(elementSize(desc.type)));
    StringRef offset = spellIndex(desc.offsets64);
    StringRef index = c.indexType();
    const bool linear = desc.linear();
    const bool stages = batchedStagesFeatures(desc);
    const BatchedLinearTile lt =
        linear ? batchedLinearTile(desc, s) : BatchedLinearTile{};
    // Every block stages its row offsets and column indices when they fit;
    // only a block without a linear epilogue stages its feature rows.
    const BatchedIndices indices = batchedIndices(desc, s, tileChunks);
    const int64_t tileEdges = indices.edges;
    if (!stages)
      os << "// gnn.spmm, batched, with a linear epilogue: a block per run of "
            "whole graphs of at most "
         << tile.rows << " nodes and " << tileEdges << " edges or per piece of "
         << tile.rows
         << " rows of a larger graph, which stages its row offsets and column "
            "indices in shared memory (a piece, when they fit) and reduces "
            "its rows from global memory into a shared tile; "
         << lanes << " thread" << (lanes == 1 ? "" : "s") << " per row, "
         << plan.rowsPerBlock << " rows at a time, " << vw
         << " elements per load.\n";
    else
      os << "// gnn.spmm, batched: a block per run of whole graphs of at most "
         << tile.rows << " nodes and " << tileEdges
         << " edges, whose feature rows (" << blocks << " column block"
         << (blocks == 1 ? "" : "s") << " of " << tileChunks * vw
         << " features), row offsets and column indices are staged in shared "
            "memory, or per piece of "
         << tile.rows
         << " rows of a larger graph, which stages its offsets and column "
            "indices when they fit and gathers its neighbours' rows from "
            "global memory; "
         << lanes << " thread" << (lanes == 1 ? "" : "s") << " per row, "
         << plan.rowsPerBlock << " rows at a time, " << vw
         << " elements per load.\n";
    os << "extern __shared__ __align__(16) unsigned char gnnc_tile_bytes[];\n";
    if (stages)
      os << e.cType << " *tile = reinterpret_cast<" << e.cType
         << " *>(gnnc_tile_bytes);\n";
    os << offset << " *tile_ptr = reinterpret_cast<" << offset
       << " *>(gnnc_tile_bytes + " << indices.offsetsAt << ");\n";
    os << index << " *tile_cols = reinterpret_cast<" << index
       << " *>(gnnc_tile_bytes + " << indices.columnsAt << ");\n";
    StringRef weights = params.name(ParamRole::LinearWeights);
    // The template arguments the epilogue's pieces share: the element
    // type, K, K padded and M.
    std::string linearArgs;
    if (linear)
      linearArgs = (e.cType + ", " + Twine(desc.width) + ", " +
                    Twine(lt.kPadded) + ", " + Twine(desc.linearWidth))
                       .str();
    if (linear && lt.streamWeights) {
      os << "// Linear epilogue: the aggregated rows go to the shared tile "
            "h_tile ("
         << lt.rows << " x " << desc.width << ", rows of " << lt.hStride
         << "), which gnnc_batched_linear_streamed multiplies by the "
         << desc.width << " x " << desc.linearWidth
         << " weights on tensor cores, each warp taking items of "
         << lt.fragsM * 16 << " x " << lt.cols
         << " and streaming their weights through its ring of " << lt.stages
         << " buffers in w_ring.\n";
      os << e.cType << " *w_ring = reinterpret_cast<" << e.cType
         << " *>(gnnc_tile_bytes + " << lt.wAt << ");\n";
      os << e.cType << " *h_tile = reinterpret_cast<" << e.cType
         << " *>(gnnc_tile_bytes + " << lt.hAt << ");\n";
    } else if (linear) {
      os << "// Linear epilogue: the aggregated rows go to the shared tile "
            "h_tile ("
         << lt.rows << " x " << desc.width << ", rows of " << lt.hStride
         << "), which gnnc_batched_linear multiplies by the " << desc.width
         << " x " << desc.linearWidth << " weights on tensor cores, " << lt.cols
         << " columns a pass; the first pass's weights load into "
            "w_tile while the rows are aggregated.\n";
      os << e.cType << " *w_tile = reinterpret_cast<" << e.cType
         << " *>(gnnc_tile_bytes + " << lt.wAt << ");\n";
      os << e.cType << " *h_tile = reinterpret_cast<" << e.cType
         << " *>(gnnc_tile_bytes + " << lt.hAt << ");\n";
      os << "gnnc_linear_load_weights<" << linearArgs << ", " << lt.cols << ", "
         << lt.bStride << ", " << (desc.transposeWeights ? "true" : "false")
         << ", " << lt.threads << ">(" << weights << ", w_tile, 0);\n";
    }
    if (linear) {
      os << "gnnc_linear_clear_padding<" << e.cType << ", " << desc.width
         << ", " << lt.kPadded << ", " << lt.rows << ", " << lt.hStride
         << ">(h_tile);\n";
    }
    os << "const int lane = threadIdx.x % " << lanes << ";\n";
    os << "const int sub = threadIdx.x / " << lanes << ";\n";
    // The block's entry of the table and the next one's: its rows and its
    // edges, from one load.
    os << "const long long *entry = " << blocksParam << " + blockIdx.x * "
       << kBatchBlockWords << ";\n";
    os << "const long long first_word = entry[0];\n";
    os << "const long long seg_begin = first_word & ~" << kBatchBlockFromGlobal
       << "ll;\n";
    os << "const long long seg_end = entry[" << kBatchBlockWords << "] & ~"
       << kBatchBlockFromGlobal << "ll;\n";
    os << "const long long seg_e0 = entry[1];\n";
    os << "const long long seg_e1 = entry[" << kBatchBlockWords + 1 << "];\n";
    if (stages)
      os << "const bool staged = (first_word & " << kBatchBlockFromGlobal
         << "ll) == 0;\n";
    os << "// A run of whole graphs always fits; a piece of a larger graph "
          "stages its offsets and columns when they fit the tile.\n";
    os << "const bool staged_csr = seg_e1 - seg_e0 <= " << tileEdges << ";\n";
    bool columnBlocks = plan.columnChunks != 0;
    // The feature rows of the column block from `chunk0` (a variable, or
    // the first block).
    auto stageFeatures = [&](StringRef chunk0) {
      os << "gnnc_stage_rows<" << raw << ", " << tileChunks
         << ">(reinterpret_cast<" << raw << " *>(tile), reinterpret_cast<const "
         << raw << " *>(" << p.x << " + seg_begin * " << p.stride;
      if (chunk0 != "0")
        os << " + " << chunk0 << " * " << vw;
      os << "), " << p.stride / vw << ", seg_end - seg_begin, ";
      if (columnBlocks)
        os << "min(" << tileChunks << ", " << plan.chunks << " - " << chunk0
           << ")";
      else
        os << tileChunks;
      os << ");\n";
    };
    if (stages)
      os << "// The block's row offsets, column indices and (a run's first "
            "column block of) feature rows, all in flight together.\n";
    else
      os << "// The block's row offsets and column indices, in flight "
            "together (with the first pass's weights).\n";
    os << "if (staged_csr) {\n";
    os.indent();
    os << "gnnc_stage_array(tile_ptr, " << graph.rowPtr
       << " + seg_begin, seg_end - seg_begin + 1);\n";
    os << "gnnc_stage_array(tile_cols, " << graph.colIdx
       << " + seg_e0, seg_e1 - seg_e0);\n";
    closeBlock();
    if (stages) {
      os << "if (staged) {\n";
      os.indent();
      stageFeatures("0");
      closeBlock();
    }
    os << "gnnc_stage_wait();\n";
    os << "__syncthreads();\n";
    if (columnBlocks) {
      os << "for (int chunk0 = 0; chunk0 < " << plan.chunks
         << "; chunk0 += " << tileChunks << ") {\n";
      os.indent();
      os << "const int chunk_end = min(chunk0 + " << tileChunks << ", "
         << plan.chunks << ");\n";
      os << "if (staged && chunk0 > 0) {\n";
      os.indent();
      os << "__syncthreads(); // the previous column block is no longer "
            "read\n";
      stageFeatures("chunk0");
      os << "gnnc_stage_wait();\n";
      os << "__syncthreads();\n";
      closeBlock();
    }
    os << "for (long long row = seg_begin + sub; row < seg_end; row += "
       << plan.rowsPerBlock << ") {\n";
    os.indent();
    os << "const long long begin = staged_csr ? (long long)tile_ptr[row - "
          "seg_begin] : (long long)"
       << graph.rowPtr << "[row];\n";
    os << "const long long end = staged_csr ? (long long)tile_ptr[row - "
          "seg_begin + 1] : (long long)"
       << graph.rowPtr << "[row + 1];\n";
    if (p.scalesBatches()) {
      os << "const long long batch_deg = end - begin;\n";
      os << "const float batch_scale = " << RowFactor{desc, "batch_deg"}
         << ";\n";
    }
    os << "float acc[" << p.accs << "];\n";
    if (stages) {
      os << "if (staged) {\n";
      os.indent();
      reduceNeighbours("tile", "tile_cols");
      os.unindent();
    }
    os << (stages ? "} else if (staged_csr) {\n" : "if (staged_csr) {\n");
    os.indent();
    reduceNeighbours("", "tile_cols");
    os.unindent();
    os << "} else {\n";
    os.indent();
    reduceNeighbours();
    closeBlock();
    if (linear)
      finish(RowDegree::Range,
             ("h_tile + (row - seg_begin) * " + Twine(lt.hStride)).str());
    else
      finish(RowDegree::Range);
    closeBlock(); // rows
    if (columnBlocks)
      closeBlock(); // column blocks
    if (linear) {
      StringRef bias = params.name(ParamRole::LinearBias);
      StringRef trans = desc.transposeWeights ? "true" : "false";
      StringRef withBias = desc.linearBias ? "true" : "false";
      StringRef relu = desc.activation == Activation::Relu ? "true" : "false";
      if (lt.streamWeights)
        os << "gnnc_batched_linear_streamed<" << linearArgs << ", " << lt.rows
           << ", " << lt.fragsM << ", " << lt.fragsN << ", " << lt.hStride
           << ", " << lt.bStride << ", " << lt.stages << ", " << trans << ", "
           << withBias << ", " << relu << ", " << lt.threads << ">(h_tile, "
           << weights << ", " << (bias.empty() ? StringRef("nullptr") : bias)
           << ", " << p.y << ", seg_begin, seg_end - seg_begin, w_ring);\n";
      else
        os << "gnnc_batched_linear<" << linearArgs << ", " << lt.rows << ", "
           << lt.cols << ", " << lt.warpsM << ", " << lt.warpsN << ", "
           << lt.fragsM << ", " << lt.fragsN << ", " << lt.hStride << ", "
           << lt.bStride << ", " << trans << ", " << withBias << ", " << relu
           << ", " << lt.threads << ">(h_tile, " << weights << ", "
           << (bias.empty() ? StringRef("nullptr") : bias) << ", " << p.y
           << ", seg_begin, seg_end - seg_begin, w_tile);\n";
    }
  }
};

class SpmmBatchedPattern : public EmissionPattern {
  void addHeaders(const OpDesc &op,
                  std::set<std::string> &headers) const override {
    EmissionPattern::addHeaders(op, headers);
    headers.insert(kBatchedHeader);
    if (op.linear())
      headers.insert(kBatchedLinearHeader);
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
