//===- Passes.td - gnnc passes -------------------------------------------===//
#ifndef GNNC_TRANSFORMS_PASSES_TD
#define GNNC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def GnnDefaultSchedule : Pass<"gnn-default-schedule", "::mlir::ModuleOp"> {
  let summary = "Give every gnn op a complete schedule";
  let description = [{
    Ops without a `schedule` get one; schedule parameters left at 0
    ("choose") get a value from the op's element type and feature width:
    the widest vector load (at most 16 bytes) that divides the width, enough
    dimension workers to cover a row in one pass (at most a warp), and 256
    threads per block. Explicit values are kept.
  }];
  let dependentDialects = ["::gnnc::gnn::GnnDialect"];
}

def GnnLowerToKernels : Pass<"gnn-lower-to-kernels", "::mlir::ModuleOp"> {
  let summary = "Resolve each kernel's thread mapping, launch and parameters";
  let description = [{
    For every `gnn.kernel`, checks that its body is one the CUDA emitter can
    print, and records every decision the printer needs as attributes:
    `gnn.plan` on the op (threads per row, rows per block, vector width,
    chunks per lane), `gnn.launch` on the kernel (block size, grid rule)
    and `gnn.params` (the kernel's parameter names, in order). After this
    pass the printer decides nothing.
  }];
  let dependentDialects = ["::gnnc::gnn::GnnDialect"];
}

#endif // GNNC_TRANSFORMS_PASSES_TD
