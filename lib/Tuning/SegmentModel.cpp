//===- SegmentModel.cpp - Predicted time of the segmented matmuls ---------===//
//
// See SegmentModel.h for the model's form. Every fact of a kernel comes
// from its plan or from the launch code: the tensor-core tile
// (segmentMmaTile), the items per routing tile (ops::routeWorkItems), the
// resident blocks (ops::residentRouteBlocks) and the blocks launched
// (ops::routeBlocks).
//
//===----------------------------------------------------------------------===//
#include "gnnc/Tuning/SegmentModel.h"

#include "gnnc/Tuning/ModelDetail.h"

#include "gnnc/Plan/Limits.h"
#include "gnnc/cuda/segment_reduce.cuh"
#include "gnnc/ops/SegmentMatmul.h"
#include "gnnc/runtime/KernelSpec.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

using namespace gnnc;
using namespace gnnc::tuning;

namespace {

/// Two maths whose leaders' predictions are within this factor are both
/// measured: the SIMT and tensor-core kernels' terms are of different
/// kinds (shared-memory reads against mma throughput and pipeline
/// latency), which is where a first-principles model errs most.
constexpr double kCloseMaths = 2.0;

/// The tiles the tuner tries (SegmentModel.h).
constexpr int32_t kTensorCoreTiles[] = {16, 32, 64, 128};
/// math = wgmma: one or two warpgroups of 64 rows.
constexpr int32_t kWgmmaTiles[] = {64, 128};
constexpr int32_t kSimtTiles[] = {16, 32, 64, 128, 256};
constexpr int32_t kWeightGradSplits[] = {64, 128, 256, 512, 1024, 2048, 4096};

/// The reduction step of the tensor-core pipeline is the plan's tile depth
/// (segmentMmaTile(...).depth); the warp is 32 lanes.
constexpr double kWarpLanes = 32;

double ceilDiv(double a, double b) { return b > 0 ? std::ceil(a / b) : 0; }

/// mma.sync keeps the tensor pipe of an SM busy only with many independent
/// accumulator fragments in flight: the fraction of its peak taken as the
/// fragments of every resident warp over this count. Fitted to one Nsight
/// Compute profile (H200, ACM, f16, K = M = 256): 2 blocks of 4 warps of
/// 4 x 4 fragments (128 in flight) kept the pipe 26% busy, and 2 blocks of
/// 2 warps of 2 x 4 (32) took twice as long.
constexpr double kMmaFragmentsForPeak = 512;

/// The fraction of the tensor pipe's peak that `perSm` blocks of tile `t`
/// reach (at least 1/64 of it).
double mmaPipeFraction(const SegmentMmaTile &t, double perSm) {
  const double fragments = perSm * t.warpsM * t.warpsN * t.fragsM * t.fragsN;
  return std::clamp(fragments / kMmaFragmentsForPeak, 1.0 / 64, 1.0);
}

/// The SM time of one item's fragment loads from shared memory: every warp
/// reads, per instruction depth, 16 rows of A per fragment row and 8
/// columns of B per fragment column, at l1BytesPerClock. A taller or wider
/// warp tile reads each fragment for more mma instructions.
double mmaFragmentSeconds(const GpuModel &gpu, const OpDesc &op,
                          const SegmentMmaTile &t, double steps) {
  const double e = static_cast<double>(elementSize(op.type));
  const double k = static_cast<double>(mmaInstructionDepth(op.type));
  const double perWarp = (16.0 * t.fragsM + 8.0 * t.fragsN) * k * e;
  const double bytes = perWarp * t.warpsM * t.warpsN *
                       (steps * static_cast<double>(t.depth) / k);
  return bytes / gpu.l1BytesPerClock / gpu.clockHz;
}

/// The SM time of one tensor-core item of `flops` over `steps` reduction
/// steps with `perSm` blocks resident: its mma instructions at the pipe's
/// fill (tensorCorePeakFlops per SM) plus its fragment loads; a warp's
/// loads and mma instructions wait on each other (few independent
/// instructions per warp), so their times add.
double mmaItemSeconds(const GpuModel &gpu, const OpDesc &op,
                      const SegmentMmaTile &t, double steps, double flops,
                      double perSm) {
  const double perSmFlops = tensorCorePeakFlops(gpu, op.type) / gpu.smCount;
  return flops / (perSmFlops * mmaPipeFraction(t, perSm)) +
         mmaFragmentSeconds(gpu, op, t, steps);
}

/// The SM time of one tensor-core item of tile `t`: mmaItemSeconds for
/// mma.sync; wgmma's warpgroups read A and B from shared memory themselves
/// and keep the pipe fed (no fragment loads, no fill from many warps), so
/// their flops at the SM's peak.
double tensorCoreItemSeconds(const GpuModel &gpu, const OpDesc &op,
                             const SegmentMmaTile &t, double steps,
                             double flops, double perSm) {
  return t.warpgroups
             ? flops / (tensorCorePeakFlops(gpu, op.type) / gpu.smCount)
             : mmaItemSeconds(gpu, op, t, steps, flops, perSm);
}

/// A block's `steps` reduction steps through the tensor-core pipeline,
/// which runs on across items with Stages - 1 steps in flight: each step's
/// copies arrive a load latency plus their transfer at the block's share of
/// the bandwidth (every one of `blocks` blocks streaming) after they were
/// issued, and a step ends no sooner than its transfer. Two stages thus
/// wait a latency a step beyond the bandwidth's pace, deeper ones hide it
/// (K = M = 256 forwards on an H200: 3 or 4 stages 5-10% faster than 2 on
/// every set, with the same blocks' bytes). A routing tile's rows come
/// from DRAM once, for the first of its items; its other items (the
/// forward's other column blocks, the weight gradient's other result
/// blocks, read at about the same time) and the forward's streamed
/// weights, a few types' worth, come from the L2.
double pipelineSeconds(const GpuModel &gpu, const OpDesc &op,
                       const SegmentMmaTile &t, double steps, int64_t blocks) {
  const double e = static_cast<double>(elementSize(op.type));
  const bool weightGrad = op.kind == OpKind::SegmentMatmulWeightGrad;
  const double tileBytes = weightGrad
                               ? static_cast<double>(t.stageBytes)
                               : static_cast<double>(t.rows * t.depth) * e;
  const double fromDram =
      tileBytes /
      static_cast<double>(std::max<int64_t>(1, t.itemsPerRouteTile));
  const double fromL2 = static_cast<double>(t.stageBytes) - fromDram;
  const double transfer =
      static_cast<double>(blocks) *
      (fromDram / gpu.dramBytesPerSecond + fromL2 / gpu.l2BytesPerSecond);
  return steps * std::max(transfer, (gpu.loadLatencySeconds + transfer) /
                                        static_cast<double>(t.stages - 1));
}

/// The bytes an SM's stores of a tensor-core result tile write a clock: a
/// 32-byte sector. A warp's store of its fragments writes 32 bytes in each
/// of 8 rows (mma::storeFragments, the weight gradient's partials) or 64
/// (mma::storeFragmentsWide, the forwards); Nsight Compute on the f16
/// wgmma forward at K = M = 256 on an H200 (32-byte rows) counted 548K
/// stores and 4.38M sectors, and the H200 sweeps of the forwards rank best
/// with a sector a clock for the wide stores too (64 bytes a clock put
/// 1-block-an-SM tiles first where 2 blocks were 1.2-1.3x faster). The
/// block's warps issue nothing else meanwhile, so the stores lie on its
/// chain; a second block on the SM overlaps them.
constexpr double kResultStoreBytesPerClock = 32;

/// The SM time of a block's stores of one result tile of `bytes`.
double resultStoreSeconds(const GpuModel &gpu, double bytes) {
  return bytes / kResultStoreBytesPerClock / gpu.clockHz;
}

/// The spec the launch code reads to size the grid of `plan`.
rt::KernelSpec launchSpec(const OpDesc &op, const KernelPlan &plan) {
  rt::KernelSpec spec;
  spec.op = op;
  spec.schedule = plan.schedule;
  spec.launch.blockX = static_cast<unsigned>(plan.launch.threads);
  spec.launch.sharedBytes = static_cast<unsigned>(plan.launch.sharedBytes);
  return spec;
}

/// The ways a warp's reads of the staged weights conflict in shared
/// memory: SIMT with transposed weights reads lane after lane `stride`
/// 4-byte words apart (a vector of `vw` columns, each K elements on).
double transposedConflictWays(const OpDesc &op, const Schedule &s) {
  if (!op.transposeWeights)
    return 1;
  const int64_t bytes = std::max<int64_t>(1, s.vectorWidth) * op.inputWidth *
                        static_cast<int64_t>(elementSize(op.type));
  const int64_t words = std::max<int64_t>(1, bytes / 4);
  int64_t ways = 1;
  while (ways < 32 && words % (ways * 2) == 0)
    ways *= 2;
  return static_cast<double>(
      std::min<int64_t>(ways, std::max<int32_t>(1, s.dimWorkers)));
}

} // namespace

