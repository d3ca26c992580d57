//===- CUDAEmitter.cpp - Print lowered gnn IR as CUDA C++ -----------------===//
//
// The driver of the CUDA printer. It walks the modules and kernels, reads
// what gnn-lower-to-kernels recorded (gnn.abi, gnn.launch, gnn.entry,
// gnn.preludes, gnn.follow_ups and gnn.workspace on the kernel, gnn.plan and
// the schedule on its op), prints each kernel's signature, asks the registry
// of emission patterns (Patterns/) for the op's pattern to print the bodies
// of the kernel and of its companions, and describes each kernel for the
// runtime (rt::KernelSpec) by copying those attributes. What it cannot
// print gets a diagnostic.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Target/CUDA/CUDAEmitter.h"

#include "Patterns/Patterns.h"

#include "gnnc/Dialect/Gnn/GnnOps.h"
#include "gnnc/Transforms/Passes.h"
#include "mlir/Tools/mlir-translate/Translation.h"

#include <iterator>
#include <set>
#include <tuple>

using namespace mlir;
using namespace gnnc;
using namespace gnnc::gnn;
using namespace gnnc::ExportCUDA;

namespace {

/// A kernel read from the IR and checked, ready to print.
struct KernelToPrint {
  GnnModuleOp module;
  KernelOp kernel;
  LaunchAttr launch;
  SmallVector<CompanionAttr> preludes, followUps;
  /// The C declarations of its parameters, in launch order.
  SmallVector<std::string> decls;
  /// The kernel's one op and its pattern.
  Operation *op = nullptr;
  const EmissionPattern *pattern = nullptr;
  OpDesc desc;
  ThreadMapping plan;
  Schedule schedule;
  KernelParams params;
  rt::KernelSpec spec;
};

/// The runtime's launch rule of a #gnn.launch.
rt::LaunchRule launchRule(LaunchAttr launch) {
  rt::LaunchRule rule;
  rule.blockX = static_cast<unsigned>(launch.getBlock());
  rule.grid.assign(launch.getGrid().begin(), launch.getGrid().end());
  rule.itemsPerBlock = static_cast<uint64_t>(launch.getPerBlock());
  rule.sharedBytes = static_cast<unsigned>(launch.getShared());
  rule.minBlocks = static_cast<uint64_t>(launch.getMinBlocks());
  return rule;
}

/// The C type of a parameter that a kernel plan adds after the kernel's
/// arguments and results, by its role; empty for a role that has no place
/// there. The exclusive column indices of a snapshot group have the type of
/// the graph's column indices (`indices64`).
StringRef extraParamType(ParamRole role, bool indices64) {
  switch (role) {
  case ParamRole::ExclusiveIndices:
    return indices64 ? "const long long *__restrict__ "
                     : "const int *__restrict__ ";
  case ParamRole::ColumnFactors:
    return "const float *__restrict__ ";
  case ParamRole::GroupOffsets:
  case ParamRole::GroupBegins:
  case ParamRole::GraphOffsets:
  case ParamRole::BatchBlocks:
  case ParamRole::RouteTiles:
  case ParamRole::ExclusiveOffsets:
  case ParamRole::SliceOffsets:
  case ParamRole::SliceRows:
    return "const long long *__restrict__ ";
  case ParamRole::GroupRows:
    return "const int *__restrict__ ";
  case ParamRole::Workspace:
    return "float *__restrict__ ";
  case ParamRole::NumEdges:
  case ParamRole::NumGroups:
  case ParamRole::NumGraphs:
  case ParamRole::NumBatchBlocks:
  case ParamRole::NumRows:
  case ParamRole::NumItems:
  case ParamRole::NumRouteTiles:
  case ParamRole::RouteBlocks:
  case ParamRole::NumSegments:
  case ParamRole::NumSlices:
  case ParamRole::NumSplitRows:
    return "long long ";
  default:
    return "";
  }
}

/// "first", "second", ...: a kernel's place among those of one op.
std::string ordinal(unsigned place) {
  static const char *const words[] = {"first", "second", "third", "fourth",
                                      "fifth"};
  if (place >= 1 && place <= std::size(words))
    return words[place - 1];
  return std::to_string(place) + "th";
}

class CUDAEmitter {
public:
  explicit CUDAEmitter(raw_ostream &os) : os(os) {}

