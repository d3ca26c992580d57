//===- GnnRewrite.cpp - Find tunable ops and set their schedules ---------===//
#include "gnnc/Tuning/GnnRewrite.h"
#include "gnnc/Transforms/Passes.h"

#include "gnnc/Compiler/Compiler.h"

#include "gnnc/Dialect/Gnn/GnnOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace gnnc;
using namespace gnnc::tuning;

namespace {

/// A parsed .gnn module and what it needs to stay alive.
struct Parsed {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
};

Expected<Parsed> parse(const std::string &text, const std::string &name) {
  DialectRegistry registry;
  registerGnnDialect(registry);
  Parsed p;
  p.context =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  p.context->loadAllAvailableDialects();
  p.context->printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name),
                               llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  SourceMgrDiagnosticHandler handler(sourceMgr, p.context.get(), diagStream);
  p.module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(p.context.get()));
  if (!p.module) {
    diagStream.flush();
    while (!diagnostics.empty() && diagnostics.back() == '\n')
      diagnostics.pop_back();
    return Status::error(diagnostics.empty() ? name + ": cannot parse"
                                             : diagnostics);
  }
  return p;
}

/// Calls fn(entryName, kernel, op) for every gnn.spmm and gnn.sddmm, in
/// the order of the module.
template <typename Fn> void forEachTunableOp(ModuleOp module, Fn fn) {
  for (auto gm : module.getOps<gnn::GnnModuleOp>())
    gm.walk([&](gnn::KernelOp kernel) {
      std::string entry = kernelEntryName(gm, kernel);
      kernel.walk([&](Operation *op) {
        if (isa<gnn::SpmmOp, gnn::SddmmOp>(op))
          fn(entry, kernel, op);
      });
    });
}

/// The printed form of `s`.
std::string scheduleText(gnn::ScheduleAttr s) {
  std::string str;
  llvm::raw_string_ostream os(str);
  Attribute(s).print(os);
  return os.str();
}

/// Fills the parts of `site` common to both ops.
void describeCommon(TunableSite &site, Value graph,
                    gnn::ScheduleAttr schedule) {
  if (auto g = dyn_cast<gnn::GnnGraphType>(graph.getType())) {
    site.problem.offsetBytes =
        static_cast<int>(g.getOffsetType().getWidth() / 8);
    site.problem.indexBytes = static_cast<int>(g.getIndexType().getWidth() / 8);
  }
  if (schedule) {
    site.currentSchedule = scheduleText(schedule);
    if (schedule.getStrategy() != gnn::Strategy::vertex_parallel &&
        schedule.getStrategy() != gnn::Strategy::edge_parallel) {
      site.tunable = false;
      site.note = "strategy is neither vertex_parallel nor edge_parallel";
    }
  }
}

/// Whether `kernel` holds exactly one op besides its terminator.
bool holdsOneOp(gnn::KernelOp kernel) {
  size_t ops = 0;
  for (Operation &o : kernel.getBody().front().without_terminator()) {
    (void)o;
    ++ops;
  }
  return ops == 1;
}

ElementType toElementType(Type t) {
  if (t.isF16())
    return ElementType::F16;
  if (t.isBF16())
    return ElementType::BF16;
  return ElementType::F32;
}

} // namespace

