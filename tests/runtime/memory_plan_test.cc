// SPDX-License-Identifier: Apache-2.0
#include "runtime/memory_plan.h"

#include <gtest/gtest.h>

#include <random>

#include "core/aligned_alloc.h"

namespace ignis::runtime {
namespace {

// Independent check: no two buffers with overlapping lifetimes share a byte.
void expect_valid(const std::vector<BufferRequest>& reqs, const MemoryPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), reqs.size());
  size_t sum = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % kAlignment, 0u) << "buffer " << i;
    EXPECT_LE(plan.offsets[i] + reqs[i].bytes, plan.arena_bytes) << "buffer " << i;
    sum += align_up(std::max<size_t>(reqs[i].bytes, 1));
    for (size_t j = i + 1; j < reqs.size(); ++j) {
      const bool live_together = reqs[i].first_step <= reqs[j].last_step && reqs[j].first_step <= reqs[i].last_step;
      const bool bytes_overlap = plan.offsets[i] < plan.offsets[j] + reqs[j].bytes &&
                                 plan.offsets[j] < plan.offsets[i] + reqs[i].bytes;
      EXPECT_FALSE(live_together && bytes_overlap) << "buffers " << i << " and " << j << " overlap";
    }
  }
  EXPECT_LE(plan.arena_bytes, sum);
}

TEST(MemoryPlan, ChainReusesMemory) {
  // a -> b -> c -> d: each buffer dies when the next is written, so two slots suffice.
  std::vector<BufferRequest> reqs = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  MemoryPlan plan = plan_memory(reqs);
  expect_valid(reqs, plan);
  EXPECT_EQ(plan.arena_bytes, 2 * align_up(1000));
}

TEST(MemoryPlan, AllLiveTogetherNeedsTheSum) {
  std::vector<BufferRequest> reqs = {{100, 0, 5}, {200, 1, 5}, {300, 2, 5}};
  MemoryPlan plan = plan_memory(reqs);
  expect_valid(reqs, plan);
  EXPECT_EQ(plan.arena_bytes, align_up(100) + align_up(200) + align_up(300));
}

TEST(MemoryPlan, EmptyAndZeroSized) {
  EXPECT_EQ(plan_memory({}).arena_bytes, 0u);
  std::vector<BufferRequest> reqs = {{0, 0, 0}, {0, 0, 1}};
  expect_valid(reqs, plan_memory(reqs));
}

TEST(MemoryPlan, RandomLifetimesNeverOverlap) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferRequest> reqs;
    const int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      const int first = static_cast<int>(rng() % 40);
      reqs.push_back({static_cast<size_t>(rng() % 5000), first, first + static_cast<int>(rng() % 10)});
    }
    SCOPED_TRACE(trial);
    expect_valid(reqs, plan_memory(reqs));
  }
}

}  // namespace
}  // namespace ignis::runtime
