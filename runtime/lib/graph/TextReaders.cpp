//===- TextReaders.cpp - Matrix Market and SNAP edge list readers ---------===//

#include "gnnc/graph/Readers.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

/// Reads a whole file, decompressing it if it is gzip (zlib reads plain files
/// transparently).
Expected<std::string> readTextFile(const std::string &path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file)
    return Status::error(path + ": cannot open: " +
                         (errno ? std::strerror(errno) : "gzopen failed"));
  gzbuffer(file, 1 << 20);
  std::string text;
  std::vector<char> chunk(1 << 22);
  while (true) {
    int n = gzread(file, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) {
      int code = 0;
      std::string msg = gzerror(file, &code);
      gzclose_r(file);
      return Status::error(path + ": read error: " + msg +
                           " (truncated or corrupt gzip data?)");
    }
    if (n == 0)
      break;
    text.append(chunk.data(), static_cast<size_t>(n));
  }
  int code = 0;
  const char *msg = gzerror(file, &code);
  if (code != Z_OK && code != Z_STREAM_END) {
    std::string copy = msg ? msg : "";
    gzclose_r(file);
    return Status::error(path + ": read error: " + copy +
                         " (truncated or corrupt gzip data?)");
  }
  int closeCode = gzclose_r(file);
  if (closeCode == Z_BUF_ERROR)
    return Status::error(path + ": gzip data ends in the middle of a stream "
                                "(file truncated?)");
  if (closeCode != Z_OK)
    return Status::error(path + ": error closing file (code " +
                         std::to_string(closeCode) + ")");
  return text;
}

/// Iterates over the lines of a text, counting them from 1.
class LineReader {
public:
  explicit LineReader(const std::string &text) : text(text) {}
  /// Gets the next line (without the newline and a trailing '\r'); false at
  /// the end.
  bool next(std::string_view &line) {
    if (pos >= text.size())
      return false;
    size_t end = text.find('\n', pos);
    if (end == std::string::npos)
      end = text.size();
    line = std::string_view(text).substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    pos = end + 1;
    ++lineNo;
    return true;
  }
  int64_t lineNumber() const { return lineNo; }

private:
  const std::string &text;
  size_t pos = 0;
  int64_t lineNo = 0;
};

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

/// Splits a line into at most `maxTokens` + 1 whitespace-separated tokens
/// (one extra to detect too many). Returns the number found.
size_t tokenize(std::string_view line, std::string_view *tokens,
                size_t maxTokens) {
  size_t count = 0, i = 0;
  while (i < line.size() && count <= maxTokens) {
    while (i < line.size() && isSpace(line[i]))
      ++i;
    if (i >= line.size())
      break;
    size_t start = i;
    while (i < line.size() && !isSpace(line[i]))
      ++i;
    tokens[count++] = line.substr(start, i - start);
  }
  return count;
}

bool isBlank(std::string_view line) {
  for (char c : line)
    if (!isSpace(c))
      return false;
  return true;
}

bool parseInt(std::string_view token, int64_t &value) {
  if (!token.empty() && token[0] == '+')
    token.remove_prefix(1);
  const char *end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(token.data(), end, value);
  return ec == std::errc() && ptr == end && !token.empty();
}

bool parseReal(std::string_view token, double &value) {
  if (!token.empty() && token[0] == '+')
    token.remove_prefix(1);
  const char *end = token.data() + token.size();
  auto [ptr, ec] =
      std::from_chars(token.data(), end, value, std::chars_format::general);
  return ec == std::errc() && ptr == end && !token.empty() &&
         std::isfinite(value);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char &c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string quoted(std::string_view token) {
  std::string s(token.substr(0, 40));
  if (token.size() > 40)
    s += "...";
  return "'" + s + "'";
}

} // namespace

