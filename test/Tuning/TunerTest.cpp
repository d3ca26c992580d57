//===- TunerTest.cpp - The tuning loop: TunableModule, tuneModule ---------===//
//
// The one tuning loop that gnn-tune and compileForGraph share: a .gnn
// module parsed once into sites, schedules set on clones of it (printed or
// compiled), the loop that ranks, visits and chooses, and the C++ API that
// compiles a module tuned for a graph.
//
//===----------------------------------------------------------------------===//
#include "TuningTestUtil.h"

#include "gnnc/Tuning/TunedCompile.h"
#include "gnnc/Tuning/Tuner.h"
#include "gnnc/Tuning/TuningDb.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Batch.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/runtime/Driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

using namespace gnnc;
using namespace gnnc::tuning;
using namespace gnnc::tuning::test;

namespace {

/// Kernels of every kind the tuner meets: an unscheduled gnn.spmm, one
/// with a written neighbor_group schedule, one with a written HalfGNN
/// schedule (disc_batch, f16 accumulation) on a graph of 32-bit offsets, a
/// gnn.sddmm of the add form with a leaky_relu, and two ops no cost model
/// knows (a mean aggregation, an edge softmax).
const char *kMixed = R"(
gnn.module @mix {
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
  gnn.kernel @groups(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x32xf16>, %w: tensor<?xf16>) -> tensor<?x32xf16> {
    %y = gnn.spmm %g, %x values(%w : tensor<?xf16>) {schedule = #gnn.schedule<strategy = neighbor_group, vector_width = 8, group_size = 16, dim_workers = 4, threads_per_block = 128, write = atomic>} : !gnn.graph<csr, i64, i32>, tensor<?x32xf16> -> tensor<?x32xf16>
    gnn.return %y : tensor<?x32xf16>
  }
  gnn.kernel @halves(%g: !gnn.graph<csr, i32, i32>, %x: tensor<?x64xf16>) -> tensor<?x64xf16> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 8, disc_batch = 32, dim_workers = 8, threads_per_block = 256, accumulate = f16>} : !gnn.graph<csr, i32, i32>, tensor<?x64xf16> -> tensor<?x64xf16>
    gnn.return %y : tensor<?x64xf16>
  }
  gnn.kernel @score(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x30xbf16>, %x1: tensor<?x30xbf16>) -> tensor<?x30xbf16> {
    %e = gnn.sddmm %g, %x, %x1 {form = #gnn<sddmm_form add>, leaky_relu = 0.2 : f32} : !gnn.graph<csr, i64, i32>, tensor<?x30xbf16>, tensor<?x30xbf16> -> tensor<?x30xbf16>
    gnn.return %e : tensor<?x30xbf16>
  }
  gnn.kernel @mean(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x16xf32>) -> tensor<?x16xf32> {
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce mean>} : !gnn.graph<csr, i64, i32>, tensor<?x16xf32> -> tensor<?x16xf32>
    gnn.return %y : tensor<?x16xf32>
  }
  gnn.kernel @softmax(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?x8xf16>) -> tensor<?x8xf16> {
    %a = gnn.edge_softmax %g, %e : !gnn.graph<csr, i64, i32>, tensor<?x8xf16> -> tensor<?x8xf16>
    gnn.return %a : tensor<?x8xf16>
  }
}
)";

OpDesc aggOp() { return spmmProblem(ElementType::F32, 64); }
OpDesc groupsOp() { return spmmProblem(ElementType::F16, 32, /*values=*/true); }
OpDesc halvesOp() {
  OpDesc op = spmmProblem(ElementType::F16, 64);
  op.offsets64 = false;
  return op;
}
OpDesc scoreOp() {
  return sddmmOp(ElementType::BF16, 30, /*add=*/true, /*leakyRelu=*/true);
}
Schedule groupsWritten() { return groupSchedule(8, 4, 128, 16); }
Schedule halvesWritten() {
  Schedule s = vertexSchedule(8, 8, 256);
  s.discBatch = 32;
  s.accumulate = Accumulate::F16;
  return s;
}

TunableModule parseMixed() {
  Expected<TunableModule> module = TunableModule::parse(kMixed, "mixed.gnn");
  EXPECT_TRUE(module) << module.message();
  return module.take();
}

const TunableSite &siteOf(const TunableModule &module,
                          const std::string &entry) {
  for (const TunableSite &site : module.sites())
    if (site.entryName == entry)
      return site;
  ADD_FAILURE() << "no site " << entry;
  return module.sites().front();
}

std::vector<std::string> entriesOf(const std::vector<SiteTuning> &tuned) {
  std::vector<std::string> out;
  for (const SiteTuning &t : tuned)
    out.push_back(t.site->entryName);
  return out;
}

const SiteTuning &tuningOf(const std::vector<SiteTuning> &tuned,
                           const std::string &entry) {
  for (const SiteTuning &t : tuned)
    if (t.site->entryName == entry)
      return t;
  ADD_FAILURE() << "no tuning for " << entry;
  return tuned.front();
}

