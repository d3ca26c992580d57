//===- Fit.cpp - Kernel-cost constants fitted on synthetic graphs ---------===//
#include "gnnc/Tuning/Fit.h"

#include "NumberedLines.h"
#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Tuning/Tuner.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Rmat.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

using namespace gnnc;
using namespace gnnc::tuning;

namespace {

/// The R-MAT graphs of the samples: Graph500 parameters, 16 edges per node,
/// seed 1 (as `gnn-tune --rmat`).
constexpr int kRmatEdgeFactor = 16;
constexpr uint64_t kRmatSeed = 1;
constexpr int kMaxRmatScale = 24;
/// How a sample line's schedule begins (its text form).
const std::string kScheduleOpen = "#gnn.schedule<";

bool parseInt(const std::string &s, int64_t &out) {
  if (s.empty())
    return false;
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (!end || *end != '\0')
    return false;
  out = v;
  return true;
}

/// R-MAT graphs and their profiles, made once per scale and feature-row
/// size.
class SampleGraphs {
public:
  explicit SampleGraphs(const GpuModel &gpu) : gpu(gpu) {}

  const graph::CsrGraph &graphOf(int scale) {
    auto it = graphs.find(scale);
    if (it == graphs.end())
      it = graphs
               .emplace(scale,
                        graph::generateRmat(scale, kRmatEdgeFactor, kRmatSeed))
               .first;
    return it->second;
  }

  const graph::GraphProfile &profileOf(int scale, const OpDesc &op) {
    graph::AnalysisOptions options = profileOptionsFor(gpu, op);
    auto key = std::make_pair(scale, options.featureBytesPerRow);
    auto it = profiles.find(key);
    if (it == profiles.end())
      it = profiles.emplace(key, graph::analyzeGraph(graphOf(scale), options))
               .first;
    return it->second;
  }

private:
  const GpuModel &gpu;
  std::map<int, graph::CsrGraph> graphs;
  std::map<std::pair<int, int64_t>, graph::GraphProfile> profiles;
};

/// The one-kernel .gnn module a sample measures.
std::string sampleModule(const OpDesc &op) {
  std::string tensor = "tensor<?x" + std::to_string(op.width) + "x" +
                       elementTypeName(op.type) + ">";
  std::string graph = "!gnn.graph<csr, i64, i32>";
  return "gnn.module @calibration {\n"
         "  gnn.kernel @spmm(%g: " +
         graph + ", %x: " + tensor + ") -> " + tensor +
         " {\n"
         "    %y = gnn.spmm %g, %x : " +
         graph + ", " + tensor + " -> " + tensor +
         "\n"
         "    gnn.return %y : " +
         tensor +
         "\n"
         "  }\n"
         "}\n";
}

std::string sampleName(const KernelSample &s) {
  return "rmat" + std::to_string(s.rmatScale) + " " +
         elementTypeName(s.op.type) + " width " + std::to_string(s.op.width) +
         " " + shortText(s.schedule);
}

} // namespace

std::vector<KernelSample> gnnc::tuning::calibrationPlan() {
  std::vector<KernelSample> plan;
  for (int scale : {16, 17})
    for (ElementType type : {ElementType::F32, ElementType::F16})
      for (int64_t width : {32, 64, 128}) {
        OpDesc op = spmmOp(type, width);
        for (const Schedule &s : enumerateSchedules(op))
          if (s.strategy == Strategy::EdgeParallel)
            plan.push_back({scale, op, s, 0});
      }
  return plan;
}

std::string
gnnc::tuning::formatSamples(const std::vector<KernelSample> &samples) {
  std::ostringstream os;
  os << "# gnn.spmm (sum) kernels measured on R-MAT graphs (Graph500 "
        "parameters, 16 edges per node, seed 1)\n"
        "# rmat SCALE spmm TYPE WIDTH SECONDS SCHEDULE\n";
  for (const KernelSample &s : samples) {
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%.6g", s.measuredSeconds);
    os << "rmat " << s.rmatScale << " spmm " << elementTypeName(s.op.type)
       << " " << s.op.width << " " << seconds << " " << s.schedule.str()
       << "\n";
  }
  return os.str();
}

