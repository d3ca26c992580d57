//===- CostModel.cpp - Predicted time of a gnn.spmm schedule --------------===//
//
// The kernel being modelled (lib/Target/CUDA): a group of `lanes` threads
// owns one row. It walks the row's neighbours `lanes` at a time: every lane
// loads one column index (one dependent load), then the group takes those
// neighbours `edge batch` at a time, broadcasting each index with a shuffle
// and issuing `edge batch * chunks_per_lane` vector loads of X per lane
// before accumulating any of them. Rows are independent; a block holds
// `rows_per_block` groups; warps and blocks finish when their longest row
// does.
//
// The time is the largest of four bounds, each a different resource that
// can saturate, plus the launch overhead:
//  - bandwidth: bytes that must come from DRAM over the DRAM bandwidth (and
//    all gathered bytes over the L2 bandwidth);
//  - latency: the longest row's chain of dependent loads (one group cannot
//    go faster than its loads come back);
//  - waves: how many rounds of resident blocks the grid needs, each as long
//    as the slowest row of a typical block (Little's law for the many short
//    rows: too few loads in flight for the bandwidth);
//  - issue: load instructions through the SMs' L1 (a wavefront per distinct
//    128-byte line per clock), including the issue slots that warps waste on
//    lanes whose row is already done.
//
// The edge_parallel (merge-path) kernel is modelled by predictEdgeParallel
// below with the same four bounds; see CostModel.h.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Tuning/CostModel.h"
#include "gnnc/Plan/Checked.h"
#include "gnnc/Tuning/ModelDetail.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

using namespace gnnc;
using namespace gnnc::tuning;
using namespace gnnc::tuning::detail;

namespace {

/// Clock cycles the L1 needs for one warp-wide load of X: each of the warp's
/// 32 / lanes groups reads its own row of X (distinct lines), lanes * vw *
/// elementBytes contiguous bytes each, one wavefront per 128-byte line.
double cyclesPerWarpLoad(const ThreadMapping &m, int vw, double elementBytes) {
  double groups = 32.0 / m.lanes;
  double bytesPerGroup = m.lanes * vw * elementBytes;
  return groups * std::max(1.0, std::ceil(bytesPerGroup / kLineBytes));
}

/// Registers per thread, roughly: a fixed 32 for addresses and loop state,
/// one f32 accumulator per owned feature, and the prefetched batch of X.
/// An edge-parallel worker adds 8 for its 64-bit merge-path positions (the
/// stretch's two diagonals and two rows).
int estimateRegisters(const ThreadMapping &m, int vw, double elementBytes,
                      bool edgeParallel) {
  double acc = static_cast<double>(m.chunksPerLane) * vw;
  double prefetch = m.edgeUnroll * acc * elementBytes / 4.0;
  int regs = static_cast<int>(32 + (edgeParallel ? 8 : 0) + acc + prefetch);
  regs = (regs + 7) / 8 * 8;
  return std::min(255, regs);
}

} // namespace

std::string gnnc::tuning::shortText(const Schedule &s) {
  std::ostringstream os;
  os << "vw=" << s.vectorWidth << " dw=" << s.dimWorkers
     << " tpb=" << s.threadsPerBlock;
  if (s.strategy == Strategy::EdgeParallel)
    os << " ep=" << s.edgesPerWarp;
  if (s.strategy == Strategy::NeighborGroup)
    os << " gs=" << s.groupSize;
  if (s.blocksPerSm > 0)
    os << " bps=" << s.blocksPerSm;
  if (s.edgeBatch > 0)
    os << " eb=" << s.edgeBatch;
  return os.str();
}

