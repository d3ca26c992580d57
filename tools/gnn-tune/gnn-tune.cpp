//===- gnn-tune.cpp - Choose schedules for gnn.spmm and gnn.sddmm kernels -===//
//
// gnn-tune KERNEL.gnn [GRAPH | DIR ...] [--rmat S] [--segments SET,...]
//          [-o OUTDIR] [--top-k K] [--db FILE] [--no-measure | --precompile]
//          [--arch sm_XX] [--calibration FILE]
// gnn-tune --calibrate FILE
// gnn-tune --fit SAMPLES --calibrate FILE [--calibration BASE] [--arch sm_XX]
//
// For every gnn.spmm and gnn.sddmm of KERNEL.gnn and every graph: profile
// the graph, rank every legal vertex_parallel schedule and a few
// edge_parallel (gnn.spmm: and neighbor_group) ones with the cost model
// (for every segmented matmul and every --segments set: the pruned
// tile_routed schedules with the segment model, SegmentModel.h),
// measure the best K on the GPU (when there is one and --no-measure is not
// given), print the leaders, write
// OUTDIR/<stem>.<graph>.gnn with the chosen schedules and record them in
// the tuning database. Files in OUTDIR are replaced only if a gnnc tool
// wrote them (a `.gnnc-output` stamp) or with --force. --precompile
// compiles the kernels a measuring run would time into the kernel cache
// instead, without a GPU, so that the run on the GPU spends no time in NVRTC.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Compiler/OutputDirectory.h"
#include "gnnc/Tools/ToolSupport.h"
#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Tuning/Fit.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/Tuning/SegmentModel.h"
#include "gnnc/Tuning/Tuner.h"
#include "gnnc/Tuning/TuningDb.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Readers.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/runtime/Cache.h"
#include "gnnc/runtime/Driver.h"
#include "gnnc/runtime/Runtime.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>

using namespace llvm;
using namespace gnnc;
using namespace gnnc::tuning;

