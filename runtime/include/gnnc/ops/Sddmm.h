//===- Sddmm.h - Host side of compiled SDDMM kernels ------------*- C++ -*-===//
#ifndef GNNC_OPS_SDDMM_H
#define GNNC_OPS_SDDMM_H

#include "gnnc/ops/Spmm.h"
#include "gnnc/reference/Sddmm.h"

#include <optional>

namespace gnnc::ops {

/// What a compiled gnn.sddmm kernel expects, read from its description.
struct SddmmSignature {
  ElementType type = ElementType::F32;
  int64_t featureWidth = 0;
  gnnc::SddmmForm form = gnnc::SddmmForm::Dot;
  std::optional<float> leakyRelu;
  bool offsets64 = true;
  bool indices64 = false;
  /// Output elements per edge: 1 (dot) or the feature width (add).
  int64_t outputsPerEdge() const {
    return form == gnnc::SddmmForm::Dot ? 1 : featureWidth;
  }
};

Expected<SddmmSignature> sddmmSignature(const rt::KernelSpec &spec);

/// Launches a compiled sddmm kernel with the default parameter names (row
/// features `x`, column features `x1`, per-edge output `y`) on `stream`
/// (a CUstream; null: the default stream).
Status launchSddmm(rt::Runtime &runtime, const rt::LoadedKernel &kernel,
                   const DeviceGraph &graph,
                   const rt::DeviceBuffer &rowFeatures,
                   const rt::DeviceBuffer &colFeatures, rt::DeviceBuffer &out,
                   bool synchronize = true, void *stream = nullptr);

/// Runs `kernel` on `g` with fresh random features drawn from `seed` and a
/// NaN-poisoned output, and compares every value with the CPU reference.
Expected<KernelCheck> checkSddmm(rt::Runtime &runtime,
                                 const rt::LoadedKernel &kernel,
                                 const graph::CsrGraph &g, uint64_t seed);

} // namespace gnnc::ops

#endif // GNNC_OPS_SDDMM_H
