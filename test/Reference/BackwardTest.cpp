//===- BackwardTest.cpp - Backward references -----------------------------===//
//
// The double-precision gradients of edge softmax, SpMM and SDDMM, checked by
// central finite differences of the forward references.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "gnnc/graph/Rmat.h"
#include "gnnc/reference/Backward.h"
#include "gnnc/reference/EdgeSoftmax.h"
#include "gnnc/reference/Sddmm.h"
#include "gnnc/reference/Spmm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

using namespace gnnc;

namespace {

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

TEST(BackwardReference, EdgeSoftmaxGradMatchesFiniteDifferences) {
  graph::CsrGraph g = test::backwardTestGraph();
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
    test::expectNear(dx, fd, 1e-4,
                     "softmax grad, heads " + std::to_string(heads));
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

TEST(BackwardReference, SpmmGradsMatchFiniteDifferences) {
  graph::CsrGraph g = test::backwardTestGraph();
  const int64_t width = 3;
  std::vector<float> x = ref::randomFeatures(g.numCols * width, 1);
  std::vector<float> dY = ref::randomFeatures(g.numRows * width, 2);
  for (gnnc::Reduce reduce : test::kGradReduces)
    for (gnnc::DegreeScale scale : test::kDegreeScales) {
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
      test::expectNear(dX, finiteDifferences(x, lossX, slot), 1e-5,
                       what + " dX");
      auto lossW = [&] {
        std::vector<double> y;
        ref::spmm(g, slot, x.data(), width, reduce, scale, y);
        return dotWith(y, dY);
      };
      ASSERT_TRUE(ref::spmmGradValues(g, x.data(), dY.data(), width, reduce,
                                      scale, dW));
      test::expectNear(dW, finiteDifferences(g.values, lossW, slot), 1e-5,
                       what + " dW");
    }
}

TEST(BackwardReference, SpmmMaxIsRejected) {
  graph::CsrGraph g = test::backwardTestGraph();
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
}

TEST(BackwardReference, SddmmGradsMatchFiniteDifferences) {
  graph::CsrGraph g = test::backwardTestGraph();
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
      test::expectNear(dA, finiteDifferences(a, lossA, slot), 1e-5,
                       what + " dA");
      test::expectNear(dB, finiteDifferences(b, lossB, slot), 1e-5,
                       what + " dB");
    }
}

} // namespace
