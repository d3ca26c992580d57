//===- SegmentMatmul.h - Host side of gnn.segment_matmul --------*- C++ -*-===//
//
// The routing table of the tile_routed strategy (FASTEN): each type's rows
// cut into tiles of at most tile_rows rows, listed in type order so that
// the tiles sharing a weight matrix run together, and the number of
// persistent blocks that walk it. Plain host code; the kernel's launch is
// not implemented yet.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_OPS_SEGMENT_MATMUL_H
#define GNNC_OPS_SEGMENT_MATMUL_H

#include "gnnc/Plan/Abi.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <vector>

namespace gnnc::ops {

/// Checks gnn.segment_matmul's segment offsets (`numOffsets` = num_types +
/// 1 of them) against an input of `rows` rows: at least one offset, the
/// first 0, none decreasing, the last `rows`. The error names the first
/// offset that breaks a rule.
Status checkSegmentOffsets(const int64_t *seg, int64_t numOffsets,
                           int64_t rows);

/// The routing table (ParamRole::RouteTiles): kRouteTileWords i64 per tile,
/// (type, first row, end row). Each type's rows [seg[t], seg[t+1]) become
/// ceil(rows / tileRows) tiles of tileRows rows (the last one shorter), in
/// type order; a type without rows gets none. Fails on offsets that
/// checkSegmentOffsets refuses and on tileRows < 1.
Expected<std::vector<int64_t>> buildRouteTable(const int64_t *seg,
                                               int64_t numOffsets, int64_t rows,
                                               int64_t tileRows);

/// The persistent blocks to launch (ParamRole::RouteBlocks) for `tiles`
/// tiles when `residentBlocks` blocks fit the GPU at once: at most one per
/// tile, at most the resident ones, at least one (an empty table still
/// gets its launch).
int64_t routeBlocks(int64_t tiles, int64_t residentBlocks);

} // namespace gnnc::ops

#endif // GNNC_OPS_SEGMENT_MATMUL_H
