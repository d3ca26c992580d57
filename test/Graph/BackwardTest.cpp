//===- BackwardTest.cpp - Transpose and backward references ---------------===//
//
// The transpose with its edge map, the double-precision gradients of
// edge softmax, SpMM and SDDMM checked by central finite differences of the
// forward references, and the compositions gnnc uses on the GPU (a gnn.spmm
// over the transpose, gnn.sddmm for edge-value gradients, gnn.spmm over the
// edge graphs) checked against those gradients on the CPU.
//
//===----------------------------------------------------------------------===//
#include "gnnc/ops/Backward.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/reference/Backward.h"
#include "gnnc/reference/EdgeSoftmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

using namespace gnnc;

namespace {

/// 6 x 5: an empty first row, a row of one edge, a row of every column, an
/// empty column (3) and an empty last row; values in [-1, 1).
graph::CsrGraph tinyGraph() {
  auto g = graph::fromCoo(6, 5, {1, 2, 2, 2, 2, 3, 3, 4},
                          {2, 0, 1, 2, 4, 4, 0, 1}, ref::randomFeatures(8, 99));
  EXPECT_TRUE(g) << g.message();
  g->name = "tiny";
  return g.take();
}

/// d/dv[i] of f, by central differences with the steps actually taken in
/// float (so the error is the O(h^2) term only).
std::vector<double> finiteDifferences(std::vector<float> v,
                                      const std::function<double()> &f,
                                      float *&slot) {
  std::vector<double> grad(v.size());
  std::vector<float> work = v;
  slot = work.data();
  for (size_t i = 0; i < v.size(); ++i) {
    const float h = 1e-2f * std::max(1.0f, std::fabs(v[i]));
    work[i] = v[i] + h;
    double up = f();
    double hp = static_cast<double>(work[i]) - v[i];
    work[i] = v[i] - h;
    double down = f();
    double hm = v[i] - static_cast<double>(work[i]);
    work[i] = v[i];
    grad[i] = (up - down) / (hp + hm);
  }
  return grad;
}

double dotWith(const std::vector<double> &y, const std::vector<float> &w) {
  double sum = 0;
  for (size_t i = 0; i < y.size(); ++i)
    sum += y[i] * w[i];
  return sum;
}

void expectNear(const std::vector<double> &got,
                const std::vector<double> &expected, double tol,
                const std::string &what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], tol * (1 + std::fabs(expected[i])))
        << what << " at " << i;
}

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
  graph::CsrGraph g = tinyGraph();
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

TEST(BackwardReference, EdgeSoftmaxGradMatchesFiniteDifferences) {
  graph::CsrGraph g = tinyGraph();
  for (int64_t heads : {1, 2}) {
    std::vector<float> logits = ref::randomFeatures(g.nnz() * heads, 5, -3, 3);
    std::vector<float> gradOut = ref::randomFeatures(g.nnz() * heads, 6);
    float *slot = nullptr;
    auto loss = [&] {
      std::vector<double> out;
      ref::edgeSoftmax(g, slot, heads, out);
      return dotWith(out, gradOut);
    };
    std::vector<double> fd = finiteDifferences(logits, loss, slot);
    std::vector<double> out, dx;
    ref::edgeSoftmax(g, logits.data(), heads, out);
    std::vector<float> outF(out.begin(), out.end());
    ref::edgeSoftmaxGrad(g, outF.data(), gradOut.data(), heads, dx);
    expectNear(dx, fd, 1e-4, "softmax grad, heads " + std::to_string(heads));
  }
}

