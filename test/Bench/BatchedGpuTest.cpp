//===- BatchedGpuTest.cpp - gnn-bench's batched cases on a GPU ------------===//
//
// On a small ragged batch: the unfused GCN and GIN layers (gnnc's batched
// aggregation, then cuBLASLt's GEMM with the bias and ReLU epilogue) pass
// their check against the double reference and are timed, a poisoned Y
// fails the same check, and gnn.readout / gnn.readout_grad pass theirs and
// are timed. Skips, saying why, without a GPU.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Bench/Batched.h"

#include <gtest/gtest.h>

using namespace gnnc;
using namespace gnnc::bench;
using namespace gnnc::graph;
using json = nlohmann::json;

namespace {

/// A batch of PROTEINS-like sizes (a few graphs larger than a tile) with
/// an empty graph and a single node among them.
BatchedGraph smallBatch() {
  BatchedGraph prot = generateMoleculeBatch(proteinLikeOptions(24), 5);
  std::vector<CsrGraph> graphs;
  CsrGraph empty, single;
  empty.rowPtr = {0};
  single.numRows = single.numCols = 1;
  single.rowPtr = {0, 0};
  for (int64_t k = 0; k < prot.numGraphs(); ++k) {
    graphs.push_back(graphOf(prot, k));
    if (k == 3)
      graphs.push_back(empty);
    if (k == 10)
      graphs.push_back(single);
  }
  Expected<BatchedGraph> b = collate(graphs);
  EXPECT_TRUE(b) << b.message();
  return b.take();
}

Expected<Bench> makeBench() {
  TimingOptions timing;
  timing.warmups = 1;
  timing.runs = 3;
  return Bench::create(timing);
}

TEST(BenchBatchedGpu, LayersPassTheirCheckAndAreTimed) {
  std::string why;
  if (!rt::gpuAvailable(&why))
    GTEST_SKIP() << "no GPU: " << why;
  Expected<Bench> bench = makeBench();
  ASSERT_TRUE(bench) << bench.message();
  Expected<CublasLt> lt = CublasLt::create(*bench);
  ASSERT_TRUE(lt) << lt.message();
  const BatchedGraph batch = smallBatch();
  for (LayerKind kind : {LayerKind::Gcn, LayerKind::Gin})
    for (ElementType type :
         {ElementType::F32, ElementType::F16, ElementType::BF16}) {
      int failures = 0;
      json r = runBatchedLayerCase(*bench, &*lt, "small", batch, kind, type, 32,
                                   0.0, 3, failures);
      SCOPED_TRACE(r.dump(1));
      EXPECT_EQ(failures, 0);
      EXPECT_EQ(r["check"], "ok");
      for (const char *key :
           {"spmm_ms", "gemm_ms", "unfused_ms", "fused_ms", "fused_default_ms",
            "fused_backward_ms", "backward_best_ms"}) {
        ASSERT_TRUE(r[key].is_number()) << key;
        EXPECT_GT(r[key].get<double>(), 0) << key;
      }
      // Every plan of the backward passed its check and was timed.
      EXPECT_EQ(r["backward_check"], "ok");
      EXPECT_EQ(r["backward_plans_ms"].size(), 4u);
      EXPECT_EQ(r["backward_steps_ms"].size(), 4u);
      // Every fused schedule passed its check on a poisoned Y.
      ASSERT_GE(r["fused_runs"].size(), 2u);
      for (const json &run : r["fused_runs"])
        EXPECT_EQ(run["status"], "ok") << run.dump();
      EXPECT_EQ(r["layer"], layerKindName(kind));
      EXPECT_EQ(r["nodes"], batch.graph.numRows);
      EXPECT_EQ(r["edges"], batch.graph.nnz());
      EXPECT_TRUE(r.contains("model_schedule"));
    }
}

TEST(BenchBatchedGpu, APoisonedLayerOutputFailsTheCheck) {
  std::string why;
  if (!rt::gpuAvailable(&why))
    GTEST_SKIP() << "no GPU: " << why;
  Expected<Bench> bench = makeBench();
  ASSERT_TRUE(bench) << bench.message();
  Expected<LayerInputs> in =
      makeLayerInputs(smallBatch(), LayerKind::Gcn, ElementType::F16, 16, 2);
  ASSERT_TRUE(in) << in.message();
  Expected<LayerProblem> p = uploadLayerProblem(in.take());
  ASSERT_TRUE(p) << p.message();
  // Y is allocated poisoned: nothing has written it.
  Expected<ops::KernelCheck> check = checkLayerOutput(*p);
  ASSERT_TRUE(check) << check.message();
  EXPECT_FALSE(check->ok) << check->report;
}

TEST(BenchBatchedGpu, ReadoutsPassTheirCheckAndAreTimed) {
  std::string why;
  if (!rt::gpuAvailable(&why))
    GTEST_SKIP() << "no GPU: " << why;
  Expected<Bench> bench = makeBench();
  ASSERT_TRUE(bench) << bench.message();
  const BatchedGraph batch = smallBatch();
  for (ElementType type : {ElementType::F32, ElementType::F16}) {
    int failures = 0;
    json records = runBatchedReadoutCases(
        *bench, "small", batch, type, 48,
        {Reduce::Sum, Reduce::Mean, Reduce::Max}, 100.0, 4, failures);
    SCOPED_TRACE(records.dump(1));
    EXPECT_EQ(failures, 0);
    ASSERT_EQ(records.size(), 3u);
    for (const json &r : records) {
      EXPECT_EQ(r["forward_check"], "ok");
      EXPECT_EQ(r["backward_check"], "ok");
      EXPECT_GT(r["forward_ms"].get<double>(), 0);
      EXPECT_GT(r["backward_ms"].get<double>(), 0);
      EXPECT_GT(r["forward_copy_fraction"].get<double>(), 0);
    }
  }
}

} // namespace
