//===- SnapshotVariants.h - gnn.spmm over snapshot groups for tests -*- C++
//-*-===//
//
// The sliced gnn.spmm kernels over groups of snapshots the tests compile
// (CompileSweep, through NVRTC without a GPU) and run (SnapshotsGpuTest):
// f32, f16 and bf16; groups of 1 to 8 snapshots of 1 to 256 features; sum
// and mean; every degree scaling; small and large slices.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TEST_COMPILER_SNAPSHOTVARIANTS_H
#define GNNC_TEST_COMPILER_SNAPSHOTVARIANTS_H

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::test {

struct SnapshotVariant {
  std::string type; // f32, f16, bf16
  int64_t snapshots = 0, width = 0;
  std::string reduce, scale;
  /// 0: the default.
  int sliceSize = 0;
};

std::vector<SnapshotVariant> snapshotVariants();

/// One gnn.module holding a kernel per variant, @k0, @k1, ... in order.
std::string snapshotModuleText(const std::vector<SnapshotVariant> &variants);

} // namespace gnnc::test

#endif // GNNC_TEST_COMPILER_SNAPSHOTVARIANTS_H
