//===- SegmentMatmulTileRouted.cpp - gnn.segment_matmul, tile_routed ------===//
//
// The kernel hands the routing table to gnnc_segment_matmul_routed
// (gnnc/cuda/segment_matmul.cuh) with the sizes and the thread mapping of
// the op's plan: K, M, the block's threads, the lanes of a row, the vector
// width and the chunks per lane. The weights of the current type live in
// the block's dynamic shared memory (segmentMatmulTile: K x M elements).
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

using namespace llvm;
using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

inline constexpr const char *kSegmentMatmulHeader =
    "gnnc/cuda/segment_matmul.cuh";

class SegmentMatmulPattern : public EmissionPattern {
  void addHeaders(const OpDesc &op,
                  std::set<std::string> &headers) const override {
    headers.insert(kSegmentMatmulHeader);
  }

  void emitKernel(const OpContext &c) const override {
    Printer &os = c.os;
    const OpDesc &d = c.desc;
    const ThreadMapping &m = c.plan;
    const SegmentTile tile = segmentMatmulTile(d, c.schedule);
    StringRef t = c.e.cType;
    os << "// gnn.segment_matmul, tile_routed: tiles of at most " << tile.rows
       << " rows of one type, " << m.lanes << " thread"
       << (m.lanes == 1 ? "" : "s") << " per row, " << m.rowsPerBlock
       << " rows at a time; the type's " << d.inputWidth << " x " << d.width
       << " weights staged in shared memory (" << tile.bytes << " bytes).\n";
    os << "extern __shared__ __align__(16) unsigned char gnnc_segment_w[];\n";
    os << "gnnc_segment_matmul_routed<" << t << ", " << d.inputWidth << ", "
       << d.width << ", " << c.schedule.threadsPerBlock << ", " << m.lanes
       << ", " << m.vectorWidth << ", " << m.chunksPerLane << ">(" << c.input(0)
       << ", " << c.params.name(ParamRole::SegmentWeights) << ", " << c.result()
       << ", " << c.params.name(ParamRole::RouteTiles) << ", "
       << c.params.name(ParamRole::NumRouteTiles) << ", reinterpret_cast<" << t
       << " *>(gnnc_segment_w));\n";
  }
};

} // namespace

const EmissionPattern &gnnc::ExportCUDA::segmentMatmulTileRoutedPattern() {
  static const SegmentMatmulPattern pattern;
  return pattern;
}
