//===- SpmmGpuTest.cpp - Generated SpMM kernels on a GPU ------------------===//
//
// Compiles the whole gnn.spmm (sum, mean, degree scaling), gnn.sddmm and
// gnn.edge_softmax variant space (types x widths or heads x edge values or
// leaky ReLU x schedules x offset widths), runs every kernel on
// real and adversarial graphs with fresh random inputs and NaN-poisoned
// outputs, and compares each element with the double-precision CPU reference.
//
// Skips, saying why, when no GPU is present or a dataset is missing.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"
#include "SpmmVariants.h"
#include "TestGraphs.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/graph/Readers.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/ops/EdgeSoftmax.h"
#include "gnnc/ops/Sddmm.h"
#include "gnnc/ops/Spmm.h"

#include <gtest/gtest.h>

#include <functional>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>

using namespace gnnc;

namespace {

std::string datasetsDir() {
  if (const char *dir = std::getenv("GNNC_DATASETS"))
    return dir;
  return std::string(GNNC_SOURCE_DIR) + "/../shared/datasets";
}

/// Kernels compiled and loaded once for the whole suite.
using Suite = test::GpuKernels;

Suite &suite() {
  static Suite *s = [] {
    auto *s = new Suite;
    if (!test::openGpuRuntime(*s))
      return s;
    // The variants compile as several translation units, through NVRTC in
    // parallel (into the kernel cache), then load one by one.
    std::vector<test::SpmmVariant> variants = test::allVariants();
    // GNNC_VARIANT_FILTER=a,b keeps the kernels whose names contain a or b
    // (to check a few schedules quickly).
    if (const char *filter = std::getenv("GNNC_VARIANT_FILTER")) {
      std::vector<std::string> parts;
      std::stringstream list(filter);
      for (std::string part; std::getline(list, part, ',');)
        if (!part.empty())
          parts.push_back(part);
      std::vector<test::SpmmVariant> kept;
      for (const test::SpmmVariant &v : variants)
        for (const std::string &part : parts)
          if (v.kernelName().find(part) != std::string::npos) {
            kept.push_back(v);
            break;
          }
      std::printf("[ gpu      ] GNNC_VARIANT_FILTER=%s: %zu of %zu kernels\n",
                  filter, kept.size(), variants.size());
      variants = std::move(kept);
    }
    const size_t perUnit = 64;
    std::vector<CompiledModule> units;
    for (size_t first = 0; first < variants.size(); first += perUnit) {
      std::vector<test::SpmmVariant> part(
          variants.begin() + first,
          variants.begin() + std::min(variants.size(), first + perUnit));
      auto compiled = compileGnn(test::spmmModuleText(part), "gpu.gnn");
      if (!compiled) {
        s->error = compiled.message();
        return s;
      }
      units.push_back(compiled.take());
    }
    rt::Runtime &rtm = *s->runtime;
    if (rtm.cache().enabled()) {
      std::vector<std::future<Status>> warm;
      for (const CompiledModule &unit : units)
        warm.push_back(std::async(std::launch::async, [&rtm, &unit] {
          auto compiled = rtm.cache().getOrCompile(
              unit.kernels.front().source, "gnnc.cu", rtm.compileOptions());
          return compiled ? Status::ok() : compiled.status();
        }));
      for (auto &w : warm)
        if (Status st = w.get(); !st && s->error.empty())
          s->error = st.message();
      if (!s->error.empty())
        return s;
    }
    for (const CompiledModule &unit : units)
      for (const rt::KernelSpec &spec : unit.kernels) {
        auto loaded = rtm.load(spec);
        if (!loaded) {
          s->error = loaded.message();
          return s;
        }
        s->kernels.push_back(loaded.take());
      }
    return s;
  }();
  return *s;
}

/// Runs every kernel on `g` and expects each to match the reference.
void checkAllKernels(const graph::CsrGraph &g, uint64_t seed) {
  Suite &s = suite();
  if (!s.skipReason.empty())
    GTEST_SKIP() << s.skipReason;
  ASSERT_TRUE(s.error.empty()) << s.error;
  // On graphs of over 500,000 non-zeros, only the default and the
  // 64-edge edge-parallel schedules and GAT-sized add-form SDDMM (at most 16
  // heads) run: the reference check of the full space there takes minutes of
  // CPU time and adds no coverage the smaller graphs lack.
  const bool large = g.nnz() > 500000;
  int passed = 0, checked = 0;
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    const rt::LoadedKernel &kernel = s.kernels[i];
    if (large) {
      const OpDesc &op = *kernel.spec.op;
      const std::string &name = kernel.spec.name;
      bool scalar = name.find("_scalar") != std::string::npos ||
                    name.find("_ep8") != std::string::npos ||
                    name.find("_ng3") != std::string::npos;
      bool wideAdd = op.kind == OpKind::Sddmm && op.form == SddmmForm::Add &&
                     op.width > 16;
      if (scalar || wideAdd)
        continue;
    }
    ++checked;
    const OpKind op = kernel.spec.op->kind;
    Expected<ops::KernelCheck> check =
        Status::error(std::string("no check for ") + opKindName(op));
    if (op == OpKind::Spmm)
      check = ops::checkSpmm(*s.runtime, kernel, g, seed + i);
    else if (op == OpKind::Sddmm)
      check = ops::checkSddmm(*s.runtime, kernel, g, seed + i);
    else if (op == OpKind::EdgeSoftmax)
      check = ops::checkEdgeSoftmax(*s.runtime, kernel, g, seed + i);
    ASSERT_TRUE(check) << kernel.spec.name << ": " << check.message();
    EXPECT_TRUE(check->ok) << check->report;
    passed += check->ok;
  }
  std::printf("[ gpu      ] %s: %d/%d kernels match the reference on %s\n",
              g.name.c_str(), passed, checked,
              s.runtime->device().name().c_str());
}

