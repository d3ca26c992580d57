//===- SegmentModelTest.cpp - The segmented-matmul model and tuning -------===//
//
// The segment statistics, the model's ranking (legal schedules only, every
// form, sets with empty types and none at all), the direction of its
// choices (long types take large tiles, many tiny types small ones),
// pruning (it never drops the model's best), the tuning database's
// segment key, the segment-set readers, the tuning loop and
// compileForSegments without a GPU; and every schedule the tuner
// enumerates, through NVRTC for sm_80 and sm_90.
//
//===----------------------------------------------------------------------===//
#include "TuningTestUtil.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/OpText.h"
#include "gnnc/Tuning/SegmentModel.h"
#include "gnnc/Tuning/TunedCompile.h"
#include "gnnc/Tuning/Tuner.h"
#include "gnnc/Tuning/TuningDb.h"
#include "gnnc/ops/SegmentMatmul.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Nvrtc.h"
#include "gnnc/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

using namespace gnnc;
using namespace gnnc::tuning;
using gnnc::tuning::test::sm90;
using gnnc::tuning::test::tempPath;

namespace {

/// `types` types of `rows` rows each.
std::vector<int64_t> uniformSegments(int64_t types, int64_t rows) {
  std::vector<int64_t> seg = {0};
  for (int64_t t = 0; t < types; ++t)
    seg.push_back(seg.back() + rows);
  return seg;
}

/// `types` types of 0 to 3 rows (fixed seed).
std::vector<int64_t> tinySegments(int64_t types) {
  std::mt19937_64 rng(3);
  std::vector<int64_t> seg = {0};
  for (int64_t t = 0; t < types; ++t)
    seg.push_back(seg.back() + int64_t(rng() % 4));
  return seg;
}

SegmentStats statsOf(const std::vector<int64_t> &seg) {
  Expected<SegmentStats> s = segmentStats(seg);
  EXPECT_TRUE(s) << s.message();
  return s ? *s : SegmentStats{};
}

/// The three forms of a segmented matmul of `type` with K and M.
std::vector<OpDesc> forms(ElementType type, int64_t k, int64_t m) {
  return {segmentMatmulOp(type, k, m), segmentMatmulInputGradOp(type, k, m),
          segmentMatmulWeightGradOp(type, k, m)};
}

/// The best predicted time among `ranked` with tile_rows `tile` and `math`.
double bestWith(const std::vector<Candidate> &ranked, int32_t tile,
                MathMode math) {
  double best = INFINITY;
  for (const Candidate &c : ranked)
    if (c.schedule.tileRows == tile && c.schedule.math == math)
      best = std::min(best, c.prediction.seconds);
  return best;
}

/// The rank of the first candidate of `ranked` with tile_rows `tile`.
size_t firstRankOf(const std::vector<Candidate> &ranked, int32_t tile) {
  for (size_t i = 0; i < ranked.size(); ++i)
    if (ranked[i].schedule.tileRows == tile)
      return i;
  return ranked.size();
}

TEST(SegmentStats, CountsTypesRowsAndTiles) {
  // Types of 0, 10, 100 and 30 rows.
  SegmentStats s = statsOf({0, 0, 10, 110, 140});
  EXPECT_EQ(s.types, 4);
  EXPECT_EQ(s.emptyTypes, 1);
  EXPECT_EQ(s.nonEmptyTypes(), 3);
  EXPECT_EQ(s.rows, 140);
  EXPECT_EQ(s.maxRows, 100);
  EXPECT_DOUBLE_EQ(s.meanRows, 35.0);
  // The population variance of {0, 10, 100, 30}: (35^2 + 25^2 + 65^2 +
  // 5^2) / 4 = 1525.
  EXPECT_NEAR(s.spread, std::sqrt(1525.0) / 35.0, 1e-12);
  EXPECT_EQ(s.tilesFor(16), 0 + 1 + 7 + 2);
  EXPECT_EQ(s.tilesFor(64), 0 + 1 + 2 + 1);
  EXPECT_EQ(s.tilesFor(128), 3);
  // Past the longest type: one tile per type with rows.
  EXPECT_EQ(s.tilesFor(5000), 3);
  // No rows at all.
  SegmentStats none = statsOf({0, 0, 0});
  EXPECT_EQ(none.rows, 0);
  EXPECT_EQ(none.tilesFor(64), 0);
  EXPECT_EQ(none.spread, 0);
}

TEST(SegmentStats, RefusesMalformedOffsets) {
  Expected<SegmentStats> decreasing = segmentStats({0, 5, 3, 6});
  ASSERT_FALSE(decreasing);
  EXPECT_NE(decreasing.message().find("must not decrease"), std::string::npos)
      << decreasing.message();
  Expected<SegmentStats> late = segmentStats({2, 5});
  ASSERT_FALSE(late);
  EXPECT_NE(late.message().find("must be 0"), std::string::npos);
  EXPECT_FALSE(segmentStats({}));
}

TEST(SegmentModel, RanksOnlyLegalSchedules) {
  const SegmentStats stats = statsOf(uniformSegments(8, 1000));
  for (ElementType type :
       {ElementType::F32, ElementType::F16, ElementType::BF16})
    for (auto [k, m] : {std::pair<int64_t, int64_t>{64, 64},
                        {33, 32},
                        {256, 128},
                        {512, 512}})
      for (const OpDesc &op : forms(type, k, m))
        for (MathMode math :
             {MathMode::Auto, MathMode::Simt, MathMode::TensorCore}) {
          SCOPED_TRACE(std::string(opKindName(op.kind)) + " " +
                       elementTypeName(type) + " K" + std::to_string(k) + " M" +
                       std::to_string(m) + " " + mathModeName(math) +
                       (op.transposeWeights ? " transposed" : ""));
          std::vector<Candidate> ranked =
              rankedSegmentCandidates(op, stats, sm90(), math);
          for (size_t i = 0; i < ranked.size(); ++i) {
            const Candidate &c = ranked[i];
            EXPECT_TRUE(planKernel(op, c.schedule)) << c.schedule.str();
            EXPECT_EQ(c.schedule.strategy, Strategy::TileRouted);
            EXPECT_TRUE(std::isfinite(c.prediction.seconds));
            EXPECT_GT(c.prediction.seconds, 0);
            // In order of time, times within kSegmentEqualPredictions of
            // each other ranking as equal (then by the tie-breaks).
            if (i > 0)
              EXPECT_LE(ranked[i - 1].prediction.seconds,
                        c.prediction.seconds * (1 + kSegmentEqualPredictions));
            // TensorCore: either instruction.
            if (math == MathMode::TensorCore)
              EXPECT_TRUE(onTensorCores(c.schedule.math));
            else if (math != MathMode::Auto)
              EXPECT_EQ(c.schedule.math, math);
            // f32 stays exact unless tensor cores are asked for.
            if (type == ElementType::F32 && math == MathMode::Auto)
              EXPECT_EQ(c.schedule.math, MathMode::Simt);
          }
          // Tensor cores need K and M in multiples of 8 (K 33 has none).
          if (k % 8 != 0 && math == MathMode::TensorCore) {
            EXPECT_TRUE(ranked.empty());
            Expected<Schedule> none =
                chooseSegmentSchedule(op, stats, sm90(), math);
            ASSERT_FALSE(none);
            EXPECT_NE(none.message().find("no tile_routed schedule"),
                      std::string::npos)
                << none.message();
          }
        }
  // The SIMT kernel stages the whole K x M weights: 512 x 512 f32 does
  // not fit, tensor cores do.
  EXPECT_TRUE(
      rankedSegmentCandidates(segmentMatmulOp(ElementType::F32, 512, 512),
                              stats, sm90(), MathMode::Simt)
          .empty());
  EXPECT_FALSE(
      rankedSegmentCandidates(segmentMatmulOp(ElementType::F32, 512, 512),
                              stats, sm90(), MathMode::TensorCore)
          .empty());
}

TEST(SegmentModel, SetsWithEmptyTypesAndNoRowsPredict) {
  for (const std::vector<int64_t> &seg :
       {std::vector<int64_t>{0, 0, 0}, std::vector<int64_t>{0, 0, 7, 7, 300},
        std::vector<int64_t>{0, 1}})
    for (const OpDesc &op : forms(ElementType::F16, 64, 32)) {
      const SegmentStats stats = statsOf(seg);
      std::vector<Candidate> ranked =
          rankedSegmentCandidates(op, stats, sm90());
      ASSERT_FALSE(ranked.empty());
      for (const Candidate &c : ranked) {
        EXPECT_TRUE(std::isfinite(c.prediction.seconds));
        // At least the launches (two for the weight gradient).
        EXPECT_GE(c.prediction.seconds, sm90().launchSeconds);
      }
    }
}

TEST(SegmentModel, LongTypesTakeLargeTiles) {
  // Four types of 200,000 rows: 16-row tiles multiply the per-item
  // latencies by eight against 128-row ones (the weights stay resident,
  // so their traffic no longer grows; both may be bandwidth-bound alike).
  const SegmentStats stats = statsOf(uniformSegments(4, 200000));
  for (ElementType type : {ElementType::F16, ElementType::BF16}) {
    const OpDesc op = segmentMatmulOp(type, 128, 128);
    std::vector<Candidate> ranked =
        rankedSegmentCandidates(op, stats, sm90(), MathMode::TensorCore);
    ASSERT_FALSE(ranked.empty());
    EXPECT_GE(ranked.front().schedule.tileRows, 64)
        << ranked.front().schedule.str() << ": "
        << ranked.front().prediction.why;
    EXPECT_LE(bestWith(ranked, 128, MathMode::TensorCore),
              bestWith(ranked, 16, MathMode::TensorCore));
  }
  // The weight gradient: long types take long splits (fewer partials).
  const OpDesc dw = segmentMatmulWeightGradOp(ElementType::F16, 64, 64);
  std::vector<Candidate> ranked =
      rankedSegmentCandidates(dw, stats, sm90(), MathMode::TensorCore);
  ASSERT_FALSE(ranked.empty());
  EXPECT_GE(ranked.front().schedule.tileRows, 256)
      << ranked.front().prediction.why;
  // SIMT forward: more rows per tile amortize the staged weights.
  const OpDesc f32 = segmentMatmulOp(ElementType::F32, 64, 64);
  std::vector<Candidate> simt =
      rankedSegmentCandidates(f32, stats, sm90(), MathMode::Simt);
  ASSERT_FALSE(simt.empty());
  EXPECT_GE(simt.front().schedule.tileRows, 64) << simt.front().prediction.why;
}

TEST(SegmentModel, WeightGradientGroupsSplitTheRowsAsTheHostDoes) {
  // ACM's four types, f16 256 x 256 in 128 x 128 blocks on warpgroups,
  // splits of 4096 rows: 69 splits over 33 groups (one block an SM).
  // Runs of equal split counts leave some groups three whole splits; the
  // host's partition shares the rows, and the model counts the same
  // splits (its items) and about a third of the rows in the busiest group.
  const std::vector<int64_t> seg = {0, 5343, 15292, 18317, 273936};
  const SegmentStats stats = statsOf(seg);
  const OpDesc dw = segmentMatmulWeightGradOp(ElementType::F16, 256, 256);
  std::vector<Candidate> ranked =
      rankedSegmentCandidates(dw, stats, sm90(), MathMode::Wgmma);
  const Candidate *pick = nullptr;
  for (const Candidate &c : ranked)
    if (c.schedule.tileRows == 4096 && c.prediction.blocksPerSm == 1 &&
        c.schedule.threadsPerBlock == 256)
      pick = &c;
  ASSERT_NE(pick, nullptr);
  const int64_t group = 4, groups = sm90().smCount / group;
  Expected<std::vector<int64_t>> table =
      ops::buildRouteTable(seg.data(), int64_t(seg.size()), seg.back(), 4096);
  ASSERT_TRUE(table);
  const ops::RoutePartition parts = ops::partitionRouteTable(
      *table, groups, segmentSplitCostRows(dw, pick->schedule));
  EXPECT_GT(parts.groupStarts.back(), int64_t(table->size() / 3))
      << "long splits are cut";
  EXPECT_EQ(pick->prediction.workers, double(group * parts.groupStarts.back()))
      << pick->prediction.why;
  // The busiest block's rows: its waves of mean items.
  const double busiest = pick->prediction.waves * double(seg.back()) /
                         double(parts.groupStarts.back());
  EXPECT_LT(busiest, 1.15 * double(seg.back()) / double(groups))
      << pick->prediction.why;
  EXPECT_GT(busiest, double(seg.back()) / double(groups))
      << pick->prediction.why;
}

TEST(SegmentModel, ManyTinyTypesTakeSmallTiles) {
  // 2,000 types of 0 to 3 rows: every tile holds one type whatever its
  // size; a 128-row tile computes 128 rows for at most 3 and takes more
  // threads and shared memory (fewer resident blocks, more waves). (With
  // far more types the weights, read once each, set the time whatever the
  // tile: 20,000 of 64 x 64 are 164 MB.)
  const SegmentStats stats = statsOf(tinySegments(2000));
  for (ElementType type : {ElementType::F16, ElementType::F32}) {
    const OpDesc op = segmentMatmulOp(type, 32, 32);
    Expected<Schedule> choice =
        chooseSegmentSchedule(op, stats, sm90(), MathMode::TensorCore);
    ASSERT_TRUE(choice) << choice.message();
    EXPECT_EQ(choice->tileRows, 16) << choice->str();
    // Unpruned, the larger tiles are ranked and lose: never predicted
    // faster, ranked behind (their waves are longer).
    std::vector<Candidate> all = rankSegmentSchedules(
        sm90(), stats, op, enumerateSegmentSchedules(op, MathMode::TensorCore));
    EXPECT_LE(bestWith(all, 16, MathMode::TensorCore),
              bestWith(all, 128, MathMode::TensorCore));
    EXPECT_EQ(firstRankOf(all, 16), 0u);
    EXPECT_LT(firstRankOf(all, 16), firstRankOf(all, 128));
  }
}

TEST(SegmentModel, PruningKeepsTheBest) {
  const std::vector<std::vector<int64_t>> sets = {tinySegments(5000),
                                                  uniformSegments(4, 200000),
                                                  uniformSegments(300, 40),
                                                  {0, 0, 1, 20001, 20003},
                                                  {0, 0, 0}};
  for (const std::vector<int64_t> &seg : sets) {
    const SegmentStats stats = statsOf(seg);
    for (ElementType type : {ElementType::F32, ElementType::F16})
      for (const OpDesc &op : forms(type, 64, 128))
        for (MathMode math : {MathMode::Auto, MathMode::TensorCore}) {
          std::vector<Schedule> all = enumerateSegmentSchedules(op, math);
          std::vector<Schedule> kept = pruneSegmentSchedules(stats, all);
          EXPECT_LE(kept.size(), all.size());
          for (const Schedule &s : kept)
            EXPECT_NE(std::find(all.begin(), all.end(), s), all.end());
          std::vector<Candidate> full =
              rankSegmentSchedules(sm90(), stats, op, all);
          std::vector<Candidate> pruned =
              rankSegmentSchedules(sm90(), stats, op, kept);
          ASSERT_EQ(full.empty(), pruned.empty());
          if (full.empty())
            continue;
          EXPECT_DOUBLE_EQ(full.front().prediction.seconds,
                           pruned.front().prediction.seconds)
              << full.front().schedule.str() << " vs "
              << pruned.front().schedule.str();
        }
  }
  // Types of at most 3 rows: one routing table for every tile size, so
  // one tile size per (math, stages) survives.
  const SegmentStats tiny = statsOf(tinySegments(5000));
  const OpDesc op = segmentMatmulOp(ElementType::F16, 64, 64);
  std::vector<Schedule> kept =
      pruneSegmentSchedules(tiny, enumerateSegmentSchedules(op));
  for (const Schedule &s : kept)
    EXPECT_EQ(s.tileRows, 16) << s.str();
  // Long types: every tile size cuts its own table, none goes.
  const SegmentStats longTypes = statsOf(uniformSegments(4, 200000));
  EXPECT_EQ(
      pruneSegmentSchedules(longTypes, enumerateSegmentSchedules(op)).size(),
      enumerateSegmentSchedules(op).size());
}

TEST(SegmentModel, MeasurementOrderTakesEachMathsLeader) {
  const SegmentStats stats = statsOf(uniformSegments(16, 3000));
  const OpDesc op = segmentMatmulOp(ElementType::F16, 64, 64);
  std::vector<Candidate> ranked = rankedSegmentCandidates(op, stats, sm90());
  ASSERT_GT(ranked.size(), 4u);
  std::vector<size_t> order = segmentMeasurementOrder(ranked, 3);
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order.front(), 0u);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
  EXPECT_TRUE(segmentMeasurementOrder(ranked, 0).empty());
  EXPECT_EQ(segmentMeasurementOrder(ranked, 1000).size(), ranked.size());
}