int64_t SegmentStats::tilesFor(int64_t tileRows) const {
  if (tileRows < 1)
    return 0;
  for (const auto &[t, count] : tiles)
    if (t == tileRows)
      return count;
  if (tileRows >= maxRows)
    return nonEmptyTypes();
  return static_cast<int64_t>(
      std::ceil(static_cast<double>(rows) / static_cast<double>(tileRows) +
                0.5 * static_cast<double>(nonEmptyTypes())));
}

Expected<SegmentStats>
gnnc::tuning::segmentStats(const std::vector<int64_t> &seg) {
  const int64_t rows = seg.empty() ? 0 : seg.back();
  GNNC_RETURN_IF_ERROR(
      ops::checkSegmentOffsets(seg.data(), int64_t(seg.size()), rows));
  SegmentStats s;
  s.offsets = seg;
  s.types = int64_t(seg.size()) - 1;
  s.rows = rows;
  double sum = 0, squares = 0;
  for (int64_t t = 0; t < s.types; ++t) {
    const int64_t r = seg[t + 1] - seg[t];
    s.emptyTypes += r == 0;
    s.maxRows = std::max(s.maxRows, r);
    sum += static_cast<double>(r);
    squares += static_cast<double>(r) * static_cast<double>(r);
  }
  if (s.types > 0) {
    s.meanRows = sum / static_cast<double>(s.types);
    const double variance = std::max(
        0.0, squares / static_cast<double>(s.types) - s.meanRows * s.meanRows);
    s.spread = s.meanRows > 0 ? std::sqrt(variance) / s.meanRows : 0;
  }
  for (int32_t tile : kSegmentStatTileRows) {
    int64_t count = 0;
    for (int64_t t = 0; t < s.types; ++t)
      count += (seg[t + 1] - seg[t] + tile - 1) / tile;
    s.tiles.push_back({tile, count});
  }
  return s;
}

