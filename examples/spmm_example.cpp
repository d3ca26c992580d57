//===- spmm_example.cpp - Compile, run and check a gnn.spmm kernel --------===//
//
// The whole path through the C++ API:
//   1. load a graph (a generated R-MAT graph by default, or --graph FILE:
//      .mtx, .mtx.gz, .npz or a SNAP edge list),
//   2. compile a kernel written in the gnn dialect (a string here, or a
//      .gnn file with --gnn) for that graph: a gnn.spmm without a schedule
//      gets the one the tuning database or the cost model picks for it,
//   3. on a GPU: JIT the kernel with NVRTC (cached on disk), run it, check
//      every output against the CPU reference and time it; when cuSPARSE is
//      at hand (a build with gnn-bench's library), time cuSPARSE's SpMM
//      (every CSR algorithm) and the kernel again the same way, on the same
//      inputs, with the L2 flushed before each run, and print the ratio;
//      without a GPU: compile to a cubin for sm_90 and stop there.
//   4. with --renumber ORDER: renumber the graph's nodes (degree, rcm or
//      community), check the kernel through the renumbering with inputs and
//      outputs in the graph's own order (gnnc/ops/Renumber.h), and compare
//      the kernel's time on the renumbered graph with its time on the
//      original: the speedup, and after how many calls the renumbering's
//      host time is paid back.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Tuning/CostModel.h"
#include "gnnc/Tuning/TunedCompile.h"
#include "gnnc/graph/Readers.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/ops/Renumber.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/reference/Spmm.h"
#include "gnnc/runtime/Nvrtc.h"

#ifdef GNNC_EXAMPLE_CUSPARSE
#include "gnnc/Bench/Cusparse.h"
#include "gnnc/Bench/KernelRuns.h"
#include "gnnc/Bench/Problems.h"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

using namespace gnnc;

namespace {

// A kernel in the gnn dialect: GCN-style sum aggregation of f16 features of
// width 64 with f16 edge values, 8 halves per load, 8 threads per row.
const char *kDefaultKernel = R"(
gnn.module @example {
  gnn.kernel @aggregate(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf16>,
                        %w: tensor<?xf16>) -> tensor<?x64xf16> {
    %y = gnn.spmm %g, %x values(%w : tensor<?xf16>)
           {schedule = #gnn.schedule<vector_width = 8, dim_workers = 8>}
           : !gnn.graph<csr, i64, i32>, tensor<?x64xf16> -> tensor<?x64xf16>
    gnn.return %y : tensor<?x64xf16>
  }
}
)";

void usage() {
  std::printf(
      "usage: gnnc-spmm-example [--gnn FILE.gnn] [--kernel NAME]\n"
      "                         [--graph FILE | --rmat SCALE] [--seed N]\n"
      "                         [--renumber degree|rcm|community]\n"
      "  --gnn FILE     kernel source (default: a built-in f16 kernel)\n"
      "  --kernel NAME  kernel to run when the file holds several\n"
      "  --graph FILE   .mtx, .mtx.gz, .npz (CSR) or SNAP edge list\n"
      "  --rmat SCALE   generated R-MAT graph, 2^SCALE nodes, 16 edges per "
      "node\n"
      "                 (Graph500 parameters; default 18)\n"
      "  --seed N       seed for the graph and the inputs (default 1)\n"
      "  --renumber ORDER\n"
      "                 also run the kernel on the graph renumbered in ORDER\n"
      "                 (data in the graph's own order) and compare times\n");
}

int fail(const std::string &message) {
  std::fprintf(stderr, "gnnc-spmm-example: error: %s\n", message.c_str());
  return 1;
}

#ifdef GNNC_EXAMPLE_CUSPARSE
/// cuSPARSE's SpMM (its fastest CSR algorithm) and the kernel, timed the
/// same way on the same inputs: median of 20 runs, the L2 flushed before
/// each (gnn-bench's harness). A failure here is reported, not fatal.
void compareWithCusparse(const graph::CsrGraph &g, const rt::KernelSpec &spec,
                         const ops::SpmmSignature &sig, uint64_t seed) {
  auto skip = [](const std::string &why) {
    std::printf("cuSPARSE skipped: %s\n", why.c_str());
  };
  if (sig.rowStride != sig.featureWidth) {
    skip("the kernel has padded rows; cuSPARSE's X and Y are dense");
    return;
  }
  bench::TimingOptions timing;
  auto harness = bench::Bench::create(timing);
  if (!harness)
    return skip(harness.message());
  auto libraries = bench::CudaLibraries::create(*harness);
  if (!libraries)
    return skip(libraries.message());
  auto graphs = bench::uploadGraphs(g, sig.offsets64);
  if (!graphs)
    return skip(graphs.message());
  auto problem = bench::makeSpmmProblem(*graphs, sig.type, sig.featureWidth,
                                        sig.edgeValues, seed);
  if (!problem)
    return skip(problem.message());
  bench::KernelResult gnnc = bench::runGnncKernel(
      *harness, spec, *problem, bench::CheckMode::Shared, "gnnc");
  const double gnncMs = bench::passedMedianMs(gnnc);
  if (gnncMs <= 0)
    return skip("gnnc's kernel: " + gnnc.status + ": " + gnnc.report);
  const std::vector<bench::LibraryResult> results =
      libraries->spmm(*harness, *problem);
  const bench::LibraryResult *best = nullptr;
  for (const bench::LibraryResult &r : results)
    if (r.timing && (!best || r.timing->medianMs < best->timing->medianMs))
      best = &r;
  if (!best)
    return skip("no cuSPARSE algorithm ran on this problem");
  std::printf("cuSPARSE %s %s (%s): median %.3f ms; gnnc %.3f ms, %.2fx "
              "(both with the L2 flushed before each run)\n",
              libraries->cusparseVersion().c_str(), best->algorithm.c_str(),
              best->types.c_str(), best->timing->medianMs, gnncMs,
              best->timing->medianMs / gnncMs);
}
#endif

} // namespace

