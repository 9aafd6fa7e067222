// SPDX-License-Identifier: Apache-2.0
// Low-bit conversions checked against values computed here from each format's definition
// (sign, exponent and mantissa fields), on every code, plus rounding ties and saturation.
#include "core/low_bit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace ignis {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A float8/float4 layout written out field by field, independently of src/core/low_bit.cc.
struct Layout {
  DType t;
  int ebits, mbits, bias;
  bool ieee_specials;  // all-ones exponent: inf (mantissa 0), NaN otherwise
  bool fn;             // only the all-ones code (per sign) is NaN
  bool uz;             // 0x80 is NaN, no negative zero
  double max;
};

const Layout kLayouts[] = {
    {DType::F8E4M3FN, 4, 3, 7, false, true, false, 448.0},
    {DType::F8E4M3FNUZ, 4, 3, 8, false, false, true, 240.0},
    {DType::F8E5M2, 5, 2, 15, true, false, false, 57344.0},
    {DType::F8E5M2FNUZ, 5, 2, 16, false, false, true, 57344.0},
    {DType::F4E2M1, 2, 1, 1, false, false, false, 6.0},
};

double expected_value(const Layout& l, unsigned code) {
  const unsigned sign = (code >> (l.ebits + l.mbits)) & 1u;
  const unsigned e = (code >> l.mbits) & ((1u << l.ebits) - 1);
  const unsigned m = code & ((1u << l.mbits) - 1);
  const unsigned e_ones = (1u << l.ebits) - 1, m_ones = (1u << l.mbits) - 1;
  if (l.uz && code == 0x80) return kNaN;
  if (l.fn && e == e_ones && m == m_ones) return kNaN;
  if (l.ieee_specials && e == e_ones) return m == 0 ? (sign ? -kInf : kInf) : kNaN;
  const double frac = static_cast<double>(m) / static_cast<double>(1u << l.mbits);
  const double mag = e == 0 ? frac * std::pow(2.0, 1 - l.bias) : (1.0 + frac) * std::pow(2.0, static_cast<int>(e) - l.bias);
  return sign ? -mag : mag;
}

int code_count(const Layout& l) { return 1 << (1 + l.ebits + l.mbits); }

TEST(LowBit, DecodesEveryFloatCodeFromItsFields) {
  for (const Layout& l : kLayouts) {
    for (int c = 0; c < code_count(l); ++c) {
      const double want = expected_value(l, static_cast<unsigned>(c));
      const double got = low_bit_float_to_float(l.t, static_cast<uint8_t>(c));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << dtype_name(l.t) << " code " << c;
      } else {
        EXPECT_EQ(got, want) << dtype_name(l.t) << " code " << c;
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << dtype_name(l.t) << " code " << c;
      }
    }
  }
}

TEST(LowBit, LargestFiniteValuesMatchTheSpec) {
  for (const Layout& l : kLayouts) {
    double largest = 0;
    for (int c = 0; c < code_count(l); ++c) {
      const double v = expected_value(l, static_cast<unsigned>(c));
      if (std::isfinite(v)) largest = std::max(largest, v);
    }
    EXPECT_EQ(largest, l.max) << dtype_name(l.t);
  }
}

TEST(LowBit, EveryFiniteCodeEncodesBackToItself) {
  for (const Layout& l : kLayouts) {
    for (int c = 0; c < code_count(l); ++c) {
      const double v = expected_value(l, static_cast<unsigned>(c));
      if (!std::isfinite(v)) continue;
      for (bool saturate : {true, false}) {
        const uint8_t back = low_bit_float_from_double(l.t, v, saturate);
        const int want = l.uz && c == 0x80 ? 0 : c;
        EXPECT_EQ(back, want) << dtype_name(l.t) << " code " << c << " saturate " << saturate;
      }
    }
  }
}

