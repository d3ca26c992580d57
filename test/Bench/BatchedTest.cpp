//===- BatchedTest.cpp - gnn-bench's batched cases, without a GPU ---------===//
//
// The batch written as a TU .npz and read back by graph::readTuBatch
// (identical, with and without edge values; never replacing a file), the
// .npz writer's refusals, the layer reference against a direct computation
// on a ragged batch (GCN with self loops and its degree normalization, GIN's
// self term), the layer comparison catching one wrong value, the readout
// byte counts, and every layer and readout kernel the batched cases compile
// (gnnc, then NVRTC for sm_80 and sm_90).
//
//===----------------------------------------------------------------------===//
#include "gnnc/Bench/Batched.h"
#include "gnnc/Bench/NpzWriter.h"
#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/graph/Readers.h"
#include "gnnc/reference/Spmm.h"
#include "gnnc/runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <unistd.h>

using namespace gnnc;
using namespace gnnc::bench;
using namespace gnnc::graph;

namespace {

std::string freshDir(const std::string &what) {
  std::string dir = ::testing::TempDir() + "/gnnc-batched-" + what + "-" +
                    std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

CsrGraph csr(int64_t n, std::vector<int64_t> rows, std::vector<int64_t> cols) {
  Expected<CsrGraph> g = fromCoo(n, n, rows, cols, {});
  EXPECT_TRUE(g) << g.message();
  return g.take();
}

/// Small graphs of every awkward kind: an empty graph, a single node, a
/// single node with a loop, a triangle, and molecule-like graphs up to 40
/// nodes.
BatchedGraph raggedBatch() {
  std::vector<CsrGraph> graphs = {
      csr(0, {}, {}), csr(1, {}, {}), csr(1, {0}, {0}),
      csr(3, {0, 0, 1, 1, 2, 2}, {1, 2, 0, 2, 0, 1})};
  MoleculeBatchOptions o;
  o.numGraphs = 6;
  o.meanNodes = 15;
  o.stddevNodes = 10;
  o.maxNodes = 40;
  BatchedGraph mols = generateMoleculeBatch(o, 7);
  for (int64_t k = 0; k < mols.numGraphs(); ++k)
    graphs.push_back(graphOf(mols, k));
  Expected<BatchedGraph> b = collate(graphs);
  EXPECT_TRUE(b) << b.message();
  return b.take();
}

void expectSameBatch(const BatchedGraph &a, const BatchedGraph &b) {
  EXPECT_EQ(a.graph.numRows, b.graph.numRows);
  EXPECT_EQ(a.graph.numCols, b.graph.numCols);
  EXPECT_EQ(a.graph.rowPtr, b.graph.rowPtr);
  EXPECT_EQ(a.graph.colIdx, b.graph.colIdx);
  EXPECT_EQ(a.graph.values, b.graph.values);
  EXPECT_EQ(a.graphPtr, b.graphPtr);
  EXPECT_EQ(a.edgeGraphPtr, b.edgeGraphPtr);
}

TEST(BenchBatchedDump, GeneratedBatchReadsBackIdentical) {
  const std::string dir = freshDir("dump");
  BatchedGraph mol = generateMoleculeBatch(proteinLikeOptions(40), 3);
  ASSERT_TRUE(dumpBatch(mol, dir, "prot40"));
  Expected<BatchedGraph> back = readTuBatch(dir + "/prot40.npz");
  ASSERT_TRUE(back) << back.message();
  expectSameBatch(mol, *back);
  EXPECT_EQ(back->graph.name, "prot40");

  // Empty graphs are written as they are (the reader accepts them when
  // asked), and edge values travel as `data`.
  BatchedGraph ragged = raggedBatch();
  ragged.graph.values.resize(ragged.graph.nnz());
  for (size_t i = 0; i < ragged.graph.values.size(); ++i)
    ragged.graph.values[i] = 0.25f * float(i % 7) - 0.5f;
  ASSERT_TRUE(dumpBatch(ragged, dir, "ragged"));
  BatchReadOptions allowEmpty;
  allowEmpty.allowEmptyGraphs = true;
  Expected<BatchedGraph> raggedBack =
      readTuBatch(dir + "/ragged.npz", allowEmpty);
  ASSERT_TRUE(raggedBack) << raggedBack.message();
  expectSameBatch(ragged, *raggedBack);
  std::filesystem::remove_all(dir);
}

TEST(BenchBatchedDump, NeverReplacesAFileAndRefusesBadNames) {
  const std::string dir = freshDir("refuse");
  BatchedGraph mol = generateMoleculeBatch(MoleculeBatchOptions{}, 1);
  ASSERT_TRUE(dumpBatch(mol, dir, "mol"));
  const auto size = std::filesystem::file_size(dir + "/mol.npz");
  Status again =
      dumpBatch(generateMoleculeBatch(proteinLikeOptions(5), 2), dir, "mol");
  ASSERT_FALSE(again);
  EXPECT_NE(again.message().find(dir + "/mol.npz: exists; not replaced"),
            std::string::npos)
      << again.message();
  EXPECT_EQ(std::filesystem::file_size(dir + "/mol.npz"), size);
  Status slash = dumpBatch(mol, dir, "a/b");
  ASSERT_FALSE(slash);
  EXPECT_NE(slash.message().find("no '/'"), std::string::npos)
      << slash.message();
  // A broken batch is refused before anything is written.
  BatchedGraph broken = mol;
  broken.graphPtr.back() += 1;
  Status refused = dumpBatch(broken, dir, "broken");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("graph_ptr"), std::string::npos)
      << refused.message();
  EXPECT_FALSE(std::filesystem::exists(dir + "/broken.npz"));
  std::filesystem::remove_all(dir);
}

TEST(BenchBatchedDump, NpzWriterRefusesRepeatedAndEmptyNames) {
  const int64_t one = 1;
  NpyMember m{"a", "<i8", {}, &one, sizeof(one)};
  Expected<std::vector<uint8_t>> twice = npzBytes({m, m});
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.message().find("'a' twice"), std::string::npos);
  m.name = "";
  EXPECT_FALSE(npzBytes({m}));
  // An archive of no members is still a valid (empty) archive.
  Expected<std::vector<uint8_t>> empty = npzBytes({});
  ASSERT_TRUE(empty) << empty.message();
  EXPECT_EQ(empty->size(), 22u);
}

