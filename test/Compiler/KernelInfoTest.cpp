//===- KernelInfoTest.cpp - The ops read kernel descriptions safely -------===//
//
// The host side of every op reads the typed description gnnc writes for a
// kernel (which may come from a hand-edited manifest) and binds its
// arguments by parameter role. Compiles one kernel of each op, checks what
// the signature readers find and that renamed parameters still bind, then
// corrupts the manifest: every fault is an error naming the field, never an
// exception. Needs no GPU.
//
//===----------------------------------------------------------------------===//
#include "gnnc/ops/KernelInfo.h"
#include "gnnc/Compiler/Compiler.h"
#include "gnnc/ops/Backward.h"
#include "gnnc/ops/EdgeSoftmax.h"
#include "gnnc/ops/Sddmm.h"
#include "gnnc/ops/Spmm.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace gnnc;

namespace {

const char *kModule = R"(gnn.module @m {
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = gnn.spmm %g, %x {reduce = #gnn<reduce mean>, self_weight = 0.25 : f32} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
  gnn.kernel @padded(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x41xf16, #gnn.rows<stride = 48>>) -> tensor<?x41xf16, #gnn.rows<stride = 48>> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<vector_width = 8>} : !gnn.graph<csr, i64, i32>, tensor<?x41xf16, #gnn.rows<stride = 48>> -> tensor<?x41xf16, #gnn.rows<stride = 48>>
    gnn.return %y : tensor<?x41xf16, #gnn.rows<stride = 48>>
  }
  gnn.kernel @logits(%g: !gnn.graph<csr, i32, i32>, %a: tensor<?x1xf16>, %b: tensor<?x1xf16>) -> tensor<?x1xf16> {
    %e = gnn.sddmm %g, %a, %b {form = #gnn<sddmm_form add>, leaky_relu = 0.2 : f32} : !gnn.graph<csr, i32, i32>, tensor<?x1xf16>, tensor<?x1xf16> -> tensor<?x1xf16>
    gnn.return %e : tensor<?x1xf16>
  }
  gnn.kernel @soft(%g: !gnn.graph<csr, i64, i32>, %e: tensor<?x8xf16>) -> tensor<?x8xf16> {
    %a = gnn.edge_softmax %g, %e : !gnn.graph<csr, i64, i32>, tensor<?x8xf16> -> tensor<?x8xf16>
    gnn.return %a : tensor<?x8xf16>
  }
  gnn.kernel @atomic(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf16>) -> tensor<?x64xf16> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = edge_parallel, edges_per_warp = 128, write = atomic>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf16> -> tensor<?x64xf16>
    gnn.return %y : tensor<?x64xf16>
  }
  gnn.kernel @groups(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = neighbor_group, group_size = 8, dim_workers = 16, threads_per_block = 128>} : !gnn.graph<csr, i64, i32>, tensor<?x64xf32> -> tensor<?x64xf32>
    gnn.return %y : tensor<?x64xf32>
  }
  gnn.kernel @soft_grad(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x8xf16>, %da: tensor<?x8xf16>) -> tensor<?x8xf16> {
    %dx = gnn.edge_softmax_grad %g, %a, %da : !gnn.graph<csr, i64, i32>, tensor<?x8xf16>, tensor<?x8xf16> -> tensor<?x8xf16>
    gnn.return %dx : tensor<?x8xf16>
  }
  gnn.kernel @renamed(%unused: !gnn.graph<csr, i64, i32>, %g: !gnn.graph<csr, i64, i32> {gnn.name = "adj"}, %w: tensor<?xf32> {gnn.name = "weights"}, %x: tensor<?x16xf32> {gnn.name = "feat"}) -> (tensor<?x16xf32> {gnn.name = "out"}) {
    %y = gnn.spmm %g, %x values(%w : tensor<?xf32>) {scale = #gnn<scale right>, schedule = #gnn.schedule<strategy = edge_parallel>} : !gnn.graph<csr, i64, i32>, tensor<?x16xf32> -> tensor<?x16xf32>
    gnn.return %y : tensor<?x16xf32>
  }
})";

class KernelInfoTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto compiled = compileGnn(kModule, "info.gnn");
    ASSERT_TRUE(compiled) << compiled.message();
    module = compiled.take();
  }
  rt::KernelSpec kernel(const std::string &symbol) {
    auto spec = findKernel(module, symbol);
    EXPECT_TRUE(spec) << spec.message();
    return spec ? *spec : rt::KernelSpec();
  }
  CompiledModule module;
};

/// Expects `result` to fail with a message holding every one of `parts`.
template <typename T>
void expectError(const Expected<T> &result,
                 std::initializer_list<const char *> parts) {
  ASSERT_FALSE(result.isOk());
  for (const char *part : parts)
    EXPECT_NE(result.message().find(part), std::string::npos)
        << "'" << part << "' not in: " << result.message();
}