TEST(SegmentModel, TensorCorePeakFollowsTheGpu) {
  const GpuModel h = sm90();
  EXPECT_DOUBLE_EQ(tensorCorePeakFlops(h, ElementType::F16),
                   4096.0 * h.clockHz * h.smCount);
  EXPECT_DOUBLE_EQ(tensorCorePeakFlops(h, ElementType::F32),
                   2048.0 * h.clockHz * h.smCount);
  const GpuModel a = builtinGpuModel("sm_80").take();
  EXPECT_DOUBLE_EQ(tensorCorePeakFlops(a, ElementType::BF16),
                   2048.0 * a.clockHz * a.smCount);
}

TEST(SegmentTuningDb, KeyRoundTrips) {
  const SegmentStats stats = statsOf({0, 0, 1000, 13345, 13346});
  const OpDesc dw = segmentMatmulWeightGradOp(ElementType::F32, 64, 32);
  TuningKey key = segmentTuningKey(dw, stats, sm90(), MathMode::TensorCore);
  EXPECT_EQ(key.op, "segment_matmul_dw");
  EXPECT_EQ(key.type, "tf32");
  EXPECT_EQ(key.width, 32);
  ASSERT_TRUE(key.segments);
  EXPECT_EQ(key.segments->types, 4);
  // Mean 3336.5 to three significant digits.
  EXPECT_EQ(key.segments->meanRows, 3340);
  EXPECT_EQ(key.segments->inputWidth, 64);
  EXPECT_EQ(key.segments->spreadPercent,
            static_cast<int64_t>(std::llround(stats.spread * 100)));
  EXPECT_EQ(segmentTuningKey(segmentMatmulInputGradOp(ElementType::F16, 8, 16),
                             stats, sm90(), MathMode::Auto)
                .op,
            "segment_matmul_dx");

  TuningEntry entry;
  entry.key = key;
  entry.schedule =
      *chooseSegmentSchedule(dw, stats, sm90(), MathMode::TensorCore);
  entry.predictedSeconds = 1.5e-5;
  entry.measuredSeconds = 2.0e-5;
  const std::string line = formatEntry(entry);
  EXPECT_EQ(line.rfind("segments 4 3340 ", 0), 0u) << line;
  Expected<TuningEntry> back = parseEntry(line.substr(0, line.size() - 1));
  ASSERT_TRUE(back) << back.message();
  EXPECT_TRUE(back->key == key);
  EXPECT_EQ(back->schedule, entry.schedule);
  ASSERT_TRUE(back->measuredSeconds);

  // Through a file: stored, loaded, looked up; a graph key of the same
  // op name does not match.
  const std::string path = tempPath("segment-tuning.db");
  std::remove(path.c_str());
  {
    Expected<TuningDb> db = TuningDb::load(path);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->store(entry));
  }
  Expected<TuningDb> db = TuningDb::load(path);
  ASSERT_TRUE(db);
  EXPECT_TRUE(db->warnings().empty());
  std::optional<TuningEntry> found = db->lookup(key);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->schedule, entry.schedule);
  TuningKey other = key;
  other.segments->inputWidth = 128;
  EXPECT_FALSE(db->lookup(other));
  std::remove(path.c_str());
}

