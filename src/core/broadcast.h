// SPDX-License-Identifier: Apache-2.0
// Numpy-style multidirectional broadcasting helpers shared by shape inference and kernels.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ignis/shape.h"

namespace ignis {

// Broadcast result of a and b, or nullopt when some dim pair is neither equal nor 1.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// Strides (in elements) to read `in` as if it had shape `out` (0 on broadcast dims).
// `in` must be broadcastable to `out`; result has out.rank() entries.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// Iterates the row-major index space of `shape`, tracking one offset per operand whose
// strides are given. Used by reference kernels to walk broadcast/strided operands.
class StridedIndexer {
 public:
  StridedIndexer(const Shape& shape, std::vector<std::vector<int64_t>> strides);
  // Offsets of the current position, one per operand.
  const std::vector<int64_t>& offsets() const { return offsets_; }
  int64_t offset(int operand) const { return offsets_[operand]; }
  // Moves to the next position; returns false after the last one.
  bool next();

 private:
  Shape shape_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<int64_t> index_;
  std::vector<int64_t> offsets_;
};

// Normalizes a possibly negative axis into [0, rank); nullopt when out of range.
std::optional<int> normalize_axis(int64_t axis, int rank);

}  // namespace ignis