TEST_F(KernelInfoTest, SignaturesReadWhatTheCompilerWrote) {
  auto spmm = ops::spmmSignature(kernel("agg"));
  ASSERT_TRUE(spmm) << spmm.message();
  EXPECT_EQ(spmm->type, ElementType::F32);
  EXPECT_EQ(spmm->featureWidth, 64);
  EXPECT_EQ(spmm->reduce, gnnc::Reduce::Mean);
  ASSERT_TRUE(spmm->selfWeight.has_value());
  EXPECT_DOUBLE_EQ(*spmm->selfWeight, 0.25);
  EXPECT_TRUE(spmm->offsets64);
  EXPECT_FALSE(spmm->indices64);
  // Unpadded rows: the stride is the width, and the description has none.
  EXPECT_EQ(spmm->rowStride, 64);
  EXPECT_FALSE(spmm->padded());

  auto padded = ops::spmmSignature(kernel("padded"));
  ASSERT_TRUE(padded) << padded.message();
  EXPECT_EQ(padded->type, ElementType::F16);
  EXPECT_EQ(padded->featureWidth, 41);
  EXPECT_EQ(padded->rowStride, 48);
  EXPECT_TRUE(padded->padded());

  auto sddmm = ops::sddmmSignature(kernel("logits"));
  ASSERT_TRUE(sddmm) << sddmm.message();
  EXPECT_EQ(sddmm->type, ElementType::F16);
  EXPECT_EQ(sddmm->form, gnnc::SddmmForm::Add);
  ASSERT_TRUE(sddmm->leakyRelu.has_value());
  EXPECT_FLOAT_EQ(*sddmm->leakyRelu, 0.2f);
  EXPECT_FALSE(sddmm->offsets64);

  auto soft = ops::kernelOp(kernel("soft"), OpKind::EdgeSoftmax);
  ASSERT_TRUE(soft) << soft.message();
  EXPECT_EQ(soft->width, 8);
  EXPECT_EQ(soft->type, ElementType::F16);

  auto grad = ops::kernelOp(kernel("soft_grad"), OpKind::EdgeSoftmaxGrad);
  ASSERT_TRUE(grad) << grad.message();
  EXPECT_EQ(grad->width, 8);
}

TEST_F(KernelInfoTest, RenamedParametersBindByRole) {
  // The host binds by role: the renamed graph, inputs and result, the
  // unused graph left alone, the column factors after the result.
  rt::KernelSpec spec = kernel("renamed");
  ops::DeviceGraph graph;
  graph.numRows = 3;
  graph.nnz = 7;
  rt::ArgPack args = ops::graphArguments(spec, graph);
  rt::DeviceBuffer none;
  args.bind(ParamRole::Input, none, 0)
      .bind(ParamRole::EdgeValues, none)
      .bind(ParamRole::Result, none)
      .bind(ParamRole::ColumnFactors, none)
      .bind("workspace", none);
  Expected<rt::ArgPack> named = args.byName(spec);
  ASSERT_TRUE(named) << named.message();
  for (const char *name :
       {"adj_row_ptr", "adj_col_idx", "adj_num_rows", "weights", "feat", "out",
        "adj_col_norm", "adj_num_edges", "workspace"})
    EXPECT_EQ(named->values().count(name), 1u) << name;
  EXPECT_EQ(named->values().at("adj_num_rows").i64, 3);
  EXPECT_EQ(named->values().at("adj_num_edges").i64, 7);
  for (const char *name : {"row_ptr", "col_idx", "num_rows"}) {
    EXPECT_EQ(named->values().count(name), 0u) << name;
    const rt::KernelParam *param = spec.findParam(name);
    ASSERT_NE(param, nullptr) << name;
    EXPECT_EQ(param->role, ParamRole::Unused);
  }
  // The grid counts the read graph's rows and edges: 3 + 7 items.
  Expected<uint64_t> blocks = rt::gridBlocks(spec, *named);
  ASSERT_TRUE(blocks) << blocks.message();
  EXPECT_EQ(*blocks, 1u);
}

