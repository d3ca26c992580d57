//===- SegmentMatmul.cpp - Host side of gnn.segment_matmul ----------------===//
#include "gnnc/ops/SegmentMatmul.h"

#include "CheckSupport.h"

#include "gnnc/Plan/Limits.h"
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

int64_t gnnc::ops::routeBlocks(int64_t tiles, int64_t residentBlocks) {
  return std::max<int64_t>(1, std::min(tiles, residentBlocks));
}

int64_t gnnc::ops::residentRouteBlocks(const rt::KernelSpec &spec,
                                       int smCount) {
  const int64_t threads = std::max<int64_t>(1, spec.launch.blockX);
  int64_t perSm = limits::kMaxThreadsPerSm / threads;
  if (spec.launch.sharedBytes > 0)
    perSm = std::min<int64_t>(perSm, limits::kMaxSharedBytesPerSm /
                                         spec.launch.sharedBytes);
  return std::max<int64_t>(1, perSm) * std::max(1, smCount);
}

Expected<DeviceRouteTable>
gnnc::ops::uploadRouteTable(const rt::KernelSpec &spec,
                            const std::vector<int64_t> &seg, int64_t rows) {
  Expected<std::vector<int64_t>> table = buildRouteTable(
      seg.data(), int64_t(seg.size()), rows, spec.schedule.tileRows);
  if (!table)
    return table.status().withContext("kernel '" + spec.name + "'");
  DeviceRouteTable out;
  out.numTiles = int64_t(table->size()) / kRouteTileWords;
  Expected<rt::DeviceBuffer> tiles = checks::uploadVector(*table);
  if (!tiles)
    return tiles.status();
  out.tiles = std::move(*tiles);
  return out;
}

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
            routeBlocks(
                table.numTiles,
                residentRouteBlocks(kernel.spec, runtime.device().smCount())));
  return runtime.launch(kernel, args, synchronize, stream);
}

Expected<KernelCheck>
gnnc::ops::checkSegmentMatmul(rt::Runtime &runtime,
                              const rt::LoadedKernel &kernel,
                              const std::vector<int64_t> &seg, uint64_t seed) {
  if (!kernel.spec.op || kernel.spec.op->kind != OpKind::SegmentMatmul)
    return Status::error("kernel '" + kernel.spec.name +
                         "' is no gnn.segment_matmul");
  const OpDesc op = *kernel.spec.op;
  const int64_t k = op.inputWidth, m = op.width;
  const int64_t rows = seg.empty() ? 0 : seg.back();
  GNNC_RETURN_IF_ERROR(
      checkSegmentOffsets(seg.data(), int64_t(seg.size()), rows));
  const int64_t types = int64_t(seg.size()) - 1;
  std::vector<float> x =
      ref::roundThrough(ref::randomFeatures(rows * k, seed), op.type);
  std::vector<float> w = ref::roundThrough(
      ref::randomFeatures(std::max<int64_t>(1, types * k * m), seed ^ 0x5eed),
      op.type);
  auto xDev = uploadTensor(x, op.type);
  if (!xDev)
    return xDev.status();
  auto wDev = uploadTensor(w, op.type);
  if (!wDev)
    return wDev.status();
  Expected<rt::DeviceBuffer> segDev = checks::uploadVector(seg);
  if (!segDev)
    return segDev.status();
  Expected<DeviceRouteTable> table = uploadRouteTable(kernel.spec, seg, rows);
  if (!table)
    return table.status();
  auto out = allocatePoisoned(
      static_cast<size_t>(std::max<int64_t>(1, rows * m)), op.type);
  if (!out)
    return out.status();
  GNNC_RETURN_IF_ERROR(launchSegmentMatmul(runtime, kernel, *xDev, *wDev,
                                           *segDev, *table, *out));
  std::vector<double> expected, magnitude;
  ref::segmentMatmul(x.data(), w.data(), seg.data(), types, k, m, expected,
                     &magnitude);
  auto got = downloadTensor(*out, static_cast<size_t>(rows * m), op.type);
  if (!got)
    return got.status();
  graph::CsrGraph shape;
  shape.numRows = rows;
  shape.rowPtr.assign(static_cast<size_t>(rows + 1), 0);
  shape.name = std::to_string(types) + " types, K " + std::to_string(k) +
               ", M " + std::to_string(m);
  return compareWithReference(kernel.spec, shape, m, op.type, *got, expected,
                              magnitude, m);
}
