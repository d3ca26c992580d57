//===- SddmmModel.cpp - Predicted time of a gnn.sddmm schedule ------------===//
//
// The kernels being modelled are the vertex_parallel and neighbor_group
// patterns (Patterns/SddmmVertexParallel.cpp) and the edge_parallel one
// (Patterns/SddmmEdgeParallel.cpp); SddmmModel.h describes them and the
// four bounds.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Tuning/SddmmModel.h"
#include "gnnc/Tuning/ModelDetail.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

using namespace gnnc;
using namespace gnnc::tuning;
using namespace gnnc::tuning::detail;

namespace {

/// Clock cycles from a warp shuffle's issue to its result: the order of a
/// shared-memory access (shuffles use the same crossbar), an architectural
/// figure rather than one fitted to kernel times. Only the dot form's
/// reduction (log2(lanes) dependent shuffles per batch) waits for it.
constexpr double kShuffleCycles = 32;

} // namespace

Prediction gnnc::tuning::predictSddmm(const GpuModel &gpu,
                                      const graph::GraphProfile &profile,
                                      const OpDesc &op,
                                      const KernelPlan &plan) {
  Prediction p;
  p.plan = plan;
  const Schedule &s = plan.schedule;
  const ThreadMapping &m = plan.mapping;
  const double elem = static_cast<double>(elementSize(op.type));
  const int vw = std::max(1, s.vectorWidth);
  const double width = static_cast<double>(std::max<int64_t>(1, op.width));
  const double rows =
      static_cast<double>(std::max<int64_t>(0, profile.numRows));
  const double edges = static_cast<double>(std::max<int64_t>(0, profile.nnz));
  const double emptyRows =
      std::clamp(static_cast<double>(profile.emptyRows), 0.0, rows);
  const double clock = gpu.clockHz;
  const double lanes = m.lanes;
  const double cpl = static_cast<double>(m.chunksPerLane);
  const double batch = m.edgeUnroll;
  const bool edgeParallel = (s.strategy == Strategy::EdgeParallel);
  const bool grouped = (s.strategy == Strategy::NeighborGroup);
  const bool packed = edgeParallel && m.packed;
  const bool dot = !(op.form == SddmmForm::Add);

  // Workers of the merge path (edge_parallel).
  const double workers =
      edgeParallel ? std::max(1.0, std::ceil((rows + edges) / s.edgesPerWarp))
                   : 0.0;
  p.workers = workers;
  // Neighbour groups (neighbor_group).
  const double groups =
      grouped ? neighbourGroupCount(profile, s.groupSize) : 0.0;

  // Bandwidth.
  double rowBytes = width * elem;
  double sectorRowBytes = std::ceil(rowBytes / kSectorBytes) * kSectorBytes;
  double csrBytes = (rows + 1) * offsetBytes(op) + edges * indexBytes(op);
  // Row side: vertex_parallel loads every row's features once (empty rows
  // too); an edge_parallel worker loads its first row and each row with
  // edges whose start it passes. DRAM sees each row once (rows are read in
  // order; a row shared by two workers is an L2 hit for the second).
  // neighbor_group: each group loads its row (rows with edges only), and
  // reads its row and the row's first group from the host's tables.
  double rowLoads = edgeParallel ? std::min(rows, (rows - emptyRows) + workers)
                    : grouped    ? groups
                                 : rows;
  double rowDram =
      (edgeParallel || grouped ? rows - emptyRows : rows) * rowBytes;
  if (grouped)
    csrBytes += groupTableBytes(groups, rows, m.edgeGroups);
  double rowL2 = rowLoads * sectorRowBytes;
  // Column side: gathered per edge, as gnn.spmm gathers X.
  const GatherTraffic gather = gatherTraffic(profile, edges, sectorRowBytes);
  const double hit = gather.hitRate;
  p.gatherHitRate = hit;
  // Outputs: contiguous per edge, written once.
  double outBytes = edges * (dot ? 1.0 : width) * elem;
  p.dramBytes = csrBytes + rowDram + gather.dramBytes + outBytes;
  p.bandwidthSeconds = std::max(p.dramBytes / gpu.dramBytesPerSecond,
                                (csrBytes + rowL2 + gather.bytes + outBytes) /
                                    gpu.l2BytesPerSecond);

  // L1 wavefronts of one warp-wide access of a group's lanes (each of the
  // warp's 32 / lanes groups touches its own row or edge).
  double wavefrontsPerAccess =
      std::max(1.0, std::ceil(lanes * vw * elem / kLineBytes));
  double cyclesPerWarpAccess =
      std::max(1.0, 32.0 / lanes) * wavefrontsPerAccess;
  double reduceSteps = dot ? std::log2(lanes) : 0.0;
  // Per edge and group: column loads (and, packed, row loads), the add
  // form's stores.
  double loadsPerEdge = cpl * (packed ? 2 : 1);
  double storesPerEdge = dot ? 0 : cpl;
  // Registers per thread, as the CUDA compiler allocates them for these
  // kernels (ptxas of CUDA 13.0 for sm_90 on the enumerated schedules of
  // widths 32-128, f32 and f16, both forms; bench/NOTES.md): it keeps the
  // row's features as floats and schedules the batch's loads without
  // holding all of them at once. vertex_parallel: about 30 plus the
  // features a lane owns; edge_parallel: 32 for the merge-path positions
  // and loop state plus 8 per feature a lane owns (more when it owns
  // several chunks or 4 or more features); packed 16-bit: at least 64,
  // 108 with 8-wide vectors.
  double regsF = static_cast<double>(m.chunksPerLane) * vw;
  double registers;
  if (!edgeParallel)
    registers = 30 + 1.1 * regsF;
  else if (!packed)
    registers =
        32 + 8 * regsF + (m.chunksPerLane > 1 ? 8 : 0) + (regsF >= 4 ? 4 : 0);
  else
    registers = std::max(64.0, 12 * regsF + 12);
  int regs = std::min(255, (static_cast<int>(registers) + 7) / 8 * 8);
  int threads = std::max(1, s.threadsPerBlock);
  p.blocksPerSm = residentBlocksPerSm(gpu, plan, regs);
  double resident = static_cast<double>(gpu.smCount) * p.blocksPerSm;

  // Latencies of one dependent load (see predict()): gathers mix L2 hits
  // and misses as the reuse estimate says; indices and the row side's
  // features stream from DRAM; row_ptr read in order mostly hits a line
  // already fetched (taken as an L2 hit). A load waits loadedLatencyFactor
  // times its unloaded latency when every warp slot of the GPU is
  // gathering, and about its unloaded latency when the kernel fills only
  // a small part of them (small graphs): the factor grows with the share
  // of the resident warp slots the grid fills.
  double gridWarps = std::ceil((edgeParallel ? workers
                                : grouped    ? groups
                                             : rows) *
                               lanes / 32.0);
  double residentWarps = resident * threads / 32.0;
  double busy =
      residentWarps > 0 ? std::min(1.0, gridWarps / residentWarps) : 1.0;
  double loadFactor = 1 + (gpu.loadedLatencyFactor - 1) * busy;
  // neighbor_group: a load waits longer than its unloaded latency only when
  // the gathers the resident warps keep in flight take longer than that to
  // serve (Little's law), up to loadedLatencyFactor. A worker with a batch
  // of 8 gathers in flight loads the memory system more than 8 workers of
  // one, which the share of warp slots does not tell apart (on cora and
  // citeseer it put groups of 4 and of one edge 4-10% behind groups of 8
  // where they measure 1.1-1.4x faster; bench/NOTES.md).
  if (grouped) {
    double inFlight =
        std::min(gridWarps, residentWarps) * 32.0 * batch * cpl * vw * elem;
    double serveRate =
        1.0 / (hit / gpu.l2BytesPerSecond + (1 - hit) / gpu.dramBytesPerSecond);
    loadFactor = std::clamp(inFlight / serveRate / gpu.loadLatencySeconds, 1.0,
                            std::max(1.0, gpu.loadedLatencyFactor));
  }
  double xLatency =
      (hit * gpu.l2LatencySeconds + (1 - hit) * gpu.loadLatencySeconds) *
      loadFactor;
  double indexLatency = gpu.loadLatencySeconds * loadFactor;
  double rowLatency = indexLatency;
  double rowPtrLatency = gpu.l2LatencySeconds * loadFactor;
  // One batch: its loads and stores leave one after another, then (dot) the
  // batch's sums take log2(lanes) rounds of dependent shuffles.
  double batchIssue =
      batch * (loadsPerEdge + storesPerEdge) * cyclesPerWarpAccess / clock +
      reduceSteps * kShuffleCycles / clock;

  // Issue: L1 wavefronts of every load and store, and the shuffles (one
  // warp instruction serves its 32 / lanes groups): each edge broadcasts
  // its column index, dot reduces across the lanes.
  double gatherWavefronts = edges * cpl * wavefrontsPerAccess;
  double rowWavefronts =
      (packed ? edges : rowLoads) * cpl * wavefrontsPerAccess;
  double storeWavefronts =
      dot ? (edgeParallel ? edges : std::ceil(edges / lanes))
          : edges * cpl * wavefrontsPerAccess;
  double indexWavefronts = std::ceil(edges / lanes);
  // Per edge: its index's broadcast and (dot) its share of the batch's
  // sums (gnnc_lane_sums: about one shuffle an edge, not log2(lanes)).
  double sumShuffles =
      dot ? static_cast<double>(m.laneSumShuffles()) / batch : 0.0;
  double shuffleCycles = edges * (1 + sumShuffles) * lanes / 32.0;
  double wavefronts =
      gatherWavefronts + rowWavefronts + storeWavefronts + indexWavefronts;
  double perEdgeInstructions = loadsPerEdge + storesPerEdge + 1 + sumShuffles;

  double blockMax = 0, typicalEdges = 0, meanGroup = 0;
  if (edgeParallel) {
    // One worker's chain over a stretch of `edgeItems` edges and `rowEnds`
    // row ends (`rowStarts` of them starting rows with edges):
    //  - the merge-path search (as gnn.spmm's);
    //  - its first row end and row (packed: its row ends into shared memory);
    //  - one index window per lanes * batch edges, one batch of feature
    //    loads per `edge batch` edges;
    //  - unpacked: one dependent row_ptr load per row end passed and one
    //    dependent feature load per row with edges started.
    double rowPtrBytes = (rows + 1) * offsetBytes(op);
    double searchLatency = tableLatencySeconds(gpu, rowPtrBytes);
    double searchSteps =
        std::ceil(std::log2(rows + 2) / std::log2(lanes + 1.0));
    double workersPerWarp =
        std::min(std::max(1.0, 32.0 / lanes), std::max(1.0, workers));
    auto workerChain = [&](double edgeItems, double rowEnds, double rowStarts) {
      double windows = std::ceil(edgeItems / (lanes * batch));
      double batches = std::ceil(edgeItems / batch);
      double chain = searchSteps * searchLatency + indexLatency +
                     windows * indexLatency + batches * (xLatency + batchIssue);
      // The row-end path diverges: a warp runs it once for each of its
      // workers that reaches a row end, one after another.
      if (!packed)
        chain +=
            workersPerWarp * (rowEnds * rowPtrLatency + rowStarts * rowLatency);
      return chain;
    };
    const double items = s.edgesPerWarp;
    const double total = rows + edges;
    typicalEdges = total > 0 ? items * edges / total : 0.0;
    double typicalEnds = total > 0 ? items * rows / total : 0.0;
    double typicalStarts =
        rows > 0 ? typicalEnds * (rows - emptyRows) / rows : 0.0;
    // The longest chain: a stretch of edges only (inside a long row), or a
    // typical stretch when its row ends cost more.
    p.latencySeconds =
        std::max(workerChain(items, 0, 0),
                 workerChain(typicalEdges, typicalEnds, typicalStarts));
    double residentWorkers = resident * m.rowsPerBlock;
    p.waves = std::ceil(workers / residentWorkers);
    p.wavesSeconds =
        p.waves * workerChain(typicalEdges, typicalEnds, typicalStarts);
    p.warpImbalance = 1;
    p.issueSeconds = (wavefronts + shuffleCycles) / (gpu.smCount * clock);
  } else if (grouped) {
    // One group's chain: its row and its range of edges (side by side from
    // small tables: L2 hits when they fit its share), then the row's
    // features beside the first window of indices, then a stretch of at
    // most G neighbours walked as vertex_parallel walks a row.
    double tableBytes = groupTableBytes(groups, rows, m.edgeGroups) +
                        (rows + 1) * offsetBytes(op);
    double tableLatency = tableLatencySeconds(gpu, tableBytes) * loadFactor;
    auto groupChain = [&](double degree) {
      // Groups of one edge: the row beside the column index, then the
      // row's and the column's features side by side.
      if (m.edgeGroups)
        return std::max(tableLatency, indexLatency) +
               std::max(rowLatency, xLatency) + batchIssue;
      double full = std::floor(degree / lanes);
      double rest = degree - full * lanes;
      double windows = std::ceil(degree / lanes);
      double batches =
          full * std::ceil(lanes / batch) + std::ceil(rest / batch);
      return tableLatency + std::max(rowLatency, indexLatency) +
             (windows - 1) * indexLatency + batches * (xLatency + batchIssue);
    };
    const double longest =
        std::max(1.0, std::min<double>(s.groupSize,
                                       static_cast<double>(profile.maxDegree)));
    p.latencySeconds = groupChain(longest);
    double blocks = std::ceil(groups / m.rowsPerBlock);
    p.waves = std::ceil(blocks / resident);
    meanGroup = groups > 0 ? edges / groups : 0;
    p.wavesSeconds =
        groups > 0 ? p.waves * groupChain(std::max(1.0, meanGroup)) : 0;
    // A warp's groups run as long as its longest (at most G edges).
    int64_t groupsPerWarp = std::max<int64_t>(1, 32 / m.lanes);
    double warpMax = std::min<double>(
        s.groupSize, expectedMaxDegree(profile, groupsPerWarp));
    p.warpImbalance = meanGroup > 0 ? std::max(1.0, warpMax / meanGroup) : 1.0;
    double warps = std::ceil(groups / static_cast<double>(groupsPerWarp));
    double divergentSlots = warps * warpMax * perEdgeInstructions;
    p.issueSeconds = std::max(wavefronts + shuffleCycles, divergentSlots) /
                     (gpu.smCount * clock);
  } else {
    // A row of degree d: row_ptr, then ceil(d / lanes) index windows, each
    // taking its n <= lanes neighbours in ceil(n / batch) batches. (The
    // row's own features load alongside the first index window.)
    auto rowChain = [&](double degree) {
      if (degree <= 0)
        return indexLatency;
      double full = std::floor(degree / lanes);
      double rest = degree - full * lanes;
      double windows = std::ceil(degree / lanes);
      double batches =
          full * std::ceil(lanes / batch) + std::ceil(rest / batch);
      return indexLatency + windows * indexLatency +
             batches * (xLatency + batchIssue);
    };
    p.latencySeconds = rowChain(static_cast<double>(profile.maxDegree));
    double blocks = std::ceil(rows / m.rowsPerBlock);
    p.waves = std::ceil(blocks / resident);
    blockMax = expectedMaxDegree(profile, m.rowsPerBlock);
    p.wavesSeconds = rows > 0 ? p.waves * rowChain(blockMax) : 0;
    // A warp issues for as long as its longest row runs.
    int64_t rowsPerWarp = std::max<int64_t>(1, 32 / m.lanes);
    double warpMax = expectedMaxDegree(profile, rowsPerWarp);
    p.warpImbalance = profile.meanDegree > 0
                          ? std::max(1.0, warpMax / profile.meanDegree)
                          : 1.0;
    double warps = std::ceil(rows / static_cast<double>(rowsPerWarp));
    double divergentSlots = warps * warpMax * perEdgeInstructions;
    p.issueSeconds = std::max(wavefronts + shuffleCycles, divergentSlots) /
                     (gpu.smCount * clock);
  }
  p.launchSeconds = gpu.launchSeconds;

  double largest = largestBound(p);
  p.seconds = largest + p.launchSeconds;

  std::ostringstream why;
  why << p.bound << "-bound: ";
  if (p.bound == "bandwidth")
    why << p.dramBytes / 1e6 << " MB from DRAM (" << outBytes / 1e6
        << " MB written, gather hit rate " << static_cast<int>(hit * 100 + 0.5)
        << "%)";
  else if (p.bound == "latency" && edgeParallel)
    why << "one worker's chain: merge-path search, " << s.edgesPerWarp
        << " items in batches of " << m.edgeUnroll << " over " << m.lanes
        << " lanes" << (packed ? "" : ", a row_ptr load per row end");
  else if (p.bound == "latency" && grouped && m.edgeGroups)
    why << "one edge's chain: its row beside its column index, then both "
           "rows' features";
  else if (p.bound == "latency" && grouped)
    why << "one group's chain: its row and edge range, then "
        << std::min<int64_t>(s.groupSize, profile.maxDegree)
        << " neighbours in windows of " << m.lanes << ", batches of "
        << m.edgeUnroll;
  else if (p.bound == "latency")
    why << "longest row (" << profile.maxDegree << " neighbours) in windows of "
        << m.lanes << ", batches of " << m.edgeUnroll;
  else if (p.bound == "waves" && grouped)
    why << p.waves << " waves of " << resident * m.rowsPerBlock << " groups, ~"
        << static_cast<int64_t>(meanGroup + 0.5) << " edges each";
  else if (p.bound == "waves")
    explainWaves(why, p, m, resident, edgeParallel, typicalEdges, blockMax);
  else
    why << "load/store issue, warp imbalance " << p.warpImbalance << "x";
  why << "; " << formatModelTime(largest) << " + launch";
  p.why = why.str();
  return p;
}
