//===- CApiHostTest.cpp - The C interface without a GPU -------------------===//
//
// Graph building, op descriptions, compile checks and errors of
// libgnnc_c.so, through the C functions only. Runs anywhere; the one test
// about contexts expects a clear error where no GPU is present.
//
//===----------------------------------------------------------------------===//
#include "gnnc-c/Gnnc.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

std::string lastError() { return gnnc_last_error(); }

/// Expects `status` to be an error whose message contains every one of
/// `parts`.
void expectError(gnnc_status status, std::initializer_list<const char *> parts,
                 const char *what) {
  ASSERT_EQ(status, GNNC_ERROR) << what << " succeeded";
  std::string message = lastError();
  for (const char *part : parts)
    EXPECT_NE(message.find(part), std::string::npos)
        << what << ": '" << part << "' not in: " << message;
}

gnnc_op_desc desc(gnnc_op_kind kind, gnnc_dtype type, int64_t width) {
  gnnc_op_desc d;
  gnnc_op_desc_init(&d);
  d.kind = kind;
  d.dtype = type;
  d.width = width;
  return d;
}

struct Csr {
  std::vector<int64_t> rowPtr;
  std::vector<int32_t> colIdx;
  std::vector<int64_t> perm;
};

Csr cooToCsr(int64_t numNodes, const std::vector<int64_t> &src,
             const std::vector<int64_t> &dst) {
  Csr csr;
  csr.rowPtr.assign(numNodes + 1, -1);
  csr.colIdx.assign(src.size(), -1);
  csr.perm.assign(src.size(), -1);
  EXPECT_EQ(gnnc_coo_to_csr(numNodes, static_cast<int64_t>(src.size()),
                            src.data(), dst.data(), csr.rowPtr.data(),
                            csr.colIdx.data(), csr.perm.data()),
            GNNC_OK)
      << lastError();
  return csr;
}

TEST(CApi, AbiVersion) { EXPECT_EQ(gnnc_abi_version(), GNNC_ABI_VERSION); }

TEST(CApi, OpDescDefaults) {
  gnnc_op_desc d;
  std::memset(&d, 0x5a, sizeof(d));
  gnnc_op_desc_init(&d);
  EXPECT_EQ(d.struct_size, sizeof(gnnc_op_desc));
  EXPECT_EQ(d.kind, GNNC_OP_SPMM);
  EXPECT_EQ(d.dtype, GNNC_F32);
  EXPECT_EQ(d.width, 0);
  EXPECT_EQ(d.row_stride, 0);
  EXPECT_EQ(d.edge_values, 0);
  EXPECT_EQ(d.reduce, GNNC_REDUCE_SUM);
  EXPECT_EQ(d.scale, GNNC_SCALE_NONE);
  EXPECT_EQ(d.has_self_weight, 0);
  EXPECT_EQ(d.has_col_norm_exponent, 0);
  EXPECT_EQ(d.form, GNNC_SDDMM_DOT);
  EXPECT_EQ(d.has_leaky_relu, 0);
  gnnc_op_desc_init(nullptr); // does nothing
}

TEST(CApi, LastErrorIsPerCallAndEmptyAfterSuccess) {
  expectError(gnnc_op_check(nullptr, nullptr), {"gnnc_op_check", "NULL"},
              "null desc");
  gnnc_op_desc d = desc(GNNC_OP_SPMM, GNNC_F32, 8);
  ASSERT_EQ(gnnc_op_check(&d, nullptr), GNNC_OK) << lastError();
  EXPECT_EQ(lastError(), "");
}

TEST(CApi, CooToCsrSmall) {
  // Edges src -> dst; rows are destinations.
  Csr csr = cooToCsr(4, {0, 2, 1, 3, 0}, {1, 1, 2, 0, 3});
  EXPECT_EQ(csr.rowPtr, (std::vector<int64_t>{0, 1, 3, 4, 5}));
  EXPECT_EQ(csr.colIdx, (std::vector<int32_t>{3, 0, 2, 1, 0}));
  EXPECT_EQ(csr.perm, (std::vector<int64_t>{3, 0, 1, 2, 4}));
}

