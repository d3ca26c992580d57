//===- SegmentMeasure.cpp - Timing segmented-matmul schedules on a GPU ----===//
//
// Needs a GPU; compiled everywhere, run only where one is present (the
// tests that call it skip without one).
//
//===----------------------------------------------------------------------===//
#include "gnnc/Tuning/SegmentModel.h"

#include "gnnc/ops/SegmentMatmul.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/reference/Spmm.h"
#include "gnnc/runtime/Runtime.h"
#include "gnnc/runtime/Timing.h"

#include <algorithm>

using namespace gnnc;
using namespace gnnc::tuning;

Expected<double> gnnc::tuning::measureSegmentSchedule(
    rt::Runtime &runtime, const rt::KernelSpec &spec,
    const std::vector<int64_t> &seg, const MeasureOptions &options,
    int64_t checkRows) {
  if (!spec.op || !isSegmentMatmulKind(spec.op->kind))
    return Status::error("kernel '" + spec.name + "' is no segmented matmul");
  const OpDesc op = *spec.op;
  const bool weightGrad = op.kind == OpKind::SegmentMatmulWeightGrad;
  const int64_t rows = seg.empty() ? 0 : seg.back();
  GNNC_RETURN_IF_ERROR(
      ops::checkSegmentOffsets(seg.data(), int64_t(seg.size()), rows));
  Expected<rt::LoadedKernel> kernel = runtime.load(spec);
  if (!kernel)
    return kernel.status();

  // The gate: the double reference on the first rows (the set's types cut
  // there), so that checking a large set costs no more than a test.
  if (options.check) {
    std::vector<int64_t> head = seg;
    for (int64_t &offset : head)
      offset = std::min(offset, std::max<int64_t>(0, checkRows));
    Expected<ops::KernelCheck> check =
        weightGrad
            ? ops::checkSegmentMatmulWeightGrad(runtime, *kernel, head,
                                                options.seed)
            : ops::checkSegmentMatmul(runtime, *kernel, head, options.seed);
    if (!check)
      return check.status();
    if (!check->ok)
      return Status::error("wrong result: " + check->report);
  }

  // Rows of `in` columns in, of `out` out (the weight gradient: x of K,
  // dy of M in, num_types x K x M out).
  const int64_t types = int64_t(seg.size()) - 1;
  const int64_t in = op.inputWidth, out = op.width;
  auto random = [&](int64_t count, uint64_t seed) {
    return ops::uploadTensor(
        ref::randomFeatures(std::max<int64_t>(1, count), seed), op.type);
  };
  Expected<rt::DeviceBuffer> a = random(rows * in, options.seed + 1);
  Expected<rt::DeviceBuffer> b =
      weightGrad ? random(rows * out, options.seed + 2)
                 : random(types * in * out, options.seed + 2);
  const int64_t results = weightGrad ? types * in * out : rows * out;
  Expected<rt::DeviceBuffer> y = ops::allocatePoisoned(
      static_cast<size_t>(std::max<int64_t>(1, results)), op.type);
  if (!a || !b || !y)
    return !a ? a.status() : !b ? b.status() : y.status();
  Expected<rt::DeviceBuffer> segDev = rt::DeviceBuffer::allocate(
      std::max<size_t>(8, seg.size() * sizeof(int64_t)));
  if (!segDev)
    return segDev.status();
  GNNC_RETURN_IF_ERROR(
      segDev->copyFromHost(seg.data(), seg.size() * sizeof(int64_t)));
  Expected<ops::DeviceRouteTable> table =
      ops::uploadRouteTable(runtime, *kernel, seg, rows);
  if (!table)
    return table.status();
  Expected<rt::KernelTimer> timer = rt::KernelTimer::create(runtime.device());
  if (!timer)
    return timer.status();
  Expected<rt::TimingStats> stats = timer->time(
      {options.warmups, options.runs, /*flushL2=*/true}, [&]() -> Status {
        if (weightGrad)
          return ops::launchSegmentMatmulWeightGrad(runtime, *kernel, *a, *b,
                                                    *segDev, types, *table, *y,
                                                    /*synchronize=*/false);
        return ops::launchSegmentMatmul(runtime, *kernel, *a, *b, *segDev,
                                        *table, *y, /*synchronize=*/false);
      });
  if (!stats)
    return stats.status();
  return stats->medianMs * 1e-3;
}