Expected<std::vector<TunableSite>>
gnnc::tuning::findSites(const std::string &text,
                        const std::string &bufferName) {
  Expected<Parsed> parsed = parse(text, bufferName);
  if (!parsed)
    return parsed.status();
  std::vector<TunableSite> sites;
  forEachTunableOp(*parsed->module, [&](const std::string &entry,
                                        gnn::KernelOp kernel, Operation *o) {
    TunableSite site;
    site.entryName = entry;
    if (auto op = dyn_cast<gnn::SpmmOp>(o)) {
      site.problem.op = "spmm";
      site.problem.type = toElementType(op.getElementType());
      site.problem.width = op.getFeatureWidth();
      if (op.getRowStride() != op.getFeatureWidth())
        site.problem.rowStride = op.getRowStride();
      site.problem.edgeValues = static_cast<bool>(op.getValues());
      describeCommon(site, op.getGraph(), op.getScheduleAttr());
      if (op.getReduce() != gnn::Reduce::sum ||
          op.getScale() != gnn::DegreeScale::none || op.getSelfWeight()) {
        site.tunable = false;
        site.note =
            "only reduce = sum without scale or self_weight is modelled";
      }
    } else {
      auto sddmm = cast<gnn::SddmmOp>(o);
      site.problem.op = "sddmm";
      site.problem.type = toElementType(sddmm.getElementType());
      site.problem.width = sddmm.getFeatureWidth();
      site.problem.sddmmAdd = sddmm.getForm() == gnn::SddmmForm::add;
      site.problem.leakyRelu = static_cast<bool>(sddmm.getLeakyReluAttr());
      describeCommon(site, sddmm.getGraph(), sddmm.getScheduleAttr());
    }
    if (!holdsOneOp(kernel)) {
      site.tunable = false;
      site.note = "the kernel holds more than one op";
    }
    sites.push_back(site);
  });
  return sites;
}

Expected<std::vector<SpmmSite>>
gnnc::tuning::findSpmmSites(const std::string &text,
                            const std::string &bufferName) {
  Expected<std::vector<TunableSite>> all = findSites(text, bufferName);
  if (!all)
    return all.status();
  std::vector<SpmmSite> sites;
  for (const TunableSite &site : *all)
    if (!site.problem.isSddmm())
      sites.push_back(site);
  return sites;
}

Expected<std::string>
gnnc::tuning::applySchedules(const std::string &text,
                             const std::string &bufferName,
                             const std::map<std::string, Schedule> &schedules) {
  Expected<Parsed> parsed = parse(text, bufferName);
  if (!parsed)
    return parsed.status();
  MLIRContext *ctx = parsed->context.get();
  forEachTunableOp(*parsed->module, [&](const std::string &entry, gnn::KernelOp,
                                        Operation *o) {
    auto it = schedules.find(entry);
    if (it == schedules.end())
      return;
    const Schedule &s = it->second;
    auto spmm = dyn_cast<gnn::SpmmOp>(o);
    auto sddmm = dyn_cast<gnn::SddmmOp>(o);
    gnn::ScheduleAttr old =
        spmm ? spmm.getScheduleAttr() : sddmm.getScheduleAttr();
    // edge_parallel finishes the rows split between workers with staged
    // writes (a gnn.sddmm writes every edge's value once, which the
    // verifier also spells staged), neighbor_group adds the rows that span
    // blocks atomically; vertex_parallel writes each row directly. Only
    // gnn.spmm has disc_batch and f16 accumulation.
    bool edge = s.isEdgeParallel();
    bool groups = s.isNeighbourGroup();
    gnn::ScheduleAttr schedule = gnn::ScheduleAttr::get(
        ctx,
        edge     ? gnn::Strategy::edge_parallel
        : groups ? gnn::Strategy::neighbor_group
                 : gnn::Strategy::vertex_parallel,
        s.vectorWidth, spmm && old ? old.getDiscBatch() : 0,
        groups ? s.groupSize : 0, s.dimWorkers, s.threadsPerBlock,
        edge ? s.edgesPerWorker : 0, 0, false,
        spmm && old ? old.getAccumulate() : gnn::Accumulate::f32,
        edge     ? gnn::WriteMode::staged
        : groups ? gnn::WriteMode::atomic
                 : gnn::WriteMode::direct,
        s.blocksPerSm);
    if (spmm)
      spmm.setScheduleAttr(schedule);
    else
      sddmm.setScheduleAttr(schedule);
  });
  std::string out;
  llvm::raw_string_ostream os(out);
  parsed->module->print(os);
  os.flush();
  return out;
}
