//===- Kernels.cpp - Generating the bench kernels -------------------------===//
#include "gnnc/Bench/Kernels.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/Limits.h"
#include "gnnc/Tuning/Autotuner.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

using namespace gnnc;
using namespace gnnc::bench;

namespace {

/// `label` as part of a symbol: "dw*2" -> "dw_x2", "dw/2" -> "dw_d2".
std::string symbolPart(const std::string &label) {
  std::string part;
  for (char c : label) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      part += c;
    else if (c == '*')
      part += "_x";
    else if (c == '/')
      part += "_d";
    else
      part += '_';
  }
  return part;
}

} // namespace

std::string KernelRequest::symbol() const {
  const std::string type = elementTypeName(this->type);
  const std::string offsets = offsets64 ? "o64" : "o32";
  const std::string w = "_w" + std::to_string(width);
  switch (op) {
  case BenchOp::Spmm:
    return type + w + (edgeValues ? "_ve_" : "_v_") + offsets + "_" +
           symbolPart(schedule.label);
  case BenchOp::SddmmDot:
    return "sddmm_" + type + w + "_" + offsets + "_" +
           symbolPart(schedule.label);
  case BenchOp::GatLogits:
    return "gat_logits_" + type + "_" + offsets + "_" +
           symbolPart(schedule.label);
  case BenchOp::GatSoftmax:
    return "gat_softmax_" + type + "_" + offsets;
  case BenchOp::GatAggregate:
    return "gat_spmm_" + type + w + "_" + offsets + "_" +
           symbolPart(schedule.label);
  case BenchOp::GatFused:
    return "gat_fused_" + type + w + "_" + offsets + "_" +
           symbolPart(schedule.label);
  }
  return "unknown";
}

std::string gnnc::bench::spmmKernelText(const std::string &name,
                                        const std::string &format,
                                        const std::string &features,
                                        const std::string &schedule) {
  const std::string g = "!gnn.graph<" + format + ", i64, i32>";
  const std::string attrs =
      schedule.empty() ? " " : " {schedule = " + schedule + "} ";
  return "  gnn.kernel @" + name + "(%g: " + g + ", %x: " + features + ") -> " +
         features + " {\n    %y = gnn.spmm %g, %x" + attrs + ": " + g + ", " +
         features + " -> " + features + "\n    gnn.return %y : " + features +
         "\n  }\n";
}

std::string
gnnc::bench::benchModuleText(const std::string &moduleName,
                             const std::vector<KernelRequest> &requests) {
  std::ostringstream os;
  os << "gnn.module @" << moduleName << " {\n";
  for (const KernelRequest &r : requests) {
    const std::string type = elementTypeName(r.type);
    const std::string graph = std::string("!gnn.graph<csr, ") +
                              (r.offsets64 ? "i64" : "i32") + ", i32>";
    const std::string x =
        "tensor<?x" + std::to_string(r.width) + "x" + type + ">";
    const std::string w = "tensor<?x" + type + ">";
    const std::string head = "tensor<?x1x" + type + ">";
    std::string attribute =
        r.schedule.schedule ? r.schedule.schedule->str() : std::string();
    os << "  gnn.kernel @" << r.symbol() << "(%g: " << graph;
    switch (r.op) {
    case BenchOp::SddmmDot:
      os << ", %a: " << x << ", %b: " << x << ") -> " << w << " {\n"
         << "    %e = gnn.sddmm %g, %a, %b";
      if (!attribute.empty())
        os << " {schedule = " << attribute << "}";
      os << " : " << graph << ", " << x << ", " << x << " -> " << w << "\n"
         << "    gnn.return %e : " << w << "\n  }\n";
      continue;
    case BenchOp::GatLogits: {
      char slope[32];
      std::snprintf(slope, sizeof(slope), "%.9g", double(kGatLeakySlope));
      os << ", %a: " << head << ", %b: " << head << ") -> " << head << " {\n"
         << "    %e = gnn.sddmm %g, %a, %b {form = #gnn<sddmm_form add>, "
         << "leaky_relu = " << slope << " : f32"
         << (attribute.empty() ? "" : ", schedule = " + attribute)
         << "} : " << graph << ", " << head << ", " << head << " -> " << head
         << "\n"
         << "    gnn.return %e : " << head << "\n  }\n";
      continue;
    }
    case BenchOp::GatSoftmax:
      os << ", %e: " << w << ") -> " << w << " {\n"
         << "    %a = gnn.edge_softmax %g, %e : " << graph << ", " << w
         << " -> " << w << "\n"
         << "    gnn.return %a : " << w << "\n  }\n";
      continue;
    case BenchOp::GatFused: {
      char slope[32];
      std::snprintf(slope, sizeof(slope), "%.9g", double(kGatLeakySlope));
      os << ", %x: " << x << ", %d: " << w << ", %s: " << w << ") -> " << x
         << " {\n"
         << "    %y = gnn.spmm %g, %x attention(%d, %s : " << w << ", " << w
         << ") {leaky_relu = " << slope << " : f32"
         << (attribute.empty() ? "" : ", schedule = " + attribute)
         << "} : " << graph << ", " << x << " -> " << x << "\n"
         << "    gnn.return %y : " << x << "\n  }\n";
      continue;
    }
    case BenchOp::Spmm:
    case BenchOp::GatAggregate:
      break;
    }
    const bool values = r.edgeValues || r.op == BenchOp::GatAggregate;
    os << ", %x: " << x;
    if (values)
      os << ", %w: " << w;
    os << ") -> " << x << " {\n    %y = gnn.spmm %g, %x";
    if (values)
      os << " values(%w : " << w << ")";
    if (!attribute.empty())
      os << " {schedule = " << attribute << "}";
    os << " : " << graph << ", " << x << " -> " << x << "\n";
    os << "    gnn.return %y : " << x << "\n  }\n";
  }
  os << "}\n";
  return os.str();
}

