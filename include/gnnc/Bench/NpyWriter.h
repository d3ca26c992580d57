//===- NpyWriter.h - Writing NumPy .npy files -------------------*- C++ -*-===//
//
// gnn-bench writes the graphs it benchmarks as .npy files (format version
// 1.0) so that the PyTorch baseline reads exactly the same graphs.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_NPYWRITER_H
#define GNNC_BENCH_NPYWRITER_H

#include "gnnc/graph/Csr.h"
#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::bench {

/// The .npy (version 1.0) header for a C-order array of `descr` ("<i8",
/// "<i4", "<f4", ...) and `shape` (empty: a 0-d array): magic, version,
/// header length and the padded dictionary, 64-byte aligned in total.
std::string npyHeader(const std::string &descr,
                      const std::vector<int64_t> &shape);

/// Writes a .npy file holding `bytes` bytes of element data.
Status writeNpy(const std::string &path, const std::string &descr,
                const std::vector<int64_t> &shape, const void *data,
                size_t bytes);

/// Writes `g` as <dir>/<stem>.indptr.npy (int64, numRows + 1) and
/// <dir>/<stem>.indices.npy (int32, nnz). Fails if an index does not fit
/// int32.
Status writeGraphNpy(const graph::CsrGraph &g, const std::string &dir,
                     const std::string &stem);

} // namespace gnnc::bench

#endif // GNNC_BENCH_NPYWRITER_H
