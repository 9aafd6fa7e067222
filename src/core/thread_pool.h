// SPDX-License-Identifier: Apache-2.0
// A fixed set of persistent workers for intra-op parallelism. parallel_for splits [0, n) into
// one contiguous chunk per thread (static partitioning) and blocks until all chunks finish.
// Safe to call from several threads at once: a caller that finds the workers busy runs its
// whole range inline rather than queueing behind another run.
//
// Waking a sleeping thread costs tens of microseconds, more than many kernels take. So idle
// workers spin for a bounded time (kSpinMicros) after each job before they block on a
// condition variable, and the caller spins the same way for the workers to finish: a model's
// back-to-back kernels find the workers awake without a syscall.
//
// Sessions share pools (ThreadPool::shared): all sessions of a process with the same thread
// count and pinning use one set of workers, so opening several sessions does not multiply
// the threads competing for the cores.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace ignis {

// A non-owning reference to a callable taking (begin, end). Building one never allocates;
// the callable must outlive the call it is passed to (a lambda argument does).
class RangeFn {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, RangeFn> && std::is_invocable_v<F&, int64_t, int64_t>)
  RangeFn(F&& f)  // NOLINT(google-explicit-constructor): lambdas convert implicitly, like std::function
      : obj_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* obj, int64_t begin, int64_t end) { (*static_cast<std::remove_reference_t<F>*>(obj))(begin, end); }) {}

  void operator()(int64_t begin, int64_t end) const { call_(obj_, begin, end); }

 private:
  void* obj_;
  void (*call_)(void*, int64_t, int64_t);
};

class ThreadPool {
 public:
  // How long an idle worker (or a caller waiting for workers) spins before it blocks: long
  // enough to bridge the gaps between a model's back-to-back parallel kernels. On a quiet
  // 2-core machine (2 threads, p50): 20 us -> 200 us took mobilenet_v2 from 8.0 to 6.7 ms and
  // resnet50 from 42.6 to 41.5 ms; 1000 us was within 3% of 200. On a machine loaded by other
  // processes spinning costs a little instead (resnet50 at 80 us was ~2% slower than at 20).
  static constexpr int kSpinMicros = 200;
  static constexpr int kMaxThreads = 1024;

  // `threads` includes the calling thread; 1 means no workers. 0 = physical cores. With
  // `pin`, worker k is bound to one logical CPU of the k-th physical core (of those this
  // process may use, in order, wrapping around), so workers never share a core's FMA units
  // and keep their caches; the calling thread is the application's and is left unbound.
  explicit ThreadPool(int threads, bool pin = false);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) over disjoint chunks covering [0, n), one chunk per thread (static
  // partition: the chunk boundaries depend only on n, grain and the thread count). Chunks are
  // at least `grain` long, so small ranges stay on the calling thread (a single chunk never
  // touches a worker). Worker k runs chunk k unless the caller, done with chunk 0, finds it
  // not yet started and runs it itself: a descheduled worker (a busy machine) then costs
  // nothing instead of stalling the whole call.
  void parallel_for(int64_t n, int64_t grain, RangeFn fn);

  // Physical cores of this machine (falls back to hardware_concurrency).
  static int default_threads();

  // One logical CPU per physical core among those this process may run on, in order.
  static std::vector<int> core_cpus();

  // The pool of `threads` (0 = physical cores) threads with this pinning that every caller
  // shares while any of them holds it; a new one once all have let go.
  static std::shared_ptr<ThreadPool> shared(int threads, bool pin);

  // The logical CPU worker k (1 <= k < threads()) is bound to, or -1 when not pinned.
  int worker_cpu(int k) const { return worker_cpus_.empty() ? -1 : worker_cpus_[static_cast<size_t>(k - 1)]; }

 private:
  void worker_loop(int index);
  // Takes chunk k of job `seq` for the calling thread; false when another thread has it.
  bool claim(int k, uint64_t seq);

  std::vector<std::thread> workers_;
  std::vector<int> worker_cpus_;  // empty when not pinned
  std::mutex dispatch_mu_;  // held by the caller that owns the workers for one parallel_for
  // Per chunk, the last job sequence number it was claimed for (sequence numbers only grow,
  // so a worker still holding an old job's number can never claim a newer job's chunk).
  std::unique_ptr<std::atomic<uint64_t>[]> claims_;

  // The job, written by the owning caller before it publishes a new epoch, and read only by
  // the workers that take part in it (they stay busy until the job ends, so it cannot change
  // under them).
  const RangeFn* job_ = nullptr;
  int64_t job_n_ = 0;

  // (job sequence number << 16) | chunk count: one word, so a worker that takes no part in a
  // job learns that from the same load that tells it a job exists.
  std::atomic<uint64_t> epoch_{0};
  std::atomic<int> pending_{0};          // workers still running the current job's chunks
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stop_{false};
  std::mutex mu_;  // guards the blocking waits only
  std::condition_variable wake_;
  std::condition_variable done_;
};

// Runs fn over [0, n) on `pool` if given, inline otherwise.
void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, RangeFn fn);

}  // namespace ignis