namespace {

cl::OptionCategory category("gnn-tune options");

cl::opt<std::string> kernelFile(cl::Positional, cl::desc("<kernel.gnn>"),
                                cl::cat(category));
cl::list<std::string> graphPaths(cl::Positional,
                                 cl::desc("<graph file or directory>..."),
                                 cl::cat(category));
cl::list<int> rmatScales("rmat",
                         cl::desc("Also tune on an R-MAT graph of this scale "
                                  "(Graph500 parameters, --edge-factor edges "
                                  "per node)"),
                         cl::value_desc("S"), cl::cat(category));
cl::list<std::string> segmentSets(
    "segments",
    cl::desc("Tune the segmented matmuls (gnn.segment_matmul, "
             "gnn.segment_matmul_weight_grad) on these segment sets: names "
             "of <datasets>/segments/*.csv, CSV paths (Start,End per type), "
             "gen<types>x<mean rows> (generated), or 'all'"),
    cl::value_desc("SET,..."), cl::CommaSeparated, cl::cat(category));
cl::opt<std::string>
    datasetsDir("datasets",
                cl::desc("Datasets folder of --segments (default "
                         "$GNNC_DATASETS)"),
                cl::value_desc("dir"), cl::cat(category));
cl::opt<unsigned> edgeFactor("edge-factor",
                             cl::desc("Edges per node of the --rmat graphs "
                                      "(default 16, Graph500's)"),
                             cl::init(16), cl::cat(category));
cl::opt<std::string> outputDir("o",
                               cl::desc("Output directory (default: "
                                        "<stem>-tuned)"),
                               cl::value_desc("dir"), cl::cat(category));
cl::opt<unsigned>
    topK("top-k",
         cl::desc("Schedules measured on the GPU (default 3): the "
                  "best-ranked of each strategy, then the "
                  "next best-ranked"),
         cl::init(3), cl::cat(category));
cl::opt<std::string> dbPath("db",
                            cl::desc("Tuning database (default: $GNNC_TUNE_DB "
                                     "or ~/.cache/gnnc/tuning.db)"),
                            cl::value_desc("file"), cl::cat(category));
cl::opt<bool> noDb("no-db", cl::desc("Do not read or write the database"),
                   cl::cat(category));
cl::opt<bool> noMeasure("no-measure",
                        cl::desc("Choose by the cost model alone"),
                        cl::cat(category));
cl::opt<bool> precompile(
    "precompile",
    cl::desc("Compile the kernels of the schedules a measuring run would "
             "time (--top-k) for --arch into the kernel cache "
             "($GNNC_CACHE_DIR) instead of measuring; needs no GPU"),
    cl::cat(category));
cl::opt<std::string> arch("arch",
                          cl::desc("GPU to model without a GPU (default "
                                   "sm_90; with a GPU, the device's)"),
                          cl::value_desc("sm_XX"), cl::init(""),
                          cl::cat(category));
cl::opt<std::string>
    calibrationFile("calibration",
                    cl::desc("Calibration file overriding the built-in "
                             "GPU constants"),
                    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string>
    calibrateOut("calibrate",
                 cl::desc("Measure the GPU's constants (micro-benchmarks, "
                          "then edge-parallel kernels on R-MAT graphs whose "
                          "times fit two kernel-cost constants), write them "
                          "to this calibration file (the kernel samples to "
                          "FILE.samples) and exit (needs a GPU)"),
                 cl::value_desc("file"), cl::cat(category));
cl::opt<std::string>
    fitSamples("fit",
               cl::desc("With --calibrate FILE: refit the kernel-cost "
                        "constants from these measured R-MAT samples (as "
                        "--calibrate writes them) over --calibration or the "
                        "built-in model; needs no GPU"),
               cl::value_desc("samples"), cl::cat(category));
cl::opt<bool> force("force",
                    cl::desc("Replace files in the output directory even if "
                             "no gnnc tool wrote them"),
                    cl::cat(category));
cl::opt<unsigned> showRows("show", cl::desc("Leaders printed (default 5)"),
                           cl::init(5), cl::cat(category));

int fail(const std::string &message) {
  errs() << "gnn-tune: error: " << message << "\n";
  return 1;
}

std::string seconds(double s) {
  char buf[32];
  if (s >= 1e-3)
    snprintf(buf, sizeof(buf), "%.3f ms", s * 1e3);
  else
    snprintf(buf, sizeof(buf), "%.2f us", s * 1e6);
  return buf;
}

std::string pad(std::string s, size_t n) {
  if (s.size() < n)
    s.append(n - s.size(), ' ');
  return s;
}

/// A tile_routed schedule in the table's words: `tensor_core rows=64
/// stages=2 threads=128`, `simt rows=128`.
std::string segmentShortText(const Schedule &s) {
  std::string text =
      std::string(mathModeName(s.math)) + " rows=" + std::to_string(s.tileRows);
  if (onTensorCores(s.math))
    text += " stages=" + std::to_string(s.stages) +
            " threads=" + std::to_string(s.threadsPerBlock);
  return text;
}

/// A graph to tune on.
struct GraphInput {
  std::string name;
  std::string path; // empty for generated graphs
  int rmatScale = 0;
};

/// The graph files of `path`: itself, or the graph files in a directory.
gnnc::Status collectGraphs(const std::string &path,
                           std::vector<GraphInput> &out) {
  if (!sys::fs::is_directory(path)) {
    if (!sys::fs::exists(path))
      return Status::error(path + ": no such graph file or directory");
    std::string name = sys::path::filename(path).str();
    for (const char *ext :
         {".gz", ".npz", ".mtx", ".txt", ".el", ".edges", ".snap"})
      if (StringRef(name).ends_with(ext))
        name.resize(name.size() - strlen(ext));
    out.push_back({name, path, 0});
    return Status::ok();
  }
  std::error_code ec;
  std::vector<std::string> files;
  for (sys::fs::directory_iterator it(path, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef p = it->path();
    if (p.ends_with(".npz") || p.ends_with(".mtx") || p.ends_with(".mtx.gz"))
      files.push_back(p.str());
  }
  if (ec)
    return Status::error(path + ": cannot list: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const std::string &f : files)
    GNNC_RETURN_IF_ERROR(collectGraphs(f, out));
  return Status::ok();
}

double cpuSeconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  gnnc::tools::initLLVMTool("gnn-tune");
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "gnn-tune: choose schedules for the gnn.spmm and gnn.sddmm kernels of a "
      ".gnn file\n\n"
      "  gnn-tune spmm.gnn cora.npz -o out   writes out/spmm.cora.gnn\n"
      "  gnn-tune spmm.gnn --rmat 18         tunes on an R-MAT graph\n"
      "  gnn-tune --calibrate sm_90.txt      measures this GPU's constants\n"
      "  gnn-tune --fit sm_90.txt.samples --calibrate sm_90.txt\n"
      "                                      refits them without a GPU\n");

  std::string gpuWhy;
  bool haveGpu = rt::gpuAvailable(&gpuWhy);

  if (!fitSamples.empty() && calibrateOut.empty())
    return fail("--fit needs --calibrate FILE, the calibration file to write");
  if (!calibrateOut.empty()) {
    // The model to fit: measured on this GPU, or (with --fit) the named
    // architecture's defaults overridden by --calibration.
    GpuModel model;
    std::vector<KernelSample> samples;
    if (!fitSamples.empty()) {
      std::optional<std::string> base;
      if (!calibrationFile.empty())
        base = calibrationFile.getValue();
      gnnc::Expected<GpuModel> loaded =
          loadGpuModel(arch.empty() ? "sm_90" : arch.getValue(), base);
      if (!loaded)
        return fail(loaded.message());
      model = *loaded;
      std::ifstream in(fitSamples.getValue());
      if (!in)
        return fail(fitSamples + ": cannot read samples file");
      std::string body((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
      gnnc::Expected<std::vector<KernelSample>> parsed =
          parseSamples(body, fitSamples);
      if (!parsed)
        return fail(parsed.message());
      samples = parsed.take();
      model.source = model.source + ", kernel costs refitted from " +
                     sys::path::filename(fitSamples).str();
    } else {
      if (!haveGpu)
        return fail("no GPU: cannot calibrate (" + gpuWhy +
                    "); --fit SAMPLES refits stored samples without one");
      gnnc::Expected<rt::Runtime> runtime = rt::Runtime::create();
      if (!runtime)
        return fail(runtime.message());
      gnnc::Expected<GpuModel> measured = calibrate(*runtime);
      if (!measured)
        return fail("calibration failed: " + measured.message());
      model = *measured;
      std::vector<KernelSample> plan = calibrationPlan();
      outs() << "measuring " << plan.size()
             << " edge-parallel gnn.spmm kernels on R-MAT graphs\n";
      outs().flush();
      gnnc::Expected<std::vector<KernelSample>> done =
          measureSamples(*runtime, plan, [](const std::string &line) {
            outs() << "  " << line << "\n";
            outs().flush();
          });
      if (!done)
        return fail("calibration failed: " + done.message());
      samples = done.take();
      // The samples, so that a later --fit needs no GPU.
      std::string samplesPath = calibrateOut + ".samples";
      std::ofstream out(samplesPath, std::ios::trunc);
      out << formatSamples(samples);
      if (!out.flush())
        return fail(samplesPath + ": cannot write");
      outs() << "wrote " << samplesPath << "\n";
    }
    gnnc::Expected<FitReport> report = fitKernelCosts(model, samples);
    if (!report)
      return fail("fitting the kernel costs failed: " + report.message());
    outs() << report->text() << "\n";
    gnnc::Status s = writeCalibration(model, calibrateOut,
                                      model.source + "\n" + report->text());
    if (!s)
      return fail(s.message());
    outs() << "wrote " << calibrateOut << "\n" << formatCalibration(model);
    return 0;
  }
  if (kernelFile.empty())
    return fail("no kernel file given (gnn-tune KERNEL.gnn GRAPH...)");

  std::vector<GraphInput> inputs;
  for (const std::string &p : graphPaths) {
    gnnc::Status s = collectGraphs(p, inputs);
    if (!s)
      return fail(s.message());
  }
  if (edgeFactor < 1 || edgeFactor > 1024)
    return fail("--edge-factor " + std::to_string(edgeFactor) +
                ": must be 1-1024");
  for (int scale : rmatScales) {
    if (scale < 1 || scale > 26)
      return fail("--rmat " + std::to_string(scale) + ": scale must be 1-26");
    // Graphs of another edge factor are named for it: rmat13e4.
    std::string name = "rmat" + std::to_string(scale);
    if (edgeFactor != 16)
      name += "e" + std::to_string(edgeFactor);
    inputs.push_back({name, "", scale});
  }
  // The segment sets, by name.
  std::vector<std::pair<std::string, std::vector<int64_t>>> segmentInputs;
  {
    std::vector<std::string> names;
    for (const std::string &name : segmentSets) {
      if (name != "all") {
        names.push_back(name);
        continue;
      }
      gnnc::Expected<std::vector<std::string>> all =
          segmentSetNames(datasetsDir);
      if (!all)
        return fail("--segments all: " + all.message());
      names.insert(names.end(), all->begin(), all->end());
    }
    for (const std::string &name : names) {
      gnnc::Expected<std::vector<int64_t>> seg =
          loadSegmentSet(name, datasetsDir, /*seed=*/1);
      if (!seg)
        return fail("--segments: " + seg.message());
      std::string stemName = sys::path::stem(name).str();
      segmentInputs.push_back({stemName, seg.take()});
    }
  }
  if (inputs.empty() && segmentInputs.empty())
    return fail("no graph given (a file, a directory of graphs or --rmat S) "
                "and no --segments");

  gnnc::Expected<std::string> read = gnnc::readGnnFile(kernelFile);
  if (!read)
    return fail(read.message());
  gnnc::Expected<TunableModule> module =
      TunableModule::parse(read.take(), kernelFile);
  if (!module)
    return fail(module.message());
  bool anyTunable = false;
  for (const TunableSite &site : module->sites()) {
    if (!site.tunable)
      outs() << "skip   " << site.entryName << ": " << site.note << "\n";
    anyTunable |= site.tunable;
  }
  if (!anyTunable)
    return fail(kernelFile + ": no tunable gnn.spmm or gnn.sddmm kernel "
                             "(nor a segmented matmul)");

  if (precompile && noMeasure)
    return fail("--precompile and --no-measure exclude each other");
  // The GPU model: the device's when measuring, else the named arch.
  bool measure = haveGpu && !noMeasure && !precompile && topK > 0;
  std::optional<rt::Runtime> runtime;
  GpuModel gpu;
  std::optional<std::string> calibration;
  if (!calibrationFile.empty())
    calibration = calibrationFile.getValue();
  if (measure) {
    gnnc::Expected<rt::Runtime> rtm = rt::Runtime::create();
    if (!rtm)
      return fail(rtm.message());
    runtime.emplace(rtm.take());
    gpu = fromDevice(runtime->device());
    if (calibration) {
      std::ifstream in(*calibration);
      std::string body((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
      gnnc::Expected<GpuModel> m = parseCalibration(body, *calibration, gpu);
      if (!in || !m)
        return fail(!in ? *calibration + ": cannot read" : m.message());
      gpu = *m;
    }
  } else {
    if (arch.empty())
      outs() << "arch   no --arch given and no GPU measured: assuming sm_90\n";
    gnnc::Expected<GpuModel> m =
        loadGpuModel(arch.empty() ? "sm_90" : arch.getValue(), calibration);
    if (!m)
      return fail(m.message());
    gpu = *m;
  }
  std::string reason;
  if (!measure)
    reason = precompile ? "chose by the cost model alone (--precompile)"
             : !haveGpu
                 ? "no GPU: chose by the cost model alone (" + gpuWhy + ")"
                 : "chose by the cost model alone (--no-measure)";
  rt::KernelCache cache("");
  if (precompile && !cache.enabled())
    return fail("--precompile: the kernel cache is off (GNNC_CACHE_DIR=off)");
  outs() << "gpu    " << gpu.arch << ": " << gpu.smCount << " SMs, "
         << static_cast<int64_t>(gpu.l2Bytes / (1024 * 1024)) << " MiB L2, "
         << formatv("{0:f0}", gpu.dramBytesPerSecond / 1e9).str()
         << " GB/s, load latency " << seconds(gpu.loadLatencySeconds) << " ["
         << gpu.source << "]\n";
  if (!measure)
    outs() << reason << "\n";

  std::optional<TuningDb> db;
  if (!noDb) {
    gnnc::Expected<TuningDb> loaded =
        TuningDb::load(dbPath.empty() ? defaultDatabasePath() : dbPath);
    if (!loaded)
      return fail(loaded.message());
    for (const std::string &w : loaded->warnings())
      errs() << "gnn-tune: warning: " << w << "\n";
    db.emplace(loaded.take());
  }

  std::string stem = sys::path::stem(kernelFile).str();
  std::string dir = outputDir.empty() ? stem + "-tuned" : outputDir.getValue();
  auto outDir = gnnc::OutputDirectory::open(dir, "gnn-tune", force);
  if (!outDir)
    return fail(outDir.message());

  int exitCode = 0;
  for (const GraphInput &input : inputs) {
    auto loadStart = std::chrono::steady_clock::now();
    graph::CsrGraph g;
    if (input.rmatScale) {
      g = graph::generateRmat(input.rmatScale, edgeFactor, /*seed=*/1);
    } else {
      gnnc::Expected<graph::CsrGraph> loaded = graph::readGraph(input.path);
      if (!loaded)
        return fail(loaded.message());
      g = loaded.take();
    }
    double loadSeconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - loadStart)
                             .count();
    outs() << "graph  " << input.name << ": " << g.numRows << " rows, "
           << g.nnz() << " non-zeros (" << seconds(loadSeconds) << " to "
           << (input.rmatScale ? "generate" : "read") << ")\n";

    TuningOptions tuning;
    tuning.gpu = gpu;
    tuning.retuneWritten = true;
    tuning.database = db ? &*db : nullptr;
    tuning.topK = (measure || precompile) ? topK : 0;
    tuning.visitMeasures = measure;
    size_t compiled = 0, cached = 0;
    auto compileStart = std::chrono::steady_clock::now();
    if (measure) {
      // The graph and random inputs, uploaded once for all candidates.
      MeasureOptions how;
      how.inputs = makeMeasureInputs(g);
      tuning.visit = [&, how](const TunableSite &,
                              const rt::KernelSpec &kernel) {
        return measureFor(*runtime, kernel, g, how);
      };
    }
    if (precompile)
      tuning.visit =
          [&](const TunableSite &,
              const rt::KernelSpec &kernel) -> gnnc::Expected<double> {
        bool hit = false;
        gnnc::Status s = rt::compileAhead(cache, kernel, gpu.arch, &hit);
        if (!s) {
          exitCode = 1;
          return s;
        }
        ++(hit ? cached : compiled);
        return 0.0;
      };
    tuning.onSite = [&](const SiteTuning &t) {
      const TunableSite &site = *t.site;
      const std::vector<Candidate> &ranked = t.ranked;
      const graph::GraphProfile &profile = t.profile;
      if (precompile) {
        outs() << "cache  " << site.entryName << ": compiled " << compiled
               << " kernels for " << gpu.arch << " (" << cached
               << " already cached) into " << cache.directory() << " in "
               << seconds(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - compileStart)
                              .count())
               << "\n";
        compiled = cached = 0;
      }
      const Candidate &best = ranked[t.choiceIndex];
      outs() << "kernel " << site.entryName << " ("
             << elementTypeName(site.op.type) << ", width " << site.op.width
             << (site.op.edgeValues ? ", edge values" : "")
             << opDescription(site.op) << ") on " << input.name << ": "
             << ranked.size() << " schedules; max degree " << profile.maxDegree
             << ", gather hit rate "
             << static_cast<int>(profile.reuse.hitRate * 100 + 0.5) << "%\n";
      outs() << "  " << pad("#", 4) << pad("schedule", 32)
             << pad("predicted", 12) << pad("bandwidth", 12)
             << pad("latency", 12) << pad("waves", 12) << pad("issue", 12)
             << pad("measured", 12) << "bound\n";
      // The leaders, and every measured schedule below them.
      size_t rows = std::min<size_t>(showRows, ranked.size());
      for (size_t i = 0; i < ranked.size(); ++i) {
        const Candidate &c = ranked[i];
        if (i >= rows && !c.measuredSeconds && c.note.empty())
          continue;
        const Prediction &p = c.prediction;
        outs() << "  " << pad(std::to_string(i + 1), 4)
               << pad(shortText(c.schedule), 32) << pad(seconds(p.seconds), 12)
               << pad(seconds(p.bandwidthSeconds), 12)
               << pad(seconds(p.latencySeconds), 12)
               << pad(seconds(p.wavesSeconds), 12)
               << pad(seconds(p.issueSeconds), 12)
               << pad(c.measuredSeconds ? seconds(*c.measuredSeconds)
                                        : (c.note.empty() ? "-" : "failed"),
                      12)
               << p.bound << "\n";
        if (!c.note.empty())
          outs() << "      (" << c.note << ")\n";
      }
      outs() << "choice " << site.entryName << ": " << shortText(best.schedule)
             << "; "
             << (best.measuredSeconds
                     ? "fastest measured (" + seconds(*best.measuredSeconds) +
                           ")"
                     : (measure ? "no measurement succeeded: chose by the "
                                  "cost model alone"
                                : reason))
             << "; model: " << best.prediction.why << "\n";
      outs() << "time   model " << formatv("{0:f3}", t.cpuSeconds).str()
             << " s CPU (profile "
             << formatv("{0:f3}", t.cpuProfileSeconds).str() << " s), "
             << formatv("{0:f3}", t.wallSeconds).str() << " s wall\n";
      // Each kernel's report reaches the terminal (or a log) before the next
      // kernel's measurements start, so a run stopped midway keeps it.
      outs().flush();

      if (db) {
        TuningEntry entry;
        entry.key = tuningKey(site, profile, gpu);
        if (t.previous)
          outs() << "db     previous choice " << shortText(t.previous->schedule)
                 << "\n";
        entry.schedule = t.choice;
        entry.predictedSeconds = best.prediction.seconds;
        entry.measuredSeconds = best.measuredSeconds;
        gnnc::Status s = db->store(entry);
        if (!s) {
          errs() << "gnn-tune: warning: " << s.message() << "\n";
          exitCode = 1;
        }
      }
      compileStart = std::chrono::steady_clock::now();
    };
    std::vector<SiteTuning> tuned = tuneModule(*module, g, tuning);
    for (const TunableSite &site : module->sites())
      if (site.tunable && !isSegmentMatmulKind(site.op.kind) &&
          std::none_of(tuned.begin(), tuned.end(),
                       [&](const SiteTuning &t) { return t.site == &site; })) {
        errs() << "gnn-tune: warning: " << site.entryName
               << ": no legal schedule\n";
        exitCode = 1;
      }

    std::string tunedText = module->print(choices(tuned));
    std::string name = stem + "." + input.name + ".gnn";
    std::string header = "// Tuned by gnn-tune for graph " + input.name +
                         " on " + gpu.arch + " from " +
                         sys::path::filename(kernelFile).str() + ".\n";
    gnnc::Status s = outDir->write(name, header + tunedText);
    if (!s)
      return fail(s.message());
    outs() << "wrote  " << dir << "/" << name << "\n";
  }
  for (const auto &[setName, seg] : segmentInputs) {
    gnnc::Expected<SegmentStats> stats = segmentStats(seg);
    if (!stats)
      return fail(setName + ": " + stats.message());
    outs() << "segments " << setName << ": " << stats->types << " types ("
           << stats->emptyTypes << " empty), " << stats->rows << " rows, mean "
           << formatv("{0:f1}", stats->meanRows).str() << " per type, spread "
           << formatv("{0:f2}", stats->spread).str() << ", longest "
           << stats->maxRows << "\n";
    TuningOptions tuning;
    tuning.gpu = gpu;
    tuning.retuneWritten = true;
    tuning.database = db ? &*db : nullptr;
    tuning.topK = (measure || precompile) ? topK : 0;
    tuning.visitMeasures = measure;
    if (measure)
      tuning.visit = [&](const TunableSite &, const rt::KernelSpec &kernel) {
        return measureSegmentSchedule(*runtime, kernel, seg);
      };
    if (precompile)
      tuning.visit =
          [&](const TunableSite &,
              const rt::KernelSpec &kernel) -> gnnc::Expected<double> {
        gnnc::Status s = rt::compileAhead(cache, kernel, gpu.arch);
        if (!s) {
          exitCode = 1;
          return s;
        }
        return 0.0;
      };
    tuning.onSite = [&](const SiteTuning &t) {
      const TunableSite &site = *t.site;
      const MathMode math = segmentTuningMath(site.written);
      outs() << "kernel " << site.entryName << " ("
             << elementTypeName(site.op.type) << ", K " << site.op.inputWidth
             << ", M " << site.op.width
             << (site.op.transposeWeights ? ", transposed weights" : "")
             << ") on " << setName << ": " << t.ranked.size()
             << " schedules after pruning\n";
      outs() << "  " << pad("#", 4) << pad("schedule", 44)
             << pad("predicted", 12) << pad("bandwidth", 12) << pad("waves", 12)
             << pad("compute", 12) << pad("measured", 12) << "bound\n";
      size_t rows = std::min<size_t>(showRows, t.ranked.size());
      for (size_t i = 0; i < t.ranked.size(); ++i) {
        const Candidate &c = t.ranked[i];
        if (i >= rows && !c.measuredSeconds && c.note.empty())
          continue;
        const Prediction &p = c.prediction;
        outs() << "  " << pad(std::to_string(i + 1), 4)
               << pad(segmentShortText(c.schedule), 44)
               << pad(seconds(p.seconds), 12)
               << pad(seconds(p.bandwidthSeconds), 12)
               << pad(seconds(p.wavesSeconds), 12)
               << pad(seconds(p.issueSeconds), 12)
               << pad(c.measuredSeconds ? seconds(*c.measuredSeconds)
                                        : (c.note.empty() ? "-" : "failed"),
                      12)
               << p.bound << "\n";
        if (!c.note.empty())
          outs() << "      (" << c.note << ")\n";
      }
      std::optional<double> measured, predicted;
      if (!t.ranked.empty()) {
        const Candidate &best = t.ranked[t.choiceIndex];
        measured = best.measuredSeconds;
        predicted = best.prediction.seconds;
        outs() << "choice " << site.entryName << ": " << t.choice.str() << "; "
               << (measured  ? "fastest measured (" + seconds(*measured) + ")"
                   : measure ? "no measurement succeeded: chose by the cost "
                               "model alone"
                             : reason)
               << "; model: " << best.prediction.why << "\n";
      } else {
        outs() << "choice " << site.entryName << ": " << t.choice.str()
               << "; from the tuning database\n";
      }
      outs().flush();
      if (db && predicted) {
        TuningEntry entry;
        entry.key = segmentTuningKey(site.op, *t.segments, gpu, math);
        if (t.previous)
          outs() << "db     previous choice " << t.previous->schedule.str()
                 << "\n";
        entry.schedule = t.choice;
        entry.predictedSeconds = *predicted;
        entry.measuredSeconds = measured;
        gnnc::Status s = db->store(entry);
        if (!s) {
          errs() << "gnn-tune: warning: " << s.message() << "\n";
          exitCode = 1;
        }
      }
    };
    gnnc::Status segmentError = gnnc::Status::ok();
    std::vector<SiteTuning> tuned =
        tuneSegmentSites(*module, seg, tuning, &segmentError);
    if (!segmentError)
      return fail(setName + ": " + segmentError.message());
    for (const TunableSite &site : module->sites())
      if (site.tunable && isSegmentMatmulKind(site.op.kind) &&
          std::none_of(tuned.begin(), tuned.end(),
                       [&](const SiteTuning &t) { return t.site == &site; })) {
        errs() << "gnn-tune: warning: " << site.entryName
               << ": no legal schedule\n";
        exitCode = 1;
      }
    std::string tunedText = module->print(choices(tuned));
    std::string name = stem + "." + setName + ".gnn";
    std::string header = "// Tuned by gnn-tune for segment set " + setName +
                         " on " + gpu.arch + " from " +
                         sys::path::filename(kernelFile).str() + ".\n";
    gnnc::Status s = outDir->write(name, header + tunedText);
    if (!s)
      return fail(s.message());
    outs() << "wrote  " << dir << "/" << name << "\n";
  }
  if (gnnc::Status s = outDir->finish(); !s)
    return fail(s.message());
  return exitCode;
}
