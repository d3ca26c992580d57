//===- CApiGpuTest.cpp - The C interface on a GPU -------------------------===//
//
// Every op through libgnnc_c.so's C functions only (graph, kernel, launch),
// on device memory the test allocates (as a host like PyTorch would), for
// f32, f16 and bf16: spmm (sum, mean, max, both scalings, a self term, edge
// values, padded rows), sddmm (dot; add with leaky ReLU), edge softmax and
// its gradient, on a ragged graph (empty rows, one heavy row) with an odd
// width, outputs poisoned with NaN, launched on a created stream (and once
// on the default stream), against the double-precision CPU reference; and
// multi-snapshot spmm over groups of a directed evolving graph, forward and
// feature gradient (over the transposed group), against the reference of
// each snapshot.
//
// Skips, saying why, when no GPU is present.
//
//===----------------------------------------------------------------------===//
#include "gnnc-c/Gnnc.h"

#include "gnnc/Plan/Plan.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/graph/Snapshots.h"
#include "gnnc/ops/Snapshots.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/reference/Backward.h"
#include "gnnc/reference/EdgeSoftmax.h"
#include "gnnc/reference/Sddmm.h"
#include "gnnc/reference/Spmm.h"
#include "gnnc/runtime/Driver.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>

using namespace gnnc;

