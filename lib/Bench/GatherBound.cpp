//===- GatherBound.cpp - What an SpMM's gathers can reach -----------------===//
#include "gnnc/Bench/GatherBound.h"

#include "gnnc/Bench/Bytes.h"
#include "gnnc/Bench/Host.h"
#include "gnnc/Plan/Abi.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace gnnc;
using namespace gnnc::bench;

namespace {

std::string kernelName(ElementType type, const GatherShape &s) {
  return std::string("gnnc_gather_stream_") + elementTypeName(type) + "_v" +
         std::to_string(s.vectorWidth) + "_l" + std::to_string(s.lanes) + "_c" +
         std::to_string(s.chunks);
}

/// The bytes the gather stream reads: every edge's row and column index.
double streamBytes(ElementType type, int64_t width, int64_t numEdges) {
  return double(numEdges) *
         (double(width) * double(elementSize(type)) + sizeof(int32_t));
}

/// Edges of the L2 measurement: enough to make the cold start (a quarter
/// of the L2 read from DRAM after the flush) negligible.
constexpr int64_t kL2Edges = int64_t(1) << 24;

} // namespace

GatherShape gnnc::bench::gatherShape(ElementType type, int64_t width) {
  GatherShape s;
  const int widest = static_cast<int>(16 / elementSize(type));
  s.vectorWidth = widest;
  while (s.vectorWidth > 1 && width % s.vectorWidth != 0)
    s.vectorWidth /= 2;
  const int64_t vectors =
      (std::max<int64_t>(width, 1) + s.vectorWidth - 1) / s.vectorWidth;
  s.lanes = 1;
  while (s.lanes < 32 && s.lanes < vectors)
    s.lanes *= 2;
  s.chunks = static_cast<int>((vectors + s.lanes - 1) / s.lanes);
  return s;
}

int64_t gnnc::bench::gatherRunEdges(ElementType type, int64_t width,
                                    int64_t numEdges, int smCount) {
  const GatherShape s = gatherShape(type, width);
  const int64_t wanted = 2 * std::max(smCount, 1) * kGatherThreadsPerSm;
  int64_t run = numEdges * s.lanes / wanted;
  run = std::min(run, kGatherMaxRunEdges) / kGatherUnroll * kGatherUnroll;
  return std::max<int64_t>(run, kGatherUnroll);
}

int64_t gnnc::bench::gatherStreamThreads(ElementType type, int64_t width,
                                         int64_t numEdges, int64_t runEdges) {
  const GatherShape s = gatherShape(type, width);
  return (numEdges + runEdges - 1) / runEdges * s.lanes;
}

rt::KernelSpec gnnc::bench::gatherStreamSpec(ElementType type, int64_t width) {
  const GatherShape s = gatherShape(type, width);
  rt::KernelSpec spec;
  spec.name = kernelName(type, s);
  const std::string element = elementCudaType(type);
  spec.source =
      "// The gather stream of an SpMM, alone (gnn-bench).\n"
      "#include \"gnnc/cuda/gather_stream.cuh\"\n\n"
      "extern \"C\" __global__ void __launch_bounds__(" +
      std::to_string(kGatherThreads) + ") " + spec.name +
      "(\n    const int *cols, const " + element +
      " *x, long long num_edges, long long run_edges,\n"
      "    long long width, long long row_stride, float *sink,\n"
      "    long long num_threads) {\n"
      "  gnnc::cuda::bound::gatherStream<" +
      element + ", " + std::to_string(s.vectorWidth) + ", " +
      std::to_string(s.lanes) + ", " + std::to_string(s.chunks) + ", " +
      std::to_string(kGatherUnroll) +
      ">(\n      cols, x, num_edges, run_edges, width, row_stride, sink, "
      "num_threads);\n}\n";
  // A bench helper, no gnn op: only the grid's count has a role.
  spec.params = {{"cols", ParamKind::Pointer},
                 {"x", ParamKind::Pointer},
                 {"num_edges", ParamKind::Int64},
                 {"run_edges", ParamKind::Int64},
                 {"width", ParamKind::Int64},
                 {"row_stride", ParamKind::Int64},
                 {"sink", ParamKind::Pointer},
                 {"num_threads", ParamKind::Int64, ParamRole::NumItems}};
  spec.launch.blockX = kGatherThreads;
  spec.launch.grid = {ParamRole::NumItems};
  spec.launch.itemsPerBlock = kGatherThreads;
  return spec;
}

Expected<const rt::LoadedKernel *>
GatherBound::kernel(Bench &bench, ElementType type, int64_t width) {
  auto key = std::make_pair(type, width);
  auto found = kernels_.find(key);
  if (found != kernels_.end())
    return &found->second;
  auto loaded = bench.runtime().load(gatherStreamSpec(type, width));
  if (!loaded)
    return loaded.status().withContext("loading the gather-stream kernel");
  return &kernels_.emplace(key, loaded.take()).first->second;
}

namespace {

/// Launches the gather stream once.
Status launchStream(Bench &bench, const rt::LoadedKernel &k,
                    const rt::DeviceBuffer &cols, int64_t numEdges,
                    int64_t runEdges, const rt::DeviceBuffer &x, int64_t width,
                    const rt::DeviceBuffer &sink, int64_t threads) {
  rt::ArgPack args;
  args.bind("cols", cols)
      .bind("x", x)
      .bind("num_edges", numEdges)
      .bind("run_edges", runEdges)
      .bind("width", width)
      .bind("row_stride", width)
      .bind("sink", sink)
      .bind("num_threads", threads);
  return bench.runtime().launch(k, args, /*synchronize=*/false);
}

} // namespace