std::string gnnc::tuning::tuningOpName(const OpDesc &op) {
  if (op.kind == OpKind::Spmm) {
    // Plain sums keep the bare name (and the entries stored under it).
    std::string name = opKindKey(op.kind);
    if (op.reduce != Reduce::Sum)
      name += std::string("_") + reduceName(op.reduce);
    if (op.scale != DegreeScale::None)
      name += std::string("_scale_") + degreeScaleName(op.scale);
    if (op.selfWeight)
      name += "_self";
    if (op.attention)
      name += "_attention";
    return name;
  }
  if (op.kind != OpKind::Sddmm)
    return opKindKey(op.kind);
  return op.form == SddmmForm::Add ? "sddmm_add" : "sddmm";
}

std::string gnnc::tuning::opDescription(const OpDesc &op) {
  if (op.kind != OpKind::Sddmm)
    return "";
  std::string out = op.form == SddmmForm::Add ? ", sddmm add" : ", sddmm dot";
  if (op.leakyRelu)
    out += ", leaky_relu";
  return out;
}

graph::AnalysisOptions gnnc::tuning::profileOptionsFor(const GpuModel &gpu,
                                                       const OpDesc &op) {
  graph::AnalysisOptions options;
  // (A width over the plans' limit saturates rather than wraps.)
  int64_t rowBytes = std::max<int64_t>(
      1, checkedMul(op.width, static_cast<int64_t>(elementSize(op.type)))
             .value_or(std::numeric_limits<int64_t>::max()));
  // The CSR arrays and Y stream through the L2 and are not reused; X rows
  // compete with their recently touched lines. Give feature rows 3/4 of the
  // L2 (the rest holds the streams in flight).
  double share = kL2ReuseShare * gpu.l2Bytes;
  options.reuseWindowRows =
      std::max<int64_t>(1, static_cast<int64_t>(share / rowBytes));
  options.featureBytesPerRow = rowBytes;
  options.estimateReuse = true;
  return options;
}

