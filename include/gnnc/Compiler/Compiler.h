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

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
class MLIRContext;
class ModuleOp;
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

/// A parsed `.gnn` module with what keeps it alive: its MLIR context and the
/// source behind its diagnostics. Tools that change a module before
/// compiling it (the tuner sets schedules) work on clones of it.
class GnnModule {
public:
  /// Parses and verifies `.gnn` text; `bufferName` names it in diagnostics.
  static Expected<GnnModule> parse(const std::string &text,
                                   const std::string &bufferName);
  GnnModule(GnnModule &&);
  GnnModule &operator=(GnnModule &&);
  ~GnnModule();

  mlir::ModuleOp module() const;
  /// A deep copy of the module, in the same context.
  mlir::ModuleOp clone() const;
  /// Lowers `module` (this module or a clone, which it consumes: it is
  /// erased afterwards unless it is this module) and prints its CUDA.
  /// Diagnostics come back in the error as `name:line:col: error: message`
  /// lines.
  Expected<CompiledModule> compile(mlir::ModuleOp module) const;
  /// `module` printed as `.gnn` text.
  std::string print(mlir::ModuleOp module) const;

private:
  struct Impl;
  explicit GnnModule(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
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
