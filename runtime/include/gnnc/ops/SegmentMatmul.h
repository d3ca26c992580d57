//===- SegmentMatmul.h - Host side of gnn.segment_matmul --------*- C++ -*-===//
//
// The routing table of the tile_routed strategy (FASTEN): each type's rows
// cut into tiles of at most tile_rows rows, listed in type order so that
// the tiles sharing a weight matrix run together, and the number of
// persistent blocks that walk it; the launch of a compiled kernel and its
// check against the double-precision CPU reference.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_OPS_SEGMENT_MATMUL_H
#define GNNC_OPS_SEGMENT_MATMUL_H

#include "gnnc/Plan/Abi.h"
#include "gnnc/Plan/Schedule.h"
#include "gnnc/Plan/Types.h"
#include "gnnc/ops/Spmm.h"
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
/// checkSegmentOffsets refuses and on tileRows < 1. On the device the tiles
/// are followed by their partition among groups (uploadRouteTable).
Expected<std::vector<int64_t>> buildRouteTable(const int64_t *seg,
                                               int64_t numOffsets, int64_t rows,
                                               int64_t tileRows);

/// The splits of a weight gradient's routing table shared among `groups`
/// groups of blocks: `tiles` in the same order, some cut in two, and the
/// first tile of each group with the end (groups + 1 entries). A group's
/// work is its splits' rows plus splitCostRows for each split
/// (segmentSplitCostRows); the groups are filled in order up to the least
/// largest work that `groups` groups reach (a binary search over greedy
/// fills), a split cut where a group is full. So a long split is shared
/// between groups and a group of many short splits gets fewer rows. Where
/// that does not cut the largest group's work by 1 /
/// kSegmentPartitionMinGain against runs of equal split counts (whole), or
/// fills would need more groups, those runs are the partition. No split
/// crosses a type; a cut leaves no piece under routeCutMinRows rows.
struct RoutePartition {
  std::vector<int64_t> tiles;
  std::vector<int64_t> groupStarts;
};
RoutePartition partitionRouteTable(const std::vector<int64_t> &tiles,
                                   int64_t groups, int64_t splitCostRows);

/// The shortest piece of a split that partitionRouteTable's cuts leave:
/// the split's cost, at least kSegmentMinCutRows.
int64_t routeCutMinRows(int64_t splitCostRows);

/// The persistent blocks to launch (ParamRole::RouteBlocks) for `tiles`
/// tiles when `residentBlocks` blocks fit the GPU at once: at most one per
/// tile, at most the resident ones, at least one (an empty table still
/// gets its launch). Blocks that work in groups of `group` (the weight
/// gradient's result blocks on tensor cores: routeBlockGroup) come in
/// whole groups where one fits.
int64_t routeBlocks(int64_t tiles, int64_t residentBlocks, int64_t group = 1);

/// Whether `spec`'s blocks walk its routing table in groups: a weight
/// gradient on tensor cores (WeightGradItems in
/// gnnc/cuda/segment_matmul.cuh), whose blocks of a group take the result
/// blocks of the same splits.
bool routesInGroups(const rt::KernelSpec &spec);

/// The blocks of `spec`'s groups (routeBlocks): the result blocks of a
/// split where routesInGroups, else 1.
int64_t routeBlockGroup(const rt::KernelSpec &spec);

/// The groups of `group` blocks that routeBlocks launches for `items` work
/// items when `residentBlocks` fit; 0 when fewer blocks than a group run
/// (each then walks its run of the items alone).
int64_t routeGroups(int64_t items, int64_t residentBlocks, int64_t group);

/// The persistent blocks of `spec` (a tile_routed gnn.segment_matmul) that
/// stay resident at once on `smCount` SMs: as many per SM as its threads
/// and shared memory allow (gnnc/Plan/Limits.h), at least one.
int64_t residentRouteBlocks(const rt::KernelSpec &spec, int smCount);

/// The persistent blocks of `kernel` that stay resident on the runtime's
/// GPU: the driver's count for the compiled kernel (its registers, and the
/// shared memory this GPU has; taken when it was loaded), else
/// residentRouteBlocks. A block that waited for another to finish would
/// leave its whole run of items to a second wave.
int64_t residentKernelBlocks(rt::Runtime &runtime,
                             const rt::LoadedKernel &kernel);

