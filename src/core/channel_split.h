// SPDX-License-Identifier: Apache-2.0
// A tensor seen as [outer, channels, inner] around one axis: how per-channel parameters
// (quantization scales, pruning norms) map onto its elements.
#pragma once

#include <cstdint>

#include "ignis/shape.h"

namespace ignis {

struct ChannelSplit {
  int64_t outer = 1, channels = 1, inner = 1;

  ChannelSplit(const Shape& shape, int axis)
      : outer(shape.numel(0, axis)), channels(shape[axis]), inner(shape.numel(axis + 1, shape.rank())) {}

  // The whole tensor as a single channel.
  static ChannelSplit whole(const Shape& shape) { return ChannelSplit(Shape{1, shape.numel()}, 0); }

  // Calls f(channel, flat index) for every element, in memory order.
  template <class F>
  void for_each(F&& f) const {
    int64_t i = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t k = 0; k < inner; ++k) f(c, i++);
  }
};

}  // namespace ignis
