//===- Npz.cpp - NumPy .npy / .npz readers --------------------------------===//
//
// A small ZIP reader (end of central directory, central directory, local
// headers, zip64 extensions), raw DEFLATE through zlib, CRC-32 checks, and a
// parser for .npy headers.
//
//===----------------------------------------------------------------------===//

#include "gnnc/graph/Readers.h"
#include "gnnc/runtime/Float16.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <limits>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

Expected<std::vector<uint8_t>> readBinaryFile(const std::string &path) {
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

uint16_t rd16(const uint8_t *p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t rd32(const uint8_t *p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) |
         (uint32_t(p[3]) << 24);
}
uint64_t rd64(const uint8_t *p) {
  return uint64_t(rd32(p)) | (uint64_t(rd32(p + 4)) << 32);
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", v);
  return buf;
}

constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr uint32_t kCentralHeaderSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

uint32_t crc32Of(const uint8_t *data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (size > 0) {
    uInt n = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    crc = crc32(crc, data, n);
    data += n;
    size -= n;
  }
  return static_cast<uint32_t>(crc);
}

/// Inflates raw DEFLATE data into exactly `out.size()` bytes.
Status inflateRaw(const uint8_t *in, size_t inSize, std::vector<uint8_t> &out) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
    return Status::error("cannot initialize zlib inflate");
  size_t inPos = 0, outPos = 0;
  int ret = Z_OK;
  while (true) {
    if (zs.avail_in == 0 && inPos < inSize) {
      size_t n = std::min<size_t>(inSize - inPos, 1u << 30);
      zs.next_in = const_cast<Bytef *>(in + inPos);
      zs.avail_in = static_cast<uInt>(n);
      inPos += n;
    }
    if (zs.avail_out == 0 && outPos < out.size()) {
      size_t n = std::min<size_t>(out.size() - outPos, 1u << 30);
      zs.next_out = out.data() + outPos;
      zs.avail_out = static_cast<uInt>(n);
      outPos += n;
    }
    uInt inBefore = zs.avail_in, outBefore = zs.avail_out;
    ret = inflate(&zs, Z_NO_FLUSH);
    if (ret == Z_STREAM_END)
      break;
    if (ret == Z_NEED_DICT || ret == Z_DATA_ERROR || ret == Z_MEM_ERROR ||
        ret == Z_STREAM_ERROR) {
      std::string msg = zs.msg ? zs.msg : "error " + std::to_string(ret);
      inflateEnd(&zs);
      return Status::error("corrupt DEFLATE data: " + msg);
    }
    bool progress = zs.avail_in != inBefore || zs.avail_out != outBefore;
    if (!progress) {
      bool inputDone = zs.avail_in == 0 && inPos == inSize;
      bool outputFull = zs.avail_out == 0 && outPos == out.size();
      inflateEnd(&zs);
      if (outputFull && !inputDone)
        return Status::error("decompressed data is larger than the declared " +
                             std::to_string(out.size()) + " bytes");
      if (outputFull)
        return Status::error("DEFLATE stream does not end after the declared " +
                             std::to_string(out.size()) + " bytes");
      return Status::error("compressed data ends early (truncated?)");
    }
  }
  uint64_t produced = zs.total_out;
  inflateEnd(&zs);
  if (produced != out.size())
    return Status::error("decompressed " + std::to_string(produced) +
                         " bytes, expected " + std::to_string(out.size()));
  return Status::ok();
}

/// A tiny parser for the Python dict literal of a .npy header.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  struct Value {
    enum Kind { String, Bool, Tuple, Other } kind = Other;
    std::string str;
    bool boolean = false;
    std::vector<int64_t> tuple;
  };

  Status parse(std::vector<std::pair<std::string, Value>> &items) {
    skipSpace();
    if (!eat('{'))
      return Status::error("header is not a dict literal");
    while (true) {
      skipSpace();
      if (eat('}'))
        return Status::ok();
      std::string key;
      if (!parseString(key))
        return Status::error("malformed header: expected a quoted key at "
                             "offset " +
                             std::to_string(pos));
      skipSpace();
      if (!eat(':'))
        return Status::error("malformed header: expected ':' after '" + key +
                             "'");
      skipSpace();
      Value value;
      GNNC_RETURN_IF_ERROR(parseValue(key, value));
      items.emplace_back(key, std::move(value));
      skipSpace();
      if (eat(','))
        continue;
      if (eat('}'))
        return Status::ok();
      return Status::error("malformed header: expected ',' or '}' at offset " +
                           std::to_string(pos));
    }
  }

