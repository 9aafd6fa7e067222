// SPDX-License-Identifier: Apache-2.0
// Low-bit float and integer conversions. The float formats are described by their field widths
// and special values; one decoder and one round-to-nearest-even encoder serve them all.
// Semantics: ONNX Cast-25 (tables for saturate), and onnx's reference (ml_dtypes) where the spec
// is silent (NaN into float4e2m1, float8e8m0 rounding).
#include "core/low_bit.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/half.h"

namespace ignis {
namespace {

enum class Special {
  Ieee,      // all-ones exponent: infinity (mantissa 0) or NaN (E5M2)
  AllOnes,   // only S.1111.111 is NaN, no infinity (E4M3FN)
  NegZero,   // the -0 code 0x80 is the only NaN, no infinity, no -0 (FNUZ)
  None,      // no NaN, no infinity (E2M1)
};

struct MiniFloat {
  int ebits;
  int mbits;
  int bias;
  Special special;
  double max;  // largest finite value
};

MiniFloat format_of(DType t) {
  switch (t) {
    case DType::F8E4M3FN: return {4, 3, 7, Special::AllOnes, 448.0};
    case DType::F8E4M3FNUZ: return {4, 3, 8, Special::NegZero, 240.0};
    case DType::F8E5M2: return {5, 2, 15, Special::Ieee, 57344.0};
    case DType::F8E5M2FNUZ: return {5, 2, 16, Special::NegZero, 57344.0};
    case DType::F4E2M1: return {2, 1, 1, Special::None, 6.0};
    default: std::abort();  // callers pass low-bit float types only
  }
}

uint8_t sign_bit(const MiniFloat& f) { return static_cast<uint8_t>(1u << (f.ebits + f.mbits)); }

uint8_t nan_code(const MiniFloat& f, bool negative) {
  const uint8_t s = negative ? sign_bit(f) : 0;
  switch (f.special) {
    case Special::Ieee: return static_cast<uint8_t>(s | 0x7E);  // quiet NaN, as ml_dtypes makes it
    case Special::AllOnes: return static_cast<uint8_t>(s | 0x7F);
    case Special::NegZero: return 0x80;
    case Special::None: return negative ? 0x0 : 0x8;  // ml_dtypes' float4e2m1 result for NaN
  }
  return 0;
}

// Code of the finite magnitude a (already a value of the format: a multiple of its quantum).
uint8_t encode_exact(const MiniFloat& f, double a) {
  const int emin = 1 - f.bias;
  if (a < std::ldexp(1.0, emin)) return static_cast<uint8_t>(std::ldexp(a, f.mbits - emin));  // subnormal
  int e = 0;
  std::frexp(a, &e);
  --e;  // a = 1.m * 2^e
  const auto mant = static_cast<int>(std::ldexp(a, f.mbits - e)) - (1 << f.mbits);
  return static_cast<uint8_t>(((e + f.bias) << f.mbits) | mant);
}

uint8_t minifloat_from_double(const MiniFloat& f, double x, bool saturate) {
  const bool neg = std::signbit(x);
  if (std::isnan(x)) return nan_code(f, neg);
  const uint8_t s = neg ? sign_bit(f) : 0;
  const uint8_t max_code = encode_exact(f, f.max);
  auto overflow = [&]() -> uint8_t {
    if (saturate || f.special == Special::None) return static_cast<uint8_t>(s | max_code);
    if (f.special == Special::Ieee) return static_cast<uint8_t>(s | (((1 << f.ebits) - 1) << f.mbits));
    return nan_code(f, neg);
  };
  const double a = std::fabs(x);
  if (std::isinf(a)) return overflow();
  // Round to a multiple of the quantum of a's binade (the subnormal quantum below the normal
  // range); the division and the product are exact, as they scale by powers of two.
  int e = 0;
  std::frexp(a, &e);
  e = std::max(e - 1, 1 - f.bias);
  const double q = std::nearbyint(std::ldexp(a, f.mbits - e));
  const double r = std::ldexp(q, e - f.mbits);
  if (r > f.max) return overflow();
  if (r == 0) return f.special == Special::NegZero ? 0 : s;
  return static_cast<uint8_t>(s | encode_exact(f, r));
}

// onnx.numpy_helper.to_float8e8m0: works on the float32 exponent, the sign is dropped.
uint8_t e8m0_from_float(float x, bool saturate, E8M0Rounding rounding) {
  const uint32_t bits = float_to_bits(x);
  uint32_t exp = (bits >> 23) & 0xFF;
  if (exp == 0xFF) return 0xFF;
  bool up = false;
  switch (rounding) {
    case E8M0Rounding::Up: up = (bits & 0x7FFFFF) != 0; break;
    case E8M0Rounding::Down: break;
    case E8M0Rounding::Nearest: {
      // Half-way rounds up for normal inputs; for subnormals only strictly above half.
      const bool guard = (bits & 0x400000) != 0;
      const bool rest = (bits & 0x3FFFFF) != 0;
      up = guard && (rest || exp > 0);
      break;
    }
  }
  if (up && saturate && exp == 0xFE) up = false;
  return static_cast<uint8_t>(exp + (up ? 1 : 0));
}

int int_bits(DType t) { return DTypeSet::int4().contains(t) ? 4 : 2; }
bool int_signed(DType t) { return t == DType::I4 || t == DType::I2; }

}  // namespace

float low_bit_float_to_float(DType t, uint8_t code) {
  if (t == DType::F8E8M0) {
    if (code == 0xFF) return std::numeric_limits<float>::quiet_NaN();
    return std::ldexp(1.0f, static_cast<int>(code) - 127);
  }
  const MiniFloat f = format_of(t);
  const bool neg = (code & sign_bit(f)) != 0;
  const int exp = (code >> f.mbits) & ((1 << f.ebits) - 1);
  const int mant = code & ((1 << f.mbits) - 1);
  const int exp_ones = (1 << f.ebits) - 1;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  switch (f.special) {
    case Special::Ieee:
      if (exp == exp_ones) return mant ? nan : (neg ? -INFINITY : INFINITY);
      break;
    case Special::AllOnes:
      if (exp == exp_ones && mant == (1 << f.mbits) - 1) return nan;
      break;
    case Special::NegZero:
      if (code == 0x80) return nan;
      break;
    case Special::None: break;
  }
  const float v = exp == 0 ? std::ldexp(static_cast<float>(mant), 1 - f.bias - f.mbits)
                           : std::ldexp(static_cast<float>(mant + (1 << f.mbits)), exp - f.bias - f.mbits);
  return neg ? -v : v;
}

uint8_t low_bit_float_from_double(DType t, double x, bool saturate, E8M0Rounding rounding) {
  if (t == DType::F8E8M0) return e8m0_from_float(static_cast<float>(x), saturate, rounding);
  return minifloat_from_double(format_of(t), x, saturate);
}

uint8_t low_bit_int_from_int64(DType t, int64_t v) {
  const int n = int_bits(t);
  auto low = static_cast<uint8_t>(static_cast<uint64_t>(v) & ((1u << n) - 1));
  if (int_signed(t) && (low >> (n - 1)) != 0) low = static_cast<uint8_t>(low | (0xFFu << n));
  return low;
}

int64_t low_bit_int_to_int64(DType t, uint8_t stored) {
  return int_signed(t) ? static_cast<int64_t>(static_cast<int8_t>(stored)) : static_cast<int64_t>(stored);
}

int64_t low_bit_int_min(DType t) { return int_signed(t) ? -(int64_t{1} << (int_bits(t) - 1)) : 0; }
int64_t low_bit_int_max(DType t) {
  return int_signed(t) ? (int64_t{1} << (int_bits(t) - 1)) - 1 : (int64_t{1} << int_bits(t)) - 1;
}

double low_bit_to_double(DType t, uint8_t stored) {
  if (dtype_is_low_bit_float(t)) return static_cast<double>(low_bit_float_to_float(t, stored));
  return static_cast<double>(low_bit_int_to_int64(t, stored));
}

size_t low_bit_packed_bytes(DType t, int64_t n) {
  const auto count = static_cast<size_t>(n);
  const int bits = dtype_bits(t);
  return (count * static_cast<size_t>(bits) + 7) / 8;
}

void low_bit_unpack(DType t, const uint8_t* packed, int64_t n, uint8_t* out) {
  const int bits = dtype_bits(t);
  if (bits == 8) {
    if (n > 0) std::memcpy(out, packed, static_cast<size_t>(n));
    return;
  }
  const int per_byte = 8 / bits;
  const unsigned mask = (1u << bits) - 1;
  const bool sign_extend = int_signed(t);
  for (int64_t i = 0; i < n; ++i) {
    auto v = static_cast<uint8_t>((packed[i / per_byte] >> (bits * (i % per_byte))) & mask);
    if (sign_extend && (v >> (bits - 1)) != 0) v = static_cast<uint8_t>(v | (0xFFu << bits));
    out[i] = v;
  }
}

void low_bit_pack(DType t, const uint8_t* unpacked, int64_t n, uint8_t* packed) {
  const int bits = dtype_bits(t);
  if (bits == 8) {
    if (n > 0) std::memcpy(packed, unpacked, static_cast<size_t>(n));
    return;
  }
  const int per_byte = 8 / bits;
  const unsigned mask = (1u << bits) - 1;
  std::memset(packed, 0, low_bit_packed_bytes(t, n));
  for (int64_t i = 0; i < n; ++i)
    packed[i / per_byte] = static_cast<uint8_t>(packed[i / per_byte] | ((unpacked[i] & mask) << (bits * (i % per_byte))));
}

}  // namespace ignis
