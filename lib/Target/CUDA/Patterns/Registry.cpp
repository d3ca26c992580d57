//===- Registry.cpp - Which pattern prints which op and strategy ----------===//
//
// One line per emission pattern: a new op family adds its lines here and
// its patterns in files of their own.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

struct PatternEntry {
  OpKind kind;
  Strategy strategy;
  const EmissionPattern &(*get)();
};

const PatternEntry kPatterns[] = {
    {OpKind::Spmm, Strategy::VertexParallel, spmmVertexParallelPattern},
    {OpKind::Spmm, Strategy::EdgeParallel, spmmEdgeParallelPattern},
    {OpKind::Spmm, Strategy::NeighborGroup, spmmNeighborGroupPattern},
    {OpKind::Spmm, Strategy::Batched, spmmBatchedPattern},
    {OpKind::Spmm, Strategy::Sliced, spmmSlicedPattern},
    {OpKind::Sddmm, Strategy::VertexParallel, sddmmVertexParallelPattern},
    {OpKind::Sddmm, Strategy::EdgeParallel, sddmmEdgeParallelPattern},
    {OpKind::Sddmm, Strategy::NeighborGroup, sddmmNeighborGroupPattern},
    {OpKind::EdgeSoftmax, Strategy::VertexParallel, edgeSoftmaxPattern},
    {OpKind::EdgeSoftmaxGrad, Strategy::VertexParallel, edgeSoftmaxGradPattern},
    {OpKind::Readout, Strategy::Batched, readoutPattern},
    {OpKind::ReadoutGrad, Strategy::Batched, readoutPattern},
    {OpKind::SegmentMatmul, Strategy::TileRouted,
     segmentMatmulTileRoutedPattern},
    {OpKind::SegmentMatmulWeightGrad, Strategy::TileRouted,
     segmentMatmulWeightGradTileRoutedPattern},
};

} // namespace

const EmissionPattern *
gnnc::ExportCUDA::findEmissionPattern(OpKind kind, Strategy strategy) {
  for (const PatternEntry &entry : kPatterns)
    if (entry.kind == kind && entry.strategy == strategy)
      return &entry.get();
  return nullptr;
}