TEST(BackwardReference, EdgeSoftmaxGradOfARowSumsToZero) {
  // Softmax outputs of a row sum to 1: the logits' gradient sums to 0.
  graph::CsrGraph g = graph::makeRaggedTestGraph(4, 2000, 1500);
  std::vector<float> logits = ref::randomFeatures(g.nnz() * 3, 8, -8, 8);
  std::vector<double> out, dx;
  ref::edgeSoftmax(g, logits.data(), 3, out);
  std::vector<float> outF(out.begin(), out.end());
  std::vector<float> gradOut = ref::randomFeatures(g.nnz() * 3, 9);
  ref::edgeSoftmaxGrad(g, outF.data(), gradOut.data(), 3, dx);
  for (int64_t r = 0; r < g.numRows; ++r)
    for (int h = 0; h < 3; ++h) {
      double sum = 0, abs = 0;
      for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e) {
        sum += dx[e * 3 + h];
        abs += std::fabs(dx[e * 3 + h]);
      }
      // out was rounded to float: its row sums differ from 1 by ~1e-7.
      EXPECT_NEAR(sum, 0.0, 1e-6 * (1 + abs)) << "row " << r;
    }
}

const gnnc::Reduce kReduces[] = {gnnc::Reduce::Sum,
                                    gnnc::Reduce::Mean};
const gnnc::DegreeScale kScales[] = {
    gnnc::DegreeScale::None, gnnc::DegreeScale::Left, gnnc::DegreeScale::Right,
    gnnc::DegreeScale::Both};

TEST(BackwardReference, SpmmGradsMatchFiniteDifferences) {
  graph::CsrGraph g = tinyGraph();
  const int64_t width = 3;
  std::vector<float> x = ref::randomFeatures(g.numCols * width, 1);
  std::vector<float> dY = ref::randomFeatures(g.numRows * width, 2);
  for (gnnc::Reduce reduce : kReduces)
    for (gnnc::DegreeScale scale : kScales) {
      std::string what = "reduce " + std::to_string(int(reduce)) + " scale " +
                         std::to_string(int(scale));
      float *slot = nullptr;
      auto lossX = [&] {
        std::vector<double> y;
        ref::spmm(g, g.values.data(), slot, width, reduce, scale, y);
        return dotWith(y, dY);
      };
      std::vector<double> dX, dW;
      ASSERT_TRUE(ref::spmmGradFeatures(g, g.values.data(), dY.data(), width,
                                        reduce, scale, dX));
      expectNear(dX, finiteDifferences(x, lossX, slot), 1e-5, what + " dX");
      auto lossW = [&] {
        std::vector<double> y;
        ref::spmm(g, slot, x.data(), width, reduce, scale, y);
        return dotWith(y, dY);
      };
      ASSERT_TRUE(ref::spmmGradValues(g, x.data(), dY.data(), width, reduce,
                                      scale, dW));
      expectNear(dW, finiteDifferences(g.values, lossW, slot), 1e-5,
                 what + " dW");
    }
}

TEST(BackwardReference, SpmmMaxIsRejected) {
  graph::CsrGraph g = tinyGraph();
  std::vector<float> dY(g.numRows), x(g.numCols);
  std::vector<double> out;
  Status st =
      ref::spmmGradFeatures(g, nullptr, dY.data(), 1, gnnc::Reduce::Max,
                            gnnc::DegreeScale::None, out);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("reduce = max"), std::string::npos);
  EXPECT_FALSE(ref::spmmGradValues(g, x.data(), dY.data(), 1,
                                   gnnc::Reduce::Max, gnnc::DegreeScale::Both,
                                   out));
  auto form =
      ops::spmmFeatureGradForm(gnnc::Reduce::Max, gnnc::DegreeScale::None);
  EXPECT_FALSE(form);
  EXPECT_FALSE(ops::spmmFeatureGradKernelText("k", ElementType::F32, 4, false,
                                              gnnc::Reduce::Max,
                                              gnnc::DegreeScale::None));
}

