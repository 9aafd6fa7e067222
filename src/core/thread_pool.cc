// SPDX-License-Identifier: Apache-2.0
#include "core/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace ignis {

ThreadPool::ThreadPool(int threads, bool pin) {
  if (threads <= 0) threads = default_threads();
  threads = std::min(threads, kMaxThreads);
  claims_ = std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) claims_[i].store(0);
  const std::vector<int> cpus = pin ? core_cpus() : std::vector<int>{};
  for (int i = 1; i < threads; ++i) {
    workers_.emplace_back([this, i] { worker_loop(i); });
    if (cpus.empty()) continue;
    // Worker k takes core k: the caller usually runs on the first core, which stays free.
    const int cpu = cpus[static_cast<size_t>(i) % cpus.size()];
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    const bool bound = pthread_setaffinity_np(workers_.back().native_handle(), sizeof(set), &set) == 0;
    worker_cpus_.push_back(bound ? cpu : -1);
  }
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  {
    std::lock_guard<std::mutex> lock(mu_);  // a worker between its check and its wait holds mu_
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

// Reads a small integer from a sysfs file, or -1.
int read_int_file(const std::string& path) {
  std::ifstream in(path);
  int v = -1;
  return (in >> v) ? v : -1;
}

}  // namespace

std::vector<int> ThreadPool::core_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return {};
  std::set<std::pair<int, int>> seen;  // (package, core)
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    const std::string topo = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    const int package = read_int_file(topo + "physical_package_id");
    const int core = read_int_file(topo + "core_id");
    // Without topology information every CPU counts as its own core.
    if (core < 0 || seen.emplace(package, core).second) cpus.push_back(cpu);
  }
  return cpus;
}

std::shared_ptr<ThreadPool> ThreadPool::shared(int threads, bool pin) {
  if (threads <= 0) threads = default_threads();
  static std::mutex mu;
  static std::map<std::pair<int, bool>, std::weak_ptr<ThreadPool>> pools;
  std::lock_guard<std::mutex> lock(mu);
  std::weak_ptr<ThreadPool>& slot = pools[{threads, pin}];
  std::shared_ptr<ThreadPool> pool = slot.lock();
  if (!pool) {
    pool = std::make_shared<ThreadPool>(threads, pin);
    slot = pool;
  }
  return pool;
}

namespace {

std::pair<int64_t, int64_t> chunk_range(int64_t n, int chunks, int k) {
  const int64_t base = n / chunks, extra = n % chunks;
  const int64_t begin = k * base + std::min<int64_t>(k, extra);
  return {begin, begin + base + (k < extra ? 1 : 0)};
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// The first part of a spin that busy-waits; the rest yields between checks.
constexpr int kPauseMicros = 10;

// Waits until done() or until kSpinMicros have passed; returns done()'s last value. The
// first kPauseMicros busy-wait; after that each check yields the CPU, so that on a
// machine with more runnable threads than cores (or a container's CPU quota) a waiting
// thread hands its time to the threads doing the work (measured on `ignis bench` of
// minilm with 2 threads on a loaded 2-core machine: pausing throughout was slower).
template <class Done>
bool spin_until(Done done) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto yield_from = start + std::chrono::microseconds(kPauseMicros);
  const auto deadline = start + std::chrono::microseconds(ThreadPool::kSpinMicros);
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    const auto now = Clock::now();
    if (now >= deadline) return done();
    if (now >= yield_from) std::this_thread::yield();
  }
}

constexpr uint64_t kChunkBits = 16;
int epoch_chunks(uint64_t epoch) { return static_cast<int>(epoch & ((uint64_t{1} << kChunkBits) - 1)); }

}  // namespace

// Lost wake-ups are excluded by ordering (all seq_cst): a worker announces itself in
// sleeping_workers_ and then re-reads epoch_ under mu_; the caller publishes epoch_ and then
// reads sleeping_workers_, taking mu_ before it notifies. Either the worker sees the new
// epoch or the caller sees the sleeper. The finish handshake (pending_, caller_sleeping_,
// done_) is the mirror image.
void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    auto fresh = [&] { return stop_.load() || epoch_.load() != seen; };
    if (!spin_until(fresh)) {
      std::unique_lock<std::mutex> lock(mu_);
      sleeping_workers_.fetch_add(1);
      wake_.wait(lock, fresh);
      sleeping_workers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    seen = epoch_.load();
    const int chunks = epoch_chunks(seen);
    if (index >= chunks) continue;  // not part of this job; job_ may already be the next one
    // The caller may have run this chunk already (and even started the next job): then the
    // claim fails and job_ is not touched.
    if (!claim(index, seen >> kChunkBits)) continue;
    auto [b, e] = chunk_range(job_n_, chunks, index);
    if (b < e) (*job_)(b, e);
    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
      { std::lock_guard<std::mutex> lock(mu_); }
      done_.notify_one();
    }
  }
}

bool ThreadPool::claim(int k, uint64_t seq) {
  uint64_t cur = claims_[k].load();
  while (cur < seq)
    if (claims_[k].compare_exchange_weak(cur, seq)) return true;
  return false;
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, RangeFn fn) {
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
  job_ = &fn;
  job_n_ = n;
  pending_.store(chunks - 1);
  const uint64_t seq = (epoch_.load() >> kChunkBits) + 1;
  epoch_.store((seq << kChunkBits) | static_cast<uint64_t>(chunks));
  if (sleeping_workers_.load() > 0) {
    { std::lock_guard<std::mutex> lock(mu_); }
    wake_.notify_all();
  }
  auto [b, e] = chunk_range(n, chunks, 0);
  fn(b, e);
  // Chunks whose worker has not started yet (descheduled, or still waking) run here.
  for (int k = 1; k < chunks; ++k) {
    if (!claim(k, seq)) continue;
    auto [kb, ke] = chunk_range(n, chunks, k);
    fn(kb, ke);
    pending_.fetch_sub(1);
  }
  auto finished = [&] { return pending_.load() == 0; };
  if (!spin_until(finished)) {
    std::unique_lock<std::mutex> lock(mu_);
    caller_sleeping_.store(true);
    done_.wait(lock, finished);
    caller_sleeping_.store(false);
  }
}

void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, RangeFn fn) {
  if (pool) pool->parallel_for(n, grain, fn);
  else if (n > 0) fn(0, n);
}

}  // namespace ignis
