//===- BatchedGpuTest.cpp - gnn.spmm batched on a GPU ---------------------===//
//
// Every batched variant (BatchedVariants.h) on batches with empty graphs,
// single-node graphs and graphs too large for the tile among small ones,
// on a molecule-like batch and on TU PROTEINS (when the datasets are
// present), with fresh random inputs and NaN-poisoned outputs, against the
// double-precision CPU reference of gnn.spmm on the block-diagonal graph.
//
// Skips, saying why, when no GPU is present or a dataset is missing.
//
//===----------------------------------------------------------------------===//
#include "BatchedVariants.h"
#include "GpuKernels.h"

#include "gnnc/graph/Batch.h"
#include "gnnc/ops/LinearGrad.h"
#include "gnnc/ops/Readout.h"
#include "gnnc/ops/Spmm.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

test::GpuKernels &kernels() {
  static test::GpuKernels *k = [] {
    auto *k = new test::GpuKernels;
    std::vector<test::BatchedVariant> variants = test::batchedVariants();
    test::loadGpuKernels(*k, test::batchedModuleText(variants), "batched.gnn",
                         variants.size());
    return k;
  }();
  return *k;
}

test::GpuKernels &readoutKernels() {
  static test::GpuKernels *k = [] {
    auto *k = new test::GpuKernels;
    size_t count = 0;
    std::string text = test::readoutModuleText(&count);
    test::loadGpuKernels(*k, text, "readout.gnn", count);
    return k;
  }();
  return *k;
}

/// Checks every readout kernel on `batch`.
void checkReadouts(const BatchedGraph &batch, uint64_t seed) {
  test::GpuKernels &k = readoutKernels();
  if (!k.skipReason.empty())
    GTEST_SKIP() << k.skipReason;
  ASSERT_TRUE(k.error.empty()) << k.error;
  for (const rt::LoadedKernel &kernel : k.kernels) {
    auto check = ops::checkReadout(*k.runtime, kernel, batch, seed++);
    ASSERT_TRUE(check) << kernel.spec.name << ": " << check.message();
    EXPECT_TRUE(check->ok) << check->report;
  }
}

/// Checks every kernel on `batch`.
void checkAll(const BatchedGraph &batch, uint64_t seed) {
  test::GpuKernels &k = kernels();
  if (!k.skipReason.empty())
    GTEST_SKIP() << k.skipReason;
  ASSERT_TRUE(k.error.empty()) << k.error;
  for (const rt::LoadedKernel &kernel : k.kernels) {
    auto check = ops::checkSpmm(*k.runtime, kernel, batch, seed++);
    ASSERT_TRUE(check) << kernel.spec.name << ": " << check.message();
    EXPECT_TRUE(check->ok) << check->report;
  }
}

TEST(BatchedGpu, RaggedBatchWithEmptySingleAndLargeGraphs) {
  checkAll(raggedBatch(), 1);
}

TEST(BatchedGpu, ReadoutAndItsGradientOnARaggedBatch) {
  checkReadouts(raggedBatch(), 3000);
}

TEST(BatchedGpu, ReadoutAndItsGradientOnMolecules) {
  MoleculeBatchOptions o;
  o.numGraphs = 300;
  checkReadouts(generateMoleculeBatch(o, 6), 4000);
}

TEST(BatchedGpu, MoleculeLikeBatch) {
  MoleculeBatchOptions o;
  o.numGraphs = 300;
  checkAll(generateMoleculeBatch(o, 5), 1000);
}

