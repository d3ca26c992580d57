//===- NpzWriter.h - Writing NumPy .npz archives ----------------*- C++ -*-===//
//
// An uncompressed .npz archive, as numpy.savez writes it: a ZIP file of
// stored (not deflated) .npy members, each with its CRC-32. gnn-bench
// writes the batches it times this way, in the layout graph::readTuBatch
// reads, so that the PyTorch side times exactly the same graphs.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_NPZWRITER_H
#define GNNC_BENCH_NPZWRITER_H

#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::bench {

/// One array of an archive: its member name (without ".npy"), .npy type
/// ("<i8", "<i4", "<f4"), shape (empty: a 0-d array) and C-order data.
struct NpyMember {
  std::string name;
  std::string descr;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t bytes = 0;
};

/// The bytes of an uncompressed .npz archive holding `members` in order
/// (member "<name>.npy"). Fails on an empty or repeated name, or on an
/// archive past 4 GiB (which would need zip64).
Expected<std::vector<uint8_t>> npzBytes(const std::vector<NpyMember> &members);

/// Writes npzBytes(members) to a new file `path`; refuses to replace an
/// existing file ("path: exists; not replaced").
Status writeNpz(const std::string &path, const std::vector<NpyMember> &members);

} // namespace gnnc::bench

#endif // GNNC_BENCH_NPZWRITER_H
