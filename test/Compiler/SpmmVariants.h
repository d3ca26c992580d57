//===- SpmmVariants.h - Generated gnn.spmm kernels for tests ----*- C++ -*-===//
#ifndef GNNC_TEST_COMPILER_SPMMVARIANTS_H
#define GNNC_TEST_COMPILER_SPMMVARIANTS_H

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::test {

/// One gnn.spmm or gnn.sddmm kernel to generate.
struct SpmmVariant {
  std::string type;        // f32, f16, bf16
  int64_t width = 0;       // feature width
  bool values = false;     // spmm: with edge values; sddmm: with leaky ReLU
  std::string offsets;     // i32 or i64
  std::string schedule;    // "" = default, else #gnn.schedule<...> body
  std::string op = "spmm"; // spmm, sddmm_dot, sddmm_add
  std::string kernelName() const;
};

/// The cross product the tests cover: every type, the widths
/// {1, 3, 16, 32, 41, 64, 128, 256}, with and without edge values, the
/// default schedule and a one-element-per-lane schedule, i64 and (for some)
/// i32 row offsets.
std::vector<SpmmVariant> allSpmmVariants();

/// The SDDMM space: dot and add forms, every type and width above, with and
/// without leaky ReLU, two schedules.
std::vector<SpmmVariant> allSddmmVariants();

/// A .gnn module (`gnn.module @t`) holding one kernel per variant.
std::string spmmModuleText(const std::vector<SpmmVariant> &variants);

} // namespace gnnc::test

#endif // GNNC_TEST_COMPILER_SPMMVARIANTS_H
