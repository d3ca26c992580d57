//===- Snapshots.cpp - Host side of gnn.spmm over snapshot groups ---------===//
#include "gnnc/ops/Snapshots.h"

#include "CheckSupport.h"
#include "gnnc/Plan/Abi.h"
#include "gnnc/Plan/Limits.h"
#include "gnnc/cuda/snapshot_slices.cuh"
#include "gnnc/ops/KernelInfo.h"

#include <algorithm>
#include <limits>

using namespace gnnc;
using namespace gnnc::ops;
using checks::uploadVector;

namespace {

namespace rules = gnnc::cuda::slices;

/// The word layout of gnnc/Plan/Abi.h, for the rules of
/// gnnc/cuda/snapshot_slices.cuh.
using SliceWord = rules::SliceWord<kSliceSnapshotShift, kSliceLengthShift,
                                   kSliceFirst, kSliceSplit>;

static_assert(limits::kMaxSliceSize < (1 << 13),
              "a slice's edge count fits the 13 bits of its word");

/// What both builders refuse: a slice size out of range, more rows than a
/// word's 32 bits or more snapshots than its 16 bits hold.
Status checkSliceShape(int64_t rows, int64_t snapshots, int64_t sliceSize,
                       const std::string &name) {
  if (sliceSize < 1 || sliceSize > limits::kMaxSliceSize)
    return Status::error("slice size " + std::to_string(sliceSize) + " " +
                         name + ": must be from 1 to " +
                         std::to_string(limits::kMaxSliceSize));
  if (rows < 0)
    return Status::error("graph " + name + " has a negative row count, " +
                         std::to_string(rows));
  if (rows > std::numeric_limits<uint32_t>::max())
    return Status::error("graph " + name + " has " + std::to_string(rows) +
                         " rows; slice words hold 32-bit rows");
  if (snapshots < 1 || snapshots > 0xffff)
    return Status::error("group " + name + " has " + std::to_string(snapshots) +
                         " snapshots; slice words hold from 1 to 65,535");
  return Status::ok();
}

} // namespace

/// The exclusive scan of (items - split, split) over a group's rows by the
/// row rules, into `prefix` (2 per row) when given; returns the totals,
/// (items - split rows, split rows). The host build runs it whole; the GPU
/// build sizes its table with the totals, so it never waits for the GPU to
/// read its own scan's totals back.
static std::pair<int64_t, int64_t>
sliceScan(const std::vector<int64_t> &rowPtr,
          const std::vector<int64_t> &exclusiveOffsets, int64_t snapshots,
          int64_t sliceSize, std::vector<int64_t> *prefix) {
  const int64_t rows = static_cast<int64_t>(rowPtr.size()) - 1;
  if (prefix)
    prefix->resize(2 * rows);
  int64_t rest = 0, split = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t items = rules::rowItems(
        rowPtr.data(), exclusiveOffsets.data(), rows, snapshots, r, sliceSize);
    if (prefix) {
      (*prefix)[2 * r] = rest;
      (*prefix)[2 * r + 1] = split;
    }
    rest += items - (items > 1);
    split += items > 1;
  }
  return {rest, split};
}

Expected<SnapshotSlices>
gnnc::ops::snapshotSlices(const std::vector<int64_t> &rowPtr,
                          const std::vector<int64_t> &exclusiveOffsets,
                          int64_t snapshots, int64_t sliceSize,
                          const std::string &name) {
  if (rowPtr.empty())
    return Status::error("row offsets " + name + " are empty");
  const int64_t rows = static_cast<int64_t>(rowPtr.size()) - 1;
  GNNC_RETURN_IF_ERROR(checkSliceShape(rows, snapshots, sliceSize, name));
  if (static_cast<int64_t>(exclusiveOffsets.size()) != snapshots * (rows + 1))
    return Status::error("exclusive offsets " + name + ": expected " +
                         std::to_string(snapshots) + " x " +
                         std::to_string(rows + 1) + ", got " +
                         std::to_string(exclusiveOffsets.size()));
  // The GPU build's steps in one thread: count, exclusive scan of (items -
  // split, split), fill.
  const int64_t *ptr = rowPtr.data(), *excl = exclusiveOffsets.data();
  std::vector<int64_t> prefix;
  const auto [rest, split] =
      sliceScan(rowPtr, exclusiveOffsets, snapshots, sliceSize, &prefix);
  SnapshotSlices out;
  out.begin.resize(rest + split);
  out.words.resize(rest + split);
  out.splitRows = split;
  for (int64_t r = 0; r < rows; ++r)
    rules::fillRowItems<SliceWord>(ptr, excl, rows, snapshots, r, sliceSize,
                                   prefix[2 * r + 1], split + prefix[2 * r],
                                   out.begin.data(), out.words.data(), 0, 1);
  return out;
}

