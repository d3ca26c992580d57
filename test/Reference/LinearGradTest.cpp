//===- LinearGradTest.cpp - The elementwise end of a layer's backward -----===//
//
// The host side of gnnc/ops/LinearGrad.h without a GPU: the reference
// against a finite difference of the layer's tail, the block count, and
// the helper kernels' specs and NVRTC compilation for sm_80 and sm_90.
//
//===----------------------------------------------------------------------===//
#include "gnnc/ops/LinearGrad.h"

#include "gnnc/runtime/KernelSpec.h"
#include "gnnc/runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace gnnc;

namespace {

/// The loss sum(w * relu(z + b)) over a few rows, for finite differences.
double tailLoss(const std::vector<float> &z, const std::vector<double> &b,
                const std::vector<float> &w, int64_t rows, int64_t width) {
  double loss = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < width; ++c)
      loss += w[r * width + c] * std::max(0.0, double(z[r * width + c]) + b[c]);
  return loss;
}

TEST(LinearGradTest, ReferenceMatchesAFiniteDifferenceOfTheBias) {
  const int64_t rows = 5, width = 3;
  const std::vector<float> z = {0.5f,  -1.f,  2.f,  -0.25f, 1.5f,
                                -2.f,  0.75f, 0.1f, -0.6f,  1.f,
                                -1.5f, 0.3f,  2.5f, -0.2f,  0.4f};
  const std::vector<float> dy = {1.f,   -2.f, 0.5f, 3.f,  0.25f, -1.f, 2.f, 1.f,
                                 -0.5f, 4.f,  1.5f, -3.f, 0.75f, 2.f,  -1.f};
  std::vector<double> b = {0.f, 0.f, 0.f};
  std::vector<float> y(z.size());
  for (size_t i = 0; i < z.size(); ++i)
    y[i] = std::max(0.f, z[i]);
  std::vector<double> dz, db, dbAbs;
  ops::reluBiasGradReference(y, dy, rows, width, dz, db, dbAbs);
  for (size_t i = 0; i < z.size(); ++i)
    EXPECT_EQ(dz[i], z[i] > 0 ? dy[i] : 0.0) << i;
  const double h = 1e-4;
  for (int64_t c = 0; c < width; ++c) {
    std::vector<double> up = b, down = b;
    up[c] += h;
    down[c] -= h;
    const double fd = (tailLoss(z, up, dy, rows, width) -
                       tailLoss(z, down, dy, rows, width)) /
                      (2 * h);
    EXPECT_NEAR(db[c], fd, 1e-6) << c;
    EXPECT_GE(dbAbs[c], std::fabs(db[c]));
  }
}

TEST(LinearGradTest, BlocksPerSmAtMostOnePerRow) {
  EXPECT_EQ(ops::linearGradBlocks(1000000, 132), 4 * 132);
  EXPECT_EQ(ops::linearGradBlocks(7, 132), 7);
  EXPECT_EQ(ops::linearGradBlocks(0, 132), 1);
  EXPECT_EQ(ops::linearGradBlocks(100, 0), 4);
}

TEST(LinearGradTest, KernelsCompile) {
  std::vector<rt::KernelSpec> specs = ops::linearGradKernelSpecs();
  ASSERT_EQ(specs.size(), 12u);
  for (const rt::KernelSpec &spec : specs) {
    Status valid = rt::validateKernelSpec(spec);
    EXPECT_TRUE(valid.isOk()) << spec.name << ": " << valid.message();
  }
  for (const char *arch : {"sm_80", "sm_90"}) {
    rt::CompileOptions options;
    options.arch = arch;
    options.ptx = true;
    auto compiled =
        rt::compileCuda(specs.front().source, "linear_grad.cu", options);
    ASSERT_TRUE(compiled.isOk()) << arch << ": " << compiled.message();
    for (const rt::KernelSpec &spec : specs)
      EXPECT_NE(compiled->binary.find(".entry " + spec.name), std::string::npos)
          << arch << ": no entry " << spec.name;
  }
}

} // namespace