TEST(SegmentTuningDb, RefusesMalformedSegmentLines) {
  const std::string tail = " -> 1e-05 - #gnn.schedule<strategy = tile_routed, "
                           "tile_routing = true, math = simt, tile_rows = 64>";
  struct Bad {
    std::string line, message;
  };
  const Bad bad[] = {
      {"segments 4 100 20 segment_matmul f32 64 32 sm_90", "expected"},
      {"segments x 100 20 segment_matmul f32 64 32 sm_90" + tail, "type count"},
      {"segments 4 100 20 spmm f32 64 32 sm_90" + tail, "unknown segmented op"},
      {"segments 4 100 20 segment_matmul f64 64 32 sm_90" + tail,
       "unknown element type"},
      {"segments 4 100 20 segment_matmul f32 0 32 sm_90" + tail, "K '0'"},
      {"segments 4 100 20 segment_matmul f32 64 32 gfx90" + tail, "arch"},
      {"segments 4 100 -3 segment_matmul f32 64 32 sm_90" + tail, "spread"},
  };
  for (const Bad &b : bad) {
    Expected<TuningEntry> e = parseEntry(b.line);
    ASSERT_FALSE(e) << b.line;
    EXPECT_NE(e.message().find(b.message), std::string::npos) << e.message();
  }
  EXPECT_TRUE(
      parseEntry("segments 4 100 20 segment_matmul f32 64 32 sm_90" + tail));
}