SegmentArithmeticRates
gnnc::tuning::segmentArithmeticRates(const GpuModel &gpu) {
  // Datasheet dense rates over SMs x boost clock: A100 SXM 312 TFLOPS f16,
  // 156 TF32, 19.5 FP32 (108 SMs, 1.41 GHz); H100 SXM 989 f16, 495 TF32,
  // 67 FP32 (132 SMs, 1.83 GHz for the tensor-core figures).
  if (gpu.arch == "sm_80" || gpu.arch == "sm_86" || gpu.arch == "sm_87")
    return {2048, 1024, 64};
  return {4096, 2048, 128};
}

double gnnc::tuning::tensorCorePeakFlops(const GpuModel &gpu,
                                         ElementType type) {
  const SegmentArithmeticRates r = segmentArithmeticRates(gpu);
  const double perClock =
      type == ElementType::F32 ? r.tf32FlopsPerClock : r.mma16FlopsPerClock;
  return perClock * gpu.clockHz * gpu.smCount;
}

namespace {

/// How a tile_routed kernel's blocks share its routing table on the
/// model's GPU: the tiles the table holds, the blocks launched and the
/// items of the busiest block in mean items (its waves).
struct RouteShape {
  int64_t tiles = 0;
  int64_t blocks = 1;
  double waves = 0;
};

/// The launch code's grid for `spec` over `stats`' segments. A weight
/// gradient on tensor cores runs in groups of blocks whose splits the host
/// partitions by work (ops::partitionRouteTable): from the segments' own
/// offsets the model makes the same partition, and the busiest group's
/// work in mean splits is the waves. Without the offsets it estimates: the
/// partition is taken where runs of equal split counts leave the largest
/// group a kSegmentPartitionMinGain-th over the mean, a group's end falls
/// inside a split at most once a group and is cut there unless within
/// routeCutMinRows of either end, and the waves are fractional.
RouteShape routeShape(const SegmentStats &stats, const OpDesc &op,
                      const rt::KernelSpec &spec, int64_t resident) {
  const Schedule &s = spec.schedule;
  RouteShape shape;
  int64_t uncut = stats.tilesFor(s.tileRows);
  const int64_t group = ops::routeBlockGroup(spec);
  auto groupsOf = [&](int64_t tiles) {
    return ops::routesInGroups(spec)
               ? ops::routeGroups(ops::routeWorkItems(spec, tiles), resident,
                                  group)
               : 0;
  };
  const int64_t split = segmentSplitCostRows(op, s);
  const double rows = static_cast<double>(stats.rows);
  if (groupsOf(uncut) > 0 && !stats.offsets.empty()) {
    Expected<std::vector<int64_t>> table = ops::buildRouteTable(
        stats.offsets.data(), int64_t(stats.offsets.size()), stats.rows,
        s.tileRows);
    if (table) {
      uncut = int64_t(table->size()) / kRouteTileWords;
      const int64_t groups = groupsOf(uncut);
      const ops::RoutePartition parts =
          ops::partitionRouteTable(*table, groups, split);
      shape.tiles = parts.groupStarts.back();
      shape.blocks = groups * group;
      int64_t largest = 0;
      for (int64_t g = 0; g < groups; ++g) {
        int64_t work = 0;
        for (int64_t i = parts.groupStarts[g]; i < parts.groupStarts[g + 1];
             ++i)
          work += parts.tiles[i * kRouteTileWords + 2] -
                  parts.tiles[i * kRouteTileWords + 1] + split;
        largest = std::max(largest, work);
      }
      const double meanWork =
          shape.tiles > 0 ? rows / static_cast<double>(shape.tiles) + split
                          : 1.0;
      shape.waves = static_cast<double>(largest) / meanWork;
      return shape;
    }
  }
  const int64_t groups = groupsOf(uncut);
  const double runs = groups > 0 ? static_cast<double>(uncut) / groups : 0.0;
  const bool partitioned =
      groups > 0 &&
      runs < std::ceil(runs) *
                 (1.0 - 1.0 / static_cast<double>(
                                  defaults::kSegmentPartitionMinGain));
  const double meanSplit = uncut > 0 ? rows / static_cast<double>(uncut) : 0.0;
  const double edge = static_cast<double>(ops::routeCutMinRows(split));
  shape.tiles = uncut + (partitioned && groups > 1 && meanSplit > 0
                             ? static_cast<int64_t>(std::llround(
                                   static_cast<double>(groups - 1) *
                                   std::max(0.0, 1.0 - 2.0 * edge / meanSplit)))
                             : 0);
  const int64_t items = ops::routeWorkItems(spec, shape.tiles);
  shape.blocks =
      groups > 0 ? groups * group : ops::routeBlocks(items, resident, group);
  shape.waves = partitioned ? static_cast<double>(items) / shape.blocks
                            : ceilDiv(static_cast<double>(items),
                                      static_cast<double>(shape.blocks));
  return shape;
}

} // namespace

