//===- gnn-opt.cpp - mlir-opt style driver for the gnn dialect ------------===//
#include "gnnc/Dialect/Gnn/GnnOps.h"
#include "gnnc/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<gnnc::gnn::GnnDialect>();
  gnnc::registerGnncPasses();
  mlir::PassPipelineRegistration<>(
      "gnn-lower", "The full lowering pipeline gnnc runs before printing CUDA",
      [](mlir::OpPassManager &pm) { gnnc::buildLoweringPipeline(pm); });
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "gnn optimizer driver\n", registry));
}
