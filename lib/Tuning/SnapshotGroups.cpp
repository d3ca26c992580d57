//===- SnapshotGroups.cpp - Snapshots per group of a dynamic graph --------===//

#include "gnnc/Tuning/SnapshotGroups.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/Limits.h"
#include "gnnc/Plan/OpText.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/ops/Snapshots.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/reference/Spmm.h"
#include "gnnc/runtime/Timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

using namespace gnnc;
using namespace gnnc::tuning;

SnapshotGroupChoice
gnnc::tuning::pickSnapshotGroup(std::vector<SnapshotGroupCandidate> candidates,
                                int64_t seriesSnapshots, int64_t memoryBudget,
                                bool pipelined) {
  SnapshotGroupChoice choice;
  choice.memoryBudget = memoryBudget;
  for (SnapshotGroupCandidate &c : candidates) {
    if (c.snapshots < 1)
      continue;
    // The group aggregated and the next one prepared beside it.
    c.fits = 2 * c.deviceBytes() <= memoryBudget;
    c.groups = (seriesSnapshots + c.snapshots - 1) / c.snapshots;
    const int64_t left =
        std::max<int64_t>(0, memoryBudget - 2 * c.deviceBytes());
    c.cachedGroups = std::min<int64_t>(
        c.groups, left / std::max<int64_t>(1, c.residentStructureBytes));
    c.copyMs = c.featureCopyMs + c.structureCopyMs *
                                     double(c.groups - c.cachedGroups) /
                                     double(std::max<int64_t>(1, c.groups));
    const double group = pipelined ? std::max(c.copyMs, c.aggregateMs)
                                   : c.copyMs + c.aggregateMs;
    c.msPerSnapshot = group / double(c.snapshots);
  }
  // Whether a costs less than b per snapshot; a tie (kSnapshotGroupTie)
  // goes to the lesser aggregation per snapshot, then the larger group.
  auto better = [](const SnapshotGroupCandidate &a,
                   const SnapshotGroupCandidate &b) {
    const double tie =
        kSnapshotGroupTie * std::min(a.msPerSnapshot, b.msPerSnapshot);
    if (std::abs(a.msPerSnapshot - b.msPerSnapshot) > tie)
      return a.msPerSnapshot < b.msPerSnapshot;
    const double aa = a.aggregateMs / double(a.snapshots),
                 ba = b.aggregateMs / double(b.snapshots);
    if (aa != ba)
      return aa < ba;
    return a.snapshots > b.snapshots;
  };
  const SnapshotGroupCandidate *best = nullptr;
  for (const SnapshotGroupCandidate &c : candidates)
    if (c.fits && (!best || better(c, *best)))
      best = &c;
  if (best) {
    choice.snapshots = best->snapshots;
    choice.groups = best->groups;
    choice.cachedGroups = best->cachedGroups;
  }
  choice.candidates = std::move(candidates);
  return choice;
}

namespace {

/// The host-to-device bandwidth from pageable memory (gnnc's uploads), in
/// bytes per millisecond: the fastest of three copies of
/// kSnapshotGroupBandwidthProbe bytes.
Expected<double> hostToDeviceBytesPerMs() {
  const size_t bytes = static_cast<size_t>(kSnapshotGroupBandwidthProbe);
  std::vector<uint8_t> host(bytes, 1);
  Expected<rt::DeviceBuffer> device = rt::DeviceBuffer::allocate(bytes);
  if (!device)
    return device.status().withContext("allocating the copy probe");
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    GNNC_RETURN_IF_ERROR(device->copyFromHost(host.data(), host.size()));
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    best = i == 0 ? ms : std::min(best, ms);
  }
  return double(bytes) / std::max(best, 1e-6);
}