Prediction gnnc::tuning::predictSegmentMatmul(const GpuModel &gpu,
                                              const SegmentStats &stats,
                                              const OpDesc &op,
                                              const KernelPlan &plan) {
  Prediction p;
  p.plan = plan;
  const Schedule &s = plan.schedule;
  const bool weightGrad = op.kind == OpKind::SegmentMatmulWeightGrad;
  const bool tensorCores = onTensorCores(s.math);
  const double e = static_cast<double>(elementSize(op.type));
  const double in = static_cast<double>(op.inputWidth);
  const double out = static_cast<double>(op.width);
  const double rows = static_cast<double>(stats.rows);
  const double types = static_cast<double>(stats.types);
  const double cycle = 1.0 / gpu.clockHz;
  const double latency = gpu.loadLatencySeconds;
  const SegmentArithmeticRates rates = segmentArithmeticRates(gpu);

  // The grid, as the launch code sizes it.
  const rt::KernelSpec spec = launchSpec(op, plan);
  const int64_t resident = ops::residentRouteBlocks(spec, gpu.smCount);
  const RouteShape shape = routeShape(stats, op, spec, resident);
  const int64_t tiles = shape.tiles;
  const int64_t items = ops::routeWorkItems(spec, tiles);
  const int64_t blocks = shape.blocks;
  const double perSm = ceilDiv(static_cast<double>(blocks), gpu.smCount);
  p.workers = static_cast<double>(items);
  p.blocksPerSm = static_cast<int>(perSm);
  p.waves = shape.waves;
  // The mean rows of a tile (the last tile of a type is shorter).
  const double tileRows = tiles > 0 ? rows / static_cast<double>(tiles) : 0;

  // Per item: the dependent chain of one block, the SM time of its work
  // (shared with the blocks beside it), its bytes through the L2.
  // The routing-table entry: the tensor-core forwards load the next
  // item's with the current one (RouteItem in segment_matmul.cuh), the
  // other kernels when their item starts.
  const bool entryAhead = tensorCores && !weightGrad;
  double chain = entryAhead ? 0.0 : gpu.l2LatencySeconds;
  double smSeconds = 0, itemL2Bytes = 0, totalFlops = 0, peakFlops = 0;
  // Compulsory DRAM bytes: inputs and results once, the weights once.
  // companionSeconds: the preludes and follow-ups, one after the other.
  double dramBytes = 0, launches = 1, companionSeconds = 0;
  if (!weightGrad) {
    dramBytes = rows * (in + out) * e + types * in * out * e;
    if (tensorCores) {
      const SegmentMmaTile t = segmentMmaTile(op, s);
      const double steps = ceilDiv(in, static_cast<double>(t.depth));
      const double flops = 2.0 * t.rows * t.cols * steps * t.depth;
      peakFlops = tensorCorePeakFlops(gpu, op.type);
      smSeconds = tensorCoreItemSeconds(gpu, op, t, steps, flops, perSm);
      chain +=
          pipelineSeconds(gpu, op, t, steps, blocks) +
          resultStoreSeconds(gpu, tileRows * std::min<double>(t.cols, out) * e);
      // W_t's column block: every item's, or (resident) once per change of
      // type or column block along a block's run, not pipelined.
      double weightBytes = in * t.cols * e;
      if (t.residentWeights && items > 0) {
        const double colBlocks = ceilDiv(out, static_cast<double>(t.cols));
        const double changes = std::min<double>(
            static_cast<double>(items),
            static_cast<double>(stats.nonEmptyTypes()) * colBlocks +
                static_cast<double>(blocks) - 1);
        const double stage =
            latency + weightBytes / (gpu.l2BytesPerSecond / gpu.smCount);
        chain += stage * changes / static_cast<double>(items);
        weightBytes *= changes / static_cast<double>(items);
      }
      itemL2Bytes = tileRows * in * e + weightBytes +
                    tileRows * std::min<double>(t.cols, out) * e;
      totalFlops = flops * static_cast<double>(items);
      if (t.weightsCopied) {
        // The prelude reads every W_t and writes its transposed copy.
        const double copyBytes = 2.0 * types * in * out * 4;
        dramBytes += copyBytes;
        launches += 1;
        companionSeconds += latency + copyBytes / gpu.dramBytesPerSecond;
      }
    } else {
      // Sub-warps of dim_workers lanes take a row at a time; each FMA reads
      // one staged weight, a warp's reads one wavefront per 128 bytes (more
      // with the bank conflicts of transposed weights).
      const double lanes = std::max<int32_t>(1, s.dimWorkers);
      const double subWarps = std::max(1.0, plan.launch.threads / lanes);
      const double conflicts = transposedConflictWays(op, s);
      const double fmaPerClock = std::min(
          rates.fp32FmasPerClock, gpu.l1BytesPerClock / (e * conflicts) * 1.0);
      const double fmas = tileRows * in * out;
      smSeconds = fmas / fmaPerClock * cycle;
      chain += latency * ceilDiv(tileRows, subWarps);
      // The type's weights, staged on a change of type: the blocks' runs
      // cross every boundary between types once, and each run starts once.
      const double changes = std::min<double>(
          static_cast<double>(items),
          static_cast<double>(stats.nonEmptyTypes() + blocks - 1));
      const double stageBytes = in * out * e;
      const double stage =
          latency + stageBytes / (gpu.l2BytesPerSecond / gpu.smCount);
      chain += items > 0 ? stage * changes / static_cast<double>(items) : 0;
      itemL2Bytes = tileRows * (in + out) * e +
                    (items > 0 ? stageBytes * changes / items : 0);
      peakFlops = 2.0 * fmaPerClock * gpu.clockHz * gpu.smCount;
      totalFlops = 2.0 * rows * in * out;
    }
  } else {
    // Each split leaves a K x M partial in f32; the follow-up adds them
    // (gnnc_segment_weight_grad_reduce, whose rules of
    // gnnc/cuda/segment_reduce.cuh it shares): lanes of a block share an
    // output, each block walks its run of chunks of
    // kThreadsPerBlock / lanes threads' outputs, a load latency per
    // kSegmentReduceLoads splits of the largest type a lane sums.
    const double partialBytes = static_cast<double>(tiles) * in * out * 4;
    dramBytes = rows * (in + out) * e + partialBytes;
    launches = 2;
    const double reduceBytes = partialBytes + types * in * out * e;
    const double loads = defaults::kSegmentReduceLoads;
    const double lanes = gnnc::cuda::segmentReduceLanes(
        tiles, stats.types, defaults::kThreadsPerBlock,
        defaults::kSegmentReduceColumns, defaults::kSegmentReduceLoads);
    const double largestSplits =
        ceilDiv(static_cast<double>(stats.maxRows),
                static_cast<double>(std::max<int32_t>(1, s.tileRows)));
    const double vec =
        gnnc::cuda::segmentReduceVector(op.inputWidth * op.width);
    const double chunks =
        types * ceilDiv(in * out, vec * defaults::kThreadsPerBlock / lanes);
    // The reduction's grid: the main kernel's, or the plan's fewest.
    const double reduceBlocks = std::max<double>(
        static_cast<double>(blocks),
        plan.followUps.empty()
            ? 1.0
            : static_cast<double>(plan.followUps.front().launch.minBlocks));
    const double reduceChain =
        ceilDiv(chunks, reduceBlocks) *
        std::max(1.0, ceilDiv(ceilDiv(largestSplits, lanes), loads)) * latency;
    companionSeconds =
        latency + std::max(reduceChain, reduceBytes / gpu.dramBytesPerSecond);
    if (tensorCores) {
      const SegmentMmaTile t = segmentMmaTile(op, s);
      const double steps = ceilDiv(tileRows, static_cast<double>(t.depth));
      const double flops = 2.0 * t.rows * t.cols * steps * t.depth;
      peakFlops = tensorCorePeakFlops(gpu, op.type);
      smSeconds = tensorCoreItemSeconds(gpu, op, t, steps, flops, perSm);
      chain += pipelineSeconds(gpu, op, t, steps, blocks) +
               resultStoreSeconds(gpu, t.rows * t.cols * 4.0);
      itemL2Bytes = tileRows * (t.rows + t.cols) * e + t.rows * t.cols * 4;
      totalFlops = flops * static_cast<double>(items);
    } else {
      // Each thread sums its outputs over the split's rows: per warp-wide
      // step two loads (a broadcast of x, a coalesced row of dy), each a
      // wavefront.
      const double threads = std::max(1, plan.launch.threads);
      const double fmaPerClock =
          std::min(rates.fp32FmasPerClock,
                   kWarpLanes * gpu.l1BytesPerClock / (2 * detail::kLineBytes));
      const double fmas = tileRows * in * out;
      smSeconds = fmas / fmaPerClock * cycle;
      chain += latency * ceilDiv(in * out, threads);
      itemL2Bytes = tileRows * (in + out) * e + in * out * 4;
      peakFlops = 2.0 * fmaPerClock * gpu.clockHz * gpu.smCount;
      totalFlops = 2.0 * rows * in * out;
    }
  }

  // Waves: each item waits for its chain, or for its share of the SM.
  const double wave = std::max(chain, smSeconds * perSm);
  // No block ends before its longest item: a tile of
  // min(tile_rows, longest type) rows, whose chain grows with its rows
  // (weight-gradient splits of 4096 rows on AIFB's 90 types of ~600 rows
  // ran 2x slower on an H100 than splits of 1024, though their waves
  // alone were fewer).
  const double longestRows =
      std::min<double>(static_cast<double>(std::max<int32_t>(1, s.tileRows)),
                       static_cast<double>(stats.maxRows));
  const double longestChain =
      tileRows > 0 ? chain * std::max(1.0, longestRows / tileRows) : chain;
  p.latencySeconds = std::max(p.waves * chain, longestChain);
  p.smSeconds = p.waves * smSeconds * perSm;
  p.wavesSeconds = p.waves * wave + companionSeconds;
  p.dramBytes = dramBytes;
  p.bandwidthSeconds = std::max(dramBytes / gpu.dramBytesPerSecond,
                                itemL2Bytes * static_cast<double>(items) /
                                    gpu.l2BytesPerSecond) +
                       companionSeconds;
  p.issueSeconds = peakFlops > 0 ? totalFlops / peakFlops : 0;
  p.launchSeconds = launches * gpu.launchSeconds;
  const double top = detail::largestBound(p);
  p.seconds = top + p.launchSeconds;
  std::ostringstream why;
  why << p.bound << " bound: " << items << " items on " << blocks << " blocks ("
      << p.blocksPerSm << " per SM), " << p.waves << " waves of "
      << detail::formatModelTime(wave) << " (chain "
      << detail::formatModelTime(chain) << ", SM share "
      << detail::formatModelTime(smSeconds * perSm) << ")";
  p.why = why.str();
  return p;
}