/// Y = ReLU(H W + b) with H computed edge by edge from the batch's own
/// rows: GCN over A + I (a loop added where none is), each term x[c] /
/// sqrt(deg(r) deg(c)) with the degrees of A + I; GIN x[r] + sum of x[c].
std::vector<double> directLayer(const BatchedGraph &batch,
                                const LayerInputs &in) {
  const CsrGraph &g = batch.graph;
  const int64_t n = g.numRows, f = in.width;
  std::vector<std::vector<int64_t>> neighbours(n);
  for (int64_t r = 0; r < n; ++r) {
    bool loop = false;
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e) {
      neighbours[r].push_back(g.colIdx[e]);
      loop |= g.colIdx[e] == r;
    }
    if (in.kind == LayerKind::Gcn && !loop)
      neighbours[r].push_back(r);
  }
  std::vector<double> y(n * f);
  for (int64_t r = 0; r < n; ++r) {
    std::vector<double> h(f, 0.0);
    for (int64_t c : neighbours[r]) {
      double factor = 1.0;
      if (in.kind == LayerKind::Gcn)
        factor = 1.0 / std::sqrt(double(neighbours[r].size()) *
                                 double(neighbours[c].size()));
      for (int64_t k = 0; k < f; ++k)
        h[k] += factor * in.x[c * f + k];
    }
    if (in.kind == LayerKind::Gin)
      for (int64_t k = 0; k < f; ++k)
        h[k] += in.x[r * f + k];
    for (int64_t j = 0; j < f; ++j) {
      double v = in.bias[j];
      for (int64_t k = 0; k < f; ++k)
        v += h[k] * in.weight[k * f + j];
      y[r * f + j] = std::max(0.0, v);
    }
  }
  return y;
}