/// Measures the series' first group of `size` snapshots; its copies at
/// `bytesPerMs`.
Expected<SnapshotGroupCandidate>
measure(rt::Runtime &runtime, rt::KernelTimer &timer,
        const graph::SnapshotSeries &series, int64_t size,
        const SnapshotGroupOptions &options, double bytesPerMs) {
  const std::string name = "series '" + series.name + "', groups of " +
                           std::to_string(size) + " snapshots";
  Expected<graph::SnapshotGroup> group = graph::overlapGroup(series, 0, size);
  if (!group)
    return group.status().withContext(name);
  // The group's rows: S snapshots of `width` features side by side.
  OpDesc op = spmmOp(options.type, size * options.width);
  op.snapshots = size;
  const std::string text =
      opModuleText("tune_groups", "spmm", op, defaultSchedule(op));
  Expected<CompiledModule> compiled = compileGnn(text, "snapshot-groups.gnn");
  if (!compiled)
    return compiled.status().withContext(name);
  if (compiled->kernels.size() != 1)
    return Status::error(name + ": compiling one gnn.spmm gave " +
                         std::to_string(compiled->kernels.size()) + " kernels");
  Expected<rt::LoadedKernel> kernel = runtime.load(compiled->kernels.front());
  if (!kernel)
    return kernel.status().withContext(name);

  SnapshotGroupCandidate c;
  c.snapshots = size;
  c.overlapRate = group->overlapRate();
  const int64_t count = group->numNodes * op.width;
  c.featureBytes = count * static_cast<int64_t>(elementSize(op.type));
  std::vector<float> features = ref::randomFeatures(count, options.seed);
  Expected<ops::DeviceSnapshotGroup> dg =
      ops::uploadSnapshotGroup(*group, op.offsets64, op.indices64);
  if (!dg)
    return dg.status().withContext(name);
  Expected<rt::DeviceBuffer> x = ops::uploadTensor(features, op.type);
  if (!x)
    return x.status().withContext(name);
  Expected<const ops::DeviceSnapshotGroup::DeviceSlices *> slices =
      ops::snapshotSlicesOf(runtime, *dg, kernel->spec.schedule.sliceSize, name,
                            nullptr);
  if (!slices)
    return slices.status();
  c.structureBytes = dg->uploadedBytes;
  c.residentStructureBytes =
      dg->uploadedBytes + (*slices)->deviceBytes() + (*slices)->scratchBytes();
  c.featureCopyMs = double(c.featureBytes) / bytesPerMs;
  c.structureCopyMs = double(c.structureBytes) / bytesPerMs;

  Expected<rt::DeviceBuffer> y =
      ops::allocatePoisoned(static_cast<size_t>(count), op.type);
  if (!y)
    return y.status().withContext(name);
  rt::TimingOptions timing;
  timing.warmups = 2;
  timing.runs = std::max(1, options.runs);
  timing.flushL2 = true;
  Expected<rt::TimingStats> stats = timer.time(timing, [&]() {
    return ops::launchSnapshotSpmm(runtime, *kernel, *dg, *x, *y, nullptr,
                                   /*synchronize=*/false);
  });
  if (!stats)
    return stats.status().withContext(name);
  c.aggregateMs = stats->medianMs;
  return c;
}

} // namespace

namespace {

std::string tuningName(const graph::SnapshotSeries &series) {
  return "choosing the group size of series '" + series.name + "'";
}

std::vector<int64_t> sizesOf(const SnapshotGroupOptions &options) {
  if (!options.sizes.empty())
    return options.sizes;
  return {std::begin(kSnapshotGroupSizes), std::end(kSnapshotGroupSizes)};
}

} // namespace

Status
gnnc::tuning::checkSnapshotGroupOptions(const graph::SnapshotSeries &series,
                                        const SnapshotGroupOptions &options) {
  const std::string name = tuningName(series);
  if (options.width < 1)
    return Status::error(name + ": width is " + std::to_string(options.width) +
                         "; at least 1");
  for (int64_t s : sizesOf(options))
    if (s < 1 || s > limits::kMaxSnapshots)
      return Status::error(name + ": a group of " + std::to_string(s) +
                           " snapshots; a group holds 1 to " +
                           std::to_string(limits::kMaxSnapshots));
  if (!(options.hostToDeviceGBps >= 0))
    return Status::error(name + ": hostToDeviceGBps is " +
                         std::to_string(options.hostToDeviceGBps) +
                         "; 0 (measured) or more");
  if (options.memoryBudget < 0)
    return Status::error(name + ": memoryBudget is " +
                         std::to_string(options.memoryBudget) +
                         "; 0 (half the device's memory) or more");
  if (series.size() < 1)
    return Status::error(name + ": the series has no snapshots");
  return Status::ok();
}

Expected<SnapshotGroupChoice>
gnnc::tuning::chooseSnapshotGroup(rt::Runtime &runtime,
                                  const graph::SnapshotSeries &series,
                                  const SnapshotGroupOptions &options) {
  GNNC_RETURN_IF_ERROR(checkSnapshotGroupOptions(series, options));
  GNNC_RETURN_IF_ERROR(runtime.device().makeCurrent());
  int64_t budget = options.memoryBudget;
  if (budget == 0)
    budget = static_cast<int64_t>(runtime.device().totalMemory() / 2);
  double bytesPerMs = options.hostToDeviceGBps * 1e6;
  if (bytesPerMs <= 0) {
    Expected<double> measured = hostToDeviceBytesPerMs();
    if (!measured)
      return measured.status().withContext(tuningName(series));
    bytesPerMs = *measured;
  }
  Expected<rt::KernelTimer> timer = rt::KernelTimer::create(runtime.device());
  if (!timer)
    return timer.status();
  std::vector<SnapshotGroupCandidate> candidates;
  for (int64_t s : sizesOf(options)) {
    if (s > series.size())
      continue;
    Expected<SnapshotGroupCandidate> c =
        measure(runtime, *timer, series, s, options, bytesPerMs);
    if (!c)
      return c.status();
    candidates.push_back(*c);
  }
  if (candidates.empty())
    return Status::error(tuningName(series) +
                         ": every size tried exceeds the series' " +
                         std::to_string(series.size()) + " snapshots");
  SnapshotGroupChoice choice = pickSnapshotGroup(
      std::move(candidates), series.size(), budget, options.pipelined);
  choice.hostToDeviceGBps = bytesPerMs / 1e6;
  return choice;
}
