//===- CApiSegmentMatmulTest.cpp - Segmented matmul in C, without a GPU ---===//
//
// The segmented matmul's C functions that need no GPU: the description's
// checks, host-only segment layouts (ctx = NULL) and the errors their
// offsets raise (unsorted, not starting at 0, not ending at the rows),
// launches and kernel requests refused with a message, the schedule gnnc
// chooses for each math permission, and the kernels the PyTorch op and
// the benchmark ask for compiled through NVRTC for sm_80 and sm_90.
//
//===----------------------------------------------------------------------===//
#include "gnnc-c/Gnnc.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

std::string lastError() { return gnnc_last_error(); }

void expectError(gnnc_status status, std::initializer_list<const char *> parts,
                 const char *what) {
  ASSERT_EQ(status, GNNC_ERROR) << what << " succeeded";
  std::string message = lastError();
  for (const char *part : parts)
    EXPECT_NE(message.find(part), std::string::npos)
        << what << ": '" << part << "' not in: " << message;
}

gnnc_segment_desc segmentDesc(gnnc_dtype type, int64_t k, int64_t m,
                              gnnc_segment_pass pass = GNNC_SEGMENT_FORWARD,
                              int allowTf32 = 0) {
  gnnc_segment_desc d;
  gnnc_segment_desc_init(&d);
  d.dtype = type;
  d.k = k;
  d.m = m;
  d.pass = pass;
  d.allow_tf32 = allowTf32;
  return d;
}

/// The schedule gnnc_segment_op_check chooses for `d` (fails the test when
/// it refuses).
std::string chosen(const gnnc_segment_desc &d, const char *arch = nullptr) {
  char text[512] = "";
  EXPECT_EQ(gnnc_segment_op_check(&d, nullptr, arch, text, sizeof(text)),
            GNNC_OK)
      << lastError();
  return text;
}

bool has(const std::string &text, const char *part) {
  return text.find(part) != std::string::npos;
}

TEST(CApiSegmentMatmul, DescriptionDefaults) {
  gnnc_segment_desc d;
  gnnc_segment_desc_init(&d);
  EXPECT_EQ(d.struct_size, sizeof(gnnc_segment_desc));
  EXPECT_EQ(d.dtype, GNNC_F32);
  EXPECT_EQ(d.pass, GNNC_SEGMENT_FORWARD);
  EXPECT_EQ(d.k, 0);
  EXPECT_EQ(d.m, 0);
  EXPECT_EQ(d.allow_tf32, 0);
  gnnc_segment_desc_init(nullptr); // no crash
}

TEST(CApiSegmentMatmul, BadDescriptionsAreRefused) {
  gnnc_segment_desc d = segmentDesc(GNNC_F32, 16, 16);
  d.struct_size = 3;
  expectError(
      gnnc_segment_op_check(&d, nullptr, nullptr, nullptr, 0),
      {"gnnc_segment_op_check", "struct_size is 3", "gnnc_segment_desc_init"},
      "a wrong struct_size");
  d = segmentDesc(static_cast<gnnc_dtype>(7), 16, 16);
  expectError(gnnc_segment_op_check(&d, nullptr, nullptr, nullptr, 0),
              {"dtype is 7", "GNNC_BF16"}, "an unknown dtype");
  d = segmentDesc(GNNC_F32, 16, 16, static_cast<gnnc_segment_pass>(3));
  expectError(gnnc_segment_op_check(&d, nullptr, nullptr, nullptr, 0),
              {"pass is 3", "GNNC_SEGMENT_WEIGHT_GRAD"}, "an unknown pass");
  d = segmentDesc(GNNC_F32, 0, 16);
  expectError(gnnc_segment_op_check(&d, nullptr, nullptr, nullptr, 0),
              {"K 0 and M 16", "at least 1"}, "K = 0");
  d = segmentDesc(GNNC_F32, 16, 16, GNNC_SEGMENT_FORWARD, 2);
  expectError(gnnc_segment_op_check(&d, nullptr, nullptr, nullptr, 0),
              {"allow_tf32 is 2"}, "allow_tf32 = 2");
  expectError(gnnc_segment_op_check(nullptr, nullptr, nullptr, nullptr, 0),
              {"desc is NULL"}, "a NULL description");
  // A written tensor-core schedule on f32 needs the TF32 permission.
  d = segmentDesc(GNNC_F32, 64, 64);
  expectError(gnnc_segment_op_check(
                  &d,
                  "#gnn.schedule<strategy = tile_routed, math = tensor_core>",
                  nullptr, nullptr, 0),
              {"TF32", "allow_tf32"}, "tensor cores on f32 without TF32");
  d.allow_tf32 = 1;
  EXPECT_EQ(gnnc_segment_op_check(
                &d, "#gnn.schedule<strategy = tile_routed, math = tensor_core>",
                nullptr, nullptr, 0),
            GNNC_OK)
      << lastError();
  // The chosen schedule must fit its buffer.
  d = segmentDesc(GNNC_F16, 64, 64);
  char small[4];
  expectError(gnnc_segment_op_check(&d, nullptr, nullptr, small, sizeof(small)),
              {"chosen needs"}, "a short buffer");
}