int main(int argc, char **argv) {
  std::string gnnFile, kernelName, graphFile, renumberOrder;
  int scale = 18;
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      return i + 1 < argc ? argv[++i] : nullptr;
    };
    const char *v = nullptr;
    if (arg == "--help" || arg == "-h") {
      usage();
      return 0;
    }
    if ((arg != "--gnn" && arg != "--kernel" && arg != "--graph" &&
         arg != "--rmat" && arg != "--seed" && arg != "--renumber") ||
        !(v = value())) {
      usage();
      return fail("bad argument '" + arg + "'");
    }
    if (arg == "--gnn")
      gnnFile = v;
    else if (arg == "--kernel")
      kernelName = v;
    else if (arg == "--graph")
      graphFile = v;
    else if (arg == "--rmat")
      scale = std::atoi(v);
    else if (arg == "--renumber")
      renumberOrder = v;
    else
      seed = std::strtoull(v, nullptr, 10);
  }
  if (scale < 1 || scale > 26)
    return fail("--rmat: scale must be from 1 to 26");
  if (!renumberOrder.empty()) {
    auto order = ops::parseNodeOrder(renumberOrder);
    if (!order)
      return fail("--renumber: " + order.message());
  }

  // 1. Load or generate the graph.
  auto start = std::chrono::steady_clock::now();
  graph::CsrGraph g;
  if (!graphFile.empty()) {
    auto loaded = graph::readGraph(graphFile);
    if (!loaded)
      return fail(loaded.message());
    g = loaded.take();
  } else {
    g = graph::generateRmat(scale, 16, seed);
    g.name = "rmat" + std::to_string(scale);
  }
  double graphMs = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  std::printf("graph    %s: %lld rows, %lld non-zeros (%.0f ms)\n",
              g.name.c_str(), (long long)g.numRows, (long long)g.nnz(),
              graphMs);

  // Renumbering happens on the host, once per graph.
  std::optional<ops::RenumberedGraph> renumbered;
  if (!renumberOrder.empty()) {
    auto rg = ops::renumberGraph(g, renumberOrder);
    if (!rg)
      return fail(rg.message());
    renumbered = rg.take();
    std::printf("renumber %s order: %.3f s on the host (order %.3f s, "
                "relabelling %.3f s)\n",
                renumbered->orderName.c_str(), renumbered->seconds(),
                renumbered->orderSeconds, renumbered->applySeconds);
  }

  // 2. Compile for this graph: kernels that leave their gnn.spmm
  // unscheduled get a schedule chosen for the graph.
  std::string text = kDefaultKernel, bufferName = "<built-in>";
  if (!gnnFile.empty()) {
    auto read = readGnnFile(gnnFile);
    if (!read)
      return fail(read.message());
    text = read.take();
    bufferName = gnnFile;
  }
  // Without a GPU the schedules are chosen for an H100/H200 (sm_90).
  tuning::TunedCompileOptions tuneOptions;
  if (!rt::gpuAvailable())
    tuneOptions.arch = "sm_90";
  tuning::TuningChoices choices;
  auto compiled =
      tuning::compileForGraph(text, bufferName, g, tuneOptions, &choices);
  if (!compiled)
    return fail(compiled.message());
  if (kernelName.empty())
    kernelName = compiled->kernels.front().name;
  auto spec = findKernel(*compiled, kernelName);
  if (!spec)
    return fail(spec.message());
  auto chosen = choices.schedules.find(spec->name);
  std::printf("kernel   %s  %s\n", spec->name.c_str(),
              spec->schedule.str().c_str());
  if (chosen != choices.schedules.end())
    std::printf("tuned    %s (%s, for %s)\n",
                tuning::shortText(chosen->second.schedule).c_str(),
                chosen->second.source.c_str(), choices.arch.c_str());

  // 3a. Without a GPU, compile for sm_90 and stop.
  std::string why;
  if (!rt::gpuAvailable(&why)) {
    rt::CompileOptions options;
    options.arch = "sm_90";
    auto cubin = rt::compileCuda(spec->source, "example.cu", options);
    if (!cubin)
      return fail(cubin.message());
    std::printf("compiled %zu-byte cubin for sm_90 with NVRTC %s\n",
                cubin->binary.size(), rt::nvrtcVersionString().c_str());
    std::printf("no GPU (%s): skipped the run\n", why.c_str());
    return 0;
  }

  // 3b. On a GPU: JIT, run, check, time.
  auto runtime = rt::Runtime::create();
  if (!runtime)
    return fail(runtime.message());
  rt::LoadStats stats;
  auto kernel = runtime->load(*spec, &stats);
  if (!kernel)
    return fail(kernel.message());
  std::printf("device   %s (%s); kernel ready in %.1f ms (%s)\n",
              runtime->device().name().c_str(),
              runtime->device().archString().c_str(), stats.totalMs,
              stats.cacheHit ? "from the cache" : "NVRTC");

  auto check = ops::checkSpmm(*runtime, *kernel, g, seed);
  if (!check)
    return fail(check.message());
  std::printf("check    %s\n", check->report.c_str());
  if (!check->ok)
    return 1;

  // Timing: median of 50 launches after 5 warm-up runs.
  auto sig = ops::spmmSignature(*spec);
  auto dg = ops::uploadGraph(g, sig->offsets64, sig->indices64);
  // Rows of x and y are rowStride elements apart (featureWidth unless
  // the kernel has padded rows).
  auto x = ops::uploadTensor(
      ref::randomFeatures(g.numCols * sig->rowStride, seed), sig->type);
  auto w = ops::uploadTensor(
      ref::randomFeatures(std::max<int64_t>(g.nnz(), 1), seed + 1), sig->type);
  auto y = rt::DeviceBuffer::allocate(g.numRows * sig->rowStride *
                                      elementSize(sig->type));
  auto timer = rt::EventTimer::create();
  for (auto *s :
       {&dg.status(), &x.status(), &w.status(), &y.status(), &timer.status()})
    if (!s->isOk())
      return fail(s->message());
  // Times of 50 launches of `run` after 5 warm-up runs, sorted.
  auto timeRuns =
      [&](const std::function<Status()> &run) -> Expected<std::vector<float>> {
    std::vector<float> times;
    for (int i = 0; i < 55; ++i) {
      Status st = timer->start();
      if (st)
        st = run();
      if (st)
        st = timer->stop();
      if (!st)
        return st;
      auto ms = timer->elapsedMs();
      if (!ms)
        return ms.status();
      if (i >= 5)
        times.push_back(*ms);
    }
    std::sort(times.begin(), times.end());
    return times;
  };
  auto timed = timeRuns([&] {
    return ops::launchSpmm(*runtime, *kernel, *dg, *x,
                           sig->edgeValues ? &*w : nullptr, *y, false);
  });
  if (!timed)
    return fail(timed.message());
  const std::vector<float> &times = *timed;
  double median = times[times.size() / 2];
  double bytes =
      double(g.numRows + 1) * (sig->offsets64 ? 8 : 4) +
      double(g.nnz()) * ((sig->indices64 ? 8 : 4) +
                         (sig->edgeValues ? elementSize(sig->type) : 0)) +
      double(g.numCols + g.numRows) * sig->featureWidth *
          elementSize(sig->type);
  std::printf("time     median %.3f ms (min %.3f, max %.3f) over %zu runs; "
              "%.0f GB/s of compulsory traffic\n",
              median, times.front(), times.back(), times.size(),
              bytes / median / 1e6);
