//===- BatchedVariants.h - gnn.spmm batched kernels for tests ---*- C++ -*-===//
//
// The batched gnn.spmm kernels the tests compile (CompileSweep, through
// NVRTC without a GPU) and run (BatchedGpuTest): every element type and
// width from 1 to 256 under the default schedule, several graphs per block
// with a larger tile, and a small tile that sends larger graphs to the
// global-memory path and cuts wide rows into column blocks, and edge
// batches of 1 and 2 below the registers' choice; every
// option of gnn.spmm at a few widths; and linear epilogues (fused GCN and
// GIN layers) over K x M from 3 x 8 to 256 x 512.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TEST_COMPILER_BATCHEDVARIANTS_H
#define GNNC_TEST_COMPILER_BATCHEDVARIANTS_H

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::test {

struct BatchedVariant {
  std::string type; // f32, f16, bf16
  int64_t width = 0;
  std::string schedule; // the #gnn.schedule<...> body after strategy
  std::string reduce;   // "" (sum), mean or max
  std::string scale;    // "" (none), left, right or both
  std::string self;     // "" or the self_weight
  bool values = false;
  /// A linear epilogue of this many columns (0: none), with a bias and
  /// ReLU when set.
  int64_t linearWidth = 0;
  bool bias = false;
  bool relu = false;
  /// The weights in torch.nn.Linear's (out, in) layout.
  bool transposed = false;
  std::string tag;

  std::string kernelName() const;
};

std::vector<BatchedVariant> batchedVariants();

/// One gnn.module holding a kernel per variant.
std::string batchedModuleText(const std::vector<BatchedVariant> &variants);

/// gnn.readout and gnn.readout_grad (sum, mean, max) for every element type
/// at widths 1, 3, 16, 64 and 256, and with three graphs per block: the
/// module's text and its number of kernels.
std::string readoutModuleText(size_t *count);

} // namespace gnnc::test

#endif // GNNC_TEST_COMPILER_BATCHEDVARIANTS_H
