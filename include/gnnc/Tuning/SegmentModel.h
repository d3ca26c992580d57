//===- SegmentModel.h - Predicted time of the segmented matmuls -*- C++ -*-===//
//
// A model of gnn.segment_matmul (forward and transpose_weights) and
// gnn.segment_matmul_weight_grad with the tile_routed strategy, in
// FASTEN's form: the routing table's work items (ops::routeWorkItems of
// the tiles that tile_rows cuts from the segments) are walked by
// persistent blocks (ops::routeBlocks of what stays resident,
// ops::residentRouteBlocks), so a kernel runs as many waves as the longest
// block's run holds items, and each wave costs
//
//   routing-table index   one dependent L2 load (the item's tile entry)
// + weight staging        SIMT: the type's K x M weights, on a type change
// + the larger of
//     loads               tensor cores: the cp.async pipeline's latency
//                         chain, one load latency per stages - 1 steps of
//                         32 along the reduction; SIMT: one latency per
//                         row a sub-warp takes
//     compute             the item's multiply-adds at the SM's rate,
//                         shared by the blocks resident on it: mma.sync at
//                         the datasheet's dense tensor-core rate times the
//                         fraction of the pipe that the SM's resident
//                         accumulator fragments fill (padded tiles count
//                         whole), plus the warps' fragment loads from
//                         shared memory; SIMT at the smaller of the FP32
//                         rate and one shared-memory (or L1) wavefront per
//                         warp-wide weight read.
//
// Next to the waves stand the bandwidth bound (compulsory bytes over the
// DRAM copy bandwidth, everything the items read and write over the L2's)
// and the compute bound (all the padded work at the whole GPU's rate); the
// prediction is the largest of the three plus the launches (the weight
// gradient's reduction adds its own partials' traffic and launch).
//
// The statistics of the segments (SegmentStats) are all the model reads of
// the data: the type count, rows per type (count, mean, spread, largest)
// and the routing tiles of each tile_rows. The GPU numbers are the
// GpuModel's (SMs, clock, L1 bytes per clock, DRAM and L2 bandwidths, load
// latencies, launch) plus the arithmetic rates per SM and clock of the
// architecture's datasheet (segmentArithmeticRates); one constant is
// fitted, the fragments that fill the tensor pipe (kMmaFragmentsForPeak,
// from a profile on an H200).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_SEGMENTMODEL_H
#define GNNC_TUNING_SEGMENTMODEL_H

#include "gnnc/Plan/Plan.h"
#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Tuning/CostModel.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/Tuning/TuningDb.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gnnc::rt {
class Runtime;
} // namespace gnnc::rt

namespace gnnc::tuning {

/// The tile_rows whose routing-table sizes SegmentStats counts exactly:
/// every tile the tuner tries (forward and weight gradient).
inline constexpr int32_t kSegmentStatTileRows[] = {16,  32,  64,  128,
                                                   256, 512, 1024};

/// What the model knows of a segment list (num_types + 1 offsets).
struct SegmentStats {
  int64_t types = 0;
  int64_t emptyTypes = 0;
  int64_t rows = 0;
  /// Rows per type over all types (empty ones included): mean, spread
  /// (standard deviation over the mean; 0 when the mean is 0) and the
  /// largest.
  double meanRows = 0;
  double spread = 0;
  int64_t maxRows = 0;
  /// (tile_rows, routing tiles) for each of kSegmentStatTileRows: the sum
  /// over types of ceil(rows / tile_rows).
  std::vector<std::pair<int32_t, int64_t>> tiles;
  /// The offsets they were taken from (segmentStats), from which the model
  /// partitions a weight gradient's splits as the host does; empty: the
  /// model estimates the partition.
  std::vector<int64_t> offsets;

