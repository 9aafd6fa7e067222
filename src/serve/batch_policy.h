// SPDX-License-Identifier: Apache-2.0
// The scheduling rules of one model version's queue, with no threads and no clock of its own:
// the caller passes `now` to every decision, so each rule (queue delay, preferred batch sizes,
// priority levels, earliest deadline first, aging, expiry, backpressure, batching only equal
// signatures) is unit-tested deterministically with a fake clock. ModelVersion owns one policy
// under its mutex and turns its decisions into engine runs and answers.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ignis::serve {

using SchedClock = std::chrono::steady_clock;

struct BatchPolicyConfig {
  // Rows one engine run may hold; 0 or 1: every request runs alone.
  int64_t max_batch_size = 0;
  bool dynamic_batching = false;  // off: every request runs alone, in priority then deadline order
  std::vector<int64_t> preferred_batch_sizes;  // rows; empty: max_batch_size is the only target
  SchedClock::duration max_queue_delay{0};     // how long a request may wait for others to join it
  // When set, the delay for a batch that has `rows` rows so far (`max_queue_delay: auto`).
  std::function<SchedClock::duration(int64_t rows)> delay_for;
  // When set, the most rows the next batch may take (at most max_batch_size); a request with
  // more rows still runs, alone.
  std::function<int64_t()> max_rows;
  // Queued requests allowed per priority level (0: unbounded); levels not listed use the default.
  uint32_t default_max_queue_size = 0;
  std::map<uint32_t, uint32_t> max_queue_size;
  uint32_t max_inflight = 0;  // queued plus running requests of the version; 0: unbounded
  // A request waiting longer than this is treated as one level more urgent per period waited,
  // so a busy high level cannot starve the low ones forever; 0: no aging.
  SchedClock::duration aging{0};
};

// What the policy knows of one queued request.
struct QueuedRequest {
  uint64_t id = 0;      // the caller's handle; unique among queued requests
  uint32_t level = 0;   // priority level: lower is more urgent
  SchedClock::time_point arrival;
  SchedClock::time_point deadline = SchedClock::time_point::max();
  bool delay_on_timeout = false;  // Triton's DELAY action: past its deadline the request is demoted, not failed
  uint64_t signature = 0;         // requests batch together only when their signatures are equal
  int64_t rows = 1;               // batch rows it adds to a run
};

enum class Admission { Accepted, QueueFull, TooManyInflight };

class BatchPolicy {
 public:
  explicit BatchPolicy(BatchPolicyConfig config);

  const BatchPolicyConfig& config() const { return config_; }

  // Backpressure: whether a request of `level` may enter, given `running` requests in engine runs.
  Admission admit(uint32_t level, size_t running) const;
  void push(const QueuedRequest& request);
  // Removes a queued request (e.g. its client went away); false when it is not queued.
  bool remove(uint64_t id);

  // Requests whose deadline has passed at `now`: removed and returned (to be answered with a
  // timeout). Requests with delay_on_timeout are instead demoted behind every level and stay.
  std::vector<uint64_t> expire(SchedClock::time_point now);

  struct Decision {
    std::vector<uint64_t> batch;  // ids to run together now, most urgent first; empty: nothing now
    // When to ask again if nothing changes (a batch's queue delay ends); max(): no need.
    SchedClock::time_point wake = SchedClock::time_point::max();
  };
  // Called when an instance is free. The most urgent request heads the batch; queued requests
  // with its signature join it in urgency order up to max_batch_size rows. The batch runs now
  // when it is full, has reached the largest preferred size, or the head's queue delay is over,
  // or waiting longer would pass a member's deadline (`run_estimate` before it); otherwise the
  // decision names when to ask again. At the end of the delay a batch is trimmed to the largest
  // preferred size it can form exactly, if any.
  Decision next_batch(SchedClock::time_point now, SchedClock::duration run_estimate = {}) const;
  // Takes the ids of a decision out of the queue (they are about to run).
  void take(const std::vector<uint64_t>& ids);

  // The earliest deadline among queued requests that fail on timeout; max(): none.
  SchedClock::time_point next_deadline() const;
  size_t size() const { return queue_.size(); }
  size_t size(uint32_t level) const;
  bool empty() const { return queue_.empty(); }

 private:
  // Orders requests by urgency at `now`: effective level, then deadline, then arrival.
  bool more_urgent(const QueuedRequest& a, const QueuedRequest& b, SchedClock::time_point now) const;
  int64_t effective_level(const QueuedRequest& r, SchedClock::time_point now) const;

  BatchPolicyConfig config_;
  std::vector<QueuedRequest> queue_;  // unordered; queues are short enough to scan
  std::map<uint32_t, size_t> per_level_;
  uint32_t demoted_level_ = 0;  // above every level seen: where timed-out DELAY requests go
};

// Releases answers in arrival order (`preserve_ordering`): an answer completed early is held
// until every earlier request has been answered.
class OrderingBuffer {
 public:
  // Returns the next sequence number (assign at arrival).
  uint64_t next() { return next_seq_++; }
  // Marks `seq` complete; returns the sequence numbers now releasable, in order.
  std::vector<uint64_t> complete(uint64_t seq);

 private:
  uint64_t next_seq_ = 0;
  uint64_t released_ = 0;  // every seq below this has been released
  std::set<uint64_t> done_;  // completed, not yet released
};

}  // namespace ignis::serve