graph::CsrGraph loadDataset(const std::string &file) {
  auto g = graph::readGraph(datasetsDir() + "/" + file);
  EXPECT_TRUE(g) << g.message();
  return g ? g.take() : graph::CsrGraph();
}

bool haveDataset(const std::string &file) {
  return std::ifstream(datasetsDir() + "/" + file).good();
}

TEST(SpmmGpu, Cora) {
  if (!haveDataset("cora_planetoid.npz"))
    GTEST_SKIP() << "dataset cora_planetoid.npz not found in " << datasetsDir()
                 << " (set GNNC_DATASETS)";
  graph::CsrGraph g = loadDataset("cora_planetoid.npz");
  g.name = "cora";
  checkAllKernels(g, 1);
}

TEST(SpmmGpu, EgoTwitter) {
  if (!haveDataset("ego_twitter_csr.npz"))
    GTEST_SKIP() << "dataset ego_twitter_csr.npz not found in " << datasetsDir()
                 << " (set GNNC_DATASETS)";
  graph::CsrGraph g = loadDataset("ego_twitter_csr.npz");
  g.name = "ego_twitter";
  checkAllKernels(g, 2);
}

TEST(SpmmGpu, Rmat) {
  graph::CsrGraph g = graph::generateRmat(16, 16, 42);
  g.name = "rmat16";
  checkAllKernels(g, 3);
}

TEST(SpmmGpu, RaggedEmptyRowsAndAHub) {
  // Empty rows, rows of degree 1 and one row of degree >= 50,000.
  graph::CsrGraph g = graph::makeRaggedTestGraph(7, 80000, 60000);
  g.name = "ragged";
  ASSERT_NO_FATAL_FAILURE(test::expectRagged(g, 50000));
  checkAllKernels(g, 4);
}

TEST(SpmmGpu, SingleRowAndRectangular) {
  // One row reading 5,000 of 70,000 columns: numRows != numCols.
  graph::CsrGraph g = graph::generateUniformRandom(1, 70000, 5000, 11);
  g.name = "one_row";
  checkAllKernels(g, 5);
}

TEST(SpmmGpu, RowsWithoutEdges) {
  // Rows but no edges: every kernel must still write zeros (edge-parallel
  // kernels launch one block for them).
  checkAllKernels(test::graphWithoutEdges(1000, 1000, "no_edges"), 7);
}