private:
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool eat(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool startsWith(std::string_view word) {
    return text.substr(pos, word.size()) == word;
  }
  bool parseString(std::string &out) {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string_view::npos)
      return false;
    out = std::string(text.substr(pos, end - pos));
    pos = end + 1;
    return true;
  }
  Status parseValue(const std::string &key, Value &value) {
    if (pos < text.size() && (text[pos] == '\'' || text[pos] == '"')) {
      value.kind = Value::String;
      if (!parseString(value.str))
        return Status::error("malformed header: unterminated string for '" +
                             key + "'");
      return Status::ok();
    }
    if (startsWith("True") || startsWith("False")) {
      value.kind = Value::Bool;
      value.boolean = startsWith("True");
      pos += value.boolean ? 4 : 5;
      return Status::ok();
    }
    if (eat('(')) {
      value.kind = Value::Tuple;
      while (true) {
        skipSpace();
        if (eat(')'))
          return Status::ok();
        size_t start = pos;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
          ++pos;
        if (start == pos || pos - start > 18)
          return Status::error("malformed header: bad dimension in '" + key +
                               "'");
        value.tuple.push_back(
            std::stoll(std::string(text.substr(start, pos - start))));
        skipSpace();
        if (eat(','))
          continue;
        if (eat(')'))
          return Status::ok();
        return Status::error("malformed header: bad tuple for '" + key + "'");
      }
    }
    if (pos < text.size() && text[pos] == '[')
      return Status::error("structured dtypes (field lists) are unsupported");
    return Status::error("malformed header: unexpected value for '" + key +
                         "'");
  }

  std::string_view text;
  size_t pos = 0;
};

/// Normalizes a dtype string to "<xN" or "|xN"; fails for unsupported ones.
Expected<std::string> checkDtype(const std::string &descr) {
  if (descr.size() < 2)
    return Status::error("malformed dtype '" + descr + "'");
  char order = descr[0];
  std::string rest = descr.substr(1);
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return Status::error("malformed dtype '" + descr + "'");
  char kind = rest[0];
  if (kind == 'O')
    return Status::error("object arrays (pickled Python objects) are "
                         "unsupported");
  if (kind == 'U' || kind == 'S' || kind == 'a')
    return Status::error("string arrays (dtype '" + descr +
                         "') are unsupported");
  static const char *const supported[] = {"b1", "i1", "u1", "i2", "u2", "i4",
                                          "u4", "i8", "u8", "f2", "f4", "f8"};
  bool ok = false;
  for (const char *s : supported)
    ok |= rest == s;
  if (!ok)
    return Status::error("unsupported dtype '" + descr +
                         "' (supported: bool, int8/16/32/64, uint8/16/32/64, "
                         "float16/32/64)");
  bool oneByte = rest[1] == '1';
  if (order == '>' && !oneByte)
    return Status::error("big-endian dtype '" + descr + "' is unsupported");
  return std::string(oneByte ? "|" : "<") + rest;
}

template <typename T> T load(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

} // namespace

//===----------------------------------------------------------------------===//
// NpyArray
//===----------------------------------------------------------------------===//

int64_t NpyArray::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

size_t NpyArray::itemSize() const {
  return dtype.size() >= 3 ? static_cast<size_t>(dtype[2] - '0') : 0;
}

Expected<std::vector<int64_t>> NpyArray::asInt64() const {
  int64_t n = numElements();
  std::vector<int64_t> out(static_cast<size_t>(n));
  const uint8_t *p = data.data();
  char k = kind();
  size_t size = itemSize();
  if (k == 'f')
    return Status::error("dtype '" + dtype + "' is not an integer type");
  for (int64_t i = 0; i < n; ++i, p += size) {
    int64_t v = 0;
    if (k == 'b' || (k == 'u' && size == 1))
      v = *p;
    else if (k == 'i' && size == 1)
      v = static_cast<int8_t>(*p);
    else if (k == 'i' && size == 2)
      v = load<int16_t>(p);
    else if (k == 'u' && size == 2)
      v = load<uint16_t>(p);
    else if (k == 'i' && size == 4)
      v = load<int32_t>(p);
    else if (k == 'u' && size == 4)
      v = load<uint32_t>(p);
    else if (k == 'i' && size == 8)
      v = load<int64_t>(p);
    else if (k == 'u' && size == 8) {
      uint64_t u = load<uint64_t>(p);
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return Status::error("uint64 value " + std::to_string(u) +
                             " at position " + std::to_string(i) +
                             " does not fit int64");
      v = static_cast<int64_t>(u);
    } else {
      return Status::error("dtype '" + dtype + "' is not an integer type");
    }
    out[i] = v;
  }
  return out;
}

