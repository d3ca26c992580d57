//===- LinearGrad.cpp - The elementwise end of a layer's backward ---------===//
#include "gnnc/ops/LinearGrad.h"

#include "gnnc/reference/Spmm.h"

#include <algorithm>
#include <cmath>

using namespace gnnc;
using namespace gnnc::ops;

namespace {

/// The threads of a block of either kernel (the template argument of the
/// device helpers).
constexpr int kThreads = 256;
/// Blocks of the pass per SM.
constexpr int64_t kBlocksPerSm = 4;
/// The widest access of the pass, in bytes.
constexpr int kMaxAccessBytes = 16;
/// Columns of db per block of the column sums (the template argument of
/// columnSums and the grid's items per block).
constexpr int kSumColumns = 32;
constexpr const char *kSumsKernel = "gnnc_linear_grad_column_sums";

std::string passKernelName(ElementType type, int vw) {
  return std::string("gnnc_relu_bias_grad_") + elementTypeName(type) + "_v" +
         std::to_string(vw);
}

/// The vector widths of the pass: powers of two up to kMaxAccessBytes an
/// access.
std::vector<int> vectorWidths(ElementType type) {
  std::vector<int> widths;
  for (int vw = 1; vw * int(elementSize(type)) <= kMaxAccessBytes; vw *= 2)
    widths.push_back(vw);
  return widths;
}

const ElementType kTypes[] = {ElementType::F32, ElementType::F16,
                              ElementType::BF16};

std::string kernelSource() {
  const std::string threads = std::to_string(kThreads);
  std::string source = "// The elementwise end of a layer's backward (gnnc "
                       "ops).\n#include \"gnnc/cuda/linear_grad.cuh\"\n";
  for (ElementType type : kTypes)
    for (int vw : vectorWidths(type)) {
      const std::string t = elementCudaType(type);
      source += "\nextern \"C\" __global__ void __launch_bounds__(" + threads +
                ") " + passKernelName(type, vw) + "(const " + t +
                " *y, const " + t + " *dy,\n    " + t +
                " *dz, float *partials, long long rows, long long width,\n"
                "    long long num_blocks) {\n"
                "  gnnc::cuda::linear_grad::reluBiasGrad<" +
                t + ", " + std::to_string(vw) + ", " + threads +
                ">(y, dy, dz, partials,\n      rows, width);\n}\n";
    }
  source += "\nextern \"C\" __global__ void __launch_bounds__(" + threads +
            ") " + kSumsKernel +
            "(const float *partials,\n    long long blocks, float *db, long "
            "long width) {\n  gnnc::cuda::linear_grad::columnSums<" +
            threads + ", " + std::to_string(kSumColumns) +
            ">(partials, blocks, width, db);\n}\n";
  return source;
}

} // namespace

std::vector<rt::KernelSpec> gnnc::ops::linearGradKernelSpecs() {
  const std::string source = kernelSource();
  std::vector<rt::KernelSpec> specs;
  for (ElementType type : kTypes)
    for (int vw : vectorWidths(type)) {
      rt::KernelSpec spec;
      spec.name = passKernelName(type, vw);
      spec.source = source;
      // A runtime helper, no gnn op: only the grid's count has a role (one
      // block per item).
      spec.params = {{"y", ParamKind::Pointer},
                     {"dy", ParamKind::Pointer},
                     {"dz", ParamKind::Pointer},
                     {"partials", ParamKind::Pointer},
                     {"rows", ParamKind::Int64},
                     {"width", ParamKind::Int64},
                     {"num_blocks", ParamKind::Int64, ParamRole::NumItems}};
      spec.launch.blockX = kThreads;
      spec.launch.grid = {ParamRole::NumItems};
      spec.launch.itemsPerBlock = 1;
      specs.push_back(std::move(spec));
    }
  rt::KernelSpec sums;
  sums.name = kSumsKernel;
  sums.source = source;
  sums.params = {{"partials", ParamKind::Pointer},
                 {"blocks", ParamKind::Int64},
                 {"db", ParamKind::Pointer},
                 {"width", ParamKind::Int64, ParamRole::NumItems}};
  sums.launch.blockX = kThreads;
  sums.launch.grid = {ParamRole::NumItems};
  sums.launch.itemsPerBlock = kSumColumns;
  specs.push_back(std::move(sums));
  return specs;
}

