//===- Float16Test.cpp - half / bfloat16 conversions ----------------------===//

#include "gnnc/runtime/Float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace gnnc;

namespace {

bool isHalfNan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); }
bool isBf16Nan(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f); }

TEST(Float16Test, HalfRoundTripsAllPatterns) {
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t h = static_cast<uint16_t>(i);
    float f = halfToFloat(h);
    if (isHalfNan(h)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << i;
      EXPECT_TRUE(isHalfNan(floatToHalf(f))) << std::hex << i;
      continue;
    }
    EXPECT_EQ(floatToHalf(f), h) << "pattern 0x" << std::hex << i;
  }
}

TEST(Float16Test, HalfKnownValues) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(0.5f), 0x3800);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(6.103515625e-05f), 0x0400);        // smallest normal
  EXPECT_EQ(floatToHalf(5.9604644775390625e-08f), 0x0001); // 2^-24
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_TRUE(isHalfNan(floatToHalf(std::nanf(""))));
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalf(1e-10f), 0x0000);
  EXPECT_EQ(floatToHalf(-1e-10f), 0x8000);
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x03ff), std::ldexp(1023.0f, -24));
}

TEST(Float16Test, HalfOverflowBoundary) {
  // 65520 is halfway between 65504 and 65536 (= inf): ties to even -> inf.
  EXPECT_EQ(floatToHalf(65519.996f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalf(-65520.0f), 0xfc00);
}

TEST(Float16Test, HalfSubnormalBoundary) {
  float tiny = std::ldexp(1.0f, -25); // halfway between 0 and 2^-24
  EXPECT_EQ(floatToHalf(tiny), 0x0000);
  EXPECT_EQ(floatToHalf(std::nextafter(tiny, 1.0f)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002); // 1.5 ulp: to even
  EXPECT_EQ(floatToHalf(std::ldexp(5.0f, -25)), 0x0002); // 2.5 ulp: to even
}

// For every pair of adjacent finite halves, the midpoint (exact in float)
// rounds to the even one, and its float neighbours round to the nearer one.
TEST(Float16Test, HalfTiesToEvenEverywhere) {
  for (uint32_t i = 0; i < 0x7bff; ++i) {
    for (uint32_t sign : {0u, 0x8000u}) {
      uint16_t lo = static_cast<uint16_t>(i | sign);
      uint16_t hi = static_cast<uint16_t>((i + 1) | sign);
      float mid = (halfToFloat(lo) + halfToFloat(hi)) / 2;
      uint16_t even = (lo & 1) ? hi : lo;
      ASSERT_EQ(floatToHalf(mid), even) << std::hex << i;
      float towardLo = std::nextafter(mid, halfToFloat(lo));
      float towardHi = std::nextafter(mid, halfToFloat(hi));
      ASSERT_EQ(floatToHalf(towardLo), lo) << std::hex << i;
      ASSERT_EQ(floatToHalf(towardHi), hi) << std::hex << i;
    }
  }
}

TEST(Float16Test, Bf16RoundTripsAllPatterns) {
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t b = static_cast<uint16_t>(i);
    float f = bf16ToFloat(b);
    if (isBf16Nan(b)) {
      EXPECT_TRUE(std::isnan(f));
      EXPECT_TRUE(isBf16Nan(floatToBf16(f)));
      continue;
    }
    EXPECT_EQ(floatToBf16(f), b) << std::hex << i;
  }
}

TEST(Float16Test, Bf16KnownValuesAndTies) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(-2.0f), 0xc000);
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_TRUE(isBf16Nan(floatToBf16(std::nanf(""))));
  // A NaN whose payload lies only in the low bits must stay NaN.
  uint32_t lowNan = 0x7f800001;
  float f;
  std::memcpy(&f, &lowNan, 4);
  EXPECT_TRUE(isBf16Nan(floatToBf16(f)));
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: to even (0x3f82).
  EXPECT_EQ(floatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(floatToBf16(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)),
            0x3f81);
  // Largest finite float rounds to infinity.
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::max()), 0x7f80);
  // Subnormals round correctly too.
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(floatToBf16(std::ldexp(1.0f, -133)), 0x0001);
}

TEST(Float16Test, ElementTypes) {
  EXPECT_EQ(elementSize(ElementType::F32), 4u);
  EXPECT_EQ(elementSize(ElementType::F16), 2u);
  EXPECT_EQ(elementSize(ElementType::BF16), 2u);
  EXPECT_STREQ(elementTypeName(ElementType::BF16), "bf16");
  for (ElementType t :
       {ElementType::F32, ElementType::F16, ElementType::BF16}) {
    Expected<ElementType> parsed = parseElementType(elementTypeName(t));
    ASSERT_TRUE(parsed.isOk());
    EXPECT_EQ(*parsed, t);
  }
  Expected<ElementType> bad = parseElementType("f64");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.message().find("f64"), std::string::npos);
  EXPECT_EQ(roundToElementType(0.1f, ElementType::F32), 0.1f);
  EXPECT_EQ(roundToElementType(0.1f, ElementType::F16), halfToFloat(0x2e66));
}

} // namespace
