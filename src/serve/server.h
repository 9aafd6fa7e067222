// SPDX-License-Identifier: Apache-2.0
// The inference server without its transports: the repository, the metrics, readiness and
// draining, and the infer entry point that validates a decoded request and queues it. HTTP and
// gRPC front ends call this; it never sees a socket or a wire format.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "serve/metrics.h"
#include "serve/model_version.h"
#include "serve/repository.h"

namespace ignis::serve {

struct ServerOptions {
  std::string repository;
  std::string host = "127.0.0.1";
  int http_port = 8000;
  int grpc_port = 8001;  // -1: no gRPC
  int threads = 0;       // the whole budget; 0 = physical cores
  int io_threads = 1;    // HTTP threads (part of the budget)
  double exit_timeout_s = 30;
  double repository_poll_s = 0;  // 0: no polling
  int64_t default_max_batch_size = 32;
  size_t max_body_bytes = size_t{64} << 20;
  int max_connections = 1024;
  double read_timeout_s = 30;  // headers and body must arrive within this
  size_t memory_limit_bytes = 0;
  size_t response_cache_bytes = size_t{128} << 20;  // shared by the models that enable response_cache
  double response_cache_ttl_s = 0;                  // 0: no expiry by age
  DecodeLimits decode;
};

class ResponseCache;

class InferenceServer {
 public:
  explicit InferenceServer(ServerOptions options);
  ~InferenceServer();

  const ServerOptions& options() const { return options_; }
  MetricsRegistry& metrics() { return metrics_; }
  ModelRepository& repository() { return *repository_; }

  // Loads the repository and starts polling; the server is ready afterwards.
  void start();
  bool live() const { return true; }
  bool ready() const { return ready_.load() && !draining_.load(); }
  bool draining() const { return draining_.load(); }

  // Validates and queues; `done` is called exactly once, from any thread, unless an error is
  // returned here first (then `done` is not called).
  std::optional<ServeError> infer(InferRequest&& request, Clock::time_point received,
                                  std::function<void(InferResult)> done);

  // Runs repository work (load/unload) off the caller's thread; `done` runs on that thread.
  void control(std::function<void()> task);

  // Shutdown: readiness turns false and new requests are refused; waits until every accepted
  // request is answered or `timeout` passes. Returns whether the drain completed.
  bool drain(std::chrono::duration<double> timeout);
  // Counts requests handed to a transport's completion (answered on the wire).
  void request_started() { open_requests_.fetch_add(1); }
  void request_finished();
  void stop();

 private:
  void control_loop();

  ServerOptions options_;
  MetricsRegistry metrics_;
  std::unique_ptr<ResponseCache> cache_;  // before the repository, which uses it until destroyed
  std::unique_ptr<ModelRepository> repository_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> open_requests_{0};
  std::mutex idle_mu_;
  std::condition_variable idle_cv_;

  std::mutex control_mu_;
  std::condition_variable control_cv_;
  std::deque<std::function<void()>> control_tasks_;
  bool control_stop_ = false;
  std::thread control_thread_;
};

// The engine's share of a thread budget of `threads` (0 = physical cores) after `io_threads`.
int engine_threads(int threads, int io_threads);

}  // namespace ignis::serve
