//===- SegmentMatmulTileRouted.cpp - gnn.segment_matmul, tile_routed ------===//
//
// The kernel hands the routing table to the helper its plan's math names
// (gnnc/cuda/segment_matmul.cuh):
//  - math = simt: gnnc_segment_matmul_routed with K, M, the block's
//    threads, the lanes of a row, the vector width and the chunks per lane;
//    the weights of the current type live in the block's dynamic shared
//    memory (segmentMatmulTile: K x M elements).
//  - math = tensor_core: gnnc_segment_matmul_mma with the block tile of
//    segmentMmaTile (rows, columns, warps, fragments, reduction step,
//    stages, shared row strides, resident weights); the pipeline's buffers
//    live in dynamic shared memory.
//  - math = wgmma: gnnc_segment_matmul_wgmma with the warpgroup tile of
//    segmentMmaTile (rows, columns, stages, resident weights); sm_90a.
//    Where the tile's weights are copied (TF32 forwards), the prelude
//    (`_transpose`) leaves W_tᵀ in the workspace with
//    gnnc_segment_transpose_weights and the kernel reads that copy as
//    transposed weights.
// With transpose_weights both read W_t transposed (the input gradient).
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

  unsigned numPreludes() const override { return 1; }

  void emitPrelude(const OpContext &c, unsigned index) const override {
    const OpDesc &d = c.desc;
    c.os << "// W_tᵀ of every type, rounded to TF32, into the workspace: "
            "the K-major weights TF32 wgmma reads.\n";
    c.os << "gnnc_segment_transpose_weights<" << d.inputWidth << ", " << d.width
         << ">(" << c.params.name(ParamRole::SegmentWeights) << ", "
         << c.params.name(ParamRole::Workspace) << ", "
         << c.params.name(ParamRole::NumSegments) << ");\n";
  }

  void emitKernel(const OpContext &c) const override {
    if (c.schedule.math == MathMode::Wgmma)
      emitWgmma(c);
    else if (c.schedule.math == MathMode::TensorCore)
      emitTensorCore(c);
    else
      emitSimt(c);
  }

  void emitSimt(const OpContext &c) const {
    Printer &os = c.os;
    const OpDesc &d = c.desc;
    const ThreadMapping &m = c.plan;
    const SegmentTile tile = segmentMatmulTile(d, c.schedule);
    StringRef t = c.e.cType;
    os << "// gnn.segment_matmul, tile_routed: tiles of at most " << tile.rows
       << " rows of one type, " << m.lanes << " thread"
       << (m.lanes == 1 ? "" : "s") << " per row, " << m.rowsPerBlock
       << " rows at a time; the type's "
       << (d.transposeWeights ? d.width : d.inputWidth) << " x "
       << (d.transposeWeights ? d.inputWidth : d.width)
       << " weights staged in shared memory (" << tile.bytes << " bytes)"
       << (d.transposeWeights ? ", read transposed" : "") << ".\n";
    os << "extern __shared__ __align__(16) unsigned char gnnc_segment_w[];\n";
    os << "gnnc_segment_matmul_routed<" << t << ", " << d.inputWidth << ", "
       << d.width << ", " << c.schedule.threadsPerBlock << ", " << m.lanes
       << ", " << m.vectorWidth << ", " << m.chunksPerLane
       << (d.transposeWeights ? ", true" : "") << ">(" << c.input(0) << ", "
       << c.params.name(ParamRole::SegmentWeights) << ", " << c.result() << ", "
       << c.params.name(ParamRole::RouteTiles) << ", "
       << c.params.name(ParamRole::NumRouteTiles) << ", reinterpret_cast<" << t
       << " *>(gnnc_segment_w));\n";
  }

  void emitTensorCore(const OpContext &c) const {
    Printer &os = c.os;
    const OpDesc &d = c.desc;
    const SegmentMmaTile tile = segmentMmaTile(d, c.schedule);
    os << "// gnn.segment_matmul, tile_routed on tensor cores: mma.sync "
       << mmaShapeName(d.type) << " with f32 accumulators; blocks of "
       << tile.rows << " x " << tile.cols << " results from " << tile.warpsM
       << " x " << tile.warpsN << " warps of " << tile.fragsM << " x "
       << tile.fragsN << " fragments, K in steps of " << tile.depth
       << " through " << tile.stages << " cp.async stages"
       << (tile.residentWeights
               ? ", W_t's column block resident in shared memory"
               : "")
       << " (" << tile.bytes << " bytes of shared memory)"
       << (d.transposeWeights ? "; W_t read transposed" : "") << ".\n";
    os << "extern __shared__ __align__(16) unsigned char "
          "gnnc_segment_smem[];\n";
    os << "gnnc_segment_matmul_mma<" << c.e.cType << ", " << d.inputWidth
       << ", " << d.width << ", " << (d.transposeWeights ? "true" : "false")
       << ", " << tile.rows << ", " << tile.cols << ", " << tile.warpsM << ", "
       << tile.warpsN << ", " << tile.fragsM << ", " << tile.fragsN << ", "
       << tile.depth << ", " << tile.stages << ", " << tile.aStride << ", "
       << tile.bStride << (tile.residentWeights ? ", true" : "") << ">("
       << c.input(0) << ", " << c.params.name(ParamRole::SegmentWeights) << ", "
       << c.result() << ", " << c.params.name(ParamRole::RouteTiles) << ", "
       << c.params.name(ParamRole::NumRouteTiles) << ", gnnc_segment_smem);\n";
  }

  void emitWgmma(const OpContext &c) const {
    Printer &os = c.os;
    const OpDesc &d = c.desc;
    const SegmentMmaTile tile = segmentMmaTile(d, c.schedule);
    os << "// gnn.segment_matmul, tile_routed on tensor cores: wgmma m64n64 ("
       << (d.type == ElementType::F32 ? std::string("TF32")
                                      : elementTypeName(d.type))
       << ", f32 accumulators, sm_90a); blocks of " << tile.rows << " x "
       << tile.cols << " results, a warpgroup per 64 "
       << "rows, K in steps of " << tile.depth << " through " << tile.stages
       << " cp.async stages of swizzled tiles"
       << (tile.residentWeights
               ? ", W_t's column block resident in shared memory"
               : "")
       << " (" << tile.bytes << " bytes of shared memory)"
       << (tile.weightsCopied ? "; W_t read from the prelude's transposed copy"
           : d.transposeWeights ? "; W_t read transposed"
                                : "")
       << ".\n";
    os << "extern __shared__ __align__(16) unsigned char "
          "gnnc_segment_smem[];\n";
    os << "gnnc_segment_matmul_wgmma<" << c.e.cType << ", " << d.inputWidth
       << ", " << d.width << ", " << (tile.bReductionMajor ? "true" : "false")
       << ", " << tile.rows << ", " << tile.cols << ", " << tile.depth << ", "
       << tile.threads << ", " << tile.stages
       << (tile.residentWeights ? ", true" : "") << ">(" << c.input(0) << ", "
       << c.params.name(tile.weightsCopied ? ParamRole::Workspace
                                           : ParamRole::SegmentWeights)
       << ", " << c.result() << ", " << c.params.name(ParamRole::RouteTiles)
       << ", " << c.params.name(ParamRole::NumRouteTiles)
       << ", gnnc_segment_smem);\n";
  }
};

} // namespace

std::string gnnc::ExportCUDA::mmaShapeName(ElementType type) {
  return type == ElementType::F32
             ? std::string("m16n8k8 (TF32)")
             : std::string("m16n8k16 (") + elementTypeName(type) + ")";
}

const EmissionPattern &gnnc::ExportCUDA::segmentMatmulTileRoutedPattern() {
  static const SegmentMatmulPattern pattern;
  return pattern;
}
