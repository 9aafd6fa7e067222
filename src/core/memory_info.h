// SPDX-License-Identifier: Apache-2.0
// Sizes for memory limits: tensor byte sizes with overflow checks, the machine's physical
// memory, and byte counts as people read them in messages.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "ignis/dtype.h"
#include "ignis/shape.h"

namespace ignis {

// Bytes of a dense tensor of `dtype` and `shape`; nullopt when a dim is negative or the element
// count or the byte size does not fit in int64.
std::optional<size_t> tensor_bytes(DType dtype, const Shape& shape);

// a + b, or SIZE_MAX when the sum does not fit.
inline size_t add_saturating(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

// Total physical memory of the machine, read once; 0 when it cannot be determined.
size_t physical_memory_bytes();

// "512 B", "3.2 kB", "25.6 GB": decimal units, three significant digits.
std::string format_bytes(size_t bytes);

}  // namespace ignis
