// SPDX-License-Identifier: Apache-2.0
// Scalar conversions for the low-bit ONNX types (float8 x4, float8e8m0, float4e2m1, int4/uint4,
// int2/uint2), following the ONNX Cast spec, and the nibble/crumb packing of their files.
// In memory every element is one byte (see DType); these functions take and return that byte.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ignis/dtype.h"

namespace ignis {

// Cast-24's round_mode for float8e8m0 targets: "up" (the default), "down", "nearest".
enum class E8M0Rounding { Up, Down, Nearest };

// Exact value of a low-bit float code (F8*, F4E2M1, F8E8M0); NaN codes give NaN.
float low_bit_float_to_float(DType t, uint8_t code);

// Rounds x to the nearest code of the float type t, ties to even. With `saturate`, values past
// the largest finite value (infinities included) become it; without, they become infinity
// (E5M2) or NaN (the types without infinity). FNUZ types have no negative zero: -0 gives +0.
// Float4e2m1 always saturates (its conversion has no flag). F8E8M0 follows ONNX's reference:
// it reads the float32 exponent, ignores the sign and rounds by `rounding`.
uint8_t low_bit_float_from_double(DType t, double x, bool saturate = true,
                                  E8M0Rounding rounding = E8M0Rounding::Up);

// The integer types keep the low 4 or 2 bits of v (Cast's rule for out-of-range integers);
// the result is the stored byte: sign-extended for I4/I2.
uint8_t low_bit_int_from_int64(DType t, int64_t v);
int64_t low_bit_int_to_int64(DType t, uint8_t stored);
// Range of the integer types (QuantizeLinear saturates to it).
int64_t low_bit_int_min(DType t);
int64_t low_bit_int_max(DType t);

// Value of any low-bit element as double (exact).
double low_bit_to_double(DType t, uint8_t stored);

// Bytes that n elements of t take in an ONNX file: n for the 8-bit types, ceil(n/2) for the
// 4-bit ones, ceil(n/4) for the 2-bit ones.
size_t low_bit_packed_bytes(DType t, int64_t n);
// Packed (low bits first, as onnx.numpy_helper) to one byte per element, sign-extending the
// signed types; `packed` holds low_bit_packed_bytes(t, n) bytes. For 8-bit types, a copy.
void low_bit_unpack(DType t, const uint8_t* packed, int64_t n, uint8_t* out);
void low_bit_pack(DType t, const uint8_t* unpacked, int64_t n, uint8_t* packed);

}  // namespace ignis
