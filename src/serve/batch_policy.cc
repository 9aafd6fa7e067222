// SPDX-License-Identifier: Apache-2.0
#include "serve/batch_policy.h"

#include <algorithm>

namespace ignis::serve {

BatchPolicy::BatchPolicy(BatchPolicyConfig config) : config_(std::move(config)) {
  std::sort(config_.preferred_batch_sizes.begin(), config_.preferred_batch_sizes.end());
  for (const auto& [level, size] : config_.max_queue_size) demoted_level_ = std::max(demoted_level_, level + 1);
}

Admission BatchPolicy::admit(uint32_t level, size_t running) const {
  if (config_.max_inflight > 0 && queue_.size() + running >= config_.max_inflight) return Admission::TooManyInflight;
  auto it = config_.max_queue_size.find(level);
  const uint32_t limit = it != config_.max_queue_size.end() ? it->second : config_.default_max_queue_size;
  if (limit > 0 && size(level) >= limit) return Admission::QueueFull;
  return Admission::Accepted;
}

void BatchPolicy::push(const QueuedRequest& request) {
  queue_.push_back(request);
  ++per_level_[request.level];
  demoted_level_ = std::max(demoted_level_, request.level + 1);
}

bool BatchPolicy::remove(uint64_t id) {
  auto it = std::find_if(queue_.begin(), queue_.end(), [&](const QueuedRequest& r) { return r.id == id; });
  if (it == queue_.end()) return false;
  --per_level_[it->level];
  queue_.erase(it);
  return true;
}

size_t BatchPolicy::size(uint32_t level) const {
  auto it = per_level_.find(level);
  return it == per_level_.end() ? 0 : it->second;
}

std::vector<uint64_t> BatchPolicy::expire(SchedClock::time_point now) {
  std::vector<uint64_t> expired;
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (it->deadline > now) {
      ++it;
    } else if (it->delay_on_timeout) {
      --per_level_[it->level];
      it->level = demoted_level_;
      ++per_level_[it->level];
      it->deadline = SchedClock::time_point::max();
      ++it;
    } else {
      expired.push_back(it->id);
      --per_level_[it->level];
      it = queue_.erase(it);
    }
  }
  return expired;
}

SchedClock::time_point BatchPolicy::next_deadline() const {
  SchedClock::time_point t = SchedClock::time_point::max();
  for (const auto& r : queue_) t = std::min(t, r.deadline);
  return t;
}

int64_t BatchPolicy::effective_level(const QueuedRequest& r, SchedClock::time_point now) const {
  int64_t level = r.level;
  if (config_.aging.count() > 0 && now > r.arrival) level -= (now - r.arrival) / config_.aging;
  return level;
}

bool BatchPolicy::more_urgent(const QueuedRequest& a, const QueuedRequest& b, SchedClock::time_point now) const {
  const int64_t la = effective_level(a, now), lb = effective_level(b, now);
  if (la != lb) return la < lb;
  if (a.deadline != b.deadline) return a.deadline < b.deadline;
  if (a.arrival != b.arrival) return a.arrival < b.arrival;
  return a.id < b.id;
}

BatchPolicy::Decision BatchPolicy::next_batch(SchedClock::time_point now, SchedClock::duration run_estimate) const {
  Decision d;
  if (queue_.empty()) return d;
  std::vector<const QueuedRequest*> order;
  order.reserve(queue_.size());
  for (const auto& r : queue_) order.push_back(&r);
  std::sort(order.begin(), order.end(),
            [&](const QueuedRequest* a, const QueuedRequest* b) { return more_urgent(*a, *b, now); });
  const bool batching = config_.dynamic_batching && config_.max_batch_size > 1;
  if (!batching) {
    d.batch.push_back(order.front()->id);
    return d;
  }
  const auto& preferred = config_.preferred_batch_sizes;
  const int64_t max_rows =
      config_.max_rows ? std::clamp<int64_t>(config_.max_rows(), 1, config_.max_batch_size) : config_.max_batch_size;
  const int64_t target = preferred.empty() ? max_rows : std::min(preferred.back(), max_rows);
  // One candidate batch per signature, headed by its most urgent request, considered in the
  // urgency order of those heads: the first that is due runs. A batch still waiting for its
  // delay does not hold back another signature's batch that is due (the wait is voluntary).
  std::vector<bool> used(order.size(), false);
  for (size_t h = 0; h < order.size(); ++h) {
    if (used[h]) continue;
    const uint64_t signature = order[h]->signature;
    std::vector<const QueuedRequest*> members;
    int64_t rows = 0;
    for (size_t i = h; i < order.size(); ++i) {
      if (used[i] || order[i]->signature != signature) continue;
      used[i] = true;  // a request of this signature left out (no room) waits for a later batch
      if (rows + order[i]->rows > max_rows && !members.empty()) continue;
      members.push_back(order[i]);
      rows += order[i]->rows;
    }
    SchedClock::time_point oldest = SchedClock::time_point::max(), deadline = SchedClock::time_point::max();
    for (const auto* m : members) {
      oldest = std::min(oldest, m->arrival);
      if (!m->delay_on_timeout) deadline = std::min(deadline, m->deadline);
    }
    SchedClock::time_point due = oldest + (config_.delay_for ? config_.delay_for(rows) : config_.max_queue_delay);
    if (deadline != SchedClock::time_point::max()) due = std::min(due, deadline - run_estimate);
    if (rows < target && now < due) {
      d.wake = std::min(d.wake, due);
      continue;
    }
    // Run now, trimmed to the longest prefix whose rows form a preferred size exactly.
    size_t keep = members.size();
    if (!preferred.empty()) {
      int64_t sum = 0;
      for (size_t i = 0; i < members.size(); ++i) {
        sum += members[i]->rows;
        if (std::binary_search(preferred.begin(), preferred.end(), sum)) keep = i + 1;
      }
    }
    for (size_t i = 0; i < keep; ++i) d.batch.push_back(members[i]->id);
    d.wake = SchedClock::time_point::max();
    return d;
  }
  return d;
}

void BatchPolicy::take(const std::vector<uint64_t>& ids) {
  for (uint64_t id : ids) remove(id);
}

std::vector<uint64_t> OrderingBuffer::complete(uint64_t seq) {
  done_.insert(seq);
  std::vector<uint64_t> ready;
  while (!done_.empty() && *done_.begin() == released_) {
    ready.push_back(released_++);
    done_.erase(done_.begin());
  }
  return ready;
}

}  // namespace ignis::serve
