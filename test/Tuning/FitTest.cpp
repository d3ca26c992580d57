//===- FitTest.cpp - Kernel-cost constants fitted on R-MAT samples --------===//
#include "TuningTestUtil.h"

#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Tuning/Fit.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

using namespace gnnc;
using namespace gnnc::tuning;
using namespace gnnc::tuning::test;

namespace {

/// The edge-parallel samples of calibrationPlan() moved to small R-MAT
/// graphs, with times that `truth` predicts, scaled by a random factor in
/// [1 - noise, 1 + noise].
std::vector<KernelSample> syntheticSamples(const GpuModel &truth, double noise,
                                           unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
  std::vector<KernelSample> out;
  for (int scale : {10, 11}) {
    graph::CsrGraph g = graph::generateRmat(scale, 16, 1);
    for (KernelSample s : calibrationPlan()) {
      if (s.rmatScale != 16)
        continue;
      s.rmatScale = scale;
      s.measuredSeconds =
          predictWith(truth, profileOf(g, truth, s.op), s.op, s.schedule)
              .seconds *
          jitter(rng);
      out.push_back(s);
    }
  }
  return out;
}

} // namespace

TEST(TuningFit, SampleOpIsASumOnInt64OffsetsAndInt32Indices) {
  OpDesc op = spmmProblem(ElementType::F16, 32);
  EXPECT_TRUE(op == spmmProblem(ElementType::F16, 32));
  EXPECT_EQ(op.kind, OpKind::Spmm);
  EXPECT_EQ(op.reduce, Reduce::Sum);
  EXPECT_EQ(op.scale, DegreeScale::None);
  EXPECT_FALSE(op.edgeValues);
  EXPECT_FALSE(op.padded());
}

TEST(TuningFit, PlanCoversEdgeParallelSchedulesOnTwoGraphs) {
  std::vector<KernelSample> plan = calibrationPlan();
  bool scales[2] = {};
  size_t perGraph = 0;
  for (const KernelSample &s : plan) {
    SCOPED_TRACE(s.schedule.str());
    EXPECT_EQ(s.schedule.strategy, Strategy::EdgeParallel);
    Expected<KernelPlan> kernel = planKernel(s.op, s.schedule);
    EXPECT_TRUE(kernel) << kernel.message();
    EXPECT_EQ(s.measuredSeconds, 0);
    EXPECT_TRUE(s.op == spmmProblem(s.op.type, s.op.width));
    ASSERT_TRUE(s.rmatScale == 16 || s.rmatScale == 17);
    scales[s.rmatScale - 16] = true;
    perGraph += s.rmatScale == 16;
  }
  EXPECT_TRUE(scales[0] && scales[1]);
  // Every edge-parallel schedule the tuner enumerates for f32 and f16 of
  // widths 32, 64 and 128, once per graph.
  size_t expected = 0;
  for (ElementType type : {ElementType::F32, ElementType::F16})
    for (int64_t width : {32, 64, 128})
      for (const Schedule &s : enumerateSchedules(spmmProblem(type, width)))
        expected += s.strategy == Strategy::EdgeParallel;
  EXPECT_EQ(perGraph, expected);
  EXPECT_EQ(plan.size(), 2 * expected);
  EXPECT_GT(plan.size(), 50u);
}

TEST(TuningFit, RecoversKnownConstants) {
  GpuModel truth = sm90();
  truth.edgeStepCycles = 3.0;
  truth.rowEndCycles = 40.0;
  std::vector<KernelSample> samples = syntheticSamples(truth, 0.0, 1);
  GpuModel fitted = sm90();
  fitted.edgeStepCycles = 0;
  fitted.rowEndCycles = 0;
  Expected<FitReport> report = fitKernelCosts(fitted, samples);
  ASSERT_TRUE(report) << report.message();
  EXPECT_EQ(report->samples, samples.size());
  EXPECT_NEAR(fitted.edgeStepCycles, 3.0, 1e-6);
  EXPECT_NEAR(fitted.rowEndCycles, 40.0, 1e-5);
  EXPECT_NEAR(report->edgeStepCycles, 3.0, 1e-6);
  EXPECT_NEAR(report->rowEndCycles, 40.0, 1e-5);
  EXPECT_LT(report->rmsLogAfter, 1e-9);
  EXPECT_GT(report->rmsLogBefore, report->rmsLogAfter);
  EXPECT_NE(report->text().find("fitted on " + std::to_string(samples.size()) +
                                " edge-parallel R-MAT kernels"),
            std::string::npos)
      << report->text();

  // With 5% noise the constants land near the truth, and the fit explains
  // the times to about the noise.
  std::vector<KernelSample> noisy = syntheticSamples(truth, 0.05, 2);
  GpuModel again = sm90();
  Expected<FitReport> noisyReport = fitKernelCosts(again, noisy);
  ASSERT_TRUE(noisyReport) << noisyReport.message();
  EXPECT_NEAR(again.edgeStepCycles, 3.0, 0.6);
  EXPECT_NEAR(again.rowEndCycles, 40.0, 8.0);
  EXPECT_LT(noisyReport->worstRatioAfter, 1.12);
}

