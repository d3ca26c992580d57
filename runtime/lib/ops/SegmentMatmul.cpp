//===- SegmentMatmul.cpp - Host side of gnn.segment_matmul ----------------===//
#include "gnnc/ops/SegmentMatmul.h"

#include "CheckSupport.h"

#include "gnnc/Plan/Limits.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/reference/SegmentMatmul.h"

#include <algorithm>
#include <string>

using namespace gnnc;
using namespace gnnc::ops;

Status gnnc::ops::checkSegmentOffsets(const int64_t *seg, int64_t numOffsets,
                                      int64_t rows) {
  if (numOffsets < 1 || !seg)
    return Status::error("gnn.segment_matmul needs num_types + 1 >= 1 segment "
                         "offsets, got " +
                         std::to_string(numOffsets));
  if (rows < 0)
    return Status::error("gnn.segment_matmul: the input has a negative number "
                         "of rows, " +
                         std::to_string(rows));
  if (seg[0] != 0)
    return Status::error("segment offset 0 must be 0, got " +
                         std::to_string(seg[0]));
  for (int64_t t = 1; t < numOffsets; ++t) {
    if (seg[t] < seg[t - 1])
      return Status::error("segment offsets must not decrease: offset " +
                           std::to_string(t) + " is " + std::to_string(seg[t]) +
                           ", after " + std::to_string(seg[t - 1]));
    if (seg[t] > rows)
      return Status::error("segment offset " + std::to_string(t) + " is " +
                           std::to_string(seg[t]) + ", past the input's " +
                           std::to_string(rows) + " rows");
  }
  if (seg[numOffsets - 1] != rows)
    return Status::error("the last segment offset must be the input's " +
                         std::to_string(rows) + " rows, got " +
                         std::to_string(seg[numOffsets - 1]));
  return Status::ok();
}

Expected<std::vector<int64_t>> gnnc::ops::buildRouteTable(const int64_t *seg,
                                                          int64_t numOffsets,
                                                          int64_t rows,
                                                          int64_t tileRows) {
  GNNC_RETURN_IF_ERROR(checkSegmentOffsets(seg, numOffsets, rows));
  if (tileRows < 1)
    return Status::error("tile_rows must be at least 1, got " +
                         std::to_string(tileRows));
  std::vector<int64_t> table;
  for (int64_t t = 0; t + 1 < numOffsets; ++t)
    for (int64_t start = seg[t]; start < seg[t + 1]; start += tileRows) {
      table.push_back(t);
      table.push_back(start);
      table.push_back(std::min(seg[t + 1], start + tileRows));
    }
  return table;
}

namespace {

/// One greedy pass of partitionRouteTable: fills groups in order, none past
/// `limit` (a split that cannot be cut to fit an empty group takes it
/// alone), cutting a split where the rest of it goes to the next group.
/// Returns the groups it needed; fills `out` when given.
int64_t fillGroups(const std::vector<int64_t> &tiles, int64_t limit,
                   int64_t split, int64_t minPiece, RoutePartition *out) {
  int64_t used = 1, cost = 0;
  auto emit = [&](int64_t type, int64_t begin, int64_t end) {
    if (out)
      out->tiles.insert(out->tiles.end(), {type, begin, end});
    cost += end - begin + split;
  };
  auto close = [&] {
    if (out)
      out->groupStarts.push_back(int64_t(out->tiles.size()) / kRouteTileWords);
    ++used;
    cost = 0;
  };
  for (size_t i = 0; i + kRouteTileWords <= tiles.size();
       i += kRouteTileWords) {
    const int64_t type = tiles[i], end = tiles[i + 2];
    int64_t begin = tiles[i + 1];
    while (begin < end) {
      if (cost + (end - begin) + split <= limit) {
        emit(type, begin, end);
        break;
      }
      // The rows that fit, leaving at least minPiece for the next group.
      const int64_t fit =
          std::min(limit - cost - split, end - begin - minPiece);
      if (fit >= minPiece) {
        emit(type, begin, begin + fit);
        begin += fit;
        close();
        continue;
      }
      if (cost == 0) {
        emit(type, begin, end);
        break;
      }
      close();
    }
  }
  return used;
}

} // namespace

