//===- SegmentMatmulVariants.h - gnn.segment_matmul kernels to test -*- C++
//-*-===//
//
// The gnn.segment_matmul kernels the NVRTC sweep compiles and the GPU test
// runs: f32, f16 and bf16; odd and even K and M (vector widths 1 to 8, one
// to four chunks per lane); the default schedule and one of
// single-element loads, a warp per row and tiles of 16 rows.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TEST_COMPILER_SEGMENT_MATMUL_VARIANTS_H
#define GNNC_TEST_COMPILER_SEGMENT_MATMUL_VARIANTS_H

#include "gnnc/Plan/OpText.h"
#include "gnnc/Plan/Types.h"

#include <cstdint>
#include <string>
#include <utility>

namespace gnnc::test {

/// A gnn.module of every variant; `count` receives their number.
inline std::string segmentMatmulModuleText(size_t *count) {
  std::string text = "gnn.module @segment {\n";
  size_t n = 0;
  Schedule narrow;
  narrow.strategy = Strategy::TileRouted;
  narrow.vectorWidth = 1;
  narrow.dimWorkers = 32;
  narrow.tileRows = 16;
  for (ElementType type :
       {ElementType::F32, ElementType::F16, ElementType::BF16})
    for (auto [k, m] : {std::pair<int64_t, int64_t>{1, 1},
                        {3, 5},
                        {16, 32},
                        {64, 64},
                        {33, 128},
                        {128, 96}})
      for (bool defaults : {true, false}) {
        const std::string name = std::string("sm_") + elementTypeName(type) +
                                 "_k" + std::to_string(k) + "_m" +
                                 std::to_string(m) + (defaults ? "" : "_w1");
        text += opKernelText(name, segmentMatmulOp(type, k, m),
                             defaults ? std::nullopt
                                      : std::optional<Schedule>(narrow));
        ++n;
      }
  *count = n;
  return text + "}\n";
}

} // namespace gnnc::test

#endif // GNNC_TEST_COMPILER_SEGMENT_MATMUL_VARIANTS_H
