//===- FuzzMatrixMarketGz.cpp - Fuzz target: gzip-compressed .mtx ---------===//
//
// The .mtx.gz path. The first byte chooses how the rest reaches the reader:
// even, the rest is compressed here into a valid gzip stream (so that the
// mutations reach the Matrix Market parser behind the decompression), with
// the first byte's high bits choosing to split it into two members or to
// append trailing bytes; odd, the rest is passed as it is (raw mutations of
// gzip streams from the seeds: corrupt, truncated, concatenated, followed
// by garbage).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "gnnc/graph/Readers.h"

#include <zlib.h>

#include <cstring>
#include <string>

namespace {

/// `text` as one gzip member.
std::string gzip(const std::string &text) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK)
    __builtin_trap();
  std::string out(deflateBound(&zs, text.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef *>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
    __builtin_trap();
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  gnnc::fuzz::limitReaderMemory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  uint8_t mode = data[0];
  std::string rest(reinterpret_cast<const char *>(data + 1), size - 1);
  std::string contents;
  if (mode & 1) {
    contents = rest;
  } else if (mode & 2) {
    // Two members: concatenated gzip files are one stream.
    size_t half = rest.size() / 2;
    contents = gzip(rest.substr(0, half)) + gzip(rest.substr(half));
  } else {
    contents = gzip(rest);
    if (mode & 4)
      contents += rest.substr(0, mode >> 3); // trailing garbage
  }
  gnnc::fuzz::checkGraph(
      gnnc::graph::parseMatrixMarket("fuzz.mtx.gz", contents));
  return 0;
}
