//===- SpmmTest.cpp - CPU reference and comparison ------------------------===//

#include "TestUtil.h"

#include "gnnc/graph/Rmat.h"
#include "gnnc/reference/Spmm.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace gnnc;
using namespace gnnc::graph;
using namespace gnnc::ref;

namespace {

TEST(SpmmTest, HandComputed) {
  CsrGraph g = test::threeRowGraph();
  std::vector<float> x = {1, 2,   // node 0
                          3, 4,   // node 1
                          5, -6}; // node 2
  std::vector<double> y, absRef;
  spmmSum(g, nullptr, x.data(), 2, y, &absRef);
  // Row 0: 2*(3,4) - (5,-6) = (1, 14); row 1: 0; row 2: 0.5*(1,2) + 3*(5,-6).
  EXPECT_EQ(y, (std::vector<double>{1, 14, 0, 0, 15.5, -17}));
  EXPECT_EQ(absRef, (std::vector<double>{11, 14, 0, 0, 15.5, 19}));
  // Explicit edge values override; no values means ones.
  std::vector<float> ones(4, 1.0f);
  std::vector<double> yOnes;
  spmmSum(g, ones.data(), x.data(), 2, yOnes);
  g.values.clear();
  std::vector<double> yDefault;
  spmmSum(g, nullptr, x.data(), 2, yDefault);
  EXPECT_EQ(yOnes, (std::vector<double>{8, -2, 0, 0, 6, -4}));
  EXPECT_EQ(yDefault, yOnes);
}

TEST(SpmmTest, ThreadedMatchesSingleThreaded) {
  CsrGraph g = makeRaggedTestGraph(3, 4000, 10000, true);
  std::vector<float> x = randomFeatures(g.numCols * 16, 11);
  std::vector<double> one, many;
  spmmSum(g, nullptr, x.data(), 16, one, nullptr, 1);
  spmmSum(g, nullptr, x.data(), 16, many, nullptr, 5);
  EXPECT_EQ(one, many);
}

TEST(SpmmTest, SelfTermAfterTheRowFactor) {
  CsrGraph g = test::threeRowGraph();
  std::vector<float> x = {1, 2, 3, 4, 5, -6};
  SpmmOptions options;
  options.reduce = gnnc::Reduce::Mean;
  options.selfWeight = 0.5;
  std::vector<double> y, absRef;
  spmm(g, nullptr, x.data(), 2, options, y, &absRef);
  // Row 0: (1, 14) / 2 + 1.5 * (1, 2); row 1 (empty): 1.5 * (3, 4);
  // row 2: (15.5, -17) / 2 + 1.5 * (5, -6).
  EXPECT_EQ(y, (std::vector<double>{2, 10, 4.5, 6, 15.25, -17.5}));
  EXPECT_EQ(absRef, (std::vector<double>{7, 10, 4.5, 6, 15.25, 18.5}));
  // Without a self weight, the options give spmm's result.
  options.selfWeight.reset();
  std::vector<double> plain, expected;
  spmm(g, nullptr, x.data(), 2, options, plain);
  spmm(g, nullptr, x.data(), 2, gnnc::Reduce::Mean, DegreeScale::None, expected);
  EXPECT_EQ(plain, expected);
}

TEST(SpmmTest, HalfRunningSumStallsAndOverflows) {
  // One row of 5,000 ones: an f16 sum reaches 2,048, where the spacing is
  // 2 and 2048 + 1 rounds (to even) back to 2048.
  CsrGraph g;
  g.numRows = 2;
  g.numCols = 5000;
  g.rowPtr = {0, 5000, 5003};
  for (int64_t c = 0; c < 5000; ++c)
    g.colIdx.push_back(c);
  g.colIdx.insert(g.colIdx.end(), {0, 1, 2});
  std::vector<float> x(5000, 1.0f);
  SpmmOptions options;
  std::vector<double> y;
  spmmHalfRunningSum(g, nullptr, x.data(), 1, options, y);
  EXPECT_EQ(y, (std::vector<double>{2048, 3}));
  options.reduce = gnnc::Reduce::Mean;
  spmmHalfRunningSum(g, nullptr, x.data(), 1, options, y);
  EXPECT_FLOAT_EQ(y[0], 2048.0f / 5000.0f);
  EXPECT_FLOAT_EQ(y[1], 1.0f);
  // Terms of 1,000 overflow f16 (largest 65,504) to infinity.
  std::fill(x.begin(), x.end(), 1000.0f);
  options.reduce = gnnc::Reduce::Sum;
  spmmHalfRunningSum(g, nullptr, x.data(), 1, options, y);
  EXPECT_TRUE(std::isinf(y[0]));
  EXPECT_EQ(y[1], 3000);
}

TEST(SpmmTest, CompareReportsMismatches) {
  std::vector<double> ref = {1, 2, 3, 4, 5, 6};
  std::vector<float> got = {1, 2, 3, 4, 5, 6};
  std::string report;
  EXPECT_TRUE(compareToReference(got, ref, 3, 1e-5, 0, &report).isOk());
  EXPECT_NE(report.find("0 of 6 elements differ"), std::string::npos) << report;
  got[4] = 5.1f;
  got[5] = 6.0001f;
  Status s = compareToReference(got, ref, 3, 1e-3, 0, &report);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("1 of 6 elements differ"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("(row 1, col 1): got 5.0999999"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("expected 5"), std::string::npos);
  EXPECT_NE(s.message().find("max relative error 0.02"), std::string::npos)
      << s.message();
  EXPECT_EQ(report, s.message());
}

TEST(SpmmTest, CompareCatchesNanAndInf) {
  std::vector<double> ref = {1, 2};
  std::vector<float> got = {1, NAN};
  Status s = compareToReference(got, ref, 2, 1e10, 1e10, nullptr);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("(row 0, col 1): got nan"), std::string::npos)
      << s.message();
  got[1] = INFINITY;
  EXPECT_FALSE(compareToReference(got, ref, 2, 1e10, 1e10).isOk());
  std::vector<double> nanRef = {1, NAN};
  std::vector<float> nanGot = {1, NAN};
  EXPECT_FALSE(compareToReference(nanGot, nanRef, 2, 1, 1).isOk());
  EXPECT_FALSE(compareToReference({1}, ref, 1, 1, 1).isOk()); // size
}

TEST(SpmmTest, ScaledCompareToleratesCancellation) {
  // Terms 1000 and -1000 + 0.001 cancel: |ref| is tiny, sum |terms| is not.
  std::vector<double> ref = {0.001, 5};
  std::vector<double> absRef = {2000, 5};
  std::vector<float> got = {0.0015f, 5.0f};
  EXPECT_FALSE(compareToReference(got, ref, 2, 1e-2, 0).isOk());
  EXPECT_TRUE(compareToReferenceScaled(got, ref, absRef, 2, 1e-5).isOk());
  got[1] = 5.1f;
  std::string report;
  Status s = compareToReferenceScaled(got, ref, absRef, 2, 1e-5, &report);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(report.find("(row 0, col 1)"), std::string::npos) << report;
  // Empty rows (absRef 0) must be exactly zero.
  EXPECT_FALSE(compareToReferenceScaled({1e-20f}, {0}, {0}, 1, 1e-2).isOk());
  EXPECT_TRUE(compareToReferenceScaled({0}, {0}, {0}, 1, 1e-2).isOk());
}

TEST(SpmmTest, HalfPrecisionWorkflow) {
  CsrGraph g = makeRaggedTestGraph(5, 3000, 10000, true);
  int64_t width = 8;
  for (ElementType type : {ElementType::F16, ElementType::BF16}) {
    std::vector<float> x =
        roundThrough(randomFeatures(g.numCols * width, 99), type);
    std::vector<float> vals = roundThrough(g.values, type);
    std::vector<double> y, absRef;
    spmmSum(g, vals.data(), x.data(), width, y, &absRef);
    // Emulate a kernel that accumulates in f32 and stores 16-bit output.
    std::vector<float> got(y.size());
    for (size_t i = 0; i < y.size(); ++i)
      got[i] = roundToElementType(static_cast<float>(y[i]), type);
    std::string report;
    double tol = type == ElementType::F16 ? 1e-3 : 8e-3;
    double absTol = type == ElementType::F16 ? 3e-8 : 0.0;
    EXPECT_TRUE(
        compareToReferenceScaled(got, y, absRef, width, tol, &report, absTol)
            .isOk())
        << elementTypeName(type) << ": " << report;
    // A wrong result is still caught.
    got[width * 1234 + 3] += 1.0f;
    EXPECT_FALSE(
        compareToReferenceScaled(got, y, absRef, width, tol, &report, absTol)
            .isOk());
  }
}

TEST(SpmmTest, RandomFeaturesAndEncoding) {
  std::vector<float> a = randomFeatures(1000, 5, -2, 3);
  EXPECT_EQ(a, randomFeatures(1000, 5, -2, 3));
  EXPECT_NE(a, randomFeatures(1000, 6, -2, 3));
  for (float v : a) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LT(v, 3.0f);
  }
  std::vector<float> h = roundThrough(a, ElementType::F16);
  EXPECT_EQ(decode16(encode16(a, ElementType::F16), ElementType::F16), h);
  std::vector<float> b = roundThrough(a, ElementType::BF16);
  EXPECT_EQ(decode16(encode16(a, ElementType::BF16), ElementType::BF16), b);
  EXPECT_EQ(roundThrough(a, ElementType::F32), a);
}

} // namespace