Expected<std::vector<double>> NpyArray::asFloat64() const {
  int64_t n = numElements();
  std::vector<double> out(static_cast<size_t>(n));
  const uint8_t *p = data.data();
  size_t size = itemSize();
  if (kind() == 'f') {
    for (int64_t i = 0; i < n; ++i, p += size) {
      if (size == 2)
        out[i] = gnnc::halfToFloat(load<uint16_t>(p));
      else if (size == 4)
        out[i] = load<float>(p);
      else
        out[i] = load<double>(p);
    }
    return out;
  }
  Expected<std::vector<int64_t>> ints = asInt64();
  if (!ints)
    return ints.status();
  for (int64_t i = 0; i < n; ++i)
    out[i] = static_cast<double>((*ints)[i]);
  return out;
}

Expected<std::vector<float>> NpyArray::asFloat32() const {
  if (kind() == 'f' && itemSize() == 4) {
    std::vector<float> out(static_cast<size_t>(numElements()));
    if (!out.empty())
      std::memcpy(out.data(), data.data(), out.size() * sizeof(float));
    return out;
  }
  Expected<std::vector<double>> wide = asFloat64();
  if (!wide)
    return wide.status();
  return std::vector<float>(wide->begin(), wide->end());
}

Expected<int64_t> NpyArray::scalarInt64() const {
  if (numElements() != 1)
    return Status::error("expected a scalar, got shape " + shapeString(shape));
  Expected<std::vector<int64_t>> v = asInt64();
  if (!v)
    return v.status();
  return (*v)[0];
}

Expected<NpyArray> gnnc::graph::parseNpy(const uint8_t *bytes, size_t size,
                                         const std::string &what) {
  auto err = [&](const std::string &msg) {
    return Status::error(what + ": " + msg);
  };
  static const uint8_t magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (size < 10 || std::memcmp(bytes, magic, 6) != 0)
    return err("not a .npy array (bad magic)");
  uint8_t major = bytes[6];
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = rd16(bytes + 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return err("truncated .npy header");
    headerLen = rd32(bytes + 8);
    headerStart = 12;
  } else {
    return err("unsupported .npy format version " + std::to_string(major));
  }
  if (headerLen > size - headerStart)
    return err("truncated .npy header (" + std::to_string(headerLen) +
               " header bytes declared, " + std::to_string(size - headerStart) +
               " present)");
  std::string_view header(reinterpret_cast<const char *>(bytes) + headerStart,
                          headerLen);
  std::vector<std::pair<std::string, HeaderParser::Value>> items;
  Status parsed = HeaderParser(header).parse(items);
  if (!parsed)
    return parsed.withContext(what);
  const HeaderParser::Value *descr = nullptr, *fortran = nullptr,
                            *shape = nullptr;
  for (const auto &[key, value] : items) {
    if (key == "descr")
      descr = &value;
    else if (key == "fortran_order")
      fortran = &value;
    else if (key == "shape")
      shape = &value;
  }
  if (!descr || descr->kind != HeaderParser::Value::String)
    return err("header has no 'descr' string");
  if (!fortran || fortran->kind != HeaderParser::Value::Bool)
    return err("header has no 'fortran_order' flag");
  if (!shape || shape->kind != HeaderParser::Value::Tuple)
    return err("header has no 'shape' tuple");
  Expected<std::string> dtype = checkDtype(descr->str);
  if (!dtype)
    return dtype.status().withContext(what);
  if (fortran->boolean && shape->tuple.size() > 1)
    return err("Fortran-order arrays are unsupported");

  NpyArray array;
  array.dtype = *dtype;
  array.shape = shape->tuple;
  uint64_t count = 1;
  for (int64_t d : array.shape) {
    if (d < 0)
      return err("negative dimension in shape");
    if (d != 0 && count > (uint64_t(1) << 62) / static_cast<uint64_t>(d))
      return err("shape " + shapeString(array.shape) + " is too large");
    count *= static_cast<uint64_t>(d);
  }
  uint64_t expected = count * array.itemSize();
  size_t dataStart = headerStart + headerLen;
  uint64_t present = size - dataStart;
  if (present != expected)
    return err("array data has " + std::to_string(present) +
               " bytes, expected " + std::to_string(expected) + " for shape " +
               shapeString(array.shape) + " of '" + array.dtype + "'" +
               (present < expected ? " (truncated?)" : ""));
  array.data.assign(bytes + dataStart, bytes + size);
  return array;
}