/// Graphs whose pieces hold more edges than a tile stages (their rows
/// then read offsets and column indices from global memory): a dense graph
/// of 150 nodes with 40 neighbours a node, and a star of 300 nodes whose
/// centre has 299, among small molecules.
TEST(BatchedGpu, DenseAndStarGraphsAmongSmallOnes) {
  std::vector<int64_t> rows, cols;
  uint64_t state = 12345;
  for (int64_t r = 0; r < 150; ++r)
    for (int k = 0; k < 40; ++k) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      rows.push_back(r);
      cols.push_back(static_cast<int64_t>((state >> 33) % 150));
    }
  Expected<CsrGraph> dense = fromCoo(150, 150, rows, cols, {});
  ASSERT_TRUE(dense) << dense.message();
  rows.clear();
  cols.clear();
  for (int64_t v = 1; v < 300; ++v) {
    rows.push_back(0);
    cols.push_back(v);
    rows.push_back(v);
    cols.push_back(0);
  }
  Expected<CsrGraph> star = fromCoo(300, 300, rows, cols, {});
  ASSERT_TRUE(star) << star.message();
  std::vector<CsrGraph> graphs;
  for (int i = 0; i < 30; ++i) {
    graphs.push_back(moleculeGraph(3 + i % 17, 4, 200 + i));
    if (i == 10)
      graphs.push_back(*dense);
    if (i == 20)
      graphs.push_back(*star);
  }
  Expected<BatchedGraph> b = collate(graphs);
  ASSERT_TRUE(b) << b.message();
  checkAll(*b, 5000);
}

TEST(BatchedGpu, Proteins) {
  std::string dir = std::getenv("GNNC_DATASETS")
                        ? std::getenv("GNNC_DATASETS")
                        : std::string(GNNC_SOURCE_DIR) + "/../shared/datasets";
  std::string path = dir + "/tu_PROTEINS.npz";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "dataset tu_PROTEINS.npz not found in " << dir
                 << " (set GNNC_DATASETS to the shared datasets folder)";
  Expected<BatchedGraph> b = readTuBatch(path);
  ASSERT_TRUE(b) << b.message();
  checkAll(*b, 2000);
}

TEST(BatchedGpu, RefusesAGraphThatIsNoBatch) {
  test::GpuKernels &k = kernels();
  if (!k.skipReason.empty())
    GTEST_SKIP() << k.skipReason;
  ASSERT_TRUE(k.error.empty()) << k.error;
  CsrGraph g = moleculeGraph(10, 3, 4);
  auto dg = ops::uploadGraph(g, true, false);
  ASSERT_TRUE(dg) << dg.message();
  auto x =
      ops::uploadTensor(std::vector<float>(10 * 1, 1.0f), ElementType::F32);
  auto y = ops::allocatePoisoned(10, ElementType::F32);
  ASSERT_TRUE(x && y);
  Status st =
      ops::launchSpmm(*k.runtime, k.kernels.front(), *dg, *x, nullptr, *y);
  EXPECT_EQ(st.message(), "kernel '" + k.kernels.front().spec.name +
                              "' runs over a batch of graphs (batched_csr); "
                              "upload the graph with ops::uploadBatch");
}

TEST(BatchedGpu, ALinearEpilogueNeedsItsOperands) {
  test::GpuKernels &k = kernels();
  if (!k.skipReason.empty())
    GTEST_SKIP() << k.skipReason;
  ASSERT_TRUE(k.error.empty()) << k.error;
  // The GCN layer variant: f32, 64 x 64 weights, a bias.
  const rt::LoadedKernel *layer = nullptr;
  for (const rt::LoadedKernel &kernel : k.kernels)
    if (kernel.spec.name.find("b_f32_w64_lgcn") != std::string::npos)
      layer = &kernel;
  ASSERT_NE(layer, nullptr);
  const std::string name = "kernel '" + layer->spec.name + "'";
  BatchedGraph batch = raggedBatch();
  const int64_t n = batch.graph.numRows;
  auto dg = ops::uploadBatch(batch, true, false);
  auto norm = ops::uploadColumnNorm(batch.graph);
  auto x =
      ops::uploadTensor(std::vector<float>(n * 64, 1.0f), ElementType::F32);
  auto y = ops::allocatePoisoned(n * 64, ElementType::F32);
  auto w =
      ops::uploadTensor(std::vector<float>(64 * 64, 0.5f), ElementType::F32);
  auto small =
      ops::uploadTensor(std::vector<float>(64 * 8, 0.5f), ElementType::F32);
  auto b = ops::uploadTensor(std::vector<float>(64, 0.5f), ElementType::F32);
  ASSERT_TRUE(dg && norm && x && y && w && small && b);
  auto launch = [&](const ops::LinearOperands *linear) {
    return ops::launchSpmm(*k.runtime, *layer, *dg, *x, nullptr, *y, true,
                           &*norm, nullptr, linear);
  };
  EXPECT_EQ(launch(nullptr).message(),
            name + " ends in a linear epilogue and needs its weights (64 x "
                   "64)");
  ops::LinearOperands tooSmall{&*small, &*b};
  EXPECT_EQ(launch(&tooSmall).message(),
            name + ": the weights (64 x 64) need 16384 bytes, the buffer has "
                   "2048");
  ops::LinearOperands noBias{&*w, nullptr};
  EXPECT_EQ(launch(&noBias).message(),
            name + " ends in a linear epilogue and needs its bias (64)");
  ops::LinearOperands both{&*w, &*b};
  EXPECT_TRUE(launch(&both)) << launch(&both).message();
}

} // namespace

