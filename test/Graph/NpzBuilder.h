//===- NpzBuilder.h - .npy and .npz images built in tests -------*- C++ -*-===//
//
// Small builders of .npy arrays and stored (uncompressed) ZIP archives, for
// tests that need an .npz a numpy writer would produce, or a malformed one.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TEST_GRAPH_NPZBUILDER_H
#define GNNC_TEST_GRAPH_NPZBUILDER_H

#include <zlib.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gnnc::test::npz {

inline std::vector<uint8_t> bytesOf(const std::string &s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

inline void put16(std::string &out, uint32_t v) {
  out += static_cast<char>(v & 0xff);
  out += static_cast<char>((v >> 8) & 0xff);
}
inline void put32(std::string &out, uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}

/// A .npy image: `header` (a dict literal) padded as numpy pads it, then
/// `data`.
inline std::string npy(const std::string &header, const std::string &data,
                       uint8_t major = 1, uint8_t minor = 0) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += static_cast<char>(minor);
  std::string h = header;
  size_t prefix = out.size() + 2;
  while ((prefix + h.size() + 1) % 64 != 0)
    h += ' ';
  h += '\n';
  put16(out, static_cast<uint32_t>(h.size()));
  return out + h + data;
}

inline std::string int64Data(const std::vector<int64_t> &values) {
  std::string out;
  for (int64_t v : values)
    for (int i = 0; i < 8; ++i)
      out += static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
  return out;
}

inline std::string int64Array(const std::vector<int64_t> &values) {
  return npy("{'descr': '<i8', 'fortran_order': False, 'shape': (" +
                 std::to_string(values.size()) + ",), }",
             int64Data(values));
}

/// A ZIP archive of stored (uncompressed) members, in order.
inline std::string
storedZip(const std::vector<std::pair<std::string, std::string>> &members) {
  std::string out, directory;
  for (const auto &[name, data] : members) {
    uint32_t crc = static_cast<uint32_t>(
        crc32(0, reinterpret_cast<const Bytef *>(data.data()),
              static_cast<uInt>(data.size())));
    uint32_t offset = static_cast<uint32_t>(out.size());
    put32(out, 0x04034b50);
    put16(out, 20); // version needed
    put16(out, 0);  // flags
    put16(out, 0);  // stored
    put32(out, 0);  // time, date
    put32(out, crc);
    put32(out, static_cast<uint32_t>(data.size()));
    put32(out, static_cast<uint32_t>(data.size()));
    put16(out, static_cast<uint32_t>(name.size()));
    put16(out, 0);
    out += name + data;
    put32(directory, 0x02014b50);
    put16(directory, 20); // made by
    put16(directory, 20); // needed
    put16(directory, 0);
    put16(directory, 0);
    put32(directory, 0);
    put32(directory, crc);
    put32(directory, static_cast<uint32_t>(data.size()));
    put32(directory, static_cast<uint32_t>(data.size()));
    put16(directory, static_cast<uint32_t>(name.size()));
    put16(directory, 0); // extra
    put16(directory, 0); // comment
    put16(directory, 0); // disk
    put16(directory, 0); // internal attributes
    put32(directory, 0); // external attributes
    put32(directory, offset);
    directory += name;
  }
  uint32_t directoryOffset = static_cast<uint32_t>(out.size());
  out += directory;
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<uint32_t>(members.size()));
  put16(out, static_cast<uint32_t>(members.size()));
  put32(out, static_cast<uint32_t>(directory.size()));
  put32(out, directoryOffset);
  put16(out, 0);
  return out;
}

} // namespace gnnc::test::npz

#endif // GNNC_TEST_GRAPH_NPZBUILDER_H