// Between two neighbours the midpoint goes to the one with the even mantissa; anything off
// the midpoint goes to the nearer one.
TEST(LowBit, RoundsToNearestWithTiesToEven) {
  for (const Layout& l : kLayouts) {
    const int half = code_count(l) / 2;
    for (int c = 0; c + 1 < half; ++c) {
      const double lo = expected_value(l, static_cast<unsigned>(c));
      const double hi = expected_value(l, static_cast<unsigned>(c + 1));
      if (!std::isfinite(lo) || !std::isfinite(hi)) continue;
      const double mid = (lo + hi) / 2;
      const int even = (c % 2 == 0) ? c : c + 1;
      EXPECT_EQ(low_bit_float_from_double(l.t, mid), even) << dtype_name(l.t) << " between codes " << c;
      const double step = (hi - lo) / 16;
      EXPECT_EQ(low_bit_float_from_double(l.t, mid - step), c) << dtype_name(l.t) << " below mid " << c;
      EXPECT_EQ(low_bit_float_from_double(l.t, mid + step), c + 1) << dtype_name(l.t) << " above mid " << c;
      const int neg = c | half;
      const int neg_even = (even == c ? c : c + 1) | half;
      const uint8_t got = low_bit_float_from_double(l.t, -mid);
      if (!(l.uz && even == 0)) {
        EXPECT_EQ(got, neg_even) << dtype_name(l.t) << " negative midpoint " << c;
      }
      EXPECT_EQ(low_bit_float_from_double(l.t, -(mid + step)), (c + 1) | half) << dtype_name(l.t) << " " << neg;
    }
  }
}

TEST(LowBit, SaturatesOrOverflowsAsTheCastTablesSay) {
  // saturate = 1: infinities and values past the largest finite value become +-max.
  for (const Layout& l : kLayouts) {
    for (double x : {kInf, 1e9, l.max * 1.2}) {
      EXPECT_EQ(low_bit_to_double(l.t, low_bit_float_from_double(l.t, x, true)), l.max) << dtype_name(l.t);
      EXPECT_EQ(low_bit_to_double(l.t, low_bit_float_from_double(l.t, -x, true)), -l.max) << dtype_name(l.t);
    }
    EXPECT_TRUE(std::isnan(low_bit_to_double(l.t, low_bit_float_from_double(l.t, kNaN, true))) || l.t == DType::F4E2M1);
  }
  // saturate = 0.
  EXPECT_EQ(low_bit_float_from_double(DType::F8E4M3FN, kInf, false), 0x7F);
  EXPECT_EQ(low_bit_float_from_double(DType::F8E4M3FN, -kInf, false), 0xFF);
  EXPECT_EQ(low_bit_float_from_double(DType::F8E4M3FN, 470.0, false), 0x7F);  // [x] = 480 > 448
  EXPECT_EQ(low_bit_float_from_double(DType::F8E4M3FN, 464.0, false), 0x7E);  // tie back to 448
  EXPECT_EQ(low_bit_float_from_double(DType::F8E5M2, kInf, false), 0x7C);
  EXPECT_EQ(low_bit_float_from_double(DType::F8E5M2, -kInf, false), 0xFC);
  EXPECT_EQ(low_bit_float_from_double(DType::F8E5M2, 61440.0, false), 0x7C);  // tie rounds up to 2^16
  EXPECT_EQ(low_bit_float_from_double(DType::F8E5M2, 61439.0, false), 0x7B);
  for (DType t : {DType::F8E4M3FNUZ, DType::F8E5M2FNUZ}) {
    EXPECT_EQ(low_bit_float_from_double(t, kInf, false), 0x80);
    EXPECT_EQ(low_bit_float_from_double(t, -kInf, false), 0x80);
    EXPECT_EQ(low_bit_float_from_double(t, -kNaN, false), 0x80);
    EXPECT_EQ(low_bit_float_from_double(t, 1e6, false), 0x80);
  }
  // Float4e2m1 has no flag and always saturates.
  EXPECT_EQ(low_bit_float_from_double(DType::F4E2M1, 9.0, false), 0x7);
  EXPECT_EQ(low_bit_float_from_double(DType::F4E2M1, -kInf, false), 0xF);
}

TEST(LowBit, NegativeZeroExistsOnlyOutsideFnuz) {
  EXPECT_EQ(low_bit_float_from_double(DType::F8E4M3FN, -0.0), 0x80);
  EXPECT_EQ(low_bit_float_from_double(DType::F8E5M2, -1e-30), 0x80);
  EXPECT_EQ(low_bit_float_from_double(DType::F8E4M3FNUZ, -0.0), 0x00);
  EXPECT_EQ(low_bit_float_from_double(DType::F8E5M2FNUZ, -1e-30), 0x00);
  EXPECT_EQ(low_bit_float_from_double(DType::F4E2M1, -0.0), 0x8);
}

TEST(LowBit, E8M0DecodesPowersOfTwo) {
  for (int c = 0; c < 255; ++c)
    EXPECT_EQ(static_cast<double>(low_bit_float_to_float(DType::F8E8M0, static_cast<uint8_t>(c))), std::ldexp(1.0, c - 127));
  EXPECT_TRUE(std::isnan(low_bit_float_to_float(DType::F8E8M0, 0xFF)));
}

