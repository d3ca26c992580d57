//===- LayerBackwardTest.cpp - The backward of a fused batched layer ------===//
//
// The rules of planLayerBackward and the ops it refuses, on the CPU; on a
// GPU, every plan on a ragged batch (empty graphs, single nodes, a graph of
// 300 nodes among small ones) and a protein-like batch, GCN and GIN, f32,
// f16 and bf16, K = M and K != M (one pair off the tensor cores' multiples
// of 8), checked with checkLayerBackward against double references after a
// forward on the GPU. Skips, saying why, without a GPU.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Tuning/LayerBackward.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/OpText.h"
#include "gnnc/graph/Batch.h"
#include "gnnc/reference/Spmm.h"
#include "gnnc/runtime/Nvrtc.h"
#include "gnnc/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace gnnc;
using namespace gnnc::tuning;

namespace {

/// GCN (both-sided scaling; the batch gets self loops) or GIN (the self
/// term, 1 + 0) over a batch, epilogue K x M with bias and ReLU.
OpDesc layerOp(bool gcn, ElementType type, int64_t k, int64_t m) {
  OpDesc op = spmmOp(type, k);
  op.batchedGraph = true;
  if (gcn)
    op.scale = DegreeScale::Both;
  else
    op.selfWeight = 0.0;
  op.linearWidth = m;
  op.linearBias = true;
  op.activation = Activation::Relu;
  return op;
}

TEST(LayerBackwardTest, RefusesWhatItCannotDifferentiate) {
  OpDesc op = layerOp(true, ElementType::F32, 64, 64);
  EXPECT_TRUE(planLayerBackward(op, 1000, 132));
  OpDesc plain = op;
  plain.linearWidth = 0;
  EXPECT_NE(planLayerBackward(plain, 1000, 132)
                .message()
                .find("with a linear epilogue"),
            std::string::npos);
  OpDesc noRelu = op;
  noRelu.activation = Activation::None;
  EXPECT_NE(planLayerBackward(noRelu, 1000, 132).message().find("ReLU"),
            std::string::npos);
  OpDesc max = op;
  max.reduce = Reduce::Max;
  EXPECT_NE(planLayerBackward(max, 1000, 132).message().find("reduce = max"),
            std::string::npos);
  OpDesc values = op;
  values.edgeValues = true;
  EXPECT_NE(planLayerBackward(values, 1000, 132).message().find("edge values"),
            std::string::npos);
  OpDesc transposed = op;
  transposed.transposeWeights = true;
  EXPECT_NE(planLayerBackward(transposed, 1000, 132)
                .message()
                .find("transpose_weights"),
            std::string::npos);
}

TEST(LayerBackwardTest, SplitsOf1024WhenEverySmStillGetsAnItem) {
  // 300,000 nodes at width 16: 293 splits of 1024 rows, 2.2 items an SM.
  auto big =
      planLayerBackward(layerOp(false, ElementType::F16, 16, 16), 300000, 132);
  ASSERT_TRUE(big) << big.message();
  EXPECT_EQ(big->splitRows, 1024);
  // 43,471 nodes (PROTEINS) at width 16: 43 splits, fewer than the SMs.
  auto small =
      planLayerBackward(layerOp(false, ElementType::F16, 16, 16), 43471, 132);
  ASSERT_TRUE(small) << small.message();
  EXPECT_EQ(small->splitRows, 256);
  // The same nodes at width 256: each split holds several tiles of the
  // 256 x 256 gradient.
  auto wide =
      planLayerBackward(layerOp(false, ElementType::F16, 256, 256), 43471, 132);
  ASSERT_TRUE(wide) << wide.message();
  EXPECT_EQ(wide->splitRows, 1024);
}

TEST(LayerBackwardTest, UnfusedInputGradWhereTheFusedKernelHasNoPlan) {
  // K = 12: the fused kernel's epilogue would write 12 columns.
  auto odd =
      planLayerBackward(layerOp(false, ElementType::F16, 12, 24), 1000, 132);
  ASSERT_TRUE(odd) << odd.message();
  EXPECT_FALSE(odd->fusedInputGrad);
}

TEST(LayerBackwardTest, UnfusedInputGradWhereTheForwardStreamsItsWeights) {
  auto wide =
      planLayerBackward(layerOp(true, ElementType::F32, 256, 256), 300000, 132);
  ASSERT_TRUE(wide) << wide.message();
  EXPECT_FALSE(wide->fusedInputGrad);
  auto narrow =
      planLayerBackward(layerOp(true, ElementType::F32, 64, 64), 300000, 132);
  ASSERT_TRUE(narrow) << narrow.message();
  EXPECT_TRUE(narrow->fusedInputGrad);
}

/// The layers the GPU test runs: (gcn, type, K, M).
struct LayerCase {
  bool gcn;
  ElementType type;
  int64_t k, m;
};
const LayerCase kCases[] = {
    {true, ElementType::F32, 32, 32},  {false, ElementType::F32, 32, 32},
    {true, ElementType::F16, 64, 64},  {false, ElementType::F16, 64, 64},
    {true, ElementType::BF16, 16, 24}, {false, ElementType::F32, 24, 40},
    {false, ElementType::F16, 12, 24}, {true, ElementType::F32, 256, 256}};

// Every forward and every plan's backward of the GPU test compiles to CUDA
// that NVRTC accepts for sm_90, without a GPU.
TEST(LayerBackwardTest, EveryTestedPlanCompiles) {
  for (const LayerCase &c : kCases) {
    const OpDesc op = layerOp(c.gcn, c.type, c.k, c.m);
    // Each module and the kernels LayerBackward::create looks up in it.
    std::vector<std::pair<std::string, std::vector<std::string>>> modules = {
        {"gnn.module @fwd {\n" + opKernelText("layer", op, std::nullopt) +
             "}\n",
         {"layer"}}};
    for (bool fused : {true, false})
      for (int32_t split : layerBackwardSplitRows()) {
        if (fused && c.k % 8 != 0)
          continue;
        auto t = layerBackwardModuleText(op, std::nullopt,
                                         LayerBackwardPlan{split, fused});
        ASSERT_TRUE(t) << t.message();
        modules.push_back(
            {*t, fused ? std::vector<std::string>{"h", "dw", "dx"}
                       : std::vector<std::string>{"h", "dw", "dxmm", "dxagg"}});
      }
    for (const auto &[text, names] : modules) {
      auto compiled = compileGnn(text, "layer.gnn");
      ASSERT_TRUE(compiled) << elementTypeName(c.type) << " K " << c.k << " M "
                            << c.m << ": " << compiled.message();
      EXPECT_EQ(compiled->kernels.size(), names.size());
      for (const std::string &name : names)
        EXPECT_TRUE(findKernel(*compiled, name)) << name;
      rt::CompileOptions options;
      options.arch = "sm_90";
      options.ptx = true;
      auto ptx = rt::compileCuda(compiled->source, "layer.cu", options);
      ASSERT_TRUE(ptx.isOk()) << ptx.message();
    }
  }
}

/// sum(dY * relu(Â X W + b)) in double for a layer on `batch`.
double layerLoss(const OpDesc &op, const graph::BatchedGraph &batch,
                 const std::vector<float> &x, const std::vector<float> &w,
                 const std::vector<float> &b, const std::vector<float> &dy,
                 std::vector<double> *hOut = nullptr,
                 std::vector<double> *zOut = nullptr) {
  ref::SpmmOptions options;
  options.reduce = op.reduce;
  options.scale = op.scale;
  options.selfWeight = op.selfWeight;
  std::vector<double> h, z;
  ref::spmm(batch.graph, nullptr, x.data(), op.width, options, h);
  ref::linearEpilogue(h, batch.graph.numRows, op.width, w.data(),
                      op.linearWidth, b.data(), /*relu=*/false, z);
  double loss = 0;
  for (size_t i = 0; i < z.size(); ++i)
    loss += double(dy[i]) * std::max(0.0, z[i]);
  if (hOut)
    *hOut = h;
  if (zOut)
    *zOut = z;
  return loss;
}

// The reference is the gradient of sum(dY * Y): central differences of the
// loss in double (the loss is linear between ReLU's kinks, which no
// perturbation crosses here) for every entry of X, W and b, GCN and GIN,
// on a batch with an empty graph and a single node.
TEST(LayerBackwardTest, ReferenceIsTheGradientOfTheLayer) {
  std::vector<graph::CsrGraph> graphs = {
      graph::moleculeGraph(6, 3, 1), graph::CsrGraph{},
      graph::moleculeGraph(1, 3, 2), graph::moleculeGraph(9, 4, 3)};
  graphs[1].rowPtr = {0};
  auto plain = graph::collate(graphs);
  ASSERT_TRUE(plain) << plain.message();
  for (bool gcn : {true, false}) {
    SCOPED_TRACE(gcn ? "GCN" : "GIN");
    const OpDesc op = layerOp(gcn, ElementType::F32, 3, 4);
    graph::BatchedGraph batch = *plain;
    if (gcn) {
      auto looped = graph::withSelfLoops(*plain);
      ASSERT_TRUE(looped) << looped.message();
      batch = looped.take();
    }
    const int64_t n = batch.graph.numRows, k = 3, m = 4;
    std::vector<float> x = ref::randomFeatures(n * k, 21);
    std::vector<float> w = ref::randomFeatures(k * m, 22, -0.5f, 0.5f);
    std::vector<float> b = ref::randomFeatures(m, 23, -0.5f, 0.5f);
    std::vector<float> dy = ref::randomFeatures(n * m, 24);
    std::vector<double> h, z;
    layerLoss(op, batch, x, w, b, dy, &h, &z);
    // No output within reach of a kink.
    for (double v : z)
      ASSERT_GT(std::fabs(v), 1e-3) << "a pre-activation near 0; reseed";
    std::vector<float> y(z.size()), hf(h.begin(), h.end());
    for (size_t i = 0; i < z.size(); ++i)
      y[i] = static_cast<float>(std::max(0.0, z[i]));
    auto r = layerBackwardReference(op, batch, w, dy, y, hf);
    ASSERT_TRUE(r) << r.message();
    auto difference = [&](std::vector<float> &v, size_t i) {
      const float saved = v[i];
      v[i] = saved + 1e-4f;
      const double up = layerLoss(op, batch, x, w, b, dy);
      const float hi = v[i];
      v[i] = saved - 1e-4f;
      const double down = layerLoss(op, batch, x, w, b, dy);
      const float lo = v[i];
      v[i] = saved;
      return (up - down) / (double(hi) - double(lo));
    };
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_NEAR(r->dx[i], difference(x, i), 1e-6 * (1 + r->dxAbs[i]))
          << "dX " << i;
    for (size_t i = 0; i < w.size(); ++i)
      EXPECT_NEAR(r->dw[i], difference(w, i), 1e-5 * (1 + r->dwAbs[i]))
          << "dW " << i;
    for (size_t i = 0; i < b.size(); ++i)
      EXPECT_NEAR(r->db[i], difference(b, i), 1e-6 * (1 + r->dbAbs[i]))
          << "db " << i;
  }
}

TEST(LayerBackwardTest, ReferenceRefusesInputsOfTheWrongSize) {
  graph::BatchedGraph batch = graph::raggedBatch();
  const OpDesc op = layerOp(false, ElementType::F32, 8, 8);
  const int64_t n = batch.graph.numRows;
  std::vector<float> w(64), dy(n * 8), y(n * 8), h(n * 8 - 1);
  auto r = layerBackwardReference(op, batch, w, dy, y, h);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("H " + std::to_string(n * 8) + "; got 64, " +
                             std::to_string(n * 8) + ", " +
                             std::to_string(n * 8) + ", " +
                             std::to_string(n * 8 - 1)),
            std::string::npos)
      << r.message();
}

