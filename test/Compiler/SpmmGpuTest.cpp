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
#include "SpmmVariants.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/graph/Readers.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/ops/EdgeSoftmax.h"
#include "gnnc/ops/Sddmm.h"
#include "gnnc/ops/Spmm.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <future>
#include <memory>

using namespace gnnc;

namespace {

std::string datasetsDir() {
  if (const char *dir = std::getenv("GNNC_DATASETS"))
    return dir;
  return std::string(GNNC_SOURCE_DIR) + "/../shared/datasets";
}

/// Kernels compiled and loaded once for the whole suite.
struct Suite {
  std::unique_ptr<rt::Runtime> runtime;
  std::vector<rt::LoadedKernel> kernels;
  std::string skipReason;
  std::string error;
};

Suite &suite() {
  static Suite *s = [] {
    auto *s = new Suite;
    std::string why;
    if (!rt::gpuAvailable(&why)) {
      s->skipReason = "no GPU: " + why;
      return s;
    }
    auto runtime = rt::Runtime::create();
    if (!runtime) {
      s->error = runtime.message();
      return s;
    }
    s->runtime = std::make_unique<rt::Runtime>(runtime.take());
    // The variants compile as several translation units, through NVRTC in
    // parallel (into the kernel cache), then load one by one.
    std::vector<test::SpmmVariant> variants = test::allVariants();
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
      const auto &info = kernel.spec.info;
      const std::string &name = kernel.spec.name;
      bool scalar = name.find("_scalar") != std::string::npos ||
                    name.find("_ep8") != std::string::npos;
      bool wideAdd = info.count("form") && info.at("form") == "add" &&
                     std::stoll(info.at("feature_width")) > 16;
      if (scalar || wideAdd)
        continue;
    }
    ++checked;
    const std::string &op = kernel.spec.info.at("op");
    Expected<ops::KernelCheck> check = Status::error("unknown op '" + op + "'");
    if (op == "spmm")
      check = ops::checkSpmm(*s.runtime, kernel, g, seed + i);
    else if (op == "sddmm")
      check = ops::checkSddmm(*s.runtime, kernel, g, seed + i);
    else if (op == "edge_softmax")
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
  int64_t maxDegree = 0, empty = 0;
  for (int64_t r = 0; r < g.numRows; ++r) {
    maxDegree = std::max(maxDegree, g.degree(r));
    empty += g.degree(r) == 0;
  }
  ASSERT_GE(maxDegree, 50000);
  ASSERT_GT(empty, 0);
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
  graph::CsrGraph g;
  g.numRows = 1000;
  g.numCols = 1000;
  g.rowPtr.assign(1001, 0);
  g.name = "no_edges";
  checkAllKernels(g, 7);
}

/// Runs `kernel` twice on the same inputs and compares the bytes.
void expectBitIdentical(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                        const graph::CsrGraph &g) {
  auto sig = ops::spmmSignature(kernel.spec);
  ASSERT_TRUE(sig) << sig.message();
  std::vector<float> x = ref::randomFeatures(g.numCols * sig->featureWidth, 9);
  std::vector<float> values = ref::randomFeatures(g.nnz(), 10);
  auto dg = ops::uploadGraph(g, sig->offsets64, sig->indices64);
  ASSERT_TRUE(dg) << dg.message();
  auto dx = ops::uploadTensor(x, sig->type);
  auto dv = ops::uploadTensor(values, sig->type);
  auto dn = ops::uploadColumnNorm(g);
  ASSERT_TRUE(dx && dv && dn);
  size_t bytes = g.numRows * sig->featureWidth * elementSize(sig->type);
  std::vector<std::vector<char>> outputs;
  for (int run = 0; run < 2; ++run) {
    auto dy = ops::allocatePoisoned(g.numRows * sig->featureWidth, sig->type);
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
    if (kernel.spec.info.at("op") != "spmm")
      continue;
    expectBitIdentical(*s.runtime, kernel, g);
    ++compared;
  }
  std::printf("[ gpu      ] %d spmm kernels gave identical bits twice\n",
              compared);
}

TEST(SpmmGpu, NoRows) {
  graph::CsrGraph g;
  g.numRows = 0;
  g.numCols = 10;
  g.rowPtr = {0};
  g.name = "empty";
  checkAllKernels(g, 6);
}

} // namespace