TEST(SegmentSets, ReadsCsvAndGenerates) {
  const std::string path = tempPath("segments.csv");
  {
    std::ofstream out(path);
    out << "Start,End\n0,5\n5,5\n5,12\r\n";
  }
  Expected<std::vector<int64_t>> seg = readSegmentCsv(path);
  ASSERT_TRUE(seg) << seg.message();
  EXPECT_EQ(*seg, (std::vector<int64_t>{0, 5, 5, 12}));
  Expected<std::vector<int64_t>> viaName = loadSegmentSet(path, "", 1);
  ASSERT_TRUE(viaName);
  EXPECT_EQ(*viaName, *seg);
  {
    std::ofstream out(path);
    out << "Start,End\n0,5\n6,9\n";
  }
  Expected<std::vector<int64_t>> gap = readSegmentCsv(path);
  ASSERT_FALSE(gap);
  EXPECT_NE(gap.message().find(":3: type 1 starts at row 6"), std::string::npos)
      << gap.message();
  {
    std::ofstream out(path);
    out << "Start,End\n0,five\n";
  }
  EXPECT_FALSE(readSegmentCsv(path));
  std::remove(path.c_str());
  EXPECT_FALSE(readSegmentCsv(path));

  Expected<std::vector<int64_t>> gen = generateSegments("gen50x100", 7);
  ASSERT_TRUE(gen) << gen.message();
  EXPECT_EQ(gen->size(), 51u);
  EXPECT_TRUE(segmentStats(*gen));
  EXPECT_EQ(*gen, *generateSegments("gen50x100", 7));
  EXPECT_FALSE(generateSegments("gen50", 7));
  EXPECT_FALSE(generateSegments("gen0x5", 7));
  EXPECT_FALSE(loadSegmentSet("NoSuchSet", "/nonexistent", 1));
}

