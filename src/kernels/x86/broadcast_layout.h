// SPDX-License-Identifier: Apache-2.0
// The output of a broadcasting binary op as up to three coalesced dims, for the x86 kernels that
// walk it row by row (elementwise_avx2.cc, quantize_add_avx2.cc). The operands are aligned to
// the output shape and their dims coalesced from the innermost outwards (extent-1 dims dropped,
// neighbours merged where both operands are contiguous across them), as the reference kernel
// does. With at most three dims left, every output row (the innermost dim) reads each operand
// either contiguously (stride 1) or as one repeated value (stride 0): equal shapes, scalars,
// per-channel [1, C, 1, 1] against [N, C, H, W] from either side, row vectors [N] against
// [..., M, N]. broadcast_layout.cc; built without ISA flags.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ignis/shape.h"

namespace ignis::kernels::x86 {

struct BroadcastLayout {
  int rank = 0;
  int64_t dims[3] = {1, 1, 1};             // innermost first
  int64_t sa[3] = {0, 0, 0}, sb[3] = {0, 0, 0};  // each operand's element strides per dim
};

// False when more than three dims remain after coalescing.
bool make_broadcast_layout(const Shape& out, const Shape& a, const Shape& b, BroadcastLayout& l);

// Calls row(offset_a, offset_b, out_begin, length) for the rows of output elements
// [begin, end) in order (a row may be cut at begin and end).
template <class Row>
void for_each_broadcast_row(const BroadcastLayout& l, int64_t begin, int64_t end, const Row& row) {
  const int64_t inner = l.dims[0];
  int64_t i0 = begin % inner, rest = begin / inner;
  int64_t i1 = rest % l.dims[1], i2 = rest / l.dims[1];
  for (int64_t cur = begin; cur < end;) {
    const int64_t len = std::min(inner - i0, end - cur);
    row(i0 * l.sa[0] + i1 * l.sa[1] + i2 * l.sa[2], i0 * l.sb[0] + i1 * l.sb[1] + i2 * l.sb[2], cur, len);
    cur += len;
    i0 = 0;
    if (++i1 == l.dims[1]) {
      i1 = 0;
      ++i2;
    }
  }
}

}  // namespace ignis::kernels::x86