RoutePartition gnnc::ops::partitionRouteTable(const std::vector<int64_t> &tiles,
                                              int64_t groups,
                                              int64_t splitCostRows) {
  groups = std::max<int64_t>(1, groups);
  const int64_t split = std::max<int64_t>(0, splitCostRows);
  const int64_t minPiece = routeCutMinRows(split);
  // Runs of equal split counts, whole: the partition to improve on.
  const int64_t count = int64_t(tiles.size()) / kRouteTileWords;
  RoutePartition counted;
  counted.tiles = tiles;
  int64_t total = 0, countedLargest = 0;
  for (int64_t g = 0; g <= groups; ++g) {
    counted.groupStarts.push_back(g * count / groups);
    if (g == groups)
      break;
    int64_t cost = 0;
    for (int64_t i = g * count / groups; i < (g + 1) * count / groups; ++i)
      cost += tiles[i * kRouteTileWords + 2] - tiles[i * kRouteTileWords + 1] +
              split;
    total += cost;
    countedLargest = std::max(countedLargest, cost);
  }
  // Each cut adds a split's cost to the rest: where greedy fills need more
  // groups even at the counted runs' largest work, keep those runs.
  if (fillGroups(tiles, countedLargest, split, minPiece, nullptr) > groups)
    return counted;
  // The least largest work that `groups` greedy fills reach.
  int64_t lo = std::max<int64_t>(1, total / groups),
          hi = std::max(lo, countedLargest);
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (fillGroups(tiles, mid, split, minPiece, nullptr) <= groups)
      hi = mid;
    else
      lo = mid + 1;
  }
  if (lo > countedLargest - countedLargest / defaults::kSegmentPartitionMinGain)
    return counted;
  RoutePartition out;
  out.groupStarts.push_back(0);
  fillGroups(tiles, lo, split, minPiece, &out);
  while (int64_t(out.groupStarts.size()) < groups + 1)
    out.groupStarts.push_back(int64_t(out.tiles.size()) / kRouteTileWords);
  return out;
}

int64_t gnnc::ops::routeCutMinRows(int64_t splitCostRows) {
  return std::max(defaults::kSegmentMinCutRows, splitCostRows);
}

int64_t gnnc::ops::routeBlocks(int64_t tiles, int64_t residentBlocks,
                               int64_t group) {
  const int64_t blocks = std::max<int64_t>(1, std::min(tiles, residentBlocks));
  return group > 1 && blocks >= group ? blocks / group * group : blocks;
}

bool gnnc::ops::routesInGroups(const rt::KernelSpec &spec) {
  return spec.op && spec.op->kind == OpKind::SegmentMatmulWeightGrad &&
         onTensorCores(spec.schedule.math);
}

int64_t gnnc::ops::routeBlockGroup(const rt::KernelSpec &spec) {
  return routesInGroups(spec)
             ? segmentRouteItemsPerTile(*spec.op, spec.schedule)
             : 1;
}

int64_t gnnc::ops::routeGroups(int64_t items, int64_t residentBlocks,
                               int64_t group) {
  const int64_t blocks = routeBlocks(items, residentBlocks, group);
  return blocks >= group ? blocks / std::max<int64_t>(1, group) : 0;
}

int64_t gnnc::ops::residentRouteBlocks(const rt::KernelSpec &spec,
                                       int smCount) {
  const int64_t threads = std::max<int64_t>(1, spec.launch.blockX);
  int64_t perSm = limits::kMaxThreadsPerSm / threads;
  if (spec.launch.sharedBytes > 0)
    perSm = std::min<int64_t>(perSm, sharedBytesPerSm(spec.schedule) /
                                         spec.launch.sharedBytes);
  return std::max<int64_t>(1, perSm) * std::max(1, smCount);
}

int64_t gnnc::ops::residentKernelBlocks(rt::Runtime &runtime,
                                        const rt::LoadedKernel &kernel) {
  const int smCount = std::max(1, runtime.device().smCount());
  return kernel.residentBlocksPerSm > 0
             ? int64_t(kernel.residentBlocksPerSm) * smCount
             : residentRouteBlocks(kernel.spec, smCount);
}