/// A routing table on the device.
struct DeviceRouteTable {
  rt::DeviceBuffer tiles;
  int64_t numTiles = 0;
  /// The types of the segment layout (its offsets less one), for kernels
  /// that take them (a TF32 wgmma forward's prelude copies every type's
  /// weights).
  int64_t numTypes = 0;
  /// The groups the tiles are partitioned for (partitionRouteTable), whose
  /// blocks the launch runs; 0: not partitioned.
  int64_t groups = 0;
};

/// Builds the routing table of `seg` (num_types + 1 offsets over `rows`
/// input rows) with the tile_rows of `kernel`'s schedule and uploads it,
/// followed by its partition: for kernels that routesInGroups and launch
/// G = routeGroups groups on the runtime's GPU, the tiles of
/// partitionRouteTable, then G and the G + 1 group starts; for the others
/// the tiles, then 0.
Expected<DeviceRouteTable> uploadRouteTable(rt::Runtime &runtime,
                                            const rt::LoadedKernel &kernel,
                                            const std::vector<int64_t> &seg,
                                            int64_t rows);

/// The work items the persistent blocks of `spec` (a tile_routed
/// segmented matmul) walk over a routing table of `tiles` tiles: tiles x
/// the items per tile of its plan (segmentRouteItemsPerTile: column blocks
/// or weight-gradient tiles on tensor cores, 1 for SIMT).
int64_t routeWorkItems(const rt::KernelSpec &spec, int64_t tiles);

/// The relative tolerance (of each output's term magnitude) of a
/// segmented matmul of `op` under `s` against the double-precision
/// reference: spmmTolerance(type), or for f32 on tensor cores (TF32
/// inputs) 2^-9 with mma.sync and 2^-8 with wgmma (truncated inputs; the
/// reasoning is at its definition).
double segmentMatmulTolerance(const OpDesc &op, const Schedule &s);

/// Launches a gnn.segment_matmul kernel: `x` (rows x K), `w` (num_types x
/// K x M), the device copy of the segment offsets `seg` and its routing
/// table to `y` (rows x M), on residentRouteBlocks blocks at most. With
/// transpose_weights `x` has M columns and `y` K (the input gradient).
Status launchSegmentMatmul(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                           const rt::DeviceBuffer &x, const rt::DeviceBuffer &w,
                           const rt::DeviceBuffer &seg,
                           const DeviceRouteTable &table, rt::DeviceBuffer &y,
                           bool synchronize = true, void *stream = nullptr);

/// Launches a gnn.segment_matmul_weight_grad kernel and its follow-up:
/// `x` (rows x K), `dy` (rows x M), the device segment offsets of
/// `numTypes` types and their routing table (splits of tile_rows rows) to
/// `dw` (num_types x K x M). The partials go to the runtime's scratch
/// buffer (one K x M f32 block per split).
Status launchSegmentMatmulWeightGrad(
    rt::Runtime &runtime, const rt::LoadedKernel &kernel,
    const rt::DeviceBuffer &x, const rt::DeviceBuffer &dy,
    const rt::DeviceBuffer &seg, int64_t numTypes,
    const DeviceRouteTable &table, rt::DeviceBuffer &dw,
    bool synchronize = true, void *stream = nullptr);

/// Runs a gnn.segment_matmul_weight_grad kernel on the segments `seg` with
/// random inputs and output gradients drawn from `seed` and a NaN-poisoned
/// result, and compares every output with the double-precision reference.
Expected<KernelCheck>
checkSegmentMatmulWeightGrad(rt::Runtime &runtime,
                             const rt::LoadedKernel &kernel,
                             const std::vector<int64_t> &seg, uint64_t seed);

/// Runs a gnn.segment_matmul kernel on the segments `seg` with random
/// inputs and weights drawn from `seed` and a NaN-poisoned output, and
/// compares every output with the double-precision reference (with
/// transpose_weights, the input gradient's).
Expected<KernelCheck> checkSegmentMatmul(rt::Runtime &runtime,
                                         const rt::LoadedKernel &kernel,
                                         const std::vector<int64_t> &seg,
                                         uint64_t seed);

} // namespace gnnc::ops

#endif // GNNC_OPS_SEGMENT_MATMUL_H