/// The model's ranking of `op` on `g`, computed here without the loop.
} // namespace

//===----------------------------------------------------------------------===//
// TunableModule
//===----------------------------------------------------------------------===//

TEST(TunableModule, SitesOfAMixedModule) {
  TunableModule module = parseMixed();
  const std::vector<TunableSite> &sites = module.sites();
  ASSERT_EQ(sites.size(), 6u);
  struct Expect {
    std::string entry;
    OpDesc op;
    std::optional<Schedule> written;
    std::string note; // "" when tunable
  };
  OpDesc mean = spmmProblem(ElementType::F32, 16);
  mean.reduce = Reduce::Mean;
  OpDesc softmax;
  softmax.kind = OpKind::EdgeSoftmax;
  softmax.type = ElementType::F16;
  softmax.width = 8;
  softmax.rowStride = 8;
  std::vector<Expect> expected = {
      {"mix_agg", aggOp(), std::nullopt, ""},
      // A written neighbor_group schedule is tunable: the tuner enumerates
      // that strategy.
      {"mix_groups", groupsOp(), groupsWritten(), ""},
      {"mix_halves", halvesOp(), halvesWritten(), ""},
      {"mix_score", scoreOp(), std::nullopt, ""},
      {"mix_mean", mean, std::nullopt, ""},
      {"mix_softmax", softmax, std::nullopt,
       "no cost model knows gnn.edge_softmax"},
  };
  for (size_t i = 0; i < sites.size(); ++i) {
    SCOPED_TRACE(expected[i].entry);
    const TunableSite &site = sites[i];
    EXPECT_EQ(site.entryName, expected[i].entry);
    EXPECT_TRUE(site.op == expected[i].op);
    ASSERT_EQ(site.written.has_value(), expected[i].written.has_value());
    if (site.written)
      EXPECT_EQ(*site.written, *expected[i].written);
    EXPECT_EQ(site.tunable, expected[i].note.empty());
    EXPECT_EQ(site.note, expected[i].note);
  }
  // What the database and the reports call them.
  EXPECT_EQ(tuningOpName(sites[0].op), "spmm");
  EXPECT_EQ(tuningOpName(sites[4].op), "spmm_mean");
  EXPECT_EQ(opDescription(sites[0].op), "");
  EXPECT_EQ(tuningOpName(sites[3].op), "sddmm_add");
  EXPECT_EQ(opDescription(sites[3].op), ", sddmm add, leaky_relu");
}

TEST(TunableModule, AKernelOfTwoOpsIsNotTunable) {
  Expected<TunableModule> module = TunableModule::parse(R"(
gnn.module @two {
  gnn.kernel @chain(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x16xf32>) -> tensor<?xf32> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x16xf32> -> tensor<?x16xf32>
    %e = gnn.sddmm %g, %y, %x : !gnn.graph<csr, i64, i32>, tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?xf32>
    gnn.return %e : tensor<?xf32>
  }
}
)",
                                                        "two.gnn");
  ASSERT_TRUE(module) << module.message();
  ASSERT_EQ(module->sites().size(), 2u);
  for (const TunableSite &site : module->sites()) {
    EXPECT_EQ(site.entryName, "two_chain");
    EXPECT_FALSE(site.tunable);
    EXPECT_EQ(site.note, "the kernel holds more than one op");
  }
  EXPECT_EQ(module->sites()[0].op.kind, OpKind::Spmm);
  EXPECT_EQ(module->sites()[1].op.kind, OpKind::Sddmm);
  TuningOptions options;
  options.gpu = sm90();
  options.retuneWritten = true;
  EXPECT_TRUE(tuneModule(*module, starGraph(100), options).empty());
}

TEST(TunableModule, ParseErrorsNameTheBuffer) {
  Expected<TunableModule> bad = TunableModule::parse("gnn.module {", "b.gnn");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("b.gnn:1"), std::string::npos) << bad.message();
  // An illegal written schedule is the verifier's error, at parse time.
  Expected<TunableModule> illegal = TunableModule::parse(
      kernelText(aggOp(), vertexSchedule(8, 8, 256)), "illegal.gnn");
  ASSERT_FALSE(illegal);
  EXPECT_NE(illegal.message().find("illegal.gnn:3"), std::string::npos)
      << illegal.message();
  EXPECT_NE(illegal.message().find("a GPU loads at most 16 bytes"),
            std::string::npos)
      << illegal.message();
}

