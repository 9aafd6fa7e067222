// SPDX-License-Identifier: Apache-2.0
#include "ignis/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/aligned_alloc.h"

namespace ignis {

Tensor Tensor::empty(DType dtype, const Shape& shape) {
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

Tensor Tensor::clone() const {
  Tensor t = empty(dtype_, shape_);
  if (nbytes() > 0) std::memcpy(t.data_, data_, nbytes());
  return t;
}

Tensor Tensor::reshaped(const Shape& shape) const {
  if (shape.numel() != numel()) std::abort();
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

std::string Tensor::type_string() const { return std::string(dtype_name(dtype_)) + shape_.str(); }

}  // namespace ignis
