//===- Patterns.h - CUDA emission patterns and their registry ---*- C++ -*-===//
//
// One emission pattern per (op, strategy), after CIRCT's ExportSystemC: a
// pattern prints the body of the op's main kernel and, by index, the bodies
// of the companion kernels the op's plan lists (gnn.preludes,
// gnn.follow_ups). The driver (CUDAEmitter.cpp) prints the signatures and
// finds a pattern through the registry (Registry.cpp).
//
// A new op family adds one file per strategy here, one getter below and one
// line per pattern in Registry.cpp; no dispatch code changes.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_LIB_TARGET_CUDA_PATTERNS_PATTERNS_H
#define GNNC_LIB_TARGET_CUDA_PATTERNS_PATTERNS_H

#include "../EmitterSupport.h"

#include "llvm/Support/ErrorHandling.h"

#include <set>
#include <string>

namespace gnnc::ExportCUDA {

/// Prints the kernels of one (op kind, strategy).
class EmissionPattern {
public:
  virtual ~EmissionPattern() = default;

  /// Adds the device headers (gnnc/cuda/*.cuh) the pattern's kernels call
  /// into: by default the helpers of the op's element type.
  virtual void addHeaders(const OpDesc &op,
                          std::set<std::string> &headers) const {
    headers.insert(elementHeader(op.type));
  }

  /// Prints the body of the op's main kernel.
  virtual void emitKernel(const OpContext &c) const = 0;

  /// The number of kernels before (preludes) and after (follow-ups) the
  /// main one whose bodies the pattern prints; the op's gnn.preludes and
  /// gnn.follow_ups list at most that many.
  virtual unsigned numPreludes() const { return 0; }
  virtual unsigned numFollowUps() const { return 0; }
  /// Prints the body of prelude (follow-up) `index` < numPreludes()
  /// (numFollowUps()).
  virtual void emitPrelude(const OpContext &c, unsigned index) const {
    llvm_unreachable("a pattern without preludes was asked for one");
  }
  virtual void emitFollowUp(const OpContext &c, unsigned index) const {
    llvm_unreachable("a pattern without follow-ups was asked for one");
  }
};

/// The patterns of gnn.sddmm: the dot form's kernels also sum their
/// batches across a worker's threads with gnnc_lane_sums.
class SddmmPattern : public EmissionPattern {
public:
  void addHeaders(const OpDesc &op,
                  std::set<std::string> &headers) const override {
    EmissionPattern::addHeaders(op, headers);
    if (op.form == SddmmForm::Dot)
      headers.insert(kLaneSumsHeader);
  }
};

/// The mma.sync shape of tensor-core kernels of `type`, for comments:
/// "m16n8k8 (TF32)", "m16n8k16 (f16)" or "m16n8k16 (bf16)".
std::string mmaShapeName(ElementType type);

/// The pattern of (kind, strategy), or null when there is none.
const EmissionPattern *findEmissionPattern(OpKind kind, Strategy strategy);

// The patterns, one file each.
const EmissionPattern &spmmVertexParallelPattern();
const EmissionPattern &spmmEdgeParallelPattern();
const EmissionPattern &spmmNeighborGroupPattern();
const EmissionPattern &spmmBatchedPattern();
const EmissionPattern &spmmSlicedPattern();
const EmissionPattern &sddmmVertexParallelPattern();
const EmissionPattern &sddmmEdgeParallelPattern();
const EmissionPattern &sddmmNeighborGroupPattern();
const EmissionPattern &edgeSoftmaxPattern();
const EmissionPattern &edgeSoftmaxGradPattern();
const EmissionPattern &readoutPattern();
const EmissionPattern &segmentMatmulTileRoutedPattern();
const EmissionPattern &segmentMatmulWeightGradTileRoutedPattern();

} // namespace gnnc::ExportCUDA

#endif // GNNC_LIB_TARGET_CUDA_PATTERNS_PATTERNS_H
