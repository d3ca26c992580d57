//===- MatrixMarket.cpp - Matrix Market reader ----------------------------===//

#include "gnnc/graph/Readers.h"

#include "ReaderSupport.h"

#include <algorithm>
#include <string_view>

using namespace gnnc;
using namespace gnnc::graph;
using namespace gnnc::graph::detail;

namespace {

Expected<CsrGraph> parseText(const std::string &path, const std::string &text) {
  Expected<GraphBudget> budget = GraphBudget::current(path);
  if (!budget)
    return budget.status();
  LineReader lines(path, text);

  std::string_view line;
  if (!lines.next(line))
    return Status::error(path + ": empty file (expected a %%MatrixMarket "
                                "header)");
  std::string_view tok[6];
  size_t n = tokenize(line, tok, 5);
  if (n == 0 || lower(tok[0]) != "%%matrixmarket")
    return lines.error("missing '%%MatrixMarket' header");
  if (n != 5)
    return lines.error(
        "malformed header: expected '%%MatrixMarket matrix <format> "
        "<field> <symmetry>'");
  std::string object = lower(tok[1]), format = lower(tok[2]),
              field = lower(tok[3]), symmetry = lower(tok[4]);
  if (object != "matrix")
    return lines.error("unsupported object '" + object + "' (only 'matrix')");
  if (format != "coordinate")
    return lines.error("unsupported format '" + format +
                       "' (only sparse 'coordinate' matrices)");
  if (field != "real" && field != "integer" && field != "pattern" &&
      field != "double")
    return lines.error("unsupported field '" + field +
                       "' (supported: real, integer, pattern)");
  if (symmetry != "general" && symmetry != "symmetric")
    return lines.error("unsupported symmetry '" + symmetry +
                       "' (supported: general, symmetric)");
  bool pattern = field == "pattern";
  bool integer = field == "integer";
  bool symmetric = symmetry == "symmetric";

  // Size line, after comments.
  int64_t numRows = 0, numCols = 0, declared = 0;
  bool haveSize = false;
  while (lines.next(line)) {
    if (isBlank(line) || line[0] == '%')
      continue;
    n = tokenize(line, tok, 3);
    if (n != 3)
      return lines.error(
          "malformed size line: expected 'rows columns entries'");
    if (!parseInt(tok[0], numRows) || !parseInt(tok[1], numCols) ||
        !parseInt(tok[2], declared))
      return lines.error("malformed size line: expected three integers");
    if (numRows < 0 || numCols < 0 || declared < 0)
      return lines.error("negative size in size line");
    if (numRows > kMaxReaderDimension || numCols > kMaxReaderDimension)
      return lines.error("matrix dimensions " + std::to_string(numRows) + "x" +
                         std::to_string(numCols) +
                         " exceed the supported maximum " +
                         std::to_string(kMaxReaderDimension));
    if (symmetric && numRows != numCols)
      return lines.error("symmetric matrix must be square, got " +
                         std::to_string(numRows) + "x" +
                         std::to_string(numCols));
    // The budget, before anything is allocated: the rows and columns as
    // declared, the entries as many as the file can hold (an entry line
    // takes at least 4 bytes; fewer than declared is an error below).
    int64_t entries =
        std::min<int64_t>(declared, static_cast<int64_t>(text.size() / 4 + 1));
    std::string over = budget->check(numRows, numCols,
                                     entries * (symmetric ? 2 : 1), "matrix");
    if (!over.empty())
      return lines.error(over);
    haveSize = true;
    break;
  }
  if (!haveSize)
    return lines.error("file ends before the size line");

  std::vector<int64_t> rows, cols;
  std::vector<float> vals;
  // Never trust the declared count for allocation beyond what the file can
  // hold (at least 4 bytes per entry).
  size_t reserve = static_cast<size_t>(
      std::min<int64_t>(declared, static_cast<int64_t>(text.size() / 4 + 1)));
  rows.reserve(reserve * (symmetric ? 2 : 1));
  cols.reserve(reserve * (symmetric ? 2 : 1));
  if (!pattern)
    vals.reserve(reserve * (symmetric ? 2 : 1));
  size_t expectTokens = pattern ? 2 : 3;
  int64_t count = 0;
  while (lines.next(line)) {
    if (isBlank(line) || line[0] == '%')
      continue;
    if (count == declared)
      return lines.error("more entries than the " + std::to_string(declared) +
                         " declared in the size line");
    n = tokenize(line, tok, expectTokens);
    if (n != expectTokens)
      return lines.error(
          "expected " + std::to_string(expectTokens) + " fields (row column" +
          (pattern ? "" : " value") + ") in entry " +
          std::to_string(count + 1) + ", found " +
          std::to_string(n > expectTokens ? expectTokens + 1 : n) +
          (n > expectTokens ? " or more" : ""));
    int64_t r, c;
    if (!parseInt(tok[0], r))
      return lines.error("malformed row index " + quoted(tok[0]));
    if (!parseInt(tok[1], c))
      return lines.error("malformed column index " + quoted(tok[1]));
    if (r < 1 || r > numRows)
      return lines.error("row index " + std::to_string(r) +
                         " is out of range [1, " + std::to_string(numRows) +
                         "]");
    if (c < 1 || c > numCols)
      return lines.error("column index " + std::to_string(c) +
                         " is out of range [1, " + std::to_string(numCols) +
                         "]");
    float v = 1.0f;
    if (!pattern) {
      if (integer) {
        int64_t iv;
        if (!parseInt(tok[2], iv))
          return lines.error("malformed integer value " + quoted(tok[2]));
        v = static_cast<float>(iv);
      } else {
        double dv;
        if (!parseReal(tok[2], dv))
          return lines.error("malformed real value " + quoted(tok[2]));
        v = static_cast<float>(dv);
      }
    }
    rows.push_back(r - 1);
    cols.push_back(c - 1);
    if (!pattern)
      vals.push_back(v);
    if (symmetric && r != c) {
      rows.push_back(c - 1);
      cols.push_back(r - 1);
      if (!pattern)
        vals.push_back(v);
    }
    ++count;
  }
  if (count < declared)
    return lines.error("file ends after " + std::to_string(count) + " of " +
                       std::to_string(declared) +
                       " declared entries (truncated?)");

  return csrFromEntries(path, numRows, numCols, rows, cols, vals);
}

} // namespace

Expected<CsrGraph> gnnc::graph::parseMatrixMarket(const std::string &path,
                                                  std::string_view contents) {
  return guardAllocation<CsrGraph>(path, [&]() -> Expected<CsrGraph> {
    Expected<std::string> text = decodeText(path, contents);
    if (!text)
      return text.status();
    return parseText(path, *text);
  });
}

Expected<CsrGraph> gnnc::graph::readMatrixMarket(const std::string &path) {
  return guardAllocation<CsrGraph>(path, [&]() -> Expected<CsrGraph> {
    Expected<std::string> text = readTextFile(path);
    if (!text)
      return text.status();
    return parseText(path, *text);
  });
}
