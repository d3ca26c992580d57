//===- BackwardTest.cpp - Transpose and backward compositions -------------===//
//
// The transpose with its edge map, and the compositions gnnc uses on the GPU
// for the backward ops (a gnn.spmm over the transpose, gnn.sddmm for
// edge-value gradients, gnn.spmm over the edge graphs) checked on the CPU
// against the gradients of the reference (test/Reference/BackwardTest.cpp
// checks those by finite differences).
//
//===----------------------------------------------------------------------===//
#include "Reference/TestUtil.h"

#include "gnnc/graph/Rmat.h"
#include "gnnc/ops/Backward.h"
#include "gnnc/reference/Backward.h"
#include "gnnc/reference/Sddmm.h"
#include "gnnc/reference/Spmm.h"

#include <gtest/gtest.h>

#include <optional>

using namespace gnnc;

namespace {

TEST(Transpose, EdgeMapMovesEveryEdge) {
  graph::CsrGraph g = graph::makeRaggedTestGraph(3, 3000, 2000, true);
  graph::TransposedGraph t = graph::transposeWithEdgeMap(g);
  ASSERT_TRUE(t.graph.validate());
  EXPECT_EQ(t.graph.numRows, g.numCols);
  EXPECT_EQ(t.graph.numCols, g.numRows);
  EXPECT_TRUE(t.graph.isSortedAndUnique());
  ASSERT_EQ(t.edgeOf.size(), static_cast<size_t>(g.nnz()));
  std::vector<int64_t> rowOf(g.nnz());
  for (int64_t r = 0; r < g.numRows; ++r)
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e)
      rowOf[e] = r;
  std::vector<bool> seen(g.nnz(), false);
  for (int64_t c = 0; c < t.graph.numRows; ++c)
    for (int64_t i = t.graph.rowPtr[c]; i < t.graph.rowPtr[c + 1]; ++i) {
      int64_t e = t.edgeOf[i];
      ASSERT_GE(e, 0);
      ASSERT_LT(e, g.nnz());
      EXPECT_FALSE(seen[e]) << "edge " << e << " mapped twice";
      seen[e] = true;
      // Transposed edge (c, r) is original edge (r, c), with its value.
      EXPECT_EQ(g.colIdx[e], c);
      EXPECT_EQ(t.graph.colIdx[i], rowOf[e]);
      EXPECT_EQ(t.graph.values[i], g.values[e]);
    }
  // transpose() is the same graph; transposing twice gives g back.
  graph::CsrGraph plain = graph::transpose(g);
  EXPECT_EQ(plain.rowPtr, t.graph.rowPtr);
  EXPECT_EQ(plain.colIdx, t.graph.colIdx);
  graph::CsrGraph back = graph::transpose(t.graph);
  EXPECT_EQ(back.rowPtr, g.rowPtr);
  EXPECT_EQ(back.colIdx, g.colIdx);
  EXPECT_EQ(back.values, g.values);
}

TEST(Transpose, PermutesEdgeDataWithWidth) {
  graph::CsrGraph g = test::backwardTestGraph();
  graph::TransposedGraph t = graph::transposeWithEdgeMap(g);
  std::vector<float> data(g.nnz() * 3);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<float>(i);
  std::vector<float> moved = graph::permuteEdgeData(data, t.edgeOf, 3);
  for (size_t i = 0; i < t.edgeOf.size(); ++i)
    for (int h = 0; h < 3; ++h)
      EXPECT_EQ(moved[i * 3 + h], data[t.edgeOf[i] * 3 + h]);
}

TEST(Transpose, EmptyAndRectangular) {
  graph::CsrGraph empty;
  empty.numRows = 3;
  empty.numCols = 7;
  empty.rowPtr = {0, 0, 0, 0};
  graph::TransposedGraph t = graph::transposeWithEdgeMap(empty);
  EXPECT_TRUE(t.graph.validate());
  EXPECT_EQ(t.graph.numRows, 7);
  EXPECT_EQ(t.graph.rowPtr, std::vector<int64_t>(8, 0));
  EXPECT_TRUE(t.edgeOf.empty());
}

TEST(BackwardComposition, SpmmFeatureGradIsSpmmOverTheTranspose) {
  graph::CsrGraph g = graph::makeRaggedTestGraph(5, 3000, 2500, true);
  const int64_t width = 5;
  std::vector<float> dY = ref::randomFeatures(g.numRows * width, 11);
  graph::TransposedGraph t = graph::transposeWithEdgeMap(g);
  std::vector<float> valuesT = graph::permuteEdgeData(g.values, t.edgeOf);
  for (gnnc::Reduce reduce : test::kGradReduces)
    for (gnnc::DegreeScale scale : test::kDegreeScales) {
      auto form = ops::spmmFeatureGradForm(reduce, scale);
      ASSERT_TRUE(form);
      std::vector<double> expected, got;
      ASSERT_TRUE(ref::spmmGradFeatures(g, g.values.data(), dY.data(), width,
                                        reduce, scale, expected));
      ref::spmm(t.graph, valuesT.data(), dY.data(), width, gnnc::Reduce::Sum,
                form->scale, got, nullptr, 0, form->colNormExponent);
      test::expectNear(got, expected, 1e-12,
                       "reduce " + std::to_string(int(reduce)) + " scale " +
                           std::to_string(int(scale)));
    }
}

