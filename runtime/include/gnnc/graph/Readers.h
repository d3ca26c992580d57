//===- Readers.h - Graph file readers ---------------------------*- C++ -*-===//
//
// Readers for Matrix Market (.mtx, .mtx.gz), SNAP edge lists and NumPy .npz
// archives. Every reader validates what it reads and reports errors as
// "path:line: what is wrong" (text formats) or "path: member 'name': what is
// wrong" (.npz); none of them throws, crashes or accepts malformed input.
// None allocates from a size the file declares before it knows the graph
// fits the memory budget below; an allocation that fails all the same is
// an error naming the file. Each reader of a file has a parse* twin that
// reads the file's contents from memory (the fuzz targets use them).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_GRAPH_READERS_H
#define GNNC_GRAPH_READERS_H

#include "gnnc/graph/Csr.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gnnc::graph {

/// Largest row or column count a reader accepts (a sanity bound that keeps
/// corrupt headers from requesting absurd allocations).
constexpr int64_t kMaxReaderDimension = int64_t(1) << 31;

/// The readers' memory budget. Before it allocates for a graph, a reader
/// estimates what the graph will take from the sizes the file declares and
/// the entries it has read so far: kReaderBytesPerRow per row,
/// kReaderBytesPerColumn per column and kReaderBytesPerEntry per stored
/// entry (the CSR arrays, the reader's entry lists and working copies, and
/// the tables the graph analysis keeps per column). A graph that would need
/// more than the budget is refused ("path:line: a 2147483647 x 2 matrix
/// with 1 entries needs about 48.0 GiB, over the readers' memory budget of
/// 8.0 GiB ..."), and so is a file, the text of a .gz file or an .npz
/// member larger than the budget.
constexpr int64_t kReaderBytesPerRow = 24;
constexpr int64_t kReaderBytesPerColumn = 16;
constexpr int64_t kReaderBytesPerEntry = 48;
/// The budget when GNNC_GRAPH_MEMORY_LIMIT is not set: 8 GiB (about 170
/// million entries, or 350 million empty rows).
constexpr int64_t kDefaultReaderMemoryBudget = int64_t(8) << 30;

/// The budget in force: the environment variable GNNC_GRAPH_MEMORY_LIMIT
/// (bytes, or a number with the suffix K, M, G or T for powers of 1024,
/// e.g. "64G"), else kDefaultReaderMemoryBudget. Fails on a malformed value.
Expected<int64_t> readerMemoryBudget();

/// Reads a Matrix Market file, gzip-compressed or not (detected from the
/// content). Supports `matrix coordinate {pattern|real|integer}
/// {general|symmetric}`; symmetric matrices are expanded (diagonal once),
/// indices become 0-based, rows are sorted and duplicates summed. Pattern
/// matrices get no values (all ones).
Expected<CsrGraph> readMatrixMarket(const std::string &path);

/// readMatrixMarket on the contents of a file (gzip-compressed or not),
/// named `path` in errors.
Expected<CsrGraph> parseMatrixMarket(const std::string &path,
                                     std::string_view contents);

/// Options for SNAP edge lists.
struct SnapOptions {
  /// Add the reverse of every edge.
  bool symmetrize = false;
  /// Drop edges u -> u.
  bool removeSelfLoops = false;
  /// Renumber the ids that occur to 0..k-1 in increasing order (otherwise the
  /// node count is max id + 1).
  bool compactIds = false;
  /// Use a third column as the edge weight (otherwise it is checked to be a
  /// number and ignored, and the graph has no values).
  bool useWeights = false;
  /// Node count; 0 derives it from the ids. Ids must be below it.
  int64_t numNodes = 0;
};

/// Reads a SNAP-style edge list: `#` or `%` comment lines, blank lines, and
/// lines "src dst [weight]" separated by spaces or tabs; gzip is detected.
/// Edge src -> dst becomes entry (src, dst). Duplicate edges are merged
/// (weights summed). With compactIds, `originalIds` (if non-null) receives
/// the original id of each new id.
Expected<CsrGraph>
readSnapEdgeList(const std::string &path, const SnapOptions &options = {},
                 std::vector<int64_t> *originalIds = nullptr);

/// readSnapEdgeList on the contents of a file (gzip-compressed or not),
/// named `path` in errors.
Expected<CsrGraph>
parseSnapEdgeList(const std::string &path, std::string_view contents,
                  const SnapOptions &options = {},
                  std::vector<int64_t> *originalIds = nullptr);

