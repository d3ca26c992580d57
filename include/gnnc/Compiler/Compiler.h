//===- Compiler.h - From .gnn text to CUDA kernels --------------*- C++ -*-===//
//
// The compiler's front door for host programs and tools: parse a `.gnn`
// module, verify it, run the lowering pipeline and print CUDA C++, returning
// the source together with one runtime description per kernel.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_COMPILER_COMPILER_H
#define GNNC_COMPILER_COMPILER_H

#include "gnnc/runtime/KernelSpec.h"
#include "gnnc/runtime/Status.h"

#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace gnnc {

/// A compiled `.gnn` module: one CUDA translation unit and its kernels. Each
/// kernel's `source` is the whole translation unit.
struct CompiledModule {
  std::string source;
  std::vector<rt::KernelSpec> kernels;
  /// The IR after lowering, for inspection (`gnnc --emit=mlir`).
  std::string loweredIR;
};

/// Compiles `.gnn` text. `bufferName` names the input in diagnostics, which
/// come back in the error as `name:line:col: error: message` lines.
Expected<CompiledModule> compileGnn(const std::string &text,
                                    const std::string &bufferName);

/// Reads a `.gnn` file's text ("path: cannot read: reason" on failure).
Expected<std::string> readGnnFile(const std::string &path);

/// Reads and compiles a `.gnn` file.
Expected<CompiledModule> compileGnnFile(const std::string &path);

/// Finds the kernel named `name` (entry name, e.g. "gcn_aggregate", or the
/// kernel's symbol, e.g. "aggregate") in `module`.
Expected<rt::KernelSpec> findKernel(const CompiledModule &module,
                                    const std::string &name);

/// Registers the gnn dialect.
void registerGnnDialect(mlir::DialectRegistry &registry);

} // namespace gnnc

#endif // GNNC_COMPILER_COMPILER_H
