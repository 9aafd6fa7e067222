// SPDX-License-Identifier: Apache-2.0
// A fixed set of persistent workers for intra-op parallelism. parallel_for splits [0, n) into
// one contiguous chunk per thread (static partitioning) and blocks until all chunks finish.
// Safe to call from several threads at once: a caller that finds the workers busy runs its
// whole range inline rather than queueing behind another run.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ignis {

class ThreadPool {
 public:
  // `threads` includes the calling thread; 1 means no workers. 0 = physical cores.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) over disjoint chunks covering [0, n). Chunks are at least `grain`
  // long, so small ranges stay on the calling thread.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  // Physical cores of this machine (falls back to hardware_concurrency).
  static int default_threads();

 private:
  void worker_loop(int index);

  std::vector<std::thread> workers_;
  std::mutex dispatch_mu_;  // held by the caller that owns the workers for one parallel_for
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0;
  int job_chunks_ = 0;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

// Runs fn over [0, n) on `pool` if given, inline otherwise.
void parallel_for(ThreadPool* pool, int64_t n, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn);

}  // namespace ignis