//===----------------------------------------------------------------------===//
// The work items built on a GPU
//===----------------------------------------------------------------------===//

namespace {

const char *offsetSuffix(bool offsets64) { return offsets64 ? "i64" : "i32"; }

std::string countKernelName(bool offsets64) {
  return std::string("gnnc_snapshot_slices_count_") + offsetSuffix(offsets64);
}
std::string fillKernelName(bool offsets64) {
  return std::string("gnnc_snapshot_slices_fill_") + offsetSuffix(offsets64);
}
constexpr const char *kScanKernel = "gnnc_snapshot_slices_scan";
constexpr const char *kAddKernel = "gnnc_snapshot_slices_add";

} // namespace

std::string gnnc::ops::snapshotSliceKernelSource() {
  const std::string word = "gnnc::cuda::slices::SliceWord<" +
                           std::to_string(kSliceSnapshotShift) + ", " +
                           std::to_string(kSliceLengthShift) + ", " +
                           std::to_string(kSliceFirst) + "ll, " +
                           std::to_string(kSliceSplit) + "ll>";
  std::string source =
      "// The work items of sliced gnn.spmm kernels, built on a GPU (gnnc "
      "ops).\n#include \"gnnc/cuda/snapshot_slices.cuh\"\n\n"
      "using GnncSliceWord = " +
      word + ";\n";
  for (bool offsets64 : {false, true}) {
    const std::string type = offsets64 ? "long long" : "int";
    source += "\nextern \"C\" __global__ void " + countKernelName(offsets64) +
              "(const " + type +
              " *row_ptr, const long long *excl_ptr,\n"
              "    long long num_rows, long long snapshots, long long "
              "slice_size, long long *pairs) {\n"
              "  gnnc::cuda::slices::countRows(row_ptr, excl_ptr, num_rows, "
              "snapshots, slice_size, pairs);\n}\n";
    source += "\nextern \"C\" __global__ void " + fillKernelName(offsets64) +
              "(const " + type +
              " *row_ptr, const long long *excl_ptr,\n"
              "    long long num_rows, long long snapshots, long long "
              "slice_size, const long long *prefix,\n"
              "    long long num_split, long long *begin, long long *words) "
              "{\n"
              "  gnnc::cuda::slices::fillRows<GnncSliceWord>(row_ptr, "
              "excl_ptr, num_rows, snapshots,\n"
              "      slice_size, prefix, num_split, begin, words);\n}\n";
  }
  const std::string bounds =
      "__launch_bounds__(" + std::to_string(rules::kSliceScanThreads) + ")";
  source += "\nextern \"C\" __global__ void " + bounds + " " + kScanKernel +
            "(long long *pairs,\n"
            "    long long num_pairs, long long *tile_sums) {\n"
            "  gnnc::cuda::slices::scanTile(pairs, num_pairs, tile_sums);\n}\n";
  source += "\nextern \"C\" __global__ void " + bounds + " " + kAddKernel +
            "(long long *pairs,\n"
            "    long long num_pairs, const long long *tile_offsets) {\n"
            "  gnnc::cuda::slices::addTileOffsets(pairs, num_pairs, "
            "tile_offsets);\n}\n";
  return source;
}

