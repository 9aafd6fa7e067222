// SPDX-License-Identifier: Apache-2.0
#include "onnx/type_text.h"

#include <onnx/onnx_pb.h>

#include "core/strings.h"

namespace ignis::onnx_io {
namespace {

// ONNX's own spelling of element types in type strings ("float", not ignis's "float32").
struct ElemName {
  int onnx_type;
  std::string_view name;
};
constexpr ElemName kElemNames[] = {
    {1, "float"},   {2, "uint8"},   {3, "int8"},    {4, "uint16"},   {5, "int16"},  {6, "int32"},
    {7, "int64"},   {8, "string"},  {9, "bool"},    {10, "float16"}, {11, "double"}, {12, "uint32"},
    {13, "uint64"}, {16, "bfloat16"}, {17, "float8e4m3fn"}, {18, "float8e4m3fnuz"}, {19, "float8e5m2"},
    {20, "float8e5m2fnuz"}, {21, "uint4"}, {22, "int4"}, {23, "float4e2m1"}, {24, "float8e8m0"},
    {25, "uint2"}, {26, "int2"},
};

Result<std::string> elem_name(int onnx_type) {
  for (const auto& e : kElemNames)
    if (e.onnx_type == onnx_type) return std::string(e.name);
  return unsupported(str_cat("element type ", onnx_type, " is not supported"));
}

Result<int> elem_type(std::string_view name) {
  for (const auto& e : kElemNames)
    if (e.name == name) return e.onnx_type;
  return invalid_argument(str_cat("unknown element type '", name, "'"));
}

// Recursive-descent reader over `text`, one type at `pos`.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  Status read(onnx::TypeProto* type) {
    if (depth_++ > 16) return fail("nests too deeply");
    const std::string_view word = name();
    if (word == "tensor") {
      IGNIS_RETURN_IF_ERROR(expect('('));
      IGNIS_ASSIGN_OR_RETURN(int t, elem_type(name()));
      type->mutable_tensor_type()->set_elem_type(t);
    } else if (word == "seq") {
      IGNIS_RETURN_IF_ERROR(expect('('));
      IGNIS_RETURN_IF_ERROR(read(type->mutable_sequence_type()->mutable_elem_type()));
    } else if (word == "optional") {
      IGNIS_RETURN_IF_ERROR(expect('('));
      IGNIS_RETURN_IF_ERROR(read(type->mutable_optional_type()->mutable_elem_type()));
    } else if (word == "map") {
      IGNIS_RETURN_IF_ERROR(expect('('));
      IGNIS_ASSIGN_OR_RETURN(int k, elem_type(name()));
      type->mutable_map_type()->set_key_type(k);
      IGNIS_RETURN_IF_ERROR(expect(','));
      IGNIS_RETURN_IF_ERROR(read(type->mutable_map_type()->mutable_value_type()));
    } else {
      return fail(str_cat("unknown type '", word, "'"));
    }
    --depth_;
    return expect(')');
  }

  bool at_end() const { return pos_ == text_.size(); }

 private:
  std::string_view name() {
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '(' && text_[pos_] != ')' && text_[pos_] != ',') ++pos_;
    return text_.substr(start, pos_ - start);
  }
  Status expect(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return Status::ok();
    }
    return fail(str_cat("expected '", std::string(1, c), "' at offset ", pos_));
  }
  Status fail(const std::string& why) const { return invalid_argument(str_cat("type '", text_, "': ", why)); }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<std::string> type_text(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: {
      IGNIS_ASSIGN_OR_RETURN(std::string e, elem_name(type.tensor_type().elem_type()));
      return "tensor(" + e + ")";
    }
    case onnx::TypeProto::kSequenceType: {
      IGNIS_ASSIGN_OR_RETURN(std::string e, type_text(type.sequence_type().elem_type()));
      return "seq(" + e + ")";
    }
    case onnx::TypeProto::kOptionalType: {
      IGNIS_ASSIGN_OR_RETURN(std::string e, type_text(type.optional_type().elem_type()));
      return "optional(" + e + ")";
    }
    case onnx::TypeProto::kMapType: {
      IGNIS_ASSIGN_OR_RETURN(std::string k, elem_name(type.map_type().key_type()));
      IGNIS_ASSIGN_OR_RETURN(std::string v, type_text(type.map_type().value_type()));
      return "map(" + k + "," + v + ")";
    }
    case onnx::TypeProto::kSparseTensorType: return unsupported("sparse tensors are not supported");
    default: return unsupported("the value has no type");
  }
}

Status fill_type(onnx::TypeProto* type, std::string_view text) {
  Reader r(text);
  IGNIS_RETURN_IF_ERROR(r.read(type));
  if (!r.at_end()) return invalid_argument(str_cat("type '", text, "': trailing text"));
  return Status::ok();
}

}  // namespace ignis::onnx_io