  int64_t nonEmptyTypes() const { return types - emptyTypes; }
  /// The routing tiles of `tileRows`: exact for kSegmentStatTileRows and
  /// for tiles at least as long as the longest type, otherwise estimated
  /// as rows / tile_rows plus half a tile per type with rows.
  int64_t tilesFor(int64_t tileRows) const;
};

/// The statistics of `seg` (checked as ops::checkSegmentOffsets does; the
/// error names the offset that breaks a rule).
Expected<SegmentStats> segmentStats(const std::vector<int64_t> &seg);

/// The arithmetic of one SM per clock on an architecture, from the
/// datasheets (dense rates): A100 (sm_80) 2048 f16/bf16 and 1024 TF32
/// tensor-core flops and 64 FP32 FMAs; H100 SXM (sm_90) 4096, 2048 and
/// 128. Other architectures take sm_90's.
struct SegmentArithmeticRates {
  double mma16FlopsPerClock = 0;
  double tf32FlopsPerClock = 0;
  double fp32FmasPerClock = 0;
};
SegmentArithmeticRates segmentArithmeticRates(const GpuModel &gpu);

/// The dense tensor-core peak of the whole GPU in flops per second for
/// `type` (f32 means TF32): SMs x clock x the per-SM rate. gnn-bench
/// reports fractions of it.
double tensorCorePeakFlops(const GpuModel &gpu, ElementType type);

/// Predicts `op` (a segmented matmul) run as `plan` (planKernel of a
/// tile_routed schedule) on segments of statistics `stats`. The terms: the
/// waves (wavesSeconds, their latency chains alone in latencySeconds), the
/// bandwidth bound (bandwidthSeconds) and the compute bound (issueSeconds);
/// `waves` counts the items of the longest block's run, `blocksPerSm` the
/// blocks sharing an SM, `workers` the work items.
Prediction predictSegmentMatmul(const GpuModel &gpu, const SegmentStats &stats,
                                const OpDesc &op, const KernelPlan &plan);

/// Every tile_routed schedule the tuner considers for `op`, complete and
/// legal (planKernel accepts each): forward and transpose_weights on
/// tensor cores with tiles of 16, 32, 64 and 128 rows, 2 to 4 stages and
/// each warp layout of segmentMmaThreadChoices, and in SIMT with tiles of 16 to
/// 256 rows; the weight gradient with splits of 64 to 1024 rows on either.
/// `math` restricts the arithmetic: Auto keeps f32 on exact SIMT (TF32 only
/// when asked for with TensorCore) and tries both for f16 and bf16. With
/// `wgmma` (the target has it: hasWgmma), forward and input-gradient
/// kernels also try math = wgmma with tiles of 64 and 128 rows and 2 to 4
/// stages wherever tensor cores may run (TensorCore means either
/// instruction; Wgmma wgmma alone).
std::vector<Schedule> enumerateSegmentSchedules(const OpDesc &op,
                                                MathMode math = MathMode::Auto,
                                                bool wgmma = false);

/// `schedules` without the dominated tile sizes: of two schedules that
/// differ only in tile_rows and cut the same routing table from `stats`
/// (every type shorter than both tiles), the larger tile only adds
/// threads, shared memory and padded work, so it goes.
std::vector<Schedule> pruneSegmentSchedules(const SegmentStats &stats,
                                            std::vector<Schedule> schedules);

/// Predicted times closer than this ratio rank as equal
/// (rankSegmentSchedules): the model resolves no finer.
constexpr double kSegmentEqualPredictions = 0.01;

/// Plans and predicts every schedule (skipping those planKernel refuses),
/// sorted by predicted time, in steps of kSegmentEqualPredictions; equal
/// times by the sum of the bandwidth, waves and compute terms, then fewer
/// work items, then the smaller SM time, then in the given order.
std::vector<Candidate> rankSegmentSchedules(const GpuModel &gpu,
                                            const SegmentStats &stats,
                                            const OpDesc &op,
                                            const std::vector<Schedule> &s);

/// The ranked, pruned candidates of `op` on `stats`:
/// rankSegmentSchedules(pruneSegmentSchedules(enumerateSegmentSchedules)).
std::vector<Candidate> rankedSegmentCandidates(const OpDesc &op,
                                               const SegmentStats &stats,
                                               const GpuModel &gpu,
                                               MathMode math = MathMode::Auto);

/// The schedule the model ranks first for `op` on segments of `stats`;
/// fails when no schedule has a plan.
Expected<Schedule> chooseSegmentSchedule(const OpDesc &op,
                                         const SegmentStats &stats,
                                         const GpuModel &gpu,
                                         MathMode math = MathMode::Auto);

/// Indices (into `ranked`, in rank order) of the candidates to measure:
/// the leader, each other math's leader predicted within 2x of it, then
/// the best-ranked of the rest, `k` in all.
std::vector<size_t>
segmentMeasurementOrder(const std::vector<Candidate> &ranked, size_t k);

/// The tuning database's key of `op` on segments of `stats` for `gpu`:
/// the type count, the mean rows per type to three significant digits,
/// the spread in percent, K, M, the op ("segment_matmul",
/// "segment_matmul_dx" for transpose_weights, "segment_matmul_dw") and the
/// type ("tf32" for f32 on tensor cores).
TuningKey segmentTuningKey(const OpDesc &op, const SegmentStats &stats,
                           const GpuModel &gpu, MathMode math);

/// The arithmetic the tuner may use for `op` given its written schedule's
/// math (Auto when none is written): see enumerateSegmentSchedules.
inline MathMode segmentTuningMath(const std::optional<Schedule> &written) {
  return written ? written->math : MathMode::Auto;
}

/// Reads a segment list: a CSV of `Start,End` rows (one per type, a header
/// line allowed; the rows of consecutive types must touch) into num_types
/// + 1 offsets. Errors name the file and line.
Expected<std::vector<int64_t>> readSegmentCsv(const std::string &path);

/// A generated segment list named `name`: "gen<types>x<mean rows>"
/// (e.g. gen64x2000): `types` types whose rows are drawn from `seed`
/// around the mean (uniform over [0, 2 x mean], so some types may be
/// empty).
Expected<std::vector<int64_t>> generateSegments(const std::string &name,
                                                uint64_t seed);

/// A named segment set: a path ending in .csv (readSegmentCsv), a
/// generated set (generateSegments, "gen<types>x<mean rows>", from `seed`),
/// or the name of a CSV in the `segments` folder of the datasets folder
/// (`datasets`, else $GNNC_DATASETS), e.g. "AIFB".
Expected<std::vector<int64_t>> loadSegmentSet(const std::string &name,
                                              const std::string &datasets,
                                              uint64_t seed);

/// The names of the segment sets in the datasets folder (`datasets`, else
/// $GNNC_DATASETS), sorted; an error when there is none.
Expected<std::vector<std::string>> segmentSetNames(const std::string &datasets);

/// Checks the compiled segmented-matmul kernel `spec` against the double
/// reference on the first rows of `seg` (up to `checkRows` rows, types
/// cut there), then times it on all of `seg` with random inputs, flushing
/// the L2 before each run. Returns the median seconds. Needs a GPU.
Expected<double> measureSegmentSchedule(rt::Runtime &runtime,
                                        const rt::KernelSpec &spec,
                                        const std::vector<int64_t> &seg,
                                        const MeasureOptions &options = {},
                                        int64_t checkRows = 20000);

} // namespace gnnc::tuning

#endif // GNNC_TUNING_SEGMENTMODEL_H
