//===- Compiler.cpp - From .gnn text to CUDA kernels ----------------------===//
#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Target/CUDA/CUDAEmitter.h"
#include "gnnc/Transforms/Passes.h"

#include "gnnc/Dialect/Gnn/GnnOps.h"
#include "gnnc/Dialect/Gnn/Nesting.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

void gnnc::registerGnnDialect(DialectRegistry &registry) {
  registry.insert<gnn::GnnDialect>();
}

struct gnnc::GnnModule::Impl {
  std::string bufferName;
  std::unique_ptr<MLIRContext> context;
  llvm::SourceMgr sourceMgr;
  /// What the handler has printed since the last take().
  std::string diagnostics;
  std::unique_ptr<llvm::raw_string_ostream> diagStream;
  std::unique_ptr<SourceMgrDiagnosticHandler> handler;
  OwningOpRef<ModuleOp> module;

  /// The diagnostics printed so far (cleared), or `stage failed`.
  Status take(const char *stage) {
    diagStream->flush();
    std::string message = diagnostics.empty()
                              ? bufferName + ": " + stage + " failed"
                              : diagnostics;
    diagnostics.clear();
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    return Status::error(message);
  }
};

gnnc::GnnModule::GnnModule(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
gnnc::GnnModule::GnnModule(GnnModule &&) = default;
gnnc::GnnModule &gnnc::GnnModule::operator=(GnnModule &&) = default;
gnnc::GnnModule::~GnnModule() = default;

gnnc::Expected<gnnc::GnnModule>
gnnc::GnnModule::parse(const std::string &text, const std::string &bufferName) {
  auto impl = std::make_unique<Impl>();
  impl->bufferName = bufferName;
  DialectRegistry registry;
  registerGnnDialect(registry);
  impl->context =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  impl->context->loadAllAvailableDialects();
  impl->context->printOpOnDiagnostic(false);
  impl->sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, bufferName), llvm::SMLoc());
  impl->diagStream =
      std::make_unique<llvm::raw_string_ostream>(impl->diagnostics);
  impl->handler = std::make_unique<SourceMgrDiagnosticHandler>(
      impl->sourceMgr, impl->context.get(), *impl->diagStream);
  // MLIR's parser recurses into every bracket: refuse text nested deeper
  // than the stack allows before it sees it.
  if (std::optional<size_t> at = gnn::findExcessiveNesting(text)) {
    const llvm::MemoryBuffer *buffer =
        impl->sourceMgr.getMemoryBuffer(impl->sourceMgr.getMainFileID());
    auto [line, column] = impl->sourceMgr.getLineAndColumn(
        llvm::SMLoc::getFromPointer(buffer->getBufferStart() + *at));
    emitError(
        FileLineColLoc::get(impl->context.get(), bufferName, line, column))
        << gnn::nestingErrorMessage();
    return impl->take("parsing");
  }
  impl->module = parseSourceFile<ModuleOp>(impl->sourceMgr,
                                           ParserConfig(impl->context.get()));
  if (!impl->module)
    return impl->take("parsing");
  auto gnnModules = impl->module->getOps<gnn::GnnModuleOp>();
  if (gnnModules.empty())
    return Status::error(bufferName +
                         ": no gnn.module found; a .gnn file holds gnn.module "
                         "ops with gnn.kernel ops inside");
  // The parser gives the module it wraps the text in line 0, column 0:
  // errors about the whole module name the first gnn.module instead.
  if (auto loc = dyn_cast<FileLineColLoc>(impl->module->getLoc());
      loc && loc.getLine() == 0)
    impl->module->getOperation()->setLoc((*gnnModules.begin()).getLoc());
  return GnnModule(std::move(impl));
}

ModuleOp gnnc::GnnModule::module() const { return *impl_->module; }

ModuleOp gnnc::GnnModule::clone() const { return impl_->module->clone(); }

std::string gnnc::GnnModule::print(ModuleOp module) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

gnnc::Expected<gnnc::CompiledModule>
gnnc::GnnModule::compile(ModuleOp module) const {
  // A clone is consumed: erased however compilation ends.
  OwningOpRef<ModuleOp> owned;
  if (module != *impl_->module)
    owned = module;
  PassManager pm(impl_->context.get());
  buildLoweringPipeline(pm);
  if (failed(pm.run(module)))
    return impl_->take("lowering");

  CompiledModule result;
  llvm::raw_string_ostream irStream(result.loweredIR);
  module.print(irStream);
  llvm::raw_string_ostream sourceStream(result.source);
  if (failed(translateToCUDA(module, sourceStream, &result.kernels)))
    return impl_->take("CUDA emission");
  sourceStream.flush();
  for (rt::KernelSpec &spec : result.kernels)
    spec.source = result.source;
  return result;
}

gnnc::Expected<gnnc::CompiledModule>
gnnc::compileGnn(const std::string &text, const std::string &bufferName) {
  Expected<GnnModule> parsed = GnnModule::parse(text, bufferName);
  if (!parsed)
    return parsed.status();
  return parsed->compile(parsed->module());
}

gnnc::Expected<std::string> gnnc::readGnnFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return Status::error(path +
                         ": cannot read: " + buffer.getError().message());
  return (*buffer)->getBuffer().str();
}

gnnc::Expected<gnnc::CompiledModule>
gnnc::compileGnnFile(const std::string &path) {
  Expected<std::string> text = readGnnFile(path);
  if (!text)
    return text.status();
  return compileGnn(*text, path);
}

gnnc::Expected<gnnc::rt::KernelSpec>
gnnc::findKernel(const CompiledModule &module, const std::string &name) {
  for (const rt::KernelSpec &spec : module.kernels) {
    llvm::StringRef entry(spec.name);
    if (entry == name || entry.ends_with("_" + name))
      return spec;
  }
  std::string known;
  for (const rt::KernelSpec &spec : module.kernels)
    known += (known.empty() ? "" : ", ") + spec.name;
  return Status::error("no kernel named '" + name + "' (kernels: " + known +
                       ")");
}