TEST(SegmentTuning, TheLoopAndCompileForSegmentsChoose) {
  const OpDesc fwd = segmentMatmulOp(ElementType::F16, 64, 32);
  const OpDesc dw = segmentMatmulWeightGradOp(ElementType::F16, 64, 32);
  Schedule simt;
  simt.strategy = Strategy::TileRouted;
  simt.math = MathMode::Simt;
  std::string text = "gnn.module @sm {\n" +
                     opKernelText("fwd", fwd, std::nullopt) +
                     opKernelText("dw", dw, std::nullopt) +
                     opKernelText("pinned", fwd, simt) + "}\n";
  Expected<TunableModule> module = TunableModule::parse(text, "seg.gnn");
  ASSERT_TRUE(module) << module.message();
  ASSERT_EQ(module->sites().size(), 3u);
  for (const TunableSite &site : module->sites())
    EXPECT_TRUE(site.tunable) << site.entryName << ": " << site.note;

  const std::vector<int64_t> seg = {0, 0, 300, 5300, 5301};
  TuningOptions options;
  options.gpu = sm90();
  options.retuneWritten = true;
  Status error = Status::ok();
  std::vector<SiteTuning> tuned =
      tuneSegmentSites(*module, seg, options, &error);
  ASSERT_TRUE(error) << error.message();
  ASSERT_EQ(tuned.size(), 3u);
  const SegmentStats stats = statsOf(seg);
  EXPECT_EQ(tuned[0].choice,
            *chooseSegmentSchedule(fwd, stats, options.gpu, MathMode::Auto));
  EXPECT_EQ(tuned[1].choice,
            *chooseSegmentSchedule(dw, stats, options.gpu, MathMode::Auto));
  // A written math bounds the search.
  EXPECT_EQ(tuned[2].choice.math, MathMode::Simt);
  // Graph tuning leaves the segmented matmuls alone.
  EXPECT_TRUE(tuneModule(*module, test::uniformGraph(64, 4), options).empty());
  // Malformed offsets: nothing tuned, the rule named.
  EXPECT_TRUE(tuneSegmentSites(*module, {0, 4, 2}, options, &error).empty());
  EXPECT_FALSE(error);

  // compileForSegments: the database's entry wins over the model.
  const std::string path = tempPath("segment-compile.db");
  std::remove(path.c_str());
  Schedule stored;
  stored.strategy = Strategy::TileRouted;
  stored.tileRouting = true;
  stored.math = MathMode::Simt;
  stored.tileRows = 32;
  stored = *completeSchedule(fwd, stored);
  {
    Expected<TuningDb> db = TuningDb::load(path);
    ASSERT_TRUE(db);
    TuningEntry entry;
    entry.key = segmentTuningKey(fwd, stats, options.gpu, MathMode::Auto);
    entry.schedule = stored;
    ASSERT_TRUE(db->store(entry));
  }
  TunedCompileOptions compile = test::sm90Compile(path);
  TuningChoices choices;
  Expected<CompiledModule> compiled =
      compileForSegments(text, "seg.gnn", seg, compile, &choices);
  ASSERT_TRUE(compiled) << compiled.message();
  EXPECT_EQ(choices.schedules["sm_fwd"].source, "database");
  EXPECT_EQ(choices.schedules["sm_fwd"].schedule, stored);
  EXPECT_EQ(choices.schedules["sm_dw"].source, "cost model");
  // The written schedule is kept, not tuned.
  EXPECT_EQ(choices.schedules.count("sm_pinned"), 0u);
  Expected<rt::KernelSpec> fwdKernel = findKernel(*compiled, "sm_fwd");
  ASSERT_TRUE(fwdKernel);
  EXPECT_EQ(fwdKernel->schedule, stored);
  std::remove(path.c_str());
  Expected<CompiledModule> bad =
      compileForSegments(text, "seg.gnn", {0, 4, 2}, compile);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("compileForSegments"), std::string::npos);
}

} // namespace

