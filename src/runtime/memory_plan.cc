// SPDX-License-Identifier: Apache-2.0
#include "runtime/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "core/aligned_alloc.h"

namespace ignis::runtime {

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests) {
  const size_t n = requests.size();
  MemoryPlan plan;
  plan.offsets.assign(n, 0);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].bytes > requests[b].bytes; });

  struct Placed {
    size_t offset, end;
    int first, last;
  };
  std::vector<Placed> placed;
  for (size_t idx : order) {
    const auto& r = requests[idx];
    const size_t size = align_up(std::max<size_t>(r.bytes, 1));
    std::vector<std::pair<size_t, size_t>> busy;  // byte ranges used by lifetime-overlapping buffers
    for (const auto& p : placed)
      if (p.first <= r.last_step && r.first_step <= p.last) busy.emplace_back(p.offset, p.end);
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& [b, e] : busy) {
      if (offset + size <= b) break;
      offset = std::max(offset, e);
    }
    plan.offsets[idx] = offset;
    placed.push_back({offset, offset + size, r.first_step, r.last_step});
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
  }
  return plan;
}

}  // namespace ignis::runtime