std::vector<rt::KernelSpec> gnnc::ops::snapshotSliceKernelSpecs() {
  const std::string source = snapshotSliceKernelSource();
  using P = rt::KernelParam;
  auto make = [&](const std::string &name, std::vector<P> params,
                  unsigned block, uint64_t itemsPerBlock) {
    rt::KernelSpec spec;
    spec.name = name;
    spec.source = source;
    // A runtime helper, no gnn op: only the grid's count has a role.
    spec.params = std::move(params);
    spec.launch.blockX = block;
    spec.launch.grid = {ParamRole::NumItems};
    spec.launch.itemsPerBlock = itemsPerBlock;
    return spec;
  };
  std::vector<rt::KernelSpec> specs;
  for (bool offsets64 : {false, true}) {
    specs.push_back(make(countKernelName(offsets64),
                         {{"row_ptr", ParamKind::Pointer},
                          {"excl_ptr", ParamKind::Pointer},
                          {"num_rows", ParamKind::Int64, ParamRole::NumItems},
                          {"snapshots", ParamKind::Int64},
                          {"slice_size", ParamKind::Int64},
                          {"pairs", ParamKind::Pointer}},
                         rules::kSliceRowThreads, rules::kSliceRowThreads));
    specs.push_back(make(fillKernelName(offsets64),
                         {{"row_ptr", ParamKind::Pointer},
                          {"excl_ptr", ParamKind::Pointer},
                          {"num_rows", ParamKind::Int64, ParamRole::NumItems},
                          {"snapshots", ParamKind::Int64},
                          {"slice_size", ParamKind::Int64},
                          {"prefix", ParamKind::Pointer},
                          {"num_split", ParamKind::Int64},
                          {"begin", ParamKind::Pointer},
                          {"words", ParamKind::Pointer}},
                         rules::kSliceRowThreads,
                         rules::kSliceRowThreads / rules::kSliceFillLanes));
  }
  specs.push_back(make(kScanKernel,
                       {{"pairs", ParamKind::Pointer},
                        {"num_pairs", ParamKind::Int64, ParamRole::NumItems},
                        {"tile_sums", ParamKind::Pointer}},
                       rules::kSliceScanThreads, rules::kSliceScanTile));
  specs.push_back(make(kAddKernel,
                       {{"pairs", ParamKind::Pointer},
                        {"num_pairs", ParamKind::Int64, ParamRole::NumItems},
                        {"tile_offsets", ParamKind::Pointer}},
                       rules::kSliceScanThreads, rules::kSliceScanTile));
  return specs;
}