#ifdef GNNC_EXAMPLE_CUSPARSE
  compareWithCusparse(g, *spec, *sig, seed);
#endif
  if (!renumbered)
    return 0;

  // 4. The renumbered graph: checked with data in the graph's own order,
  // then timed in the internal order (no moves) and with the moves.
  auto userCheck =
      ops::checkSpmmInUserOrder(*runtime, *kernel, g, *renumbered, seed);
  if (!userCheck)
    return fail(userCheck.message());
  std::printf("check    %s\n", userCheck->report.c_str());
  if (!userCheck->ok)
    return 1;
  auto rdg = ops::uploadRenumberedGraph(*runtime, *renumbered, *sig);
  if (!rdg)
    return fail(rdg.message());
  // Any features serve for timing; the internal ones come from x.
  auto xInternal = rt::DeviceBuffer::allocate(x->size());
  auto yUser = rt::DeviceBuffer::allocate(y->size());
  for (auto *s : {&xInternal.status(), &yUser.status()})
    if (!s->isOk())
      return fail(s->message());
  const size_t rowBytes = sig->rowStride * elementSize(sig->type);
  if (Status st = rdg->rowsToInternal(*runtime, *x, *xInternal, rowBytes); !st)
    return fail(st.message());
  auto wInternal = rt::DeviceBuffer::allocate(w->size());
  if (!wInternal)
    return fail(wInternal.message());
  if (sig->edgeValues)
    if (Status st = rdg->edgeValuesToInternal(*runtime, *w, *wInternal,
                                              elementSize(sig->type));
        !st)
      return fail(st.message());
  auto colNorm = rdg->columnNorms.find(sig->colNormExponent);
  auto internalTimes = timeRuns([&] {
    return ops::launchSpmm(*runtime, *kernel, rdg->graph, *xInternal,
                           sig->edgeValues ? &*wInternal : nullptr, *y, false,
                           sig->needsColumnNorm() ? &colNorm->second : nullptr);
  });
  if (!internalTimes)
    return fail(internalTimes.message());
  auto userTimes = timeRuns([&] {
    return ops::launchSpmmInUserOrder(*runtime, *kernel, *rdg, *x,
                                      sig->edgeValues ? &*w : nullptr, *yUser,
                                      false);
  });
  if (!userTimes)
    return fail(userTimes.message());
  double internalMedian = (*internalTimes)[internalTimes->size() / 2];
  double userMedian = (*userTimes)[userTimes->size() / 2];
  std::printf("time     %s order: median %.3f ms in the internal order (no "
              "moves), %.3f ms in the graph's own order (moving x, y%s)\n",
              renumbered->orderName.c_str(), internalMedian, userMedian,
              sig->edgeValues ? " and the edge values" : "");
  // Break-even: the renumbering's host time over the time it saves per
  // call (in the internal order).
  double savedMs = median - internalMedian;
  std::printf("speedup  %.2fx over the original graph (%.3f ms -> %.3f ms)\n",
              median / internalMedian, median, internalMedian);
  if (savedMs > 0)
    std::printf("break-even after %.0f calls (renumbering %.3f s / %.4f ms "
                "saved per call)\n",
                std::ceil(renumbered->seconds() * 1e3 / savedMs),
                renumbered->seconds(), savedMs);
  else
    std::printf("break-even never: the renumbered graph saves no time per "
                "call\n");
  return 0;
}