TEST(CApi, CooToCsrRaggedAndDuplicates) {
  // Node 0 and 5 receive nothing, node 3 receives from everyone (twice
  // from node 4, once from itself), ties keep input order.
  const int64_t n = 6;
  std::vector<int64_t> src, dst;
  for (int64_t s : {5, 4, 2, 4, 3, 1, 0})
    src.push_back(s), dst.push_back(3);
  src.push_back(2), dst.push_back(1);
  Csr csr = cooToCsr(n, src, dst);
  EXPECT_EQ(csr.rowPtr, (std::vector<int64_t>{0, 0, 1, 1, 8, 8, 8}));
  EXPECT_EQ(csr.colIdx, (std::vector<int32_t>{2, 0, 1, 2, 3, 4, 4, 5}));
  EXPECT_EQ(csr.perm, (std::vector<int64_t>{7, 6, 5, 2, 4, 1, 3, 0}));
  EXPECT_EQ(gnnc_csr_validate("ragged", n, n, 8, csr.rowPtr.data(),
                              csr.colIdx.data()),
            GNNC_OK)
      << lastError();
}

TEST(CApi, CooToCsrHeavyRowAndNoEdges) {
  const int64_t n = 1000;
  std::vector<int64_t> src, dst;
  for (int64_t i = n - 1; i >= 0; --i)
    src.push_back(i), dst.push_back(7);
  Csr csr = cooToCsr(n, src, dst);
  EXPECT_EQ(csr.rowPtr[7], 0);
  EXPECT_EQ(csr.rowPtr[8], n);
  EXPECT_EQ(csr.rowPtr[n], n);
  for (int64_t e = 0; e < n; ++e) {
    EXPECT_EQ(csr.colIdx[e], e);
    EXPECT_EQ(csr.perm[e], n - 1 - e);
  }
  std::vector<int64_t> rowPtr(4, -1);
  ASSERT_EQ(
      gnnc_coo_to_csr(3, 0, nullptr, nullptr, rowPtr.data(), nullptr, nullptr),
      GNNC_OK)
      << lastError();
  EXPECT_EQ(rowPtr, (std::vector<int64_t>{0, 0, 0, 0}));
}

TEST(CApi, CooToCsrErrorsNameThePosition) {
  std::vector<int64_t> rowPtr(4), perm(3);
  std::vector<int32_t> colIdx(3);
  std::vector<int64_t> good = {0, 1, 2}, negative = {0, -1, 2},
                       large = {0, 1, 3};
  expectError(gnnc_coo_to_csr(3, 3, negative.data(), good.data(), rowPtr.data(),
                              colIdx.data(), perm.data()),
              {"gnnc_coo_to_csr", "src[1] = -1", "[0, 3)"}, "negative src");
  expectError(gnnc_coo_to_csr(3, 3, good.data(), large.data(), rowPtr.data(),
                              colIdx.data(), perm.data()),
              {"dst[2] = 3", "[0, 3)"}, "dst out of range");
  expectError(gnnc_coo_to_csr(3, 3, nullptr, good.data(), rowPtr.data(),
                              colIdx.data(), perm.data()),
              {"src is NULL"}, "null src");
  expectError(gnnc_coo_to_csr(int64_t(1) << 40, 0, nullptr, nullptr,
                              rowPtr.data(), nullptr, nullptr),
              {"num_nodes", "int32"}, "too many nodes");
  expectError(
      gnnc_coo_to_csr(3, -1, nullptr, nullptr, rowPtr.data(), nullptr, nullptr),
      {"nnz is negative"}, "negative nnz");
}

TEST(CApi, CsrValidateErrors) {
  std::vector<int64_t> rowPtr = {0, 2, 1, 3};
  std::vector<int32_t> colIdx = {0, 1, 2};
  expectError(gnnc_csr_validate("g", 3, 3, 3, rowPtr.data(), colIdx.data()),
              {"gnnc_csr_validate", "g:", "not monotone", "rowPtr[1] = 2"},
              "decreasing offsets");
  rowPtr = {1, 2, 2, 3};
  expectError(gnnc_csr_validate(nullptr, 3, 3, 3, rowPtr.data(), colIdx.data()),
              {"rowPtr[0] is 1"}, "offsets not from 0");
  rowPtr = {0, 1, 2, 3};
  colIdx = {0, 5, 2};
  expectError(gnnc_csr_validate("h", 3, 3, 3, rowPtr.data(), colIdx.data()),
              {"h:", "colIdx[1] = 5", "[0, 3)"}, "column out of range");
  rowPtr = {0, 1, 2, 2};
  colIdx = {0, 1, 2};
  expectError(gnnc_csr_validate("k", 3, 3, 3, rowPtr.data(), colIdx.data()),
              {"rowPtr[numRows] = 2", "3 entries"}, "offsets not to nnz");
  expectError(gnnc_csr_validate("k", 3, 3, 3, nullptr, colIdx.data()),
              {"row_ptr is NULL"}, "null offsets");
  expectError(gnnc_csr_validate("k", -1, 3, 3, rowPtr.data(), colIdx.data()),
              {"negative size"}, "negative rows");
}

