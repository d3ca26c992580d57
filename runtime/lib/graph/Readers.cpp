//===- Readers.cpp - Choosing a graph reader; shared reader helpers -------===//

#include "gnnc/graph/Readers.h"

#include "ReaderSupport.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

using namespace gnnc;
using namespace gnnc::graph;
using namespace gnnc::graph::detail;

//===----------------------------------------------------------------------===//
// Files and names
//===----------------------------------------------------------------------===//

Expected<std::vector<uint8_t>>
gnnc::graph::detail::readBinaryFile(const std::string &path) {
  Expected<GraphBudget> budget = GraphBudget::current(path);
  if (!budget)
    return budget.status();
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> bytes;
  if (std::fseek(file, 0, SEEK_END) == 0) {
    long size = std::ftell(file);
    std::string over =
        size > 0 ? budget->checkBytes(static_cast<uint64_t>(size), "the file")
                 : "";
    if (!over.empty()) {
      std::fclose(file);
      return Status::error(path + ": " + over);
    }
    if (size > 0)
      bytes.reserve(static_cast<size_t>(size));
    std::rewind(file);
  }
  // (A pipe has no size: its bytes count against the budget as they come.)
  std::vector<uint8_t> chunk(1 << 16);
  while (true) {
    size_t n = std::fread(chunk.data(), 1, chunk.size(), file);
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + n);
    std::string over = budget->checkPart(bytes.size(), "the file");
    if (!over.empty()) {
      std::fclose(file);
      return Status::error(path + ": " + over);
    }
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
gnnc::graph::detail::decodeText(const std::string &path,
                                std::string_view contents) {
  auto isGzipMagic = [&](size_t at) {
    return contents.size() - at >= 2 &&
           static_cast<uint8_t>(contents[at]) == 0x1f &&
           static_cast<uint8_t>(contents[at + 1]) == 0x8b;
  };
  if (!isGzipMagic(0))
    return std::string(contents);
  Expected<GraphBudget> budget = GraphBudget::current(path);
  if (!budget)
    return budget.status();
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  // 16 + MAX_WBITS: gzip members only (header and CRC checked).
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
    return Status::error(path + ": cannot initialize zlib");
  const auto *base = reinterpret_cast<const Bytef *>(contents.data());
  size_t offset = 0;
  std::string text;
  // (Output in chunks of up to 1 MiB: small streams need no more.)
  std::vector<char> chunk(
      std::clamp<size_t>(contents.size() * 16, 4096, size_t(1) << 20));
  auto fail = [&](const std::string &what) {
    inflateEnd(&zs);
    return Status::error(path + ": " + what);
  };
  while (true) {
    zs.next_in = const_cast<Bytef *>(base + offset);
    zs.avail_in =
        static_cast<uInt>(std::min<size_t>(contents.size() - offset, 1u << 30));
    zs.next_out = reinterpret_cast<Bytef *>(chunk.data());
    zs.avail_out = static_cast<uInt>(chunk.size());
    int ret = inflate(&zs, Z_NO_FLUSH);
    size_t consumed = static_cast<size_t>(zs.next_in - (base + offset));
    size_t produced = chunk.size() - zs.avail_out;
    offset += consumed;
    text.append(chunk.data(), produced);
    std::string over = budget->checkPart(text.size(), "the decompressed text");
    if (!over.empty())
      return fail(over);
    if (ret == Z_STREAM_END) {
      if (offset == contents.size())
        break;
      // Concatenated gzip files are one stream of members; anything else
      // after the last member is not gzip data.
      if (!isGzipMagic(offset))
        return fail(std::to_string(contents.size() - offset) +
                    " bytes of trailing data after the end of the gzip "
                    "stream (at byte " +
                    std::to_string(offset) +
                    "): only another gzip member may follow one");
      if (inflateReset(&zs) != Z_OK)
        return fail("cannot reset zlib");
      continue;
    }
    if (ret == Z_OK)
      continue;
    if (ret == Z_BUF_ERROR && consumed == 0 && produced == 0 &&
        offset == contents.size())
      return fail("gzip data ends in the middle of a stream (file "
                  "truncated?)");
    return fail(std::string("corrupt gzip data: ") +
                (zs.msg ? zs.msg : "zlib error " + std::to_string(ret)));
  }
  inflateEnd(&zs);
  return text;
}

Expected<std::string>
gnnc::graph::detail::readTextFile(const std::string &path) {
  Expected<std::vector<uint8_t>> bytes = readBinaryFile(path);
  if (!bytes)
    return bytes.status();
  return decodeText(
      path, std::string_view(reinterpret_cast<const char *>(bytes->data()),
                             bytes->size()));
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

Expected<int64_t> gnnc::graph::readerMemoryBudget() {
  const char *env = std::getenv("GNNC_GRAPH_MEMORY_LIMIT");
  if (!env || !*env)
    return kDefaultReaderMemoryBudget;
  std::string_view text(env);
  auto bad = [&] {
    return Status::error("GNNC_GRAPH_MEMORY_LIMIT='" + std::string(text) +
                         "': expected a positive number of bytes, optionally "
                         "with the suffix K, M, G or T (e.g. 64G)");
  };
  int shift = 0;
  switch (text.back()) {
  case 'K':
  case 'k':
    shift = 10;
    break;
  case 'M':
  case 'm':
    shift = 20;
    break;
  case 'G':
  case 'g':
    shift = 30;
    break;
  case 'T':
  case 't':
    shift = 40;
    break;
  default:
    break;
  }
  if (shift)
    text.remove_suffix(1);
  int64_t value = 0;
  auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
      value <= 0 || value > (int64_t(1) << (62 - shift)))
    return bad();
  return value << shift;
}

std::string gnnc::graph::detail::formatBytes(double bytes) {
  char buf[64];
  const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%.0f bytes", bytes);
    return buf;
  }
  int unit = -1;
  while (bytes >= 1024 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  std::snprintf(buf, sizeof(buf), "%.1f %s", bytes, units[unit]);
  return buf;
}

Expected<GraphBudget> GraphBudget::current(const std::string &path) {
  Expected<int64_t> bytes = readerMemoryBudget();
  if (!bytes)
    return bytes.status().withContext(path);
  return GraphBudget(*bytes);
}

int64_t GraphBudget::estimate(int64_t rows, int64_t cols, int64_t entries) {
  const int64_t most = std::numeric_limits<int64_t>::max();
  int64_t total = 0;
  for (auto [count, bytes] : {std::pair{rows, kReaderBytesPerRow},
                              std::pair{cols, kReaderBytesPerColumn},
                              std::pair{entries, kReaderBytesPerEntry}}) {
    int64_t part;
    if (count < 0 || __builtin_mul_overflow(count, bytes, &part) ||
        __builtin_add_overflow(total, part, &total))
      return most;
  }
  return total;
}

std::string GraphBudget::over() const {
  return "over the readers' memory budget of " +
         formatBytes(static_cast<double>(bytes_)) +
         " (GNNC_GRAPH_MEMORY_LIMIT sets it)";
}

std::string GraphBudget::check(int64_t rows, int64_t cols, int64_t entries,
                               const std::string &what) const {
  int64_t need = estimate(rows, cols, entries);
  if (need <= bytes_)
    return "";
  return "a " + std::to_string(rows) + " x " + std::to_string(cols) + " " +
         what + " with " + std::to_string(entries) + " entries needs about " +
         formatBytes(static_cast<double>(need)) + ", " + over();
}

std::string GraphBudget::checkBytes(uint64_t size,
                                    const std::string &what) const {
  if (size <= static_cast<uint64_t>(bytes_))
    return "";
  return what + " is " + formatBytes(static_cast<double>(size)) + ", " + over();
}

std::string GraphBudget::checkPart(uint64_t size,
                                   const std::string &what) const {
  if (size <= static_cast<uint64_t>(bytes_))
    return "";
  return what + " is larger than the readers' memory budget of " +
         formatBytes(static_cast<double>(bytes_)) +
         " (GNNC_GRAPH_MEMORY_LIMIT sets it)";
}

Status gnnc::graph::detail::outOfMemory(const std::string &path) {
  return Status::error(path + ": out of memory while reading it (the graph "
                              "needs more memory than this machine gives the "
                              "process; GNNC_GRAPH_MEMORY_LIMIT sets the "
                              "readers' budget)");
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

Expected<std::vector<int64_t>>
gnnc::graph::detail::npzIntegers(const std::string &path, const NpzFile &npz,
                                 const std::string &member) {
  Expected<NpyArray> a = npz.get(member);
  if (!a)
    return a.status();
  const std::string where = path + ": member '" + member + "': ";
  if (!a->isInteger())
    return Status::error(where + "dtype '" + a->dtype +
                         "' is not an integer type");
  if (a->shape.size() != 1)
    return Status::error(where + "expected a 1-d array, got shape " +
                         shapeString(a->shape));
  Expected<std::vector<int64_t>> v = a->asInt64();
  if (!v)
    return v.status().withContext(path + ": member '" + member + "'");
  return v;
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
