//===- Passes.h - gnnc passes -----------------------------------*- C++ -*-===//
#ifndef GNNC_TRANSFORMS_PASSES_H
#define GNNC_TRANSFORMS_PASSES_H

#include "gnnc/Dialect/Gnn/GnnOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace gnnc {

#define GEN_PASS_DECL
#include "gnnc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gnnc/Transforms/Passes.h.inc"

/// Adds the pipeline that takes parsed `.gnn` IR to IR the CUDA emitter can
/// print: default schedules, then kernel lowering.
void buildLoweringPipeline(mlir::OpPassManager &pm);

/// Names of the parameters of the lowered kernel, in launch order, as written
/// by gnn-lower-to-kernels (attribute `gnn.params`).
constexpr const char *kParamsAttrName = "gnn.params";
constexpr const char *kLaunchAttrName = "gnn.launch";
constexpr const char *kPlanAttrName = "gnn.plan";
/// The kernel's extern "C" entry name, written by gnn-lower-to-kernels.
constexpr const char *kEntryAttrName = "gnn.entry";

/// The CUDA entry name of `kernel`: `<module>_<kernel>` with every character
/// that is not a letter, digit or underscore replaced by an underscore.
std::string kernelEntryName(gnn::GnnModuleOp module, gnn::KernelOp kernel);

} // namespace gnnc

#endif // GNNC_TRANSFORMS_PASSES_H