/// The forward on the GPU (its kernel with the default schedule), then
/// checkLayerBackward under `plan`.
void checkOne(rt::Runtime &runtime, const graph::BatchedGraph &input, bool gcn,
              ElementType type, int64_t k, int64_t m,
              const LayerBackwardPlan &plan, uint64_t seed) {
  const OpDesc op = layerOp(gcn, type, k, m);
  const std::string what =
      std::string(gcn ? "GCN " : "GIN ") + elementTypeName(type) + " K " +
      std::to_string(k) + " M " + std::to_string(m) + " splits " +
      std::to_string(plan.splitRows) +
      (plan.fusedInputGrad ? " fused" : " unfused") + " on " + input.graph.name;
  SCOPED_TRACE(what);
  graph::BatchedGraph batch = input;
  if (gcn) {
    auto looped = graph::withSelfLoops(input);
    ASSERT_TRUE(looped) << looped.message();
    batch = looped.take();
  }
  const int64_t n = batch.graph.numRows;
  auto compiled = compileGnn(
      "gnn.module @fwd {\n" + opKernelText("layer", op, std::nullopt) + "}\n",
      "layer_forward.gnn");
  ASSERT_TRUE(compiled) << compiled.message();
  auto forward = runtime.load(compiled->kernels.front());
  ASSERT_TRUE(forward) << forward.message();
  std::vector<float> x =
      ref::roundThrough(ref::randomFeatures(n * k, seed), type);
  std::vector<float> w = ref::roundThrough(
      ref::randomFeatures(k * m, seed + 1, -0.3f, 0.3f), type);
  std::vector<float> b =
      ref::roundThrough(ref::randomFeatures(m, seed + 2, -0.5f, 0.5f), type);
  std::vector<float> dy =
      ref::roundThrough(ref::randomFeatures(n * m, seed + 3), type);
  auto g = ops::uploadBatch(batch, true, false);
  ASSERT_TRUE(g) << g.message();
  rt::DeviceBuffer norm;
  if (gcn) {
    auto uploaded = ops::uploadColumnNorm(batch.graph);
    ASSERT_TRUE(uploaded) << uploaded.message();
    norm = uploaded.take();
  }
  auto xd = ops::uploadTensor(x, type);
  auto wd = ops::uploadTensor(w, type);
  auto bd = ops::uploadTensor(b, type);
  auto dyd = ops::uploadTensor(dy, type);
  auto yd = ops::allocatePoisoned(std::max<int64_t>(n * m, 1), type);
  auto dxd = ops::allocatePoisoned(std::max<int64_t>(n * k, 1), type);
  auto dwd = ops::allocatePoisoned(k * m, type);
  auto dbd = ops::allocatePoisoned(m, ElementType::F32);
  ASSERT_TRUE(xd && wd && bd && dyd && yd && dxd && dwd && dbd);
  const ops::LinearOperands linear{&*wd, &*bd};
  Status ran = ops::launchSpmm(runtime, *forward, *g, *xd, nullptr, *yd, true,
                               gcn ? &norm : nullptr, nullptr, &linear);
  ASSERT_TRUE(ran) << ran.message();

  auto backward = LayerBackward::create(runtime, op, batch, std::nullopt, plan);
  ASSERT_TRUE(backward) << backward.message();
  LayerBackwardOperands o;
  o.batch = &*g;
  o.colNorm = gcn ? &norm : nullptr;
  o.x = &*xd;
  o.weight = &*wd;
  o.y = &*yd;
  o.dy = &*dyd;
  o.dx = &*dxd;
  o.dw = &*dwd;
  o.db = &*dbd;
  auto check = checkLayerBackward(runtime, *backward, batch, w, dy, o);
  ASSERT_TRUE(check) << check.message();
  EXPECT_TRUE(check->ok) << check->report;
}

