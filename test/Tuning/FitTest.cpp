//===- FitTest.cpp - Kernel-cost constants fitted on R-MAT samples --------===//
#include "gnnc/Tuning/Fit.h"
#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace gnnc;
using namespace gnnc::tuning;

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
      graph::GraphProfile profile =
          graph::analyzeGraph(g, profileOptionsFor(truth, s.problem));
      s.measuredSeconds =
          predict(truth, profile, s.problem, s.schedule).seconds * jitter(rng);
      out.push_back(s);
    }
  }
  return out;
}

GpuModel sm90() { return *builtinGpuModel("sm_90"); }

} // namespace

TEST(TuningFit, PlanCoversEdgeParallelSchedulesOnTwoGraphs) {
  std::vector<KernelSample> plan = calibrationPlan();
  ASSERT_GT(plan.size(), 50u);
  bool scales[2] = {};
  for (const KernelSample &s : plan) {
    EXPECT_TRUE(s.schedule.isEdgeParallel()) << s.schedule.shortText();
    EXPECT_TRUE(isLegal(s.problem, s.schedule)) << s.schedule.shortText();
    EXPECT_EQ(s.measuredSeconds, 0);
    ASSERT_TRUE(s.rmatScale == 16 || s.rmatScale == 17);
    scales[s.rmatScale - 16] = true;
  }
  EXPECT_TRUE(scales[0] && scales[1]);
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
  EXPECT_LT(report->rmsLogAfter, 1e-9);
  EXPECT_GT(report->rmsLogBefore, report->rmsLogAfter);

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
  Problem p;
  p.width = 32;
  GpuModel with = sm90(), without = sm90();
  without.edgeStepCycles = without.rowEndCycles = 0;
  graph::GraphProfile profile =
      graph::analyzeGraph(g, profileOptionsFor(with, p));
  for (const Schedule &s : enumerateSchedules(p)) {
    Prediction a = predict(with, profile, p, s);
    Prediction b = predict(without, profile, p, s);
    if (s.isEdgeParallel()) {
      EXPECT_GT(a.instructionSeconds, 0) << s.shortText();
      EXPECT_DOUBLE_EQ(a.seconds, b.seconds + a.instructionSeconds);
    } else {
      EXPECT_EQ(a.instructionSeconds, 0) << s.shortText();
      EXPECT_DOUBLE_EQ(a.seconds, b.seconds) << s.shortText();
    }
  }
}

TEST(TuningFit, FewerLanesPerWorkerCostMoreInstructions) {
  // The measured trend the terms model: at one width, workers of fewer
  // lanes share a warp with more workers and run its row ends serially.
  graph::CsrGraph g = graph::generateRmat(12, 16, 1);
  Problem p;
  p.type = ElementType::F16;
  p.width = 32;
  GpuModel gpu = sm90();
  graph::GraphProfile profile =
      graph::analyzeGraph(g, profileOptionsFor(gpu, p));
  Schedule wide{1, 32, 256, 256}, narrow{8, 4, 256, 256};
  EXPECT_GT(predict(gpu, profile, p, narrow).instructionSeconds,
            predict(gpu, profile, p, wide).instructionSeconds);
}

TEST(TuningFit, SamplesRoundTripAndBadLinesAreNamed) {
  GpuModel truth = sm90();
  std::vector<KernelSample> samples = syntheticSamples(truth, 0.0, 4);
  samples.resize(5);
  Expected<std::vector<KernelSample>> back =
      parseSamples(formatSamples(samples), "s.txt");
  ASSERT_TRUE(back) << back.message();
  ASSERT_EQ(back->size(), samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ((*back)[i].rmatScale, samples[i].rmatScale);
    EXPECT_EQ((*back)[i].problem.type, samples[i].problem.type);
    EXPECT_EQ((*back)[i].problem.width, samples[i].problem.width);
    EXPECT_TRUE((*back)[i].schedule == samples[i].schedule);
    EXPECT_NEAR((*back)[i].measuredSeconds, samples[i].measuredSeconds,
                1e-5 * samples[i].measuredSeconds);
  }
  struct Case {
    const char *text;
    const char *error;
  } cases[] = {
      {"# c\n\nrmat 16 spmm f32 32 vw=4 dw=8 tpb=256\n", "s.txt:3: expected"},
      {"rmat 99 spmm f32 32 vw=4 dw=8 tpb=256 ep=256 1e-5\n",
       "s.txt:1: R-MAT scale must be from 1 to"},
      {"rmat 16 spmm f64 32 vw=4 dw=8 tpb=256 ep=256 1e-5\n", "s.txt:1: "},
      {"rmat 16 spmm f32 0 vw=4 dw=8 tpb=256 ep=256 1e-5\n",
       "s.txt:1: width must be"},
      {"rmat 16 spmm f32 32 vw=4 dw=8 tpb=256 xx=1 1e-5\n",
       "s.txt:1: unknown schedule field 'xx=1'"},
      {"rmat 16 spmm f32 32 vw=3 dw=8 tpb=256 ep=256 1e-5\n",
       "s.txt:1: illegal schedule"},
      {"rmat 16 spmm f32 32 vw=4 dw=8 tpb=256 ep=256 -1\n",
       "s.txt:1: measured seconds must be a positive number"},
      {"rmat 16 spmm f32 32 vw=4 dw=8 tpb=256 ep=256 fast\n",
       "s.txt:1: measured seconds"},
      {"rmat 16 sddmm f32 32 vw=4 dw=8 tpb=256 ep=256 1e-5\n",
       "s.txt:1: expected"},
  };
  for (const Case &c : cases) {
    Expected<std::vector<KernelSample>> r = parseSamples(c.text, "s.txt");
    ASSERT_FALSE(r) << c.text;
    EXPECT_NE(r.message().find(c.error), std::string::npos) << r.message();
  }
  GpuModel gpu = sm90();
  EXPECT_FALSE(fitKernelCosts(gpu, {}));
  KernelSample untimed = samples[0];
  untimed.measuredSeconds = 0;
  Expected<FitReport> noTime = fitKernelCosts(gpu, {untimed});
  ASSERT_FALSE(noTime);
  EXPECT_NE(noTime.message().find("no measured time"), std::string::npos);
}

TEST(TuningFit, MeasuresSamplesOnTheGpu) {
  std::string why;
  if (!rt::gpuAvailable(&why))
    GTEST_SKIP() << "no GPU (" << why << "): measureSamples() is untested here";
  Expected<rt::Runtime> runtime = rt::Runtime::create(0, "off");
  ASSERT_TRUE(runtime) << runtime.message();
  std::vector<KernelSample> plan;
  for (KernelSample s : calibrationPlan())
    if (s.rmatScale == 16 && s.problem.width == 32 && plan.size() < 3) {
      s.rmatScale = 12;
      plan.push_back(s);
    }
  Expected<std::vector<KernelSample>> measured = measureSamples(*runtime, plan);
  ASSERT_TRUE(measured) << measured.message();
  ASSERT_EQ(measured->size(), plan.size());
  for (const KernelSample &s : *measured)
    EXPECT_GT(s.measuredSeconds, 0);
}