Expected<GatherRun> GatherBound::time(Bench &bench,
                                      const rt::DeviceBuffer &cols,
                                      const int64_t *hostCols, int64_t numEdges,
                                      const rt::DeviceBuffer &x,
                                      const float *hostX, ElementType type,
                                      int64_t width) {
  auto k = kernel(bench, type, width);
  if (!k)
    return k.status();
  const int64_t runEdges =
      gatherRunEdges(type, width, numEdges, bench.device().smCount());
  const int64_t threads = gatherStreamThreads(type, width, numEdges, runEdges);
  auto sink = rt::DeviceBuffer::allocate(
      static_cast<size_t>(std::max<int64_t>(threads, 1)) * sizeof(float));
  if (!sink)
    return sink.status();
  bench.sampleMemory();
  GatherRun run;
  run.runEdges = runEdges;
  run.bytes = streamBytes(type, width, numEdges);
  if (numEdges == 0) {
    run.checkOk = true;
    run.checkReport = "no edges";
    return run;
  }
  // The check: the sum over the sink is the sum of every gathered row.
  GNNC_RETURN_IF_ERROR(sink->fill(0xff));
  GNNC_RETURN_IF_ERROR(launchStream(bench, **k, cols, numEdges, runEdges, x,
                                    width, *sink, threads));
  GNNC_RETURN_IF_ERROR(bench.runtime().synchronize());
  std::vector<float> got(static_cast<size_t>(threads));
  GNNC_RETURN_IF_ERROR(sink->copyToHost(got.data(), got.size() * 4));
  double sum = 0, expected = 0, magnitude = 0;
  for (float v : got)
    sum += v;
  // Each row's sum once, then once per edge that gathers it.
  const int64_t rows = int64_t(x.size() / (size_t(width) * elementSize(type)));
  std::vector<double> rowSum(size_t(rows), 0.0), rowAbs(size_t(rows), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j) {
      rowSum[size_t(r)] += hostX[r * width + j];
      rowAbs[size_t(r)] += std::fabs(hostX[r * width + j]);
    }
  for (int64_t e = 0; e < numEdges; ++e) {
    expected += rowSum[size_t(hostCols[e])];
    magnitude += rowAbs[size_t(hostCols[e])];
  }
  const double error = std::fabs(sum - expected);
  // Floats summed in runs of at most kGatherMaxRunEdges rows: a few units of
  // f32 rounding of the magnitude.
  const double tolerance = 1e-5 * magnitude + 1e-6;
  run.checkOk = std::isfinite(sum) && error <= tolerance;
  char report[160];
  std::snprintf(report, sizeof(report),
                "sink sum %.6g, expected %.6g (|error| %.3g, tolerance %.3g)",
                sum, expected, error, tolerance);
  run.checkReport = report;
  auto timing = bench.time([&]() -> Status {
    return launchStream(bench, **k, cols, numEdges, runEdges, x, width, *sink,
                        threads);
  });
  if (!timing)
    return timing.status();
  run.timing = *timing;
  return run;
}

Expected<double> GatherBound::l2GatherGbs(Bench &bench, ElementType type,
                                          int64_t width) {
  auto key = std::make_pair(type, width);
  auto found = l2Gbs_.find(key);
  if (found != l2Gbs_.end())
    return found->second;
  auto k = kernel(bench, type, width);
  if (!k)
    return k.status();
  const size_t rowBytes = static_cast<size_t>(width) * elementSize(type);
  const size_t l2 = bench.device().l2Bytes();
  if (l2 == 0 || rowBytes == 0)
    return Status::error("l2GatherGbs: the device reports no L2 size");
  const int64_t rows = std::max<int64_t>(1, int64_t(l2 / 4 / rowBytes));
  std::vector<int32_t> cols(static_cast<size_t>(kL2Edges));
  std::mt19937_64 random(0x12ca4eull + uint64_t(width));
  std::uniform_int_distribution<int64_t> pick(0, rows - 1);
  for (int32_t &c : cols)
    c = static_cast<int32_t>(pick(random));
  auto deviceCols = rt::DeviceBuffer::allocate(cols.size() * 4);
  if (!deviceCols)
    return deviceCols.status();
  GNNC_RETURN_IF_ERROR(deviceCols->copyFromHost(cols.data(), cols.size() * 4));
  HostVector<float> hostX;
  HostVector<uint16_t> bits;
  auto x = uploadRandomInputs(hostX, rows * width, 0x12ca4eull, type, &bits);
  if (!x)
    return x.status();
  const int64_t runEdges = kGatherMaxRunEdges;
  const int64_t threads = gatherStreamThreads(type, width, kL2Edges, runEdges);
  auto sink = rt::DeviceBuffer::allocate(static_cast<size_t>(threads) * 4);
  if (!sink)
    return sink.status();
  bench.sampleMemory();
  auto timing = bench.time([&]() -> Status {
    return launchStream(bench, **k, *deviceCols, kL2Edges, runEdges, *x, width,
                        *sink, threads);
  });
  if (!timing)
    return timing.status();
  const double gbs =
      gigabytesPerSecond(streamBytes(type, width, kL2Edges), timing->medianMs);
  l2Gbs_[key] = gbs;
  return gbs;
}
