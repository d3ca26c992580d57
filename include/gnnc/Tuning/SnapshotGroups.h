//===- SnapshotGroups.h - Snapshots per group, dynamic graphs -*- C++ -*-===//
//
// PiPAD's runtime tuner: how many snapshots of a dynamic graph one
// multi-snapshot aggregation (gnn.spmm, strategy = sliced) takes at once,
// and how many groups' structures stay on the GPU between epochs.
//
// A larger group reads the shared edges once for more snapshots, but its
// overlap shrinks (each snapshot adds its churn to every other's exclusive
// edges) and its features grow S times, past the L2 and, on R-MAT 20 at
// width 32, past the point where the group is slower per snapshot than
// smaller ones. So the candidates are measured: for each size S, on the
// series' first group of that size, its aggregation with the default
// sliced kernel and its bytes (features; structure: the overlap once and
// the exclusive parts; work items). Its copies are those bytes over the
// host-to-device bandwidth, measured once: timing each group's copies let
// their noise (about 10%) pick the size where copies dominate, though
// every size copies the same features per snapshot.
//
// Over an epoch every group's features cross to the GPU; a group's
// structure crosses only when it is not cached there. The two groups in
// flight (one aggregated, the next prepared) take their features, results
// and structure; what the memory budget leaves holds the structures of as
// many other groups as fit (the cache). A group costs its copies and its
// aggregation, the larger of the two when the next group's copies run
// beside this one's aggregation (a pipeline), their sum otherwise; the
// size with the least cost per snapshot wins.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_SNAPSHOTGROUPS_H
#define GNNC_TUNING_SNAPSHOTGROUPS_H

#include "gnnc/Plan/Types.h"
#include "gnnc/graph/Snapshots.h"
#include "gnnc/runtime/Runtime.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <vector>

namespace gnnc::tuning {

/// The group sizes tried when none are given (PiPAD's).
inline constexpr int64_t kSnapshotGroupSizes[] = {2, 4, 8};

/// Costs per snapshot within this fraction of each other are a tie, which
/// the lesser aggregation per snapshot breaks (then the larger group): when
/// the copies dominate, every size costs about the same per snapshot and
/// the GPU's share should decide, not the copies' noise.
inline constexpr double kSnapshotGroupTie = 0.05;

/// The bytes of the copy that measures the host-to-device bandwidth.
inline constexpr int64_t kSnapshotGroupBandwidthProbe = int64_t(64) << 20;

struct SnapshotGroupOptions {
  /// Features per snapshot and their type.
  int64_t width = 0;
  ElementType type = ElementType::F32;
  /// Sizes to try (each 1 to limits::kMaxSnapshots); empty:
  /// kSnapshotGroupSizes. Sizes larger than the series are skipped.
  std::vector<int64_t> sizes;
  /// Device bytes the groups may take; 0: half of the device's memory.
  int64_t memoryBudget = 0;
  /// Whether the next group is prepared while this one is aggregated.
  bool pipelined = true;
  /// Host-to-device bandwidth in GB/s; 0: measured (pageable memory, as
  /// gnnc's uploads copy).
  double hostToDeviceGBps = 0;
  /// Timed aggregations per size (median), after two untimed.
  int runs = 10;
  uint64_t seed = 1;
};

struct SnapshotGroupCandidate {
  int64_t snapshots = 0;
  /// The group's shared edges over the edges of an average snapshot.
  double overlapRate = 0;
  /// What crosses to the GPU for one group: its structure (the overlap
  /// once, the exclusive parts) and its features (nodes x S x width).
  int64_t structureBytes = 0, featureBytes = 0;
  /// What one group's structure takes on the GPU (with its work items).
  int64_t residentStructureBytes = 0;
  /// On the series' first group of this size: the copies of its features
  /// and of its structure (bytes over the bandwidth), and its aggregation
  /// (measured: median of the GPU's time, L2 flushed).
  double featureCopyMs = 0, structureCopyMs = 0, aggregateMs = 0;
  /// Filled by pickSnapshotGroup: the groups of this size in the series,
  /// how many keep their structure on the GPU, a group's copies on
  /// average over the epoch, and its cost per snapshot.
  int64_t groups = 0, cachedGroups = 0;
  double copyMs = 0, msPerSnapshot = 0;
  /// Two groups of this size fit the memory budget.
  bool fits = false;

  /// What a group being aggregated or prepared takes on the GPU: its
  /// structure, its features and its results.
  int64_t deviceBytes() const {
    return residentStructureBytes + 2 * featureBytes;
  }
};

struct SnapshotGroupChoice {
  std::vector<SnapshotGroupCandidate> candidates;
  /// The fitting candidate with the least cost per snapshot (ties:
  /// kSnapshotGroupTie); 0 when none fits (aggregate each snapshot alone).
  int64_t snapshots = 0;
  /// Its groups in the series and how many keep their structure on the
  /// GPU (the cache).
  int64_t groups = 0, cachedGroups = 0;
  int64_t memoryBudget = 0;
  double hostToDeviceGBps = 0;
};

/// The choice among measured candidates (pickSnapshotGroup's rules; no
/// GPU): fills each candidate's msPerSnapshot and fits.
SnapshotGroupChoice pickSnapshotGroup(std::vector<SnapshotGroupCandidate> c,
                                      int64_t seriesSnapshots,
                                      int64_t memoryBudget, bool pipelined);

/// Why `options` cannot be tuned over `series` (a width below 1, a size
/// out of 1 to limits::kMaxSnapshots, a negative budget or bandwidth, an
/// empty series), or ok.
Status checkSnapshotGroupOptions(const graph::SnapshotSeries &series,
                                 const SnapshotGroupOptions &options);

/// Measures every size on the series' first group of that size on the
/// runtime's GPU, then pickSnapshotGroup. Fails as
/// checkSnapshotGroupOptions does, when every size exceeds the series, or
/// on a GPU error.
Expected<SnapshotGroupChoice>
chooseSnapshotGroup(rt::Runtime &runtime, const graph::SnapshotSeries &series,
                    const SnapshotGroupOptions &options);

} // namespace gnnc::tuning

#endif // GNNC_TUNING_SNAPSHOTGROUPS_H