Expected<NpyArray> gnnc::graph::readNpy(const std::string &path) {
  Expected<std::vector<uint8_t>> bytes = readBinaryFile(path);
  if (!bytes)
    return bytes.status();
  return parseNpy(bytes->data(), bytes->size(), path);
}

//===----------------------------------------------------------------------===//
// NpzFile
//===----------------------------------------------------------------------===//

std::vector<std::string> NpzFile::names() const {
  std::vector<std::string> out;
  for (const Entry &e : entries_)
    out.push_back(e.name);
  return out;
}

const NpzFile::Entry *NpzFile::find(const std::string &name) const {
  std::string key =
      endsWith(name, ".npy") ? name.substr(0, name.size() - 4) : name;
  for (const Entry &e : entries_)
    if (e.name == key)
      return &e;
  return nullptr;
}

bool NpzFile::has(const std::string &name) const {
  return find(name) != nullptr;
}

Expected<NpyArray> NpzFile::get(const std::string &name) const {
  const Entry *entry = find(name);
  if (!entry) {
    std::string list;
    for (const Entry &e : entries_)
      list += (list.empty() ? "" : ", ") + e.name;
    return Status::error(path_ + ": missing member '" + name +
                         "' (members: " + (list.empty() ? "none" : list) + ")");
  }
  std::string what = path_ + ": member '" + entry->name + "'";
  auto err = [&](const std::string &msg) {
    return Status::error(what + ": " + msg);
  };
  const uint8_t *in = bytes_.data() + entry->dataOffset;
  std::vector<uint8_t> out;
  if (entry->method == 0) {
    if (entry->compressedSize != entry->uncompressedSize)
      return err("stored member has compressed size " +
                 std::to_string(entry->compressedSize) +
                 " != uncompressed size " +
                 std::to_string(entry->uncompressedSize));
    out.assign(in, in + entry->compressedSize);
  } else if (entry->method == 8) {
    // DEFLATE cannot expand more than ~1032:1; a larger claim is corrupt and
    // must not drive the allocation.
    if (entry->uncompressedSize > entry->compressedSize * 1040 + 1024)
      return err("implausible uncompressed size " +
                 std::to_string(entry->uncompressedSize) + " for " +
                 std::to_string(entry->compressedSize) + " compressed bytes");
    out.resize(entry->uncompressedSize);
    Status s = inflateRaw(in, entry->compressedSize, out);
    if (!s)
      return s.withContext(what);
  } else {
    return err("unsupported ZIP compression method " +
               std::to_string(entry->method) + " (only stored and DEFLATE)");
  }
  uint32_t crc = crc32Of(out.data(), out.size());
  if (crc != entry->crc32)
    return err("CRC-32 mismatch (stored " + hex32(entry->crc32) +
               ", computed " + hex32(crc) + "): member data is corrupt");
  return parseNpy(out.data(), out.size(), what);
}