TEST(TunableModule, PrintWritesTheSchedulesIntoTheText) {
  TunableModule module = parseMixed();
  Schedule edge = edgeSchedule(4, 16, 256, 128);
  Schedule vertex = vertexSchedule(2, 16, 128);
  std::string text =
      module.print({{"mix_agg", edge}, {"mix_score", vertex}, {"mix_x", edge}});
  EXPECT_NE(text.find("schedule = " + edge.str()), std::string::npos) << text;
  EXPECT_NE(text.find("schedule = " + vertex.str()), std::string::npos) << text;
  // The written ones stay; the ops no model knows get none.
  EXPECT_NE(text.find("schedule = " + groupsWritten().str()), std::string::npos)
      << text;
  EXPECT_NE(text.find("schedule = " + halvesWritten().str()), std::string::npos)
      << text;
  size_t schedules = 0;
  for (size_t at = text.find("#gnn.schedule<"); at != std::string::npos;
       at = text.find("#gnn.schedule<", at + 1))
    ++schedules;
  EXPECT_EQ(schedules, 4u) << text;

  // The text parses back to the same sites with those schedules written;
  // the sddmm keeps its form and leaky_relu.
  Expected<TunableModule> back = TunableModule::parse(text, "printed.gnn");
  ASSERT_TRUE(back) << back.message() << "\n" << text;
  ASSERT_EQ(back->sites().size(), module.sites().size());
  for (size_t i = 0; i < module.sites().size(); ++i) {
    const TunableSite &before = module.sites()[i], &after = back->sites()[i];
    SCOPED_TRACE(before.entryName);
    EXPECT_EQ(after.entryName, before.entryName);
    EXPECT_TRUE(after.op == before.op);
    EXPECT_EQ(after.tunable, before.tunable);
  }
  EXPECT_EQ(siteOf(*back, "mix_agg").written, edge);
  EXPECT_EQ(siteOf(*back, "mix_score").written, vertex);
  EXPECT_EQ(siteOf(*back, "mix_groups").written, groupsWritten());
  EXPECT_EQ(siteOf(*back, "mix_halves").written, halvesWritten());
  EXPECT_FALSE(siteOf(*back, "mix_mean").written);

  // A written schedule is replaced when one is given for its kernel.
  Expected<TunableModule> replaced = TunableModule::parse(
      module.print({{"mix_groups", vertexSchedule(8, 4, 256)}}), "r.gnn");
  ASSERT_TRUE(replaced) << replaced.message();
  EXPECT_EQ(siteOf(*replaced, "mix_groups").written, vertexSchedule(8, 4, 256));

  // Schedules are set on clones: the module itself never changes.
  std::string plain = module.print({});
  EXPECT_EQ(plain.find("edge_parallel"), std::string::npos) << plain;
  EXPECT_EQ(module.print({{"mix_nothing", edge}}), plain);
  Expected<TunableModule> again = TunableModule::parse(plain, "plain.gnn");
  ASSERT_TRUE(again) << again.message();
  EXPECT_FALSE(siteOf(*again, "mix_agg").written);
}

TEST(TunableModule, CompileSetsTheSchedulesOfTheNamedKernels) {
  TunableModule module = parseMixed();
  Schedule edge = edgeSchedule(4, 16, 256, 128, WriteMode::Atomic);
  Expected<CompiledModule> m = module.compile({{"mix_agg", edge}});
  ASSERT_TRUE(m) << m.message();
  ASSERT_EQ(m->kernels.size(), 6u);
  Expected<rt::KernelSpec> agg = findKernel(*m, "mix_agg");
  ASSERT_TRUE(agg) << agg.message();
  EXPECT_EQ(agg->schedule, edge);
  Expected<KernelPlan> plan = planKernel(aggOp(), edge);
  ASSERT_TRUE(plan) << plan.message();
  expectPlanMatchesLowering(aggOp(), *plan, *agg, m->loweredIR);
  // The others keep what is written, completed by the defaults.
  Expected<rt::KernelSpec> groups = findKernel(*m, "mix_groups");
  ASSERT_TRUE(groups) << groups.message();
  EXPECT_EQ(groups->schedule, groupsWritten());
  Expected<rt::KernelSpec> halves = findKernel(*m, "mix_halves");
  ASSERT_TRUE(halves) << halves.message();
  EXPECT_EQ(halves->schedule, halvesWritten());
  Expected<rt::KernelSpec> score = findKernel(*m, "mix_score");
  ASSERT_TRUE(score) << score.message();
  EXPECT_EQ(score->schedule, *completeSchedule(scoreOp(), Schedule{}));
  // The clone was compiled, not the module: compiled again without
  // schedules, mix_agg gets the default.
  Expected<CompiledModule> plain = module.compile({});
  ASSERT_TRUE(plain) << plain.message();
  Expected<rt::KernelSpec> plainAgg = findKernel(*plain, "mix_agg");
  ASSERT_TRUE(plainAgg) << plainAgg.message();
  EXPECT_EQ(plainAgg->schedule, *completeSchedule(aggOp(), Schedule{}));
}

