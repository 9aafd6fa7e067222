// SPDX-License-Identifier: Apache-2.0
// Tensor: a dtype, a shape and a buffer that is either owned (shared, refcounted) or a
// non-owning view of caller memory. Copying a Tensor copies the handle, not the data.
//
// The same handle carries ONNX's other values. A String tensor's elements are std::string
// objects (data_as<std::string>()). A Sequence, Optional or Map is a rank-0 "tensor" whose
// data is the container (as_sequence(), as_optional(), as_map()); containers are immutable
// once made, so handles share them freely.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ignis/dtype.h"
#include "ignis/shape.h"
#include "ignis/status.h"

namespace ignis {

struct TensorSequence;
struct TensorOptional;
struct TensorMap;

class Tensor {
 public:
  Tensor() = default;

  // Allocates a 64-byte aligned, zero-filled buffer (String: empty strings).
  static Tensor zeros(DType dtype, const Shape& shape);
  // Allocates a 64-byte aligned buffer with unspecified contents (String: empty strings;
  // a container type: an empty container).
  static Tensor empty(DType dtype, const Shape& shape);
  // Wraps caller memory without copying; the caller keeps it alive while the view is used.
  static Tensor view(DType dtype, const Shape& shape, void* data);
  static Tensor view(DType dtype, const Shape& shape, const void* data) {
    return view(dtype, shape, const_cast<void*>(data));
  }
  // Wraps memory kept alive by `owner`.
  static Tensor wrap(DType dtype, const Shape& shape, void* data, std::shared_ptr<void> owner);

  // Containers. `element` is the dtype of the items (Undefined when unknown, e.g. an empty
  // sequence read from a file). An optional's `value` may be a tensor or a sequence; an
  // undefined `value` is an empty optional, whose `element` says what it would hold.
  static Tensor sequence(DType element, std::vector<Tensor> items);
  static Tensor optional(Tensor value, DType element = DType::Undefined);
  // `keys`: int64 or string, rank 1; `values`: the same length along axis 0.
  static Tensor map(Tensor keys, Tensor values);
  // The container; only for a tensor of that dtype (checked: aborts otherwise).
  const TensorSequence& as_sequence() const;
  const TensorOptional& as_optional() const;
  const TensorMap& as_map() const;

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

  // Deep copy into a freshly allocated buffer (strings copied; containers shared, as they
  // never change).
  Tensor clone() const;
  // Same buffer seen with another shape of equal element count.
  Tensor reshaped(const Shape& shape) const;

  // "float32[1, 3, 224, 224]"; "sequence<float32>[3 items]", "optional<none>"
  std::string type_string() const;

 private:
  DType dtype_ = DType::Undefined;
  Shape shape_;
  void* data_ = nullptr;
  std::shared_ptr<void> owner_;
};

struct TensorSequence {
  DType element = DType::Undefined;
  std::vector<Tensor> items;
};

struct TensorOptional {
  DType element = DType::Undefined;  // of the value, or of what an empty optional would hold
  Tensor value;                      // undefined: the optional is empty
  bool has_value() const { return value.defined(); }
};

struct TensorMap {
  Tensor keys;    // int64 or string, [n]
  Tensor values;  // [n, ...]
};

}  // namespace ignis