TEST(CApi, OpCheckAcceptsEveryKindAndType) {
  for (gnnc_dtype type : {GNNC_F32, GNNC_F16, GNNC_BF16}) {
    gnnc_op_desc spmm = desc(GNNC_OP_SPMM, type, 33);
    EXPECT_EQ(gnnc_op_check(&spmm, nullptr), GNNC_OK) << lastError();
    spmm.edge_values = 1;
    spmm.reduce = GNNC_REDUCE_MEAN;
    spmm.scale = GNNC_SCALE_BOTH;
    spmm.has_col_norm_exponent = 1;
    spmm.col_norm_exponent = 1.0;
    spmm.row_stride = 40;
    EXPECT_EQ(gnnc_op_check(&spmm, nullptr), GNNC_OK) << lastError();
    spmm = desc(GNNC_OP_SPMM, type, 16);
    spmm.has_self_weight = 1;
    spmm.self_weight = 0.1;
    EXPECT_EQ(gnnc_op_check(&spmm, nullptr), GNNC_OK) << lastError();
    spmm.reduce = GNNC_REDUCE_MAX;
    spmm.has_self_weight = 0;
    EXPECT_EQ(gnnc_op_check(&spmm, "#gnn.schedule<strategy = edge_parallel>"),
              GNNC_OK)
        << lastError();

    gnnc_op_desc sddmm = desc(GNNC_OP_SDDMM, type, 33);
    EXPECT_EQ(gnnc_op_check(&sddmm, nullptr), GNNC_OK) << lastError();
    sddmm.form = GNNC_SDDMM_ADD;
    sddmm.has_leaky_relu = 1;
    sddmm.leaky_relu = 0.2;
    EXPECT_EQ(gnnc_op_check(&sddmm, nullptr), GNNC_OK) << lastError();

    for (int64_t heads : {1, 4}) {
      gnnc_op_desc softmax = desc(GNNC_OP_EDGE_SOFTMAX, type, heads);
      EXPECT_EQ(gnnc_op_check(&softmax, nullptr), GNNC_OK) << lastError();
      gnnc_op_desc grad = desc(GNNC_OP_EDGE_SOFTMAX_GRAD, type, heads);
      EXPECT_EQ(gnnc_op_check(&grad, nullptr), GNNC_OK) << lastError();
    }
  }
}