Expected<DeviceRouteTable>
gnnc::ops::uploadRouteTable(rt::Runtime &runtime,
                            const rt::LoadedKernel &kernel,
                            const std::vector<int64_t> &seg, int64_t rows) {
  const rt::KernelSpec &spec = kernel.spec;
  Expected<std::vector<int64_t>> table = buildRouteTable(
      seg.data(), int64_t(seg.size()), rows, spec.schedule.tileRows);
  if (!table)
    return table.status().withContext("kernel '" + spec.name + "'");
  DeviceRouteTable out;
  out.numTypes = std::max<int64_t>(0, int64_t(seg.size()) - 1);
  // The words after the tiles: the groups they are partitioned for and,
  // for that many groups, the first tile of each and the end.
  std::vector<int64_t> words;
  if (routesInGroups(spec)) {
    const int64_t group = routeBlockGroup(spec);
    out.groups = routeGroups(
        routeWorkItems(spec, int64_t(table->size()) / kRouteTileWords),
        residentKernelBlocks(runtime, kernel), group);
  }
  if (out.groups > 0) {
    RoutePartition parts = partitionRouteTable(
        *table, out.groups,
        spec.op ? segmentSplitCostRows(*spec.op, spec.schedule) : 0);
    words = std::move(parts.tiles);
    words.push_back(out.groups);
    words.insert(words.end(), parts.groupStarts.begin(),
                 parts.groupStarts.end());
    out.numTiles = parts.groupStarts.back();
  } else {
    words = std::move(*table);
    out.numTiles = int64_t(words.size()) / kRouteTileWords;
    words.push_back(0);
  }
  Expected<rt::DeviceBuffer> tiles = checks::uploadVector(words);
  if (!tiles)
    return tiles.status();
  out.tiles = std::move(*tiles);
  return out;
}

int64_t gnnc::ops::routeWorkItems(const rt::KernelSpec &spec, int64_t tiles) {
  if (!spec.op)
    return tiles;
  // checkOpSizes bounds K and M, so the items per tile stay small.
  return tiles * segmentRouteItemsPerTile(*spec.op, spec.schedule);
}

double gnnc::ops::segmentMatmulTolerance(const OpDesc &op, const Schedule &s) {
  // TF32 keeps 10 of f32's 23 mantissa bits: each input is rounded to
  // nearest with a relative error of at most 2^-11, so each product is off
  // by at most about 2 * 2^-11 = 2^-10 of its size, and a sum of K products
  // by at most 2^-10 of the sum of their sizes (the magnitude the check
  // scales by; f32 accumulation adds ~K 2^-24 more, far less). The errors
  // are independent, so an output's error is typically ~2^-11 sqrt(K)
  // times a typical term, well inside; 2^-9 keeps a margin of 2 over the
  // worst case. f16 and bf16 inputs multiply exactly into f32 sums, so
  // their tolerance is the rounding of the result, as for SIMT.
  // math = wgmma reads X (and the input gradient's W_t) from shared memory
  // as they are, and the tensor cores drop the low 13 bits: truncation, a
  // relative error of up to 2^-10 an input, so a product is off by up to
  // 2^-9 (2^-9 + 2^-11 with the forward's rounded weight copy); 2^-8 keeps
  // the margin of 2.
  if (op.type == ElementType::F32 && s.math == MathMode::TensorCore)
    return 1.0 / 512;
  if (op.type == ElementType::F32 && s.math == MathMode::Wgmma)
    return 1.0 / 256;
  return spmmTolerance(op.type);
}

namespace {

/// The persistent blocks of `kernel` for `table`: as many as stay
/// resident (residentKernelBlocks), the groups the table is partitioned
/// for where it is.
int64_t launchedRouteBlocks(rt::Runtime &runtime,
                            const rt::LoadedKernel &kernel,
                            const DeviceRouteTable &table) {
  const int64_t group = routeBlockGroup(kernel.spec);
  if (table.groups > 0)
    return table.groups * group;
  return routeBlocks(routeWorkItems(kernel.spec, table.numTiles),
                     residentKernelBlocks(runtime, kernel), group);
}

} // namespace

