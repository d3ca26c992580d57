//===- LinearGrad.h - The elementwise end of a layer's backward -*- C++ -*-===//
//
// A layer act(H W + b) (gnn.spmm's linear epilogue with ReLU and bias) has
// the backward dZ = dY * [Y > 0], db = sum over rows of dZ, dW = Hᵀ dZ
// (gnn.segment_matmul_weight_grad with one segment) and dH = dZ Wᵀ (the
// epilogue again, transposed weights). LinearGradKernels computes the
// first two in one pass over Y and dY (gnnc/cuda/linear_grad.cuh): runtime
// helpers, no gnn op, compiled once per element type.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_OPS_LINEAR_GRAD_H
#define GNNC_OPS_LINEAR_GRAD_H

#include "gnnc/ops/Spmm.h"

#include <map>
#include <utility>
#include <vector>

namespace gnnc::ops {

/// The helper kernels' specs: the pass over Y and dY for each element type
/// and vector width (1 to 16 bytes an access), then the column sums of the
/// blocks' partials.
std::vector<rt::KernelSpec> linearGradKernelSpecs();

/// The blocks of the pass over `rows` rows on a GPU of `smCount` SMs: 4 per
/// SM, at most one per row, at least one.
int64_t linearGradBlocks(int64_t rows, int smCount);

/// The loaded helpers and the f32 partials they share (grown as needed;
/// one launch at a time per object).
class LinearGradKernels {
public:
  static Expected<LinearGradKernels> load(rt::Runtime &runtime);

  /// dz = dy * [y > 0] for `rows` x `width` elements of `type` (rows
  /// contiguous) and, with `db` (null: none), db = the column sums of dz
  /// in f32 (`width` floats), summed in a fixed order. Accesses are the
  /// widest vectors (up to 16 bytes) that divide the width and suit the
  /// buffers' addresses. Checks the buffers'
  /// sizes before launching; nothing is launched for zero rows, where db
  /// is zeroed.
  Status reluBiasGrad(rt::Runtime &runtime, ElementType type,
                      const rt::DeviceBuffer &y, const rt::DeviceBuffer &dy,
                      rt::DeviceBuffer &dz, rt::DeviceBuffer *db, int64_t rows,
                      int64_t width, bool synchronize = true,
                      void *stream = nullptr);

private:
  /// By element type and vector width.
  std::map<std::pair<ElementType, int>, rt::LoadedKernel> pass_;
  rt::LoadedKernel sums_;
  rt::DeviceBuffer partials_;
};

/// The double-precision reference: dz = dy * [y > 0] and db[c] = the sum
/// of dz[r, c] over rows, with sum |dz[r, c]| in dbAbs (the scale of db's
/// rounding).
void reluBiasGradReference(const std::vector<float> &y,
                           const std::vector<float> &dy, int64_t rows,
                           int64_t width, std::vector<double> &dz,
                           std::vector<double> &db, std::vector<double> &dbAbs);

/// The relative tolerance of db (of sum |dz| per column) over `rows` rows:
/// f32 sums in a few levels, 1e-6 x sqrt(rows) + 1e-6.
double biasGradTolerance(int64_t rows);

/// Runs reluBiasGrad on random Y (a quarter of them exactly 0) and dY of
/// `type` drawn from `seed`, with NaN-poisoned dz and db, and compares both
/// with the reference (dz exactly, db within f32 summation error).
Expected<KernelCheck> checkReluBiasGrad(rt::Runtime &runtime,
                                        LinearGradKernels &kernels,
                                        ElementType type, int64_t rows,
                                        int64_t width, uint64_t seed);

} // namespace gnnc::ops

#endif // GNNC_OPS_LINEAR_GRAD_H
