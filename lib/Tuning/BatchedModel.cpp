//===- BatchedModel.cpp - Predicted time of batched gnn.spmm --------------===//
#include "gnnc/Tuning/BatchedModel.h"

#include "gnnc/Plan/Limits.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace gnnc;
using namespace gnnc::tuning;

namespace {

/// Cycles of one pass of a sub-warp over a row from shared memory: the loop
/// around it, and each neighbour's shuffle, load and additions.
constexpr double kPassCycles = 200;
constexpr double kNeighbourCycles = 40;

} // namespace

BatchedPrediction
gnnc::tuning::predictBatchedSpmm(const GpuModel &gpu,
                                 const graph::BatchedGraph &batch,
                                 const OpDesc &op, const KernelPlan &plan) {
  BatchedPrediction p;
  const Schedule &s = plan.schedule;
  const ThreadMapping &m = plan.mapping;
  const graph::CsrGraph &g = batch.graph;
  const std::vector<int64_t> blocks =
      graph::batchBlocks(batch.graphPtr, g.rowPtr, s.tileRows,
                         batchedTileEdges(s.tileRows), s.graphsPerBlock);
  const double elementBytes = static_cast<double>(elementSize(op.type));
  const double rowBytes = static_cast<double>(op.stride()) * elementBytes;
  const double compulsory =
      2.0 * static_cast<double>(g.numRows) * rowBytes +
      static_cast<double>(g.numRows + 1) * (op.offsets64 ? 8 : 4) +
      static_cast<double>(g.nnz()) * (op.indices64 ? 8 : 4);
  p.bandwidthSeconds = compulsory / gpu.dramBytesPerSecond;

  // Resident blocks per SM: threads, shared memory (1 KiB of it reserved
  // per block), the block limit.
  const int64_t byThreads = gpu.maxThreadsPerSm / plan.launch.threads;
  const int64_t byShared =
      plan.launch.sharedBytes > 0
          ? limits::kMaxSharedBytesPerSm / (plan.launch.sharedBytes + 1024)
          : gpu.maxBlocksPerSm;
  p.blocksPerSm = static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>({byThreads, byShared, gpu.maxBlocksPerSm})));
  const double slots = static_cast<double>(gpu.smCount) * p.blocksPerSm;
  // Loaded, as the general model's gathers: with the unloaded latency the
  // model predicted an H200's batched kernels 1.75x too fast (median) and
  // chose them over faster general schedules (bench/NOTES.md).
  const double latency = gpu.loadLatencySeconds * gpu.loadedLatencyFactor;
  const double cycle = 1.0 / gpu.clockHz;
  const double columnBlocks = static_cast<double>(m.columnBlocks());

  // Each block's chain of dependent steps; the bytes they move overlap
  // with the other resident blocks' chains (the bandwidth bound). Every
  // block first waits for its entry of the table (its rows and edges).
  const int64_t tileEdges = batchedTileEdges(s.tileRows);
  const size_t numBlocks = blocks.size() / kBatchBlockWords - 1;
  double total = 0, pieceGatherBytes = 0;
  for (size_t b = 0; b < numBlocks; ++b) {
    const int64_t *entry = blocks.data() + b * kBatchBlockWords;
    const int64_t *next = entry + kBatchBlockWords;
    const bool piece = (entry[0] & kBatchBlockFromGlobal) != 0;
    const int64_t r0 = entry[0] & ~kBatchBlockFromGlobal;
    const int64_t r1 = next[0] & ~kBatchBlockFromGlobal;
    const double rows = static_cast<double>(r1 - r0);
    const int64_t blockEdges = next[1] - entry[1];
    const double edges = static_cast<double>(blockEdges);
    const double passes = std::ceil(rows / m.rowsPerBlock) * columnBlocks;
    const double degree = rows > 0 ? edges / rows : 0;
    double t = latency;
    if (piece) {
      ++p.pieceBlocks;
      // A piece whose edges fit the tile stages its offsets and column
      // indices at once; each pass then waits for its feature rows alone.
      // A larger one walks offsets, indices and rows in every pass.
      t += blockEdges <= tileEdges ? (1 + passes) * latency
                                   : passes * 3 * latency;
      // A piece gathers a feature row per edge rather than reading each
      // once; the repeats come from the L2.
      pieceGatherBytes += std::max(0.0, edges - rows) * rowBytes;
    } else {
      ++p.stagedBlocks;
      // The offsets, columns and first column block are staged together;
      // each column block after the first after the last one's passes.
      t += columnBlocks * latency +
           passes * (kPassCycles + degree * kNeighbourCycles) * cycle;
    }
    total += t;
    p.longestBlockSeconds = std::max(p.longestBlockSeconds, t);
  }
  p.bandwidthSeconds += pieceGatherBytes / gpu.l2BytesPerSecond;
  p.wavesSeconds = std::max(p.longestBlockSeconds, total / slots);
  p.launchSeconds = gpu.launchSeconds;
  p.bound = p.bandwidthSeconds >= p.wavesSeconds ? "bandwidth" : "waves";
  p.seconds = std::max(p.bandwidthSeconds, p.wavesSeconds) + p.launchSeconds;
  return p;
}

Expected<BatchedChoice> gnnc::tuning::chooseBatchedSchedule(
    const GpuModel &gpu, const graph::BatchedGraph &batch, const OpDesc &op) {
  std::optional<BatchedChoice> best;
  for (int32_t tile : {32, 64, 128, 256})
    for (int32_t threads : {128, 256}) {
      Schedule s;
      s.strategy = Strategy::Batched;
      s.tileRows = tile;
      s.threadsPerBlock = threads;
      Expected<KernelPlan> plan = planWithDefaults(op, s);
      if (!plan)
        continue;
      BatchedPrediction p = predictBatchedSpmm(gpu, batch, op, *plan);
      if (!best || p.seconds < best->prediction.seconds)
        best = BatchedChoice{plan->schedule, p};
    }
  if (!best)
    return Status::error("no batched schedule has a plan for this op");
  return *best;
}
