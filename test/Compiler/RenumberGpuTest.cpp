//===- RenumberGpuTest.cpp - Renumbered graphs in the user's order (GPU) --===//
//
// Runs generated gnn.spmm kernels on renumbered graphs through
// ops::launchSpmmInUserOrder, with inputs and outputs in the user's node
// and edge order, and compares every output with the double-precision CPU
// reference on the user's graph. Also checks the row-gather kernels byte for
// byte against the host.
//
// Skips, saying why, when no GPU is present.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/ops/Renumber.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/reference/Spmm.h"

#include <gtest/gtest.h>

#include <memory>

using namespace gnnc;

namespace {

// f32 sum (default schedule), f16 with edge values edge-parallel (rows of
// 41 halves: 2-byte words), f32 mean with scale = both, and neighbour
// groups.
const char *kKernels = R"(
gnn.module @renumber {
  gnn.kernel @sum_f32(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x32xf32>)
      -> tensor<?x32xf32> {
    %y = gnn.spmm %g, %x : !gnn.graph<csr, i64, i32>, tensor<?x32xf32>
           -> tensor<?x32xf32>
    gnn.return %y : tensor<?x32xf32>
  }
  gnn.kernel @weighted_f16_ep(%g: !gnn.graph<csr, i64, i32>,
                              %x: tensor<?x41xf16>, %w: tensor<?xf16>)
      -> tensor<?x41xf16> {
    %y = gnn.spmm %g, %x values(%w : tensor<?xf16>)
           {schedule = #gnn.schedule<strategy = edge_parallel,
                                     edges_per_warp = 64>}
           : !gnn.graph<csr, i64, i32>, tensor<?x41xf16> -> tensor<?x41xf16>
    gnn.return %y : tensor<?x41xf16>
  }
  gnn.kernel @mean_both_f32(%g: !gnn.graph<csr, i64, i32>,
                            %x: tensor<?x16xf32>) -> tensor<?x16xf32> {
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce mean>,
                          scale = #gnn<scale both>}
           : !gnn.graph<csr, i64, i32>, tensor<?x16xf32> -> tensor<?x16xf32>
    gnn.return %y : tensor<?x16xf32>
  }
  gnn.kernel @sum_f32_ng(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x32xf32>)
      -> tensor<?x32xf32> {
    %y = gnn.spmm %g, %x
           {schedule = #gnn.schedule<strategy = neighbor_group>}
           : !gnn.graph<csr, i64, i32>, tensor<?x32xf32> -> tensor<?x32xf32>
    gnn.return %y : tensor<?x32xf32>
  }
  gnn.kernel @padded_f16(%g: !gnn.graph<csr, i64, i32>,
                         %x: tensor<?x41xf16, #gnn.rows<stride = 48>>)
      -> tensor<?x41xf16, #gnn.rows<stride = 48>> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 8>}
           : !gnn.graph<csr, i64, i32>, tensor<?x41xf16, #gnn.rows<stride = 48>>
           -> tensor<?x41xf16, #gnn.rows<stride = 48>>
    gnn.return %y : tensor<?x41xf16, #gnn.rows<stride = 48>>
  }
}
)";

using Suite = test::GpuKernels;

Suite &suite() {
  static Suite *s = [] {
    auto *s = new Suite;
    test::loadGpuKernels(*s, kKernels, "renumber.gnn");
    return s;
  }();
  return *s;
}

#define REQUIRE_SUITE()                                                        \
  do {                                                                         \
    if (!suite().skipReason.empty())                                           \
      GTEST_SKIP() << suite().skipReason;                                      \
    ASSERT_TRUE(suite().error.empty()) << suite().error;                       \
  } while (false)

std::vector<graph::CsrGraph> graphs() {
  std::vector<graph::CsrGraph> gs;
  gs.push_back(graph::generateRmat(14, 16, 7));
  gs.back().name = "rmat14";
  gs.push_back(graph::makeRaggedTestGraph(3, 6000, 4000));
  gs.back().name = "ragged";
  return gs;
}

/// Runs `kernel` through launchSpmmInUserOrder on `g` renumbered in
/// `order`, with y poisoned first, and compares with the reference on `g`.
void checkInUserOrder(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                      const graph::CsrGraph &g, const std::string &order) {
  auto sig = ops::spmmSignature(kernel.spec);
  ASSERT_TRUE(sig.isOk()) << sig.message();
  ASSERT_FALSE(sig->padded());
  const int64_t width = sig->featureWidth;
  std::vector<float> x =
      ref::roundThrough(ref::randomFeatures(g.numRows * width, 21), sig->type);
  std::vector<float> values;
  if (sig->edgeValues)
    values = ref::roundThrough(ref::randomFeatures(g.nnz(), 22), sig->type);

  auto rg = ops::renumberGraph(g, order);
  ASSERT_TRUE(rg.isOk()) << rg.message();
  auto dg = ops::uploadRenumberedGraph(runtime, *rg, *sig);
  ASSERT_TRUE(dg.isOk()) << dg.message();
  auto dx = ops::uploadTensor(x, sig->type);
  ASSERT_TRUE(dx.isOk()) << dx.message();
  Expected<rt::DeviceBuffer> dv = Status::error("unused");
  if (sig->edgeValues) {
    dv = ops::uploadTensor(values, sig->type);
    ASSERT_TRUE(dv.isOk()) << dv.message();
  }
  const size_t count = static_cast<size_t>(g.numRows * width);
  auto dy = ops::allocatePoisoned(count, sig->type);
  ASSERT_TRUE(dy.isOk()) << dy.message();
  Status run = ops::launchSpmmInUserOrder(
      runtime, kernel, *dg, *dx, sig->edgeValues ? &*dv : nullptr, *dy);
  ASSERT_TRUE(run.isOk()) << run.message();
  auto got = ops::downloadTensor(*dy, count, sig->type);
  ASSERT_TRUE(got.isOk()) << got.message();

  std::vector<double> expected, magnitude;
  ref::spmm(g, sig->edgeValues ? values.data() : nullptr, x.data(), width,
            sig->options(), expected, &magnitude);
  const double base = ops::spmmTolerance(sig->type);
  for (int64_t r = 0; r < g.numRows; ++r) {
    double factor = ops::spmmTolerance(*sig, g.degree(r)) / base;
    for (int64_t c = 0; c < width; ++c)
      magnitude[r * width + c] *= factor;
  }
  ops::KernelCheck check = ops::compareWithReference(
      kernel.spec, g, width, sig->type, *got, expected, magnitude, width, base);
  EXPECT_TRUE(check.ok) << order << ": " << check.report;
}

TEST(RenumberGpu, SpmmInUserOrderMatchesReference) {
  REQUIRE_SUITE();
  ASSERT_EQ(suite().kernels.size(), 5u);
  for (const graph::CsrGraph &g : graphs())
    for (const rt::LoadedKernel &kernel : suite().kernels)
      for (const char *order : {"degree", "rcm", "community"}) {
        // (Padded rows: CheckSpmmInUserOrder, which also checks that y's
        // padding is left alone.)
        if (kernel.spec.op->padded())
          continue;
        SCOPED_TRACE(g.name + " " + kernel.spec.name + " " + order);
        checkInUserOrder(*suite().runtime, kernel, g, order);
      }
}

TEST(RenumberGpu, CheckSpmmInUserOrder) {
  REQUIRE_SUITE();
  graph::CsrGraph g = graph::makeRaggedTestGraph(9, 4000, 2500);
  auto rg = ops::renumberGraph(g, ops::NodeOrder::Rcm);
  ASSERT_TRUE(rg.isOk()) << rg.message();
  for (const rt::LoadedKernel &kernel : suite().kernels) {
    auto check = ops::checkSpmmInUserOrder(*suite().runtime, kernel, g, *rg, 5);
    ASSERT_TRUE(check.isOk()) << check.message();
    EXPECT_TRUE(check->ok) << check->report;
  }
}

/// The host gather: out row i = in row map[i].
std::vector<uint8_t> hostGather(const std::vector<uint8_t> &in,
                                const std::vector<int64_t> &map,
                                size_t rowBytes) {
  std::vector<uint8_t> out(map.size() * rowBytes);
  for (size_t i = 0; i < map.size(); ++i)
    std::copy(in.begin() + map[i] * rowBytes,
              in.begin() + (map[i] + 1) * rowBytes, out.begin() + i * rowBytes);
  return out;
}

Expected<rt::DeviceBuffer> uploadBytes(const std::vector<uint8_t> &bytes) {
  auto buffer = rt::DeviceBuffer::allocate(std::max<size_t>(bytes.size(), 1));
  if (!buffer)
    return buffer.status();
  if (!bytes.empty())
    GNNC_RETURN_IF_ERROR(buffer->copyFromHost(bytes.data(), bytes.size()));
  return buffer;
}

TEST(RenumberGpu, MovesMatchHostByteForByte) {
  REQUIRE_SUITE();
  rt::Runtime &runtime = *suite().runtime;
  graph::CsrGraph g = graph::makeRaggedTestGraph(5, 3000, 1500);
  auto rg = ops::renumberGraph(g, ops::NodeOrder::Community);
  ASSERT_TRUE(rg.isOk()) << rg.message();
  auto sig = ops::spmmSignature(suite().kernels.front().spec);
  ASSERT_TRUE(sig.isOk()) << sig.message();
  auto dg = ops::uploadRenumberedGraph(runtime, *rg, *sig);
  ASSERT_TRUE(dg.isOk()) << dg.message();
  const int64_t n = g.numRows;
  // Row sizes for 16-, 4-, 2- and 1-byte words: f32 x 64, f32 x 41,
  // f16 x 41 (or a padded row of 3 halves), 3 bytes.
  for (size_t rowBytes : {256u, 164u, 82u, 6u, 3u}) {
    SCOPED_TRACE(rowBytes);
    std::vector<uint8_t> user(n * rowBytes);
    for (size_t i = 0; i < user.size(); ++i)
      user[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
    auto du = uploadBytes(user);
    ASSERT_TRUE(du.isOk()) << du.message();
    auto di = rt::DeviceBuffer::allocate(user.size());
    auto back = rt::DeviceBuffer::allocate(user.size());
    ASSERT_TRUE(di.isOk() && back.isOk());
    ASSERT_TRUE(di->fill(0xff).isOk());
    Status st = dg->rowsToInternal(runtime, *du, *di, rowBytes);
    ASSERT_TRUE(st.isOk()) << st.message();
    std::vector<uint8_t> internal(user.size());
    ASSERT_TRUE(di->copyToHost(internal.data(), internal.size()).isOk());
    EXPECT_TRUE(internal == hostGather(user, rg->perm.newToOld, rowBytes));
    st = dg->rowsToUser(runtime, *di, *back, rowBytes);
    ASSERT_TRUE(st.isOk()) << st.message();
    std::vector<uint8_t> roundTrip(user.size());
    ASSERT_TRUE(back->copyToHost(roundTrip.data(), roundTrip.size()).isOk());
    EXPECT_TRUE(roundTrip == user);
    // Back into padded rows: only the first bytes of each row are copied,
    // the rest keeps what was there.
    if (rowBytes > 4) {
      size_t copyBytes = rowBytes - 2;
      ASSERT_TRUE(back->fill(0xab).isOk());
      st = dg->rowsToUser(runtime, *di, *back, rowBytes, true, copyBytes);
      ASSERT_TRUE(st.isOk()) << st.message();
      ASSERT_TRUE(back->copyToHost(roundTrip.data(), roundTrip.size()).isOk());
      bool same = true;
      for (int64_t r = 0; r < n; ++r)
        for (size_t b = 0; b < rowBytes; ++b)
          same &= roundTrip[r * rowBytes + b] ==
                  (b < copyBytes ? user[r * rowBytes + b] : uint8_t(0xab));
      EXPECT_TRUE(same);
    }
  }
  // Edge values of 2 and 4 bytes follow their edges.
  for (size_t edgeBytes : {2u, 4u}) {
    SCOPED_TRACE(edgeBytes);
    std::vector<uint8_t> user(g.nnz() * edgeBytes);
    for (size_t i = 0; i < user.size(); ++i)
      user[i] = static_cast<uint8_t>((i * 40503u) >> 7);
    auto du = uploadBytes(user);
    auto di = rt::DeviceBuffer::allocate(user.size());
    ASSERT_TRUE(du.isOk() && di.isOk());
    Status st = dg->edgeValuesToInternal(runtime, *du, *di, edgeBytes);
    ASSERT_TRUE(st.isOk()) << st.message();
    std::vector<uint8_t> internal(user.size());
    ASSERT_TRUE(di->copyToHost(internal.data(), internal.size()).isOk());
    EXPECT_TRUE(internal == hostGather(user, rg->edgeOf, edgeBytes));
  }
}

TEST(RenumberGpu, ClearErrors) {
  REQUIRE_SUITE();
  rt::Runtime &runtime = *suite().runtime;
  graph::CsrGraph g = graph::generateRmat(9, 8, 2);
  auto rg = ops::renumberGraph(g, ops::NodeOrder::Rcm);
  ASSERT_TRUE(rg.isOk()) << rg.message();
  const rt::LoadedKernel *sum = nullptr, *meanBoth = nullptr, *f16 = nullptr;
  // Kernel symbols carry the module's name: renumber_sum_f32...
  for (const rt::LoadedKernel &k : suite().kernels) {
    if (k.spec.name == "renumber_sum_f32")
      sum = &k;
    if (k.spec.name == "renumber_mean_both_f32")
      meanBoth = &k;
    if (k.spec.name == "renumber_weighted_f16_ep")
      f16 = &k;
  }
  ASSERT_TRUE(sum && meanBoth && f16);
  auto sig = ops::spmmSignature(sum->spec);
  ASSERT_TRUE(sig.isOk());
  auto dg = ops::uploadRenumberedGraph(runtime, *rg, *sig);
  ASSERT_TRUE(dg.isOk()) << dg.message();
  const size_t rowBytes = 32 * 4;
  auto x = rt::DeviceBuffer::allocate(g.numRows * rowBytes);
  auto small = rt::DeviceBuffer::allocate(g.numRows * rowBytes - 4);
  auto y = rt::DeviceBuffer::allocate(g.numRows * rowBytes);
  ASSERT_TRUE(x.isOk() && small.isOk() && y.isOk());

  Status st =
      ops::launchSpmmInUserOrder(runtime, *sum, *dg, *small, nullptr, *y);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("x needs"), std::string::npos) << st.message();
  st = ops::launchSpmmInUserOrder(runtime, *sum, *dg, *x, nullptr, *small);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("y needs"), std::string::npos) << st.message();
  // Uploaded for a kernel without column factors.
  st = ops::launchSpmmInUserOrder(runtime, *meanBoth, *dg, *x, nullptr, *y);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("DeviceRenumberedGraph::prepare"),
            std::string::npos)
      << st.message();
  // Edge values missing.
  st = ops::launchSpmmInUserOrder(runtime, *f16, *dg, *x, nullptr, *y);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("edge values"), std::string::npos)
      << st.message();
  // A gather into its own input.
  st = dg->rowsToInternal(runtime, *x, *x, rowBytes);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("in place"), std::string::npos) << st.message();
  // After preparing, the scaled kernel runs.
  auto meanSig = ops::spmmSignature(meanBoth->spec);
  ASSERT_TRUE(meanSig.isOk());
  ASSERT_TRUE(dg->prepare(*rg, *meanSig).isOk());
  auto x16 = rt::DeviceBuffer::allocate(g.numRows * 16 * 4);
  auto y16 = rt::DeviceBuffer::allocate(g.numRows * 16 * 4);
  ASSERT_TRUE(x16.isOk() && y16.isOk());
  st = ops::launchSpmmInUserOrder(runtime, *meanBoth, *dg, *x16, nullptr, *y16);
  EXPECT_TRUE(st.isOk()) << st.message();
}

} // namespace