Expected<NpzFile> gnnc::graph::readNpz(const std::string &path) {
  Expected<std::vector<uint8_t>> read = readBinaryFile(path);
  if (!read)
    return read.status();
  NpzFile npz;
  npz.path_ = path;
  npz.bytes_ = read.take();
  const std::vector<uint8_t> &b = npz.bytes_;
  const uint8_t *p = b.data();
  size_t size = b.size();
  auto err = [&](const std::string &msg) {
    return Status::error(path + ": " + msg);
  };
  bool looksLikeZip = size >= 4 && rd32(p) == kLocalHeaderSig;
  if (size < 22)
    return err(
        looksLikeZip
            ? "ZIP archive is truncated (" + std::to_string(size) + " bytes)"
            : "not a ZIP/.npz archive (" + std::to_string(size) + " bytes)");

  // Find the end of central directory record (the comment is at most 64 KiB).
  size_t eocd = SIZE_MAX;
  size_t lowest = size >= 22 + 65535 ? size - 22 - 65535 : 0;
  for (size_t i = size - 22 + 1; i-- > lowest;) {
    if (rd32(p + i) == kEndSig && i + 22 + rd16(p + i + 20) == size) {
      eocd = i;
      break;
    }
  }
  if (eocd == SIZE_MAX)
    return err(looksLikeZip
                   ? "ZIP end of central directory not found: the archive is "
                     "truncated or corrupt"
                   : "not a ZIP/.npz archive (no end of central directory)");
  uint64_t numEntries = rd16(p + eocd + 10);
  uint64_t cdSize = rd32(p + eocd + 12);
  uint64_t cdOffset = rd32(p + eocd + 16);
  if (numEntries == 0xffff || cdSize == 0xffffffffu ||
      cdOffset == 0xffffffffu) {
    if (eocd < 20 || rd32(p + eocd - 20) != kZip64LocatorSig)
      return err("zip64 end of central directory locator missing");
    uint64_t z64 = rd64(p + eocd - 20 + 8);
    if (z64 > eocd - 20 || eocd - 20 - z64 < 56 ||
        rd32(p + z64) != kZip64EndSig)
      return err("corrupt zip64 end of central directory record");
    numEntries = rd64(p + z64 + 32);
    cdSize = rd64(p + z64 + 40);
    cdOffset = rd64(p + z64 + 48);
  }
  if (cdOffset > size || cdSize > size - cdOffset)
    return err("central directory (offset " + std::to_string(cdOffset) + ", " +
               std::to_string(cdSize) +
               " bytes) lies outside the file: truncated or corrupt archive");

  uint64_t pos = cdOffset, cdEnd = cdOffset + cdSize;
  for (uint64_t i = 0; i < numEntries; ++i) {
    std::string where = "central directory entry " + std::to_string(i);
    if (cdEnd - pos < 46 || rd32(p + pos) != kCentralHeaderSig)
      return err(where + " is corrupt");
    const uint8_t *h = p + pos;
    uint16_t flags = rd16(h + 8);
    NpzFile::Entry entry;
    entry.method = rd16(h + 10);
    entry.crc32 = rd32(h + 16);
    uint64_t csize = rd32(h + 20), usize = rd32(h + 24);
    uint64_t nameLen = rd16(h + 28), extraLen = rd16(h + 30),
             commentLen = rd16(h + 32);
    uint64_t localOffset = rd32(h + 42);
    if (cdEnd - pos < 46 + nameLen + extraLen + commentLen)
      return err(where + " is corrupt (fields overrun the directory)");
    std::string name(reinterpret_cast<const char *>(h + 46), nameLen);
    // Zip64 extended information: only the fields saturated above.
    const uint8_t *extra = h + 46 + nameLen;
    for (uint64_t x = 0; x + 4 <= extraLen;) {
      uint16_t id = rd16(extra + x), len = rd16(extra + x + 2);
      if (x + 4 + len > extraLen)
        break;
      if (id == 0x0001) {
        const uint8_t *f = extra + x + 4;
        uint64_t left = len;
        auto take = [&](uint64_t &field) {
          if (field != 0xffffffffu || left < 8)
            return;
          field = rd64(f);
          f += 8;
          left -= 8;
        };
        take(usize);
        take(csize);
        take(localOffset);
      }
      x += 4 + len;
    }
    pos += 46 + nameLen + extraLen + commentLen;
    if (flags & 1)
      return err("member '" + name + "' is encrypted (unsupported)");
    entry.name =
        endsWith(name, ".npy") ? name.substr(0, name.size() - 4) : name;
    entry.compressedSize = csize;
    entry.uncompressedSize = usize;
    // Local header: its name and extra lengths may differ from the central
    // directory's.
    if (localOffset > size || size - localOffset < 30 ||
        rd32(p + localOffset) != kLocalHeaderSig)
      return err("member '" + entry.name +
                 "': local header is missing or corrupt");
    uint64_t dataOffset = localOffset + 30 + rd16(p + localOffset + 26) +
                          rd16(p + localOffset + 28);
    if (dataOffset > size || csize > size - dataOffset)
      return err("member '" + entry.name + "': data (" + std::to_string(csize) +
                 " bytes) extends past the end of the file (truncated?)");
    entry.dataOffset = dataOffset;
    npz.entries_.push_back(std::move(entry));
  }
  return npz;
}

//===----------------------------------------------------------------------===//
// CSR from .npz
//===----------------------------------------------------------------------===//