TEST(LowBit, E8M0RoundingModes) {
  using R = E8M0Rounding;
  auto enc = [](double x, R r, bool saturate = true) { return low_bit_float_from_double(DType::F8E8M0, x, saturate, r); };
  EXPECT_EQ(enc(2.0, R::Up), 128);
  EXPECT_EQ(enc(2.0, R::Down), 128);
  EXPECT_EQ(enc(2.0, R::Nearest), 128);
  EXPECT_EQ(enc(2.5, R::Up), 129);
  EXPECT_EQ(enc(2.5, R::Down), 128);
  EXPECT_EQ(enc(2.5, R::Nearest), 128);
  EXPECT_EQ(enc(3.0, R::Nearest), 129);  // half-way between 2 and 4 in mantissa terms rounds up
  EXPECT_EQ(enc(3.5, R::Down), 128);
  EXPECT_EQ(enc(kInf, R::Up), 0xFF);
  EXPECT_EQ(enc(kNaN, R::Nearest), 0xFF);
  const double big = std::numeric_limits<float>::max();
  EXPECT_EQ(enc(big, R::Up, true), 254);
  EXPECT_EQ(enc(big, R::Up, false), 255);
  EXPECT_EQ(enc(big, R::Nearest, true), 254);
  EXPECT_EQ(enc(0.0, R::Up), 0);
}

TEST(LowBit, IntegersWrapAndSignExtend) {
  EXPECT_EQ(static_cast<int8_t>(low_bit_int_from_int64(DType::I4, -9)), 7);
  EXPECT_EQ(static_cast<int8_t>(low_bit_int_from_int64(DType::I4, 8)), -8);
  EXPECT_EQ(static_cast<int8_t>(low_bit_int_from_int64(DType::I4, 15)), -1);
  EXPECT_EQ(low_bit_int_from_int64(DType::U4, -1), 15);
  EXPECT_EQ(low_bit_int_from_int64(DType::U4, 16), 0);
  EXPECT_EQ(static_cast<int8_t>(low_bit_int_from_int64(DType::I2, 2)), -2);
  EXPECT_EQ(static_cast<int8_t>(low_bit_int_from_int64(DType::I2, -3)), 1);
  EXPECT_EQ(low_bit_int_from_int64(DType::U2, 5), 1);
  for (DType t : {DType::I4, DType::U4, DType::I2, DType::U2})
    for (int64_t v = low_bit_int_min(t); v <= low_bit_int_max(t); ++v)
      EXPECT_EQ(low_bit_int_to_int64(t, low_bit_int_from_int64(t, v)), v) << dtype_name(t);
  EXPECT_EQ(low_bit_int_min(DType::I4), -8);
  EXPECT_EQ(low_bit_int_max(DType::U2), 3);
}

TEST(LowBit, PacksLowBitsFirst) {
  const std::vector<int8_t> i4 = {1, -1, 7, -8, 3};
  std::vector<uint8_t> packed(low_bit_packed_bytes(DType::I4, 5));
  ASSERT_EQ(packed.size(), 3u);
  low_bit_pack(DType::I4, reinterpret_cast<const uint8_t*>(i4.data()), 5, packed.data());
  EXPECT_EQ(packed, (std::vector<uint8_t>{0xF1, 0x87, 0x03}));
  std::vector<int8_t> back(5);
  low_bit_unpack(DType::I4, packed.data(), 5, reinterpret_cast<uint8_t*>(back.data()));
  EXPECT_EQ(back, i4);

  const std::vector<uint8_t> u2 = {1, 2, 3, 0, 3};
  std::vector<uint8_t> p2(low_bit_packed_bytes(DType::U2, 5));
  ASSERT_EQ(p2.size(), 2u);
  low_bit_pack(DType::U2, u2.data(), 5, p2.data());
  EXPECT_EQ(p2, (std::vector<uint8_t>{0x39, 0x03}));
  std::vector<uint8_t> b2(5);
  low_bit_unpack(DType::U2, p2.data(), 5, b2.data());
  EXPECT_EQ(b2, u2);

  const std::vector<uint8_t> i2_packed = {0xE4};  // 0, 1, -2, -1
  std::vector<int8_t> i2(4);
  low_bit_unpack(DType::I2, i2_packed.data(), 4, reinterpret_cast<uint8_t*>(i2.data()));
  EXPECT_EQ(i2, (std::vector<int8_t>{0, 1, -2, -1}));
  EXPECT_EQ(low_bit_packed_bytes(DType::F8E5M2, 5), 5u);
  EXPECT_EQ(dtype_size(DType::I4), 1u);
  EXPECT_EQ(dtype_bits(DType::I4), 4);
}

}  // namespace
}  // namespace ignis
