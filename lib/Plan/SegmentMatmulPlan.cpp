//===- SegmentMatmulPlan.cpp - Kernel plans of gnn.segment_matmul ---------===//
//
// tile_routed (FASTEN): the host cuts each type's rows into tiles of at
// most tile_rows rows and lists them in a routing table (type, first row,
// end row), tiles of one type adjacent, in type order. The host launches
// route_blocks persistent blocks (at most one per tile, at most what stays
// resident); block b walks the contiguous run of tiles
// [b * tiles / blocks, (b + 1) * tiles / blocks), so that it stages a
// type's K x M weights in shared memory once for all its tiles of that
// type. Within a tile, sub-warps of `lanes` threads take one result row
// at a time, each lane its vector chunks of the M columns, accumulating in
// f32 over K with the input row read from global memory.
//
// Not planned yet: K-blocking (the whole W_t must fit shared memory),
// tensor cores, the backward.
//
//===----------------------------------------------------------------------===//
#include "Planners.h"

#include "gnnc/Plan/Checked.h"

using namespace gnnc;
using namespace gnnc::plan;

SegmentTile gnnc::segmentMatmulTile(const OpDesc &op, const Schedule &s) {
  SegmentTile tile;
  tile.rows = s.tileRows;
  // checkOpSizes bounds K and M by 2^20 each: no overflow.
  tile.weightElements = op.inputWidth * op.width;
  tile.bytes =
      alignTo(tile.weightElements * static_cast<int64_t>(elementSize(op.type)),
              16)
          .value_or(0);
  return tile;
}

Expected<KernelPlan>
gnnc::plan::planSegmentMatmulTileRouted(const OpDesc &op, const Schedule &s) {
  if (op.kind != OpKind::SegmentMatmul)
    return Status::error(std::string("tile_routed plans gnn.segment_matmul, "
                                     "not ") +
                         opKindName(op.kind));
  Expected<KernelPlan> plan = rowPlan(op, s, /*wideBatch=*/false);
  if (!plan)
    return plan;
  const SegmentTile tile = segmentMatmulTile(op, s);
  GNNC_RETURN_IF_ERROR(checkSharedBytes(
      tile.bytes,
      "gnn.segment_matmul (tile_routed) stages a type's whole weight matrix "
      "in shared memory: K " +
          std::to_string(op.inputWidth) + " x M " + std::to_string(op.width) +
          " x " + std::to_string(elementSize(op.type)) + " bytes",
      "splitting K over several passes is not implemented yet; use a "
      "smaller K or M, or 16-bit weights"));
  plan->extraParams = {ParamRole::RouteTiles, ParamRole::NumRouteTiles,
                       ParamRole::RouteBlocks};
  LaunchPlan &launch = plan->launch;
  launch.grid = {ParamRole::RouteBlocks};
  launch.itemsPerBlock = 1;
  launch.minBlocks = 1;
  launch.sharedBytes = tile.bytes;
  return plan;
}
