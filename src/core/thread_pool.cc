// SPDX-License-Identifier: Apache-2.0
#include "core/thread_pool.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <utility>

namespace ignis {

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = default_threads();
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

int ThreadPool::default_threads() {
  // Count distinct (physical id, core id) pairs: SMT siblings share a core's FMA units.
  std::ifstream in("/proc/cpuinfo");
  std::set<std::pair<std::string, std::string>> cores;
  std::string line, phys = "0";
  while (std::getline(in, line)) {
    auto value = [&] { return line.substr(line.find(':') + 1); };
    if (line.rfind("physical id", 0) == 0) phys = value();
    if (line.rfind("core id", 0) == 0) cores.emplace(phys, value());
  }
  int n = static_cast<int>(cores.size());
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, n);
}

namespace {
std::pair<int64_t, int64_t> chunk_range(int64_t n, int chunks, int k) {
  const int64_t base = n / chunks, extra = n % chunks;
  const int64_t begin = k * base + std::min<int64_t>(k, extra);
  return {begin, begin + base + (k < extra ? 1 : 0)};
}
}  // namespace

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int64_t, int64_t)>* job;
    int64_t n;
    int chunks;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
      n = job_n_;
      chunks = job_chunks_;
    }
    if (index < chunks) {
      auto [b, e] = chunk_range(n, chunks, index);
      if (b < e) (*job)(b, e);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int chunks = static_cast<int>(std::min<int64_t>(threads(), (n + grain - 1) / grain));
  if (chunks <= 1 || workers_.empty()) {
    fn(0, n);
    return;
  }
  std::unique_lock<std::mutex> owner(dispatch_mu_, std::try_to_lock);
  if (!owner.owns_lock()) {  // another run holds the workers: do not wait behind it
    fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    job_n_ = n;
    job_chunks_ = chunks;
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  auto [b, e] = chunk_range(n, chunks, 0);
  fn(b, e);
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
}

void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (pool) pool->parallel_for(n, grain, fn);
  else if (n > 0) fn(0, n);
}

}  // namespace ignis
