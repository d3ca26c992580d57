//===- CUDAEmitter.h - Print lowered gnn IR as CUDA C++ ---------*- C++ -*-===//
//
// The CUDA printer. It reads IR that `gnn-lower-to-kernels` has prepared
// (every decision already recorded as attributes) and prints one CUDA C++
// translation unit; it never changes the IR and decides nothing. One
// emission pattern per (op, strategy) prints the kernel bodies
// (lib/Target/CUDA/Patterns). The kernels include gnnc's device helpers,
// runtime/include/gnnc/cuda/*.cuh, which gnnc's runtime hands to NVRTC
// (gnnc/runtime/Nvrtc.h).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TARGET_CUDA_CUDAEMITTER_H
#define GNNC_TARGET_CUDA_CUDAEMITTER_H

#include "gnnc/runtime/KernelSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace gnnc {

/// Prints every `gnn.kernel` under `module` as one CUDA C++ translation unit
/// to `os`. When `specs` is given, appends one runtime description per
/// kernel (entry name, parameters, launch rule; `source` left empty for the
/// caller to fill). Emits a diagnostic and fails on IR it cannot print.
mlir::LogicalResult
translateToCUDA(mlir::ModuleOp module, llvm::raw_ostream &os,
                std::vector<rt::KernelSpec> *specs = nullptr);

/// Registers `--gnn-to-cuda` with mlir-translate style drivers
/// (gnn-translate).
void registerToCUDATranslation();

} // namespace gnnc

#endif // GNNC_TARGET_CUDA_CUDAEMITTER_H