Expected<CsrGraph> gnnc::graph::readMatrixMarket(const std::string &path) {
  Expected<std::string> text = readTextFile(path);
  if (!text)
    return text.status();
  LineReader lines(*text);
  auto err = [&](const std::string &what) {
    return Status::error(path + ":" + std::to_string(lines.lineNumber()) +
                         ": " + what);
  };

  std::string_view line;
  if (!lines.next(line))
    return Status::error(path + ": empty file (expected a %%MatrixMarket "
                                "header)");
  std::string_view tok[6];
  size_t n = tokenize(line, tok, 5);
  if (n == 0 || lower(tok[0]) != "%%matrixmarket")
    return err("missing '%%MatrixMarket' header");
  if (n != 5)
    return err("malformed header: expected '%%MatrixMarket matrix <format> "
               "<field> <symmetry>'");
  std::string object = lower(tok[1]), format = lower(tok[2]),
              field = lower(tok[3]), symmetry = lower(tok[4]);
  if (object != "matrix")
    return err("unsupported object '" + object + "' (only 'matrix')");
  if (format != "coordinate")
    return err("unsupported format '" + format +
               "' (only sparse 'coordinate' matrices)");
  if (field != "real" && field != "integer" && field != "pattern" &&
      field != "double")
    return err("unsupported field '" + field +
               "' (supported: real, integer, pattern)");
  if (symmetry != "general" && symmetry != "symmetric")
    return err("unsupported symmetry '" + symmetry +
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
      return err("malformed size line: expected 'rows columns entries'");
    if (!parseInt(tok[0], numRows) || !parseInt(tok[1], numCols) ||
        !parseInt(tok[2], declared))
      return err("malformed size line: expected three integers");
    if (numRows < 0 || numCols < 0 || declared < 0)
      return err("negative size in size line");
    if (numRows > kMaxReaderDimension || numCols > kMaxReaderDimension)
      return err("matrix dimensions " + std::to_string(numRows) + "x" +
                 std::to_string(numCols) + " exceed the supported maximum " +
                 std::to_string(kMaxReaderDimension));
    if (symmetric && numRows != numCols)
      return err("symmetric matrix must be square, got " +
                 std::to_string(numRows) + "x" + std::to_string(numCols));
    haveSize = true;
    break;
  }
  if (!haveSize)
    return err("file ends before the size line");

  std::vector<int64_t> rows, cols;
  std::vector<float> vals;
  // Never trust the declared count for allocation beyond what the file can
  // hold (at least 4 bytes per entry).
  size_t reserve = static_cast<size_t>(
      std::min<int64_t>(declared, static_cast<int64_t>(text->size() / 4 + 1)));
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
      return err("more entries than the " + std::to_string(declared) +
                 " declared in the size line");
    n = tokenize(line, tok, expectTokens);
    if (n != expectTokens)
      return err("expected " + std::to_string(expectTokens) +
                 " fields (row column" + (pattern ? "" : " value") +
                 ") in entry " + std::to_string(count + 1) + ", found " +
                 std::to_string(n > expectTokens ? expectTokens + 1 : n) +
                 (n > expectTokens ? " or more" : ""));
    int64_t r, c;
    if (!parseInt(tok[0], r))
      return err("malformed row index " + quoted(tok[0]));
    if (!parseInt(tok[1], c))
      return err("malformed column index " + quoted(tok[1]));
    if (r < 1 || r > numRows)
      return err("row index " + std::to_string(r) + " is out of range [1, " +
                 std::to_string(numRows) + "]");
    if (c < 1 || c > numCols)
      return err("column index " + std::to_string(c) + " is out of range [1, " +
                 std::to_string(numCols) + "]");
    float v = 1.0f;
    if (!pattern) {
      if (integer) {
        int64_t iv;
        if (!parseInt(tok[2], iv))
          return err("malformed integer value " + quoted(tok[2]));
        v = static_cast<float>(iv);
      } else {
        double dv;
        if (!parseReal(tok[2], dv))
          return err("malformed real value " + quoted(tok[2]));
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
    return err("file ends after " + std::to_string(count) + " of " +
               std::to_string(declared) + " declared entries (truncated?)");

  Expected<CsrGraph> g =
      fromCoo(numRows, numCols, rows, cols, vals, Duplicates::Sum);
  if (!g)
    return g.status().withContext(path);
  g->name = path;
  return g;
}

Expected<CsrGraph>
gnnc::graph::readSnapEdgeList(const std::string &path,
                              const SnapOptions &options,
                              std::vector<int64_t> *originalIds) {
  Expected<std::string> text = readTextFile(path);
  if (!text)
    return text.status();
  LineReader lines(*text);
  auto err = [&](const std::string &what) {
    return Status::error(path + ":" + std::to_string(lines.lineNumber()) +
                         ": " + what);
  };
  if (options.numNodes < 0 || options.numNodes > kMaxReaderDimension)
    return Status::error(path + ": invalid node count option " +
                         std::to_string(options.numNodes));

  std::vector<int64_t> src, dst;
  std::vector<float> weights;
  int64_t maxId = -1;
  std::string_view line;
  std::string_view tok[4];
  while (lines.next(line)) {
    size_t i = 0;
    while (i < line.size() && isSpace(line[i]))
      ++i;
    if (i == line.size() || line[i] == '#' || line[i] == '%')
      continue;
    size_t n = tokenize(line, tok, 3);
    if (n < 2)
      return err("expected 'source destination [weight]', found one field");
    if (n > 3)
      return err("expected 'source destination [weight]', found more than "
                 "three fields");
    int64_t u, v;
    if (!parseInt(tok[0], u))
      return err("malformed node id " + quoted(tok[0]));
    if (!parseInt(tok[1], v))
      return err("malformed node id " + quoted(tok[1]));
    if (u < 0 || v < 0)
      return err("negative node id " + std::to_string(u < 0 ? u : v));
    if (options.numNodes > 0 &&
        (u >= options.numNodes || v >= options.numNodes))
      return err("node id " + std::to_string(u >= options.numNodes ? u : v) +
                 " is out of range [0, " + std::to_string(options.numNodes) +
                 ")");
    if (!options.compactIds &&
        (u >= kMaxReaderDimension || v >= kMaxReaderDimension))
      return err("node id " + std::to_string(std::max(u, v)) +
                 " is too large (use compact ids)");
    float w = 1.0f;
    if (n == 3) {
      double dw;
      if (!parseReal(tok[2], dw))
        return err("malformed weight " + quoted(tok[2]));
      w = static_cast<float>(dw);
    } else if (options.useWeights) {
      return err("missing weight (third field)");
    }
    if (options.removeSelfLoops && u == v)
      continue;
    src.push_back(u);
    dst.push_back(v);
    if (options.useWeights)
      weights.push_back(w);
    maxId = std::max(maxId, std::max(u, v));
  }

  int64_t numNodes = options.numNodes > 0 ? options.numNodes : maxId + 1;
  if (options.compactIds) {
    std::vector<int64_t> ids(src);
    ids.insert(ids.end(), dst.begin(), dst.end());
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    auto index = [&](int64_t id) {
      return static_cast<int64_t>(std::lower_bound(ids.begin(), ids.end(), id) -
                                  ids.begin());
    };
    for (int64_t &u : src)
      u = index(u);
    for (int64_t &v : dst)
      v = index(v);
    if (options.numNodes == 0)
      numNodes = static_cast<int64_t>(ids.size());
    if (originalIds)
      *originalIds = std::move(ids);
  }
  if (options.symmetrize) {
    size_t m = src.size();
    for (size_t e = 0; e < m; ++e) {
      if (src[e] == dst[e])
        continue;
      src.push_back(dst[e]);
      dst.push_back(src[e]);
      if (options.useWeights)
        weights.push_back(weights[e]);
    }
  }
  Expected<CsrGraph> g =
      fromCoo(numNodes, numNodes, src, dst, weights, Duplicates::Sum);
  if (!g)
    return g.status().withContext(path);
  g->name = path;
  return g;
}
