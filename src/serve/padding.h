// SPDX-License-Identifier: Apache-2.0
// Strided copies between row-major tensors of different extents, for shape buckets: a
// request's input is copied into the corner of a larger, pad-filled batch tensor, and each
// output is copied back out of the corner that belongs to the request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "ignis/dtype.h"

namespace ignis::serve {

// Copies the box [0, box[d]) of `src` (dims `src_dims`) to the same box of `dst` (dims
// `dst_dims`); all three have the same rank and box[d] <= both extents. With `strings`, the
// elements are std::string objects (element_bytes = sizeof(std::string)), assigned one by one.
void copy_box(const std::byte* src, std::span<const int64_t> src_dims, std::byte* dst,
              std::span<const int64_t> dst_dims, std::span<const int64_t> box, size_t element_bytes,
              bool strings = false);

// Bytes one element of `dtype` takes in a tensor's buffer (a std::string object for String).
size_t element_bytes(DType dtype);

// Fills `count` elements of `dtype` with `value` (converted to the type; numeric types only).
void fill_elements(std::byte* dst, size_t count, DType dtype, double value);

// The smallest edge >= extent, or the extent itself when it is above every edge (sorted).
int64_t bucket_extent(std::span<const int64_t> edges, int64_t extent);

}  // namespace ignis::serve