TEST_F(KernelInfoTest, AtomicKernelsSayHowTheyAdd) {
  auto plain = ops::spmmSignature(kernel("agg"));
  auto atomic = ops::spmmSignature(kernel("atomic"));
  auto groups = ops::spmmSignature(kernel("groups"));
  ASSERT_TRUE(plain && atomic && groups);
  EXPECT_EQ(plain->atomicPieceEdges, 0);
  EXPECT_EQ(plain->groupSize, 0);
  EXPECT_EQ(atomic->atomicPieceEdges, 128);
  EXPECT_EQ(atomic->groupSize, 0);
  // A row that spans blocks gets one piece per block of 8 groups of 8.
  EXPECT_EQ(groups->atomicPieceEdges, 64);
  EXPECT_EQ(groups->groupSize, 8);
  // Each f16 piece rounds twice: a hub of 10,000 edges in pieces of 128
  // allows 2 * 80 units of 2^-11 more than the same kernel without atomics.
  ops::SpmmSignature direct = *atomic;
  direct.atomicPieceEdges = 0;
  EXPECT_NEAR(ops::spmmTolerance(*atomic, 10000) -
                  ops::spmmTolerance(direct, 10000),
              2.0 * 80 * 0x1p-11, 1e-12);
  // The first kernel of each sets the rows that pieces are added to.
  for (const char *symbol : {"atomic", "groups"}) {
    rt::KernelSpec spec = kernel(symbol);
    ASSERT_EQ(spec.preludes.size(), 1u) << symbol;
    EXPECT_EQ(spec.preludes[0].name, spec.name + "_init");
    EXPECT_EQ(spec.preludes[0].launch.grid,
              std::vector<ParamRole>{ParamRole::NumRows});
    EXPECT_TRUE(spec.followUps.empty()) << symbol;
    EXPECT_FALSE(spec.workspace.has_value()) << symbol;
  }
}

TEST(NeighbourGroups, CutEachRowIntoGroups) {
  // Rows of 5, 0, 1 and 8 non-zeros in groups of at most 4.
  graph::CsrGraph g;
  g.name = "small";
  g.numRows = 4;
  g.numCols = 8;
  g.rowPtr = {0, 5, 5, 6, 14};
  g.colIdx.assign(14, 0);
  auto groups = ops::neighbourGroups(g, 4);
  ASSERT_TRUE(groups) << groups.message();
  EXPECT_EQ(groups->groupPtr, (std::vector<int64_t>{0, 2, 2, 3, 5}));
  EXPECT_EQ(groups->groupRows, (std::vector<int32_t>{0, 0, 2, 3, 3}));
  // Each group's first edge, then the number of edges: group g's edges are
  // [begin[g], begin[g + 1]).
  EXPECT_EQ(groups->groupBegins, (std::vector<int64_t>{0, 4, 5, 6, 10, 14}));
  auto one = ops::neighbourGroups(g, 1);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->groupPtr.back(), 14);
  std::vector<int64_t> everyEdge(15);
  for (int64_t e = 0; e <= 14; ++e)
    everyEdge[e] = e;
  EXPECT_EQ(one->groupBegins, everyEdge);
  // A graph without edges has no group, and its one entry is 0.
  graph::CsrGraph empty = g;
  empty.rowPtr.assign(5, 0);
  empty.colIdx.clear();
  auto none = ops::neighbourGroups(empty, 4);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->groupRows.empty());
  EXPECT_EQ(none->groupBegins, (std::vector<int64_t>{0}));
  auto bad = ops::neighbourGroups(g, 0);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("group size must be at least 1"),
            std::string::npos)
      << bad.message();
}

TEST(NeighbourGroups, EachKernelGetsTheTablesItTakes) {
  // gnn.spmm's groups find their row's first group (group_ptr); gnn.sddmm's
  // write one output per edge and take only their rows and edge ranges. A
  // binding for a parameter a kernel lacks is an error at launch, so the
  // tables bound must follow each kernel's parameters.
  const char *text = R"(gnn.module @n {
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x32xf32>) -> tensor<?x32xf32> {
    %y = gnn.spmm %g, %x {schedule = #gnn.schedule<strategy = neighbor_group, group_size = 4>} : !gnn.graph<csr, i64, i32>, tensor<?x32xf32> -> tensor<?x32xf32>
    gnn.return %y : tensor<?x32xf32>
  }
  gnn.kernel @dots(%g: !gnn.graph<csr, i64, i32>, %a: tensor<?x32xf32>, %b: tensor<?x32xf32>) -> tensor<?xf32> {
    %e = gnn.sddmm %g, %a, %b {schedule = #gnn.schedule<strategy = neighbor_group, group_size = 4>} : !gnn.graph<csr, i64, i32>, tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?xf32>
    gnn.return %e : tensor<?xf32>
  }
})";
  auto compiled = compileGnn(text, "groups.gnn");
  ASSERT_TRUE(compiled) << compiled.message();
  ops::DeviceGraph graph;
  graph.numRows = 4;
  graph.numCols = 8;
  graph.nnz = 14;
  ops::DeviceNeighbourGroups groups;
  groups.groupPtr = rt::DeviceBuffer::borrow(0x1000, 5 * 8);
  groups.groupRows = rt::DeviceBuffer::borrow(0x2000, 5 * 4);
  groups.groupBegins = rt::DeviceBuffer::borrow(0x3000, 6 * 8);
  groups.numGroups = 5;
  graph.groups.emplace(4, std::move(groups));
  for (const char *symbol : {"n_agg", "n_dots"}) {
    auto spec = findKernel(*compiled, symbol);
    ASSERT_TRUE(spec) << spec.message();
    rt::ArgPack args;
    Status bound = ops::bindNeighbourGroups(*spec, graph, 4, args);
    ASSERT_TRUE(bound) << symbol << ": " << bound.message();
    Expected<rt::ArgPack> named = args.byName(*spec);
    ASSERT_TRUE(named) << symbol << ": " << named.message();
    const auto &values = named->values();
    EXPECT_EQ(values.at("group_rows").address, 0x2000u) << symbol;
    EXPECT_EQ(values.at("group_begins").address, 0x3000u) << symbol;
    EXPECT_EQ(values.at("num_groups").i64, 5) << symbol;
    bool spmm = std::strcmp(symbol, "n_agg") == 0;
    EXPECT_EQ(values.count("group_ptr"), spmm ? 1u : 0u) << symbol;
  }
}