std::vector<Schedule> gnnc::tuning::enumerateSegmentSchedules(const OpDesc &op,
                                                              MathMode math,
                                                              bool wgmma) {
  std::vector<Schedule> out;
  if (!isSegmentMatmulKind(op.kind))
    return out;
  const bool weightGrad = op.kind == OpKind::SegmentMatmulWeightGrad;
  auto addOne = [&](const Schedule &s) {
    Expected<Schedule> complete = completeSchedule(op, s);
    if (complete && planKernel(op, *complete))
      out.push_back(*complete);
  };
  auto add = [&](MathMode m, int32_t tile, int32_t stages) {
    Schedule s;
    s.strategy = Strategy::TileRouted;
    s.math = m;
    s.tileRows = tile;
    s.stages = stages;
    if (m != MathMode::TensorCore) {
      // SIMT and wgmma tiles have one thread layout.
      addOne(s);
      return;
    }
    // Each warp layout the tile allows (the default first).
    for (int32_t threads : segmentMmaThreadChoices(op, s)) {
      Schedule layout = s;
      layout.threadsPerBlock = threads;
      addOne(layout);
    }
  };
  const bool tensorCores =
      math == MathMode::TensorCore ||
      (math == MathMode::Auto && op.type != ElementType::F32);
  const bool simt = math != MathMode::TensorCore && math != MathMode::Wgmma;
  // TensorCore asks for tensor cores, either instruction (for f32 it is
  // the request for TF32); Auto keeps f32 on SIMT.
  // The weight gradient's wgmma reads X and dY transposed, which TF32
  // cannot: 16-bit types only, over the splits of the tensor-core kernel.
  const bool warpgroups =
      wgmma && (!weightGrad || op.type != ElementType::F32) &&
      (math == MathMode::Wgmma || math == MathMode::TensorCore ||
       (math == MathMode::Auto && op.type != ElementType::F32));
  if (math == MathMode::Wgmma && !warpgroups)
    return out;
  if (warpgroups) {
    const std::vector<int32_t> tiles =
        weightGrad ? std::vector<int32_t>(std::begin(kWeightGradSplits),
                                          std::end(kWeightGradSplits))
                   : std::vector<int32_t>(std::begin(kWgmmaTiles),
                                          std::end(kWgmmaTiles));
    for (int32_t tile : tiles)
      for (int32_t stages = limits::kMinPipelineStages;
           stages <= limits::kMaxPipelineStages; ++stages)
        add(MathMode::Wgmma, tile, stages);
  }
  if (tensorCores) {
    const std::vector<int32_t> tiles =
        weightGrad ? std::vector<int32_t>(std::begin(kWeightGradSplits),
                                          std::end(kWeightGradSplits))
                   : std::vector<int32_t>(std::begin(kTensorCoreTiles),
                                          std::end(kTensorCoreTiles));
    for (int32_t tile : tiles)
      for (int32_t stages = limits::kMinPipelineStages;
           stages <= limits::kMaxPipelineStages; ++stages)
        add(MathMode::TensorCore, tile, stages);
  }
  if (simt) {
    if (weightGrad)
      for (int32_t tile : kWeightGradSplits)
        add(MathMode::Simt, tile, 0);
    else
      for (int32_t tile : kSimtTiles)
        add(MathMode::Simt, tile, 0);
  }
  return out;
}

