// SPDX-License-Identifier: Apache-2.0
// Static memory planning: every intermediate tensor gets an offset in one arena such that
// tensors whose lifetimes overlap never share bytes.
#pragma once

#include <cstddef>
#include <vector>

namespace ignis::runtime {

struct BufferRequest {
  size_t bytes = 0;
  int first_step = 0;  // step that writes it
  int last_step = 0;   // last step that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // one per request, 64-byte aligned
  size_t arena_bytes = 0;
};

// Greedy: place the largest buffers first, each at the lowest offset that does not overlap a
// placed buffer with an intersecting lifetime.
MemoryPlan plan_memory(const std::vector<BufferRequest>& requests);

}  // namespace ignis::runtime
