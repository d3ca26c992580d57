//===- BackwardVariants.h - Generated backward kernels for tests -*- C++
//-*-===//
#ifndef GNNC_TEST_COMPILER_BACKWARDVARIANTS_H
#define GNNC_TEST_COMPILER_BACKWARDVARIANTS_H

#include "gnnc/ops/Backward.h"

#include <string>
#include <vector>

namespace gnnc::test {

/// One generated kernel of the backward ops and how to check it.
struct BackwardKernel {
  enum Kind {
    SoftmaxGrad,  ///< gnn.edge_softmax_grad
    SpmmFeatures, ///< gnn.spmm over the transpose: a gnn.spmm's dX
    SpmmValues,   ///< dot-form gnn.sddmm: a gnn.spmm's dW
    SddmmDot,     ///< gnn.spmm with values: a dot-form gnn.sddmm's dA, dB
    SddmmAdd      ///< gnn.spmm without values: an add-form gnn.sddmm's dA, dB
  };
  Kind kind = SoftmaxGrad;
  std::string name;
  /// SpmmFeatures: the forward gnn.spmm's reduce and scale.
  gnnc::Reduce reduce = gnnc::Reduce::Sum;
  gnnc::DegreeScale scale = gnnc::DegreeScale::None;
};

/// The kernels and the .gnn module (`gnn.module @bw`) holding them:
/// edge_softmax_grad for f32/f16/bf16 and 1, 3, 8 and 64 heads (two
/// schedules, i32 and i64 offsets); the feature gradient of gnn.spmm for sum
/// and mean with every degree scaling, widths 1, 3 and 64, with and without
/// edge values (and an edge_parallel schedule); dot-form gnn.sddmm and
/// plain gnn.spmm kernels (widths 1, 3, 64) for the edge-value gradient of
/// gnn.spmm and the gradients of gnn.sddmm.
struct BackwardSuite {
  std::vector<BackwardKernel> kernels;
  std::string text;
};
BackwardSuite backwardSuite();

} // namespace gnnc::test

#endif // GNNC_TEST_COMPILER_BACKWARDVARIANTS_H