std::vector<Schedule>
gnnc::tuning::pruneSegmentSchedules(const SegmentStats &stats,
                                    std::vector<Schedule> schedules) {
  // Within each group of schedules equal but for tile_rows, the smallest
  // tile of each routing-table size survives.
  std::vector<Schedule> kept;
  std::map<std::string, std::map<int64_t, int32_t>> smallest;
  auto groupOf = [](Schedule s) {
    // The threads and the default register cap follow from the tile.
    s.tileRows = 0;
    s.threadsPerBlock = 0;
    s.blocksPerSm = 0;
    return s.str();
  };
  for (const Schedule &s : schedules) {
    auto &sizes = smallest[groupOf(s)];
    const int64_t count = stats.tilesFor(s.tileRows);
    auto it = sizes.find(count);
    if (it == sizes.end() || s.tileRows < it->second)
      sizes[count] = s.tileRows;
  }
  for (const Schedule &s : schedules)
    if (smallest[groupOf(s)][stats.tilesFor(s.tileRows)] == s.tileRows)
      kept.push_back(s);
  return kept;
}

std::vector<Candidate>
gnnc::tuning::rankSegmentSchedules(const GpuModel &gpu,
                                   const SegmentStats &stats, const OpDesc &op,
                                   const std::vector<Schedule> &schedules) {
  std::vector<Candidate> ranked;
  for (const Schedule &s : schedules)
    if (Expected<KernelPlan> plan = planKernel(op, s))
      ranked.push_back(
          {s, predictSegmentMatmul(gpu, stats, op, *plan), std::nullopt, ""});
  // Among equal times (a bound that holds whatever the tile, e.g. the
  // weights' bytes of many tiny types), the schedule whose other terms are
  // smaller: more slack if the largest term is wrong, as for the graph ops
  // (rankSchedules); then fewer work items (each costs its epilogue and a
  // turn of the persistent loop that the model leaves out: on IMDB's 43K
  // rows at K = M = 32, f16, tiles of 16 rows ran 1.5x slower on an H200
  // than tiles of 64, predicted alike); then the smaller SM time (the same
  // tile in fewer, taller warp tiles: the memory pipeline paces both
  // alike, but the weight gradient's 128 threads ran 10-20% faster than
  // 256 on an H100).
  auto slack = [](const Prediction &p) {
    return p.bandwidthSeconds + p.wavesSeconds + p.issueSeconds;
  };
  // Times within kSegmentEqualPredictions of each other (in steps of that
  // ratio, so that the order stays strict and weak) count as equal: the model
  // resolves no finer.
  auto step = [](double seconds) {
    return seconds > 0 ? std::floor(std::log(seconds) /
                                    std::log1p(kSegmentEqualPredictions))
                       : -1e300;
  };
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const Candidate &a, const Candidate &b) {
                     const double ta = step(a.prediction.seconds),
                                  tb = step(b.prediction.seconds);
                     if (ta != tb)
                       return ta < tb;
                     const double sa = step(slack(a.prediction)),
                                  sb = step(slack(b.prediction));
                     if (sa != sb)
                       return sa < sb;
                     if (a.prediction.workers != b.prediction.workers)
                       return a.prediction.workers < b.prediction.workers;
                     return a.prediction.smSeconds < b.prediction.smSeconds;
                   });
  return ranked;
}

