// SPDX-License-Identifier: Apache-2.0
// One loaded version of a served model: its Session, its config, and the queue in front of it
// with `instance_count` worker threads that run jobs on the shared Session. The queue is the
// seam where scheduling (batching, deadlines, priorities) plugs in: jobs enter through
// submit() and leave through their completion callback, called once from a worker thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "ignis/session.h"
#include "serve/errors.h"
#include "serve/infer_request.h"
#include "serve/metrics.h"
#include "serve/model_config.h"

namespace ignis::serve {

using Clock = std::chrono::steady_clock;
using InferResult = std::variant<InferResponse, ServeError>;

struct InferJob {
  InferRequest request;
  Clock::time_point received;  // when the request was fully read
  Clock::time_point enqueued;
  Clock::time_point deadline = Clock::time_point::max();
  uint32_t priority = 0;  // lower runs first; 0 = the model's default level
  std::function<void(InferResult)> done;
};

// Counters behind Triton's statistics extension (/stats), nanoseconds and counts.
struct VersionStats {
  std::atomic<uint64_t> success_count{0}, success_ns{0}, fail_count{0}, fail_ns{0};
  std::atomic<uint64_t> queue_count{0}, queue_ns{0};
  std::atomic<uint64_t> compute_input_ns{0}, compute_infer_ns{0}, compute_output_ns{0}, compute_count{0};
  std::atomic<uint64_t> inference_count{0}, execution_count{0};
  std::atomic<uint64_t> last_inference_ms{0};  // since the Unix epoch
};

struct VersionMetrics {
  Histogram* request = nullptr;
  Histogram* queue = nullptr;
  Histogram* compute = nullptr;
  Histogram* batch_size = nullptr;
  Histogram* batch_fill = nullptr;  // null when max_batch_size is 0
  Counter* success = nullptr;
  std::map<std::string, Counter*> failure;  // by reason
  Gauge* inflight = nullptr;
  Gauge* queued = nullptr;
  Gauge* ready = nullptr;
  Gauge* max_batch_size = nullptr;
};

class ModelVersion {
 public:
  // Opens and warms the model; the config is completed from it (`derive_batch` when it came
  // from no file). Worker threads start here.
  static Result<std::shared_ptr<ModelVersion>> load(const std::string& path, int64_t version, ModelConfig config,
                                                    bool derive_batch, int64_t default_max_batch_size,
                                                    const SessionOptions& session_options, MetricsRegistry* metrics);
  ~ModelVersion();

  const std::string& name() const { return config_.name; }
  int64_t version() const { return version_; }
  const ModelConfig& config() const { return config_; }
  const Session& session() const { return *session_; }
  VersionStats& stats() { return stats_; }
  VersionMetrics& metrics() { return metrics_; }

  // Checks a decoded request against the config: input names, datatypes, shapes, batch size
  // and requested outputs.
  std::optional<ServeError> validate(const InferRequest& request) const;

  // Queues a job; errors (queue full, stopping) are returned and `done` is not called.
  // When nothing is queued, an instance is idle and the model's runs are short (under
  // kInlineRunMicros on average), the job runs at once on the calling thread instead: two
  // thread hand-offs (to a worker and back to the I/O thread) cost more than such a run.
  std::optional<ServeError> submit(std::unique_ptr<InferJob> job);
  static constexpr double kInlineRunMicros = 200;

  // Stops taking jobs, lets queued and running ones finish, joins the workers.
  void drain_and_stop();
  // Answers every queued (not yet running) job with `error` at once; used when a shutdown's
  // exit timeout has passed.
  void fail_queued(const ServeError& error);
  size_t pending() const;

  // Records a request that failed before reaching the queue.
  void record_failure(ErrorKind kind, Clock::duration elapsed);

 private:
  ModelVersion() = default;
  void worker();
  void run_job(InferJob& job);
  // Releases the instance a finished run held and wakes a worker if jobs wait for one.
  void finish_run();
  void warm_up();

  ModelConfig config_;
  int64_t version_ = 0;
  std::optional<Session> session_;
  VersionStats stats_;
  VersionMetrics metrics_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint32_t, std::deque<std::unique_ptr<InferJob>>> queue_;  // by priority level
  size_t queued_ = 0;
  int running_ = 0;  // jobs running, on workers or inline; at most instance_count
  std::atomic<double> run_micros_{1e9};  // moving average of engine runs; large until measured
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace ignis::serve