namespace {

/// Every schedule the segment tuner can choose, for the smallest and the
/// largest K = M gnn-bench runs, through the compiler and NVRTC (no GPU
/// needed): a kernel the tuner picks always compiles. sm_90a (the target
/// the runtime compiles for on compute capability 9.0) adds math = wgmma.
class SegmentCandidatesCompile : public ::testing::TestWithParam<std::string> {
};

TEST_P(SegmentCandidatesCompile, EveryEnumeratedScheduleCompiles) {
  std::string text = "gnn.module @cand {\n";
  size_t count = 0;
  for (int64_t dim : {32, 256})
    for (auto [type, math] : {std::pair{ElementType::F32, MathMode::Auto},
                              std::pair{ElementType::F32, MathMode::TensorCore},
                              std::pair{ElementType::F16, MathMode::Auto}})
      for (const OpDesc &op : forms(type, dim, dim))
        for (const Schedule &s :
             enumerateSegmentSchedules(op, math, GetParam() == "sm_90a"))
          text += opKernelText("k" + std::to_string(count++), op, s);
  text += "}\n";
  ASSERT_GT(count, 100u);
  Expected<CompiledModule> compiled = compileGnn(text, "candidates.gnn");
  ASSERT_TRUE(compiled) << compiled.message();
  ASSERT_EQ(compiled->kernels.size(), count);
  rt::CompileOptions options;
  options.arch = GetParam();
  auto binary = rt::compileCuda(compiled->source, "candidates.cu", options);
  ASSERT_TRUE(binary) << binary.message();
  for (const rt::KernelSpec &spec : compiled->kernels)
    EXPECT_NE(binary->binary.find(spec.name), std::string::npos)
        << spec.name << " is missing from the cubin";
}

INSTANTIATE_TEST_SUITE_P(Arch, SegmentCandidatesCompile,
                         ::testing::Values("sm_80", "sm_90a"));

} // namespace