TEST(SpmmGpu, RunsOfRowsWithoutEdges) {
  // neighbor_group: the first kernel sets the rows without groups and those
  // whose groups span blocks, the main kernel the rest. Runs of empty rows
  // at the start, between rows (one of 300 edges, whose groups span blocks)
  // and at the end, of 1 to 65 rows.
  checkAllKernels(test::graphWithEmptyRuns({65, 1, 64, 0, 3, 65, 64},
                                           {5, 1, 300, 2, 40, 7}, "empty_runs"),
                  8);
  checkAllKernels(
      test::graphWithEmptyRuns({64, 2, 65}, {3, 300}, "empty_runs_end"), 9);
}

/// Runs `kernel` twice on the same inputs and compares the bytes.
void expectBitIdentical(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                        const graph::CsrGraph &g) {
  auto sig = ops::spmmSignature(kernel.spec);
  ASSERT_TRUE(sig) << sig.message();
  // Rows of x and y are rowStride apart (padded rows: the padding of x holds
  // random values, which must not change the result either).
  std::vector<float> x = ref::randomFeatures(g.numCols * sig->rowStride, 9);
  std::vector<float> values = ref::randomFeatures(g.nnz(), 10);
  auto dg = ops::uploadGraph(g, sig->offsets64, sig->indices64);
  ASSERT_TRUE(dg) << dg.message();
  auto dx = ops::uploadTensor(x, sig->type);
  auto dv = ops::uploadTensor(values, sig->type);
  auto dn = ops::uploadColumnNorm(g);
  ASSERT_TRUE(dx && dv && dn);
  size_t bytes = g.numRows * sig->rowStride * elementSize(sig->type);
  std::vector<std::vector<char>> outputs;
  for (int run = 0; run < 2; ++run) {
    auto dy = ops::allocatePoisoned(g.numRows * sig->rowStride, sig->type);
    ASSERT_TRUE(dy) << dy.message();
    Status st = ops::launchSpmm(runtime, kernel, *dg, *dx,
                                sig->edgeValues ? &*dv : nullptr, *dy, true,
                                sig->needsColumnNorm() ? &*dn : nullptr);
    ASSERT_TRUE(st) << st.message();
    outputs.emplace_back(bytes);
    ASSERT_TRUE(dy->copyToHost(outputs.back().data(), bytes));
  }
  EXPECT_TRUE(outputs[0] == outputs[1])
      << kernel.spec.name << " gave different bits in two runs on " << g.name;
}

TEST(SpmmGpu, NonAtomicSchedulesAreBitIdenticalRunToRun) {
  Suite &s = suite();
  if (!s.skipReason.empty())
    GTEST_SKIP() << s.skipReason;
  ASSERT_TRUE(s.error.empty()) << s.error;
  graph::CsrGraph g = graph::generateRmat(16, 16, 5);
  g.name = "rmat16";
  int compared = 0;
  for (const rt::LoadedKernel &kernel : s.kernels) {
    // Atomic additions land in whatever order the workers reach them.
    if (kernel.spec.op->kind != OpKind::Spmm ||
        kernel.spec.schedule.write == WriteMode::Atomic)
      continue;
    expectBitIdentical(*s.runtime, kernel, g);
    ++compared;
  }
  std::printf("[ gpu      ] %d spmm kernels gave identical bits twice\n",
              compared);
}

bool hasSelfWeight(const rt::KernelSpec &spec) {
  return spec.op->selfWeight.has_value();
}
bool isPadded(const rt::KernelSpec &spec) { return spec.op->padded(); }
bool hasDiscBatch(const rt::KernelSpec &spec) {
  return spec.schedule.discBatch != 0;
}

/// Runs every gnn.spmm kernel of the suite that `has` (named `what` in
/// reports) on `g`.
void checkKernelsWith(const char *what,
                      const std::function<bool(const rt::KernelSpec &)> &has,
                      const graph::CsrGraph &g, uint64_t seed) {
  Suite &s = suite();
  if (!s.skipReason.empty())
    GTEST_SKIP() << s.skipReason;
  ASSERT_TRUE(s.error.empty()) << s.error;
  int passed = 0, checked = 0;
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    const rt::LoadedKernel &kernel = s.kernels[i];
    if (kernel.spec.op->kind != OpKind::Spmm || !has(kernel.spec))
      continue;
    ++checked;
    auto check = ops::checkSpmm(*s.runtime, kernel, g, seed + i);
    ASSERT_TRUE(check) << kernel.spec.name << ": " << check.message();
    EXPECT_TRUE(check->ok) << check->report;
    passed += check->ok;
  }
  EXPECT_GT(checked, 0) << "no kernel has " << what;
  std::printf("[ gpu      ] %s: %d/%d kernels with %s match the reference\n",
              g.name.c_str(), passed, checked, what);
}

