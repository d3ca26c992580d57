//===- Kernels.h - Generating the bench kernels -----------------*- C++ -*-===//
//
// The gnn.spmm, gnn.sddmm and GAT-chain kernels gnn-bench times: their
// symbols, the .gnn module text holding them, and their compilation by gnnc
// as one translation unit per element type and width.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_KERNELS_H
#define GNNC_BENCH_KERNELS_H

#include "gnnc/Bench/Schedules.h"
#include "gnnc/runtime/Float16.h"
#include "gnnc/runtime/KernelSpec.h"
#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::bench {

/// The leaky ReLU slope of the GAT chain (GAT's 0.2).
constexpr float kGatLeakySlope = 0.2f;
/// The blocks per SM of the fused GAT variants with capped registers.
constexpr int32_t kAttentionBlocksPerSm = 4;

/// Which op a generated kernel runs.
enum class BenchOp {
  /// gnn.spmm (sum; edge values when asked).
  Spmm,
  /// gnn.sddmm, dot form.
  SddmmDot,
  /// The GAT chain: gnn.sddmm add form with leaky_relu 0.2 on one head.
  GatLogits,
  /// The GAT chain: gnn.edge_softmax of one value per edge.
  GatSoftmax,
  /// The GAT chain: gnn.spmm with the softmax weights as edge values.
  GatAggregate,
  /// The chain in one kernel: gnn.spmm with attention (leaky_relu 0.2).
  GatFused
};

/// One kernel to generate.
struct KernelRequest {
  BenchOp op = BenchOp::Spmm;
  ElementType type = ElementType::F32;
  /// The feature width (GatLogits and GatSoftmax ignore it: one head).
  int64_t width = 64;
  bool edgeValues = false;
  bool offsets64 = true;
  ScheduleChoice schedule;

  /// The kernel's symbol in the module, e.g. "f16_w64_v_o64_dw_x2" (SpMM),
  /// "sddmm_f16_w64_o64_default", "gat_softmax_f16_o64".
  std::string symbol() const;
};

/// The .gnn text of one gnn.kernel `@name` holding one gnn.spmm over a
/// `!gnn.graph<format, i64, i32>` of features `features` (a tensor type)
/// under `schedule` (a `#gnn.schedule<...>`; empty: none, for a tuner).
std::string spmmKernelText(const std::string &name, const std::string &format,
                           const std::string &features,
                           const std::string &schedule);

/// The .gnn text of a module `@moduleName` holding the requested kernels.
std::string benchModuleText(const std::string &moduleName,
                            const std::vector<KernelRequest> &requests);

/// A compiled kernel and how it was asked for.
struct BenchKernel {
  KernelRequest request;
  rt::KernelSpec spec;
};

/// What to generate for one (type, width).
struct KernelSetOptions {
  /// SpMMv schedules: the default plus up to spmmSchedules - 1 variants.
  size_t spmmSchedules = 4;
  /// The default SpMMve kernel.
  bool edgeValues = false;
  /// SDDMM (dot) schedules: the default plus variants (0: none).
  size_t sddmmSchedules = 0;
  /// The three kernels of the GAT chain (one head, this width), and the
  /// fused kernel (gnn.spmm with attention) under its default schedule and
  /// the vertex-parallel and neighbour-group SpMM variants.
  bool gatChain = false;
  bool offsets64 = true;
};

/// Compiles the default kernels for (type, width), reads back their
/// schedules, and compiles everything `options` asks for as one module (one
/// NVRTC translation unit): SpMMv variants, then the SpMMve default, then
/// the SDDMM variants, then the GAT chain (logits, softmax, aggregate) and
/// the fused GAT kernels.
Expected<std::vector<BenchKernel>>
compileBenchKernels(ElementType type, int64_t width,
                    const KernelSetOptions &options);

/// compileBenchKernels with SpMM kernels only.
Expected<std::vector<BenchKernel>>
compileSpmmKernels(ElementType type, int64_t width, size_t maxSchedules,
                   bool edgeValues, bool offsets64);

} // namespace gnnc::bench

#endif // GNNC_BENCH_KERNELS_H