namespace {

/// The kernels of the GPU build for one width of the overlap's offsets.
struct SliceKernels {
  rt::LoadedKernel count, fill, scan, add;
};

Expected<SliceKernels> loadSliceKernels(rt::Runtime &runtime, bool offsets64) {
  std::map<std::string, rt::KernelSpec> byName;
  for (rt::KernelSpec &spec : snapshotSliceKernelSpecs())
    byName.emplace(spec.name, std::move(spec));
  SliceKernels kernels;
  for (auto [name, target] :
       {std::pair{countKernelName(offsets64), &kernels.count},
        std::pair{fillKernelName(offsets64), &kernels.fill},
        std::pair{std::string(kScanKernel), &kernels.scan},
        std::pair{std::string(kAddKernel), &kernels.add}}) {
    Expected<rt::LoadedKernel> loaded = runtime.load(byName.at(name));
    if (!loaded)
      return loaded.status().withContext(
          "loading the kernels that build a sliced kernel's work items");
    *target = loaded.take();
  }
  return kernels;
}

Expected<rt::DeviceBuffer> allocateI64(int64_t count) {
  return rt::DeviceBuffer::allocate(
      static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(int64_t));
}

/// The GPU build with loaded kernels (see buildSnapshotSlicesOnGpu).
Expected<DeviceSnapshotGroup::DeviceSlices>
buildOnGpu(rt::Runtime &runtime, const SliceKernels &kernels,
           const DeviceSnapshotGroup &group, int64_t sliceSize,
           const std::string &name, void *stream, bool poison) {
  const int64_t rows = group.overlap.numRows, snaps = group.snapshots;
  GNNC_RETURN_IF_ERROR(checkSliceShape(rows, snaps, sliceSize, name));
  const uint64_t offsetBytes = group.overlap.offsets64 ? 8 : 4;
  const uint64_t needRowPtr = static_cast<uint64_t>(rows + 1) * offsetBytes;
  if (group.overlap.rowPtr.size() < needRowPtr)
    return Status::error(
        "row offsets " + name + ": " + std::to_string(rows + 1) +
        " offsets of " + std::to_string(offsetBytes) + " bytes need " +
        std::to_string(needRowPtr) + " bytes on the GPU, " +
        std::to_string(group.overlap.rowPtr.size()) + " are there");
  const uint64_t needExcl = static_cast<uint64_t>(snaps) * (rows + 1) * 8;
  if (group.exclusiveOffsets.size() < needExcl)
    return Status::error(
        "exclusive offsets " + name + ": " + std::to_string(snaps) + " x " +
        std::to_string(rows + 1) + " i64 need " + std::to_string(needExcl) +
        " bytes on the GPU, " + std::to_string(group.exclusiveOffsets.size()) +
        " are there");
  DeviceSnapshotGroup::DeviceSlices out;
  out.builtBy = SliceBuilder::Gpu;
  if (rows == 0) {
    for (rt::DeviceBuffer *b : {&out.begin, &out.words}) {
      Expected<rt::DeviceBuffer> empty = allocateI64(0);
      if (!empty)
        return empty.status();
      *b = empty.take();
    }
    return out;
  }
  // The table's size from the host's copy of the offsets (the same rules;
  // the scan's last level holds the same totals on the GPU).
  if (static_cast<int64_t>(group.overlap.hostRowPtr.size()) != rows + 1 ||
      static_cast<int64_t>(group.hostExclusiveOffsets.size()) !=
          snaps * (rows + 1))
    return Status::error("work items " + name +
                         ": the group's host offsets are missing (upload it "
                         "with uploadSnapshotGroup)");
  const auto [rest, split] =
      sliceScan(group.overlap.hostRowPtr, group.hostExclusiveOffsets, snaps,
                sliceSize, nullptr);
  out.count = rest + split;
  out.splitRows = split;
  // Count: (items - split, split) per row.
  Expected<rt::DeviceBuffer> pairs = allocateI64(2 * rows);
  if (!pairs)
    return pairs.status();
  {
    rt::ArgPack args;
    args.bind("row_ptr", group.overlap.rowPtr)
        .bind("excl_ptr", group.exclusiveOffsets)
        .bind("num_rows", rows)
        .bind("snapshots", snaps)
        .bind("slice_size", sliceSize)
        .bind("pairs", *pairs);
    GNNC_RETURN_IF_ERROR(runtime.launch(kernels.count, args, false, stream));
  }
  // Scan, level by level: level l + 1 holds the tile totals of level l,
  // until one tile holds all; the last level's one pair is the totals.
  std::vector<rt::DeviceBuffer> sums;
  std::vector<int64_t> sizes{rows};
  for (;;) {
    const int64_t n = sizes.back();
    const int64_t tiles = (n + rules::kSliceScanTile - 1) /
                          static_cast<int64_t>(rules::kSliceScanTile);
    Expected<rt::DeviceBuffer> tileSums = allocateI64(2 * tiles);
    if (!tileSums)
      return tileSums.status();
    sums.push_back(tileSums.take());
    rt::ArgPack args;
    args.bind("pairs", sums.size() == 1 ? *pairs : sums[sums.size() - 2])
        .bind("num_pairs", n)
        .bind("tile_sums", sums.back());
    GNNC_RETURN_IF_ERROR(runtime.launch(kernels.scan, args, false, stream));
    if (tiles == 1)
      break;
    sizes.push_back(tiles);
  }
  // Add-back, from the top: level l's tiles get the scanned totals of the
  // tiles before them (level l + 1, complete once its own add-back ran).
  for (size_t l = sizes.size() - 1; l-- > 0;) {
    rt::ArgPack args;
    args.bind("pairs", l == 0 ? *pairs : sums[l - 1])
        .bind("num_pairs", sizes[l])
        .bind("tile_offsets", sums[l]);
    GNNC_RETURN_IF_ERROR(runtime.launch(kernels.add, args, false, stream));
  }
  Expected<rt::DeviceBuffer> begin = allocateI64(out.count);
  if (!begin)
    return begin.status();
  Expected<rt::DeviceBuffer> words = allocateI64(out.count);
  if (!words)
    return words.status();
  out.begin = begin.take();
  out.words = words.take();
  if (poison) {
    // At once, on the default stream, whatever `stream` still runs (a
    // stream of gnnc's never waits for the default one, nor it for such a
    // stream): the table holds the poison while the build waits behind the
    // caller's work. The fill waits for it on the GPU, the host does not.
    GNNC_RETURN_IF_ERROR(out.begin.fill(0xff));
    GNNC_RETURN_IF_ERROR(out.words.fill(0xff));
    Expected<rt::StreamEvent> poisoned = rt::StreamEvent::create();
    if (!poisoned)
      return poisoned.status();
    GNNC_RETURN_IF_ERROR(poisoned->record(nullptr));
    GNNC_RETURN_IF_ERROR(poisoned->waitOn(stream));
  }
  rt::ArgPack args;
  args.bind("row_ptr", group.overlap.rowPtr)
      .bind("excl_ptr", group.exclusiveOffsets)
      .bind("num_rows", rows)
      .bind("snapshots", snaps)
      .bind("slice_size", sliceSize)
      .bind("prefix", *pairs)
      .bind("num_split", out.splitRows)
      .bind("begin", out.begin)
      .bind("words", out.words);
  // No wait: the scratch buffers stay with the items (freeing them now
  // would wait for the GPU), so the build queues behind the caller's work
  // on `stream` and the host goes on.
  GNNC_RETURN_IF_ERROR(runtime.launch(kernels.fill, args, false, stream));
  out.scratch.push_back(pairs.take());
  for (rt::DeviceBuffer &b : sums)
    out.scratch.push_back(std::move(b));
  // Launches on other streams wait for the build on the GPU.
  Expected<rt::StreamEvent> ready = rt::StreamEvent::create();
  if (!ready)
    return ready.status();
  GNNC_RETURN_IF_ERROR(ready->record(stream));
  out.ready = std::make_shared<rt::StreamEvent>(ready.take());
  out.builtOn = stream;
  return out;
}

/// The host build, uploaded.
Expected<DeviceSnapshotGroup::DeviceSlices>
buildOnHost(const DeviceSnapshotGroup &group, int64_t sliceSize,
            const std::string &name) {
  Expected<SnapshotSlices> host =
      snapshotSlices(group.overlap.hostRowPtr, group.hostExclusiveOffsets,
                     group.snapshots, sliceSize, name);
  if (!host)
    return host.status();
  auto begins = uploadVector(host->begin);
  if (!begins)
    return begins.status();
  auto words = uploadVector(host->words);
  if (!words)
    return words.status();
  DeviceSnapshotGroup::DeviceSlices made;
  made.begin = begins.take();
  made.words = words.take();
  made.count = host->count();
  made.splitRows = host->splitRows;
  made.builtBy = SliceBuilder::Host;
  made.uploadedBytes = made.deviceBytes();
  return made;
}

} // namespace

