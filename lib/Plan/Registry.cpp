//===- Registry.cpp - Which planner serves which op and strategy ----------===//
//
// One line per op family and one per (op, strategy) planner: a new op family
// adds its lines here and its planners in a file of its own.
//
//===----------------------------------------------------------------------===//
#include "Planners.h"

#include <cassert>

using namespace gnnc;
using namespace gnnc::plan;

namespace {

const OpFamily kFamilies[] = {
    // op, rules, accumulates, splitsRows, paddedRows, edgeWorkers, default
    {OpKind::Spmm, spmmRules, true, true, true, 0},
    {OpKind::Sddmm, nullptr, false, false, false, 0},
    {OpKind::EdgeSoftmax, nullptr, false, false, false, defaults::kEdgeWorkers},
    {OpKind::EdgeSoftmaxGrad, nullptr, false, false, false,
     defaults::kEdgeWorkers},
    {OpKind::Readout, readoutRules, false, false, false, 0, Strategy::Batched},
    {OpKind::ReadoutGrad, readoutRules, false, false, false, 0,
     Strategy::Batched},
    {OpKind::SegmentMatmul, segmentMatmulRules, false, false, false, 0,
     Strategy::TileRouted},
    {OpKind::SegmentMatmulWeightGrad, segmentMatmulRules, false, false, false,
     0, Strategy::TileRouted},
};

struct PlannerEntry {
  OpKind kind;
  Strategy strategy;
  Planner plan;
};

/// In the order messages list a op's strategies.
const PlannerEntry kPlanners[] = {
    {OpKind::Spmm, Strategy::VertexParallel, planVertexParallel},
    {OpKind::Spmm, Strategy::EdgeParallel, planSpmmEdgeParallel},
    {OpKind::Spmm, Strategy::NeighborGroup, planSpmmNeighbourGroups},
    {OpKind::Spmm, Strategy::Batched, planSpmmBatched},
    {OpKind::Spmm, Strategy::Sliced, planSpmmSliced},
    {OpKind::Sddmm, Strategy::VertexParallel, planVertexParallel},
    {OpKind::Sddmm, Strategy::EdgeParallel, planSddmmEdgeParallel},
    {OpKind::Sddmm, Strategy::NeighborGroup, planSddmmNeighbourGroups},
    {OpKind::EdgeSoftmax, Strategy::VertexParallel, planEdgeSoftmax},
    {OpKind::EdgeSoftmaxGrad, Strategy::VertexParallel, planEdgeSoftmax},
    {OpKind::Readout, Strategy::Batched, planReadout},
    {OpKind::ReadoutGrad, Strategy::Batched, planReadout},
    {OpKind::SegmentMatmul, Strategy::TileRouted, planSegmentMatmulTileRouted},
    {OpKind::SegmentMatmulWeightGrad, Strategy::TileRouted,
     planSegmentMatmulWeightGrad},
};

} // namespace

const OpFamily &gnnc::plan::familyOf(OpKind kind) {
  for (const OpFamily &family : kFamilies)
    if (family.kind == kind)
      return family;
  assert(false && "an op without a family in the plan registry");
  return kFamilies[0];
}

Planner gnnc::plan::findPlanner(OpKind kind, Strategy strategy) {
  for (const PlannerEntry &entry : kPlanners)
    if (entry.kind == kind && entry.strategy == strategy)
      return entry.plan;
  return nullptr;
}

Schedule gnnc::defaultSchedule(const OpDesc &op) {
  Schedule s;
  // A group of snapshots has one strategy (spmmRules).
  s.strategy = op.snapshots > 0 ? Strategy::Sliced
               : op.linear()    ? Strategy::Batched
                                : familyOf(op.kind).defaultStrategy;
  return s;
}

std::vector<Strategy> gnnc::implementedStrategies(OpKind kind) {
  std::vector<Strategy> strategies;
  for (const PlannerEntry &entry : kPlanners)
    if (entry.kind == kind)
      strategies.push_back(entry.strategy);
  return strategies;
}
