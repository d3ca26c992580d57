//===- Compiler.cpp - From .gnn text to CUDA kernels ----------------------===//
#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Target/CUDA/CUDAEmitter.h"
#include "gnnc/Transforms/Passes.h"

#include "gnnc/Dialect/Gnn/GnnOps.h"
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

gnnc::Expected<gnnc::CompiledModule>
gnnc::compileGnn(const std::string &text, const std::string &bufferName) {
  DialectRegistry registry;
  registerGnnDialect(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, bufferName), llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagStream);
  auto fail = [&](const char *stage) {
    diagStream.flush();
    std::string message = diagnostics.empty()
                              ? bufferName + ": " + stage + " failed"
                              : diagnostics;
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    return Status::error(message);
  };

  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return fail("parsing");

  if (module->getOps<gnn::GnnModuleOp>().empty())
    return Status::error(bufferName +
                         ": no gnn.module found; a .gnn file holds gnn.module "
                         "ops with gnn.kernel ops inside");

  PassManager pm(&context);
  buildLoweringPipeline(pm);
  if (failed(pm.run(*module)))
    return fail("lowering");

  CompiledModule result;
  llvm::raw_string_ostream irStream(result.loweredIR);
  module->print(irStream);
  llvm::raw_string_ostream sourceStream(result.source);
  if (failed(translateToCUDA(*module, sourceStream, &result.kernels)))
    return fail("CUDA emission");
  sourceStream.flush();
  for (rt::KernelSpec &spec : result.kernels)
    spec.source = result.source;
  return result;
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
