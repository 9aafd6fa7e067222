// SPDX-License-Identifier: Apache-2.0
#include "ignis/shape.h"

#include <cstdlib>

#include "core/strings.h"

namespace ignis {

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::span<const int64_t>(dims.begin(), dims.size())) {}

Shape::Shape(std::span<const int64_t> dims) {
  if (dims.size() > static_cast<size_t>(kMaxRank)) std::abort();
  rank_ = static_cast<int>(dims.size());
  for (int i = 0; i < rank_; ++i) dims_[i] = dims[i];
}

void Shape::push_back(int64_t d) {
  if (rank_ >= kMaxRank) std::abort();
  dims_[rank_++] = d;
}

void Shape::resize(int rank, int64_t fill) {
  if (rank < 0 || rank > kMaxRank) std::abort();
  for (int i = rank_; i < rank; ++i) dims_[i] = fill;
  rank_ = rank;
}

int64_t Shape::numel() const { return numel(0, rank_); }

int64_t Shape::numel(int from, int to) const {
  int64_t n = 1;
  for (int i = from; i < to; ++i) n *= dims_[i];
  return n;
}

std::vector<int64_t> Shape::strides() const {
  std::vector<int64_t> s(rank_);
  int64_t acc = 1;
  for (int i = rank_ - 1; i >= 0; --i) {
    s[i] = acc;
    acc *= dims_[i];
  }
  return s;
}

std::string Shape::str() const { return str_list(dims()); }

bool operator==(const Shape& a, const Shape& b) {
  if (a.rank_ != b.rank_) return false;
  for (int i = 0; i < a.rank_; ++i)
    if (a.dims_[i] != b.dims_[i]) return false;
  return true;
}

}  // namespace ignis
