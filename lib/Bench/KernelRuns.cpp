//===- KernelRuns.cpp - Checking, then timing, gnnc kernels ---------------===//
#include "gnnc/Bench/KernelRuns.h"
#include "gnnc/ops/KernelInfo.h"

#include "gnnc/Bench/Kernels.h"
#include "gnnc/ops/EdgeSoftmax.h"
#include "gnnc/ops/Sddmm.h"
#include "gnnc/ops/Spmm.h"

#include <functional>
#include <optional>
#include <utility>
#include <vector>

using namespace gnnc;
using namespace gnnc::bench;

namespace {

/// The gate, then the timing: loads `spec` (its load time goes into
/// `result`), runs `check` on it and times `launch` only if the kernel
/// passed. Sets result's status ("ok", "wrong" or "error"), report and
/// timing.
KernelResult checkThenTime(
    Bench &bench, const rt::KernelSpec &spec, KernelResult result,
    const std::function<Expected<ops::KernelCheck>(const rt::LoadedKernel &)>
        &check,
    const std::function<Status(const rt::LoadedKernel &)> &launch) {
  rt::LoadStats stats;
  auto kernel = bench.runtime().load(spec, &stats);
  if (!kernel) {
    result.status = "error";
    result.report = kernel.message();
    return result;
  }
  result.loadMs = stats.totalMs;
  // The gate: no timing for a kernel that has not shown a right answer.
  auto checked = check(*kernel);
  if (!checked) {
    result.status = "error";
    result.report = checked.message();
    return result;
  }
  result.report = checked->report;
  if (!checked->ok) {
    result.status = "wrong";
    return result;
  }
  const rt::LoadedKernel &loaded = *kernel;
  auto timing = bench.time([&]() { return launch(loaded); });
  if (!timing) {
    result.status = "error";
    result.report = timing.message();
    return result;
  }
  result.status = "ok";
  result.timing = *timing;
  return result;
}

} // namespace

KernelResult gnnc::bench::runGnncKernel(Bench &bench,
                                        const rt::KernelSpec &spec,
                                        SpmmProblem &problem, CheckMode mode,
                                        const std::string &label) {
  KernelResult result;
  result.label = label;
  result.kernelName = spec.name;
  result.schedule = spec.schedule.str();
  result.edgeValues = problem.edgeValues;
  auto check = [&](const rt::LoadedKernel &kernel) -> Expected<ops::SpmmCheck> {
    // The problem's x and y hold unpadded rows.
    if (auto sig = ops::spmmSignature(spec); sig && sig->padded())
      return Status::error("kernel '" + spec.name +
                           "' has padded rows (row stride " +
                           std::to_string(sig->rowStride) +
                           "); gnn-bench problems hold unpadded rows");
    if (mode == CheckMode::PerKernel)
      return ops::checkSpmm(bench.runtime(), kernel, problem.graph(),
                            problem.seed);
    return checkOnProblem(bench, kernel, problem);
  };
  const ops::DeviceGraph &dg = problem.graphs->gnnc;
  auto launch = [&](const rt::LoadedKernel &kernel) {
    return ops::launchSpmm(bench.runtime(), kernel, dg, problem.x,
                           problem.edgeValues ? &problem.values : nullptr,
                           problem.y, /*synchronize=*/false);
  };
  return checkThenTime(bench, spec, std::move(result), check, launch);
}

KernelResult gnnc::bench::runGnncSddmm(Bench &bench, const rt::KernelSpec &spec,
                                       SddmmProblem &problem,
                                       const std::string &label) {
  KernelResult result;
  result.label = label;
  result.kernelName = spec.name;
  result.schedule = spec.schedule.str();
  result.op = "sddmm";
  auto check = [&](const rt::LoadedKernel &kernel) {
    return checkSddmmOnProblem(bench, kernel, problem);
  };
  const ops::DeviceGraph &dg = problem.base->graphs->gnnc;
  auto launch = [&](const rt::LoadedKernel &kernel) {
    return ops::launchSddmm(bench.runtime(), kernel, dg, problem.rowX,
                            problem.base->x, problem.out,
                            /*synchronize=*/false);
  };
  return checkThenTime(bench, spec, std::move(result), check, launch);
}