TEST(CApiSegmentMatmul, ScheduleChoiceFollowsTheMathPermission) {
  for (gnnc_segment_pass pass : {GNNC_SEGMENT_FORWARD, GNNC_SEGMENT_INPUT_GRAD,
                                 GNNC_SEGMENT_WEIGHT_GRAD}) {
    SCOPED_TRACE(pass);
    // Exact f32: SIMT.
    EXPECT_TRUE(has(chosen(segmentDesc(GNNC_F32, 64, 64, pass)), "simt"));
    // TF32 allowed: tensor cores where they fit, SIMT otherwise.
    EXPECT_TRUE(
        has(chosen(segmentDesc(GNNC_F32, 64, 64, pass, 1)), "tensor_core"));
    EXPECT_TRUE(has(chosen(segmentDesc(GNNC_F32, 33, 17, pass, 1)), "simt"));
    // 16-bit types: tensor cores where they fit, whatever allow_tf32 says.
    EXPECT_TRUE(
        has(chosen(segmentDesc(GNNC_F16, 128, 64, pass)), "tensor_core"));
    EXPECT_TRUE(
        has(chosen(segmentDesc(GNNC_BF16, 128, 64, pass)), "tensor_core"));
    EXPECT_TRUE(has(chosen(segmentDesc(GNNC_BF16, 12, 5, pass)), "simt"));
  }
  // Exact f32 stages a type's whole K x M weights: 256 x 256 does not fit
  // a block, and the error says what would.
  gnnc_segment_desc d = segmentDesc(GNNC_F32, 256, 256);
  expectError(gnnc_segment_op_check(&d, nullptr, nullptr, nullptr, 0),
              {"shared memory", "math = tensor_core"},
              "exact f32 of 256 x 256");
  d.allow_tf32 = 1;
  EXPECT_TRUE(has(chosen(d), "tensor_core"));
}

TEST(CApiSegmentMatmul, HostOnlyLayouts) {
  const std::vector<int64_t> offsets = {0, 0, 1, 1, 41, 41};
  gnnc_segments s = nullptr;
  ASSERT_EQ(gnnc_segments_create(nullptr, "ragged", 41, 5, offsets.data(), &s),
            GNNC_OK)
      << lastError();
  int64_t rows = -1, types = -1;
  ASSERT_EQ(gnnc_segments_shape(s, &rows, &types), GNNC_OK);
  EXPECT_EQ(rows, 41);
  EXPECT_EQ(types, 5);
  EXPECT_EQ(gnnc_segments_shape(s, nullptr, nullptr), GNNC_OK);
  // A host-only layout has no kernels.
  gnnc_segment_desc d = segmentDesc(GNNC_F32, 8, 8);
  gnnc_segment_kernel k = nullptr;
  expectError(gnnc_segment_kernel_get(s, &d, nullptr, &k),
              {"gnnc_segment_kernel_get", "ragged", "host-only"},
              "a kernel of a host-only layout");
  EXPECT_EQ(k, nullptr);
  gnnc_segments_destroy(s);
  gnnc_segments_destroy(nullptr);

  // No types at all, and types without rows.
  const int64_t zero = 0;
  ASSERT_EQ(gnnc_segments_create(nullptr, nullptr, 0, 0, &zero, &s), GNNC_OK)
      << lastError();
  gnnc_segments_destroy(s);
  const std::vector<int64_t> empty = {0, 0, 0};
  ASSERT_EQ(gnnc_segments_create(nullptr, nullptr, 0, 2, empty.data(), &s),
            GNNC_OK)
      << lastError();
  gnnc_segments_destroy(s);
}