Expected<DeviceSnapshotGroup::DeviceSlices> gnnc::ops::buildSnapshotSlicesOnGpu(
    rt::Runtime &runtime, const DeviceSnapshotGroup &group, int64_t sliceSize,
    const std::string &name, void *stream, bool poison) {
  Expected<SliceKernels> kernels =
      loadSliceKernels(runtime, group.overlap.offsets64);
  if (!kernels)
    return kernels.status();
  return buildOnGpu(runtime, *kernels, group, sliceSize, name, stream, poison);
}

Expected<const DeviceSnapshotGroup::DeviceSlices *>
gnnc::ops::snapshotSlicesOf(rt::Runtime &runtime,
                            const DeviceSnapshotGroup &group, int64_t sliceSize,
                            const std::string &name, void *stream) {
  auto found = group.slices.find(sliceSize);
  if (found != group.slices.end()) {
    const DeviceSnapshotGroup::DeviceSlices &have = found->second;
    if (have.ready && stream != have.builtOn)
      GNNC_RETURN_IF_ERROR(have.ready->waitOn(stream));
    return &have;
  }
  std::string fallback;
  if (group.builder == SliceBuilder::Gpu) {
    Expected<SliceKernels> kernels =
        loadSliceKernels(runtime, group.overlap.offsets64);
    if (kernels) {
      Expected<DeviceSnapshotGroup::DeviceSlices> built =
          buildOnGpu(runtime, *kernels, group, sliceSize, name, stream, false);
      if (!built)
        return built.status();
      return &group.slices.emplace(sliceSize, built.take()).first->second;
    }
    fallback = kernels.message();
  }
  Expected<DeviceSnapshotGroup::DeviceSlices> made =
      buildOnHost(group, sliceSize, name);
  if (!made)
    return made.status();
  made->fallback = fallback;
  return &group.slices.emplace(sliceSize, made.take()).first->second;
}