Expected<std::vector<KernelSample>>
gnnc::tuning::parseSamples(const std::string &text, const std::string &name) {
  std::vector<KernelSample> out;
  NumberedLines lines(text, name);
  std::string line;
  while (lines.next(line)) {
    // `#` starts a comment, except the one that opens the schedule's text
    // form; a comment may follow the schedule's closing `>`.
    size_t hash = line.find('#');
    if (hash != std::string::npos &&
        line.compare(hash, kScheduleOpen.size(), kScheduleOpen) == 0) {
      size_t close = line.find('>', hash);
      hash = close == std::string::npos ? close : line.find('#', close);
    }
    if (hash != std::string::npos)
      line.resize(hash);
    // Six words, then the schedule's text form.
    std::istringstream words(line);
    std::vector<std::string> f;
    for (std::string w; f.size() < 6 && words >> w;)
      f.push_back(w);
    std::string scheduleText;
    std::getline(words, scheduleText);
    if (f.empty())
      continue;
    if (f.size() < 6 || f[0] != "rmat" || f[2] != "spmm" ||
        scheduleText.find(kScheduleOpen) == std::string::npos)
      return lines.error("expected 'rmat SCALE spmm TYPE WIDTH SECONDS "
                         "#gnn.schedule<...>'");
    KernelSample s;
    int64_t scale = 0, width = 0;
    if (!parseInt(f[1], scale) || scale < 1 || scale > kMaxRmatScale)
      return lines.error("R-MAT scale must be from 1 to " +
                         std::to_string(kMaxRmatScale) + ", got '" + f[1] +
                         "'");
    s.rmatScale = static_cast<int>(scale);
    Expected<ElementType> type = parseElementType(f[3]);
    if (!type)
      return lines.error(type.message());
    if (!parseInt(f[4], width) || width < 1 || width > 65536)
      return lines.error("width must be from 1 to 65536, got '" + f[4] + "'");
    s.op = spmmOp(*type, width);
    char *end = nullptr;
    s.measuredSeconds = std::strtod(f[5].c_str(), &end);
    if (!end || *end != '\0' || !std::isfinite(s.measuredSeconds) ||
        s.measuredSeconds <= 0)
      return lines.error("measured seconds must be a positive number, got '" +
                         f[5] + "'");
    Expected<Schedule> schedule = parseSchedule(scheduleText);
    if (!schedule)
      return lines.error(schedule.message());
    s.schedule = *schedule;
    if (Expected<KernelPlan> plan = planKernel(s.op, s.schedule); !plan)
      return lines.error("illegal schedule '" + s.schedule.str() +
                         "': " + plan.message());
    out.push_back(s);
  }
  return out;
}

std::string FitReport::text() const {
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "fitted on %zu edge-parallel R-MAT kernels: edge_step_cycles "
                "= %.4g, row_end_cycles = %.4g\n"
                "rms log(measured / predicted): %.3f with both 0, %.3f "
                "fitted (worst ratio %.2f)",
                samples, edgeStepCycles, rowEndCycles, rmsLogBefore,
                rmsLogAfter, worstRatioAfter);
  return buf;
}