namespace {

#define SKIP_WITHOUT_GPU()                                                     \
  do {                                                                         \
    char why[512] = "";                                                        \
    if (!gnnc_gpu_available(why, sizeof(why)))                                 \
      GTEST_SKIP() << "no GPU: " << why;                                       \
  } while (false)

constexpr int64_t kWidth = 33;

const ElementType kTypes[] = {ElementType::F32, ElementType::F16,
                              ElementType::BF16};

gnnc_buffer bufferOf(const rt::DeviceBuffer &b) {
  return {b.address(), static_cast<uint64_t>(b.size())};
}

/// The device, a stream, a ragged graph on the device and its C handles,
/// shared by the tests.
struct Fixture {
  std::optional<rt::Device> device;
  std::optional<rt::Stream> stream;
  graph::CsrGraph g;
  rt::DeviceBuffer rowPtr, colIdx;
  gnnc_context ctx = nullptr;
  gnnc_graph graph = nullptr;
  std::string error;
};

Fixture &fixture() {
  static Fixture *f = [] {
    auto *f = new Fixture;
    auto device = rt::Device::open(0);
    if (!device) {
      f->error = device.message();
      return f;
    }
    f->device.emplace(device.take());
    auto stream = rt::Stream::create();
    if (!stream) {
      f->error = stream.message();
      return f;
    }
    f->stream.emplace(stream.take());
    f->g = graph::makeRaggedTestGraph(7, 3000, 2500);
    f->g.name = "ragged";
    std::vector<int32_t> cols(f->g.colIdx.begin(), f->g.colIdx.end());
    auto rowPtr = rt::DeviceBuffer::allocate(f->g.rowPtr.size() * 8);
    auto colIdx =
        rt::DeviceBuffer::allocate(std::max<size_t>(cols.size(), 1) * 4);
    if (!rowPtr || !colIdx ||
        !rowPtr->copyFromHost(f->g.rowPtr.data(), f->g.rowPtr.size() * 8) ||
        !colIdx->copyFromHost(cols.data(), cols.size() * 4)) {
      f->error = "uploading the graph";
      return f;
    }
    f->rowPtr = rowPtr.take();
    f->colIdx = colIdx.take();
    if (gnnc_context_create(0, nullptr, "off", &f->ctx) != GNNC_OK ||
        gnnc_graph_create(f->ctx, "ragged", f->g.numRows, f->g.numCols,
                          f->g.nnz(), f->g.rowPtr.data(), cols.data(),
                          bufferOf(f->rowPtr), bufferOf(f->colIdx),
                          &f->graph) != GNNC_OK)
      f->error = gnnc_last_error();
    return f;
  }();
  return *f;
}

uint64_t streamHandle() {
  return reinterpret_cast<uintptr_t>(fixture().stream->handle());
}

gnnc_op_desc descOf(const OpDesc &op) {
  gnnc_op_desc d;
  gnnc_op_desc_init(&d);
  d.kind = static_cast<gnnc_op_kind>(op.kind);
  d.dtype = static_cast<gnnc_dtype>(op.type);
  d.width = op.width;
  d.row_stride = op.rowStride;
  d.edge_values = op.edgeValues;
  d.reduce = static_cast<gnnc_reduce>(op.reduce);
  d.scale = static_cast<gnnc_scale>(op.scale);
  d.has_self_weight = op.selfWeight.has_value();
  d.self_weight = op.selfWeight.value_or(0);
  d.has_col_norm_exponent = op.colNormExponent.has_value();
  d.col_norm_exponent = op.colNormExponent.value_or(0);
  d.form = static_cast<gnnc_sddmm_form>(op.form);
  d.has_leaky_relu = op.leakyRelu.has_value();
  d.leaky_relu = op.leakyRelu.value_or(0);
  return d;
}

/// The kernel for `op` on the fixture's graph and the schedule it runs.
gnnc_kernel kernelFor(const OpDesc &op, Schedule *schedule,
                      const char *written = nullptr) {
  gnnc_op_desc d = descOf(op);
  gnnc_kernel kernel = nullptr;
  EXPECT_EQ(gnnc_kernel_get(fixture().graph, &d, written, &kernel), GNNC_OK)
      << gnnc_last_error();
  if (!kernel)
    return nullptr;
  char text[512], source[64];
  EXPECT_EQ(
      gnnc_kernel_schedule(kernel, text, sizeof(text), source, sizeof(source)),
      GNNC_OK)
      << gnnc_last_error();
  gnnc_kernel again = nullptr;
  EXPECT_EQ(gnnc_kernel_get(fixture().graph, &d, written, &again), GNNC_OK);
  EXPECT_EQ(again, kernel) << "a second request compiled again";
  auto parsed = parseSchedule(text);
  EXPECT_TRUE(parsed) << parsed.message();
  if (schedule && parsed)
    *schedule = *parsed;
  std::string from = source;
  if (written)
    EXPECT_EQ(from, "written");
  else
    EXPECT_TRUE(from == "database" || from == "cost model" ||
                from == "measured" || from == "default")
        << from;
  return kernel;
}

rt::DeviceBuffer upload(const std::vector<float> &host, ElementType type) {
  auto b = ops::uploadTensor(host, type);
  EXPECT_TRUE(b) << b.message();
  return b ? b.take() : rt::DeviceBuffer();
}

rt::DeviceBuffer poisoned(size_t count, ElementType type) {
  auto b = ops::allocatePoisoned(count, type);
  EXPECT_TRUE(b) << b.message();
  return b ? b.take() : rt::DeviceBuffer();
}

std::vector<float> download(const rt::DeviceBuffer &b, size_t count,
                            ElementType type) {
  auto got = ops::downloadTensor(b, count, type);
  EXPECT_TRUE(got) << got.message();
  return got ? got.take() : std::vector<float>(count, NAN);
}

rt::KernelSpec named(const std::string &name) {
  rt::KernelSpec spec;
  spec.name = name;
  return spec;
}

/// Runs spmm `op` through the C interface on `stream` and compares with
/// ref::spmm, each row within the tolerance of its degree.
void checkSpmm(const OpDesc &op, uint64_t stream,
               const char *written = nullptr) {
  Fixture &f = fixture();
  const graph::CsrGraph &g = f.g;
  SCOPED_TRACE(std::string(elementTypeName(op.type)) + " " +
               reduceName(op.reduce) + " " + degreeScaleName(op.scale) +
               (op.edgeValues ? " values" : "") +
               (op.selfWeight ? " self" : "") + " stride " +
               std::to_string(op.stride()));
  Schedule schedule;
  gnnc_kernel kernel = kernelFor(op, &schedule, written);
  ASSERT_NE(kernel, nullptr);
  const int64_t w = op.width, s = op.stride();
  std::vector<float> x =
      ref::roundThrough(ref::randomFeatures(g.numCols * w, 11), op.type);
  std::vector<float> values =
      ref::roundThrough(ref::randomFeatures(g.nnz(), 12), op.type);
  rt::DeviceBuffer dx = upload(ops::padRows(x, g.numCols, w, s), op.type);
  rt::DeviceBuffer dv;
  if (op.edgeValues)
    dv = upload(values, op.type);
  rt::DeviceBuffer dy = poisoned(static_cast<size_t>(g.numRows * s), op.type);
  gnnc_buffer none = {0, 0};
  ASSERT_EQ(gnnc_spmm(kernel, bufferOf(dx), op.edgeValues ? bufferOf(dv) : none,
                      bufferOf(dy), stream),
            GNNC_OK)
      << gnnc_last_error();
  ASSERT_TRUE(stream ? f.stream->synchronize() : f.device->synchronize());
  std::vector<float> padded =
      download(dy, static_cast<size_t>(g.numRows * s), op.type);
  std::vector<float> got(static_cast<size_t>(g.numRows * w));
  for (int64_t r = 0; r < g.numRows; ++r) {
    std::copy(padded.begin() + r * s, padded.begin() + r * s + w,
              got.begin() + r * w);
    for (int64_t c = w; c < s; ++c)
      EXPECT_TRUE(std::isnan(padded[r * s + c]))
          << "the kernel wrote padding of y at row " << r;
  }
  ref::SpmmOptions options;
  options.reduce = op.reduce;
  options.scale = op.scale;
  options.selfWeight = op.selfWeight;
  options.colNormExponent = op.columnExponent();
  std::vector<double> expected, magnitude;
  ref::spmm(g, op.edgeValues ? values.data() : nullptr, x.data(), w, options,
            expected, &magnitude);
  // Each row's tolerance, as checkSpmm allows it for this schedule.
  ops::SpmmSignature sig;
  sig.type = op.type;
  sig.featureWidth = w;
  sig.rowStride = s;
  sig.reduce = op.reduce;
  sig.accumulate16 = schedule.accumulate == Accumulate::F16;
  sig.discBatch = schedule.discBatch;
  auto plan = planKernel(op, schedule);
  ASSERT_TRUE(plan) << plan.message();
  sig.atomicPieceEdges = plan->atomicPieceEdges;
  const double base = ops::spmmTolerance(op.type);
  for (int64_t r = 0; r < g.numRows; ++r) {
    double factor = ops::spmmTolerance(sig, g.degree(r)) / base;
    for (int64_t c = 0; c < w; ++c)
      magnitude[r * w + c] *= factor;
  }
  ops::KernelCheck check =
      ops::compareWithReference(named("spmm " + schedule.str()), g, w, op.type,
                                got, expected, magnitude, w, base);
  EXPECT_TRUE(check.ok) << check.report;
}

TEST(CApiGpu, Spmm) {
  SKIP_WITHOUT_GPU();
  ASSERT_EQ(fixture().error, "");
  for (ElementType type : kTypes) {
    OpDesc op = spmmOp(type, kWidth);
    checkSpmm(op, 0);
    checkSpmm(op, streamHandle());
    op.reduce = Reduce::Mean;
    checkSpmm(op, streamHandle());
    op.reduce = Reduce::Max;
    op.edgeValues = true;
    checkSpmm(op, streamHandle());
    op = spmmOp(type, kWidth);
    op.scale = DegreeScale::Both;
    op.edgeValues = true;
    checkSpmm(op, streamHandle());
    op.colNormExponent = 1.0;
    checkSpmm(op, streamHandle());
    op = spmmOp(type, kWidth);
    op.selfWeight = 0.25;
    op.reduce = Reduce::Mean;
    checkSpmm(op, streamHandle());
    op = spmmOp(type, kWidth);
    op.rowStride = 40;
    op.edgeValues = true;
    checkSpmm(op, streamHandle());
  }
}

TEST(CApiGpu, SpmmWrittenSchedule) {
  SKIP_WITHOUT_GPU();
  ASSERT_EQ(fixture().error, "");
  OpDesc op = spmmOp(ElementType::F16, kWidth);
  op.edgeValues = true;
  checkSpmm(op, streamHandle(),
            "#gnn.schedule<strategy = edge_parallel, edges_per_warp = 64>");
}

TEST(CApiGpu, SpmmMeasuredChoice) {
  SKIP_WITHOUT_GPU();
  ASSERT_EQ(fixture().error, "");
  Fixture &f = fixture();
  ASSERT_EQ(gnnc_context_set_measure(f.ctx, 3), GNNC_OK) << gnnc_last_error();
  // A signature no other test requested, so that it is chosen now.
  OpDesc op = spmmOp(ElementType::F32, 24);
  op.scale = DegreeScale::Both;
  gnnc_op_desc d = descOf(op);
  gnnc_kernel kernel = nullptr;
  ASSERT_EQ(gnnc_kernel_get(f.graph, &d, nullptr, &kernel), GNNC_OK)
      << gnnc_last_error();
  char text[512], source[64];
  ASSERT_EQ(
      gnnc_kernel_schedule(kernel, text, sizeof(text), source, sizeof(source)),
      GNNC_OK);
  EXPECT_EQ(std::string(source), "measured") << text;
  checkSpmm(op, streamHandle());
  ASSERT_EQ(gnnc_context_set_measure(f.ctx, 0), GNNC_OK);
  EXPECT_EQ(gnnc_context_set_measure(f.ctx, -1), GNNC_ERROR);
  EXPECT_NE(std::string(gnnc_last_error()).find("measure_top_k"),
            std::string::npos)
      << gnnc_last_error();
}

TEST(CApiGpu, SpmmRefusesShortBuffers) {
  SKIP_WITHOUT_GPU();
  ASSERT_EQ(fixture().error, "");
  Fixture &f = fixture();
  OpDesc op = spmmOp(ElementType::F32, kWidth);
  gnnc_kernel kernel = kernelFor(op, nullptr);
  ASSERT_NE(kernel, nullptr);
  rt::DeviceBuffer x = poisoned(8, ElementType::F32);
  rt::DeviceBuffer y =
      poisoned(static_cast<size_t>(f.g.numRows * kWidth), ElementType::F32);
  ASSERT_EQ(gnnc_spmm(kernel, bufferOf(x), {0, 0}, bufferOf(y), 0), GNNC_ERROR);
  std::string message = gnnc_last_error();
  EXPECT_NE(message.find("gnnc_spmm: x has 32 bytes, the kernel reads " +
                         std::to_string(f.g.numCols * kWidth * 4) + " (" +
                         std::to_string(f.g.numCols) + " rows x 33 x f32)"),
            std::string::npos)
      << message;
  ASSERT_EQ(gnnc_sddmm(kernel, bufferOf(x), bufferOf(x), bufferOf(y), 0),
            GNNC_ERROR);
  EXPECT_NE(std::string(gnnc_last_error()).find("not gnn.sddmm"),
            std::string::npos)
      << gnnc_last_error();
}

TEST(CApiGpu, Sddmm) {
  SKIP_WITHOUT_GPU();
  ASSERT_EQ(fixture().error, "");
  Fixture &f = fixture();
  const graph::CsrGraph &g = f.g;
  for (ElementType type : kTypes)
    for (SddmmForm form : {SddmmForm::Dot, SddmmForm::Add}) {
      OpDesc op;
      op.kind = OpKind::Sddmm;
      op.type = type;
      op.width = kWidth;
      op.form = form;
      if (form == SddmmForm::Add)
        op.leakyRelu = 0.2;
      SCOPED_TRACE(std::string(elementTypeName(type)) + " " +
                   sddmmFormName(form));
      gnnc_kernel kernel = kernelFor(op, nullptr);
      ASSERT_NE(kernel, nullptr);
      std::vector<float> a =
          ref::roundThrough(ref::randomFeatures(g.numRows * kWidth, 21), type);
      std::vector<float> b =
          ref::roundThrough(ref::randomFeatures(g.numCols * kWidth, 22), type);
      const int64_t perEdge = form == SddmmForm::Dot ? 1 : kWidth;
      const size_t count = static_cast<size_t>(g.nnz() * perEdge);
      rt::DeviceBuffer da = upload(a, type), db = upload(b, type);
      rt::DeviceBuffer dout = poisoned(count, type);
      ASSERT_EQ(gnnc_sddmm(kernel, bufferOf(da), bufferOf(db), bufferOf(dout),
                           streamHandle()),
                GNNC_OK)
          << gnnc_last_error();
      ASSERT_TRUE(f.stream->synchronize());
      std::vector<float> got = download(dout, count, type);
      std::vector<double> expected, magnitude;
      std::optional<float> slope;
      if (op.leakyRelu)
        slope = static_cast<float>(*op.leakyRelu);
      ref::sddmm(g, a.data(), b.data(), kWidth, form, slope, expected,
                 &magnitude);
      ops::KernelCheck check = ops::compareWithReference(
          named("sddmm"), g, kWidth, type, got, expected, magnitude, perEdge);
      EXPECT_TRUE(check.ok) << check.report;
    }
}

TEST(CApiGpu, EdgeSoftmaxAndGrad) {
  SKIP_WITHOUT_GPU();
  ASSERT_EQ(fixture().error, "");
  Fixture &f = fixture();
  const graph::CsrGraph &g = f.g;
  for (ElementType type : kTypes)
    for (int64_t heads : {1, 3}) {
      SCOPED_TRACE(std::string(elementTypeName(type)) + " heads " +
                   std::to_string(heads));
      const size_t count = static_cast<size_t>(g.nnz() * heads);
      OpDesc op;
      op.kind = OpKind::EdgeSoftmax;
      op.type = type;
      op.width = heads;
      gnnc_kernel softmax = kernelFor(op, nullptr);
      op.kind = OpKind::EdgeSoftmaxGrad;
      gnnc_kernel grad = kernelFor(op, nullptr);
      ASSERT_NE(softmax, nullptr);
      ASSERT_NE(grad, nullptr);

      std::vector<float> logits = ref::roundThrough(
          ref::randomFeatures(static_cast<int64_t>(count), 31, -8.0f, 8.0f),
          type);
      rt::DeviceBuffer dlogits = upload(logits, type);
      rt::DeviceBuffer dout = poisoned(count, type);
      ASSERT_EQ(gnnc_edge_softmax(softmax, bufferOf(dlogits), bufferOf(dout),
                                  streamHandle()),
                GNNC_OK)
          << gnnc_last_error();
      ASSERT_TRUE(f.stream->synchronize());
      std::vector<float> out = download(dout, count, type);
      std::vector<double> expected;
      ref::edgeSoftmax(g, logits.data(), heads, expected);
      std::string report;
      Status cmp = ref::compareToReference(out, expected, heads, 0.0,
                                           ops::spmmTolerance(type), &report);
      EXPECT_TRUE(cmp.isOk()) << cmp.message();

      // The gradient, from the kernel's own (rounded) softmax output.
      std::vector<float> gradOut = ref::roundThrough(
          ref::randomFeatures(static_cast<int64_t>(count), 32), type);
      rt::DeviceBuffer dgrad = upload(gradOut, type);
      rt::DeviceBuffer ddx = poisoned(count, type);
      ASSERT_EQ(gnnc_edge_softmax_grad(grad, bufferOf(dout), bufferOf(dgrad),
                                       bufferOf(ddx), streamHandle()),
                GNNC_OK)
          << gnnc_last_error();
      ASSERT_TRUE(f.stream->synchronize());
      std::vector<float> dx = download(ddx, count, type);
      std::vector<double> dxExpected, magnitude;
      ref::edgeSoftmaxGrad(g, out.data(), gradOut.data(), heads, dxExpected,
                           &magnitude);
      ops::KernelCheck check =
          ops::compareWithReference(named("edge_softmax_grad"), g, heads, type,
                                    dx, dxExpected, magnitude, heads);
      EXPECT_TRUE(check.ok) << check.report;
    }
}

TEST(CApiGpu, ContextDeviceAndFactors) {
  SKIP_WITHOUT_GPU();
  ASSERT_EQ(fixture().error, "");
  Fixture &f = fixture();
  char name[256], arch[32];
  ASSERT_EQ(gnnc_context_device(f.ctx, name, sizeof(name), arch, sizeof(arch)),
            GNNC_OK)
      << gnnc_last_error();
  EXPECT_EQ(std::string(arch), f.device->archString());
  char tiny[2];
  EXPECT_EQ(gnnc_context_device(f.ctx, nullptr, 0, tiny, sizeof(tiny)),
            GNNC_ERROR);

  OpDesc op = spmmOp(ElementType::F32, 8);
  op.reduce = Reduce::Mean;
  op.scale = DegreeScale::Both;
  op.colNormExponent = 1.5;
  gnnc_op_desc d = descOf(op);
  std::vector<float> row(f.g.numRows), col(f.g.numCols);
  ASSERT_EQ(gnnc_graph_spmm_factors(f.graph, &d, row.data(), col.data()),
            GNNC_OK)
      << gnnc_last_error();
  std::vector<double> rowRef, colRef;
  ref::spmmFactors(f.g, op.reduce, op.scale, rowRef, colRef, 1.5);
  for (int64_t r = 0; r < f.g.numRows; ++r)
    EXPECT_EQ(row[r], static_cast<float>(rowRef[r])) << "row " << r;
  for (int64_t c = 0; c < f.g.numCols; ++c)
    EXPECT_EQ(col[c], static_cast<float>(colRef[c])) << "column " << c;

  // The graph's device arrays are checked against its size.
  gnnc_graph bad = nullptr;
  std::vector<int32_t> cols(f.g.colIdx.begin(), f.g.colIdx.end());
  gnnc_buffer shortRows = bufferOf(f.rowPtr);
  shortRows.bytes -= 8;
  EXPECT_EQ(gnnc_graph_create(f.ctx, "short", f.g.numRows, f.g.numCols,
                              f.g.nnz(), f.g.rowPtr.data(), cols.data(),
                              shortRows, bufferOf(f.colIdx), &bad),
            GNNC_ERROR);
  EXPECT_NE(std::string(gnnc_last_error()).find("dev_row_ptr"),
            std::string::npos)
      << gnnc_last_error();
  EXPECT_EQ(bad, nullptr);
}

//===----------------------------------------------------------------------===//
// Snapshot groups
//===----------------------------------------------------------------------===//

/// A directed evolving R-MAT series of 8 snapshots (so that a group and its
/// transpose differ).
const graph::SnapshotSeries &directedSeries() {
  static graph::SnapshotSeries *series = [] {
    graph::EvolvingRmatOptions o;
    o.scale = 9;
    o.edgeFactor = 8;
    o.snapshots = 8;
    o.churn = 0.2;
    o.seed = 5;
    o.undirected = false;
    auto s = graph::generateEvolvingRmat(o);
    EXPECT_TRUE(s) << s.message();
    return new graph::SnapshotSeries(s ? s.take() : graph::SnapshotSeries());
  }();
  return *series;
}

/// The group of the first `count` snapshots of `series`: the C handle on the
/// fixture's context (nullptr after a failure) and the C++ split.
struct Group {
  gnnc_snapshot_group handle = nullptr;
  graph::SnapshotGroup host;
  ~Group() { gnnc_snapshot_group_destroy(handle); }
};

/// The first `count` snapshots of `series` as the C functions take them
/// (int32 columns; the offsets point into `series`).
struct SeriesArrays {
  std::vector<std::vector<int32_t>> cols;
  std::vector<const int64_t *> rowPtrs;
  std::vector<const int32_t *> colIdxs;
  std::vector<int64_t> nnzs;