Status gnnc::ops::launchSegmentMatmul(
    rt::Runtime &runtime, const rt::LoadedKernel &kernel,
    const rt::DeviceBuffer &x, const rt::DeviceBuffer &w,
    const rt::DeviceBuffer &seg, const DeviceRouteTable &table,
    rt::DeviceBuffer &y, bool synchronize, void *stream) {
  if (!kernel.spec.op || kernel.spec.op->kind != OpKind::SegmentMatmul)
    return Status::error("kernel '" + kernel.spec.name +
                         "' is no gnn.segment_matmul");
  rt::ArgPack args;
  args.bind(ParamRole::Input, x, 0)
      .bind(ParamRole::SegmentWeights, w)
      .bind(ParamRole::SegmentOffsets, seg)
      .bind(ParamRole::Result, y)
      .bind(ParamRole::RouteTiles, table.tiles)
      .bind(ParamRole::NumRouteTiles, table.numTiles)
      .bind(ParamRole::RouteBlocks,
            launchedRouteBlocks(runtime, kernel, table));
  if (kernel.spec.findRole(ParamRole::NumSegments))
    args.bind(ParamRole::NumSegments, table.numTypes);
  return runtime.launch(kernel, args, synchronize, stream);
}

Status gnnc::ops::launchSegmentMatmulWeightGrad(
    rt::Runtime &runtime, const rt::LoadedKernel &kernel,
    const rt::DeviceBuffer &x, const rt::DeviceBuffer &dy,
    const rt::DeviceBuffer &seg, int64_t numTypes,
    const DeviceRouteTable &table, rt::DeviceBuffer &dw, bool synchronize,
    void *stream) {
  if (!kernel.spec.op ||
      kernel.spec.op->kind != OpKind::SegmentMatmulWeightGrad)
    return Status::error("kernel '" + kernel.spec.name +
                         "' is no gnn.segment_matmul_weight_grad");
  if (numTypes < 0)
    return Status::error("kernel '" + kernel.spec.name +
                         "': negative number of types, " +
                         std::to_string(numTypes));
  // The workspace (one K x M f32 partial per split) is the runtime's
  // scratch buffer unless the caller binds one.
  rt::ArgPack args;
  args.bind(ParamRole::Input, x, 0)
      .bind(ParamRole::Input, dy, 1)
      .bind(ParamRole::SegmentOffsets, seg)
      .bind(ParamRole::Result, dw)
      .bind(ParamRole::RouteTiles, table.tiles)
      .bind(ParamRole::NumRouteTiles, table.numTiles)
      .bind(ParamRole::RouteBlocks, launchedRouteBlocks(runtime, kernel, table))
      .bind(ParamRole::NumSegments, numTypes);
  return runtime.launch(kernel, args, synchronize, stream);
}

namespace {

/// Random values for `count` elements drawn from `seed`, rounded through
/// `type` (at least one element, so that an empty tensor still has a
/// buffer).
std::vector<float> randomTensor(int64_t count, uint64_t seed,
                                ElementType type) {
  return ref::roundThrough(
      ref::randomFeatures(std::max<int64_t>(1, count), seed), type);
}

/// The shape compareWithReference reports: `rows` rows, named by the
/// problem.
graph::CsrGraph reportShape(int64_t rows, int64_t types, const OpDesc &op) {
  graph::CsrGraph shape;
  shape.numRows = rows;
  shape.rowPtr.assign(static_cast<size_t>(rows + 1), 0);
  shape.name = std::to_string(types) + " types, " +
               std::to_string(op.inputWidth) + " -> " +
               std::to_string(op.width) + " columns" +
               (op.transposeWeights ? " (transposed weights)" : "");
  return shape;
}

} // namespace