/// checkKernelsWith on a ragged graph (empty rows, a hub split between many
/// edge-parallel workers; R-MAT seed `raggedSeed`) with `seed`, then on one
/// with more columns than rows (seed `wideSeed`) with `seed + 1`.
void checkOnRaggedAndWide(
    const char *what, const std::function<bool(const rt::KernelSpec &)> &has,
    uint64_t raggedSeed, uint64_t wideSeed, uint64_t seed) {
  graph::CsrGraph ragged = graph::makeRaggedTestGraph(raggedSeed, 5000, 20000);
  ragged.name = "ragged";
  checkKernelsWith(what, has, ragged, seed);
  graph::CsrGraph wide = graph::generateUniformRandom(300, 9000, 40, wideSeed);
  wide.name = "wide";
  checkKernelsWith(what, has, wide, seed + 1);
}

TEST(SpmmGpu, SelfTermOnRaggedAndRectangularGraphs) {
  // The self term against the reference, f32/f16/bf16, widths 1, 3 and
  // 64, vertex- and edge-parallel: empty rows (the self term alone), a hub
  // split between many edge-parallel workers, and a graph with more
  // columns than rows.
  checkOnRaggedAndWide("self_weight", hasSelfWeight, 17, 12, 40);
}

TEST(SpmmGpu, SelfTermRefusesMoreRowsThanColumns) {
  Suite &s = suite();
  if (!s.skipReason.empty())
    GTEST_SKIP() << s.skipReason;
  ASSERT_TRUE(s.error.empty()) << s.error;
  const rt::LoadedKernel *kernel = nullptr;
  for (const rt::LoadedKernel &k : s.kernels)
    if (k.spec.op->kind == OpKind::Spmm && k.spec.op->selfWeight)
      kernel = &k;
  ASSERT_NE(kernel, nullptr);
  graph::CsrGraph g = graph::generateUniformRandom(100, 50, 4, 13);
  g.name = "tall";
  auto check = ops::checkSpmm(*s.runtime, *kernel, g, 1);
  ASSERT_FALSE(check) << "a self term on 100 rows of 50 features ran";
  EXPECT_NE(check.message().find("100 rows and only 50 columns"),
            std::string::npos)
      << check.message();
}

TEST(SpmmGpu, PaddedRowsOnRaggedAndRectangularGraphs) {
  // Padded rows (#gnn.rows<stride = ...>): x's padding holds NaN, y's
  // padding must keep its poison bytes, the features match the reference.
  // Empty rows, a hub split between many edge-parallel workers, and more
  // columns than rows.
  checkOnRaggedAndWide("padded rows", isPadded, 29, 14, 60);
}

TEST(SpmmGpu, F16DiscretizedAccumulationOnRaggedGraph) {
  // accumulate = f16 with disc_batch, and f32 with disc_batch, against the
  // reference with the tolerance of an f16 sum of disc_batch terms.
  graph::CsrGraph g = graph::makeRaggedTestGraph(23, 20000, 30000);
  g.name = "ragged";
  checkKernelsWith("disc_batch", hasDiscBatch, g, 50);
}

/// A graph with one hub row of `hubDegree` distinct neighbours (row 0) and
/// a few short rows (one empty), over hubDegree columns.
graph::CsrGraph makeHubGraph(int64_t hubDegree) {
  graph::CsrGraph g;
  g.numCols = hubDegree;
  const int64_t degrees[] = {hubDegree, 0, 1, 7, 100, 3};
  g.numRows = 6;
  g.rowPtr.assign(1, 0);
  for (int64_t r = 0; r < g.numRows; ++r) {
    for (int64_t k = 0; k < degrees[r]; ++k)
      g.colIdx.push_back(r == 0 ? k : (k * 7919 + r * 13) % hubDegree);
    g.rowPtr.push_back(static_cast<int64_t>(g.colIdx.size()));
  }
  g.name = "hub" + std::to_string(hubDegree);
  return g;
}

