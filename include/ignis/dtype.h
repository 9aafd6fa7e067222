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
};

// Bytes per element; 0 for Undefined and String (strings are not stored as plain buffers).
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

 private:
  static constexpr uint32_t bit(DType t) { return uint32_t{1} << static_cast<int>(t); }
  static constexpr DTypeSet from_bits(uint32_t b) {
    DTypeSet s;
    s.bits_ = b;
    return s;
  }
  uint32_t bits_ = 0;
};

}  // namespace ignis