TEST(CApi, OpCheckRejectsWithTheRule) {
  gnnc_op_desc d = desc(GNNC_OP_SPMM, GNNC_F32, 0);
  expectError(gnnc_op_check(&d, nullptr), {"width must be at least 1, got 0"},
              "width 0");
  d.width = 32;
  d.row_stride = 16;
  expectError(gnnc_op_check(&d, nullptr), {"stride 16", "width 32"},
              "row stride below the width");
  d.row_stride = 0;
  d.struct_size = 8;
  expectError(gnnc_op_check(&d, nullptr),
              {"struct_size is 8", "gnnc_op_desc_init"}, "wrong struct size");
  d = desc(GNNC_OP_SPMM, GNNC_F32, 32);
  std::memset(&d.reduce, 0, sizeof(d.reduce));
  int32_t bad = 7;
  std::memcpy(&d.reduce, &bad, sizeof(bad));
  expectError(gnnc_op_check(&d, nullptr),
              {"desc.reduce is 7", "GNNC_REDUCE_MAX (2)"}, "bad reduce");
  d = desc(GNNC_OP_SPMM, GNNC_F32, 32);
  std::memcpy(&d.kind, &bad, sizeof(bad));
  expectError(gnnc_op_check(&d, nullptr), {"desc.kind is 7"}, "bad kind");
  d = desc(GNNC_OP_SPMM, GNNC_F32, 32);
  bad = -1;
  std::memcpy(&d.dtype, &bad, sizeof(bad));
  expectError(gnnc_op_check(&d, nullptr), {"desc.dtype is -1"}, "bad dtype");
  // The op verifiers' rules.
  d = desc(GNNC_OP_SPMM, GNNC_F32, 32);
  d.reduce = GNNC_REDUCE_MAX;
  d.has_self_weight = 1;
  expectError(gnnc_op_check(&d, nullptr), {"self_weight", "not max"},
              "self weight with max");
  d = desc(GNNC_OP_SPMM, GNNC_F32, 32);
  d.has_col_norm_exponent = 1;
  d.col_norm_exponent = 1.0;
  expectError(gnnc_op_check(&d, nullptr), {"col_norm_exponent", "scale"},
              "exponent without column scaling");
  // Fields of another op.
  d = desc(GNNC_OP_SDDMM, GNNC_F32, 32);
  d.reduce = GNNC_REDUCE_MEAN;
  expectError(gnnc_op_check(&d, nullptr), {"reduce", "gnn.spmm only"},
              "reduce on sddmm");
  d = desc(GNNC_OP_EDGE_SOFTMAX, GNNC_F32, 2);
  d.has_leaky_relu = 1;
  expectError(gnnc_op_check(&d, nullptr), {"has_leaky_relu", "gnn.sddmm"},
              "leaky relu on edge softmax");
  // Schedules: one that does not parse, one the plan refuses.
  d = desc(GNNC_OP_SPMM, GNNC_F32, 32);
  expectError(gnnc_op_check(&d, "#gnn.schedule<vector_width = banana>"),
              {"schedule", "vector_width"}, "unparsable schedule");
  d = desc(GNNC_OP_SPMM, GNNC_F32, 33);
  expectError(gnnc_op_check(&d, "#gnn.schedule<vector_width = 8>"),
              {"vector_width 8", "16 bytes"}, "schedule the plan refuses");
  d = desc(GNNC_OP_EDGE_SOFTMAX, GNNC_F32, 4);
  expectError(gnnc_op_check(&d, "#gnn.schedule<strategy = tile_routed>"),
              {"tile_routed", "not implemented"},
              "strategy the op does not have");
}

TEST(CApi, SpmmFeatureGradOp) {
  struct Case {
    gnnc_reduce reduce;
    gnnc_scale scale;
    gnnc_scale gradScale;
    double exponent; // 0: none set
  };
  const Case cases[] = {
      {GNNC_REDUCE_SUM, GNNC_SCALE_NONE, GNNC_SCALE_NONE, 0},
      {GNNC_REDUCE_MEAN, GNNC_SCALE_NONE, GNNC_SCALE_RIGHT, 1.0},
      {GNNC_REDUCE_SUM, GNNC_SCALE_LEFT, GNNC_SCALE_RIGHT, 0},
      {GNNC_REDUCE_SUM, GNNC_SCALE_RIGHT, GNNC_SCALE_LEFT, 0},
      {GNNC_REDUCE_SUM, GNNC_SCALE_BOTH, GNNC_SCALE_BOTH, 0},
      {GNNC_REDUCE_MEAN, GNNC_SCALE_BOTH, GNNC_SCALE_BOTH, 1.5},
  };
  for (const Case &c : cases) {
    gnnc_op_desc fwd = desc(GNNC_OP_SPMM, GNNC_BF16, 24);
    fwd.reduce = c.reduce;
    fwd.scale = c.scale;
    fwd.edge_values = 1;
    fwd.row_stride = 32;
    gnnc_op_desc grad;
    ASSERT_EQ(gnnc_spmm_feature_grad_op(&fwd, &grad), GNNC_OK) << lastError();
    SCOPED_TRACE("reduce " + std::to_string(c.reduce) + " scale " +
                 std::to_string(c.scale));
    EXPECT_EQ(grad.struct_size, sizeof(gnnc_op_desc));
    EXPECT_EQ(grad.kind, GNNC_OP_SPMM);
    EXPECT_EQ(grad.dtype, GNNC_BF16);
    EXPECT_EQ(grad.width, 24);
    EXPECT_EQ(grad.row_stride, 32);
    EXPECT_EQ(grad.edge_values, 1);
    EXPECT_EQ(grad.reduce, GNNC_REDUCE_SUM);
    EXPECT_EQ(grad.scale, c.gradScale);
    EXPECT_EQ(grad.has_col_norm_exponent, c.exponent != 0);
    if (c.exponent != 0)
      EXPECT_EQ(grad.col_norm_exponent, c.exponent);
    EXPECT_EQ(gnnc_op_check(&grad, nullptr), GNNC_OK) << lastError();
  }
  gnnc_op_desc fwd = desc(GNNC_OP_SPMM, GNNC_F32, 8), grad;
  fwd.reduce = GNNC_REDUCE_MAX;
  expectError(gnnc_spmm_feature_grad_op(&fwd, &grad),
              {"gnnc_spmm_feature_grad_op", "reduce = max"}, "max");
  fwd = desc(GNNC_OP_SPMM, GNNC_F32, 8);
  fwd.scale = GNNC_SCALE_RIGHT;
  fwd.has_col_norm_exponent = 1;
  fwd.col_norm_exponent = 1.0;
  expectError(gnnc_spmm_feature_grad_op(&fwd, &grad), {"col_norm_exponent"},
              "exponent other than 1/2");
  fwd = desc(GNNC_OP_SDDMM, GNNC_F32, 8);
  expectError(gnnc_spmm_feature_grad_op(&fwd, &grad), {"not a gnn.spmm"},
              "sddmm");
  fwd = desc(GNNC_OP_SPMM, GNNC_F32, 8);
  expectError(gnnc_spmm_feature_grad_op(&fwd, nullptr), {"grad is NULL"},
              "null grad");
}

