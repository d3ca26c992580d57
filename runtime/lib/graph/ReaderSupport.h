//===- ReaderSupport.h - Helpers shared by the graph readers ----*- C++ -*-===//
//
// Internal to gnnc_graph: reading whole files (binary, or text through zlib
// so that gzip is transparent), file names and suffixes, little-endian
// integers and NumPy shapes for the binary formats, lines, tokens and
// numbers for the text formats, and the CSR graph the edge-list formats
// build. Defined in Readers.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_GRAPH_READERSUPPORT_H
#define GNNC_GRAPH_READERSUPPORT_H

#include "gnnc/graph/Csr.h"
#include "gnnc/graph/Readers.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gnnc::graph::detail {

//===----------------------------------------------------------------------===//
// Files and names
//===----------------------------------------------------------------------===//

/// Reads a whole file as bytes, if it is no larger than the memory budget.
/// Errors read "path: cannot open: why", "path: read error" or "path: the
/// file is 9.0 GiB, over the readers' memory budget of 8.0 GiB ...".
Expected<std::vector<uint8_t>> readBinaryFile(const std::string &path);

/// The text of a file's contents: decompressed when they start with the
/// gzip magic (every member of the stream, at most the memory budget's
/// bytes; anything after the last member but another member is an error),
/// else the contents as they are.
Expected<std::string> decodeText(const std::string &path,
                                 std::string_view contents);

/// readBinaryFile, then decodeText.
Expected<std::string> readTextFile(const std::string &path);

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// "1.5 GiB", "12.0 MiB", "512 bytes".
std::string formatBytes(double bytes);

/// The memory budget of one read (readerMemoryBudget in Readers.h).
class GraphBudget {
public:
  /// The budget in force; a malformed GNNC_GRAPH_MEMORY_LIMIT is an error
  /// naming `path`.
  static Expected<GraphBudget> current(const std::string &path);
  int64_t bytes() const { return bytes_; }
  /// What a graph of these sizes needs by the readers' estimate (saturating
  /// at INT64_MAX).
  static int64_t estimate(int64_t rows, int64_t cols, int64_t entries);
  /// Empty when such a graph fits, else why not: "a 2147483647 x 2 <what>
  /// with 1 entries needs about 48.0 GiB, over the readers' memory budget
  /// of 8.0 GiB (GNNC_GRAPH_MEMORY_LIMIT sets it)".
  std::string check(int64_t rows, int64_t cols, int64_t entries,
                    const std::string &what = "graph") const;
  /// Empty when `size` bytes fit, else "<what> is <size>, over ...".
  std::string checkBytes(uint64_t size, const std::string &what) const;
  /// Empty when `size` bytes, a part of `what` read so far, fit, else
  /// "<what> is larger than the readers' memory budget of ...".
  std::string checkPart(uint64_t size, const std::string &what) const;

private:
  explicit GraphBudget(int64_t bytes) : bytes_(bytes) {}
  std::string over() const;
  int64_t bytes_;
};

/// "path: out of memory while reading it ...".
Status outOfMemory(const std::string &path);

/// Runs `read` (returning Expected<T>); an allocation that fails inside it
/// becomes an error naming `path` rather than an abort.
template <typename T, typename Read>
Expected<T> guardAllocation(const std::string &path, Read &&read) {
  try {
    return read();
  } catch (const std::bad_alloc &) {
    return outOfMemory(path);
  } catch (const std::length_error &) {
    return outOfMemory(path);
  }
}

/// Whether `s` ends with `suffix`.
bool endsWith(const std::string &s, const std::string &suffix);

/// `s` without `suffix` when it ends with it, else `s`.
std::string withoutSuffix(const std::string &s, const std::string &suffix);

/// `s` in ASCII lower case.
std::string lower(std::string_view s);

//===----------------------------------------------------------------------===//
// Binary formats
//===----------------------------------------------------------------------===//

/// Little-endian unsigned integers at `p`.
inline uint16_t rd16(const uint8_t *p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t rd32(const uint8_t *p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) |
         (uint32_t(p[3]) << 24);
}
inline uint64_t rd64(const uint8_t *p) {
  return uint64_t(rd32(p)) | (uint64_t(rd32(p + 4)) << 32);
}

/// A NumPy shape as Python prints it: "()", "(5,)", "(2, 3)".
std::string shapeString(const std::vector<int64_t> &shape);

/// Member `member` of `npz` (read from `path`), a 1-d array of an integer
/// type, widened to int64. Errors read "path: member 'name': ..." (the
/// dtype or the shape that is not one).
Expected<std::vector<int64_t>> npzIntegers(const std::string &path,
                                           const NpzFile &npz,
                                           const std::string &member);

//===----------------------------------------------------------------------===//
// Text formats
//===----------------------------------------------------------------------===//

/// Iterates over the lines of a text, counting them from 1, and words errors
/// "path:line: what".
class LineReader {
public:
  LineReader(const std::string &path, const std::string &text)
      : path(path), text(text) {}
  /// Gets the next line (without the newline and a trailing '\r'); false at
  /// the end.
  bool next(std::string_view &line);
  int64_t lineNumber() const { return lineNo; }
  /// "path:line: what" for the line read last.
  Status error(const std::string &what) const;

private:
  const std::string &path;
  const std::string &text;
  size_t pos = 0;
  int64_t lineNo = 0;
};

/// Space or tab (or vertical tab, form feed); never a line break.
bool isSpace(char c);

/// Whether the line holds only spaces.
bool isBlank(std::string_view line);

/// Splits a line into at most `maxTokens` + 1 whitespace-separated tokens
/// (one extra to detect too many). Returns the number found.
size_t tokenize(std::string_view line, std::string_view *tokens,
                size_t maxTokens);

/// Parses a whole token as a decimal integer (an optional '+' allowed).
bool parseInt(std::string_view token, int64_t &value);

/// Parses a whole token as a finite real number (an optional '+' allowed).
bool parseReal(std::string_view token, double &value);

/// A token for an error message: quoted, cut after 40 characters.
std::string quoted(std::string_view token);

/// The graph of the entries (rows[i], cols[i], vals[i]) of a file `path`
/// (vals empty: no values), with repeated entries summed; named `path`.
/// Errors read "path: ...".
Expected<CsrGraph> csrFromEntries(const std::string &path, int64_t numRows,
                                  int64_t numCols,
                                  const std::vector<int64_t> &rows,
                                  const std::vector<int64_t> &cols,
                                  const std::vector<float> &vals);

} // namespace gnnc::graph::detail

#endif // GNNC_GRAPH_READERSUPPORT_H