Expected<DeviceSnapshotGroup>
gnnc::ops::uploadSnapshotGroup(const graph::SnapshotGroup &group,
                               bool offsets64, bool indices64) {
  DeviceSnapshotGroup dg;
  Expected<DeviceGraph> overlap =
      uploadGraph(group.overlap, offsets64, indices64);
  if (!overlap)
    return overlap.status();
  dg.overlap = overlap.take();
  dg.snapshots = group.size();
  graph::StackedExclusive stacked = graph::stackExclusive(group);
  dg.exclusiveEdges = static_cast<int64_t>(stacked.columns.size());
  dg.hostExclusiveOffsets = stacked.offsets;
  Expected<rt::DeviceBuffer> offsets = uploadVector(stacked.offsets);
  if (!offsets)
    return offsets.status();
  dg.exclusiveOffsets = offsets.take();
  auto uploadIndices = [&]() -> Expected<rt::DeviceBuffer> {
    if (indices64)
      return uploadVector(stacked.columns);
    std::vector<int32_t> narrow(stacked.columns.size());
    for (size_t i = 0; i < narrow.size(); ++i) {
      if (stacked.columns[i] > std::numeric_limits<int32_t>::max())
        return Status::error("snapshot group '" + group.overlap.name +
                             "': exclusive column index " +
                             std::to_string(stacked.columns[i]) +
                             " does not fit a kernel's i32 column indices");
      narrow[i] = static_cast<int32_t>(stacked.columns[i]);
    }
    return uploadVector(narrow);
  };
  Expected<rt::DeviceBuffer> indices = uploadIndices();
  if (!indices)
    return indices.status();
  dg.exclusiveIndices = indices.take();
  const int64_t offsetBytes = offsets64 ? 8 : 4, indexBytes = indices64 ? 8 : 4;
  dg.uploadedBytes = (group.overlap.numRows + 1) * offsetBytes +
                     group.overlap.nnz() * indexBytes +
                     static_cast<int64_t>(stacked.offsets.size()) * 8 +
                     dg.exclusiveEdges * indexBytes;
  return dg;
}

std::vector<float>
gnnc::ops::snapshotColumnNorm(const graph::SnapshotGroup &group,
                              double exponent) {
  std::vector<float> factors;
  factors.reserve(group.size() * group.numNodes);
  for (int64_t s = 0; s < group.size(); ++s) {
    std::vector<double> f = ref::columnNormFactors(group.snapshot(s), exponent);
    factors.insert(factors.end(), f.begin(), f.end());
  }
  return factors;
}