TEST(CApiSegmentMatmul, BadOffsetsNameTheOffsetAndTheRule) {
  gnnc_segments s = nullptr;
  const std::vector<int64_t> unsorted = {0, 5, 3, 9};
  expectError(gnnc_segments_create(nullptr, "rel", 9, 3, unsorted.data(), &s),
              {"gnnc_segments_create", "rel", "must not decrease", "offset 2",
               "is 3, after 5"},
              "unsorted offsets");
  EXPECT_EQ(s, nullptr);
  const std::vector<int64_t> late = {2, 5, 9};
  expectError(gnnc_segments_create(nullptr, "rel", 9, 2, late.data(), &s),
              {"offset 0 must be 0", "got 2"}, "a first offset of 2");
  const std::vector<int64_t> shortEnd = {0, 4, 8};
  expectError(gnnc_segments_create(nullptr, "rel", 9, 2, shortEnd.data(), &s),
              {"last segment offset", "9 rows", "got 8"},
              "a last offset short of the rows");
  const std::vector<int64_t> past = {0, 12, 9};
  expectError(gnnc_segments_create(nullptr, "rel", 9, 2, past.data(), &s),
              {"offset 1 is 12", "past the input's 9 rows"},
              "an offset past the rows");
  expectError(gnnc_segments_create(nullptr, "rel", -1, 2, past.data(), &s),
              {"num_rows is negative"}, "negative rows");
  expectError(gnnc_segments_create(nullptr, "rel", 9, -1, past.data(), &s),
              {"num_types is negative"}, "negative types");
  expectError(gnnc_segments_create(nullptr, "rel", 9, 2, nullptr, &s),
              {"host_offsets is NULL"}, "NULL offsets");
  expectError(gnnc_segments_create(nullptr, "rel", 9, 2, past.data(), nullptr),
              {"out is NULL"}, "NULL out");
}

TEST(CApiSegmentMatmul, NullHandlesAreErrors) {
  gnnc_buffer none = {0, 0};
  expectError(gnnc_segment_matmul(nullptr, none, none, none, 0),
              {"gnnc_segment_matmul", "kernel is NULL"}, "a NULL kernel");
  expectError(gnnc_segment_matmul_weight_grad(nullptr, none, none, none, 0),
              {"gnnc_segment_matmul_weight_grad", "kernel is NULL"},
              "a NULL kernel");
  gnnc_segment_desc d = segmentDesc(GNNC_F32, 8, 8);
  gnnc_segment_kernel k = nullptr;
  expectError(gnnc_segment_kernel_get(nullptr, &d, nullptr, &k),
              {"segments is NULL"}, "NULL segments");
  expectError(gnnc_segments_shape(nullptr, nullptr, nullptr),
              {"segments is NULL"}, "NULL segments");
  expectError(gnnc_segment_kernel_schedule(nullptr, nullptr, 0, nullptr, 0),
              {"kernel is NULL"}, "a NULL kernel");
}

/// The kernels the PyTorch op (gnnc.segment_matmul: forward, input and
/// weight gradients) and the benchmark request, as gnnc chooses their
/// schedules, through NVRTC for each architecture.
class SegmentKernelsCompile : public ::testing::TestWithParam<const char *> {};

TEST_P(SegmentKernelsCompile, ChosenSchedulesCompileWithNvrtc) {
  struct Math {
    gnnc_dtype type;
    int tf32;
  };
  const Math maths[] = {
      {GNNC_F32, 0}, {GNNC_F32, 1}, {GNNC_F16, 0}, {GNNC_BF16, 0}};
  const std::pair<int64_t, int64_t> sizes[] = {{64, 64}, {256, 256}, {33, 17}};
  int compiled = 0;
  for (const Math &math : maths)
    for (auto [k, m] : sizes)
      for (gnnc_segment_pass pass :
           {GNNC_SEGMENT_FORWARD, GNNC_SEGMENT_INPUT_GRAD,
            GNNC_SEGMENT_WEIGHT_GRAD}) {
        // Exact f32 of 256 x 256 is refused (the SIMT tile; tested above).
        if (math.type == GNNC_F32 && !math.tf32 && k == 256)
          continue;
        gnnc_segment_desc d = segmentDesc(math.type, k, m, pass, math.tf32);
        char text[512] = "";
        EXPECT_EQ(
            gnnc_segment_op_check(&d, nullptr, GetParam(), text, sizeof(text)),
            GNNC_OK)
            << "dtype " << math.type << " tf32 " << math.tf32 << " K " << k
            << " M " << m << " pass " << pass << ": " << lastError();
        ++compiled;
      }
  EXPECT_EQ(compiled, 33);
}

INSTANTIATE_TEST_SUITE_P(Arch, SegmentKernelsCompile,
                         ::testing::Values("sm_80", "sm_90"));

} // namespace