TEST(TunableModule, CompileKernelCompilesOnlyThatKernel) {
  TunableModule module = parseMixed();
  Schedule vertex = vertexSchedule(2, 16, 128);
  Expected<rt::KernelSpec> score = module.compileKernel("mix_score", vertex);
  ASSERT_TRUE(score) << score.message();
  EXPECT_EQ(score->name, "mix_score");
  EXPECT_EQ(score->schedule, vertex);
  ASSERT_TRUE(score->op);
  EXPECT_TRUE(*score->op == scoreOp());
  EXPECT_NE(score->source.find("mix_score("), std::string::npos);
  for (const char *other :
       {"mix_agg", "mix_groups", "mix_halves", "mix_mean", "mix_softmax"})
    EXPECT_EQ(score->source.find(other), std::string::npos) << other;
  // Its companions come along.
  Expected<rt::KernelSpec> agg =
      module.compileKernel("mix_agg", edgeSchedule(4, 16, 256, 128));
  ASSERT_TRUE(agg) << agg.message();
  ASSERT_EQ(agg->followUps.size(), 1u);
  EXPECT_EQ(agg->followUps[0].name, "mix_agg_fixup");
  EXPECT_NE(agg->source.find("mix_agg_fixup("), std::string::npos);
  EXPECT_EQ(agg->source.find("mix_score"), std::string::npos);
  // A kernel that is not there, and a schedule the plan refuses.
  EXPECT_FALSE(module.compileKernel("mix_nothing", vertex));
  Expected<rt::KernelSpec> illegal =
      module.compileKernel("mix_agg", vertexSchedule(8, 8, 256));
  ASSERT_FALSE(illegal);
  EXPECT_NE(illegal.message().find(
                planKernel(aggOp(), vertexSchedule(8, 8, 256)).message()),
            std::string::npos)
      << illegal.message();
}

TEST(TunableModule, AppliedKeepsASpmmsDiscBatchAndAccumulation) {
  TunableModule module = parseMixed();
  const TunableSite &halves = siteOf(module, "mix_halves");
  for (const Schedule &chosen :
       {vertexSchedule(4, 16, 128), edgeSchedule(8, 8, 256, 64),
        groupSchedule(2, 32, 256, 32)}) {
    SCOPED_TRACE(chosen.str());
    Schedule applied = TunableModule::applied(halves, chosen);
    Schedule expected = chosen;
    expected.discBatch = 32;
    expected.accumulate = Accumulate::F16;
    EXPECT_EQ(applied, expected);
    // And it compiles as such.
    Expected<rt::KernelSpec> spec = module.compileKernel("mix_halves", applied);
    ASSERT_TRUE(spec) << spec.message();
    EXPECT_EQ(spec->schedule, applied);
    // Sites that write neither, or nothing, get the choice as it is.
    for (const char *entry : {"mix_agg", "mix_groups", "mix_score"})
      EXPECT_EQ(TunableModule::applied(siteOf(module, entry), chosen), chosen)
          << entry;
  }
}

//===----------------------------------------------------------------------===//
// tuneModule
//===----------------------------------------------------------------------===//

TEST(TuneModule, WithoutMeasuringTheChoiceIsTheModelsBest) {
  TunableModule module = parseMixed();
  graph::CsrGraph g = graph::generateRmat(9, 16, 1);
  TuningOptions options;
  options.gpu = sm90();
  std::vector<std::string> seen;
  options.onSite = [&](const SiteTuning &t) {
    seen.push_back(t.site->entryName);
  };
  std::vector<SiteTuning> tuned = tuneModule(module, g, options);
  // Written schedules are kept (compileForGraph's rule) and untunable ops
  // (the edge softmax) left out; a mean is tuned like a sum.
  EXPECT_EQ(entriesOf(tuned),
            (std::vector<std::string>{"mix_agg", "mix_score", "mix_mean"}));
  EXPECT_EQ(seen, entriesOf(tuned));
  std::string fingerprint = graph::analyzeGraph(g).fingerprintHex;
  for (const SiteTuning &t : tuned) {
    SCOPED_TRACE(t.site->entryName);
    std::vector<Candidate> ranked = rankedFor(g, t.site->op);
    ASSERT_EQ(t.ranked.size(), ranked.size());
    for (size_t i = 0; i < ranked.size(); ++i) {
      EXPECT_EQ(t.ranked[i].schedule, ranked[i].schedule) << i;
      EXPECT_DOUBLE_EQ(t.ranked[i].prediction.seconds,
                       ranked[i].prediction.seconds);
      EXPECT_FALSE(t.ranked[i].measuredSeconds);
    }
    EXPECT_EQ(t.choiceIndex, 0u);
    EXPECT_EQ(t.choice, ranked[0].schedule);
    EXPECT_EQ(t.source, ChoiceSource::Model);
    EXPECT_FALSE(t.previous);
    EXPECT_EQ(t.profile.fingerprintHex, fingerprint);
    EXPECT_EQ(t.profile.featureBytesPerRow,
              t.site->op.width *
                  static_cast<int64_t>(elementSize(t.site->op.type)));
    EXPECT_GE(t.cpuSeconds, t.cpuProfileSeconds);
  }
  std::map<std::string, Schedule> chosen = choices(tuned);
  ASSERT_EQ(chosen.size(), 3u);
  EXPECT_EQ(chosen.at("mix_agg"), tuned[0].choice);
  EXPECT_EQ(chosen.at("mix_score"), tuned[1].choice);
  EXPECT_EQ(chosen.at("mix_mean"), tuned[2].choice);

  // gnn-tune retunes written schedules too; a HalfGNN kernel keeps its
  // disc_batch and accumulation, and the choices compile.
  options.retuneWritten = true;
  seen.clear();
  std::vector<SiteTuning> all = tuneModule(module, g, options);
  EXPECT_EQ(entriesOf(all),
            (std::vector<std::string>{"mix_agg", "mix_groups", "mix_halves",
                                      "mix_score", "mix_mean"}));
  const SiteTuning &groups = tuningOf(all, "mix_groups");
  EXPECT_EQ(groups.choice, rankedFor(g, groupsOp())[0].schedule);
  const SiteTuning &halves = tuningOf(all, "mix_halves");
  Schedule best = rankedFor(g, halvesOp())[0].schedule;
  EXPECT_EQ(halves.ranked[0].schedule, best);
  best.discBatch = 32;
  best.accumulate = Accumulate::F16;
  EXPECT_EQ(halves.choice, best);
  Expected<CompiledModule> m = module.compile(choices(all));
  ASSERT_TRUE(m) << m.message();
  for (const SiteTuning &t : all) {
    Expected<rt::KernelSpec> spec = findKernel(*m, t.site->entryName);
    ASSERT_TRUE(spec) << spec.message();
    EXPECT_EQ(spec->schedule, t.choice) << t.site->entryName;
  }
}