TEST(SpmmGpu, F16AccumulationOverflowAndPrecisionAtDegree50000) {
  // f16 features uniform in [0.95, 1.05] and a row of degree 50,000: its
  // sum is about 50,000 (below f16's largest value, 65,504) and its mean
  // about 1. f32 accumulation and discretized f16 accumulation (f16
  // batches of 32 folded into an f32 total) stay within 0.1% of the exact
  // result; a plain f16 running sum stalls once the spacing of f16 numbers
  // exceeds twice a term (at 4,096) and is far off.
  Suite &s = suite();
  if (!s.skipReason.empty())
    GTEST_SKIP() << s.skipReason;
  ASSERT_TRUE(s.error.empty()) << s.error;
  const int64_t width = 16, hub = 50000;
  graph::CsrGraph g = makeHubGraph(hub);
  struct Case {
    std::string schedule, tag;
    bool accurate;
  };
  const Case cases[] = {
      {"", "", true},
      {"accumulate = f16, disc_batch = 32", "h32", true},
      {std::string(test::kEdgeSchedule) + ", accumulate = f16, disc_batch = 32",
       "h32ep", true},
      {"accumulate = f16", "h", false},
  };
  std::vector<test::SpmmVariant> variants;
  for (const char *reduce : {"", "mean"})
    for (const Case &c : cases) {
      test::SpmmVariant v{"f16", width, false, "i64", c.schedule};
      v.reduce = reduce;
      v.tag = c.tag;
      variants.push_back(v);
    }
  auto compiled = compileGnn(test::spmmModuleText(variants), "hub.gnn");
  ASSERT_TRUE(compiled) << compiled.message();

  std::vector<float> x = ref::roundThrough(
      ref::randomFeatures(g.numCols * width, 77, 0.95f, 1.05f),
      ElementType::F16);
  auto dg = ops::uploadGraph(g, true, false);
  ASSERT_TRUE(dg) << dg.message();
  auto dx = ops::uploadTensor(x, ElementType::F16);
  ASSERT_TRUE(dx) << dx.message();
  const size_t count = static_cast<size_t>(g.numRows * width);
  for (size_t i = 0; i < variants.size(); ++i) {
    const Case &c = cases[i % std::size(cases)];
    const rt::KernelSpec &spec = compiled->kernels[i];
    auto kernel = s.runtime->load(spec);
    ASSERT_TRUE(kernel) << kernel.message();
    auto sig = ops::spmmSignature(spec);
    ASSERT_TRUE(sig) << sig.message();
    auto dy = ops::allocatePoisoned(count, ElementType::F16);
    ASSERT_TRUE(dy) << dy.message();
    Status st = ops::launchSpmm(*s.runtime, *kernel, *dg, *dx, nullptr, *dy);
    ASSERT_TRUE(st) << spec.name << ": " << st.message();
    auto got = ops::downloadTensor(*dy, count, ElementType::F16);
    ASSERT_TRUE(got) << got.message();
    std::vector<double> exact, magnitude;
    ref::spmm(g, nullptr, x.data(), width, sig->options(), exact, &magnitude);

    // The short rows: the reference with the f16-sum tolerance of their
    // degree (at most 100).
    const double tol = ops::spmmTolerance(*sig, 100);
    for (int64_t r = 1; r < g.numRows; ++r)
      for (int64_t j = 0; j < width; ++j) {
        size_t k = r * width + j;
        EXPECT_LE(std::fabs((*got)[k] - exact[k]),
                  tol * magnitude[k] + ops::spmmAbsoluteTolerance(sig->type))
            << spec.name << " row " << r << " column " << j << ": got "
            << (*got)[k] << ", expected " << exact[k];
      }

    // The hub row.
    std::vector<double> emulated;
    if (!c.accurate)
      ref::spmmHalfRunningSum(g, nullptr, x.data(), width, sig->options(),
                              emulated);
    double worst = 0;
    for (int64_t j = 0; j < width; ++j) {
      const double v = (*got)[j], want = exact[j];
      const double rel = std::fabs(v - want) / std::fabs(want);
      worst = std::isfinite(v) ? std::max(worst, rel) : INFINITY;
      if (c.accurate) {
        EXPECT_TRUE(std::isfinite(v)) << spec.name << " column " << j;
        EXPECT_LE(rel, 1e-3) << spec.name << " column " << j << ": got " << v
                             << ", exact " << want;
      } else {
        EXPECT_TRUE(!std::isfinite(v) || rel > 0.1)
            << spec.name << " column " << j << ": got " << v << ", exact "
            << want << " (a plain f16 running sum was expected to fail)";
        // The failure is the one the f16 emulation predicts.
        EXPECT_LE(std::fabs(v - emulated[j]), 2e-3 * std::fabs(emulated[j]))
            << spec.name << " column " << j << ": got " << v
            << ", f16 emulation " << emulated[j];
      }
    }
    std::printf("[ gpu      ] %s: hub row of degree %lld, largest relative "
                "error %.3g\n",
                spec.name.c_str(), static_cast<long long>(hub), worst);
  }
}