// The elementwise end of a layer's backward (gnnc/ops/LinearGrad.h): dz
// exactly dy where y > 0, db the column sums, over ragged shapes (no rows,
// one row, fewer rows than blocks, widths from 1 to 256, odd ones among
// them) in every element type.
/// A runtime and the backward's ReLU and bias kernels, loaded once.
struct LinearGradSetup {
  test::GpuKernels gpu; // the runtime, or why there is none
  std::unique_ptr<ops::LinearGradKernels> kernels;
};
LinearGradSetup &linearGrad() {
  static LinearGradSetup *setup = [] {
    auto *s = new LinearGradSetup;
    if (!test::openGpuRuntime(s->gpu))
      return s;
    auto loaded = ops::LinearGradKernels::load(*s->gpu.runtime);
    if (!loaded)
      s->gpu.error = loaded.message();
    else
      s->kernels = std::make_unique<ops::LinearGradKernels>(loaded.take());
    return s;
  }();
  return *setup;
}

TEST(LinearGradGpu, ReluAndBiasGradientOnRaggedShapes) {
  LinearGradSetup &setup = linearGrad();
  if (!setup.gpu.skipReason.empty())
    GTEST_SKIP() << setup.gpu.skipReason;
  ASSERT_TRUE(setup.gpu.error.empty()) << setup.gpu.error;
  rt::Runtime *runtime = setup.gpu.runtime.get();
  ops::LinearGradKernels &kernels = *setup.kernels;
  const std::pair<int64_t, int64_t> shapes[] = {
      {0, 16},   {1, 1},  {1, 33},  {7, 3},       {300, 64},   {1000, 256},
      {4099, 5}, {50, 6}, {33, 12}, {50000, 128}, {20000, 200}};
  uint64_t seed = 11;
  for (ElementType type :
       {ElementType::F32, ElementType::F16, ElementType::BF16})
    for (auto [rows, width] : shapes) {
      auto check =
          ops::checkReluBiasGrad(*runtime, kernels, type, rows, width, seed++);
      ASSERT_TRUE(check) << check.message();
      EXPECT_TRUE(check->ok) << check->report;
    }
}

TEST(LinearGradGpu, RefusesShortBuffers) {
  LinearGradSetup &setup = linearGrad();
  if (!setup.gpu.skipReason.empty())
    GTEST_SKIP() << setup.gpu.skipReason;
  ASSERT_TRUE(setup.gpu.error.empty()) << setup.gpu.error;
  rt::Runtime *runtime = setup.gpu.runtime.get();
  ops::LinearGradKernels *loaded = setup.kernels.get();
  auto y = ops::allocatePoisoned(10 * 8, ElementType::F32);
  auto dz = ops::allocatePoisoned(10 * 8, ElementType::F32);
  auto db = ops::allocatePoisoned(4, ElementType::F32);
  ASSERT_TRUE(y && dz && db);
  Status s = loaded->reluBiasGrad(*runtime, ElementType::F32, *y, *y, *dz, &*db,
                                  10, 8);
  EXPECT_EQ(s.message(), "the ReLU and bias gradient of 10 x 8 f32: db holds "
                         "16 bytes, 32 needed (f32)");
  s = loaded->reluBiasGrad(*runtime, ElementType::F32, *y, *y, *dz, nullptr, 11,
                           8);
  EXPECT_EQ(s.message(), "the ReLU and bias gradient of 11 x 8 f32: y holds "
                         "320 bytes, 352 needed");
}