TEST(TuningFit, ConstantsStayNonNegative) {
  // Times faster than the model without the loop costs: the best fit is
  // no loop cost, never a negative one.
  GpuModel truth = sm90();
  truth.edgeStepCycles = 0;
  truth.rowEndCycles = 0;
  std::vector<KernelSample> samples = syntheticSamples(truth, 0.0, 3);
  for (KernelSample &s : samples)
    s.measuredSeconds *= 0.7;
  GpuModel fitted = sm90();
  Expected<FitReport> report = fitKernelCosts(fitted, samples);
  ASSERT_TRUE(report) << report.message();
  EXPECT_EQ(fitted.edgeStepCycles, 0);
  EXPECT_EQ(fitted.rowEndCycles, 0);
}

TEST(TuningFit, TheFittedTermsOnlyTouchEdgeParallelSchedules) {
  graph::CsrGraph g = graph::generateRmat(11, 16, 1);
  OpDesc op = spmmProblem(ElementType::F32, 32);
  GpuModel with = sm90(), without = sm90();
  without.edgeStepCycles = without.rowEndCycles = 0;
  graph::GraphProfile profile = profileOf(g, with, op);
  for (const Schedule &s : enumerateSchedules(op)) {
    SCOPED_TRACE(s.str());
    Prediction a = predictWith(with, profile, op, s);
    Prediction b = predictWith(without, profile, op, s);
    if (s.strategy == Strategy::EdgeParallel) {
      EXPECT_GT(a.instructionSeconds, 0);
      EXPECT_DOUBLE_EQ(a.seconds, b.seconds + a.instructionSeconds);
    } else {
      EXPECT_EQ(a.instructionSeconds, 0);
      EXPECT_DOUBLE_EQ(a.seconds, b.seconds);
    }
  }
}

TEST(TuningFit, FewerLanesPerWorkerCostMoreInstructions) {
  // The measured trend the terms model: at one width, workers of fewer
  // lanes share a warp with more workers and run its row ends serially.
  graph::CsrGraph g = graph::generateRmat(12, 16, 1);
  OpDesc op = spmmProblem(ElementType::F16, 32);
  GpuModel gpu = sm90();
  graph::GraphProfile profile = profileOf(g, gpu, op);
  Schedule wide = edgeSchedule(1, 32, 256, 256);
  Schedule narrow = edgeSchedule(8, 4, 256, 256);
  EXPECT_GT(predictWith(gpu, profile, op, narrow).instructionSeconds,
            predictWith(gpu, profile, op, wide).instructionSeconds);
}

TEST(TuningFit, SamplesAreLinesWithTheScheduleAsText) {
  KernelSample s{16, spmmProblem(ElementType::F32, 32),
                 edgeSchedule(4, 8, 256, 256), 1.5e-5};
  std::string text = formatSamples({s});
  // `#` comment lines, then one line per sample.
  std::istringstream lines(text);
  std::string line, last;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    EXPECT_TRUE(last.empty()) << "more than one sample line: " << line;
    last = line;
  }
  EXPECT_EQ(last, "rmat 16 spmm f32 32 1.5e-05 #gnn.schedule<strategy = "
                  "edge_parallel, vector_width = 4, dim_workers = 8, "
                  "threads_per_block = 256, edges_per_warp = 256, write = "
                  "staged>");
  EXPECT_NE(text.find("# rmat SCALE spmm TYPE WIDTH SECONDS SCHEDULE\n"),
            std::string::npos)
      << text;
  // Read back, with comments and blank lines around it.
  Expected<std::vector<KernelSample>> back = parseSamples(
      "# measured by hand\n\n" + last + "   # a trailing comment\n\n", "s.txt");
  ASSERT_TRUE(back) << back.message();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].rmatScale, 16);
  EXPECT_TRUE((*back)[0].op == s.op);
  EXPECT_EQ((*back)[0].schedule, s.schedule);
  EXPECT_DOUBLE_EQ((*back)[0].measuredSeconds, 1.5e-5);
}

