//===- BatchedModel.h - Predicted time of batched gnn.spmm ------*- C++ -*-===//
//
// A first-principles model of gnn.spmm with strategy = batched on a batch of
// small graphs. The host's blocks (graph::batchBlocks) are counted exactly
// from the batch: runs of whole graphs that a block stages, and pieces of
// larger graphs that a block reduces from global memory. A staged block's
// chain is three dependent memory latencies (its block entry; its row
// offsets and feature rows, issued together; its column indices), one
// more per further column block (staged after the last one's passes), and
// one pass per `rows at a time` rows and column block from shared memory; a
// piece's is its entry and three latencies (row offsets, column indices,
// features) per pass. Every latency is the loaded one (loadLatencySeconds
// x loadedLatencyFactor, the queueing of a GPU that is gathering
// everywhere, fitted on R-MAT for the general model and taken as it is).
// Blocks run `resident` at a time per SM (threads,
// shared memory and the block limit), so the waves term is the chains'
// sum over the resident slots, at least the longest chain. The bytes a
// block moves overlap with the other blocks' chains: the prediction is the
// larger of the waves and the bandwidth term (the compulsory bytes over
// the DRAM bandwidth, and the pieces' repeated feature gathers over the
// L2's), plus one launch.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_BATCHEDMODEL_H
#define GNNC_TUNING_BATCHEDMODEL_H

#include "gnnc/Plan/Plan.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/graph/Batch.h"

#include <cstdint>
#include <string>

namespace gnnc::tuning {

/// The predicted time of a batched gnn.spmm and its parts, in seconds.
struct BatchedPrediction {
  /// max(bandwidth, waves) + launch.
  double seconds = 0;
  double bandwidthSeconds = 0;
  double wavesSeconds = 0;
  double launchSeconds = 0;
  /// The host's blocks: runs of graphs staged, pieces of larger graphs.
  int64_t stagedBlocks = 0;
  int64_t pieceBlocks = 0;
  /// Blocks resident per SM, and the longest block's time.
  int blocksPerSm = 0;
  double longestBlockSeconds = 0;
  /// "bandwidth" or "waves".
  std::string bound;
};

/// Predicts `op` (a batched gnn.spmm) run as `plan` on `batch`.
BatchedPrediction predictBatchedSpmm(const GpuModel &gpu,
                                     const graph::BatchedGraph &batch,
                                     const OpDesc &op, const KernelPlan &plan);

/// A batched schedule (completed) and the model's prediction of it.
struct BatchedChoice {
  Schedule schedule;
  BatchedPrediction prediction;
};

/// The batched schedule the model ranks first for `op` on `batch` among
/// tiles of 32, 64, 128 and 256 rows with 128 or 256 threads (every other
/// field at its default); fails when none has a plan.
Expected<BatchedChoice> chooseBatchedSchedule(const GpuModel &gpu,
                                              const graph::BatchedGraph &batch,
                                              const OpDesc &op);

} // namespace gnnc::tuning

#endif // GNNC_TUNING_BATCHEDMODEL_H