/// A NumPy array: little-endian data of a supported dtype in C order.
struct NpyArray {
  /// NumPy type string as stored: "<i4", "<i8", "<f4", "<f8", "|i1", "|u1",
  /// "<i2", "<u2", "<u4", "<u8", "<f2" or "|b1".
  std::string dtype;
  /// Dimensions; empty for a 0-d (scalar) array.
  std::vector<int64_t> shape;
  /// Raw element bytes (numElements() * itemSize()).
  std::vector<uint8_t> data;

  /// Product of the dimensions (1 for a scalar).
  int64_t numElements() const;
  /// Bytes per element.
  size_t itemSize() const;
  /// Kind letter: 'i' signed, 'u' unsigned, 'f' float, 'b' bool.
  char kind() const { return dtype.size() >= 2 ? dtype[1] : '?'; }
  bool isInteger() const { return kind() == 'i' || kind() == 'u'; }

  /// Elements as int64; integer and bool dtypes only (fails for floats and
  /// for uint64 values above INT64_MAX).
  Expected<std::vector<int64_t>> asInt64() const;
  /// Elements as float (float64 and large integers are rounded).
  Expected<std::vector<float>> asFloat32() const;
  /// Elements as double.
  Expected<std::vector<double>> asFloat64() const;
  /// The single element of a 0-d or one-element integer array.
  Expected<int64_t> scalarInt64() const;
};

/// Parses a complete .npy file image (format versions 1.0, 2.0 and 3.0, a
/// header of exactly the keys 'descr', 'fortran_order' and 'shape', each
/// once, and nothing after it but padding). Rejects big-endian,
/// Fortran-order, object and structured arrays, and any other version or
/// key, with a clear message. `what` prefixes error messages.
Expected<NpyArray> parseNpy(const uint8_t *bytes, size_t size,
                            const std::string &what);

/// Reads a single .npy file.
Expected<NpyArray> readNpy(const std::string &path);

/// An opened .npz archive. Opening reads the file and checks the ZIP
/// directory; members are decompressed, CRC-checked and parsed when asked
/// for.
class NpzFile {
public:
  /// One archive member.
  struct Entry {
    std::string name; ///< Without the ".npy" suffix.
    uint16_t method = 0;
    uint64_t compressedSize = 0;
    uint64_t uncompressedSize = 0;
    uint64_t dataOffset = 0; ///< Start of the member's (compressed) data.
    uint32_t crc32 = 0;
  };

  /// The path the archive was read from.
  const std::string &path() const { return path_; }
  /// Member names without ".npy", in archive order.
  std::vector<std::string> names() const;
  /// Whether a member `name` (with or without ".npy") exists.
  bool has(const std::string &name) const;
  /// Decompresses, checks and parses member `name`. Errors read "path:
  /// member 'name': ...".
  Expected<NpyArray> get(const std::string &name) const;

private:
  friend Expected<NpzFile> parseNpz(const std::string &path,
                                    std::vector<uint8_t> bytes);
  const Entry *find(const std::string &name) const;

  std::string path_;
  std::vector<uint8_t> bytes_;
  std::vector<Entry> entries_;
};

/// Opens a .npz archive (written by numpy.savez or savez_compressed: stored
/// or DEFLATE members, zip64 extensions understood). Two members of one
/// name (with or without ".npy") are an error: numpy would read the last.
Expected<NpzFile> readNpz(const std::string &path);

/// readNpz on the bytes of a file named `path` in errors.
Expected<NpzFile> parseNpz(const std::string &path, std::vector<uint8_t> bytes);

/// Reads a CSR graph stored as members `<prefix>indptr` (integer, N+1),
/// `<prefix>indices` (integer) and optionally `<prefix>num_nodes` (scalar;
/// then the graph is num_nodes x num_nodes) and edge values
/// `<prefix>data`, `<prefix>weight` or `<prefix>weights`. Without num_nodes
/// the column count is `numCols` if given (>= 0), else max(N, max index +
/// 1). Everything is validated and reported per member.
Expected<CsrGraph> readNpzCsr(const std::string &path,
                              const std::string &prefix = "",
                              int64_t numCols = -1);

/// readNpzCsr on the bytes of a file named `path` in errors.
Expected<CsrGraph> parseNpzCsr(const std::string &path,
                               std::vector<uint8_t> bytes,
                               const std::string &prefix = "",
                               int64_t numCols = -1);

/// Reads a graph choosing the reader from the extension: .mtx / .mtx.gz
/// (Matrix Market), .npz (readNpzCsr), .txt / .el / .edges / .snap (and .gz
/// of those) as SNAP edge lists with default options.
Expected<CsrGraph> readGraph(const std::string &path);

} // namespace gnnc::graph

#endif // GNNC_GRAPH_READERS_H
