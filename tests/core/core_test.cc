// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/broadcast.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "ignis/tensor.h"

namespace ignis {
namespace {

TEST(Shape, NumelStridesAndString) {
  Shape s{2, 3, 4};
  EXPECT_EQ(s.numel(), 24);
  EXPECT_EQ(s.strides(), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(s.str(), "[2, 3, 4]");
  EXPECT_EQ(Shape{}.numel(), 1);
  EXPECT_EQ((Shape{3, 0, 2}).numel(), 0);
}

TEST(Broadcast, NumpyRules) {
  EXPECT_EQ(*broadcast_shapes(Shape{2, 1, 4}, Shape{3, 1}), (Shape{2, 3, 4}));
  EXPECT_EQ(*broadcast_shapes(Shape{}, Shape{5}), (Shape{5}));
  EXPECT_EQ(*broadcast_shapes(Shape{0, 1}, Shape{1, 3}), (Shape{0, 3}));
  EXPECT_FALSE(broadcast_shapes(Shape{2, 3}, Shape{4}).has_value());
  EXPECT_EQ(broadcast_strides(Shape{3, 1}, Shape{2, 3, 4}), (std::vector<int64_t>{0, 1, 0}));
}

TEST(Broadcast, IndexerVisitsEveryPositionOnce) {
  Shape out{2, 3};
  StridedIndexer it(out, {out.strides(), broadcast_strides(Shape{3}, out)});
  std::vector<int64_t> seen, bcast;
  do {
    seen.push_back(it.offset(0));
    bcast.push_back(it.offset(1));
  } while (it.next());
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(bcast, (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
}

TEST(Half, RoundTripsAndRoundsToNearestEven) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f})
    EXPECT_EQ(half_to_float(float_to_half(f)), f) << f;
  EXPECT_TRUE(std::isinf(half_to_float(float_to_half(70000.0f))));
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
  // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): ties go to even (1).
  EXPECT_EQ(half_to_float(float_to_half(1.0f + 1.0f / 2048)), 1.0f);
  EXPECT_EQ(bf16_to_float(float_to_bf16(3.0f)), 3.0f);
}

TEST(ThreadPool, ParallelForCoversRangeExactlyOnce) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(1001);
  pool.parallel_for(1001, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

// Back-to-back jobs of varying size: each index runs exactly once whether a chunk runs on its
// worker or on the caller that found it unstarted (the two race on every job here).
TEST(ThreadPool, EveryChunkRunsOnceWhenTheCallerTakesOverUnstartedChunks) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(257);
  for (int job = 0; job < 3000; ++job) {
    const int64_t n = 2 + job % 255;
    for (int64_t i = 0; i < n; ++i) hits[i].store(0);
    pool.parallel_for(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "job " << job << " index " << i;
  }
}

TEST(ThreadPool, ConcurrentCallersBothComplete) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  auto work = [&] {
    for (int r = 0; r < 200; ++r)
      pool.parallel_for(100, 1, [&](int64_t b, int64_t e) { total += e - b; });
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  EXPECT_EQ(total.load(), 2 * 200 * 100);
}

// Each pinned worker is bound to exactly the CPU it reports, one of the process's allowed CPUs;
// the calling thread keeps its own affinity.
TEST(ThreadPool, PinnedWorkersRunOnTheirOwnCore) {
  const std::vector<int> cpus = ThreadPool::core_cpus();
  ASSERT_FALSE(cpus.empty());
  cpu_set_t caller_before;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(caller_before), &caller_before), 0);
  ThreadPool pool(3, /*pin=*/true);
  for (int k = 1; k < 3; ++k) {
    EXPECT_EQ(pool.worker_cpu(k), cpus[static_cast<size_t>(k) % cpus.size()]) << "worker " << k;
  }
  std::mutex mu;
  std::vector<std::pair<int, int>> seen;  // (CPUs in the running thread's mask, its only CPU)
  const auto caller = std::this_thread::get_id();
  // The caller may run a worker's chunk itself; it lingers in its own chunk so the workers
  // take theirs, and rounds repeat until workers have run some.
  for (int round = 0; round < 500 && seen.size() < 10; ++round) {
    pool.parallel_for(3, 1, [&](int64_t, int64_t) {
      if (std::this_thread::get_id() == caller) {
        std::this_thread::sleep_for(std::chrono::microseconds(300));
        return;
      }
      cpu_set_t mask;
      ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(mask), &mask), 0);
      int only = -1;
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &mask)) only = c;
      std::lock_guard<std::mutex> lock(mu);
      seen.emplace_back(CPU_COUNT(&mask), only);
    });
  }
  ASSERT_FALSE(seen.empty());
  for (const auto& [count, cpu] : seen) {
    EXPECT_EQ(count, 1);
    EXPECT_TRUE(cpu == pool.worker_cpu(1) || cpu == pool.worker_cpu(2)) << cpu;
  }
  cpu_set_t caller_after;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(caller_after), &caller_after), 0);
  EXPECT_TRUE(CPU_EQUAL(&caller_before, &caller_after));
  EXPECT_EQ(ThreadPool(3).worker_cpu(1), -1);
}

