// SPDX-License-Identifier: Apache-2.0
// Tensor: a dtype, a shape and a buffer that is either owned (shared, refcounted) or a
// non-owning view of caller memory. Copying a Tensor copies the handle, not the data.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "ignis/dtype.h"
#include "ignis/shape.h"
#include "ignis/status.h"

namespace ignis {

class Tensor {
 public:
  Tensor() = default;

  // Allocates a 64-byte aligned, zero-filled buffer.
  static Tensor zeros(DType dtype, const Shape& shape);
  // Allocates a 64-byte aligned buffer with unspecified contents.
  static Tensor empty(DType dtype, const Shape& shape);
  // Wraps caller memory without copying; the caller keeps it alive while the view is used.
  static Tensor view(DType dtype, const Shape& shape, void* data);
  static Tensor view(DType dtype, const Shape& shape, const void* data) {
    return view(dtype, shape, const_cast<void*>(data));
  }
  // Wraps memory kept alive by `owner`.
  static Tensor wrap(DType dtype, const Shape& shape, void* data, std::shared_ptr<void> owner);

  bool defined() const { return dtype_ != DType::Undefined; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t dim(int i) const { return shape_[i]; }
  int64_t numel() const { return shape_.numel(); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  bool owns_data() const { return owner_ != nullptr; }

  void* data() const { return data_; }
  template <class T>
  T* data_as() const {
    return static_cast<T*>(data_);
  }

  // Deep copy into a freshly allocated buffer.
  Tensor clone() const;
  // Same buffer seen with another shape of equal element count.
  Tensor reshaped(const Shape& shape) const;

  // "float32[1, 3, 224, 224]"
  std::string type_string() const;

 private:
  DType dtype_ = DType::Undefined;
  Shape shape_;
  void* data_ = nullptr;
  std::shared_ptr<void> owner_;
};

}  // namespace ignis