int64_t gnnc::ops::linearGradBlocks(int64_t rows, int smCount) {
  return std::max<int64_t>(
      1, std::min<int64_t>(rows, kBlocksPerSm * std::max(smCount, 1)));
}

Expected<LinearGradKernels> LinearGradKernels::load(rt::Runtime &runtime) {
  LinearGradKernels kernels;
  for (rt::KernelSpec &spec : linearGradKernelSpecs()) {
    Expected<rt::LoadedKernel> loaded = runtime.load(spec);
    if (!loaded)
      return loaded.status().withContext(
          "loading the kernels of a linear epilogue's backward");
    if (spec.name == kSumsKernel)
      kernels.sums_ = loaded.take();
    else
      for (ElementType type : kTypes)
        for (int vw : vectorWidths(type))
          if (spec.name == passKernelName(type, vw))
            kernels.pass_.emplace(std::pair{type, vw}, loaded.take());
  }
  return kernels;
}

Status LinearGradKernels::reluBiasGrad(
    rt::Runtime &runtime, ElementType type, const rt::DeviceBuffer &y,
    const rt::DeviceBuffer &dy, rt::DeviceBuffer &dz, rt::DeviceBuffer *db,
    int64_t rows, int64_t width, bool synchronize, void *stream) {
  const std::string what = "the ReLU and bias gradient of " +
                           std::to_string(rows) + " x " +
                           std::to_string(width) + " " + elementTypeName(type);
  if (rows < 0 || width < 1)
    return Status::error(what + ": expected rows >= 0 and a positive width");
  // The widest vector that divides the rows and suits every address.
  int vw = 1;
  for (int v : vectorWidths(type)) {
    const uint64_t align = static_cast<uint64_t>(v) * elementSize(type);
    if (width % v == 0 && y.address() % align == 0 &&
        dy.address() % align == 0 && dz.address() % align == 0)
      vw = v;
  }
  auto pass = pass_.find({type, vw});
  if (pass == pass_.end())
    return Status::error(what + ": the kernels are not loaded");
  const uint64_t bytes =
      static_cast<uint64_t>(rows) * width * elementSize(type);
  for (auto [name, buffer] : {std::pair{"y", &y}, std::pair{"dy", &dy},
                              std::pair{"dz", (const rt::DeviceBuffer *)&dz}})
    if (buffer->size() < bytes)
      return Status::error(what + ": " + name + " holds " +
                           std::to_string(buffer->size()) + " bytes, " +
                           std::to_string(bytes) + " needed");
  const uint64_t dbBytes = static_cast<uint64_t>(width) * sizeof(float);
  if (db && db->size() < dbBytes)
    return Status::error(what + ": db holds " + std::to_string(db->size()) +
                         " bytes, " + std::to_string(dbBytes) +
                         " needed (f32)");
  if (rows == 0) {
    if (db)
      GNNC_RETURN_IF_ERROR(db->fill(0));
    return synchronize ? runtime.synchronize() : Status::ok();
  }
  const int64_t blocks = linearGradBlocks(rows, runtime.device().smCount());
  if (db) {
    const uint64_t need = static_cast<uint64_t>(blocks) * dbBytes;
    if (partials_.size() < need) {
      // The old partials may still be read by a queued launch.
      GNNC_RETURN_IF_ERROR(runtime.synchronize());
      Expected<rt::DeviceBuffer> b = rt::DeviceBuffer::allocate(need);
      if (!b)
        return b.status().withContext(what);
      partials_ = b.take();
    }
  }
  rt::ArgPack args;
  args.bind("y", y)
      .bind("dy", dy)
      .bind("dz", dz)
      .bindAddress("partials", db ? partials_.address() : 0)
      .bind("rows", rows)
      .bind("width", width)
      .bind("num_blocks", blocks);
  GNNC_RETURN_IF_ERROR(
      runtime.launch(pass->second, args, synchronize && !db, stream));
  if (!db)
    return Status::ok();
  rt::ArgPack sums;
  sums.bind("partials", partials_)
      .bind("blocks", blocks)
      .bind("db", *db)
      .bind("width", width);
  return runtime.launch(sums_, sums, synchronize, stream);
}