Expected<KernelCheck>
gnnc::ops::checkSegmentMatmul(rt::Runtime &runtime,
                              const rt::LoadedKernel &kernel,
                              const std::vector<int64_t> &seg, uint64_t seed) {
  if (!kernel.spec.op || kernel.spec.op->kind != OpKind::SegmentMatmul)
    return Status::error("kernel '" + kernel.spec.name +
                         "' is no gnn.segment_matmul");
  const OpDesc op = *kernel.spec.op;
  // Rows of `in` columns in, rows of `out` columns out; the weights are
  // K x M as the forward stores them either way.
  const int64_t in = op.inputWidth, out = op.width;
  const int64_t rows = seg.empty() ? 0 : seg.back();
  GNNC_RETURN_IF_ERROR(
      checkSegmentOffsets(seg.data(), int64_t(seg.size()), rows));
  const int64_t types = int64_t(seg.size()) - 1;
  std::vector<float> x = randomTensor(rows * in, seed, op.type);
  std::vector<float> w = randomTensor(types * in * out, seed ^ 0x5eed, op.type);
  auto xDev = uploadTensor(x, op.type);
  if (!xDev)
    return xDev.status();
  auto wDev = uploadTensor(w, op.type);
  if (!wDev)
    return wDev.status();
  Expected<rt::DeviceBuffer> segDev = checks::uploadVector(seg);
  if (!segDev)
    return segDev.status();
  Expected<DeviceRouteTable> table =
      uploadRouteTable(runtime, kernel, seg, rows);
  if (!table)
    return table.status();
  auto y = allocatePoisoned(
      static_cast<size_t>(std::max<int64_t>(1, rows * out)), op.type);
  if (!y)
    return y.status();
  GNNC_RETURN_IF_ERROR(
      launchSegmentMatmul(runtime, kernel, *xDev, *wDev, *segDev, *table, *y));
  std::vector<double> expected, magnitude;
  if (op.transposeWeights)
    ref::segmentMatmulInputGrad(x.data(), w.data(), seg.data(), types, out, in,
                                expected, &magnitude);
  else
    ref::segmentMatmul(x.data(), w.data(), seg.data(), types, in, out, expected,
                       &magnitude);
  auto got = downloadTensor(*y, static_cast<size_t>(rows * out), op.type);
  if (!got)
    return got.status();
  return compareWithReference(kernel.spec, reportShape(rows, types, op), out,
                              op.type, *got, expected, magnitude, out,
                              segmentMatmulTolerance(op, kernel.spec.schedule));
}

Expected<KernelCheck> gnnc::ops::checkSegmentMatmulWeightGrad(
    rt::Runtime &runtime, const rt::LoadedKernel &kernel,
    const std::vector<int64_t> &seg, uint64_t seed) {
  if (!kernel.spec.op ||
      kernel.spec.op->kind != OpKind::SegmentMatmulWeightGrad)
    return Status::error("kernel '" + kernel.spec.name +
                         "' is no gnn.segment_matmul_weight_grad");
  const OpDesc op = *kernel.spec.op;
  const int64_t k = op.inputWidth, m = op.width;
  const int64_t rows = seg.empty() ? 0 : seg.back();
  GNNC_RETURN_IF_ERROR(
      checkSegmentOffsets(seg.data(), int64_t(seg.size()), rows));
  const int64_t types = int64_t(seg.size()) - 1;
  std::vector<float> x = randomTensor(rows * k, seed, op.type);
  std::vector<float> dy = randomTensor(rows * m, seed ^ 0xd1, op.type);
  auto xDev = uploadTensor(x, op.type);
  if (!xDev)
    return xDev.status();
  auto dyDev = uploadTensor(dy, op.type);
  if (!dyDev)
    return dyDev.status();
  Expected<rt::DeviceBuffer> segDev = checks::uploadVector(seg);
  if (!segDev)
    return segDev.status();
  Expected<DeviceRouteTable> table =
      uploadRouteTable(runtime, kernel, seg, rows);
  if (!table)
    return table.status();
  auto dw = allocatePoisoned(
      static_cast<size_t>(std::max<int64_t>(1, types * k * m)), op.type);
  if (!dw)
    return dw.status();
  GNNC_RETURN_IF_ERROR(launchSegmentMatmulWeightGrad(
      runtime, kernel, *xDev, *dyDev, *segDev, types, *table, *dw));
  std::vector<double> expected, magnitude;
  ref::segmentMatmulWeightGrad(x.data(), dy.data(), seg.data(), types, k, m,
                               expected, &magnitude);
  auto got = downloadTensor(*dw, static_cast<size_t>(types * k * m), op.type);
  if (!got)
    return got.status();
  // Rows of the report are the types' K rows of M.
  return compareWithReference(kernel.spec, reportShape(types * k, types, op), m,
                              op.type, *got, expected, magnitude, m,
                              segmentMatmulTolerance(op, kernel.spec.schedule));
}
