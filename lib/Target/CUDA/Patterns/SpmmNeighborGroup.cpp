//===- SpmmNeighborGroup.cpp - gnn.spmm, neighbor_group -------------------===//
//
// GNNAdvisor's neighbour groups: a worker per group of at most `group_size`
// neighbours of one row; the row's first group in the block (its leader)
// adds the partial sums the block's other groups of the row left in shared
// memory, and writes the row when it lies wholly in the block or adds it to
// the result atomically when it spans blocks (prelude 0 set each row that
// spans blocks or has no groups to its self term or 0; gnnc/cuda/
// neighbor_groups.cuh says which rows those are). With attention, preludes 1
// and 2 leave each row's largest logit and sum of exponentials in the
// workspace, and each group computes its edges' softmax weights from them.
//
//===----------------------------------------------------------------------===//
#include "../SpmmSupport.h"
#include "Patterns.h"

using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

/// Whether `row`'s groups all lie in one block: then its leader stores it
/// whole; else the first kernel sets it and the blocks add their pieces.
std::string rowInOneBlock(const OpContext &c, llvm::StringRef row = "row") {
  return ("gnnc_group_row_in_one_block<" + llvm::Twine(c.plan.rowsPerBlock) +
          ">(" + c.params.name(ParamRole::GroupOffsets) + ", " + row + ")")
      .str();
}

class SpmmGroupPrinter : public SpmmPrinter {
public:
  using SpmmPrinter::SpmmPrinter;
  void print();
};

void SpmmGroupPrinter::print() {
  int64_t lanes = plan.lanes;
  int64_t perBlock = plan.rowsPerBlock;
  int64_t groupSize = plan.groupSize;
  os << "// gnn.spmm, neighbor_group: groups of at most " << groupSize
     << " neighbours of one row, a worker of " << lanes << " thread"
     << (lanes == 1 ? "" : "s") << " per group, " << perBlock
     << " groups per block, " << p.vw
     << " elements per load. The first group of a row in the block (its\n"
        "// leader) adds the partial sums the block's other groups of that "
        "row left in\n// shared memory; a row wholly in the block is "
        "written, a row that spans blocks\n// is added to the result "
        "atomically (the first kernel set it to its self term or 0).\n";
  os << "const long long first_group = (long long)blockIdx.x * " << perBlock
     << ";\n";
  os << "const long long group = first_group + threadIdx.x / " << lanes
     << ";\n";
  os << "const int lane = threadIdx.x % " << lanes << ";\n";
  os << "const long long last_group = min(first_group + " << perBlock << ", "
     << p.numGroups << ") - 1;\n";
  os << "extern __shared__ float gnnc_group_sums[];\n";
  os << "const bool live = group < " << p.numGroups << ";\n";
  os << "const long long row = live ? (long long)" << p.groupRows
     << "[group] : -1;\n";
  os << "float acc[" << p.accs << "];\n";
  os << "if (live) {\n";
  os.indent();
  // The group's edges come from its own table entries, beside its row (not
  // after it, as the row's offsets would).
  os << "const long long begin = " << p.groupBegins << "[group];\n";
  os << "const long long end = " << p.groupBegins << "[group + 1];\n";
  if (desc.attention)
    loadAttentionStatistics();
  if (p.scalesBatches()) {
    os << "const long long batch_deg = (long long)" << graph.rowPtr
       << "[row + 1] - " << graph.rowPtr << "[row];\n";
    os << "const float batch_scale = " << RowFactor{desc, "batch_deg"} << ";\n";
  }
  // (`acc` outlives the branch: the leader goes on adding to it.)
  reduceNeighbours();
  os << "float *slot = gnnc_group_sums + (group - first_group) * " << p.stride
     << ";\n";
  slotLoop(SlotCopy::Store);
  closeBlock();
  os << "__syncthreads();\n";
  os << "if (!live || (group > first_group && " << p.groupRows
     << "[group - 1] == row))\n";
  os << "  return;\n";
  os << "// The leader: add the partial sums of the row's later groups here.\n";
  os << "for (long long h = group + 1; h <= last_group && " << p.groupRows
     << "[h] == row; ++h) {\n";
  os.indent();
  os << "const float *slot = gnnc_group_sums + (h - first_group) * " << p.stride
     << ";\n";
  slotLoop(SlotCopy::Combine);
  closeBlock();
  os << "if (" << rowInOneBlock(c) << ") {\n";
  os.indent();
  finish(RowDegree::RowOffsets);
  os.unindent();
  os << "} else {\n";
  os.indent();
  atomicPiece("row");
  closeBlock();
}

/// The main kernel; prelude 0 sets the rows that the pieces of rows spanning
/// blocks are added to, and the rows without groups.
class SpmmNeighborGroupPattern : public EmissionPattern {
  void emitKernel(const OpContext &c) const override {
    SpmmGroupPrinter(c).print();
  }
  void addHeaders(const OpDesc &op,
                  std::set<std::string> &headers) const override {
    EmissionPattern::addHeaders(op, headers);
    headers.insert(kNeighborGroupsHeader);
    if (op.attention)
      headers.insert(kAttentionHeader);
  }
  /// With attention, preludes 1 and 2 make the rows' softmax statistics.
  unsigned numPreludes() const override { return 3; }
  void emitPrelude(const OpContext &c, unsigned index) const override {
    if (index == 0)
      SpmmPrinter(c).printCheckedInit(rowInOneBlock(c, "my_row"));
    else
      SpmmPrinter(c).printAttentionGroupPass(/*sums=*/index == 2);
  }
};

} // namespace

const EmissionPattern &gnnc::ExportCUDA::spmmNeighborGroupPattern() {
  static const SpmmNeighborGroupPattern pattern;
  return pattern;
}