TEST(SegmentTuningMeasure, MeasuresCheckedLeadersOnTheGpu) {
  std::string why;
  if (!rt::gpuAvailable(&why))
    GTEST_SKIP() << "no GPU (" << why
                 << "): measureSegmentSchedule() is untested here";
  Expected<rt::Runtime> runtime = rt::Runtime::create(0, "off");
  ASSERT_TRUE(runtime) << runtime.message();
  // Types of 0, 5,000, 3 and 0 rows; the check covers the first 1,000.
  const std::vector<int64_t> seg = {0, 0, 5000, 5003, 5003};
  const SegmentStats stats = statsOf(seg);
  for (const OpDesc &op : forms(ElementType::F16, 64, 32)) {
    std::vector<Candidate> ranked = rankedSegmentCandidates(op, stats, sm90());
    ASSERT_FALSE(ranked.empty());
    for (size_t i : segmentMeasurementOrder(ranked, 2)) {
      SCOPED_TRACE(ranked[i].schedule.str());
      Expected<CompiledModule> compiled =
          compileGnn("gnn.module @mt {\n" +
                         opKernelText("k", op, ranked[i].schedule) + "}\n",
                     "measure.gnn");
      ASSERT_TRUE(compiled) << compiled.message();
      MeasureOptions options;
      options.runs = 3;
      Expected<double> t = measureSegmentSchedule(
          *runtime, compiled->kernels.front(), seg, options, 1000);
      ASSERT_TRUE(t) << t.message();
      EXPECT_GT(*t, 0);
    }
  }
}