TEST(BackwardReference, SddmmGradsMatchFiniteDifferences) {
  graph::CsrGraph g = tinyGraph();
  const int64_t width = 4;
  std::vector<float> a = ref::randomFeatures(g.numRows * width, 3);
  std::vector<float> b = ref::randomFeatures(g.numCols * width, 4);
  // Features k/8 + 1/32 keep every add-form pre-activation at least 1/16
  // away from the leaky ReLU's kink, farther than the difference steps.
  for (std::vector<float> *v : {&a, &b})
    for (float &f : *v)
      f = std::round(f * 8) / 8 + 1.0f / 32;
  for (gnnc::SddmmForm form : {gnnc::SddmmForm::Dot, gnnc::SddmmForm::Add})
    for (std::optional<float> slope :
         {std::optional<float>(), std::optional<float>(0.2f)}) {
      const bool dot = form == gnnc::SddmmForm::Dot;
      std::string what =
          std::string(dot ? "dot" : "add") + (slope ? " leaky" : "");
      std::vector<float> gradOut =
          ref::randomFeatures(g.nnz() * (dot ? 1 : width), 7);
      std::vector<double> dA, dB;
      ref::sddmmGrad(g, a.data(), b.data(), width, form, slope, gradOut.data(),
                     dA, dB);
      float *slot = nullptr;
      auto lossA = [&] {
        std::vector<double> out;
        ref::sddmm(g, slot, b.data(), width, form, slope, out);
        return dotWith(out, gradOut);
      };
      auto lossB = [&] {
        std::vector<double> out;
        ref::sddmm(g, a.data(), slot, width, form, slope, out);
        return dotWith(out, gradOut);
      };
      expectNear(dA, finiteDifferences(a, lossA, slot), 1e-5, what + " dA");
      expectNear(dB, finiteDifferences(b, lossB, slot), 1e-5, what + " dB");
    }
}

TEST(BackwardComposition, SpmmFeatureGradIsSpmmOverTheTranspose) {
  graph::CsrGraph g = graph::makeRaggedTestGraph(5, 3000, 2500, true);
  const int64_t width = 5;
  std::vector<float> dY = ref::randomFeatures(g.numRows * width, 11);
  graph::TransposedGraph t = graph::transposeWithEdgeMap(g);
  std::vector<float> valuesT = graph::permuteEdgeData(g.values, t.edgeOf);
  for (gnnc::Reduce reduce : kReduces)
    for (gnnc::DegreeScale scale : kScales) {
      auto form = ops::spmmFeatureGradForm(reduce, scale);
      ASSERT_TRUE(form);
      std::vector<double> expected, got;
      ASSERT_TRUE(ref::spmmGradFeatures(g, g.values.data(), dY.data(), width,
                                        reduce, scale, expected));
      ref::spmm(t.graph, valuesT.data(), dY.data(), width, gnnc::Reduce::Sum,
                form->scale, got, nullptr, 0, form->colNormExponent);
      expectNear(got, expected, 1e-12,
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

TEST(BackwardComposition, SpmmValueGradIsSddmmTimesEdgeFactors) {
  graph::CsrGraph g = graph::makeRaggedTestGraph(6, 2000, 1500);
  const int64_t width = 7;
  std::vector<float> x = ref::randomFeatures(g.numCols * width, 12);
  std::vector<float> dY = ref::randomFeatures(g.numRows * width, 13);
  for (gnnc::Reduce reduce : kReduces)
    for (gnnc::DegreeScale scale : kScales) {
      std::vector<double> expected, raw;
      ASSERT_TRUE(ref::spmmGradValues(g, x.data(), dY.data(), width, reduce,
                                      scale, expected));
      ref::sddmm(g, dY.data(), x.data(), width, gnnc::SddmmForm::Dot,
                 std::nullopt, raw);
      std::vector<float> got(raw.begin(), raw.end());
      ops::scaleEdgeGrad(g, reduce, scale, got);
      // The sddmm result and the scaled values were rounded to float.
      expectNear(std::vector<double>(got.begin(), got.end()), expected, 1e-6,
                 "value grad");
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
      expectNear(gotA, dA, 1e-6, what + " dA");
      expectNear(gotB, dB, 1e-6, what + " dB");
    }
}

} // namespace
