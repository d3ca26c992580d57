//===- gnn-translate.cpp - mlir-translate style driver for gnnc -----------===//
//
// Translations out of the gnn dialect, mlir-translate style:
//
//   gnn-opt file.gnn --gnn-lower | gnn-translate --gnn-to-cuda
//
// prints lowered gnn IR as CUDA C++ through the printer gnnc uses
// (gnnc/Target/CUDA/CUDAEmitter.h); --verify-diagnostics checks what it
// refuses.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Target/CUDA/CUDAEmitter.h"
#include "gnnc/Tools/ToolSupport.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  // gnnc's crash report instead of LLVM's bug-report banner (the
  // translation driver's own InitLLVM keeps it).
  gnnc::tools::initLLVMTool("gnn-translate");
  gnnc::registerToCUDATranslation();
  return mlir::failed(
             mlir::mlirTranslateMain(argc, argv, "gnn translation driver\n"))
             ? 1
             : 0;
}
