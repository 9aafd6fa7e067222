// SPDX-License-Identifier: Apache-2.0
#include "serve/server.h"

#include "core/strings.h"
#include "core/thread_pool.h"
#include "serve/log.h"
#include "serve/response_cache.h"

namespace ignis::serve {

int engine_threads(int threads, int io_threads) {
  const int budget = threads > 0 ? threads : ThreadPool::default_threads();
  // On four or more cores the I/O threads get their own; below that they share the engine's
  // cores, since they parse and encode between runs and sleep in epoll otherwise.
  return budget >= 4 ? std::max(1, budget - io_threads) : budget;
}

InferenceServer::InferenceServer(ServerOptions options) : options_(std::move(options)) {
  RepositoryOptions ro;
  ro.root = options_.repository;
  ro.session.threads = engine_threads(options_.threads, options_.io_threads);
  ro.session.memory_limit_bytes = options_.memory_limit_bytes;
  ro.default_max_batch_size = options_.default_max_batch_size;
  ResponseCache::Options co;
  co.max_bytes = options_.response_cache_bytes;
  co.ttl = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(options_.response_cache_ttl_s));
  cache_ = std::make_unique<ResponseCache>(co, &metrics_);
  ro.on_retired = [cache = cache_.get()](const ModelVersion& v) { cache->drop_version(v.name(), static_cast<int64_t>(v.load_id())); };
  repository_ = std::make_unique<ModelRepository>(ro, &metrics_);
}

InferenceServer::~InferenceServer() { stop(); }

void InferenceServer::start() {
  repository_->load_all();
  control_thread_ = std::thread([this] { control_loop(); });
  ready_ = true;
}

void InferenceServer::control(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(control_mu_);
    control_tasks_.push_back(std::move(task));
  }
  control_cv_.notify_one();
}

void InferenceServer::control_loop() {
  using namespace std::chrono;
  const bool polling = options_.repository_poll_s > 0;
  auto next_poll = steady_clock::now() + duration_cast<steady_clock::duration>(duration<double>(options_.repository_poll_s));
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(control_mu_);
      auto ready = [&] { return control_stop_ || !control_tasks_.empty(); };
      if (polling) control_cv_.wait_until(lock, next_poll, ready);
      else control_cv_.wait(lock, ready);
      if (control_stop_) return;
      if (!control_tasks_.empty()) {
        task = std::move(control_tasks_.front());
        control_tasks_.pop_front();
      }
    }
    if (task) {
      task();
    } else if (polling && steady_clock::now() >= next_poll) {
      if (!draining_) repository_->poll();
      next_poll = steady_clock::now() + duration_cast<steady_clock::duration>(duration<double>(options_.repository_poll_s));
    }
  }
}

std::optional<ServeError> InferenceServer::infer(InferRequest&& req, Clock::time_point received,
                                                 std::function<void(InferResult)> done) {
  if (draining_) return ServeError{ErrorKind::Unavailable, "the server is shutting down"};
  auto found = repository_->find(req.model, req.version);
  if (auto* e = std::get_if<ServeError>(&found)) return *e;
  std::shared_ptr<ModelVersion> version = std::get<std::shared_ptr<ModelVersion>>(std::move(found));
  if (auto e = version->validate(req)) {
    version->record_failure(e->kind, Clock::now() - received);
    return e;
  }
  // The response cache, for models that enable it: keyed by the version's load, so a reloaded
  // version never answers from what an earlier load computed.
  std::optional<CacheKey> cache_key;
  const ModelConfig& c = version->config();
  if (c.response_cache && cache_->enabled() && cache_->should_try(version->name())) {
    const auto lookup_start = Clock::now();
    const int64_t load = static_cast<int64_t>(version->load_id());
    cache_key = response_cache_key(version->name(), load, req);
    if (std::optional<InferResponse> hit = cache_->lookup(version->name(), load, *cache_key)) {
      hit->version = std::to_string(version->version());
      hit->id = req.id;
      for (size_t i = 0; i < hit->outputs.size(); ++i)
        hit->outputs[i].binary = req.outputs.empty() ? req.binary_output
                                                     : req.outputs[i].binary.value_or(req.binary_output);
      version->record_cache_hit(Clock::now() - received);
      done(std::move(*hit));
      return std::nullopt;
    }
    version->record_cache_miss(Clock::now() - lookup_start);
  }
  auto job = std::make_unique<InferJob>();
  job->received = received;
  const QueuePolicy* policy = nullptr;
  if (c.dynamic_batching) {
    const DynamicBatching& b = *c.dynamic_batching;
    uint32_t level = 0;
    if (b.priority_levels > 0) {
      level = b.default_priority_level;
      if (req.priority && *req.priority != 0) {
        if (*req.priority > b.priority_levels) {
          ServeError e{ErrorKind::BadRequest, str_cat("priority ", *req.priority, " is outside the model's levels 1 to ",
                                                      b.priority_levels)};
          version->record_failure(e.kind, Clock::now() - received);
          return e;
        }
        level = static_cast<uint32_t>(*req.priority);
      }
    }
    job->priority = level;
    auto it = b.priority_queue_policy.find(level);
    policy = it != b.priority_queue_policy.end() ? &it->second : &b.default_queue_policy;
  }
  uint64_t timeout_us = policy ? policy->default_timeout_us : 0;
  if (req.timeout_us && *req.timeout_us > 0) {
    // Triton's rule: a request may only shorten the policy's timeout unless overrides are allowed.
    if (!policy || timeout_us == 0 || policy->allow_timeout_override || *req.timeout_us < timeout_us)
      timeout_us = *req.timeout_us;
  }
  if (timeout_us > 0) job->deadline = received + std::chrono::microseconds(timeout_us);
  job->delay_on_timeout = policy && policy->delay_on_timeout;
  job->request = std::move(req);
  job->done = [version, done = std::move(done), cache = cache_.get(), cache_key](InferResult r) {
    if (cache_key)
      if (const auto* resp = std::get_if<InferResponse>(&r))
        cache->insert(version->name(), static_cast<int64_t>(version->load_id()), *cache_key, *resp);
    done(std::move(r));
  };
  if (auto e = version->submit(std::move(job))) {
    version->record_failure(e->kind, Clock::now() - received);
    return e;
  }
  return std::nullopt;
}

void InferenceServer::request_finished() {
  if (open_requests_.fetch_sub(1) == 1) {
    std::lock_guard<std::mutex> lock(idle_mu_);
    idle_cv_.notify_all();
  }
}

bool InferenceServer::drain(std::chrono::duration<double> timeout) {
  draining_ = true;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout);
  std::unique_lock<std::mutex> lock(idle_mu_);
  while (open_requests_.load() > 0 || repository_->pending() > 0) {
    if (idle_cv_.wait_until(lock, std::min(deadline, Clock::now() + std::chrono::milliseconds(20))) ==
            std::cv_status::timeout &&
        Clock::now() >= deadline) {
      // Out of time: what has not started is answered now; runs in progress finish.
      lock.unlock();
      for (const auto& v : repository_->all_versions())
        v->fail_queued({ErrorKind::Unavailable, "the server is shutting down (exit timeout reached)"});
      return false;
    }
  }
  return true;
}

void InferenceServer::stop() {
  {
    std::lock_guard<std::mutex> lock(control_mu_);
    control_stop_ = true;
  }
  control_cv_.notify_all();
  if (control_thread_.joinable()) control_thread_.join();
  repository_->stop_all();
}

}  // namespace ignis::serve
