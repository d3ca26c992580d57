//===- FuzzSupport.h - What the reader fuzz targets share -------*- C++ -*-===//
#ifndef GNNC_TEST_FUZZ_FUZZSUPPORT_H
#define GNNC_TEST_FUZZ_FUZZSUPPORT_H

#include "gnnc/graph/Readers.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace gnnc::fuzz {

/// The readers' memory budget in the fuzz targets: 64 MiB, far below
/// libFuzzer's -rss_limit_mb, so that exceeding it is the reader's error
/// and not the fuzzer's out-of-memory report.
inline void limitReaderMemory() { setenv("GNNC_GRAPH_MEMORY_LIMIT", "64M", 1); }

inline std::string_view asText(const uint8_t *data, size_t size) {
  return std::string_view(reinterpret_cast<const char *>(data), size);
}

/// A graph a reader returns must satisfy the CSR invariants.
inline void checkGraph(const Expected<graph::CsrGraph> &g) {
  if (g && !g->validate())
    __builtin_trap();
}

/// The element conversions of an array a reader accepted.
inline void convertArray(const graph::NpyArray &array) {
  (void)array.asInt64();
  (void)array.asFloat32();
  (void)array.asFloat64();
  (void)array.scalarInt64();
}

} // namespace gnnc::fuzz

#endif // GNNC_TEST_FUZZ_FUZZSUPPORT_H
