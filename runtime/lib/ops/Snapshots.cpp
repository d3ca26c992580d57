//===- Snapshots.cpp - Host side of gnn.spmm over snapshot groups ---------===//
#include "gnnc/ops/Snapshots.h"

#include "CheckSupport.h"
#include "gnnc/Plan/Limits.h"
#include "gnnc/ops/KernelInfo.h"

#include <algorithm>
#include <limits>

using namespace gnnc;
using namespace gnnc::ops;
using checks::uploadVector;

Expected<SnapshotSlices>
gnnc::ops::snapshotSlices(const std::vector<int64_t> &rowPtr,
                          const std::vector<int64_t> &exclusiveOffsets,
                          int64_t snapshots, int64_t sliceSize,
                          const std::string &name) {
  if (sliceSize < 1 || sliceSize > limits::kMaxSliceSize)
    return Status::error("slice size " + std::to_string(sliceSize) + " " +
                         name + ": must be from 1 to " +
                         std::to_string(limits::kMaxSliceSize));
  if (rowPtr.empty())
    return Status::error("row offsets " + name + " are empty");
  const int64_t rows = static_cast<int64_t>(rowPtr.size()) - 1;
  if (rows > std::numeric_limits<uint32_t>::max())
    return Status::error("graph " + name + " has " + std::to_string(rows) +
                         " rows; slice words hold 32-bit rows");
  if (snapshots < 1 ||
      static_cast<int64_t>(exclusiveOffsets.size()) != snapshots * (rows + 1))
    return Status::error("exclusive offsets " + name + ": expected " +
                         std::to_string(snapshots) + " x " +
                         std::to_string(rows + 1) + ", got " +
                         std::to_string(exclusiveOffsets.size()));
  static_assert(limits::kMaxSliceSize < (1 << 13),
                "a slice's edge count fits the 13 bits of its word");
  SnapshotSlices out;
  auto add = [&](int64_t begin, int64_t end, int64_t word) {
    out.begin.push_back(begin);
    out.words.push_back(word | ((end - begin) << kSliceLengthShift));
  };
  for (int64_t r = 0; r < rows; ++r) {
    const size_t first = out.words.size();
    const int64_t b = rowPtr[r], e = rowPtr[r + 1];
    for (int64_t at = b; at == b || at < e; at += sliceSize)
      add(at, std::min(at + sliceSize, e), r | (at == b ? kSliceFirst : 0));
    for (int64_t s = 0; s < snapshots; ++s) {
      const int64_t *ptr = exclusiveOffsets.data() + s * (rows + 1);
      for (int64_t at = ptr[r] + sliceSize; at < ptr[r + 1]; at += sliceSize)
        add(at, std::min(at + sliceSize, ptr[r + 1]),
            r | ((s + 1) << kSliceSnapshotShift));
    }
    if (out.words.size() - first > 1)
      for (size_t i = first; i < out.words.size(); ++i)
        out.words[i] |= kSliceSplit;
  }
  // The first slices of split rows go to the front, in row order (a stable
  // partition), for the zeroing kernel.
  SnapshotSlices ordered;
  ordered.begin.reserve(out.begin.size());
  ordered.words.reserve(out.words.size());
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < out.words.size(); ++i) {
      const int64_t w = out.words[i];
      const bool front = (w & kSliceFirst) && (w & kSliceSplit);
      if (front != (pass == 0))
        continue;
      ordered.words.push_back(w);
      ordered.begin.push_back(out.begin[i]);
      ordered.splitRows += front;
    }
  return ordered;
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
  const int64_t sliceSize = kernel.spec.schedule.sliceSize;
  auto found = group.slices.find(sliceSize);
  if (found == group.slices.end()) {
    Expected<SnapshotSlices> host =
        snapshotSlices(group.overlap.hostRowPtr, group.hostExclusiveOffsets,
                       group.snapshots, sliceSize, "for " + name);
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
    found = group.slices.emplace(sliceSize, std::move(made)).first;
  }
  rt::ArgPack args = graphArguments(kernel.spec, group.overlap);
  args.bind(ParamRole::Input, x, 0)
      .bind(ParamRole::Result, y)
      .bind(ParamRole::ExclusiveOffsets, group.exclusiveOffsets)
      .bind(ParamRole::ExclusiveIndices, group.exclusiveIndices)
      .bind(ParamRole::SliceOffsets, found->second.begin)
      .bind(ParamRole::SliceRows, found->second.words)
      .bind(ParamRole::NumSlices, found->second.count)
      .bind(ParamRole::NumSplitRows, found->second.splitRows);
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
  const int64_t width = op->snapshotWidth();
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
  KernelCheck check =
      compareWithReference(kernel.spec, group.overlap, rowLen, sig->type, *got,
                           expected, magnitude, rowLen, base);
  check.report += " (" + std::to_string(group.size()) + " snapshots, " +
                  std::to_string(group.overlap.nnz()) + " shared and " +
                  std::to_string(dg->exclusiveEdges) + " exclusive edges)";
  return check;
}
