// SPDX-License-Identifier: Apache-2.0
// IEEE binary16 and bfloat16 <-> float conversion (round to nearest even), portable code.
#pragma once

#include <cstdint>
#include <cstring>

namespace ignis {

inline float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t float_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t man = h & 0x3ff;
  if (exp == 0) {
    // zero or subnormal: man * 2^-24
    float v = static_cast<float>(man) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (exp == 31) return bits_to_float(sign | 0x7f800000u | (man << 13));
  return bits_to_float(sign | ((exp + 112) << 23) | (man << 13));
}

inline uint16_t float_to_half(float f) {
  uint32_t x = float_to_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00 | (x > 0x7f800000u ? 0x200 : 0));
  }
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00);  // rounds to inf
  if (x < 0x38800000u) {
    // subnormal half (or zero): scale so that rounding happens at 2^-24
    float v = bits_to_float(x) * 16777216.0f;  // 2^24
    // nearbyint with ties-to-even via the float add trick
    float r = (v + 12582912.0f) - 12582912.0f;
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(r));
  }
  uint32_t mant_odd = (x >> 13) & 1;
  x += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
  return static_cast<uint16_t>(sign | (x >> 13));
}

inline float bf16_to_float(uint16_t b) { return bits_to_float(static_cast<uint32_t>(b) << 16); }

inline uint16_t float_to_bf16(float f) {
  uint32_t x = float_to_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

// Storage types so templates can tell fp16/bf16 apart from uint16_t.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

}  // namespace ignis
