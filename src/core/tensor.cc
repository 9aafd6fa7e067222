// SPDX-License-Identifier: Apache-2.0
#include "ignis/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "core/aligned_alloc.h"

namespace ignis {

namespace {

// A container of type C in a rank-0 handle of `dtype`.
template <class C>
Tensor hold(DType dtype, C container) {
  auto owner = std::make_shared<C>(std::move(container));
  void* data = owner.get();
  return Tensor::wrap(dtype, Shape{}, data, std::move(owner));
}

template <class C>
const C& held(const Tensor& t, DType dtype) {
  if (t.dtype() != dtype || t.data() == nullptr) std::abort();
  return *static_cast<const C*>(t.data());
}

}  // namespace

Tensor Tensor::empty(DType dtype, const Shape& shape) {
  switch (dtype) {
    case DType::String: {
      auto strings = std::make_shared<std::string[]>(static_cast<size_t>(shape.numel()));
      void* data = strings.get();
      return wrap(dtype, shape, data, std::move(strings));
    }
    case DType::Sequence: return sequence(DType::Undefined, {});
    case DType::Optional: return optional(Tensor());
    case DType::Map: return map(Tensor::empty(DType::I64, Shape{0}), Tensor::empty(DType::F32, Shape{0}));
    default: break;
  }
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  size_t bytes = t.nbytes();
  std::shared_ptr<void> owner = make_aligned_buffer(bytes);
  t.data_ = owner.get();
  t.owner_ = std::move(owner);
  return t;
}

Tensor Tensor::zeros(DType dtype, const Shape& shape) {
  Tensor t = empty(dtype, shape);
  if (t.nbytes() > 0) std::memset(t.data_, 0, t.nbytes());
  return t;
}

Tensor Tensor::view(DType dtype, const Shape& shape, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.data_ = data;
  return t;
}

Tensor Tensor::wrap(DType dtype, const Shape& shape, void* data, std::shared_ptr<void> owner) {
  Tensor t = view(dtype, shape, data);
  t.owner_ = std::move(owner);
  return t;
}

Tensor Tensor::sequence(DType element, std::vector<Tensor> items) {
  return hold(DType::Sequence, TensorSequence{element, std::move(items)});
}

Tensor Tensor::optional(Tensor value, DType element) {
  if (value.defined() && element == DType::Undefined) element = value.dtype();
  return hold(DType::Optional, TensorOptional{element, std::move(value)});
}

Tensor Tensor::map(Tensor keys, Tensor values) { return hold(DType::Map, TensorMap{std::move(keys), std::move(values)}); }

const TensorSequence& Tensor::as_sequence() const { return held<TensorSequence>(*this, DType::Sequence); }
const TensorOptional& Tensor::as_optional() const { return held<TensorOptional>(*this, DType::Optional); }
const TensorMap& Tensor::as_map() const { return held<TensorMap>(*this, DType::Map); }

Tensor Tensor::clone() const {
  if (dtype_is_container(dtype_)) return *this;
  Tensor t = empty(dtype_, shape_);
  if (dtype_ == DType::String) {
    for (int64_t i = 0; i < numel(); ++i) t.data_as<std::string>()[i] = data_as<std::string>()[i];
    return t;
  }
  if (nbytes() > 0) std::memcpy(t.data_, data_, nbytes());
  return t;
}

Tensor Tensor::reshaped(const Shape& shape) const {
  if (shape.numel() != numel()) std::abort();
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

std::string Tensor::type_string() const {
  switch (dtype_) {
    case DType::Sequence: {
      const auto& s = as_sequence();
      return std::string("sequence<") + std::string(dtype_name(s.element)) + ">[" + std::to_string(s.items.size()) +
             " items]";
    }
    case DType::Optional: {
      const auto& o = as_optional();
      return std::string("optional<") + (o.has_value() ? o.value.type_string() : "none") + ">";
    }
    case DType::Map: return "map<" + as_map().keys.type_string() + ", " + as_map().values.type_string() + ">";
    default: return std::string(dtype_name(dtype_)) + shape_.str();
  }
}

}  // namespace ignis