TEST(LayerBackwardGpu, EveryPlanOnRaggedAndProteinLikeBatches) {
  std::string why;
  if (!rt::gpuAvailable(&why))
    GTEST_SKIP() << "no GPU: " << why;
  auto runtime = rt::Runtime::create();
  ASSERT_TRUE(runtime) << runtime.message();
  const graph::BatchedGraph ragged = graph::raggedBatch();
  graph::BatchedGraph proteins =
      graph::generateMoleculeBatch(graph::proteinLikeOptions(300), 5);
  proteins.graph.name = "protein-like";
  uint64_t seed = 100;
  for (bool fused : {true, false})
    for (int32_t split : layerBackwardSplitRows())
      for (const LayerCase &c : kCases) {
        if (c.k == 256 || (fused && c.k % 8 != 0))
          continue;
        const bool onRagged = c.type != ElementType::F16 || c.k != 64;
        checkOne(*runtime, onRagged ? ragged : proteins, c.gcn, c.type, c.k,
                 c.m, LayerBackwardPlan{split, fused}, seed++);
      }
  // The planner's choice at a width whose forward streams its weights.
  auto wide = planLayerBackward(layerOp(true, ElementType::F32, 256, 256),
                                proteins.graph.numRows, 132);
  ASSERT_TRUE(wide) << wide.message();
  checkOne(*runtime, proteins, true, ElementType::F32, 256, 256, *wide, 7);
}

} // namespace
