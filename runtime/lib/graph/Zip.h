//===- Zip.h - The ZIP container of .npz archives ---------------*- C++ -*-===//
//
// Internal to gnnc_graph: a small ZIP reader (end of central directory,
// central directory, local headers, zip64 extensions) and the extraction of
// stored and DEFLATE members (raw DEFLATE through zlib) with their CRC-32
// checked. NpzFile is its one user.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_GRAPH_ZIP_H
#define GNNC_GRAPH_ZIP_H

#include "gnnc/graph/Readers.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::graph::zip {

/// One member of an archive: its name, compression method, sizes, CRC-32 and
/// where its (compressed) data starts in the file.
using Entry = NpzFile::Entry;

/// Reads the directory of the ZIP archive `bytes` (the whole file `path`):
/// every member in archive order, its data checked to lie inside the file.
/// Member names lose `nameSuffix` when they end with it. Encrypted members
/// are refused. Errors read "path: what is wrong".
Expected<std::vector<Entry>> readDirectory(const std::vector<uint8_t> &bytes,
                                           const std::string &path,
                                           const std::string &nameSuffix);

/// The uncompressed data of member `entry` of the archive `bytes`: copied
/// (stored) or inflated (DEFLATE), then checked against the CRC-32. Errors
/// read "what: what is wrong".
Expected<std::vector<uint8_t>> extract(const std::vector<uint8_t> &bytes,
                                       const Entry &entry,
                                       const std::string &what);

} // namespace gnnc::graph::zip

#endif // GNNC_GRAPH_ZIP_H