// A caller that keeps the graph's profiles (gnnc_kernel_get, per graph
// handle) hands them to every run: each feature-row size is analysed once,
// and the choices are those of a run that analyses the graph itself.
TEST(TuneModule, ProfilesKeptAcrossRunsOnOneGraph) {
  TunableModule module = parseMixed();
  graph::CsrGraph g = graph::generateRmat(9, 16, 1);
  TuningOptions alone;
  alone.gpu = sm90();
  std::vector<SiteTuning> reference = tuneModule(module, g, alone);
  TuningOptions kept = alone;
  graph::ProfileCache profiles;
  kept.profiles = &profiles;
  std::vector<SiteTuning> first = tuneModule(module, g, kept);
  const size_t analysed = profiles.size();
  // One analysis per feature-row size of the tuned sites, at most one each.
  EXPECT_GE(analysed, 1u);
  EXPECT_LE(analysed, first.size());
  std::vector<SiteTuning> second = tuneModule(module, g, kept);
  EXPECT_EQ(profiles.size(), analysed);
  ASSERT_EQ(first.size(), reference.size());
  ASSERT_EQ(second.size(), reference.size());
  for (size_t i = 0; i < reference.size(); ++i) {
    EXPECT_EQ(first[i].choice, reference[i].choice) << i;
    EXPECT_EQ(second[i].choice, reference[i].choice) << i;
    EXPECT_EQ(second[i].profile.fingerprintHex,
              reference[i].profile.fingerprintHex);
  }
}

