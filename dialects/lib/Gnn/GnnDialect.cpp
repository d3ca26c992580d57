//===- GnnDialect.cpp - The gnn dialect, its types and attributes ---------===//
#include "gnnc/Dialect/Gnn/GnnDialect.h"
#include "gnnc/Dialect/Gnn/GnnOps.h"
#include "gnnc/Dialect/Gnn/KernelLimits.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace gnnc::gnn;

#include "gnnc/Dialect/Gnn/GnnDialect.cpp.inc"
#include "gnnc/Dialect/Gnn/GnnEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "gnnc/Dialect/Gnn/GnnTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "gnnc/Dialect/Gnn/GnnAttrs.cpp.inc"

void GnnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "gnnc/Dialect/Gnn/GnnOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "gnnc/Dialect/Gnn/GnnTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "gnnc/Dialect/Gnn/GnnAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// GnnGraphType
//===----------------------------------------------------------------------===//

LogicalResult GnnGraphType::verify(function_ref<InFlightDiagnostic()> emitError,
                                   GraphFormat format, IntegerType offsetType,
                                   IntegerType indexType) {
  auto isIndexWidth = [](IntegerType t) {
    return t.isSignless() && (t.getWidth() == 32 || t.getWidth() == 64);
  };
  if (!isIndexWidth(offsetType))
    return emitError() << "graph row offsets must be i32 or i64, got "
                       << offsetType;
  if (!isIndexWidth(indexType))
    return emitError() << "graph column indices must be i32 or i64, got "
                       << indexType;
  if (indexType.getWidth() > offsetType.getWidth())
    return emitError() << "graph column indices (" << indexType
                       << ") are wider than its row offsets (" << offsetType
                       << "): a graph has at least as many non-zeros as "
                          "columns it can address";
  return success();
}

//===----------------------------------------------------------------------===//
// RowsAttr
//===----------------------------------------------------------------------===//

LogicalResult RowsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t stride) {
  if (stride < 1)
    return emitError() << "#gnn.rows stride must be positive, got " << stride;
  return success();
}

LogicalResult
RowsAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                         function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != 2)
    return emitError() << "#gnn.rows lays out the rows of a 2-D feature "
                          "tensor, not a tensor of rank "
                       << shape.size();
  if (ShapedType::isDynamic(shape[1]))
    return emitError() << "#gnn.rows<stride = " << getStride()
                       << "> needs a static feature width";
  if (getStride() < shape[1])
    return emitError() << "#gnn.rows stride " << getStride()
                       << " is smaller than the feature width " << shape[1]
                       << "; a row stride holds at least one row";
  (void)elementType;
  return success();
}

int64_t gnnc::gnn::rowStride(RankedTensorType type) {
  if (auto rows = dyn_cast_or_null<RowsAttr>(type.getEncoding()))
    return rows.getStride();
  return type.getDimSize(1);
}

bool gnnc::gnn::hasRowsLayout(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa_and_nonnull<RowsAttr>(tensor.getEncoding());
}

//===----------------------------------------------------------------------===//
// ScheduleAttr
//===----------------------------------------------------------------------===//

/// Most neighbours one batch of a discretized reduction may hold.
static constexpr int32_t kMaxDiscBatch = 1024;

static bool isPowerOfTwoUpTo(int32_t v, int32_t max) {
  return v >= 1 && v <= max && (v & (v - 1)) == 0;
}

LogicalResult ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   Strategy strategy, int32_t vectorWidth,
                                   int32_t discBatch, int32_t groupSize,
                                   int32_t dimWorkers, int32_t threadsPerBlock,
                                   int32_t edgesPerWarp, int32_t sliceSize,
                                   bool tileRouting, Accumulate accumulate,
                                   WriteMode write, int32_t blocksPerSm) {
  if (vectorWidth != 0 && !isPowerOfTwoUpTo(vectorWidth, 8))
    return emitError() << "vector_width must be 1, 2, 4 or 8 (0 = choose), got "
                       << vectorWidth;
  if (dimWorkers != 0 && !isPowerOfTwoUpTo(dimWorkers, 32))
    return emitError() << "dim_workers must be a power of two from 1 to 32 "
                          "(0 = choose), got "
                       << dimWorkers;
  if (threadsPerBlock != 0 &&
      (threadsPerBlock < 32 || threadsPerBlock > 1024 || threadsPerBlock % 32))
    return emitError() << "threads_per_block must be a multiple of 32 from 32 "
                          "to 1024 (0 = choose), got "
                       << threadsPerBlock;
  if (dimWorkers != 0 && threadsPerBlock != 0 && dimWorkers > threadsPerBlock)
    return emitError() << "dim_workers (" << dimWorkers
                       << ") exceeds threads_per_block (" << threadsPerBlock
                       << ")";
  if (discBatch < 0 || discBatch > kMaxDiscBatch)
    return emitError() << "disc_batch must be from 1 to " << kMaxDiscBatch
                       << " (0 = no discretized reduction), got " << discBatch;
  if (groupSize < 0)
    return emitError() << "group_size must be >= 0, got " << groupSize;
  if (edgesPerWarp < 0)
    return emitError() << "edges_per_warp must be >= 0, got " << edgesPerWarp;
  if (sliceSize < 0)
    return emitError() << "slice_size must be >= 0, got " << sliceSize;
  if (groupSize != 0 && strategy != Strategy::neighbor_group)
    return emitError() << "group_size applies to the neighbor_group strategy, "
                          "not "
                       << stringifyStrategy(strategy);
  if (edgesPerWarp != 0 && strategy != Strategy::edge_parallel)
    return emitError() << "edges_per_warp applies to the edge_parallel "
                          "strategy, not "
                       << stringifyStrategy(strategy);
  if (sliceSize != 0 && strategy != Strategy::sliced)
    return emitError() << "slice_size applies to the sliced strategy, not "
                       << stringifyStrategy(strategy);
  if (tileRouting && strategy != Strategy::tile_routed)
    return emitError() << "tile_routing applies to the tile_routed strategy, "
                          "not "
                       << stringifyStrategy(strategy);
  if (blocksPerSm < 0 || blocksPerSm > limits::kMaxBlocksPerSm)
    return emitError() << "blocks_per_sm must be from 0 to "
                       << limits::kMaxBlocksPerSm
                       << " (0 = no "
                          "register cap), got "
                       << blocksPerSm;
  // An SM holds at most 2048 threads (sm_80 and sm_90).
  if (blocksPerSm != 0 && threadsPerBlock != 0 &&
      blocksPerSm * threadsPerBlock > limits::kMaxThreadsPerSm)
    return emitError() << "blocks_per_sm (" << blocksPerSm
                       << ") blocks of threads_per_block (" << threadsPerBlock
                       << ") exceed the 2048 threads an SM holds";
  (void)accumulate;
  (void)write;
  return success();
}

bool ScheduleAttr::isComplete() const {
  bool common = getVectorWidth() != 0 && getDimWorkers() != 0 &&
                getThreadsPerBlock() != 0;
  if (getStrategy() == Strategy::edge_parallel)
    return common && getEdgesPerWarp() != 0 && getWrite() != WriteMode::direct;
  if (getStrategy() == Strategy::neighbor_group)
    return common && getGroupSize() != 0 && getWrite() == WriteMode::atomic;
  return common;
}