TEST(BenchBatchedLayer, ReferenceMatchesADirectComputation) {
  const BatchedGraph batch = raggedBatch();
  for (LayerKind kind : {LayerKind::Gcn, LayerKind::Gin})
    for (ElementType type : {ElementType::F32, ElementType::F16}) {
      SCOPED_TRACE(std::string(layerKindName(kind)) + " " +
                   elementTypeName(type));
      Expected<LayerInputs> in = makeLayerInputs(batch, kind, type, 24, 5);
      ASSERT_TRUE(in) << in.message();
      EXPECT_EQ(in->nodes(), batch.graph.numRows);
      // The inputs are what the GPU reads: rounded to the type.
      EXPECT_EQ(in->x, ref::roundThrough(in->x, type));
      EXPECT_EQ(in->weight, ref::roundThrough(in->weight, type));
      EXPECT_EQ(in->bias, ref::roundThrough(in->bias, type));
      // GCN aggregates over A + I; the single node with a loop keeps one.
      EXPECT_EQ(in->graph.graph.nnz(),
                batch.graph.nnz() +
                    (kind == LayerKind::Gcn ? batch.graph.numRows - 1 : 0));
      std::vector<double> direct = directLayer(batch, *in);
      ASSERT_EQ(direct.size(), in->expected.size());
      int64_t positive = 0;
      for (size_t i = 0; i < direct.size(); ++i) {
        EXPECT_NEAR(in->expected[i], direct[i], 1e-9 * (1 + in->magnitude[i]))
            << "element " << i;
        EXPECT_GE(in->magnitude[i], std::fabs(in->expected[i]) - 1e-12);
        positive += in->expected[i] > 0;
      }
      // ReLU leaves a fair share of both signs' worth.
      EXPECT_GT(positive, int64_t(direct.size() / 5));
      EXPECT_LT(positive, int64_t(direct.size() * 4 / 5));
    }
}

TEST(BenchBatchedLayer, ComparisonCatchesOneWrongValue) {
  Expected<LayerInputs> in =
      makeLayerInputs(raggedBatch(), LayerKind::Gcn, ElementType::F16, 16, 9);
  ASSERT_TRUE(in) << in.message();
  std::vector<float> got(in->expected.begin(), in->expected.end());
  got = ref::roundThrough(got, ElementType::F16);
  ops::KernelCheck ok = compareLayerOutput(*in, got);
  EXPECT_TRUE(ok.ok) << ok.report;
  // Past the tolerance on one element of a non-trivial row.
  size_t i = 0;
  while (in->magnitude[i] < 0.1)
    ++i;
  std::vector<float> wrong = got;
  wrong[i] += float(4 * layerTolerance(ElementType::F16) * in->magnitude[i]);
  ops::KernelCheck bad = compareLayerOutput(*in, wrong);
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.report.find("gcn layer"), std::string::npos) << bad.report;
  std::vector<float> nan = got;
  nan.back() = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(compareLayerOutput(*in, nan).ok);
  got.pop_back();
  EXPECT_FALSE(compareLayerOutput(*in, got).ok);
}