Expected<CsrGraph> gnnc::graph::readNpzCsr(const std::string &path,
                                           const std::string &prefix,
                                           int64_t numCols) {
  Expected<NpzFile> npz = readNpz(path);
  if (!npz)
    return npz.status();
  auto memberErr = [&](const std::string &member, const std::string &msg) {
    return Status::error(path + ": member '" + prefix + member + "': " + msg);
  };
  auto getIntVector = [&](const std::string &member,
                          std::vector<int64_t> &out) -> Status {
    Expected<NpyArray> a = npz->get(prefix + member);
    if (!a)
      return a.status();
    if (!a->isInteger())
      return memberErr(member,
                       "dtype '" + a->dtype + "' is not an integer type");
    if (a->shape.size() != 1)
      return memberErr(member, "expected a 1-d array, got shape with " +
                                   std::to_string(a->shape.size()) +
                                   " dimensions");
    Expected<std::vector<int64_t>> v = a->asInt64();
    if (!v)
      return v.status().withContext(path + ": member '" + prefix + member +
                                    "'");
    out = v.take();
    return Status::ok();
  };

  CsrGraph g;
  g.name = prefix.empty() ? path : path + ":" + prefix;
  GNNC_RETURN_IF_ERROR(getIntVector("indptr", g.rowPtr));
  GNNC_RETURN_IF_ERROR(getIntVector("indices", g.colIdx));
  if (g.rowPtr.empty())
    return memberErr("indptr", "is empty (expected num_nodes + 1 offsets)");
  g.numRows = static_cast<int64_t>(g.rowPtr.size()) - 1;

  int64_t numNodes = -1;
  if (npz->has(prefix + "num_nodes")) {
    Expected<NpyArray> a = npz->get(prefix + "num_nodes");
    if (!a)
      return a.status();
    Expected<int64_t> n = a->scalarInt64();
    if (!n)
      return n.status().withContext(path + ": member '" + prefix +
                                    "num_nodes'");
    numNodes = *n;
    if (numNodes < 0)
      return memberErr("num_nodes",
                       "is negative (" + std::to_string(numNodes) + ")");
    if (numNodes != g.numRows)
      return memberErr("indptr", "has " + std::to_string(g.rowPtr.size()) +
                                     " entries, expected num_nodes + 1 = " +
                                     std::to_string(numNodes + 1));
  }

  if (g.rowPtr[0] != 0)
    return memberErr("indptr", "first offset is " +
                                   std::to_string(g.rowPtr[0]) +
                                   ", expected 0");
  for (int64_t r = 0; r < g.numRows; ++r)
    if (g.rowPtr[r + 1] < g.rowPtr[r])
      return memberErr("indptr", "not monotone: offset " +
                                     std::to_string(g.rowPtr[r]) +
                                     " at position " + std::to_string(r) +
                                     " > " + std::to_string(g.rowPtr[r + 1]) +
                                     " at position " + std::to_string(r + 1));
  if (g.rowPtr.back() != g.nnz())
    return memberErr("indptr",
                     "last offset " + std::to_string(g.rowPtr.back()) +
                         " does not match the " + std::to_string(g.nnz()) +
                         " entries of 'indices'");

  int64_t maxIndex = -1;
  for (int64_t c : g.colIdx)
    maxIndex = std::max(maxIndex, c);
  if (numNodes >= 0)
    g.numCols = numNodes;
  else if (numCols >= 0)
    g.numCols = numCols;
  else
    g.numCols = std::max(g.numRows, maxIndex + 1);
  for (size_t i = 0; i < g.colIdx.size(); ++i)
    if (g.colIdx[i] < 0 || g.colIdx[i] >= g.numCols)
      return memberErr("indices", "index " + std::to_string(g.colIdx[i]) +
                                      " at position " + std::to_string(i) +
                                      " is out of range [0, " +
                                      std::to_string(g.numCols) + ")");

  for (const char *valueName : {"data", "weight", "weights"}) {
    if (!npz->has(prefix + valueName))
      continue;
    Expected<NpyArray> a = npz->get(prefix + valueName);
    if (!a)
      return a.status();
    if (a->numElements() != g.nnz() || a->shape.size() != 1)
      return memberErr(valueName, "has shape " + shapeString(a->shape) +
                                      ", expected (" + std::to_string(g.nnz()) +
                                      ",) to match 'indices'");
    Expected<std::vector<float>> v = a->asFloat32();
    if (!v)
      return v.status().withContext(path + ": member '" + prefix + valueName +
                                    "'");
    g.values = v.take();
    break;
  }
  Status valid = g.validate();
  if (!valid)
    return valid;
  return g;
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

Expected<CsrGraph> gnnc::graph::readGraph(const std::string &path) {
  std::string lowerPath = path;
  for (char &c : lowerPath)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string base = endsWith(lowerPath, ".gz")
                         ? lowerPath.substr(0, lowerPath.size() - 3)
                         : lowerPath;
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