// The tuner tries wgmma only where the target has it; for the weight
// gradient only in 16-bit types.
TEST(SegmentModel, TheTunerTriesWgmmaOnlyWhereTheTargetHasIt) {
  auto count = [](const std::vector<Schedule> &list) {
    return std::count_if(list.begin(), list.end(), [](const Schedule &s) {
      return s.math == MathMode::Wgmma;
    });
  };
  const OpDesc op = segmentMatmulOp(ElementType::F16, 128, 128);
  EXPECT_EQ(count(tuning::enumerateSegmentSchedules(op)), 0);
  EXPECT_GT(count(tuning::enumerateSegmentSchedules(op, MathMode::Auto, true)),
            0);
  EXPECT_EQ(
      count(tuning::enumerateSegmentSchedules(
          segmentMatmulOp(ElementType::F32, 128, 128), MathMode::Auto, true)),
      0);
  // The weight gradient: f16 and bf16 (their instructions read X and dY
  // transposed), not TF32, and not without the target.
  EXPECT_GT(count(tuning::enumerateSegmentSchedules(
                segmentMatmulWeightGradOp(ElementType::F16, 128, 128),
                MathMode::Auto, true)),
            0);
  EXPECT_EQ(count(tuning::enumerateSegmentSchedules(
                segmentMatmulWeightGradOp(ElementType::F16, 128, 128))),
            0);
  EXPECT_EQ(count(tuning::enumerateSegmentSchedules(
                segmentMatmulWeightGradOp(ElementType::F32, 128, 128),
                MathMode::TensorCore, true)),
            0);
  for (const Schedule &s :
       tuning::enumerateSegmentSchedules(op, MathMode::Wgmma, true))
    EXPECT_EQ(s.math, MathMode::Wgmma);
}
