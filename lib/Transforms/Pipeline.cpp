//===- Pipeline.cpp - The lowering pipeline -------------------------------===//
#include "gnnc/Transforms/Passes.h"

void gnnc::buildLoweringPipeline(mlir::OpPassManager &pm) {
  pm.addPass(createGnnDefaultSchedule());
  pm.addPass(createGnnLowerToKernels());
}