TEST(SpmmGpu, NoRows) {
  graph::CsrGraph g;
  g.numRows = 0;
  g.numCols = 10;
  g.rowPtr = {0};
  g.name = "empty";
  checkAllKernels(g, 6);
}

TEST(SpmmGpu, NeighbourGroupsAreBuiltOnFirstLaunch) {
  // A neighbor_group kernel launched on a freshly uploaded graph: launchSpmm
  // builds the graph's groups from its host row offsets, and the result
  // matches the reference; a graph without them says how to add them.
  Suite &s = suite();
  if (!s.skipReason.empty())
    GTEST_SKIP() << s.skipReason;
  ASSERT_TRUE(s.error.empty()) << s.error;
  graph::CsrGraph g = graph::makeRaggedTestGraph(3, 20000, 9000);
  int ran = 0;
  for (const rt::LoadedKernel &kernel : s.kernels) {
    auto sig = ops::spmmSignature(kernel.spec);
    if (!sig || sig->groupSize == 0 || sig->edgeValues || sig->padded() ||
        sig->needsColumnNorm() || sig->selfWeight ||
        sig->type != ElementType::F32)
      continue;
    auto dg = ops::uploadGraph(g, sig->offsets64, sig->indices64);
    ASSERT_TRUE(dg) << dg.message();
    ASSERT_TRUE(dg->groups.empty());
    const int64_t width = sig->featureWidth;
    std::vector<float> x = ref::randomFeatures(g.numCols * width, 31);
    auto dx = ops::uploadTensor(x, sig->type);
    auto dy = ops::allocatePoisoned(g.numRows * width, sig->type);
    ASSERT_TRUE(dx && dy);
    Status st = ops::launchSpmm(*s.runtime, kernel, *dg, *dx, nullptr, *dy);
    ASSERT_TRUE(st) << kernel.spec.name << ": " << st.message();
    EXPECT_EQ(dg->groups.count(sig->groupSize), 1u);
    auto got = ops::downloadTensor(*dy, g.numRows * width, sig->type);
    ASSERT_TRUE(got) << got.message();
    std::vector<double> expected, magnitude;
    ref::spmm(g, nullptr, x.data(), width, sig->options(), expected,
              &magnitude);
    ops::KernelCheck check = ops::compareWithReference(
        kernel.spec, g, width, sig->type, *got, expected, magnitude, width,
        ops::spmmTolerance(*sig, 9000));
    EXPECT_TRUE(check.ok) << check.report;
    // Without host row offsets the groups cannot be built.
    dg->groups.clear();
    dg->hostRowPtr.clear();
    st = ops::launchSpmm(*s.runtime, kernel, *dg, *dx, nullptr, *dy);
    ASSERT_FALSE(st);
    EXPECT_NE(st.message().find("ops::addNeighbourGroups"), std::string::npos)
        << st.message();
    ++ran;
  }
  EXPECT_GT(ran, 0);
  std::printf("[ gpu      ] %d neighbor_group kernels built their groups on "
              "first launch\n",
              ran);
}

} // namespace
