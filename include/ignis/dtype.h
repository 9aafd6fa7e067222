// SPDX-License-Identifier: Apache-2.0
// Element types. Values match ONNX TensorProto.DataType so conversion is a cast.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ignis {

enum class DType : int32_t {
  Undefined = 0,
  F32 = 1,
  U8 = 2,
  I8 = 3,
  U16 = 4,
  I16 = 5,
  I32 = 6,
  I64 = 7,
  String = 8,
  Bool = 9,
  F16 = 10,
  F64 = 11,
  U32 = 12,
  U64 = 13,
  BF16 = 16,
  // Low-bit types. In memory each element takes one byte: the float8 and float4 codes as
  // they are, int4/int2 sign-extended in an int8, uint4/uint2 in a uint8. Only files and
  // protobufs pack the 4- and 2-bit types (low bits first).
  F8E4M3FN = 17,
  F8E4M3FNUZ = 18,
  F8E5M2 = 19,
  F8E5M2FNUZ = 20,
  U4 = 21,
  I4 = 22,
  F4E2M1 = 23,
  F8E8M0 = 24,
  U2 = 25,
  I2 = 26,
  // ONNX's non-tensor values, carried in a Tensor handle whose data is the container (see
  // ignis/tensor.h). These numbers are ignis's own; ONNX has no DataType for them.
  Sequence = 40,  // seq(T): an ordered list of tensors of one element type
  Optional = 41,  // optional(T): a tensor, a sequence, or nothing
  Map = 42,       // map(K, V): keys (int64 or string) and a value tensor, as ZipMap emits
};

// The arithmetic a session's float32 GEMMs run in (SessionOptions::precision). Bf16 rounds
// weights and activations to bfloat16 and sums the products in float32, on CPUs with
// AVX512_BF16; elsewhere, and for every other op, float32. F16 stores the constant weights of
// MatMul, Gemm and FusedMatMul as IEEE half (rounded to nearest even when packed, half the
// bytes to stream) and computes in float32, on CPUs with F16C; everything else (activations,
// convolutions, other ops) runs as with F32.
enum class Precision { F32, Bf16, F16 };

// Bytes per element; 0 for Undefined, String and the containers (not stored as plain buffers).
size_t dtype_size(DType t);
// ONNX-style lowercase name: "float32", "int64", "bool"...
std::string_view dtype_name(DType t);
// Inverse of dtype_name; also accepts numpy spellings ("float32", "<f4" is not accepted).
std::optional<DType> dtype_from_name(std::string_view name);
// Maps an ONNX TensorProto.DataType number; nullopt for types ignis does not represent.
std::optional<DType> dtype_from_onnx(int32_t onnx_type);

bool dtype_is_float(DType t);    // F16, BF16, F32, F64
bool dtype_is_integer(DType t);  // signed or unsigned integers (not Bool)
bool dtype_is_signed(DType t);   // signed integers and floats
bool dtype_is_low_bit(DType t);        // the float8, float4, 4-bit and 2-bit integer types
bool dtype_is_low_bit_float(DType t);  // the float8 and float4 types
bool dtype_is_container(DType t);      // Sequence, Optional, Map
// True for the types a tensor holds as a flat buffer of dtype_size bytes per element: every
// type but Undefined, String and the containers. Values of other types live in objects
// (std::string elements, container structs) that only the kernels made for them touch.
bool dtype_is_plain(DType t);
// Bits per element in the ONNX encoding: 8 * dtype_size for most types, 4 or 2 for the packed ones.
int dtype_bits(DType t);

// A small set of dtypes, used by kernel registrations and type constraints.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> types) {
    for (DType t : types) bits_ |= bit(t);
  }
  constexpr bool contains(DType t) const { return (bits_ & bit(t)) != 0; }
  constexpr DTypeSet operator|(DTypeSet o) const { return from_bits(bits_ | o.bits_); }
  constexpr bool empty() const { return bits_ == 0; }

  static constexpr DTypeSet floats() { return {DType::F32, DType::F64, DType::F16, DType::BF16}; }
  static constexpr DTypeSet signed_ints() { return {DType::I8, DType::I16, DType::I32, DType::I64}; }
  static constexpr DTypeSet unsigned_ints() { return {DType::U8, DType::U16, DType::U32, DType::U64}; }
  static constexpr DTypeSet ints() { return signed_ints() | unsigned_ints(); }
  static constexpr DTypeSet numeric() { return floats() | ints(); }
  static constexpr DTypeSet all() { return numeric() | DTypeSet{DType::Bool}; }
  static constexpr DTypeSet float8() {
    return {DType::F8E4M3FN, DType::F8E4M3FNUZ, DType::F8E5M2, DType::F8E5M2FNUZ};
  }
  static constexpr DTypeSet int4() { return {DType::I4, DType::U4}; }
  static constexpr DTypeSet int2() { return {DType::I2, DType::U2}; }
  static constexpr DTypeSet low_bit() {
    return float8() | int4() | int2() | DTypeSet{DType::F4E2M1, DType::F8E8M0};
  }
  // Every type a tensor can hold as a plain buffer: what data-movement ops accept.
  static constexpr DTypeSet storable() { return all() | low_bit(); }
  static constexpr DTypeSet containers() { return {DType::Sequence, DType::Optional, DType::Map}; }

 private:
  static constexpr uint64_t bit(DType t) { return uint64_t{1} << static_cast<int>(t); }
  static constexpr DTypeSet from_bits(uint64_t b) {
    DTypeSet s;
    s.bits_ = b;
    return s;
  }
  uint64_t bits_ = 0;
};

}  // namespace ignis
