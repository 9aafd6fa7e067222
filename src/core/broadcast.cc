// SPDX-License-Identifier: Apache-2.0
#include "core/broadcast.h"

#include <algorithm>

namespace ignis {

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const int rank = std::max(a.rank(), b.rank());
  Shape out;
  out.resize(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = i - (rank - a.rank());
    const int ib = i - (rank - b.rank());
    const int64_t da = ia >= 0 ? a[ia] : 1;
    const int64_t db = ib >= 0 ? b[ib] : 1;
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else return std::nullopt;
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> s(out.rank(), 0);
  int64_t acc = 1;
  for (int i = in.rank() - 1; i >= 0; --i) {
    const int o = i + (out.rank() - in.rank());
    s[o] = in[i] == 1 ? 0 : acc;
    acc *= in[i];
  }
  return s;
}

StridedIndexer::StridedIndexer(const Shape& shape, std::vector<std::vector<int64_t>> strides)
    : shape_(shape), strides_(std::move(strides)), index_(shape.rank(), 0), offsets_(strides_.size(), 0) {}

bool StridedIndexer::next() {
  for (int d = shape_.rank() - 1; d >= 0; --d) {
    if (++index_[d] < shape_[d]) {
      for (size_t k = 0; k < strides_.size(); ++k) offsets_[k] += strides_[k][d];
      return true;
    }
    for (size_t k = 0; k < strides_.size(); ++k) offsets_[k] -= strides_[k][d] * (shape_[d] - 1);
    index_[d] = 0;
  }
  return false;
}

std::optional<int> normalize_axis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace ignis