  LogicalResult emitModule(ModuleOp module, std::vector<rt::KernelSpec> *specs);

private:
  /// Reads and checks what `kernel` needs to be printed.
  FailureOr<KernelToPrint> prepare(GnnModuleOp module, KernelOp kernel);
  /// Finds the kernel's one op, its plan, schedule and pattern.
  LogicalResult findOp(KernelToPrint &k);
  /// The C declarations of the kernel's parameters, in the order of
  /// gnn.abi: kernel arguments and results take their types from the
  /// kernel's signature, the parameters the plan adds from their roles.
  LogicalResult declareParams(KernelToPrint &k, ArrayRef<ParamAttr> abi);
  /// Prints `// @module::@kernel[, comment]` and the kernel's signature.
  void printSignature(const KernelToPrint &k, StringRef comment,
                      LaunchAttr launch, StringRef entry);
  void printKernel(const KernelToPrint &k);

  raw_indented_ostream os;
  /// The device headers (gnnc/cuda/*.cuh) the module's kernels call into.
  std::set<std::string> headers;
};

LogicalResult CUDAEmitter::findOp(KernelToPrint &k) {
  ScheduledOpInterface scheduled;
  for (Operation &op : k.kernel.getBody().front().without_terminator()) {
    auto candidate = dyn_cast<ScheduledOpInterface>(op);
    if (!candidate)
      return op.emitError() << "no CUDA emission pattern for " << op.getName();
    if (scheduled)
      return op.emitOpError()
             << "is the second op of its kernel; the CUDA printer prints one "
                "op per kernel";
    scheduled = candidate;
  }
  if (!scheduled)
    return k.kernel.emitOpError() << "has no op to print";
  Operation *op = scheduled;
  ScheduleAttr schedule = scheduled.getScheduleAttr();
  if (!schedule)
    return op->emitOpError() << "has no #gnn.schedule; run "
                                "gnn-default-schedule and gnn-lower-to-kernels "
                                "before printing";
  auto plan = op->getAttrOfType<PlanAttr>(kPlanAttrName);
  if (!plan)
    return op->emitOpError()
           << "has no gnn.plan; run gnn-lower-to-kernels before printing";
  k.op = op;
  k.desc = scheduled.describe();
  k.plan = threadMapping(plan);
  k.schedule = schedule.getValue();
  k.pattern = findEmissionPattern(k.desc.kind, k.schedule.strategy);
  if (!k.pattern)
    return op->emitError() << "no CUDA emission pattern for " << op->getName()
                           << " with strategy "
                           << strategyName(k.schedule.strategy);
  // The printer prints what the lowering recorded; hand-written or edited
  // lowered IR must still be the plan of its op and schedule.
  Expected<KernelPlan> planned = planKernel(k.desc, k.schedule);
  if (!planned)
    return op->emitOpError() << planned.message();
  if (!(planned->mapping == k.plan) ||
      planned->atomicPieceEdges != plan.getAtomicPieceEdges() ||
      !(k.launch && launchRule(k.launch).grid == planned->launch.grid &&
        k.launch.getBlock() == planned->launch.threads &&
        k.launch.getPerBlock() == planned->launch.itemsPerBlock &&
        k.launch.getShared() == planned->launch.sharedBytes &&
        k.launch.getMinBlocks() == planned->launch.minBlocks &&
        k.launch.getBlocksPerSm() == planned->launch.blocksPerSm))
    return op->emitOpError()
           << "carries a gnn.plan or gnn.launch that is not the kernel plan "
              "of its schedule; run gnn-lower-to-kernels on the op as it is";
  k.spec.op = k.desc;
  k.spec.schedule = k.schedule;
  k.spec.atomicPieceEdges = plan.getAtomicPieceEdges();
  return success();
}

LogicalResult CUDAEmitter::declareParams(KernelToPrint &k,
                                         ArrayRef<ParamAttr> abi) {
  KernelOp kernel = k.kernel;
  const ParamAttr *next = abi.begin();
  auto add = [&](const Twine &type) -> LogicalResult {
    if (next == abi.end())
      return kernel.emitOpError()
             << "has fewer parameters in gnn.abi (" << abi.size()
             << ") than its arguments and results need";
    k.decls.push_back((type + next->getName()).str());
    ++next;
    return success();
  };
  auto elementOf = [&](Type type) -> FailureOr<StringRef> {
    Type element = cast<RankedTensorType>(type).getElementType();
    // gnn.segment_matmul's segment offsets.
    if (element.isInteger(64))
      return StringRef("long long");
    FailureOr<ElementType> known = elementTypeOf(element);
    if (failed(known))
      return kernel.emitError()
             << "no CUDA spelling for element type " << element;
    return spellElement(*known).cType;
  };
  for (Type type : kernel.getArgumentTypes()) {
    if (auto graph = dyn_cast<GnnGraphType>(type)) {
      StringRef offset = spellIndex(graph.getOffsetType().getWidth() == 64);
      StringRef index = spellIndex(graph.getIndexType().getWidth() == 64);
      if (failed(add("const " + offset + " *__restrict__ ")) ||
          failed(add("const " + index + " *__restrict__ ")) ||
          failed(add("long long ")))
        return failure();
      continue;
    }
    FailureOr<StringRef> element = elementOf(type);
    if (failed(element) || failed(add("const " + *element + " *__restrict__ ")))
      return failure();
  }
  for (Type type : kernel.getResultTypes()) {
    FailureOr<StringRef> element = elementOf(type);
    if (failed(element) || failed(add(*element + " *__restrict__ ")))
      return failure();
  }
  // The parameters the plan adds.
  while (next != abi.end()) {
    StringRef type = extraParamType(next->getRole(), k.desc.indices64);
    if (type.empty())
      return kernel.emitOpError()
             << "has parameter '" << next->getName() << "' with role "
             << paramRoleName(next->getRole())
             << " after its arguments and results in gnn.abi, where only "
                "the parameters a kernel plan adds belong";
    (void)add(type);
  }
  return success();
}

FailureOr<KernelToPrint> CUDAEmitter::prepare(GnnModuleOp module,
                                              KernelOp kernel) {
  KernelToPrint k;
  k.module = module;
  k.kernel = kernel;
  auto abi = kernel->getAttrOfType<ArrayAttr>(kAbiAttrName);
  k.launch = kernel->getAttrOfType<LaunchAttr>(kLaunchAttrName);
  if (!abi || !k.launch)
    return kernel.emitOpError()
           << "has no gnn.abi/gnn.launch; run gnn-lower-to-kernels "
              "before printing";
  auto entry = kernel->getAttrOfType<StringAttr>(kEntryAttrName);
  if (!entry)
    return kernel.emitOpError()
           << "has no gnn.entry; run gnn-lower-to-kernels before printing";
  if (failed(findOp(k)))
    return failure();

  rt::KernelSpec &spec = k.spec;
  spec.name = entry.str();
  spec.launch = launchRule(k.launch);
  for (auto [key, list, attrs] :
       {std::tuple{kPreludesAttrName, &spec.preludes, &k.preludes},
        std::tuple{kFollowUpsAttrName, &spec.followUps, &k.followUps}}) {
    auto companions = kernel->getAttrOfType<ArrayAttr>(key);
    if (!companions)
      continue;
    for (Attribute attr : companions) {
      auto companion = dyn_cast<CompanionAttr>(attr);
      if (!companion)
        return kernel.emitOpError()
               << "has an entry in " << key << " that is no #gnn.companion";
      attrs->push_back(companion);
      list->push_back({spec.name + companion.getSuffix().str(),
                       launchRule(companion.getLaunch())});
    }
  }
  for (auto [what, listed, printed] :
       {std::tuple{kPreludesAttrName, k.preludes.size(),
                   k.pattern->numPreludes()},
        std::tuple{kFollowUpsAttrName, k.followUps.size(),
                   k.pattern->numFollowUps()}})
    if (listed > printed)
      return kernel.emitOpError()
             << "lists " << listed << " kernels in " << what
             << ", but the CUDA emission pattern for " << k.op->getName()
             << " with strategy " << strategyName(k.schedule.strategy)
             << " prints " << printed;
  if (auto ws = kernel->getAttrOfType<WorkspaceAttr>(kWorkspaceAttrName)) {
    rt::WorkspaceRule rule;
    rule.count.assign(ws.getCount().begin(), ws.getCount().end());
    rule.itemsPerUnit = static_cast<uint64_t>(ws.getItemsPerUnit());
    rule.bytesPerUnit = static_cast<uint64_t>(ws.getBytesPerUnit());
    rule.minUnits = static_cast<uint64_t>(ws.getMinUnits());
    spec.workspace = rule;
  }

  SmallVector<ParamAttr> params;
  for (Attribute attr : abi) {
    auto param = dyn_cast<ParamAttr>(attr);
    if (!param)
      return kernel.emitOpError() << "has an entry in gnn.abi that is no "
                                     "#gnn.param";
    params.push_back(param);
  }
  if (failed(declareParams(k, params)))
    return failure();
  std::vector<KernelParams::Param> byRole;
  for (ParamAttr param : params) {
    byRole.push_back(
        {param.getName().str(), param.getRole(), param.getOperand()});
    spec.params.push_back({param.getName().str(), paramKindOf(param.getRole()),
                           param.getRole(), param.getOperand()});
  }
  k.params = KernelParams(std::move(byRole));
  k.pattern->addHeaders(k.desc, headers);
  return k;
}

void CUDAEmitter::printSignature(const KernelToPrint &k, StringRef comment,
                                 LaunchAttr launch, StringRef entry) {
  os << "// @" << GnnModuleOp(k.module).getSymName() << "::@"
     << KernelOp(k.kernel).getSymName() << comment << "\n";
  os << "extern \"C\" __global__ void __launch_bounds__(" << launch.getBlock();
  if (launch.getBlocksPerSm() != 0)
    os << ", " << launch.getBlocksPerSm();
  os << ")\n" << entry << "(";
  for (auto [i, decl] : llvm::enumerate(k.decls))
    os << (i ? ", " : "") << decl;
  os << ") {\n";
}

void CUDAEmitter::printKernel(const KernelToPrint &k) {
  OpContext context(os, k.op, k.desc, k.plan, k.schedule, k.params);
  auto body = [&](StringRef comment, LaunchAttr launch, StringRef entry,
                  function_ref<void()> print) {
    printSignature(k, comment, launch, entry);
    os.indent();
    print();
    os.unindent();
    os << "}\n\n";
  };
  // The main kernel, then the kernels that run before and after it, each
  // named by its place among them.
  body("", k.launch, k.spec.name, [&] { k.pattern->emitKernel(context); });
  unsigned place = 1;
  for (auto [index, prelude] : llvm::enumerate(k.preludes))
    body(", " + ordinal(place++) + " kernel", prelude.getLaunch(),
         k.spec.preludes[index].name,
         [&] { k.pattern->emitPrelude(context, index); });
  ++place;
  for (auto [index, followUp] : llvm::enumerate(k.followUps))
    body(", " + ordinal(place++) + " kernel", followUp.getLaunch(),
         k.spec.followUps[index].name,
         [&] { k.pattern->emitFollowUp(context, index); });
}

LogicalResult CUDAEmitter::emitModule(ModuleOp module,
                                      std::vector<rt::KernelSpec> *specs) {
  std::vector<KernelToPrint> kernels;
  for (auto gm : module.getOps<GnnModuleOp>())
    for (auto kernel : gm.getOps<KernelOp>()) {
      FailureOr<KernelToPrint> k = prepare(gm, kernel);
      if (failed(k))
        return failure();
      kernels.push_back(std::move(*k));
    }
  if (kernels.empty())
    return module.emitError() << "no gnn.kernel to emit";

  os << "// Generated by gnnc. Do not edit.\n";
  os << "// The helpers these kernels call are gnnc's CUDA headers\n"
        "// (runtime/include/gnnc/cuda), which gnnc's runtime hands to NVRTC;\n"
        "// to compile this file elsewhere, add -I <gnnc>/runtime/include.\n";
  for (const std::string &header : headers)
    os << "#include \"" << header << "\"\n";
  os << "\n";
  for (KernelToPrint &k : kernels) {
    printKernel(k);
    if (specs)
      specs->push_back(std::move(k.spec));
  }
  return success();
}

} // namespace

LogicalResult gnnc::translateToCUDA(ModuleOp module, raw_ostream &os,
                                    std::vector<rt::KernelSpec> *specs) {
  std::string text;
  llvm::raw_string_ostream buffer(text);
  CUDAEmitter emitter(buffer);
  if (failed(emitter.emitModule(module, specs)))
    return failure();
  os << text;
  return success();
}

void gnnc::registerToCUDATranslation() {
  TranslateFromMLIRRegistration reg(
      "gnn-to-cuda", "print lowered gnn IR as CUDA C++",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError() << "expected a builtin.module";
        return translateToCUDA(module, os);
      },
      [](DialectRegistry &registry) { registry.insert<GnnDialect>(); });
}
