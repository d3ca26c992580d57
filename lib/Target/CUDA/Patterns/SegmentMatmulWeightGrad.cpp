//===- SegmentMatmulWeightGrad.cpp - gnn.segment_matmul_weight_grad -------===//
//
// tile_routed: the routing table's tiles are splits of each type's rows.
// The main kernel leaves each split's K x M partial (f32) in the workspace
// through gnnc_segment_weight_grad_mma (math = tensor_core, the block tile
// of segmentMmaTile), gnnc_segment_weight_grad_wgmma (math = wgmma, f16
// and bf16) or gnnc_segment_weight_grad_simt; the follow-up
// (`_reduce`) adds each type's partials (lanes of a block over the splits,
// their sums in a fixed order) with gnnc_segment_weight_grad_reduce
// (gnnc/cuda/segment_matmul.cuh).
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "gnnc/Plan/Limits.h"

using namespace llvm;
using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

/// gnn.segment_matmul_weight_grad: the partials of each split into the
/// workspace (tensor cores or SIMT, as the plan's math says), then the
/// follow-up that adds each type's partials in table order.
class SegmentMatmulWeightGradPattern : public EmissionPattern {
  void addHeaders(const OpDesc &op,
                  std::set<std::string> &headers) const override {
    headers.insert("gnnc/cuda/segment_matmul.cuh");
  }

  unsigned numFollowUps() const override { return 1; }

  void emitKernel(const OpContext &c) const override {
    Printer &os = c.os;
    const OpDesc &d = c.desc;
    StringRef t = c.e.cType;
    StringRef ws = c.params.name(ParamRole::Workspace);
    const std::string tail = ", " + ws.str() + ", " +
                             c.params.name(ParamRole::RouteTiles).str() + ", " +
                             c.params.name(ParamRole::NumRouteTiles).str();
    if (!onTensorCores(c.schedule.math)) {
      os << "// gnn.segment_matmul_weight_grad, tile_routed: each split of "
            "at most "
         << c.schedule.tileRows << " rows of one type leaves its "
         << d.inputWidth << " x " << d.width
         << " partial (f32, SIMT) in the workspace.\n";
      os << "gnnc_segment_weight_grad_simt<" << t << ", " << d.inputWidth
         << ", " << d.width << ", " << c.schedule.threadsPerBlock << ">("
         << c.input(0) << ", " << c.input(1) << tail << ");\n";
      return;
    }
    const SegmentMmaTile tile = segmentMmaTile(d, c.schedule);
    if (tile.warpgroups) {
      os << "// gnn.segment_matmul_weight_grad, tile_routed on tensor cores: "
            "each split of at most "
         << c.schedule.tileRows << " rows of one type leaves its "
         << d.inputWidth << " x " << d.width
         << " partial (f32) in the workspace; wgmma m64n64 ("
         << elementTypeName(d.type)
         << ", X and dY read transposed, sm_90a), blocks of " << tile.rows
         << " x " << tile.cols << ", a warpgroup per 64 rows, rows in steps of "
         << tile.depth << " through " << tile.stages
         << " cp.async stages of swizzled panels (" << tile.bytes
         << " bytes of shared memory).\n";
      os << "extern __shared__ __align__(16) unsigned char "
            "gnnc_segment_smem[];\n";
      os << "gnnc_segment_weight_grad_wgmma<" << t << ", " << d.inputWidth
         << ", " << d.width << ", " << tile.rows << ", " << tile.cols << ", "
         << tile.depth << ", " << tile.threads << ", " << tile.stages << ">("
         << c.input(0) << ", " << c.input(1) << tail
         << ", gnnc_segment_smem);\n";
      return;
    }
    os << "// gnn.segment_matmul_weight_grad, tile_routed on tensor cores: "
          "each split of at most "
       << c.schedule.tileRows << " rows of one type leaves its " << d.inputWidth
       << " x " << d.width << " partial (f32) in the workspace; mma.sync "
       << mmaShapeName(d.type) << ", blocks of " << tile.rows << " x "
       << tile.cols << " from " << tile.warpsM << " x " << tile.warpsN
       << " warps of " << tile.fragsM << " x " << tile.fragsN
       << " fragments, rows in steps of " << tile.depth << " through "
       << tile.stages << " cp.async stages (" << tile.bytes
       << " bytes of shared memory).\n";
    os << "extern __shared__ __align__(16) unsigned char "
          "gnnc_segment_smem[];\n";
    os << "gnnc_segment_weight_grad_mma<" << t << ", " << d.inputWidth << ", "
       << d.width << ", " << tile.rows << ", " << tile.cols << ", "
       << tile.warpsM << ", " << tile.warpsN << ", " << tile.fragsM << ", "
       << tile.fragsN << ", " << tile.depth << ", " << tile.stages << ", "
       << tile.aStride << ", " << tile.bStride << ">(" << c.input(0) << ", "
       << c.input(1) << tail << ", gnnc_segment_smem);\n";
  }

  void emitFollowUp(const OpContext &c, unsigned index) const override {
    Printer &os = c.os;
    const OpDesc &d = c.desc;
    os << "// Each type's weight gradient: its splits' partials added by "
          "lanes of a block, the lanes' sums in a fixed order (0 for a type "
          "without rows).\n";
    os << "gnnc_segment_weight_grad_reduce<" << c.e.cType << ", "
       << d.inputWidth << ", " << d.width << ", "
       << defaults::kSegmentReduceColumns << ", "
       << defaults::kSegmentReduceLoads << ">("
       << c.params.name(ParamRole::Workspace) << ", " << c.result() << ", "
       << c.params.name(ParamRole::RouteTiles) << ", "
       << c.params.name(ParamRole::NumRouteTiles) << ", "
       << c.params.name(ParamRole::NumSegments) << ");\n";
  }
};

} // namespace

const EmissionPattern &
gnnc::ExportCUDA::segmentMatmulWeightGradTileRoutedPattern() {
  static const SegmentMatmulWeightGradPattern pattern;
  return pattern;
}
