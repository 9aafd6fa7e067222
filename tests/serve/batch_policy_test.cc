// SPDX-License-Identifier: Apache-2.0
// Every scheduling rule of BatchPolicy on a fake clock: times are offsets from a fixed origin,
// so each decision is reproducible to the microsecond.
#include "serve/batch_policy.h"

#include <gtest/gtest.h>

namespace ignis::serve {
namespace {

using std::chrono::microseconds;
using Ids = std::vector<uint64_t>;

const SchedClock::time_point T0 = SchedClock::time_point() + std::chrono::hours(1);
SchedClock::time_point at(int64_t us) { return T0 + microseconds(us); }

QueuedRequest req(uint64_t id, int64_t arrival_us, uint32_t level = 1, uint64_t signature = 0, int64_t rows = 1) {
  QueuedRequest r;
  r.id = id;
  r.arrival = at(arrival_us);
  r.level = level;
  r.signature = signature;
  r.rows = rows;
  return r;
}

BatchPolicyConfig batching(int64_t max_batch, int64_t delay_us, std::vector<int64_t> preferred = {}) {
  BatchPolicyConfig c;
  c.max_batch_size = max_batch;
  c.dynamic_batching = true;
  c.max_queue_delay = microseconds(delay_us);
  c.preferred_batch_sizes = std::move(preferred);
  return c;
}

TEST(BatchPolicy, WithoutBatchingRunsOneRequestAtATimeByLevelThenArrival) {
  BatchPolicy p(BatchPolicyConfig{});
  p.push(req(1, 0, 2));
  p.push(req(2, 10, 1));
  p.push(req(3, 20, 1));
  for (uint64_t expected : {2, 3, 1}) {
    auto d = p.next_batch(at(100));
    ASSERT_EQ(d.batch, Ids{expected});
    p.take(d.batch);
  }
  EXPECT_TRUE(p.empty());
  EXPECT_TRUE(p.next_batch(at(100)).batch.empty());
}

TEST(BatchPolicy, WaitsForTheQueueDelayThenRunsWhatItHas) {
  BatchPolicy p(batching(8, 1000));
  p.push(req(1, 0));
  p.push(req(2, 300));
  auto d = p.next_batch(at(500));
  EXPECT_TRUE(d.batch.empty());
  EXPECT_EQ(d.wake, at(1000));  // the oldest member's delay ends
  d = p.next_batch(at(999));
  EXPECT_TRUE(d.batch.empty());
  d = p.next_batch(at(1000));
  EXPECT_EQ(d.batch, (Ids{1, 2}));
}

TEST(BatchPolicy, AnAdaptiveDelayIsAskedWithTheRowsSoFar) {
  BatchPolicyConfig c = batching(8, 1'000'000);
  std::vector<int64_t> asked;
  c.delay_for = [&](int64_t rows) {
    asked.push_back(rows);
    return microseconds(rows == 1 ? 300 : 0);
  };
  BatchPolicy p(c);
  p.push(req(1, 0));
  auto d = p.next_batch(at(10));
  EXPECT_TRUE(d.batch.empty());
  EXPECT_EQ(d.wake, at(300));  // the function's delay, not the config's 1 s
  p.push(req(2, 20));
  EXPECT_EQ(p.next_batch(at(30)).batch, (Ids{1, 2}));
  EXPECT_EQ(asked, (std::vector<int64_t>{1, 2}));
}

TEST(BatchPolicy, ARowCapLimitsTheBatchButNotALargerRequest) {
  BatchPolicyConfig c = batching(8, 0);
  int64_t cap = 2;
  c.max_rows = [&] { return cap; };
  BatchPolicy p(c);
  p.push(req(1, 0, 1, 0, 3));  // over the cap: runs alone
  p.push(req(2, 1));
  p.push(req(3, 2));
  p.push(req(4, 3));
  auto d = p.next_batch(at(5));
  EXPECT_EQ(d.batch, Ids{1});
  p.take(d.batch);
  EXPECT_EQ(p.next_batch(at(5)).batch, (Ids{2, 3}));
  cap = 100;  // clamped to max_batch_size
  EXPECT_EQ(p.next_batch(at(5)).batch, (Ids{2, 3, 4}));
}

TEST(BatchPolicy, ZeroDelayRunsAtOnce) {
  BatchPolicy p(batching(8, 0));
  p.push(req(1, 0));
  EXPECT_EQ(p.next_batch(at(0)).batch, Ids{1});
}

TEST(BatchPolicy, AFullBatchRunsBeforeTheDelayEnds) {
  BatchPolicy p(batching(4, 1'000'000));
  for (uint64_t i = 1; i <= 5; ++i) p.push(req(i, static_cast<int64_t>(i)));
  auto d = p.next_batch(at(10));
  EXPECT_EQ(d.batch, (Ids{1, 2, 3, 4}));  // max_batch_size rows, in arrival order
  p.take(d.batch);
  d = p.next_batch(at(10));
  EXPECT_TRUE(d.batch.empty());
  EXPECT_EQ(d.wake, at(5 + 1'000'000));
}

TEST(BatchPolicy, RowsCountTowardTheBatchSize) {
  BatchPolicy p(batching(4, 0));
  p.push(req(1, 0, 1, 0, 3));
  p.push(req(2, 1, 1, 0, 2));  // does not fit beside 1
  p.push(req(3, 2, 1, 0, 1));  // fits: joins 1
  EXPECT_EQ(p.next_batch(at(5)).batch, (Ids{1, 3}));
}

TEST(BatchPolicy, ReachingTheLargestPreferredSizeRunsAtOnce) {
  BatchPolicy p(batching(16, 1'000'000, {4, 2}));
  for (uint64_t i = 1; i <= 3; ++i) p.push(req(i, 0));
  EXPECT_TRUE(p.next_batch(at(1)).batch.empty());
  p.push(req(4, 1));
  EXPECT_EQ(p.next_batch(at(1)).batch, (Ids{1, 2, 3, 4}));
}

TEST(BatchPolicy, AtTheDelayABatchIsTrimmedToAPreferredSize) {
  BatchPolicy p(batching(16, 100, {2, 8}));
  for (uint64_t i = 1; i <= 3; ++i) p.push(req(i, 0));
  auto d = p.next_batch(at(100));
  EXPECT_EQ(d.batch, (Ids{1, 2}));  // 2 is preferred, 3 is not
  p.take(d.batch);
  d = p.next_batch(at(100));
  EXPECT_EQ(d.batch, Ids{3});  // no preferred size formable: what is there runs
}

TEST(BatchPolicy, OnlyEqualSignaturesBatchTogether) {
  BatchPolicy p(batching(8, 0));
  p.push(req(1, 0, 1, /*signature=*/7));
  p.push(req(2, 1, 1, 9));
  p.push(req(3, 2, 1, 7));
  auto d = p.next_batch(at(3));
  EXPECT_EQ(d.batch, (Ids{1, 3}));
  p.take(d.batch);
  EXPECT_EQ(p.next_batch(at(3)).batch, Ids{2});
}

TEST(BatchPolicy, ABatchThatIsDueRunsWhileAnotherWaitsForItsDelay) {
  BatchPolicy p(batching(2, 1000));
  p.push(req(1, 0, 1, 7));  // alone, waiting for a partner until 1000
  p.push(req(2, 10, 2, 9));
  p.push(req(3, 20, 2, 9));  // signature 9 is full
  EXPECT_EQ(p.next_batch(at(30)).batch, (Ids{2, 3}));
}

TEST(BatchPolicy, HigherLevelsHeadTheBatch) {
  BatchPolicy p(batching(2, 0));
  p.push(req(1, 0, 2));
  p.push(req(2, 10, 2));
  p.push(req(3, 20, 1));
  EXPECT_EQ(p.next_batch(at(30)).batch, (Ids{3, 1}));
}

TEST(BatchPolicy, EarliestDeadlineFirstWithinALevel) {
  BatchPolicy p(BatchPolicyConfig{});
  auto a = req(1, 0), b = req(2, 10), c = req(3, 20);
  b.deadline = at(500);
  c.deadline = at(400);
  p.push(a);
  p.push(b);
  p.push(c);
  for (uint64_t expected : {3, 2, 1}) {  // deadlines first (earliest first), then no deadline
    auto d = p.next_batch(at(30));
    ASSERT_EQ(d.batch, Ids{expected});
    p.take(d.batch);
  }
}

TEST(BatchPolicy, ADeadlineCutsTheQueueDelayShort) {
  BatchPolicy p(batching(8, 10'000));
  auto r = req(1, 0);
  r.deadline = at(3000);
  p.push(r);
  auto d = p.next_batch(at(100), microseconds(500));
  EXPECT_TRUE(d.batch.empty());
  EXPECT_EQ(d.wake, at(2500));  // the deadline less the run estimate, not the delay's 10000
  EXPECT_EQ(p.next_batch(at(2500), microseconds(500)).batch, Ids{1});
}

TEST(BatchPolicy, ExpiryRemovesRejectRequestsAndDemotesDelayOnes) {
  BatchPolicy p(batching(8, 1'000'000));
  auto reject = req(1, 0, 1), delay = req(2, 0, 1), later = req(3, 0, 2), none = req(4, 0, 2);
  reject.deadline = at(100);
  delay.deadline = at(100);
  delay.delay_on_timeout = true;
  later.deadline = at(200);
  p.push(reject);
  p.push(delay);
  p.push(later);
  p.push(none);
  EXPECT_EQ(p.next_deadline(), at(100));
  EXPECT_TRUE(p.expire(at(99)).empty());
  EXPECT_EQ(p.expire(at(100)), Ids{1});
  EXPECT_EQ(p.size(), 3u);
  EXPECT_EQ(p.next_deadline(), at(200));  // the demoted request has no deadline any more
  EXPECT_EQ(p.expire(at(250)), Ids{3});
  // The demoted level-1 request now queues behind level 2.
  BatchPolicyConfig c;
  BatchPolicy q(c);
  q.push(delay);
  q.push(none);
  q.expire(at(100));
  EXPECT_EQ(q.next_batch(at(100)).batch, Ids{4});
}

TEST(BatchPolicy, AgingLiftsALongWaitingLowLevel) {
  BatchPolicyConfig c;
  c.aging = microseconds(1000);  // one level per millisecond waited
  BatchPolicy p(c);
  p.push(req(1, 0, 4));
  p.push(req(2, 1900, 2));
  EXPECT_EQ(p.next_batch(at(1950)).batch, Ids{2});  // effective levels 3 and 2
  EXPECT_EQ(p.next_batch(at(3000)).batch, Ids{1});  // 1 and 1: the older request first
  BatchPolicy no_aging{BatchPolicyConfig{}};
  no_aging.push(req(1, 0, 4));
  no_aging.push(req(2, 1900, 2));
  EXPECT_EQ(no_aging.next_batch(at(3000)).batch, Ids{2});
}

TEST(BatchPolicy, QueueSizeIsBoundedPerLevel) {
  BatchPolicyConfig c;
  c.default_max_queue_size = 2;
  c.max_queue_size[1] = 1;
  BatchPolicy p(c);
  EXPECT_EQ(p.admit(1, 0), Admission::Accepted);
  p.push(req(1, 0, 1));
  EXPECT_EQ(p.admit(1, 0), Admission::QueueFull);
  EXPECT_EQ(p.admit(2, 0), Admission::Accepted);
  p.push(req(2, 0, 2));
  p.push(req(3, 0, 2));
  EXPECT_EQ(p.admit(2, 0), Admission::QueueFull);
  p.take({2});
  EXPECT_EQ(p.admit(2, 0), Admission::Accepted);
}

TEST(BatchPolicy, InflightCountsQueuedAndRunning) {
  BatchPolicyConfig c;
  c.max_inflight = 3;
  BatchPolicy p(c);
  p.push(req(1, 0));
  EXPECT_EQ(p.admit(1, 1), Admission::Accepted);
  EXPECT_EQ(p.admit(1, 2), Admission::TooManyInflight);
}

TEST(BatchPolicy, RemoveTakesARequestOutOfTheQueue) {
  BatchPolicyConfig c;
  c.max_queue_size[1] = 1;
  BatchPolicy p(c);
  p.push(req(1, 0));
  EXPECT_TRUE(p.remove(1));
  EXPECT_FALSE(p.remove(1));
  EXPECT_EQ(p.admit(1, 0), Admission::Accepted);
  EXPECT_TRUE(p.next_batch(at(0)).batch.empty());
}

TEST(OrderingBuffer, ReleasesInArrivalOrder) {
  OrderingBuffer o;
  const uint64_t a = o.next(), b = o.next(), c = o.next();
  EXPECT_TRUE(o.complete(c).empty());
  EXPECT_TRUE(o.complete(b).empty());
  EXPECT_EQ(o.complete(a), (Ids{a, b, c}));
  const uint64_t d = o.next();
  EXPECT_EQ(o.complete(d), Ids{d});
}

}  // namespace
}  // namespace ignis::serve