Prediction gnnc::tuning::predictSpmm(const GpuModel &gpu,
                                     const graph::GraphProfile &profile,
                                     const OpDesc &op, const KernelPlan &plan) {
  Prediction p;
  p.plan = plan;
  const Schedule &s = plan.schedule;
  const ThreadMapping &m = plan.mapping;
  const double elem = static_cast<double>(elementSize(op.type));
  const int vw = std::max(1, s.vectorWidth);
  const double rows = static_cast<double>(profile.numRows);
  const double edges = static_cast<double>(profile.nnz);
  const double clock = gpu.clockHz;
  // Every kernel the plan launches: the main one and its companions (the
  // zeroing kernel of split rows, attention's statistics, the fix-up).
  const double launches =
      1.0 + static_cast<double>(plan.preludes.size() + plan.followUps.size());

  // Bandwidth. Compulsory: row offsets, column indices (and edge values)
  // once, Y written once. Gathered: every edge reads its neighbour's row of
  // X (gatherTraffic).
  double rowBytes = static_cast<double>(op.width) * elem;
  double sectorRowBytes = std::ceil(rowBytes / kSectorBytes) * kSectorBytes;
  double csrBytes = (rows + 1) * offsetBytes(op) + edges * indexBytes(op) +
                    (op.edgeValues ? edges * elem : 0);
  double yBytes = rows * rowBytes;
  GatherTraffic gather = gatherTraffic(profile, edges, sectorRowBytes);
  // Column scaling gathers one f32 factor per edge (a sector per edge from
  // the L2; the factors themselves come from DRAM once). The self term reads
  // each row's own features once. Row factors come from the row offsets.
  if (op.scalesColumns()) {
    double factors = static_cast<double>(profile.numCols) * 4;
    gather.bytes += edges * kSectorBytes;
    gather.dramBytes += factors;
  }
  if (op.selfWeight)
    csrBytes += rows * rowBytes;
  // Attention: passes over the column indices before the aggregation (one
  // under vertex_parallel, the maxima and the sums under neighbor_group;
  // mostly from L2: counted as gathered), and one score per edge gathered
  // in each pass (a sector from the L2; the scores come from DRAM once).
  if (op.attention) {
    const double passes = s.strategy == Strategy::NeighborGroup ? 2 : 1;
    gather.bytes +=
        edges * (passes * indexBytes(op) + (passes + 1) * kSectorBytes);
    gather.dramBytes += static_cast<double>(profile.numCols) * elem;
  }
  const double hit = gather.hitRate;
  p.gatherHitRate = hit;
  // edge_parallel: every worker leaves two f32 partial rows (its first and
  // last row, which it may share with a neighbour) in the workspace, and
  // the fix-up kernel reads them back.
  const double workers =
      (s.strategy == Strategy::EdgeParallel)
          ? std::max(1.0, std::ceil((rows + edges) / s.edgesPerWarp))
          : 0.0;
  p.workers = workers;
  p.workspaceBytes = workers * 2 * static_cast<double>(op.width) * 4 * 2;
  // neighbor_group: the host's groups (a row index per group, the first
  // group of each row), the first kernel's pass that zeroes Y, and the
  // atomic additions of the rows that span blocks (at most the first and
  // the last row of a block: read and written in f32-sized words).
  double groups = 0;
  if ((s.strategy == Strategy::NeighborGroup)) {
    groups = neighbourGroupCount(profile, s.groupSize);
    double groupBlocks = std::ceil(groups / m.rowsPerBlock);
    p.workspaceBytes = groupTableBytes(groups, rows) + yBytes +
                       groupBlocks * 2 * op.width * 4 * 2;
  }
  p.dramBytes = csrBytes + yBytes + gather.dramBytes + p.workspaceBytes;
  p.bandwidthSeconds =
      std::max(p.dramBytes / gpu.dramBytesPerSecond,
               (gather.bytes + csrBytes + yBytes + p.workspaceBytes) /
                   gpu.l2BytesPerSecond);

  // Latency of one X load: L2 hits and misses mixed as the reuse estimate
  // says. Column indices are read once, contiguously: a DRAM miss.
  // Both wait longer while every SM is gathering (loadedLatencyFactor).
  double xLatency =
      (hit * gpu.l2LatencySeconds + (1 - hit) * gpu.loadLatencySeconds) *
      gpu.loadedLatencyFactor;
  double indexLatency = gpu.loadLatencySeconds * gpu.loadedLatencyFactor;
  // A batch's loads leave one lane one after another: edge batch *
  // chunks_per_lane instructions, each waiting for its L1 wavefronts.
  double batchIssue = m.edgeUnroll * static_cast<double>(m.chunksPerLane) *
                      cyclesPerWarpLoad(m, vw, elem) / clock;
  // L1 wavefronts of all feature loads: every edge costs each group
  // chunks_per_lane loads of ceil(lanes * vw * elem / 128) wavefronts.
  double wavefronts =
      edges * m.chunksPerLane *
      std::max(1.0, std::ceil(m.lanes * vw * elem / kLineBytes));
  int regs =
      estimateRegisters(m, vw, elem, (s.strategy == Strategy::EdgeParallel));
  p.blocksPerSm = residentBlocksPerSm(gpu, plan, regs);
  double resident = static_cast<double>(gpu.smCount) * p.blocksPerSm;
  double blockMax = 0, edgesPerWorker = 0;

  if ((s.strategy == Strategy::NeighborGroup)) {
    // One group's dependent chain: its row and its range of edges (loads
    // side by side from small tables that stay in the L2 when they fit its
    // share, like the merge-path search's row offsets), then a row of at
    // most G neighbours walked like a vertex-parallel row.
    double tableBytes =
        groupTableBytes(groups, rows) + (rows + 1) * offsetBytes(op);
    double tableLatency =
        tableLatencySeconds(gpu, tableBytes) * gpu.loadedLatencyFactor;
    auto groupChain = [&](double degree) {
      double windows =
          std::ceil(degree / (static_cast<double>(m.lanes) * m.edgeUnroll));
      double batches = std::ceil(degree / m.edgeUnroll);
      return tableLatency + windows * indexLatency +
             batches * (xLatency + batchIssue);
    };
    double longest =
        std::min<double>(s.groupSize, static_cast<double>(profile.maxDegree));
    p.latencySeconds = groupChain(std::max(1.0, longest));
    double meanGroup = groups > 0 ? edges / groups : 0;
    double residentGroups = resident * m.rowsPerBlock;
    p.waves = groups > 0 ? std::ceil(groups / residentGroups) : 0;
    p.wavesSeconds = p.waves * groupChain(std::max(1.0, meanGroup));
    // Issue: the loads, the partial rows each group stores to and its
    // leader reads back from shared memory (128 bytes per clock per SM), and
    // a warp's groups running as long as its longest.
    int64_t groupsPerWarp = std::max(1, 32 / m.lanes);
    double warps = std::ceil(groups / groupsPerWarp);
    double issueSlots = warps * longest * m.chunksPerLane;
    double sharedCycles = groups * op.stride() * 4.0 * 2 / kLineBytes;
    p.warpImbalance = meanGroup > 0 ? std::max(1.0, longest / meanGroup) : 1;
    p.issueSeconds = (std::max(wavefronts, issueSlots) + sharedCycles) /
                     (gpu.smCount * clock);
    p.launchSeconds = launches * gpu.launchSeconds;
  } else if ((s.strategy == Strategy::EdgeParallel)) {
    // One worker's dependent chain over `edgeItems` edges of its stretch:
    //  - the merge-path search for its first and last row: the worker's
    //    lanes probe both at once, lanes points per step, so
    //    ~log_(lanes+1)(rows + 1) dependent loads; every worker probes the
    //    same upper levels and row_ptr is small, so they hit the L2 when
    //    row_ptr fits in its share;
    //  - the row ends of its stretch into shared memory (one load);
    //  - one index load per window of lanes * batch edges;
    //  - one batch of feature loads per `edge batch` edges.
    // Rows ending inside the stretch cost stores, not dependent loads, so
    // no row's degree appears: no hub term.
    double rowPtrBytes = (rows + 1) * offsetBytes(op);
    double searchLatency = tableLatencySeconds(gpu, rowPtrBytes);
    double searchSteps =
        std::ceil(std::log2(rows + 2) / std::log2(m.lanes + 1.0));
    auto workerChain = [&](double edgeItems) {
      double windows =
          std::ceil(edgeItems / (static_cast<double>(m.lanes) * m.edgeUnroll));
      double batches = std::ceil(edgeItems / m.edgeUnroll);
      return searchSteps * searchLatency + indexLatency +
             windows * indexLatency + batches * (xLatency + batchIssue);
    };
    // The longest chain: a stretch of edges only (inside a long row).
    p.latencySeconds = workerChain(static_cast<double>(s.edgesPerWarp));
    // A typical stretch holds edges in the graph's proportion.
    edgesPerWorker =
        rows + edges > 0 ? s.edgesPerWarp * edges / (rows + edges) : 0.0;
    double residentWorkers = resident * m.rowsPerBlock;
    p.waves = std::ceil(workers / residentWorkers);
    p.wavesSeconds = p.waves * workerChain(edgesPerWorker);
    // Every warp's workers have equal stretches: no divergence beyond the
    // loads themselves.
    p.warpImbalance = 1;
    p.issueSeconds = wavefronts / (gpu.smCount * clock);
    p.launchSeconds = launches * gpu.launchSeconds;
    // Instructions between the loads, which the bounds above leave out:
    // every warp step (one item for each of the warp's 32 / lanes workers)
    // costs edgeStepCycles per chunk a lane owns, and every row end costs
    // rowEndCycles for each worker of its warp (the warp runs the flush
    // path once per worker that reaches a row end, one after another).
    // Both constants are fitted on R-MAT kernels (fitKernelCosts); they
    // are added to the largest bound, since the dependent chain waits for
    // them too.
    double workersPerWarp = std::max(1, 32 / m.lanes);
    p.instructionSeconds =
        (gpu.edgeStepCycles * (rows + edges) / workersPerWarp *
             static_cast<double>(m.chunksPerLane) +
         gpu.rowEndCycles * rows * workersPerWarp) /
        (gpu.smCount * clock);
  } else {
    // The dependent chain of a row of degree d, as the kernel walks it:
    // ceil(d / (lanes * edge batch)) index windows (each lane loads a
    // batch of indices), and ceil(d / edge batch) batches of X loads (a
    // group processes exactly one row, so no serial rows are added).
    auto rowChain = [&](double degree) {
      if (degree <= 0)
        return indexLatency;
      double windows =
          std::ceil(degree / (static_cast<double>(m.lanes) * m.edgeUnroll));
      double batches = std::ceil(degree / m.edgeUnroll);
      return windows * indexLatency + batches * (xLatency + batchIssue);
    };
    p.latencySeconds = rowChain(static_cast<double>(profile.maxDegree));

    // Waves. A block's slot frees when its longest row is done, so each
    // wave lasts the chain of the expected longest of rows_per_block rows.
    double blocks = std::ceil(rows / m.rowsPerBlock);
    p.waves = std::ceil(blocks / resident);
    blockMax = expectedMaxDegree(profile, m.rowsPerBlock);
    p.wavesSeconds = rows > 0 ? p.waves * rowChain(blockMax) : 0;

    // Issue. A warp also spends one issue slot per instruction for as long
    // as its longest row (32 / lanes rows per warp) runs, whether or not
    // its other rows are done.
    int64_t rowsPerWarp = std::max(1, 32 / m.lanes);
    double warpMax = expectedMaxDegree(profile, rowsPerWarp);
    p.warpImbalance = profile.meanDegree > 0
                          ? std::max(1.0, warpMax / profile.meanDegree)
                          : 1.0;
    double warps = std::ceil(rows / rowsPerWarp);
    double issueSlots = warps * warpMax * m.chunksPerLane;
    p.issueSeconds = std::max(wavefronts, issueSlots) / (gpu.smCount * clock);
    p.launchSeconds = launches * gpu.launchSeconds;
  }

  double largest = largestBound(p);
  p.seconds = largest + p.instructionSeconds + p.launchSeconds;

  std::ostringstream why;
  why << p.bound << "-bound: ";
  if (p.bound == "bandwidth")
    why << p.dramBytes / 1e6 << " MB from DRAM (gather hit rate "
        << static_cast<int>(hit * 100 + 0.5) << "%)";
  else if (p.bound == "latency" && (s.strategy == Strategy::NeighborGroup))
    why << "one group's chain: up to " << s.groupSize
        << " neighbours in batches of " << m.edgeUnroll << " over " << m.lanes
        << " lanes";
  else if (p.bound == "waves" && (s.strategy == Strategy::NeighborGroup))
    why << p.waves << " waves of " << resident * m.rowsPerBlock << " groups of "
        << s.groupSize << " neighbours at most";
  else if (p.bound == "latency" && (s.strategy == Strategy::EdgeParallel))
    why << "one worker's chain: merge-path search, " << s.edgesPerWarp
        << " edges in batches of " << m.edgeUnroll << " over " << m.lanes
        << " lanes";
  else if (p.bound == "latency")
    why << "longest row (" << profile.maxDegree << " neighbours) in batches of "
        << m.edgeUnroll << " over " << m.lanes << " lanes";
  else if (p.bound == "waves")
    explainWaves(why, p, m, resident, s.strategy == Strategy::EdgeParallel,
                 edgesPerWorker, blockMax);
  else
    why << "load issue, warp imbalance " << p.warpImbalance << "x";
  why << "; " << formatModelTime(largest);
  if (p.instructionSeconds > 0)
    why << " + " << formatModelTime(p.instructionSeconds)
        << " of loop instructions";
  why << (launches > 1 ? " + " + std::to_string(int(launches)) + " launches"
                       : std::string(" + launch"));
  p.why = why.str();
  return p;
}