void gnnc::ops::reluBiasGradReference(const std::vector<float> &y,
                                      const std::vector<float> &dy,
                                      int64_t rows, int64_t width,
                                      std::vector<double> &dz,
                                      std::vector<double> &db,
                                      std::vector<double> &dbAbs) {
  dz.assign(static_cast<size_t>(rows * width), 0.0);
  db.assign(static_cast<size_t>(width), 0.0);
  dbAbs.assign(static_cast<size_t>(width), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < width; ++c) {
      const size_t at = static_cast<size_t>(r * width + c);
      const double g = y[at] > 0.f ? double(dy[at]) : 0.0;
      dz[at] = g;
      db[c] += g;
      dbAbs[c] += std::fabs(g);
    }
}

double gnnc::ops::biasGradTolerance(int64_t rows) {
  return 1e-6 * std::sqrt(double(std::max<int64_t>(rows, 1))) + 1e-6;
}

Expected<KernelCheck> gnnc::ops::checkReluBiasGrad(rt::Runtime &runtime,
                                                   LinearGradKernels &kernels,
                                                   ElementType type,
                                                   int64_t rows, int64_t width,
                                                   uint64_t seed) {
  const size_t count = static_cast<size_t>(rows * width);
  std::vector<float> y =
      ref::roundThrough(ref::randomFeatures(rows * width, seed), type);
  // A quarter of the outputs exactly 0, as ReLU leaves them: no gradient.
  for (size_t i = 0; i < count; i += 4)
    y[i] = 0.f;
  std::vector<float> dy = ref::roundThrough(
      ref::randomFeatures(rows * width, seed ^ 0x9e3779b97f4a7c15ull), type);
  auto yDev = uploadTensor(y, type);
  auto dyDev = uploadTensor(dy, type);
  auto dzDev = allocatePoisoned(std::max<size_t>(count, 1), type);
  auto dbDev = allocatePoisoned(static_cast<size_t>(width), ElementType::F32);
  for (const Status &s :
       {yDev.status(), dyDev.status(), dzDev.status(), dbDev.status()})
    if (!s)
      return s;
  GNNC_RETURN_IF_ERROR(kernels.reluBiasGrad(runtime, type, *yDev, *dyDev,
                                            *dzDev, &*dbDev, rows, width));
  auto dz = downloadTensor(*dzDev, count, type);
  auto db =
      downloadTensor(*dbDev, static_cast<size_t>(width), ElementType::F32);
  if (!dz)
    return dz.status();
  if (!db)
    return db.status();
  std::vector<double> dzRef, dbRef, dbAbs;
  reluBiasGradReference(y, dy, rows, width, dzRef, dbRef, dbAbs);
  const std::string what = "ReLU and bias gradient, " + std::to_string(rows) +
                           " x " + std::to_string(width) + " " +
                           elementTypeName(type);
  // dz is dy or 0, exactly.
  for (size_t i = 0; i < count; ++i)
    if (!((*dz)[i] == dzRef[i]))
      return KernelCheck{false, what + ": dz[" + std::to_string(i / width) +
                                    ", " + std::to_string(i % width) +
                                    "] = " + std::to_string((*dz)[i]) +
                                    ", expected " + std::to_string(dzRef[i])};
  // db: f32 sums of at most `rows` terms, in two levels.
  std::string report;
  Status s = ref::compareToReferenceScaled(
      *db, dbRef, dbAbs, width, biasGradTolerance(rows), &report, 1e-30);
  return KernelCheck{static_cast<bool>(s),
                     what + ": dz exact; db " + (s ? report : s.message())};
}
