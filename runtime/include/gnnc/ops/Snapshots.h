//===- Snapshots.h - Host side of gnn.spmm over snapshot groups -*- C++ -*-===//
//
// Moves a group of snapshots (graph::SnapshotGroup: the overlap CSR and each
// snapshot's exclusive edges) to the GPU in the layout of the kernels over
// `!gnn.graph<snapshot_csr, ...>`, cuts the overlap into the slices of a
// sliced kernel on first use, launches it, and checks it against the CPU
// reference, snapshot by snapshot.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_OPS_SNAPSHOTS_H
#define GNNC_OPS_SNAPSHOTS_H

#include "gnnc/graph/Snapshots.h"
#include "gnnc/ops/Spmm.h"

#include <cstdint>
#include <map>
#include <vector>

namespace gnnc::ops {

/// The work items of a sliced kernel (PiPAD's sliced CSR; the layout of
/// ParamRole::SliceOffsets and SliceRows, gnnc/Plan/Abi.h), row by row:
/// the row's overlap edges cut into slices of at most `sliceSize` (at least
/// one slice, possibly empty, which still adds the row's exclusive edges
/// and writes the row), then, for each snapshot s whose exclusive edges in
/// the row outnumber `sliceSize` (the row's first slice takes that many),
/// the rest in slices of at most `sliceSize`; with the first slices of the
/// rows that have several items moved to the front (`splitRows` of them).
/// `begin` holds each item's first edge, `words` its row, snapshot, edge
/// count and flags.
struct SnapshotSlices {
  std::vector<int64_t> begin;
  std::vector<int64_t> words;
  int64_t splitRows = 0;
  int64_t count() const { return static_cast<int64_t>(words.size()); }
};
/// The items of a group whose overlap has the row offsets `rowPtr` and
/// whose exclusive edges have the stacked offsets `exclusiveOffsets`
/// (graph::stackExclusive: `snapshots` x (rows + 1)). Fails on a slice size
/// below 1 or above limits::kMaxSliceSize, more rows than 32 bits hold or
/// offsets of the wrong size;
/// `name` for messages.
Expected<SnapshotSlices>
snapshotSlices(const std::vector<int64_t> &rowPtr,
               const std::vector<int64_t> &exclusiveOffsets, int64_t snapshots,
               int64_t sliceSize, const std::string &name);

/// A group of snapshots on the GPU.
struct DeviceSnapshotGroup {
  /// The overlap: the graph's own row offsets and column indices.
  DeviceGraph overlap;
  /// The snapshots' exclusive edges (graph::stackExclusive): i64 offsets,
  /// S x (numRows + 1), and column indices of the overlap's index width.
  rt::DeviceBuffer exclusiveOffsets;
  rt::DeviceBuffer exclusiveIndices;
  int64_t snapshots = 0;
  int64_t exclusiveEdges = 0;
  /// The exclusive offsets on the host, from which launchSnapshotSpmm cuts
  /// the work items of a slice size on first use.
  std::vector<int64_t> hostExclusiveOffsets;
  /// Bytes the upload moved to the GPU (structure only: overlap once,
  /// exclusive parts, their offsets).
  int64_t uploadedBytes = 0;
  struct DeviceSlices {
    rt::DeviceBuffer begin;
    rt::DeviceBuffer words;
    int64_t count = 0;
    int64_t splitRows = 0;
  };
  /// By slice size, cut on first use (launchSnapshotSpmm; not safe to
  /// launch from two threads at once).
  mutable std::map<int64_t, DeviceSlices> slices;
};

/// Uploads `group` with 64- or 32-bit row offsets and column indices; fails
/// if the overlap or the exclusive edges do not fit the 32-bit form.
Expected<DeviceSnapshotGroup>
uploadSnapshotGroup(const graph::SnapshotGroup &group, bool offsets64,
                    bool indices64);

/// The column factors of a group's snapshots that a kernel with scale =
/// right or both reads: snapshot s's deg_in(c)^-exponent (0 for a column
/// without edges) at s x numNodes + c, as f32 (ref::columnNormFactors of
/// each snapshot).
std::vector<float> snapshotColumnNorm(const graph::SnapshotGroup &group,
                                      double exponent = 0.5);
Expected<rt::DeviceBuffer>
uploadSnapshotColumnNorm(const graph::SnapshotGroup &group,
                         double exponent = 0.5);

/// Launches a compiled gnn.spmm over a snapshot group (strategy = sliced):
/// `x` and `y` hold numNodes rows of S x F elements (the snapshots'
/// features side by side); `colNorm` (uploadSnapshotColumnNorm) must be
/// given exactly when the kernel scales columns. Fails, without launching,
/// on a kernel over another graph or another number of snapshots.
Status launchSnapshotSpmm(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                          const DeviceSnapshotGroup &group,
                          const rt::DeviceBuffer &x, rt::DeviceBuffer &y,
                          const rt::DeviceBuffer *colNorm = nullptr,
                          bool synchronize = true, void *stream = nullptr);

/// The CPU reference of gnn.spmm over `group` with `options`: for each
/// snapshot s, gnn.spmm over snapshot s (overlap and exclusive edges) of
/// snapshot s's features, in double. `x` and the result hold numNodes rows
/// of S x `width` (width = F); `magnitude` (when given) gets each output's
/// sum of term magnitudes.
std::vector<double> snapshotSpmmReference(const graph::SnapshotGroup &group,
                                          const std::vector<float> &x,
                                          int64_t width,
                                          const ref::SpmmOptions &options,
                                          std::vector<double> *magnitude);

/// Runs `kernel` on `group` with fresh random features drawn from `seed`,
/// the output poisoned with NaN first, and compares every element with
/// snapshotSpmmReference.
Expected<KernelCheck> checkSnapshotSpmm(rt::Runtime &runtime,
                                        const rt::LoadedKernel &kernel,
                                        const graph::SnapshotGroup &group,
                                        uint64_t seed);

} // namespace gnnc::ops

#endif // GNNC_OPS_SNAPSHOTS_H