Expected<FitReport>
gnnc::tuning::fitKernelCosts(GpuModel &gpu,
                             const std::vector<KernelSample> &samples) {
  // For each sample: the prediction without the two terms, and each term's
  // seconds per unit constant (predict() is linear in both).
  GpuModel zero = gpu, unitStep = gpu, unitRow = gpu;
  zero.edgeStepCycles = zero.rowEndCycles = 0;
  unitStep.edgeStepCycles = 1;
  unitStep.rowEndCycles = 0;
  unitRow.edgeStepCycles = 0;
  unitRow.rowEndCycles = 1;
  SampleGraphs graphs(gpu);
  struct Row {
    double measured, base, step, row;
  };
  std::vector<Row> rows;
  for (const KernelSample &s : samples) {
    if (s.schedule.strategy != Strategy::EdgeParallel)
      continue;
    Expected<KernelPlan> plan = planKernel(s.op, s.schedule);
    if (!plan)
      return Status::error(sampleName(s) +
                           ": illegal schedule: " + plan.message());
    if (!(s.measuredSeconds > 0))
      return Status::error(sampleName(s) + ": no measured time");
    const graph::GraphProfile &profile = graphs.profileOf(s.rmatScale, s.op);
    double base = predictSpmm(zero, profile, s.op, *plan).seconds;
    double step =
        predictSpmm(unitStep, profile, s.op, *plan).instructionSeconds;
    double row = predictSpmm(unitRow, profile, s.op, *plan).instructionSeconds;
    rows.push_back({s.measuredSeconds, base, step, row});
  }
  if (rows.empty())
    return Status::error("no edge-parallel sample to fit");

  // Least squares on (measured - predicted) / measured, both constants >= 0:
  // the 2x2 normal equations, or, when they give a negative constant, the
  // better of the two one-constant fits.
  double aa = 0, ab = 0, bb = 0, ay = 0, by = 0;
  for (const Row &r : rows) {
    double a = r.step / r.measured, b = r.row / r.measured;
    double y = (r.measured - r.base) / r.measured;
    aa += a * a;
    ab += a * b;
    bb += b * b;
    ay += a * y;
    by += b * y;
  }
  auto objective = [&](double c1, double c2) {
    double sum = 0;
    for (const Row &r : rows) {
      double e = (r.measured - r.base - c1 * r.step - c2 * r.row) / r.measured;
      sum += e * e;
    }
    return sum;
  };
  double c1 = 0, c2 = 0;
  double det = aa * bb - ab * ab;
  if (det > 0) {
    c1 = (ay * bb - by * ab) / det;
    c2 = (aa * by - ab * ay) / det;
  }
  if (!(det > 0) || c1 < 0 || c2 < 0) {
    double onlyStep = aa > 0 ? std::max(0.0, ay / aa) : 0;
    double onlyRow = bb > 0 ? std::max(0.0, by / bb) : 0;
    if (objective(onlyStep, 0) <= objective(0, onlyRow)) {
      c1 = onlyStep;
      c2 = 0;
    } else {
      c1 = 0;
      c2 = onlyRow;
    }
  }

  FitReport report;
  report.samples = rows.size();
  report.edgeStepCycles = c1;
  report.rowEndCycles = c2;
  double before = 0, after = 0;
  for (const Row &r : rows) {
    double fitted = r.base + c1 * r.step + c2 * r.row;
    double lb = std::log(r.measured / r.base),
           la = std::log(r.measured / fitted);
    before += lb * lb;
    after += la * la;
    report.worstRatioAfter =
        std::max(report.worstRatioAfter, std::exp(std::fabs(la)));
  }
  report.rmsLogBefore = std::sqrt(before / rows.size());
  report.rmsLogAfter = std::sqrt(after / rows.size());
  gpu.edgeStepCycles = c1;
  gpu.rowEndCycles = c2;
  return report;
}

Expected<std::vector<KernelSample>> gnnc::tuning::measureSamples(
    rt::Runtime &runtime, const std::vector<KernelSample> &plan,
    const std::function<void(const std::string &)> &progress) {
  GpuModel unused;
  SampleGraphs graphs(unused);
  std::vector<KernelSample> measured;
  for (const KernelSample &sample : plan) {
    const std::string entry = "calibration_spmm";
    Expected<TunableModule> module =
        TunableModule::parse(sampleModule(sample.op), "calibration.gnn");
    if (!module)
      return module.status();
    Expected<rt::KernelSpec> kernel =
        module->compileKernel(entry, sample.schedule);
    Expected<double> t = kernel
                             ? measureSchedule(runtime, *kernel,
                                               graphs.graphOf(sample.rmatScale))
                             : Expected<double>(kernel.status());
    if (!t) {
      if (progress)
        progress(sampleName(sample) + ": failed: " + t.message());
      continue;
    }
    KernelSample done = sample;
    done.measuredSeconds = *t;
    measured.push_back(done);
    if (progress) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.2f us", *t * 1e6);
      progress(sampleName(sample) + ": " + buf);
    }
  }
  return measured;
}