TEST(TuningFit, SamplesRoundTripAndBadLinesAreNamed) {
  GpuModel truth = sm90();
  std::vector<KernelSample> samples = syntheticSamples(truth, 0.0, 4);
  // A few of each type and vector width, and a schedule the tuner does not
  // enumerate (atomic writes, a register cap), which a sample may hold.
  std::vector<KernelSample> some;
  for (size_t i = 0; i < samples.size(); i += 7)
    some.push_back(samples[i]);
  some.push_back({17, spmmProblem(ElementType::F16, 64),
                  edgeSchedule(8, 8, 128, 64, WriteMode::Atomic, 4), 2e-4});
  ASSERT_GT(some.size(), 5u);
  Expected<std::vector<KernelSample>> back =
      parseSamples(formatSamples(some), "s.txt");
  ASSERT_TRUE(back) << back.message();
  ASSERT_EQ(back->size(), some.size());
  for (size_t i = 0; i < some.size(); ++i) {
    SCOPED_TRACE(some[i].schedule.str());
    EXPECT_EQ((*back)[i].rmatScale, some[i].rmatScale);
    EXPECT_TRUE((*back)[i].op == some[i].op);
    EXPECT_EQ((*back)[i].schedule, some[i].schedule);
    EXPECT_NEAR((*back)[i].measuredSeconds, some[i].measuredSeconds,
                1e-5 * some[i].measuredSeconds);
  }
  const std::string ep =
      "#gnn.schedule<strategy = edge_parallel, vector_width = 4, dim_workers "
      "= 8, threads_per_block = 256, edges_per_warp = 256, write = staged>";
  struct Case {
    std::string text;
    const char *error;
  } cases[] = {
      {"# c\n\nrmat 16 spmm f32 32 1e-5\n",
       "s.txt:3: expected 'rmat SCALE spmm TYPE WIDTH SECONDS "
       "#gnn.schedule<...>'"},
      // The format before schedules were text.
      {"rmat 16 spmm f32 32 vw=4 dw=8 tpb=256 ep=256 1e-5\n",
       "s.txt:1: expected 'rmat SCALE spmm TYPE WIDTH SECONDS"},
      {"rmat 99 spmm f32 32 1e-5 " + ep + "\n",
       "s.txt:1: R-MAT scale must be from 1 to 24, got '99'"},
      {"rmat 16 spmm f64 32 1e-5 " + ep + "\n", "s.txt:1: "},
      {"rmat 16 spmm f32 0 1e-5 " + ep + "\n", "s.txt:1: width must be"},
      {"rmat 16 spmm f32 32 1e-5 #gnn.schedule<vector_width = 4, xx = 1>\n",
       "#gnn.schedule<vector_width = 4, xx = 1>': unknown field 'xx'"},
      {"rmat 16 spmm f32 32 1e-5 #gnn.schedule<strategy = edge_parallel, "
       "vector_width = 3, dim_workers = 8, threads_per_block = 256, "
       "edges_per_warp = 256, write = staged>\n",
       "s.txt:1: illegal schedule"},
      {"rmat 16 spmm f32 32 1e-5 #gnn.schedule<vector_width = 4>\n",
       "s.txt:1: illegal schedule '#gnn.schedule<vector_width = 4>': the "
       "schedule #gnn.schedule<vector_width = 4> leaves parameters open"},
      {"rmat 16 spmm f32 32 -1 " + ep + "\n",
       "s.txt:1: measured seconds must be a positive number"},
      {"rmat 16 spmm f32 32 fast " + ep + "\n", "s.txt:1: measured seconds"},
      {"rmat 16 sddmm f32 32 1e-5 " + ep + "\n", "s.txt:1: expected"},
  };
  for (const Case &c : cases) {
    Expected<std::vector<KernelSample>> r = parseSamples(c.text, "s.txt");
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.message().rfind("s.txt:", 0), 0u) << r.message();
    EXPECT_NE(r.message().find(c.error), std::string::npos)
        << r.message() << "\nfor " << c.text;
  }
  GpuModel gpu = sm90();
  EXPECT_FALSE(fitKernelCosts(gpu, {}));
  // Vertex-parallel samples are ignored: alone they leave nothing to fit.
  KernelSample vertex = some[0];
  vertex.schedule = vertexSchedule(4, 8, 256);
  Expected<FitReport> none = fitKernelCosts(gpu, {vertex});
  ASSERT_FALSE(none);
  EXPECT_NE(none.message().find("no edge-parallel sample"), std::string::npos)
      << none.message();
  KernelSample untimed = some[0];
  untimed.measuredSeconds = 0;
  Expected<FitReport> noTime = fitKernelCosts(gpu, {untimed});
  ASSERT_FALSE(noTime);
  EXPECT_NE(noTime.message().find("no measured time"), std::string::npos)
      << noTime.message();
}

TEST(TuningFit, MeasuresSamplesOnTheGpu) {
  std::string why;
  if (!rt::gpuAvailable(&why))
    GTEST_SKIP() << "no GPU (" << why << "): measureSamples() is untested here";
  Expected<rt::Runtime> runtime = rt::Runtime::create(0, "off");
  ASSERT_TRUE(runtime) << runtime.message();
  std::vector<KernelSample> plan;
  for (KernelSample s : calibrationPlan())
    if (s.rmatScale == 16 && s.op.width == 32 && plan.size() < 3) {
      s.rmatScale = 12;
      plan.push_back(s);
    }
  std::vector<std::string> progress;
  Expected<std::vector<KernelSample>> measured =
      measureSamples(*runtime, plan, [&](const std::string &line) {
        progress.push_back(line);
      });
  ASSERT_TRUE(measured) << measured.message();
  ASSERT_EQ(measured->size(), plan.size());
  EXPECT_EQ(progress.size(), plan.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    EXPECT_GT((*measured)[i].measuredSeconds, 0);
    EXPECT_EQ((*measured)[i].schedule, plan[i].schedule);
  }
}
