// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
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

}  // namespace
}  // namespace ignis