std::vector<Candidate>
gnnc::tuning::rankedSegmentCandidates(const OpDesc &op,
                                      const SegmentStats &stats,
                                      const GpuModel &gpu, MathMode math) {
  return rankSegmentSchedules(
      gpu, stats, op,
      pruneSegmentSchedules(
          stats, enumerateSegmentSchedules(op, math, hasWgmma(gpu))));
}

Expected<Schedule>
gnnc::tuning::chooseSegmentSchedule(const OpDesc &op, const SegmentStats &stats,
                                    const GpuModel &gpu, MathMode math) {
  if (!isSegmentMatmulKind(op.kind))
    return Status::error(std::string("chooseSegmentSchedule takes a "
                                     "segmented matmul, not ") +
                         opKindName(op.kind));
  std::vector<Candidate> ranked = rankedSegmentCandidates(op, stats, gpu, math);
  if (ranked.empty())
    return Status::error(
        std::string(opKindName(op.kind)) + " (" + elementTypeName(op.type) +
        ", K " + std::to_string(op.inputWidth) + ", M " +
        std::to_string(op.width) + ", math " + mathModeName(math) +
        "): no tile_routed schedule has a plan");
  return ranked.front().schedule;
}

std::vector<size_t>
gnnc::tuning::segmentMeasurementOrder(const std::vector<Candidate> &ranked,
                                      size_t k) {
  k = std::min(k, ranked.size());
  if (k == 0)
    return {};
  std::vector<size_t> chosen{0};
  std::set<MathMode> seen = {ranked[0].schedule.math};
  for (size_t i = 1; i < ranked.size() && chosen.size() < k; ++i)
    if (seen.insert(ranked[i].schedule.math).second &&
        ranked[i].prediction.seconds <=
            kCloseMaths * ranked[0].prediction.seconds)
      chosen.push_back(i);
  for (size_t i = 1; i < ranked.size() && chosen.size() < k; ++i)
    if (std::find(chosen.begin(), chosen.end(), i) == chosen.end())
      chosen.push_back(i);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

TuningKey gnnc::tuning::segmentTuningKey(const OpDesc &op,
                                         const SegmentStats &stats,
                                         const GpuModel &gpu, MathMode math) {
  TuningKey key;
  key.op = op.kind == OpKind::SegmentMatmulWeightGrad ? "segment_matmul_dw"
           : op.transposeWeights                      ? "segment_matmul_dx"
                                                      : "segment_matmul";
  key.type = op.type == ElementType::F32 && math == MathMode::TensorCore
                 ? "tf32"
                 : elementTypeName(op.type);
  key.width = op.width;
  key.arch = gpu.arch;
  SegmentKey seg;
  seg.types = stats.types;
  // Three significant digits of the mean: sets alike in shape share an
  // entry.
  double mean = stats.meanRows;
  double scale = 1;
  while (mean >= 1000) {
    mean /= 10;
    scale *= 10;
  }
  seg.meanRows = static_cast<int64_t>(std::llround(mean) * scale);
  seg.spreadPercent = static_cast<int64_t>(std::llround(stats.spread * 100));
  seg.inputWidth = op.inputWidth;
  key.segments = seg;
  return key;
}

Expected<std::vector<int64_t>>
gnnc::tuning::readSegmentCsv(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    return Status::error(path + ": cannot read the segment list");
  std::vector<int64_t> seg = {0};
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos)
      continue;
    const std::string where = path + ":" + std::to_string(lineNo) + ": ";
    const size_t comma = line.find(',');
    auto number = [](const std::string &text, int64_t &value) {
      if (text.empty())
        return false;
      char *end = nullptr;
      errno = 0;
      long long v = std::strtoll(text.c_str(), &end, 10);
      if (errno || !end || *end != '\0' || v < 0)
        return false;
      value = v;
      return true;
    };
    int64_t start = 0, end = 0;
    if (comma == std::string::npos || !number(line.substr(0, comma), start) ||
        !number(line.substr(comma + 1), end)) {
      if (lineNo == 1 && seg.size() == 1)
        continue; // the header, "Start,End"
      return Status::error(where +
                           "expected 'Start,End' (two non-negative "
                           "integers), got '" +
                           line + "'");
    }
    if (start != seg.back())
      return Status::error(where + "type " + std::to_string(seg.size() - 1) +
                           " starts at row " + std::to_string(start) +
                           ", not where the last one ended (" +
                           std::to_string(seg.back()) + ")");
    if (end < start)
      return Status::error(where + "type " + std::to_string(seg.size() - 1) +
                           " ends at row " + std::to_string(end) +
                           ", before its start " + std::to_string(start));
    seg.push_back(end);
  }
  if (seg.size() < 2)
    return Status::error(path + ": no segments");
  return seg;
}

