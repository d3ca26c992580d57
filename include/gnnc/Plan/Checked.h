//===- Checked.h - Integer arithmetic that cannot overflow ------*- C++ -*-===//
//
// The few integer helpers the plans, the cost models and the readers share:
// rounding divisions that never form `a + b - 1`, and products and sums
// that report overflow instead of wrapping. Plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_PLAN_CHECKED_H
#define GNNC_PLAN_CHECKED_H

#include <cstdint>
#include <optional>

namespace gnnc {

/// ceil(a / b) for a >= 0 and b > 0, without overflow.
constexpr int64_t ceilDiv(int64_t a, int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

/// a * b, or nothing when it does not fit in 64 bits.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product))
    return std::nullopt;
  return product;
}

/// a + b, or nothing when it does not fit in 64 bits.
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum))
    return std::nullopt;
  return sum;
}

/// The smallest multiple of `a` (> 0) at least `v` (>= 0), or nothing when
/// it does not fit in 64 bits.
inline std::optional<int64_t> alignTo(int64_t v, int64_t a) {
  return checkedMul(ceilDiv(v, a), a);
}

/// The smallest power of two at least `v`, or nothing above 2^62.
inline std::optional<int64_t> powerOfTwoCeil(int64_t v) {
  int64_t p = 1;
  while (p < v) {
    if (p >= (int64_t(1) << 62))
      return std::nullopt;
    p *= 2;
  }
  return p;
}

} // namespace gnnc

#endif // GNNC_PLAN_CHECKED_H