TEST(TuneModule, TheDatabaseEntryIsUsedWhenAsked) {
  TunableModule module = parseMixed();
  graph::CsrGraph g = graph::generateRmat(9, 16, 1);
  GpuModel gpu = sm90();
  const TunableSite &agg = siteOf(module, "mix_agg");
  graph::GraphProfile profile = profileOf(g, gpu, agg.op);
  TuningKey key = tuningKey(agg, profile, gpu);
  EXPECT_EQ(key, (TuningKey{profile.fingerprintHex, "spmm", "f32", 64, false,
                            "sm_90"}));
  TuningKey scoreKey = tuningKey(siteOf(module, "mix_score"), profile,
                                 builtinGpuModel("sm_80").take());
  EXPECT_EQ(scoreKey, (TuningKey{profile.fingerprintHex, "sddmm_add", "bf16",
                                 30, false, "sm_80"}));

  std::string path = tempPath("loop/tuning.db");
  std::remove(path.c_str());
  Expected<TuningDb> db = TuningDb::load(path);
  ASSERT_TRUE(db) << db.message();
  TuningEntry entry;
  entry.key = key;
  entry.schedule = vertexSchedule(2, 8, 64);
  entry.predictedSeconds = 1e-3;
  ASSERT_TRUE(db->store(entry));
  Schedule modelBest = rankedFor(g, agg.op)[0].schedule;
  ASSERT_NE(modelBest, entry.schedule);

  TuningOptions options;
  options.gpu = gpu;
  options.database = &*db;
  // Looked up, reported, but not taken.
  std::vector<SiteTuning> tuned = tuneModule(module, g, options);
  const SiteTuning &looked = tuningOf(tuned, "mix_agg");
  ASSERT_TRUE(looked.previous);
  EXPECT_EQ(looked.previous->schedule, entry.schedule);
  EXPECT_EQ(looked.choice, modelBest);
  EXPECT_EQ(looked.source, ChoiceSource::Model);
  EXPECT_FALSE(tuningOf(tuned, "mix_score").previous);
  // Taken: no ranking for that site; the others are ranked as before.
  options.takeFromDatabase = true;
  tuned = tuneModule(module, g, options);
  ASSERT_EQ(entriesOf(tuned),
            (std::vector<std::string>{"mix_agg", "mix_score", "mix_mean"}));
  EXPECT_EQ(tuned[0].choice, entry.schedule);
  EXPECT_EQ(tuned[0].source, ChoiceSource::Database);
  EXPECT_TRUE(tuned[0].ranked.empty());
  EXPECT_EQ(tuned[1].source, ChoiceSource::Model);
  EXPECT_FALSE(tuned[1].ranked.empty());

  // An entry the plan refuses (8 f32 lanes are 32 bytes) is not taken.
  TuningEntry illegal = entry;
  illegal.schedule = vertexSchedule(8, 8, 256);
  ASSERT_TRUE(db->store(illegal));
  tuned = tuneModule(module, g, options);
  ASSERT_TRUE(tuned[0].previous);
  EXPECT_EQ(tuned[0].previous->schedule, illegal.schedule);
  EXPECT_EQ(tuned[0].choice, modelBest);
  EXPECT_EQ(tuned[0].source, ChoiceSource::Model);

  // An entry for a HalfGNN kernel is applied to it: its disc_batch and
  // accumulation stay.
  const TunableSite &halves = siteOf(module, "mix_halves");
  TuningEntry half;
  half.key = tuningKey(halves, profileOf(g, gpu, halves.op), gpu);
  half.schedule = edgeSchedule(8, 8, 256, 128);
  ASSERT_TRUE(db->store(half));
  options.retuneWritten = true;
  tuned = tuneModule(module, g, options);
  const SiteTuning &fromDb = tuningOf(tuned, "mix_halves");
  EXPECT_EQ(fromDb.source, ChoiceSource::Database);
  EXPECT_EQ(fromDb.choice, TunableModule::applied(halves, half.schedule));
  Schedule expected = half.schedule;
  expected.discBatch = 32;
  expected.accumulate = Accumulate::F16;
  EXPECT_EQ(fromDb.choice, expected);
  std::remove(path.c_str());
}

TEST(TuneModule, VisitsTheMeasurementOrdersCandidatesCompiled) {
  TunableModule module = parseMixed();
  graph::CsrGraph g = graph::generateRmat(9, 16, 1);
  struct Visit {
    std::string site;
    rt::KernelSpec kernel;
  };
  std::vector<Visit> visits;
  TuningOptions options;
  options.gpu = sm90();
  options.topK = 3;
  options.visitMeasures = true;
  // Each later visit of a site "measures" faster than the one before.
  options.visit = [&](const TunableSite &site,
                      const rt::KernelSpec &kernel) -> Expected<double> {
    visits.push_back({site.entryName, kernel});
    return 1e-3 - 1e-5 * static_cast<double>(visits.size());
  };
  std::vector<SiteTuning> tuned = tuneModule(module, g, options);
  ASSERT_EQ(entriesOf(tuned),
            (std::vector<std::string>{"mix_agg", "mix_score", "mix_mean"}));
  size_t next = 0;
  for (const SiteTuning &t : tuned) {
    SCOPED_TRACE(t.site->entryName);
    std::vector<size_t> order = measurementOrder(t.ranked, 3);
    ASSERT_EQ(order.size(), 3u);
    // The candidates of measurementOrder, compiled with their schedules,
    // in that order.
    for (size_t i : order) {
      ASSERT_LT(next, visits.size());
      const Visit &v = visits[next++];
      EXPECT_EQ(v.site, t.site->entryName);
      EXPECT_EQ(v.kernel.name, t.site->entryName);
      EXPECT_EQ(v.kernel.schedule, t.ranked[i].schedule);
      ASSERT_TRUE(v.kernel.op);
      EXPECT_TRUE(*v.kernel.op == t.site->op);
      EXPECT_FALSE(v.kernel.source.empty());
    }
    // Exactly those are measured; the fastest, the last visited, is chosen.
    for (size_t i = 0; i < t.ranked.size(); ++i)
      EXPECT_EQ(t.ranked[i].measuredSeconds.has_value(),
                std::find(order.begin(), order.end(), i) != order.end())
          << i;
    EXPECT_EQ(t.choiceIndex, order.back());
    EXPECT_EQ(t.choice, t.ranked[order.back()].schedule);
    EXPECT_EQ(t.source, ChoiceSource::Measured);
  }
  EXPECT_EQ(next, visits.size());

  // A visit that only compiles (gnn-tune --precompile) measures nothing:
  // the model chooses.
  visits.clear();
  options.visitMeasures = false;
  tuned = tuneModule(module, g, options);
  EXPECT_EQ(visits.size(), 9u); // three sites, three candidates each
  for (const SiteTuning &t : tuned) {
    EXPECT_EQ(t.choiceIndex, 0u);
    EXPECT_EQ(t.source, ChoiceSource::Model);
    for (const Candidate &c : t.ranked)
      EXPECT_FALSE(c.measuredSeconds);
  }
  // A failed visit leaves its reason in the candidate's note.
  options.visitMeasures = true;
  options.visit = [](const TunableSite &,
                     const rt::KernelSpec &kernel) -> Expected<double> {
    return Status::error("wrong result: " + kernel.name);
  };
  tuned = tuneModule(module, g, options);
  for (const SiteTuning &t : tuned) {
    SCOPED_TRACE(t.site->entryName);
    for (size_t i : measurementOrder(t.ranked, 3))
      EXPECT_EQ(t.ranked[i].note, "wrong result: " + t.site->entryName);
    EXPECT_EQ(t.choiceIndex, 0u);
    EXPECT_EQ(t.source, ChoiceSource::Model);
  }
  // topK = 0 visits nothing.
  visits.clear();
  options.topK = 0;
  options.visit = [&](const TunableSite &site,
                      const rt::KernelSpec &kernel) -> Expected<double> {
    visits.push_back({site.entryName, kernel});
    return 1.0;
  };
  tuneModule(module, g, options);
  EXPECT_TRUE(visits.empty());
}