TEST(CApi, ContextWithoutGpuFailsClearly) {
  char why[256] = "unset";
  if (gnnc_gpu_available(why, sizeof(why))) {
    GTEST_SKIP() << "a GPU is present; the GPU tests cover contexts";
  }
  EXPECT_GT(std::strlen(why), 0u);
  gnnc_context ctx = reinterpret_cast<gnnc_context>(1);
  expectError(gnnc_context_create(0, "off", "off", &ctx),
              {"gnnc_context_create", "CUDA"}, "context without a GPU");
  EXPECT_EQ(ctx, nullptr);
  // The reason is the driver's, as gnnc_gpu_available gives it.
  EXPECT_NE(lastError().find(why), std::string::npos) << lastError();
  char tiny[4];
  gnnc_gpu_available(tiny, sizeof(tiny));
  EXPECT_EQ(std::strlen(tiny), 3u);
}

TEST(CApi, NullHandlesAreErrors) {
  gnnc_op_desc d = desc(GNNC_OP_SPMM, GNNC_F32, 8);
  gnnc_buffer none = {0, 0};
  expectError(gnnc_context_create(0, nullptr, nullptr, nullptr),
              {"out is NULL"}, "null out");
  expectError(gnnc_context_device(nullptr, nullptr, 0, nullptr, 0),
              {"ctx is NULL"}, "null context");
  expectError(gnnc_context_set_measure(nullptr, 2),
              {"gnnc_context_set_measure", "ctx is NULL"}, "null context");
  gnnc_graph graph = nullptr;
  int64_t rowPtr[2] = {0, 0};
  expectError(gnnc_graph_create(nullptr, "g", 1, 1, 0, rowPtr, nullptr, none,
                                none, &graph),
              {"gnnc_graph_create", "ctx is NULL"}, "null context");
  gnnc_kernel kernel = nullptr;
  expectError(gnnc_kernel_get(nullptr, &d, nullptr, &kernel), {"graph is NULL"},
              "null graph");
  expectError(gnnc_kernel_schedule(nullptr, nullptr, 0, nullptr, 0),
              {"kernel is NULL"}, "null kernel");
  float row[1], col[1];
  expectError(gnnc_graph_spmm_factors(nullptr, &d, row, col), {"graph is NULL"},
              "null graph");
  expectError(gnnc_spmm(nullptr, none, none, none, 0),
              {"gnnc_spmm", "kernel is NULL"}, "null kernel");
  expectError(gnnc_sddmm(nullptr, none, none, none, 0), {"kernel is NULL"},
              "null kernel");
  expectError(gnnc_edge_softmax(nullptr, none, none, 0), {"kernel is NULL"},
              "null kernel");
  expectError(gnnc_edge_softmax_grad(nullptr, none, none, none, 0),
              {"kernel is NULL"}, "null kernel");
  gnnc_context_destroy(nullptr);
  gnnc_graph_destroy(nullptr);
}

} // namespace
