//===- Float16.h - Host conversions for 16-bit floating point ---*- C++ -*-===//
//
// Exact float <-> IEEE binary16 ("half") and float <-> bfloat16 conversions on
// uint16_t bit patterns, for preparing device inputs and for rounding
// reference data through the precision the GPU sees. Conversions from float
// round to nearest, ties to even; infinities, NaNs and subnormals are handled
// exactly. Header-only.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_RUNTIME_FLOAT16_H
#define GNNC_RUNTIME_FLOAT16_H

#include "gnnc/Plan/Types.h"
#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace gnnc {

namespace detail {
inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
inline float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}
} // namespace detail

/// Converts a float to the nearest IEEE half (round to nearest, ties to
/// even). Values too large for half become infinities; NaNs stay quiet NaNs
/// (keeping the top payload bits).
inline uint16_t floatToHalf(float f) {
  uint32_t x = detail::floatBits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) {
    if (mant == 0)
      return sign | 0x7c00u;
    return static_cast<uint16_t>(sign | 0x7e00u | (mant >> 13));
  }
  int e = static_cast<int>(exp) - 127;
  if (e > 15)
    return sign | 0x7c00u;
  if (e >= -14) {
    // Normal half. Rounding may carry into the exponent (and up to infinity),
    // which the bit layout handles by itself.
    uint32_t result = (static_cast<uint32_t>(e + 15) << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (result & 1u)))
      ++result;
    return static_cast<uint16_t>(sign | result);
  }
  // Subnormal half (or zero). Float subnormals are far below half range.
  if (exp == 0 || e < -25)
    return sign;
  uint32_t m = mant | 0x800000u; // value = m * 2^(e - 23)
  int shift = -e - 1;            // units of 2^-24: m * 2^(e + 1)
  uint32_t result = m >> shift;
  uint32_t rest = m & ((1u << shift) - 1u);
  uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (result & 1u)))
    ++result;
  return static_cast<uint16_t>(sign | result);
}

/// Converts an IEEE half bit pattern to float (exact).
inline float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f)
    return detail::bitsToFloat(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0)
      return detail::bitsToFloat(sign);
    int e = -14;
    while (!(mant & 0x400u)) {
      mant <<= 1;
      --e;
    }
    mant &= 0x3ffu;
    return detail::bitsToFloat(sign | (static_cast<uint32_t>(e + 127) << 23) |
                               (mant << 13));
  }
  return detail::bitsToFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

/// Converts a float to the nearest bfloat16 (round to nearest, ties to even;
/// NaNs stay quiet NaNs).
inline uint16_t floatToBf16(float f) {
  uint32_t x = detail::floatBits(f);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu))
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t bias = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + bias) >> 16);
}

/// Converts a bfloat16 bit pattern to float (exact).
inline float bf16ToFloat(uint16_t b) {
  return detail::bitsToFloat(static_cast<uint32_t>(b) << 16);
}

/// Rounds a float to the nearest half and back.
inline float roundToHalf(float f) { return halfToFloat(floatToHalf(f)); }
/// Rounds a float to the nearest bfloat16 and back.
inline float roundToBf16(float f) { return bf16ToFloat(floatToBf16(f)); }

/// Rounds `value` to the precision of `type` and back to float (identity for
/// F32).
inline float roundToElementType(float value, ElementType type) {
  switch (type) {
  case ElementType::F32:
    return value;
  case ElementType::F16:
    return roundToHalf(value);
  case ElementType::BF16:
    return roundToBf16(value);
  }
  return value;
}

} // namespace gnnc

#endif // GNNC_RUNTIME_FLOAT16_H
