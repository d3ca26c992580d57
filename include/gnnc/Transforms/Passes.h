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

/// What gnn-lower-to-kernels records, from the kernel plan: on each
/// kernel its parameters in launch order with their roles (`gnn.abi`, an
/// array of #gnn.param), its launch (#gnn.launch), the kernels run before
/// and after it (`gnn.preludes`, `gnn.follow_ups`, arrays of
/// #gnn.companion) and its workspace (#gnn.workspace); on the op its
/// thread mapping (#gnn.plan).
constexpr const char *kAbiAttrName = "gnn.abi";
constexpr const char *kLaunchAttrName = "gnn.launch";
constexpr const char *kPreludesAttrName = "gnn.preludes";
constexpr const char *kFollowUpsAttrName = "gnn.follow_ups";
constexpr const char *kWorkspaceAttrName = "gnn.workspace";
constexpr const char *kPlanAttrName = "gnn.plan";
/// The kernel's extern "C" entry name, written by gnn-lower-to-kernels.
constexpr const char *kEntryAttrName = "gnn.entry";

/// The CUDA entry name of `kernel`: `<module>_<kernel>` with every character
/// that is not a letter, digit or underscore replaced by an underscore.
std::string kernelEntryName(gnn::GnnModuleOp module, gnn::KernelOp kernel);

} // namespace gnnc

#endif // GNNC_TRANSFORMS_PASSES_H