TEST(BenchBatchedLayer, KindsAndBadInputs) {
  EXPECT_EQ(*parseLayerKind("gcn"), LayerKind::Gcn);
  EXPECT_EQ(*parseLayerKind("gin"), LayerKind::Gin);
  Expected<LayerKind> bad = parseLayerKind("sage");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("gcn or gin"), std::string::npos);
  EXPECT_FALSE(
      makeLayerInputs(raggedBatch(), LayerKind::Gin, ElementType::F32, 0, 1));
  OpDesc gcn = layerAggregateOp(LayerKind::Gcn, ElementType::F16, 64);
  EXPECT_TRUE(gcn.batchedGraph);
  EXPECT_EQ(gcn.scale, DegreeScale::Both);
  EXPECT_FALSE(gcn.selfWeight);
  OpDesc gin = layerAggregateOp(LayerKind::Gin, ElementType::F16, 64);
  EXPECT_EQ(gin.scale, DegreeScale::None);
  ASSERT_TRUE(gin.selfWeight);
  EXPECT_EQ(*gin.selfWeight, 0.0);
}

TEST(BenchBatchedReadout, CompulsoryBytes) {
  // 10 nodes, 3 graphs, width 4, f16: X 80 bytes, Y 24, graph_ptr 32.
  EXPECT_EQ(readoutBytes(10, 3, 4, ElementType::F16, Reduce::Sum, false),
            80 + 24 + 32);
  EXPECT_EQ(readoutBytes(10, 3, 4, ElementType::F16, Reduce::Mean, true),
            24 + 80 + 32);
  // The gradient of max also reads X and Y.
  EXPECT_EQ(readoutBytes(10, 3, 4, ElementType::F16, Reduce::Max, true),
            24 + 80 + 32 + 80 + 24);
}

/// Every layer kernel a batched case may compile (the batched schedules,
/// and every tile and thread count the model picks among) and every
/// readout kernel, for each type and a few widths.
std::string everyBatchedCaseKernel(size_t &count) {
  std::string text = "gnn.module @cases {\n";
  count = 0;
  for (ElementType type :
       {ElementType::F32, ElementType::F16, ElementType::BF16})
    for (int64_t width : {16, 64, 256}) {
      for (LayerKind kind : {LayerKind::Gcn, LayerKind::Gin}) {
        const OpDesc op = layerAggregateOp(kind, type, width);
        std::vector<std::string> schedules = batchedSchedulesFor(op);
        for (int tile : {32, 64, 128, 256})
          for (int threads : {128, 256}) {
            const std::string body =
                "strategy = batched, tile_rows = " + std::to_string(tile) +
                ", threads_per_block = " + std::to_string(threads);
            Expected<Schedule> s = parseSchedule(body);
            if (s && planWithDefaults(op, *s))
              schedules.push_back(s->str());
          }
        EXPECT_GE(schedules.size(), 4u);
        for (const std::string &s : schedules)
          text += layerKernelText("l" + std::to_string(count++), kind, type,
                                  width, parseSchedule(s).take());
      }
      for (Reduce reduce : {Reduce::Sum, Reduce::Mean, Reduce::Max})
        for (bool grad : {false, true})
          text += readoutKernelText("r" + std::to_string(count++), type, width,
                                    reduce, grad);
    }
  return text + "}\n";
}

class BatchedCaseCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(BatchedCaseCompile, EveryLayerAndReadoutKernelCompiles) {
  size_t count = 0;
  const std::string text = everyBatchedCaseKernel(count);
  Expected<CompiledModule> compiled = compileGnn(text, "cases.gnn");
  ASSERT_TRUE(compiled) << compiled.message();
  ASSERT_EQ(compiled->kernels.size(), count);
  rt::CompileOptions options;
  options.arch = GetParam();
  auto binary = rt::compileCuda(compiled->source, "cases.cu", options);
  ASSERT_TRUE(binary) << binary.message();
  for (const rt::KernelSpec &spec : compiled->kernels)
    EXPECT_NE(binary->binary.find(spec.name), std::string::npos)
        << spec.name << " is missing from the cubin";
}

INSTANTIATE_TEST_SUITE_P(Arch, BatchedCaseCompile,
                         ::testing::Values("sm_80", "sm_90"));

} // namespace
