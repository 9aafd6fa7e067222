// SPDX-License-Identifier: Apache-2.0
#include "core/label_encoder.h"

#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/strings.h"

namespace ignis {

namespace {

using Kind = Attribute::Kind;

// The key and value types of version 4 (versions 2 and 3 have the first three only).
constexpr DTypeSet kTypes = {DType::String, DType::I64, DType::F32, DType::I32, DType::I16, DType::F64};

Status expect_kind(const AttrMap& attrs, std::string_view name, Kind kind) {
  if (const Attribute* a = attrs.find(name); a && a->kind != kind)
    return invalid_argument(
        str_cat("attribute '", name, "' must be ", attribute_kind_name(kind), ", got ", attribute_kind_name(a->kind)));
  return Status::ok();
}

Tensor strings_tensor(const std::vector<std::string>& v) {
  Tensor t = Tensor::empty(DType::String, Shape{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data_as<std::string>()[i] = v[i];
  return t;
}

template <class T>
Tensor plain_tensor(const std::vector<T>& v) {
  Tensor t = Tensor::empty(dtype_of<T>(), Shape{static_cast<int64_t>(v.size())});
  if (!v.empty()) std::memcpy(t.data(), v.data(), v.size() * sizeof(T));
  return t;
}

Tensor iota_i64(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return plain_tensor(v);
}

// The one attribute of `prefix`_strings, _int64s, _floats (and _tensor from version 4) present,
// as a 1-D tensor, and its name.
Result<Tensor> read_column(const AttrMap& attrs, const std::string& prefix, int64_t version, std::string& name) {
  const std::array<std::pair<std::string, Kind>, 4> forms = {{{prefix + "strings", Kind::Strings},
                                                              {prefix + "int64s", Kind::Ints},
                                                              {prefix + "floats", Kind::Floats},
                                                              {prefix + "tensor", Kind::Tensor}}};
  const size_t count = version >= 4 ? 4 : 3;
  std::vector<std::string> present;
  for (size_t k = 0; k < count; ++k) {
    IGNIS_RETURN_IF_ERROR(expect_kind(attrs, forms[k].first, forms[k].second));
    if (attrs.has(forms[k].first)) present.push_back("'" + forms[k].first + "'");
  }
  if (present.size() != 1) {
    std::vector<std::string> all;
    for (size_t k = 0; k < count; ++k) all.push_back("'" + forms[k].first + "'");
    return invalid_argument(str_cat("exactly one of the attributes ", str_join(all), " must be given, got ",
                                    present.empty() ? "none" : str_join(present)));
  }
  name = present[0].substr(1, present[0].size() - 2);
  const Attribute& a = *attrs.find(name);
  switch (a.kind) {
    case Kind::Strings: return strings_tensor(a.strings);
    case Kind::Ints: return plain_tensor(a.ints);
    case Kind::Floats: return plain_tensor(a.floats);
    default: break;
  }
  if (!kTypes.contains(a.t.dtype()))
    return invalid_argument(str_cat("attribute '", name, "' must hold string, int64, int32, int16, float or double, ",
                                    "got ", dtype_name(a.t.dtype())));
  if (a.t.rank() != 1) return invalid_argument(str_cat("attribute '", name, "' must be 1-D, got ", a.t.shape().str()));
  return a.t;
}

// What keys missing from the table map to: default_tensor (version 4), else the default_*
// attribute of the values' kind, else ONNX's defaults ("_Unused", -1, -0.0).
Result<Tensor> read_default(const AttrMap& attrs, int64_t version, DType type) {
  if (version >= 4 && attrs.has("default_tensor")) {
    const Tensor& d = attrs.find("default_tensor")->t;
    if (d.numel() != 1 || d.dtype() != type)
      return invalid_argument(str_cat("attribute 'default_tensor' must hold one ", dtype_name(type),
                                      " value (the values' type), got ", d.type_string()));
    return d.reshaped(Shape{1});
  }
  if (type == DType::String) return strings_tensor({attrs.get_string("default_string", "_Unused")});
  Tensor t = Tensor::empty(type, Shape{1});
  visit_dtype(type, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;  // float for float16/bfloat16, which convert only from float
    if constexpr (std::is_floating_point_v<C>)
      *t.data_as<T>() = from_compute<T>(static_cast<C>(attrs.get_float("default_float", -0.0f)));
    else
      *t.data_as<T>() = static_cast<T>(attrs.get_int("default_int64", -1));
  });
  return t;
}

}  // namespace

Result<LabelEncoderTable> read_label_encoder(const AttrMap& attrs, int64_t version, DType input) {
  IGNIS_RETURN_IF_ERROR(expect_kind(attrs, "default_int64", Kind::Int));
  IGNIS_RETURN_IF_ERROR(expect_kind(attrs, "default_string", Kind::String));
  IGNIS_RETURN_IF_ERROR(expect_kind(attrs, "default_float", Kind::Float));
  IGNIS_RETURN_IF_ERROR(expect_kind(attrs, "default_tensor", Kind::Tensor));
  LabelEncoderTable t;
  if (version < 2) {
    // classes_strings[i] <-> i, in the direction the input's type says.
    IGNIS_RETURN_IF_ERROR(expect_kind(attrs, "classes_strings", Kind::Strings));
    const std::vector<std::string> classes = attrs.get_strings("classes_strings");
    const int64_t n = static_cast<int64_t>(classes.size());
    if (input == DType::I64) {
      t.keys = iota_i64(n);
      t.values = strings_tensor(classes);
      t.default_value = strings_tensor({attrs.get_string("default_string", "_Unused")});
    } else {
      t.keys = strings_tensor(classes);
      t.values = iota_i64(n);
      t.default_value = plain_tensor(std::vector<int64_t>{attrs.get_int("default_int64", -1)});
    }
    return t;
  }
  std::string keys_name, values_name;
  IGNIS_ASSIGN_OR_RETURN(t.keys, read_column(attrs, "keys_", version, keys_name));
  IGNIS_ASSIGN_OR_RETURN(t.values, read_column(attrs, "values_", version, values_name));
  if (t.keys.numel() != t.values.numel())
    return invalid_argument(str_cat("attributes '", keys_name, "' (", t.keys.numel(), " entries) and '", values_name,
                                    "' (", t.values.numel(), " entries) must have the same length"));
  IGNIS_ASSIGN_OR_RETURN(t.default_value, read_default(attrs, version, t.values.dtype()));
  t.nan_matches_nan = version >= 4;
  return t;
}

}  // namespace ignis