  SeriesArrays(const graph::SnapshotSeries &series, int64_t count) {
    for (int64_t s = 0; s < count; ++s) {
      const graph::CsrGraph &g = series.snapshots[s];
      cols.emplace_back(g.colIdx.begin(), g.colIdx.end());
      rowPtrs.push_back(g.rowPtr.data());
      nnzs.push_back(g.nnz());
    }
    for (const auto &c : cols)
      colIdxs.push_back(c.data());
  }
};

void makeGroup(const graph::SnapshotSeries &series, int64_t count,
               Group &group) {
  SeriesArrays a(series, count);
  ASSERT_EQ(gnnc_snapshot_group_create(fixture().ctx, "evolving",
                                       series.numNodes, count, a.rowPtrs.data(),
                                       a.colIdxs.data(), a.nnzs.data(),
                                       &group.handle),
            GNNC_OK)
      << gnnc_last_error();
  auto host = graph::overlapGroup(series, 0, count);
  ASSERT_TRUE(host) << host.message();
  group.host = host.take();
}

/// Runs the multi-snapshot spmm `d` (width: F per snapshot) over `group`
/// (its transpose with `transposed`) through the C interface on `stream`
/// and compares every snapshot's result with the CPU reference.
void checkSnapshotSpmm(const Group &group, const gnnc_op_desc &d,
                       bool transposed, uint64_t stream, uint64_t seed,
                       const char *written = nullptr) {
  Fixture &f = fixture();
  const ElementType type = static_cast<ElementType>(d.dtype);
  const int64_t snaps = group.host.size(), width = d.width;
  SCOPED_TRACE(std::string(elementTypeName(type)) + " " +
               std::to_string(snaps) + " x " + std::to_string(width) +
               " reduce " + std::to_string(d.reduce) + " scale " +
               std::to_string(d.scale) +
               (d.has_col_norm_exponent
                    ? " exponent " + std::to_string(d.col_norm_exponent)
                    : "") +
               (transposed ? " transposed" : ""));
  gnnc_kernel kernel = nullptr;
  ASSERT_EQ(gnnc_snapshot_kernel_get(group.handle, &d, written,
                                     transposed ? 1 : 0, &kernel),
            GNNC_OK)
      << gnnc_last_error();
  gnnc_kernel again = nullptr;
  ASSERT_EQ(gnnc_snapshot_kernel_get(group.handle, &d, written,
                                     transposed ? 1 : 0, &again),
            GNNC_OK);
  EXPECT_EQ(again, kernel) << "a second request compiled again";
  char text[512], source[64];
  ASSERT_EQ(
      gnnc_kernel_schedule(kernel, text, sizeof(text), source, sizeof(source)),
      GNNC_OK)
      << gnnc_last_error();
  EXPECT_EQ(std::string(source), written ? "written" : "default");
  auto schedule = parseSchedule(text);
  ASSERT_TRUE(schedule) << schedule.message();
  EXPECT_EQ(schedule->strategy, Strategy::Sliced) << text;

  const graph::SnapshotGroup side =
      transposed ? graph::transposeGroup(group.host) : group.host;
  const int64_t n = side.numNodes, rowLen = snaps * width;
  std::vector<float> x =
      ref::roundThrough(ref::randomFeatures(n * rowLen, seed), type);
  rt::DeviceBuffer dx = upload(x, type);
  rt::DeviceBuffer dy = poisoned(static_cast<size_t>(n * rowLen), type);
  ASSERT_EQ(gnnc_snapshot_spmm(kernel, bufferOf(dx), bufferOf(dy), stream),
            GNNC_OK)
      << gnnc_last_error();
  ASSERT_TRUE(stream ? f.stream->synchronize() : f.device->synchronize());
  std::vector<float> got = download(dy, static_cast<size_t>(n * rowLen), type);
  ref::SpmmOptions options;
  options.reduce = static_cast<Reduce>(d.reduce);
  options.scale = static_cast<DegreeScale>(d.scale);
  options.colNormExponent = d.has_col_norm_exponent ? d.col_norm_exponent : 0.5;
  std::vector<double> magnitude;
  std::vector<double> expected =
      ops::snapshotSpmmReference(side, x, width, options, &magnitude);
  // A row cut into slices reaches the result in atomic pieces of at most
  // slice_size edges: each row's bound grows with its degree.
  ops::SpmmSignature sig;
  sig.type = type;
  sig.atomicPieceEdges = schedule->sliceSize;
  const double base = ops::spmmTolerance(type);
  for (int64_t s = 0; s < snaps; ++s) {
    graph::CsrGraph g = side.snapshot(s);
    for (int64_t r = 0; r < n; ++r) {
      const double factor = ops::spmmTolerance(sig, g.degree(r)) / base;
      for (int64_t c = 0; c < width; ++c)
        magnitude[r * rowLen + s * width + c] *= factor;
    }
  }
  ops::KernelCheck check = ops::compareWithReference(
      named(std::string("snapshot spmm ") + text), side.overlap, rowLen, type,
      got, expected, magnitude, rowLen, base);
  EXPECT_TRUE(check.ok) << check.report;
}

gnnc_op_desc snapshotDesc(ElementType type, int64_t width, Reduce reduce,
                          DegreeScale scale) {
  OpDesc op = spmmOp(type, width);
  op.reduce = reduce;
  op.scale = scale;
  return descOf(op);
}

TEST(CApiGpu, SnapshotSpmmAndFeatureGradient) {
  SKIP_WITHOUT_GPU();
  ASSERT_EQ(fixture().error, "");
  struct Variant {
    ElementType type;
    int64_t snapshots, width;
    Reduce reduce;
    DegreeScale scale;
  };
  const Variant variants[] = {
      {ElementType::F32, 4, 32, Reduce::Sum, DegreeScale::None},
      {ElementType::F32, 4, 5, Reduce::Sum, DegreeScale::Both},
      {ElementType::F32, 3, 16, Reduce::Mean, DegreeScale::None},
      {ElementType::F32, 8, 1, Reduce::Sum, DegreeScale::Left},
      {ElementType::F32, 2, 8, Reduce::Sum, DegreeScale::Right},
      {ElementType::F32, 3, 4, Reduce::Mean, DegreeScale::Both},
      {ElementType::F32, 1, 33, Reduce::Mean, DegreeScale::Left},
      {ElementType::F16, 4, 32, Reduce::Sum, DegreeScale::Both},
      {ElementType::F16, 8, 6, Reduce::Mean, DegreeScale::Right},
      {ElementType::BF16, 4, 16, Reduce::Sum, DegreeScale::Both},
      {ElementType::BF16, 3, 5, Reduce::Mean, DegreeScale::None},
  };
  std::map<int64_t, std::unique_ptr<Group>> groups;
  uint64_t seed = 100;
  for (const Variant &v : variants) {
    std::unique_ptr<Group> &group = groups[v.snapshots];
    if (!group) {
      group = std::make_unique<Group>();
      makeGroup(directedSeries(), v.snapshots, *group);
      ASSERT_NE(group->handle, nullptr);
    }
    gnnc_op_desc fwd = snapshotDesc(v.type, v.width, v.reduce, v.scale);
    checkSnapshotSpmm(*group, fwd, false, streamHandle(), seed++);
    // The feature gradient: the gradient op over the transposed group.
    gnnc_op_desc grad;
    ASSERT_EQ(gnnc_spmm_feature_grad_op(&fwd, &grad), GNNC_OK)
        << gnnc_last_error();
    checkSnapshotSpmm(*group, grad, true, streamHandle(), seed++);
  }
  // The default stream, and a written schedule.
  gnnc_op_desc d =
      snapshotDesc(ElementType::F32, 12, Reduce::Sum, DegreeScale::Both);
  checkSnapshotSpmm(*groups[4], d, false, 0, seed++);
  checkSnapshotSpmm(*groups[4], d, true, streamHandle(), seed++,
                    "#gnn.schedule<strategy = sliced, slice_size = 4>");
  // The counts read back as the split's.
  const Group &g = *groups[8];
  int64_t overlap = 0, stored = 0, total = 0;
  double rate = 0;
  ASSERT_EQ(
      gnnc_snapshot_group_edges(g.handle, &overlap, &stored, &total, &rate),
      GNNC_OK);
  EXPECT_EQ(overlap, g.host.overlap.nnz());
  EXPECT_EQ(stored, g.host.storedEdges());
  EXPECT_EQ(total, g.host.snapshotEdges());
  EXPECT_DOUBLE_EQ(rate, g.host.overlapRate());
}

TEST(CApiGpu, SnapshotGroupChooseTimesEachSize) {
  SKIP_WITHOUT_GPU();
  const graph::SnapshotSeries &series = directedSeries();
  SeriesArrays a(series, series.size());
  gnnc_snapshot_group_choice choice;
  ASSERT_EQ(gnnc_snapshot_group_choose(
                fixture().ctx, "evolving", series.numNodes, series.size(),
                a.rowPtrs.data(), a.colIdxs.data(), a.nnzs.data(), 16, GNNC_F16,
                0, 1, &choice),
            GNNC_OK)
      << gnnc_last_error();
  ASSERT_EQ(choice.num_sizes, 3);
  EXPECT_GT(choice.host_to_device_gbps, 0);
  EXPECT_GT(choice.memory_budget, 0);
  bool chosen = false;
  for (int i = 0; i < choice.num_sizes; ++i) {
    const gnnc_snapshot_group_size &s = choice.sizes[i];
    EXPECT_EQ(s.snapshots, int64_t(2) << i);
    EXPECT_GT(s.aggregate_ms, 0);
    EXPECT_GT(s.copy_ms, 0);
    EXPECT_EQ(s.feature_bytes, series.numNodes * s.snapshots * 16 * 2);
    EXPECT_EQ(s.groups, 8 / s.snapshots);
    EXPECT_EQ(s.fits, 1);
    chosen = chosen || s.snapshots == choice.snapshots;
  }
  EXPECT_TRUE(chosen) << choice.snapshots;
}

TEST(CApiGpu, SnapshotSpmmRefusesBadLaunches) {
  SKIP_WITHOUT_GPU();
  ASSERT_EQ(fixture().error, "");
  Group group;
  makeGroup(directedSeries(), 3, group);
  ASSERT_NE(group.handle, nullptr);
  const int64_t n = group.host.numNodes;
  gnnc_op_desc d =
      snapshotDesc(ElementType::F32, 4, Reduce::Sum, DegreeScale::None);
  gnnc_kernel kernel = nullptr;
  ASSERT_EQ(gnnc_snapshot_kernel_get(group.handle, &d, nullptr, 0, &kernel),
            GNNC_OK)
      << gnnc_last_error();
  rt::DeviceBuffer x = poisoned(static_cast<size_t>(n * 12), ElementType::F32);
  rt::DeviceBuffer y = poisoned(static_cast<size_t>(n * 12), ElementType::F32);
  rt::DeviceBuffer tiny = poisoned(8, ElementType::F32);
  auto expectRefused = [](gnnc_status status, const std::string &part) {
    EXPECT_EQ(status, GNNC_ERROR);
    EXPECT_NE(std::string(gnnc_last_error()).find(part), std::string::npos)
        << gnnc_last_error();
  };
  expectRefused(gnnc_snapshot_spmm(kernel, bufferOf(tiny), bufferOf(y), 0),
                "gnnc_snapshot_spmm: x has 32 bytes, the kernel reads " +
                    std::to_string(n * 12 * 4) + " (" + std::to_string(n) +
                    " nodes x 12 x f32)");
  expectRefused(gnnc_snapshot_spmm(kernel, bufferOf(x), bufferOf(tiny), 0),
                "y has 32 bytes");
  expectRefused(gnnc_snapshot_spmm(kernel, bufferOf(x), bufferOf(x), 0),
                "x and y overlap");
  // Each launch function takes its own kernels.
  expectRefused(gnnc_spmm(kernel, bufferOf(x), {0, 0}, bufferOf(y), 0),
                "launch it with gnnc_snapshot_spmm");
  gnnc_kernel graphKernel = kernelFor(spmmOp(ElementType::F32, 4), nullptr);
  ASSERT_NE(graphKernel, nullptr);
  expectRefused(gnnc_snapshot_spmm(graphKernel, bufferOf(x), bufferOf(y), 0),
                "launch it with gnnc_spmm");
  // Ops and schedules a group cannot run.
  gnnc_kernel bad = nullptr;
  d.reduce = GNNC_REDUCE_MAX;
  expectRefused(gnnc_snapshot_kernel_get(group.handle, &d, nullptr, 0, &bad),
                "reduce = sum or mean");
  d.reduce = GNNC_REDUCE_SUM;
  expectRefused(gnnc_snapshot_kernel_get(
                    group.handle, &d,
                    "#gnn.schedule<strategy = vertex_parallel>", 0, &bad),
                "strategy = sliced");
  EXPECT_EQ(bad, nullptr);
}

} // namespace
