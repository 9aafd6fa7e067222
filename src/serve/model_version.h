// SPDX-License-Identifier: Apache-2.0
// One loaded version of a served model: its Session, its config, and the queue in front of it.
// `instance_count` worker threads take batches chosen by a BatchPolicy (dynamic batching,
// priorities, deadlines, backpressure) and run them on the shared Session: the requests of a
// batch are copied into one input per name, run once, and each output is split back by rows.
// A timer thread answers requests whose deadline passes while every instance is busy. Jobs
// enter through submit() and leave through their completion callback, called exactly once.
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
#include "serve/adaptive_delay.h"
#include "serve/batch_assembly.h"
#include "serve/batch_policy.h"
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
  bool delay_on_timeout = false;  // the queue policy's DELAY action: demoted, not failed, at the deadline
  uint64_t seq = 0;               // arrival order, for preserve_ordering
  std::function<void(InferResult)> done;
};

// Counters behind Triton's statistics extension (/stats), nanoseconds and counts.
struct VersionStats {
  std::atomic<uint64_t> success_count{0}, success_ns{0}, fail_count{0}, fail_ns{0};
  std::atomic<uint64_t> queue_count{0}, queue_ns{0};
  std::atomic<uint64_t> compute_input_ns{0}, compute_infer_ns{0}, compute_output_ns{0}, compute_count{0};
  std::atomic<uint64_t> inference_count{0}, execution_count{0};
  std::atomic<uint64_t> cache_hit_count{0}, cache_hit_ns{0}, cache_miss_count{0}, cache_miss_ns{0};
  std::atomic<uint64_t> last_inference_ms{0};  // since the Unix epoch

  // Executions by batch size (rows), for Triton's batch_stats.
  struct BatchSizeStats {
    uint64_t count = 0, input_ns = 0, infer_ns = 0, output_ns = 0;
  };
  void record_execution(int64_t rows, uint64_t input_ns, uint64_t infer_ns, uint64_t output_ns);
  std::map<int64_t, BatchSizeStats> by_batch_size() const;

 private:
  mutable std::mutex batch_mu_;
  std::map<int64_t, BatchSizeStats> by_batch_size_;
};

struct VersionMetrics {
  Histogram* request = nullptr;
  Histogram* queue = nullptr;
  Histogram* compute = nullptr;
  Histogram* batch_size = nullptr;
  Histogram* batch_fill = nullptr;  // null when max_batch_size is 0
  Counter* success = nullptr;
  std::map<std::string, Counter*> failure;  // by reason
  Counter* rejected_queue_full = nullptr;    // backpressure, by its cause
  Counter* rejected_inflight = nullptr;
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
  // Unique to this load in the process: a reloaded version of the same number gets a new one,
  // so nothing cached for the old load (keyed by it) can answer for the new.
  uint64_t load_id() const { return load_id_; }
  const ModelConfig& config() const { return config_; }
  const Session& session() const { return *session_; }
  VersionStats& stats() { return stats_; }
  VersionMetrics& metrics() { return metrics_; }

  // Checks a decoded request against the config: input names, datatypes, shapes, batch size
  // and requested outputs.
  std::optional<ServeError> validate(const InferRequest& request) const;

  // Queues a job; errors (queue full, too many in flight, stopping) are returned and `done`
  // is not called. When nothing is queued, an instance is idle, no queue delay is configured
  // and the model's runs are short (under kInlineRunMicros on average), the job runs at once on
  // the calling thread instead: two thread hand-offs (to a worker and back to the I/O thread)
  // cost more than such a run.
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
  // Records a request answered from the response cache, and the cost of a lookup that missed.
  void record_cache_hit(Clock::duration elapsed);
  void record_cache_miss(Clock::duration lookup);

 private:
  using Jobs = std::vector<std::unique_ptr<InferJob>>;
  ModelVersion() = default;
  void worker();
  void timer();
  // Runs jobs as one engine run (several: concatenated along the batch dimension) and answers each.
  void run_batch(Jobs& jobs);
  // Runs each job alone; for a batch whose run failed or whose outputs cannot be split by rows.
  void run_each(Jobs& jobs);
  void answer(std::unique_ptr<InferJob> job, InferResult result);
  void answer_timeout(std::unique_ptr<InferJob> job, Clock::time_point now);
  // Answers, without running them, the jobs of a batch whose clients have gone.
  void drop_cancelled(Jobs& batch);
  // Moves the jobs of expired requests out of the queue (mu_ held).
  void take_expired(Clock::time_point now, Jobs* out);
  // Releases the instance a finished run held and wakes a worker if jobs wait for one.
  void finish_run(size_t jobs);
  uint64_t signature(const InferRequest& request) const;
  // Shape buckets: which request dims vary, and which output dims follow them (by the model's
  // dimension names); off, with a warning, when some variable output dim follows none.
  void set_up_buckets();
  const std::vector<DimLink>& links(const InferRequest& request, size_t output) const;
  // `extent` on dimension `dim` of `input`: rounded up to its bucket's edge when shape buckets
  // are on and the dimension varies, else as it is.
  int64_t bucketed_extent(const std::string& input, size_t dim, int64_t extent) const;
  // Whether some variable extent of the request is not a bucket edge (it needs padding).
  bool off_edge(const InferRequest& request) const;
  // The batch rows a request brings (1 for models without a batch dimension).
  int64_t rows_of(const InferRequest& request) const;
  void observe_fill(const InferRequest& first, const BatchLayout& layout);
  void warm_up();

  ModelConfig config_;
  int64_t version_ = 0;
  uint64_t load_id_ = 0;
  std::optional<Session> session_;
  VersionStats stats_;
  VersionMetrics metrics_;

  mutable std::mutex mu_;
  std::condition_variable cv_;        // workers: a batch may be ready
  std::condition_variable timer_cv_;  // the timer: the earliest deadline changed
  std::optional<BatchPolicy> policy_;
  std::optional<AdaptiveDelay> adaptive_;  // `max_queue_delay_microseconds: auto`; guarded by mu_
  std::map<uint64_t, std::unique_ptr<InferJob>> queued_jobs_;  // by policy id
  uint64_t next_id_ = 0;
  int running_ = 0;             // engine runs in progress, on workers or inline; at most instance_count
  size_t running_jobs_ = 0;     // requests in those runs
  std::atomic<bool> batchable_{true};  // false once an output was found without the batch dimension
  std::atomic<double> run_micros_{1e9};  // moving average of engine runs; large until measured
  bool stopping_ = false;
  bool timer_stop_ = false;
  std::vector<std::thread> workers_;
  std::thread timer_;

  std::atomic<bool> buckets_{false};  // set at load; off for good if an output cannot be cut back
  std::map<std::string, std::vector<size_t>> variable_dims_;   // by input name
  std::map<std::string, std::vector<DimLink>> output_links_;   // by output name
  MetricsRegistry* registry_ = nullptr;
  std::mutex fill_mu_;
  std::map<std::string, Histogram*> bucket_fill_;  // by bucket label

  // preserve_ordering: answers leave in arrival order.
  std::mutex order_mu_;
  std::optional<OrderingBuffer> ordering_;
  std::map<uint64_t, std::pair<std::unique_ptr<InferJob>, InferResult>> held_;  // answered early
  std::deque<std::pair<std::unique_ptr<InferJob>, InferResult>> releasable_;    // in order
  bool releasing_ = false;
};

}  // namespace ignis::serve