//===----------------------------------------------------------------------===//
// compileForGraph: the C++ API tunes what the source leaves unscheduled
//===----------------------------------------------------------------------===//

namespace {

const char *kTwoKernels = R"(
gnn.module @m {
  gnn.kernel @free(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
  gnn.kernel @fixed(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 1, dim_workers = 32, threads_per_block = 128>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
}
)";

} // namespace

TEST(TunedCompile, TunesUnscheduledOpsAndKeepsWrittenSchedules) {
  graph::CsrGraph star = starGraph(50000);
  TuningChoices choices;
  Expected<CompiledModule> m =
      compileForGraph(kTwoKernels, "two.gnn", star, sm90Compile(), &choices);
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ(choices.arch, "sm_90");
  ASSERT_EQ(choices.schedules.size(), 1u);
  ASSERT_TRUE(choices.schedules.count("m_free"));
  EXPECT_EQ(choices.schedules["m_free"].source, "cost model");
  expectKernelSchedule(*m, "m_fixed", vertexSchedule(1, 32, 128));
  // The tuned kernel carries exactly the model's best schedule.
  std::vector<Candidate> ranked = rankedFor(star, aggOp());
  ASSERT_FALSE(ranked.empty());
  const Schedule &best = ranked[chooseCandidate(ranked)].schedule;
  EXPECT_EQ(choices.schedules["m_free"].schedule, best);
  expectKernelSchedule(*m, "m_free", best);
  // On the star, with its hub row, that is not a vertex_parallel one.
  EXPECT_NE(best.strategy, Strategy::VertexParallel) << best.str();
}

TEST(TunedCompile, PrefersTheDatabaseEntryForThisGraph) {
  graph::CsrGraph star = starGraph(5000);
  std::string path = tempPath("db/api/tuning.db");
  std::remove(path.c_str());
  Expected<TuningDb> db = TuningDb::load(path);
  ASSERT_TRUE(db) << db.message();
  TuningEntry entry;
  entry.key = {graph::analyzeGraph(star).fingerprintHex,
               "spmm",
               "f32",
               64,
               false,
               "sm_90"};
  entry.schedule = vertexSchedule(2, 8, 64);
  entry.predictedSeconds = 1e-3;
  ASSERT_TRUE(db->store(entry));

  TunedCompileOptions options = sm90Compile(path);
  TuningChoices choices;
  Expected<CompiledModule> m =
      compileForGraph(kTwoKernels, "two.gnn", star, options, &choices);
  ASSERT_TRUE(m) << m.message();
  ASSERT_EQ(choices.schedules.size(), 1u);
  EXPECT_EQ(choices.schedules["m_free"].schedule, entry.schedule);
  EXPECT_EQ(choices.schedules["m_free"].source, "database");
  expectKernelSchedule(*m, "m_free", entry.schedule);
  // The written schedule wins over the database.
  expectKernelSchedule(*m, "m_fixed", vertexSchedule(1, 32, 128));
  // Without the database (or for another architecture) the model chooses.
  options.useDatabase = false;
  choices = {};
  ASSERT_TRUE(compileForGraph(kTwoKernels, "two.gnn", star, options, &choices));
  EXPECT_EQ(choices.schedules["m_free"].source, "cost model");
  options.useDatabase = true;
  options.arch = "sm_80";
  choices = {};
  ASSERT_TRUE(compileForGraph(kTwoKernels, "two.gnn", star, options, &choices));
  EXPECT_EQ(choices.arch, "sm_80");
  EXPECT_EQ(choices.schedules["m_free"].source, "cost model");
  std::remove(path.c_str());
}

TEST(TunedCompile, NeedsAGpuOrANamedArchitecture) {
  graph::CsrGraph star = starGraph(100);
  TunedCompileOptions options;
  options.useDatabase = false;
  TuningChoices choices;
  Expected<CompiledModule> m =
      compileForGraph(kTwoKernels, "two.gnn", star, options, &choices);
  std::string why;
  if (rt::gpuAvailable(&why)) {
    // Tuned for the GPU present.
    ASSERT_TRUE(m) << m.message();
    EXPECT_EQ(choices.arch.rfind("sm_", 0), 0u) << choices.arch;
  } else {
    // No silent sm_90: an error that says what to do.
    ASSERT_FALSE(m);
    EXPECT_NE(m.message().find("compileForGraph: no GPU here to tune for; "
                               "name its architecture "
                               "(TunedCompileOptions::arch"),
              std::string::npos)
        << m.message();
    EXPECT_TRUE(choices.schedules.empty());
  }
  options.arch = "sm_75";
  m = compileForGraph(kTwoKernels, "two.gnn", star, options);
  ASSERT_FALSE(m);
  EXPECT_NE(m.message().find("sm_75"), std::string::npos) << m.message();
  options.arch = "sm_90";
  m = compileForGraph("gnn.module {", "bad.gnn", star, options);
  ASSERT_FALSE(m);
  EXPECT_NE(m.message().find("bad.gnn:1"), std::string::npos) << m.message();
}

namespace {

/// A batch's aggregation without a schedule, and one with a written one.
const char *const kBatchKernels = R"(
gnn.module @b {
  gnn.kernel @agg(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?xWxf32>) -> tensor<?xWxf32> {
    %y = gnn.spmm %g, %x : !gnn.graph<batched_csr, i64, i32>, tensor<?xWxf32> -> tensor<?xWxf32>
    gnn.return %y : tensor<?xWxf32>
  }
  gnn.kernel @fixed(%g: !gnn.graph<batched_csr, i64, i32>, %x: tensor<?xWxf32>) -> tensor<?xWxf32> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = batched, tile_rows = 64>} : !gnn.graph<batched_csr, i64, i32>, tensor<?xWxf32> -> tensor<?xWxf32>
    gnn.return %y : tensor<?xWxf32>
  }
}
)";

