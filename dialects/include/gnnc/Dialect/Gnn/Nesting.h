//===- Nesting.h - A bound on the nesting of .gnn text ----------*- C++ -*-===//
//
// MLIR's parser descends recursively into every bracket of the text (and
// into every operator of an affine expression): text nested thousands of
// levels deep overflows its stack. Every gnnc tool scans the text first,
// cheaply, and refuses it with an error at the place where it nests deeper
// than kMaxNestingDepth levels, before the parser sees it.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_DIALECT_GNN_NESTING_H
#define GNNC_DIALECT_GNN_NESTING_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>
#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace gnnc::gnn {

/// Most levels of nesting the tools accept: brackets `[ ( { <` (outside
/// string literals and comments), and inside `affine_map<...>` and
/// `affine_set<...>` also the operators of an expression (`+ - *`,
/// `floordiv`, `ceildiv`, `mod`), each of which the parser descends into.
/// Real kernels nest fewer than 10 levels; MLIR's parser itself manages a
/// few thousand.
constexpr unsigned kMaxNestingDepth = 256;

/// Where `text` first nests deeper than `maxDepth` levels (an offset into
/// `text`), or nothing when it never does. Linear in the text's size.
std::optional<size_t>
findExcessiveNesting(llvm::StringRef text,
                     unsigned maxDepth = kMaxNestingDepth);

/// The error for text nested too deeply, without the location: "nesting
/// deeper than 256 levels ...".
std::string nestingErrorMessage(unsigned maxDepth = kMaxNestingDepth);

/// Checks the main buffer of `sourceMgr`; when it nests too deeply, prints
/// `file:line:col: error: nesting deeper than ...` (with the line and a
/// caret) to stderr, as MLIR's diagnostics do, and returns false.
bool checkNesting(const llvm::SourceMgr &sourceMgr);

} // namespace gnnc::gnn

#endif // GNNC_DIALECT_GNN_NESTING_H
