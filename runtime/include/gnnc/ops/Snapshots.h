//===- Snapshots.h - Host side of gnn.spmm over snapshot groups -*- C++ -*-===//
//
// Moves a group of snapshots (graph::SnapshotGroup: the overlap CSR and each
// snapshot's exclusive edges) to the GPU in the layout of the kernels over
// `!gnn.graph<snapshot_csr, ...>`, builds the work items of a sliced kernel
// on the GPU on first use (from the offsets already there, so that only
// the group's structure crosses to the GPU), launches it, and checks it
// against the CPU reference, snapshot by snapshot.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_OPS_SNAPSHOTS_H
#define GNNC_OPS_SNAPSHOTS_H

#include "gnnc/graph/Snapshots.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/runtime/Driver.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
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
/// count and flags. The rules of a row are gnnc/cuda/snapshot_slices.cuh's,
/// which the GPU build runs too (buildSnapshotSlicesOnGpu).
struct SnapshotSlices {
  std::vector<int64_t> begin;
  std::vector<int64_t> words;
  int64_t splitRows = 0;
  int64_t count() const { return static_cast<int64_t>(words.size()); }
};
/// The items of a group whose overlap has the row offsets `rowPtr` and
/// whose exclusive edges have the stacked offsets `exclusiveOffsets`
/// (graph::stackExclusive: `snapshots` x (rows + 1)). Fails on a slice size
/// below 1 or above limits::kMaxSliceSize, more rows than 32 bits hold,
/// more snapshots than 16 bits hold or offsets of the wrong size; `name`
/// for messages. The host's count, scan and fill, in the order of the GPU
/// build: the reference of that build, and its fallback.
Expected<SnapshotSlices>
snapshotSlices(const std::vector<int64_t> &rowPtr,
               const std::vector<int64_t> &exclusiveOffsets, int64_t snapshots,
               int64_t sliceSize, const std::string &name);

/// Where a group's work items are built.
enum class SliceBuilder {
  /// On the GPU, from the row offsets the group already holds there: no
  /// byte of the items crosses to the GPU.
  Gpu,
  /// On the host (snapshotSlices), then uploaded: 16 bytes an item.
  Host,
};

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
  /// The exclusive offsets on the host, for the host builder.
  std::vector<int64_t> hostExclusiveOffsets;
  /// Bytes the upload moved to the GPU (structure only: overlap once,
  /// exclusive parts, their offsets): the ideal.
  int64_t uploadedBytes = 0;
  /// Where launchSnapshotSpmm builds the work items of a slice size.
  SliceBuilder builder = SliceBuilder::Gpu;
  struct DeviceSlices {
    rt::DeviceBuffer begin;
    rt::DeviceBuffer words;
    int64_t count = 0;
    int64_t splitRows = 0;
    /// Where they were built, and the bytes that crossed to the GPU for
    /// them (0 when built there); `fallback` says why a GPU build fell
    /// back to the host.
    SliceBuilder builtBy = SliceBuilder::Gpu;
    int64_t uploadedBytes = 0;
    std::string fallback;
    /// A GPU build's count and scan buffers, kept with the items so that
    /// the build never waits for the GPU (freeing device memory would).
    std::vector<rt::DeviceBuffer> scratch;
    /// A GPU build's end, recorded on the stream it was queued on
    /// (`builtOn`): launches on another stream wait for it on the GPU.
    std::shared_ptr<rt::StreamEvent> ready;
    void *builtOn = nullptr;
    /// The bytes they take on the GPU (the items; the scratch apart).
    int64_t deviceBytes() const { return count * kSliceItemBytes; }
    int64_t scratchBytes() const {
      int64_t bytes = 0;
      for (const rt::DeviceBuffer &b : scratch)
        bytes += static_cast<int64_t>(b.size());
      return bytes;
    }
  };
  /// By slice size, built on first use (snapshotSlicesOf; not safe to
  /// launch from two threads at once).
  mutable std::map<int64_t, DeviceSlices> slices;
  /// The bytes of one work item: its begin and its word.
  static constexpr int64_t kSliceItemBytes = 16;
};

/// Uploads `group` with 64- or 32-bit row offsets and column indices; fails
/// if the overlap or the exclusive edges do not fit the 32-bit form.
Expected<DeviceSnapshotGroup>
uploadSnapshotGroup(const graph::SnapshotGroup &group, bool offsets64,
                    bool indices64);

/// The CUDA of the GPU build of the work items (the extern "C" entries of
/// gnnc/cuda/snapshot_slices.cuh's kernels) and its kernels: count and
/// fill for i32 and i64 overlap offsets, the scan of a tile and the
/// add-back.
std::string snapshotSliceKernelSource();
std::vector<rt::KernelSpec> snapshotSliceKernelSpecs();

/// Builds the work items of `group` for `sliceSize` on the GPU from its
/// row offsets there, bit for bit snapshotSlices' table; queued on
/// `stream` (a CUstream; null: the default stream) without waiting for
/// the GPU: the table's size comes from the group's host offsets (the same
/// row rules), and the count and scan buffers stay with the items. Fails as
/// snapshotSlices does, on device offsets smaller than the group's shape, or
/// when the build's kernels cannot be loaded. With `poison` (for tests) the
/// table is filled with 0xff bytes first, so that an item the build misses
/// shows: at once, on the default stream, without waiting for the work
/// queued on `stream` (the build waits for the poison on the GPU), so that
/// until a build queued behind busy work ends, the table reads as poison.
Expected<DeviceSnapshotGroup::DeviceSlices>
buildSnapshotSlicesOnGpu(rt::Runtime &runtime, const DeviceSnapshotGroup &group,
                         int64_t sliceSize, const std::string &name,
                         void *stream = nullptr, bool poison = false);

/// The work items of `sliceSize` of `group`, built on first use where
/// group.builder says (launchSnapshotSpmm calls it). The GPU build falls
/// back to the host only when its kernels cannot be loaded on this GPU
/// (NVRTC or the driver refuses them; the reason goes to
/// DeviceSlices::fallback). Work queued next on `stream` sees the items:
/// built on another stream, `stream` waits for that build on the GPU.
Expected<const DeviceSnapshotGroup::DeviceSlices *>
snapshotSlicesOf(rt::Runtime &runtime, const DeviceSnapshotGroup &group,
                 int64_t sliceSize, const std::string &name,
                 void *stream = nullptr);

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

/// Compares `got`, what `kernel` wrote over `group` from the features `x`
/// (numNodes rows of S x F each), with snapshotSpmmReference, each row
/// allowed the tolerance of its degree in each snapshot (the atomic pieces
/// of its work items): checkSnapshotSpmm's comparison, for a caller that
/// launched the kernel itself (e.g. on a stream of its own). Fails on a
/// kernel of another op or group size, or on sizes that do not match.
Expected<KernelCheck> compareSnapshotSpmm(const rt::LoadedKernel &kernel,
                                          const graph::SnapshotGroup &group,
                                          const std::vector<float> &x,
                                          const std::vector<float> &got);

/// Runs `kernel` on `group` with fresh random features drawn from `seed`,
/// the output poisoned with NaN first, and compares every element with
/// snapshotSpmmReference (compareSnapshotSpmm).
Expected<KernelCheck> checkSnapshotSpmm(rt::Runtime &runtime,
                                        const rt::LoadedKernel &kernel,
                                        const graph::SnapshotGroup &group,
                                        uint64_t seed);

} // namespace gnnc::ops

#endif // GNNC_OPS_SNAPSHOTS_H