Expected<rt::DeviceBuffer>
gnnc::ops::uploadSnapshotColumnNorm(const graph::SnapshotGroup &group,
                                    double exponent) {
  return uploadVector(snapshotColumnNorm(group, exponent));
}

Status gnnc::ops::launchSnapshotSpmm(rt::Runtime &runtime,
                                     const rt::LoadedKernel &kernel,
                                     const DeviceSnapshotGroup &group,
                                     const rt::DeviceBuffer &x,
                                     rt::DeviceBuffer &y,
                                     const rt::DeviceBuffer *colNorm,
                                     bool synchronize, void *stream) {
  Expected<OpDesc> op = kernelOp(kernel.spec, OpKind::Spmm);
  if (!op)
    return op.status();
  const std::string name = "kernel '" + kernel.spec.name + "'";
  if (op->snapshots != group.snapshots)
    return Status::error(name + " aggregates " +
                         (op->snapshots == 0
                              ? std::string("one graph, not a snapshot group")
                              : "groups of " + std::to_string(op->snapshots) +
                                    " snapshots, not " +
                                    std::to_string(group.snapshots)));
  if (op->scalesColumns() != (colNorm != nullptr))
    return Status::error(name + (colNorm
                                     ? " reads no column factors"
                                     : " reads the snapshots' column "
                                       "factors (uploadSnapshotColumnNorm)"));
  const uint64_t rowBytes =
      static_cast<uint64_t>(op->width) * elementSize(op->type);
  const uint64_t need = static_cast<uint64_t>(group.overlap.numRows) * rowBytes;
  if (x.size() < need || y.size() < need)
    return Status::error(
        name + " reads and writes " + std::to_string(group.overlap.numRows) +
        " rows of " + std::to_string(rowBytes) + " bytes; x has " +
        std::to_string(x.size()) + ", y " + std::to_string(y.size()));
  Expected<const DeviceSnapshotGroup::DeviceSlices *> slices = snapshotSlicesOf(
      runtime, group, kernel.spec.schedule.sliceSize, "for " + name, stream);
  if (!slices)
    return slices.status();
  rt::ArgPack args = graphArguments(kernel.spec, group.overlap);
  args.bind(ParamRole::Input, x, 0)
      .bind(ParamRole::Result, y)
      .bind(ParamRole::ExclusiveOffsets, group.exclusiveOffsets)
      .bind(ParamRole::ExclusiveIndices, group.exclusiveIndices)
      .bind(ParamRole::SliceOffsets, (*slices)->begin)
      .bind(ParamRole::SliceRows, (*slices)->words)
      .bind(ParamRole::NumSlices, (*slices)->count)
      .bind(ParamRole::NumSplitRows, (*slices)->splitRows);
  if (colNorm)
    args.bind(ParamRole::ColumnFactors, *colNorm);
  return runtime.launch(kernel, args, synchronize, stream);
}

std::vector<double>
gnnc::ops::snapshotSpmmReference(const graph::SnapshotGroup &group,
                                 const std::vector<float> &x, int64_t width,
                                 const ref::SpmmOptions &options,
                                 std::vector<double> *magnitude) {
  const int64_t n = group.numNodes, snaps = group.size();
  const int64_t rowLen = snaps * width;
  std::vector<double> out(n * rowLen, 0.0);
  if (magnitude)
    magnitude->assign(n * rowLen, 0.0);
  std::vector<float> xs(n * width);
  std::vector<double> ys, abs;
  for (int64_t s = 0; s < snaps; ++s) {
    for (int64_t r = 0; r < n; ++r)
      std::copy(x.begin() + r * rowLen + s * width,
                x.begin() + r * rowLen + (s + 1) * width,
                xs.begin() + r * width);
    ref::spmm(group.snapshot(s), nullptr, xs.data(), width, options, ys,
              magnitude ? &abs : nullptr);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < width; ++c) {
        out[r * rowLen + s * width + c] = ys[r * width + c];
        if (magnitude)
          (*magnitude)[r * rowLen + s * width + c] = abs[r * width + c];
      }
  }
  return out;
}

