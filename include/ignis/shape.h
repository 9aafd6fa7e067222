// SPDX-License-Identifier: Apache-2.0
// Shape: tensor extents stored inline (no heap), so tensors can be created on the hot path.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace ignis {

class Shape {
 public:
  static constexpr int kMaxRank = 8;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  // Aborts if dims.size() > kMaxRank; callers validate ranks from untrusted input first.
  explicit Shape(std::span<const int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims) : Shape(std::span<const int64_t>(dims)) {}

  int rank() const { return rank_; }
  bool is_scalar() const { return rank_ == 0; }
  int64_t operator[](int i) const { return dims_[i]; }
  int64_t& operator[](int i) { return dims_[i]; }
  int64_t back() const { return dims_[rank_ - 1]; }
  const int64_t* begin() const { return dims_; }
  const int64_t* end() const { return dims_ + rank_; }
  const int64_t* data() const { return dims_; }
  std::span<const int64_t> dims() const { return {dims_, static_cast<size_t>(rank_)}; }
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }

  void push_back(int64_t d);  // aborts past kMaxRank
  void resize(int rank, int64_t fill = 1);

  // Product of extents (1 for a scalar).
  int64_t numel() const;
  // Product of extents in [from, to).
  int64_t numel(int from, int to) const;
  // Row-major strides in elements.
  std::vector<int64_t> strides() const;

  // "[1, 3, 224, 224]"
  std::string str() const;

  friend bool operator==(const Shape& a, const Shape& b);

 private:
  int64_t dims_[kMaxRank] = {};
  int rank_ = 0;
};

}  // namespace ignis
