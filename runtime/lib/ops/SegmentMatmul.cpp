//===- SegmentMatmul.cpp - Host side of gnn.segment_matmul ----------------===//
#include "gnnc/ops/SegmentMatmul.h"

#include <algorithm>
#include <string>

using namespace gnnc;

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