Expected<std::vector<int64_t>>
gnnc::tuning::generateSegments(const std::string &name, uint64_t seed) {
  const Status bad = Status::error(
      "segment set '" + name +
      "': expected gen<types>x<mean rows per type>, e.g. gen64x2000");
  if (name.rfind("gen", 0) != 0)
    return bad;
  const size_t x = name.find('x', 3);
  if (x == std::string::npos)
    return bad;
  char *end = nullptr;
  const std::string typesText = name.substr(3, x - 3);
  const std::string meanText = name.substr(x + 1);
  long long types = std::strtoll(typesText.c_str(), &end, 10);
  if (typesText.empty() || *end != '\0' || types < 1 || types > 1000000)
    return bad;
  long long mean = std::strtoll(meanText.c_str(), &end, 10);
  if (meanText.empty() || *end != '\0' || mean < 0 ||
      mean * types > (1ll << 31))
    return bad;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> rowsOf(0, 2 * mean);
  std::vector<int64_t> seg = {0};
  for (long long t = 0; t < types; ++t)
    seg.push_back(seg.back() + rowsOf(rng));
  return seg;
}

namespace {

/// The datasets folder: `datasets`, else $GNNC_DATASETS; "" when neither.
std::string datasetsFolder(const std::string &datasets) {
  if (!datasets.empty())
    return datasets;
  const char *env = std::getenv("GNNC_DATASETS");
  return env && *env ? env : "";
}

} // namespace

Expected<std::vector<int64_t>>
gnnc::tuning::loadSegmentSet(const std::string &name,
                             const std::string &datasets, uint64_t seed) {
  const std::string csv = ".csv";
  if (name.size() > csv.size() &&
      name.compare(name.size() - csv.size(), csv.size(), csv) == 0)
    return readSegmentCsv(name);
  if (name.rfind("gen", 0) == 0)
    return generateSegments(name, seed);
  const std::string folder = datasetsFolder(datasets);
  if (folder.empty())
    return Status::error("segment set '" + name +
                         "': no datasets folder (pass one, or set "
                         "GNNC_DATASETS to the folder holding segments/)");
  return readSegmentCsv(folder + "/segments/" + name + csv);
}

Expected<std::vector<std::string>>
gnnc::tuning::segmentSetNames(const std::string &datasets) {
  const std::string folder = datasetsFolder(datasets);
  if (folder.empty())
    return Status::error("no datasets folder (pass one, or set GNNC_DATASETS "
                         "to the folder holding segments/)");
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto &entry : std::filesystem::directory_iterator(
           std::filesystem::path(folder) / "segments", ec))
    if (entry.path().extension() == ".csv")
      names.push_back(entry.path().stem().string());
  if (ec)
    return Status::error(folder + "/segments: cannot list: " + ec.message());
  if (names.empty())
    return Status::error(folder + "/segments: no segment sets (*.csv)");
  std::sort(names.begin(), names.end());
  return names;
}
