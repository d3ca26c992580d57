//===- Npy.cpp - NumPy .npy arrays ----------------------------------------===//
//
// A parser for .npy headers (the Python dict literal of format versions 1, 2
// and 3) and the element conversions of NpyArray.
//
//===----------------------------------------------------------------------===//

#include "gnnc/graph/Readers.h"
#include "gnnc/runtime/Float16.h"

#include "ReaderSupport.h"

#include <cstring>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

using namespace gnnc;
using namespace gnnc::graph;
using namespace gnnc::graph::detail;

namespace {

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
        return end();
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
        return end();
      return Status::error("malformed header: expected ',' or '}' at offset " +
                           std::to_string(pos));
    }
  }

private:
  /// After the dict: only the padding numpy writes (spaces, a newline).
  Status end() {
    skipSpace();
    if (pos != text.size()) {
      std::string_view rest = text.substr(pos, 20);
      while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\n'))
        rest.remove_suffix(1);
      return Status::error("malformed header: '" + std::string(rest) +
                           "' after the closing '}' (only spaces and a "
                           "newline may pad a header)");
    }
    return Status::ok();
  }

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
  uint8_t major = bytes[6], minor = bytes[7];
  size_t headerLen, headerStart;
  // numpy writes (and reads) versions 1.0, 2.0 and 3.0 only.
  if ((major < 1 || major > 3) || minor != 0)
    return err("unsupported .npy format version " + std::to_string(major) +
               "." + std::to_string(minor) +
               " (numpy's versions are 1.0, 2.0 and 3.0)");
  if (major == 1) {
    headerLen = rd16(bytes + 8);
    headerStart = 10;
  } else {
    if (size < 12)
      return err("truncated .npy header");
    headerLen = rd32(bytes + 8);
    headerStart = 12;
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
  // Exactly the three keys numpy writes, each once (numpy refuses other
  // keys; a Python dict literal would keep the last of two).
  for (const auto &[key, value] : items) {
    const HeaderParser::Value **slot = key == "descr"           ? &descr
                                       : key == "fortran_order" ? &fortran
                                       : key == "shape"         ? &shape
                                                                : nullptr;
    if (!slot)
      return err("header has the unknown key '" + key +
                 "' (a .npy header holds exactly 'descr', 'fortran_order' "
                 "and 'shape')");
    if (*slot)
      return err("header gives '" + key + "' twice");
    *slot = &value;
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
  // (count <= 2^62 and items of at most 8 bytes: the product may not fit.)
  uint64_t expected = 0;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(array.itemSize()),
                             &expected))
    return err("shape " + shapeString(array.shape) + " is too large");
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
  return guardAllocation<NpyArray>(path, [&]() -> Expected<NpyArray> {
    Expected<std::vector<uint8_t>> bytes = readBinaryFile(path);
    if (!bytes)
      return bytes.status();
    return parseNpy(bytes->data(), bytes->size(), path);
  });
}