TEST(ThreadPool, SharedPoolsAreOnePerSizeWhileHeld) {
  auto a = ThreadPool::shared(2, false);
  auto b = ThreadPool::shared(2, false);
  auto c = ThreadPool::shared(3, false);
  auto d = ThreadPool::shared(2, true);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), c.get());
  EXPECT_NE(a.get(), d.get());
  EXPECT_EQ(c->threads(), 3);
  std::weak_ptr<ThreadPool> gone = c;
  c.reset();
  EXPECT_TRUE(gone.expired());  // released with its last holder
}

TEST(ThreadPool, SingleChunkRunsInlineOnTheCaller) {
  ThreadPool pool(4);
  std::thread::id ran_on;
  int calls = 0;
  pool.parallel_for(10, 100, [&](int64_t b, int64_t e) {
    ran_on = std::this_thread::get_id();
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 10);
    ++calls;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(ThreadPool, JobsWithFewerChunksThanThreadsCompleteRepeatedly) {
  // Workers left out of a job must not run, or wait for, a chunk of it; alternating sizes
  // makes a left-out worker see the next job while others still finish this one.
  ThreadPool pool(4);
  for (int r = 0; r < 2000; ++r) {
    const int64_t n = 2 + r % 3;
    std::vector<std::atomic<int>> hits(n);
    pool.parallel_for(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1) << "round " << r;
  }
}

TEST(ThreadPool, WakesWorkersThatWentToSleep) {
  // Past the spin window idle workers block; the next job must still reach them.
  ThreadPool pool(3);
  for (int r = 0; r < 3; ++r) {
    std::this_thread::sleep_for(std::chrono::microseconds(5 * ThreadPool::kSpinMicros));
    std::atomic<int> chunks{0};
    std::atomic<int64_t> covered{0};
    pool.parallel_for(300, 1, [&](int64_t b, int64_t e) {
      ++chunks;
      covered += e - b;
    });
    EXPECT_EQ(chunks.load(), 3);
    EXPECT_EQ(covered.load(), 300);
  }
}

TEST(ThreadPool, CallerSleepsUntilASlowChunkFinishes) {
  ThreadPool pool(2);
  std::atomic<int64_t> covered{0};
  pool.parallel_for(2, 1, [&](int64_t b, int64_t e) {
    if (b == 1) std::this_thread::sleep_for(std::chrono::microseconds(10 * ThreadPool::kSpinMicros));
    covered += e - b;
  });
  EXPECT_EQ(covered.load(), 2);
}

TEST(ThreadPool, AcceptsAnyCallableWithoutCopyingIt) {
  struct Counter {
    int64_t total = 0;
    std::mutex mu;
    void operator()(int64_t b, int64_t e) {
      std::lock_guard<std::mutex> lock(mu);
      total += e - b;
    }
  } counter;
  ThreadPool pool(2);
  pool.parallel_for(50, 1, counter);  // a non-copyable callable, passed by reference
  parallel_for(&pool, 50, 1, counter);
  parallel_for(nullptr, 50, 1, counter);
  const std::function<void(int64_t, int64_t)> fn = [&](int64_t b, int64_t e) { counter(b, e); };
  parallel_for(&pool, 50, 1, fn);
  EXPECT_EQ(counter.total, 200);
}

}  // namespace
}  // namespace ignis