Expected<std::vector<BenchKernel>>
gnnc::bench::compileBenchKernels(ElementType type, int64_t width,
                                 const KernelSetOptions &options) {
  // Kernel symbols already name the type and width: entry points read
  // "bench_f16_w64_v_o64_default".
  const std::string moduleName = "bench";
  KernelRequest spmm;
  spmm.type = type;
  spmm.width = width;
  spmm.offsets64 = options.offsets64;
  KernelRequest sddmm = spmm;
  sddmm.op = BenchOp::SddmmDot;
  // 1. The default schedules, as gnnc resolves them.
  std::vector<KernelRequest> probes{spmm};
  if (options.sddmmSchedules > 0)
    probes.push_back(sddmm);
  auto probe = compileGnn(benchModuleText(moduleName, probes), moduleName);
  if (!probe)
    return probe.status();
  if (probe->kernels.size() != probes.size())
    return Status::error("expected " + std::to_string(probes.size()) +
                         " kernels from the probe module, got " +
                         std::to_string(probe->kernels.size()));
  std::vector<Schedule> resolved;
  for (const KernelRequest &r : probes) {
    auto spec = findKernel(*probe, r.symbol());
    if (!spec)
      return spec.status();
    resolved.push_back(spec->schedule);
  }
  const OpDesc spmmOp = benchSpmmOp(type, width, false, options.offsets64);
  OpDesc sddmmOp = spmmOp;
  sddmmOp.kind = OpKind::Sddmm;

  // 2. The defaults (left to gnnc, so they track the compiler's choice), the
  // variants (explicit), the SpMMve default and the chain, in one
  // translation unit.
  std::vector<KernelRequest> requests;
  auto addVariants = [&](const KernelRequest &base,
                         const std::vector<ScheduleChoice> &schedules) {
    for (const ScheduleChoice &s : schedules) {
      KernelRequest r = base;
      r.schedule = s;
      if (s.label == "default")
        r.schedule = ScheduleChoice();
      requests.push_back(r);
    }
  };
  addVariants(spmm,
              scheduleVariants(resolved[0], spmmOp,
                               std::max<size_t>(1, options.spmmSchedules)));
  if (options.edgeValues) {
    KernelRequest r = spmm;
    r.edgeValues = true;
    requests.push_back(r);
  }
  if (options.sddmmSchedules > 0)
    addVariants(sddmm, sddmmScheduleVariants(resolved[1], sddmmOp,
                                             options.sddmmSchedules));
  if (options.gatChain) {
    // Two chains: every kernel with its default schedule, and the logits
    // and the aggregation edge-parallel, labelled "ep" (the aggregation
    // with 256 merge-path items per worker, the best SpMM schedule on most
    // large graphs; the logits with 64 per one-thread worker, as the row
    // ends of 256 such workers fit in shared memory; edge softmax has only
    // its vertex-parallel schedule).
    for (BenchOp op :
         {BenchOp::GatLogits, BenchOp::GatSoftmax, BenchOp::GatAggregate}) {
      KernelRequest r = spmm;
      r.op = op;
      requests.push_back(r);
      if (op == BenchOp::GatSoftmax)
        continue;
      Schedule s = resolved[0];
      s.strategy = Strategy::EdgeParallel;
      s.edgesPerWarp = 256;
      s.write = WriteMode::Staged;
      OpDesc target =
          benchSpmmOp(type, width, /*edgeValues=*/true, options.offsets64);
      if (op == BenchOp::GatLogits) {
        // One head: one thread per worker.
        s.vectorWidth = 1;
        s.dimWorkers = 1;
        s.edgesPerWarp = 64;
        target.kind = OpKind::Sddmm;
        target.width = target.rowStride = 1;
        target.form = SddmmForm::Add;
        target.leakyRelu = kGatLeakySlope;
      }
      r.schedule = {"ep", s};
      if (planKernel(target, s))
        requests.push_back(r);
    }
    // The fused kernel: its default schedule and the SpMM variants that
    // attention runs (vertex_parallel and neighbor_group).
    constexpr size_t kMaxFusedVariants = 64;
    KernelRequest fused = spmm;
    fused.op = BenchOp::GatFused;
    requests.push_back(fused);
    OpDesc attention =
        benchSpmmOp(type, width, /*edgeValues=*/false, options.offsets64);
    attention.attention = true;
    attention.leakyRelu = kGatLeakySlope;
    // Every variant of the list (not only the SpMM's first ones: the
    // vertex-parallel lane counts come late in it), and the default spelt
    // out; each also with its registers capped for kAttentionBlocksPerSm
    // blocks per SM and with the tuner's smaller edge batches (the weights
    // cost registers the SpMM does not need).
    // (The SpMM list's own smaller edge batches are left out: the copies
    // below make them for every listed schedule.)
    for (const ScheduleChoice &s :
         scheduleVariants(resolved[0], spmmOp, kMaxFusedVariants)) {
      if (!s.schedule || s.schedule->edgeBatch != 0 ||
          (s.schedule->strategy != Strategy::VertexParallel &&
           s.schedule->strategy != Strategy::NeighborGroup))
        continue;
      auto plan = planKernel(attention, *s.schedule);
      if (!plan)
        continue;
      // The default itself is the unscheduled request above.
      if (s.label != "default") {
        fused.schedule = s;
        requests.push_back(fused);
      }
      auto addCopy = [&](const std::string &suffix, const Schedule &copy) {
        if (planKernel(attention, copy)) {
          fused.schedule = {s.label + suffix, copy};
          requests.push_back(fused);
        }
      };
      if (s.schedule->blocksPerSm == 0) {
        Schedule capped = *s.schedule;
        capped.blocksPerSm = kAttentionBlocksPerSm;
        addCopy("b" + std::to_string(kAttentionBlocksPerSm), capped);
      }
      for (const Schedule &fewer :
           tuning::smallerEdgeBatches(attention, *s.schedule))
        addCopy("e" + std::to_string(fewer.edgeBatch), fewer);
    }
  }
  auto compiled = compileGnn(benchModuleText(moduleName, requests), moduleName);
  if (!compiled)
    return compiled.status();
  std::vector<BenchKernel> kernels;
  for (const KernelRequest &r : requests) {
    auto spec = findKernel(*compiled, r.symbol());
    if (!spec)
      return spec.status();
    kernels.push_back({r, spec.take()});
  }
  return kernels;
}

Expected<std::vector<BenchKernel>>
gnnc::bench::compileSpmmKernels(ElementType type, int64_t width,
                                size_t maxSchedules, bool edgeValues,
                                bool offsets64) {
  KernelSetOptions options;
  options.spmmSchedules = maxSchedules;
  options.edgeValues = edgeValues;
  options.offsets64 = offsets64;
  return compileBenchKernels(type, width, options);
}