KernelResult gnnc::bench::runGatChain(Bench &bench, const GatKernels &kernels,
                                      GatProblem &problem) {
  KernelResult result;
  result.label = "gat";
  result.op = "gat_chain";
  result.edgeValues = true;
  if (!kernels.logits || !kernels.softmax || !kernels.aggregate) {
    result.status = "error";
    result.report = "the chain's kernels are missing";
    return result;
  }
  result.kernelName = kernels.logits->name + " + " + kernels.softmax->name +
                      " + " + kernels.aggregate->name;
  result.schedule = kernels.logits->schedule.str() + " | " +
                    kernels.softmax->schedule.str() + " | " +
                    kernels.aggregate->schedule.str();
  auto fail = [&](const std::string &status, const std::string &why) {
    result.status = status;
    result.report = why;
    return result;
  };
  std::vector<rt::LoadedKernel> loaded;
  for (const rt::KernelSpec *spec :
       {kernels.logits, kernels.softmax, kernels.aggregate}) {
    rt::LoadStats stats;
    auto kernel = bench.runtime().load(*spec, &stats);
    if (!kernel)
      return fail("error", kernel.message());
    result.loadMs += stats.totalMs;
    loaded.push_back(kernel.take());
  }
  SpmmProblem &base = *problem.base;
  const ops::DeviceGraph &dg = base.graphs->gnnc;
  // The kernels must fit the problem (and each other).
  auto logitsSig = ops::sddmmSignature(loaded[0].spec);
  auto softmaxSig = ops::kernelOp(loaded[1].spec, OpKind::EdgeSoftmax);
  auto spmmSig = ops::spmmSignature(loaded[2].spec);
  if (!logitsSig || !softmaxSig || !spmmSig)
    return fail("error",
                "not a GAT chain: " + (!logitsSig    ? logitsSig.message()
                                       : !softmaxSig ? softmaxSig.message()
                                                     : spmmSig.message()));
  if (logitsSig->type != base.type || logitsSig->featureWidth != 1 ||
      logitsSig->form != gnnc::SddmmForm::Add ||
      logitsSig->leakyRelu != std::optional<float>(kGatLeakySlope) ||
      softmaxSig->type != base.type || softmaxSig->width != 1 ||
      spmmSig->type != base.type || spmmSig->featureWidth != base.width ||
      spmmSig->padded() || !spmmSig->edgeValues ||
      spmmSig->reduce != gnnc::Reduce::Sum ||
      spmmSig->scale != gnnc::DegreeScale::None ||
      logitsSig->offsets64 != dg.offsets64 ||
      softmaxSig->offsets64 != dg.offsets64 ||
      spmmSig->offsets64 != dg.offsets64)
    return fail("error", "the chain's kernels do not match the problem "
                         "(type, width, form, slope, heads or offsets)");

  auto run = [&](bool synchronize) -> Status {
    GNNC_RETURN_IF_ERROR(ops::launchSddmm(bench.runtime(), loaded[0], dg,
                                          problem.attRow, problem.attCol,
                                          problem.logits, false));
    GNNC_RETURN_IF_ERROR(ops::launchEdgeSoftmax(
        bench.runtime(), loaded[1], dg, problem.logits, problem.alpha, false));
    return ops::launchSpmm(bench.runtime(), loaded[2], dg, base.x,
                           &problem.alpha, base.y, synchronize);
  };

  // The gate: every intermediate and the output poisoned, one run, every
  // output element compared.
  ensureGatReference(problem);
  for (rt::DeviceBuffer *b : {&problem.logits, &problem.alpha, &base.y})
    if (Status st = b->fill(0xff); !st)
      return fail("error", st.message());
  if (Status st = run(/*synchronize=*/true); !st)
    return fail("error", st.message());
  HostBuffers &host = base.host;
  if (Status st = downloadConverted(base.y, base.outputCount(), base.type,
                                    host.got, &host.bits);
      !st)
    return fail("error", st.message());
  ops::KernelCheck check = compareScaled(
      host.got, host.expected, host.magnitude, base.width,
      gatChainTolerance(base.type), ops::spmmAbsoluteTolerance(base.type));
  result.report = reportOnGraph("GAT chain", base.graph(), "nnz, 1 head",
                                base.width, base.type, check.report);
  if (!check.ok) {
    result.status = "wrong";
    return result;
  }
  auto timing = bench.time([&]() { return run(/*synchronize=*/false); });
  if (!timing)
    return fail("error", timing.message());
  result.status = "ok";
  result.timing = *timing;
  return result;
}

KernelResult gnnc::bench::runGatFused(Bench &bench, const rt::KernelSpec &spec,
                                      GatProblem &problem,
                                      const std::string &label) {
  KernelResult result;
  result.label = label;
  result.op = "gat_fused";
  result.kernelName = spec.name;
  result.schedule = spec.schedule.str();
  result.edgeValues = true;
  SpmmProblem &base = *problem.base;
  const ops::DeviceGraph &dg = base.graphs->gnnc;
  const ops::AttentionScores scores{&problem.attRow, &problem.attCol};
  auto launch = [&](const rt::LoadedKernel &kernel, bool synchronize) {
    return ops::launchSpmm(bench.runtime(), kernel, dg, base.x, nullptr, base.y,
                           synchronize, /*colNorm=*/nullptr,
                           /*stream=*/nullptr, /*linear=*/nullptr, &scores);
  };
  auto check =
      [&](const rt::LoadedKernel &kernel) -> Expected<ops::KernelCheck> {
    auto sig = ops::spmmSignature(kernel.spec);
    if (!sig)
      return sig.status();
    if (!sig->attention || sig->type != base.type ||
        sig->featureWidth != base.width || sig->padded() ||
        sig->leakyRelu != std::optional<double>(double(kGatLeakySlope)) ||
        sig->offsets64 != dg.offsets64 || sig->indices64 != dg.indices64)
      return Status::error("kernel '" + kernel.spec.name +
                           "' is not the fused GAT kernel of this problem "
                           "(attention, type, width, slope or index widths)");
    ensureGatReference(problem, /*fused=*/true);
    GNNC_RETURN_IF_ERROR(base.y.fill(0xff)); // NaN in every type
    GNNC_RETURN_IF_ERROR(launch(kernel, /*synchronize=*/true));
    HostBuffers &host = base.host;
    GNNC_RETURN_IF_ERROR(downloadConverted(base.y, base.outputCount(),
                                           base.type, host.got, &host.bits));
    ops::KernelCheck checked = compareScaled(
        host.got, host.expected, host.magnitude, base.width,
        gatChainTolerance(base.type), ops::spmmAbsoluteTolerance(base.type));
    checked.report = reportOnGraph("fused GAT", base.graph(), "nnz, 1 head",
                                   base.width, base.type, checked.report);
    return checked;
  };
  return checkThenTime(
      bench, spec, std::move(result), check,
      [&](const rt::LoadedKernel &kernel) { return launch(kernel, false); });
}
