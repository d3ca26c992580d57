//===- GnnRewrite.cpp - Find gnn.spmm ops and set their schedules ---------===//
#include "gnnc/Tuning/GnnRewrite.h"
#include "gnnc/Transforms/Passes.h"

#include "gnnc/Compiler/Compiler.h"

#include "dialects/gnn/GnnOps.h"
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

/// Calls fn(entryName, kernel, spmm) for every gnn.spmm.
template <typename Fn> void forEachSpmm(ModuleOp module, Fn fn) {
  for (auto gm : module.getOps<gnn::GnnModuleOp>())
    gm.walk([&](gnn::KernelOp kernel) {
      std::string entry = kernelEntryName(gm, kernel);
      kernel.walk([&](gnn::SpmmOp op) { fn(entry, kernel, op); });
    });
}

ElementType toElementType(Type t) {
  if (t.isF16())
    return ElementType::F16;
  if (t.isBF16())
    return ElementType::BF16;
  return ElementType::F32;
}

} // namespace

Expected<std::vector<SpmmSite>>
gnnc::tuning::findSpmmSites(const std::string &text,
                            const std::string &bufferName) {
  Expected<Parsed> parsed = parse(text, bufferName);
  if (!parsed)
    return parsed.status();
  std::vector<SpmmSite> sites;
  forEachSpmm(*parsed->module, [&](const std::string &entry,
                                   gnn::KernelOp kernel, gnn::SpmmOp op) {
    SpmmSite site;
    site.entryName = entry;
    site.problem.op = "spmm";
    site.problem.type = toElementType(op.getElementType());
    site.problem.width = op.getFeatureWidth();
    if (op.getRowStride() != op.getFeatureWidth())
      site.problem.rowStride = op.getRowStride();
    site.problem.edgeValues = static_cast<bool>(op.getValues());
    if (auto g = dyn_cast<gnn::GnnGraphType>(op.getGraph().getType())) {
      site.problem.offsetBytes =
          static_cast<int>(g.getOffsetType().getWidth() / 8);
      site.problem.indexBytes =
          static_cast<int>(g.getIndexType().getWidth() / 8);
    }
    if (gnn::ScheduleAttr s = op.getScheduleAttr()) {
      std::string str;
      llvm::raw_string_ostream os(str);
      Attribute(s).print(os);
      site.currentSchedule = os.str();
      if (s.getStrategy() != gnn::Strategy::vertex_parallel &&
          s.getStrategy() != gnn::Strategy::edge_parallel) {
        site.tunable = false;
        site.note = "strategy is neither vertex_parallel nor edge_parallel";
      }
    }
    if (op.getReduce() != gnn::Reduce::sum ||
        op.getScale() != gnn::DegreeScale::none || op.getSelfWeight()) {
      site.tunable = false;
      site.note = "only reduce = sum without scale or self_weight is modelled";
    }
    size_t ops = 0;
    for (Operation &o : kernel.getBody().front().without_terminator()) {
      (void)o;
      ++ops;
    }
    if (ops != 1) {
      site.tunable = false;
      site.note = "the kernel holds more than one op";
    }
    sites.push_back(site);
  });
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
  forEachSpmm(*parsed->module, [&](const std::string &entry, gnn::KernelOp,
                                   gnn::SpmmOp op) {
    auto it = schedules.find(entry);
    if (it == schedules.end())
      return;
    const Schedule &s = it->second;
    gnn::ScheduleAttr old = op.getScheduleAttr();
    // edge_parallel finishes the rows split between workers with staged
    // writes, neighbor_group adds the rows that span blocks atomically;
    // vertex_parallel writes each row directly.
    bool edge = s.isEdgeParallel();
    bool groups = s.isNeighbourGroup();
    op.setScheduleAttr(gnn::ScheduleAttr::get(
        ctx,
        edge     ? gnn::Strategy::edge_parallel
        : groups ? gnn::Strategy::neighbor_group
                 : gnn::Strategy::vertex_parallel,
        s.vectorWidth, old ? old.getDiscBatch() : 0, groups ? s.groupSize : 0,
        s.dimWorkers, s.threadsPerBlock, edge ? s.edgesPerWorker : 0, 0, false,
        old ? old.getAccumulate() : gnn::Accumulate::f32,
        edge     ? gnn::WriteMode::staged
        : groups ? gnn::WriteMode::atomic
                 : gnn::WriteMode::direct,
        s.blocksPerSm));
  });
  std::string out;
  llvm::raw_string_ostream os(out);
  parsed->module->print(os);
  os.flush();
  return out;
}
