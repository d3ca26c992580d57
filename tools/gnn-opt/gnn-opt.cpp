//===- gnn-opt.cpp - mlir-opt style driver for the gnn dialect ------------===//
//
// MLIR's mlir-opt driver, with gnnc's two additions: the input is scanned
// for nesting too deep for MLIR's recursive parser before the driver parses
// it (gnnc::gnn::checkNesting), and failures get gnnc's handlers
// (gnnc::tools::initLLVMTool).
//
//===----------------------------------------------------------------------===//
#include "gnnc/Dialect/Gnn/GnnOps.h"
#include "gnnc/Dialect/Gnn/Nesting.h"
#include "gnnc/Tools/ToolSupport.h"
#include "gnnc/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  gnnc::tools::initLLVMTool("gnn-opt");
  mlir::DialectRegistry registry;
  registry.insert<gnnc::gnn::GnnDialect>();
  gnnc::registerGnncPasses();
  mlir::PassPipelineRegistration<>(
      "gnn-lower", "The full lowering pipeline gnnc runs before printing CUDA",
      [](mlir::OpPassManager &pm) { gnnc::buildLoweringPipeline(pm); });
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "gnn optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // Listings read no input: MLIR's driver does them.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  {
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef(),
                                         /*RequiresNullTerminator=*/false),
        llvm::SMLoc());
    if (!gnnc::gnn::checkNesting(sourceMgr))
      return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