TEST(BackwardComposition, SpmmFeatureGradKernelText) {
  auto text = ops::spmmFeatureGradKernelText(
      "mean_both", ElementType::BF16, 8, true, gnnc::Reduce::Mean,
      gnnc::DegreeScale::Both, "i32", "i32", "dim_workers = 4");
  ASSERT_TRUE(text) << text.message();
  EXPECT_NE(text->find("gnn.kernel @mean_both(%gt: !gnn.graph<csr, i32, i32>, "
                       "%dy: tensor<?x8xbf16>, %wt: tensor<?xbf16>)"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("{scale = #gnn<scale both>, col_norm_exponent = 1.5 : "
                       "f32, schedule = #gnn.schedule<dim_workers = 4>}"),
            std::string::npos)
      << *text;
  auto plain = ops::spmmFeatureGradKernelText("sum", ElementType::F32, 8, false,
                                              gnnc::Reduce::Sum,
                                              gnnc::DegreeScale::Right);
  ASSERT_TRUE(plain);
  EXPECT_NE(plain->find("{scale = #gnn<scale left>}"), std::string::npos)
      << *plain;
}

TEST(BackwardComposition, SpmmMaxHasNoFeatureGradKernel) {
  auto form =
      ops::spmmFeatureGradForm(gnnc::Reduce::Max, gnnc::DegreeScale::None);
  EXPECT_FALSE(form);
  EXPECT_FALSE(ops::spmmFeatureGradKernelText("k", ElementType::F32, 4, false,
                                              gnnc::Reduce::Max,
                                              gnnc::DegreeScale::None));
}

TEST(BackwardComposition, SpmmValueGradIsSddmmTimesEdgeFactors) {
  graph::CsrGraph g = graph::makeRaggedTestGraph(6, 2000, 1500);
  const int64_t width = 7;
  std::vector<float> x = ref::randomFeatures(g.numCols * width, 12);
  std::vector<float> dY = ref::randomFeatures(g.numRows * width, 13);
  for (gnnc::Reduce reduce : test::kGradReduces)
    for (gnnc::DegreeScale scale : test::kDegreeScales) {
      std::vector<double> expected, raw;
      ASSERT_TRUE(ref::spmmGradValues(g, x.data(), dY.data(), width, reduce,
                                      scale, expected));
      ref::sddmm(g, dY.data(), x.data(), width, gnnc::SddmmForm::Dot,
                 std::nullopt, raw);
      std::vector<float> got(raw.begin(), raw.end());
      ops::scaleEdgeGrad(g, reduce, scale, got);
      // The sddmm result and the scaled values were rounded to float.
      test::expectNear(std::vector<double>(got.begin(), got.end()), expected,
                       1e-6, "value grad");
    }
}

TEST(BackwardComposition, SddmmGradsAreSpmms) {
  graph::CsrGraph g = graph::makeRaggedTestGraph(7, 2000, 1500);
  const int64_t width = 3;
  std::vector<float> a = ref::randomFeatures(g.numRows * width, 14);
  std::vector<float> b = ref::randomFeatures(g.numCols * width, 15);
  graph::TransposedGraph t = graph::transposeWithEdgeMap(g);
  for (gnnc::SddmmForm form : {gnnc::SddmmForm::Dot, gnnc::SddmmForm::Add})
    for (std::optional<float> slope :
         {std::optional<float>(), std::optional<float>(0.2f)}) {
      const bool dot = form == gnnc::SddmmForm::Dot;
      std::vector<float> gradOut =
          ref::randomFeatures(g.nnz() * (dot ? 1 : width), 16);
      std::vector<double> dA, dB, gotA, gotB;
      ref::sddmmGrad(g, a.data(), b.data(), width, form, slope, gradOut.data(),
                     dA, dB);
      std::vector<float> grad = gradOut;
      if (slope)
        ops::leakyReluGrad(g, a.data(), b.data(), width, form, *slope, grad);
      if (dot) {
        ref::spmmSum(g, grad.data(), b.data(), width, gotA);
        std::vector<float> gradT = graph::permuteEdgeData(grad, t.edgeOf);
        ref::spmmSum(t.graph, gradT.data(), a.data(), width, gotB);
      } else {
        ref::spmmSum(ops::rowEdgeGraph(g), nullptr, grad.data(), width, gotA);
        ref::spmmSum(ops::columnEdgeGraph(g), nullptr, grad.data(), width,
                     gotB);
      }
      std::string what =
          std::string(dot ? "dot" : "add") + (slope ? " leaky" : "");
      test::expectNear(gotA, dA, 1e-6, what + " dA");
      test::expectNear(gotB, dB, 1e-6, what + " dB");
    }
}

} // namespace
