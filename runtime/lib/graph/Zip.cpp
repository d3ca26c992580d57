//===- Zip.cpp - The ZIP container of .npz archives -----------------------===//
//
// A small ZIP reader (end of central directory, central directory, local
// headers, zip64 extensions), raw DEFLATE through zlib and CRC-32 checks.
//
//===----------------------------------------------------------------------===//

#include "Zip.h"

#include "ReaderSupport.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

using namespace gnnc;
using namespace gnnc::graph;
using namespace gnnc::graph::detail;

namespace {

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

} // namespace

Expected<std::vector<zip::Entry>>
gnnc::graph::zip::readDirectory(const std::vector<uint8_t> &b,
                                const std::string &path,
                                const std::string &nameSuffix) {
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

  std::vector<Entry> entries;
  uint64_t pos = cdOffset, cdEnd = cdOffset + cdSize;
  for (uint64_t i = 0; i < numEntries; ++i) {
    std::string where = "central directory entry " + std::to_string(i);
    if (cdEnd - pos < 46 || rd32(p + pos) != kCentralHeaderSig)
      return err(where + " is corrupt");
    const uint8_t *h = p + pos;
    uint16_t flags = rd16(h + 8);
    Entry entry;
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
    entry.name = withoutSuffix(name, nameSuffix);
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
    // numpy reads the last of two members of one name; a reader that took
    // the first would read another array than numpy does: neither is right.
    for (size_t j = 0; j < entries.size(); ++j)
      if (entries[j].name == entry.name)
        return err("members " + std::to_string(j) + " and " +
                   std::to_string(i) + " are both named '" + entry.name + "'" +
                   (nameSuffix.empty()
                        ? std::string()
                        : " (with or without '" + nameSuffix + "')") +
                   ": an archive must hold each name once (numpy would "
                   "read the last)");
    entries.push_back(std::move(entry));
  }
  return entries;
}

Expected<std::vector<uint8_t>>
gnnc::graph::zip::extract(const std::vector<uint8_t> &bytes, const Entry &entry,
                          const std::string &what) {
  auto err = [&](const std::string &msg) {
    return Status::error(what + ": " + msg);
  };
  const uint8_t *in = bytes.data() + entry.dataOffset;
  std::vector<uint8_t> out;
  if (entry.method == 0) {
    if (entry.compressedSize != entry.uncompressedSize)
      return err("stored member has compressed size " +
                 std::to_string(entry.compressedSize) +
                 " != uncompressed size " +
                 std::to_string(entry.uncompressedSize));
    out.assign(in, in + entry.compressedSize);
  } else if (entry.method == 8) {
    // DEFLATE cannot expand more than ~1032:1; a larger claim is corrupt and
    // must not drive the allocation.
    if (entry.uncompressedSize > entry.compressedSize * 1040 + 1024)
      return err("implausible uncompressed size " +
                 std::to_string(entry.uncompressedSize) + " for " +
                 std::to_string(entry.compressedSize) + " compressed bytes");
    out.resize(entry.uncompressedSize);
    Status s = inflateRaw(in, entry.compressedSize, out);
    if (!s)
      return s.withContext(what);
  } else {
    return err("unsupported ZIP compression method " +
               std::to_string(entry.method) + " (only stored and DEFLATE)");
  }
  uint32_t crc = crc32Of(out.data(), out.size());
  if (crc != entry.crc32)
    return err("CRC-32 mismatch (stored " + hex32(entry.crc32) + ", computed " +
               hex32(crc) + "): member data is corrupt");
  return out;
}
