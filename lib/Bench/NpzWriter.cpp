//===- NpzWriter.cpp - Writing NumPy .npz archives ------------------------===//
#include "gnnc/Bench/NpzWriter.h"

#include "gnnc/Bench/NpyWriter.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

using namespace gnnc;
using namespace gnnc::bench;

namespace {

// ZIP record signatures and the fields this writer sets: version 2.0
// (needed for nothing beyond stored members), no flags, method 0 (stored),
// the DOS date 1980-01-01 00:00.
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint16_t kVersion = 20;
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;
constexpr uint64_t kZip32Limit = 0xffffffffu;

void put16(std::vector<uint8_t> &out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v & 0xff));
  out.push_back(static_cast<uint8_t>(v >> 8));
}

void put32(std::vector<uint8_t> &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<uint8_t>((v >> (8 * i)) & 0xff));
}

uint32_t crc32Of(const std::string &header, const void *data, size_t bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef *>(header.data()),
              static_cast<uInt>(header.size()));
  const auto *p = static_cast<const Bytef *>(data);
  // zlib takes at most a uInt per call.
  while (bytes > 0) {
    const size_t n = std::min<size_t>(bytes, 1u << 30);
    crc = crc32(crc, p, static_cast<uInt>(n));
    p += n;
    bytes -= n;
  }
  return static_cast<uint32_t>(crc);
}

/// The fields a local header and its central directory entry share, from
/// "version needed" to the extra field's length.
void putCommon(std::vector<uint8_t> &out, uint32_t crc, uint32_t size,
               uint16_t nameLength) {
  put16(out, kVersion); // version needed to extract
  put16(out, 0);        // flags
  put16(out, 0);        // method: stored
  put16(out, 0);        // time
  put16(out, kDosDate); // date
  put32(out, crc);
  put32(out, size); // compressed
  put32(out, size); // uncompressed
  put16(out, nameLength);
  put16(out, 0); // extra field
}

} // namespace

Expected<std::vector<uint8_t>>
gnnc::bench::npzBytes(const std::vector<NpyMember> &members) {
  std::vector<uint8_t> out, directory;
  std::set<std::string> names;
  for (const NpyMember &m : members) {
    if (m.name.empty())
      return Status::error("npz: a member without a name");
    if (!names.insert(m.name).second)
      return Status::error("npz: member '" + m.name +
                           "' twice; numpy would read only the last");
    const std::string file = m.name + ".npy";
    const std::string header = npyHeader(m.descr, m.shape);
    const uint64_t size = header.size() + m.bytes;
    const uint64_t offset = out.size();
    if (size > kZip32Limit || offset + 30 + file.size() + size > kZip32Limit ||
        file.size() > 0xffff)
      return Status::error("npz: member '" + m.name +
                           "' would pass 4 GiB of archive; this writer "
                           "does not write zip64");
    const uint32_t crc = crc32Of(header, m.data, m.bytes);
    put32(out, kLocalHeader);
    putCommon(out, crc, static_cast<uint32_t>(size),
              static_cast<uint16_t>(file.size()));
    out.insert(out.end(), file.begin(), file.end());
    out.insert(out.end(), header.begin(), header.end());
    const auto *data = static_cast<const uint8_t *>(m.data);
    if (m.bytes)
      out.insert(out.end(), data, data + m.bytes);

    put32(directory, kCentralHeader);
    put16(directory, kVersion); // version made by (MS-DOS, 2.0)
    putCommon(directory, crc, static_cast<uint32_t>(size),
              static_cast<uint16_t>(file.size()));
    put16(directory, 0); // comment
    put16(directory, 0); // disk
    put16(directory, 0); // internal attributes
    put32(directory, 0); // external attributes
    put32(directory, static_cast<uint32_t>(offset));
    directory.insert(directory.end(), file.begin(), file.end());
  }
  const uint64_t directoryOffset = out.size();
  if (directoryOffset + directory.size() + 22 > kZip32Limit ||
      members.size() > 0xffff)
    return Status::error("npz: the archive would pass 4 GiB or 65,535 "
                         "members; this writer does not write zip64");
  out.insert(out.end(), directory.begin(), directory.end());
  put32(out, kEndOfDirectory);
  put16(out, 0); // this disk
  put16(out, 0); // the directory's disk
  put16(out, static_cast<uint16_t>(members.size()));
  put16(out, static_cast<uint16_t>(members.size()));
  put32(out, static_cast<uint32_t>(directory.size()));
  put32(out, static_cast<uint32_t>(directoryOffset));
  put16(out, 0); // comment
  return out;
}

Status gnnc::bench::writeNpz(const std::string &path,
                             const std::vector<NpyMember> &members) {
  Expected<std::vector<uint8_t>> bytes = npzBytes(members);
  if (!bytes)
    return bytes.status().withContext(path);
  // "x": fails rather than replacing a file that is there (C11, glibc).
  std::FILE *file = std::fopen(path.c_str(), "wbx");
  if (!file) {
    if (errno == EEXIST)
      return Status::error(path + ": exists; not replaced (remove it or "
                                  "choose another directory)");
    return Status::error(path + ": cannot create: " + std::strerror(errno));
  }
  bool ok = std::fwrite(bytes->data(), 1, bytes->size(), file) == bytes->size();
  ok = (std::fclose(file) == 0) && ok;
  if (!ok) {
    const std::string why = std::strerror(errno);
    std::remove(path.c_str());
    return Status::error(path + ": write failed: " + why);
  }
  return Status::ok();
}