Expected<KernelCheck> gnnc::ops::compareSnapshotSpmm(
    const rt::LoadedKernel &kernel, const graph::SnapshotGroup &group,
    const std::vector<float> &x, const std::vector<float> &got) {
  auto sig = spmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  Expected<OpDesc> op = kernelOp(kernel.spec, OpKind::Spmm);
  if (!op)
    return op.status();
  const std::string name = "kernel '" + kernel.spec.name + "'";
  if (op->snapshots != group.size())
    return Status::error(name + " aggregates groups of " +
                         std::to_string(op->snapshots) + " snapshots, not " +
                         std::to_string(group.size()));
  const int64_t n = group.numNodes, rowLen = op->width;
  const int64_t width = op->snapshotWidth();
  for (auto [what, size] :
       {std::pair{"features", x.size()}, std::pair{"outputs", got.size()}})
    if (static_cast<int64_t>(size) != n * rowLen)
      return Status::error("comparing " + name + ": " + what + " hold " +
                           std::to_string(size) + " elements, not " +
                           std::to_string(n) + " rows of " +
                           std::to_string(rowLen));
  std::vector<double> magnitude;
  std::vector<double> expected =
      snapshotSpmmReference(group, x, width, sig->options(), &magnitude);
  // Rows with several work items reach the result in atomic pieces of at
  // most slice_size edges: scale each row's bound by its degree.
  const double base = spmmTolerance(sig->type);
  for (int64_t s = 0; s < group.size(); ++s) {
    graph::CsrGraph g = group.snapshot(s);
    for (int64_t r = 0; r < n; ++r) {
      const double factor = spmmTolerance(*sig, g.degree(r)) / base;
      for (int64_t c = 0; c < width; ++c)
        magnitude[r * rowLen + s * width + c] *= factor;
    }
  }
  return compareWithReference(kernel.spec, group.overlap, rowLen, sig->type,
                              got, expected, magnitude, rowLen, base);
}

Expected<KernelCheck>
gnnc::ops::checkSnapshotSpmm(rt::Runtime &runtime,
                             const rt::LoadedKernel &kernel,
                             const graph::SnapshotGroup &group, uint64_t seed) {
  auto sig = spmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  Expected<OpDesc> op = kernelOp(kernel.spec, OpKind::Spmm);
  if (!op)
    return op.status();
  if (op->snapshots < 1)
    return Status::error("kernel '" + kernel.spec.name +
                         "' aggregates one graph, not a snapshot group");
  const int64_t n = group.numNodes, rowLen = op->width;
  std::vector<float> x =
      ref::roundThrough(ref::randomFeatures(n * rowLen, seed), sig->type);
  auto dg = uploadSnapshotGroup(group, sig->offsets64, sig->indices64);
  if (!dg)
    return dg.status();
  auto dx = uploadTensor(x, sig->type);
  if (!dx)
    return dx.status();
  auto dy = allocatePoisoned(static_cast<size_t>(n * rowLen), sig->type);
  if (!dy)
    return dy.status();
  std::optional<rt::DeviceBuffer> colNorm;
  if (op->scalesColumns()) {
    auto factors = uploadSnapshotColumnNorm(group, op->columnExponent());
    if (!factors)
      return factors.status();
    colNorm = factors.take();
  }
  GNNC_RETURN_IF_ERROR(launchSnapshotSpmm(runtime, kernel, *dg, *dx, *dy,
                                          colNorm ? &*colNorm : nullptr));
  auto got = downloadTensor(*dy, static_cast<size_t>(n * rowLen), sig->type);
  if (!got)
    return got.status();
  Expected<KernelCheck> check = compareSnapshotSpmm(kernel, group, x, *got);
  if (!check)
    return check.status();
  check->report += " (" + std::to_string(group.size()) + " snapshots, " +
                   std::to_string(group.overlap.nnz()) + " shared and " +
                   std::to_string(dg->exclusiveEdges) + " exclusive edges)";
  return check;
}