std::string batchKernels(int64_t width) {
  std::string text = kBatchKernels;
  const std::string w = std::to_string(width);
  for (size_t at = text.find("?xWx"); at != std::string::npos;
       at = text.find("?xWx", at))
    text.replace(at + 2, 1, w);
  return text;
}

} // namespace

TEST(TunedCompile, ABatchGetsTheFasterPredictedOfBatchedAndGeneral) {
  // On sm_90 the models prefer batched for narrow rows and general for
  // wide ones on these batches: both answers occur.
  int picks[2] = {0, 0};
  for (int64_t graphs : {200, 5000})
    for (int64_t width : {16, 256}) {
      SCOPED_TRACE(std::to_string(graphs) + " graphs, width " +
                   std::to_string(width));
      graph::MoleculeBatchOptions o;
      o.numGraphs = graphs;
      graph::BatchedGraph batch = graph::generateMoleculeBatch(o, 7);
      TuningChoices choices;
      Expected<CompiledModule> m = compileForBatch(
          batchKernels(width), "b.gnn", batch, sm90Compile(), &choices);
      ASSERT_TRUE(m) << m.message();
      ASSERT_EQ(choices.schedules.size(), 1u);
      const TuningChoices::Choice &c = choices.schedules["b_agg"];
      ASSERT_TRUE(c.generalSeconds && c.batchedSeconds);
      // A tie (both bandwidth-bound) goes to batched.
      const bool batched = *c.batchedSeconds <= *c.generalSeconds;
      ++picks[batched];
      EXPECT_EQ(c.schedule.strategy == Strategy::Batched, batched)
          << c.schedule.str();
      EXPECT_EQ(c.source, batched ? "cost model (batched)" : "cost model");
      expectKernelSchedule(*m, "b_agg", c.schedule);
      // The written schedule is kept.
      EXPECT_EQ(choices.schedules.count("b_fixed"), 0u);
    }
  EXPECT_GT(picks[0], 0);
  EXPECT_GT(picks[1], 0);
}

TEST(TunedCompile, ABatchThatBreaksItsRulesIsRefused) {
  graph::MoleculeBatchOptions o;
  o.numGraphs = 10;
  graph::BatchedGraph batch = graph::generateMoleculeBatch(o, 1);
  batch.graphPtr.back() -= 1;
  Expected<CompiledModule> m =
      compileForBatch(batchKernels(16), "b.gnn", batch, sm90Compile());
  ASSERT_FALSE(m);
  EXPECT_EQ(m.message().rfind("compileForBatch: ", 0), 0u) << m.message();
}
