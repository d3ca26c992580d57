//===- Readers.cpp - Choosing a graph reader; shared reader helpers -------===//

#include "gnnc/graph/Readers.h"

#include "ReaderSupport.h"

#include <zlib.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

using namespace gnnc;
using namespace gnnc::graph;
using namespace gnnc::graph::detail;

//===----------------------------------------------------------------------===//
// Files and names
//===----------------------------------------------------------------------===//

Expected<std::vector<uint8_t>>
gnnc::graph::detail::readBinaryFile(const std::string &path) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> bytes;
  if (std::fseek(file, 0, SEEK_END) == 0) {
    long size = std::ftell(file);
    if (size > 0)
      bytes.reserve(static_cast<size_t>(size));
    std::rewind(file);
  }
  std::vector<uint8_t> chunk(1 << 16);
  while (true) {
    size_t n = std::fread(chunk.data(), 1, chunk.size(), file);
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + n);
    if (n < chunk.size())
      break;
  }
  bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed)
    return Status::error(path + ": read error");
  return bytes;
}

Expected<std::string>
gnnc::graph::detail::readTextFile(const std::string &path) {
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

bool gnnc::graph::detail::endsWith(const std::string &s,
                                   const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string gnnc::graph::detail::withoutSuffix(const std::string &s,
                                               const std::string &suffix) {
  return endsWith(s, suffix) ? s.substr(0, s.size() - suffix.size()) : s;
}

std::string gnnc::graph::detail::lower(std::string_view s) {
  std::string out(s);
  for (char &c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

//===----------------------------------------------------------------------===//
// Binary formats
//===----------------------------------------------------------------------===//

std::string
gnnc::graph::detail::shapeString(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

//===----------------------------------------------------------------------===//
// Text formats
//===----------------------------------------------------------------------===//

bool LineReader::next(std::string_view &line) {
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

Status LineReader::error(const std::string &what) const {
  return Status::error(path + ":" + std::to_string(lineNo) + ": " + what);
}

bool gnnc::graph::detail::isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

bool gnnc::graph::detail::isBlank(std::string_view line) {
  for (char c : line)
    if (!isSpace(c))
      return false;
  return true;
}

size_t gnnc::graph::detail::tokenize(std::string_view line,
                                     std::string_view *tokens,
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

bool gnnc::graph::detail::parseInt(std::string_view token, int64_t &value) {
  if (!token.empty() && token[0] == '+')
    token.remove_prefix(1);
  const char *end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(token.data(), end, value);
  return ec == std::errc() && ptr == end && !token.empty();
}

bool gnnc::graph::detail::parseReal(std::string_view token, double &value) {
  if (!token.empty() && token[0] == '+')
    token.remove_prefix(1);
  const char *end = token.data() + token.size();
  auto [ptr, ec] =
      std::from_chars(token.data(), end, value, std::chars_format::general);
  return ec == std::errc() && ptr == end && !token.empty() &&
         std::isfinite(value);
}

std::string gnnc::graph::detail::quoted(std::string_view token) {
  std::string s(token.substr(0, 40));
  if (token.size() > 40)
    s += "...";
  return "'" + s + "'";
}

Expected<CsrGraph> gnnc::graph::detail::csrFromEntries(
    const std::string &path, int64_t numRows, int64_t numCols,
    const std::vector<int64_t> &rows, const std::vector<int64_t> &cols,
    const std::vector<float> &vals) {
  Expected<CsrGraph> g =
      fromCoo(numRows, numCols, rows, cols, vals, Duplicates::Sum);
  if (!g)
    return g.status().withContext(path);
  g->name = path;
  return g;
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

Expected<CsrGraph> gnnc::graph::readGraph(const std::string &path) {
  std::string lowerPath = lower(path);
  std::string base = withoutSuffix(lowerPath, ".gz");
  if (endsWith(base, ".mtx"))
    return readMatrixMarket(path);
  if (endsWith(lowerPath, ".npz"))
    return readNpzCsr(path);
  for (const char *ext : {".txt", ".el", ".edges", ".snap", ".tsv"})
    if (endsWith(base, ext))
      return readSnapEdgeList(path);
  return Status::error(path + ": cannot tell the graph format from the "
                              "extension (expected .mtx, .mtx.gz, .npz, "
                              ".txt, .el, .edges or .snap)");
}