TEST_F(KernelInfoTest, WrongOpIsRefused) {
  expectError(ops::spmmSignature(kernel("logits")),
              {"'m_logits'", "gnn.sddmm kernel, not a gnn.spmm"});
  expectError(ops::sddmmSignature(kernel("agg")), {"not a gnn.sddmm"});
  expectError(ops::kernelOp(kernel("soft_grad"), OpKind::EdgeSoftmax),
              {"not a gnn.edge_softmax kernel"});
  expectError(ops::kernelOp(kernel("soft"), OpKind::EdgeSoftmaxGrad),
              {"not a gnn.edge_softmax_grad kernel"});
  rt::KernelSpec bare = kernel("agg");
  bare.op.reset();
  expectError(ops::spmmSignature(bare), {"has no op description"});
}

TEST_F(KernelInfoTest, CorruptManifestsAreErrorsNotExceptions) {
  // The manifest of the whole module, with one field of it replaced.
  const std::string json = rt::writeManifest(module.kernels, "info.cu");
  struct Case {
    const char *from, *to;
    std::initializer_list<const char *> expect;
  };
  const Case cases[] = {
      {"\"width\": 64",
       "\"width\": \"sixty-four\"",
       {"kernels[0].op.width", "expected an integer"}},
      {"\"width\": 64", "\"width\": 0", {"kernels[0].op.width"}},
      {"\"self_weight\": 0.25",
       "\"self_weight\": \"a quarter\"",
       {"op.self_weight", "finite number"}},
      {"\"reduce\": \"mean\"",
       "\"reduce\": \"median\"",
       {"op.reduce", "'median'", "sum, mean or max"}},
      {"\"element_type\": \"f32\"",
       "\"element_type\": \"f64\"",
       {"op.element_type", "'f64'"}},
      {"\"kind\": \"spmm\"", "\"kind\": \"gemm\"", {"op.kind", "'gemm'"}},
      {"\"row_stride\": 64", "\"row_stride\": 63", {"op.row_stride", "[64, "}},
      {"\"offset_type\": \"i64\"",
       "\"offset_type\": \"i16\"",
       {"op.offset_type", "i32 or i64"}},
      {"\"role\": \"row_offsets\"",
       "\"role\": \"rows\"",
       {"params[0].role", "'rows'"}},
      {"\"leaky_relu\": 0.2",
       "\"leaky_relu\": null",
       {"op.leaky_relu", "finite number"}},
      {"vector_width = 4",
       "vector_width = wide",
       {"kernels[0].schedule", "vector_width takes a 32-bit integer"}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.from) + " -> " + c.to);
    // (A number is replaced whole: f32 values print with all their digits.)
    std::string bad = json;
    size_t at = bad.find(c.from);
    ASSERT_NE(at, std::string::npos);
    size_t end = at + std::strlen(c.from);
    while (end < bad.size() && std::strchr("0123456789.e-", bad[end]))
      ++end;
    bad.replace(at, end - at, c.to);
    expectError(rt::readManifest(bad, "info.manifest.json", ""), c.expect);
  }
  // The kernels as written read back whole.
  auto back = rt::readManifest(json, "info.manifest.json", "");
  ASSERT_TRUE(back) << back.message();
  ASSERT_EQ(back->size(), module.kernels.size());
  for (size_t i = 0; i < back->size(); ++i) {
    EXPECT_EQ((*back)[i].op, module.kernels[i].op);
    EXPECT_EQ((*back)[i].schedule, module.kernels[i].schedule);
  }
}

} // namespace
