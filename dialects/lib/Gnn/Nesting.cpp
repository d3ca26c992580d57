//===- Nesting.cpp - A bound on the nesting of .gnn text ------------------===//
#include "gnnc/Dialect/Gnn/Nesting.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {

/// The characters of a bare identifier (MLIR's lexer also allows `$` and
/// `.` after the first).
bool isIdentifierChar(char c) {
  return isAlnum(c) || c == '_' || c == '$' || c == '.';
}

/// An open bracket: whether it belongs to an affine map or set, and how
/// many operators of an affine expression it holds so far.
struct Open {
  bool affine = false;
  unsigned operators = 0;
};

} // namespace

std::optional<size_t> gnnc::gnn::findExcessiveNesting(StringRef text,
                                                      unsigned maxDepth) {
  SmallVector<Open, 16> open;
  // Brackets plus the operators counted in them.
  size_t depth = 0;
  // The identifier before the current position (for `affine_map<`).
  StringRef lastIdentifier;
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    char c = text[i];
    // Strings end at their closing quote (or, malformed, at the line's end).
    if (c == '"') {
      for (++i; i < n && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      lastIdentifier = {};
      continue;
    }
    // Comments run to the end of the line.
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n')
        ++i;
      continue;
    }
    bool affine = !open.empty() && open.back().affine;
    if (isAlpha(c) || c == '_') {
      size_t start = i;
      while (i + 1 < n && isIdentifierChar(text[i + 1]))
        ++i;
      lastIdentifier = text.slice(start, i + 1);
      if (affine && (lastIdentifier == "floordiv" ||
                     lastIdentifier == "ceildiv" || lastIdentifier == "mod")) {
        ++open.back().operators;
        if (++depth > maxDepth)
          return start;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
      continue;
    StringRef before = lastIdentifier;
    lastIdentifier = {};
    switch (c) {
    case '[':
    case '(':
    case '{':
    case '<':
      open.push_back({affine || (c == '<' && (before == "affine_map" ||
                                              before == "affine_set")),
                      0});
      if (++depth > maxDepth)
        return i;
      break;
    case ']':
    case ')':
    case '}':
    case '>':
      if (open.empty())
        break;
      depth -= 1 + open.back().operators;
      open.pop_back();
      break;
    case '-':
      // `->` is an arrow, not an operator or a closing bracket.
      if (i + 1 < n && text[i + 1] == '>') {
        ++i;
        break;
      }
      [[fallthrough]];
    case '+':
    case '*':
      if (affine) {
        ++open.back().operators;
        if (++depth > maxDepth)
          return i;
      }
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

std::string gnnc::gnn::nestingErrorMessage(unsigned maxDepth) {
  return "nesting deeper than " + std::to_string(maxDepth) +
         " levels (brackets [ ( { < and affine operators); gnnc refuses it "
         "rather than overflow the parser's stack";
}

bool gnnc::gnn::checkNesting(const SourceMgr &sourceMgr) {
  const MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  std::optional<size_t> offset = findExcessiveNesting(buffer->getBuffer());
  if (!offset)
    return true;
  sourceMgr.PrintMessage(
      errs(), SMLoc::getFromPointer(buffer->getBufferStart() + *offset),
      SourceMgr::DK_Error, nestingErrorMessage());
  return false;
}
