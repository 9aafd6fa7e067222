// SPDX-License-Identifier: Apache-2.0
#include "serve/model_version.h"

#include <algorithm>
#include <cstring>

#include "core/strings.h"
#include "serve/datatype.h"
#include "serve/durations.h"
#include "serve/log.h"
#include "serve/padding.h"

namespace ignis::serve {
namespace {

std::string names_of(const std::vector<TensorConfig>& ts) {
  std::vector<std::string> names;
  for (const auto& t : ts) names.push_back("'" + t.name + "'");
  return str_join(names);
}

VersionMetrics make_metrics(MetricsRegistry* r, const ModelConfig& c, int64_t version) {
  const Labels l{{"model", c.name}, {"version", std::to_string(version)}};
  VersionMetrics m;
  m.request = r->histogram("ignis_request_duration_seconds",
                           "Time of one inference request in the server, from fully received to response ready.",
                           latency_buckets(), l);
  m.queue = r->histogram("ignis_queue_duration_seconds", "Time a request waited in the model's queue.",
                         latency_buckets(), l);
  m.compute = r->histogram("ignis_compute_duration_seconds", "Time of one engine run (a batch of requests).",
                           latency_buckets(), l);
  m.batch_size = r->histogram("ignis_batch_size", "Requests per engine run.", {1, 2, 4, 8, 16, 32, 64, 128}, l);
  if (c.max_batch_size > 0)
    m.batch_fill = r->histogram("ignis_batch_fill_ratio", "Rows in an engine run divided by max_batch_size.",
                                {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}, l);
  m.success = r->counter("ignis_inference_success_total", "Inference requests answered with outputs.", l);
  for (const char* reason : {"bad_request", "not_found", "timeout", "rejected", "unavailable", "internal"}) {
    Labels fl = l;
    fl.emplace_back("reason", reason);
    m.failure[reason] = r->counter("ignis_inference_failure_total", "Inference requests that failed, by reason.", fl);
  }
  for (auto [slot, cause] : {std::pair{&m.rejected_queue_full, "queue_full"}, std::pair{&m.rejected_inflight, "max_inflight"}}) {
    Labels rl = l;
    rl.emplace_back("cause", cause);
    *slot = r->counter("ignis_rejected_total",
                       "Requests refused at once by backpressure (HTTP 429 / RESOURCE_EXHAUSTED), by cause.", rl);
  }
  m.inflight = r->gauge("ignis_inflight_requests", "Requests accepted and not yet answered (queued or running).", l);
  m.queued = r->gauge("ignis_queued_requests", "Requests waiting in the model's queue.", l);
  m.ready = r->gauge("ignis_model_ready", "1 when the model version serves requests, else 0.", l);
  m.max_batch_size = r->gauge("ignis_model_max_batch_size", "The version's max_batch_size (0: no batching).", l);
  m.max_batch_size->set(static_cast<double>(c.max_batch_size));
  return m;
}

BatchPolicyConfig policy_config(const ModelConfig& c) {
  BatchPolicyConfig p;
  p.max_batch_size = c.max_batch_size;
  p.max_inflight = c.max_inflight;
  p.aging = std::chrono::microseconds(c.priority_aging_us);
  if (c.dynamic_batching) {
    const DynamicBatching& b = *c.dynamic_batching;
    p.dynamic_batching = true;
    p.preferred_batch_sizes = b.preferred_batch_size;
    p.max_queue_delay = std::chrono::microseconds(b.max_queue_delay_us);
    p.default_max_queue_size = b.default_queue_policy.max_queue_size;
    for (const auto& [level, q] : b.priority_queue_policy) p.max_queue_size[level] = q.max_queue_size;
  }
  return p;
}

uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull + (h >> 29); }
uint64_t mix(uint64_t h, const std::string& s) { return mix(h, std::hash<std::string>{}(s)); }

}  // namespace

Result<std::shared_ptr<ModelVersion>> ModelVersion::load(const std::string& path, int64_t version, ModelConfig config,
                                                         bool derive_batch, int64_t default_max_batch_size,
                                                         const SessionOptions& session_options, MetricsRegistry* metrics) {
  IGNIS_ASSIGN_OR_RETURN(Session session, Session::open(path, session_options));
  IGNIS_RETURN_IF_ERROR(complete_model_config(&config, session, derive_batch, default_max_batch_size));
  std::shared_ptr<ModelVersion> v(new ModelVersion());
  v->config_ = std::move(config);
  v->version_ = version;
  static std::atomic<uint64_t> next_load_id{1};
  v->load_id_ = next_load_id.fetch_add(1);
  v->session_.emplace(std::move(session));
  v->metrics_ = make_metrics(metrics, v->config_, version);
  BatchPolicyConfig pc = policy_config(v->config_);
  if (v->config_.dynamic_batching && v->config_.dynamic_batching->auto_delay) {
    v->adaptive_.emplace(v->config_.max_batch_size, std::chrono::microseconds(v->config_.p99_target_us));
    // Called by the policy under mu_, which guards adaptive_.
    pc.delay_for = [p = v.get()](int64_t rows) { return p->adaptive_->delay(rows); };
    pc.max_rows = [p = v.get()] { return p->adaptive_->max_rows(); };
  }
  v->policy_.emplace(std::move(pc));
  v->registry_ = metrics;
  v->set_up_buckets();
  if (v->config_.dynamic_batching && v->config_.dynamic_batching->preserve_ordering) v->ordering_.emplace();
  v->warm_up();
  for (int i = 0; i < v->config_.instance_count; ++i) v->workers_.emplace_back([p = v.get()] { p->worker(); });
  v->timer_ = std::thread([p = v.get()] { p->timer(); });
  v->metrics_.ready->set(1);
  return v;
}

ModelVersion::~ModelVersion() { drain_and_stop(); }

void ModelVersion::warm_up() {
  NamedTensors inputs;
  for (const auto& t : config_.inputs) {
    if (t.dtype == DType::String || t.dtype == DType::Undefined) return;
    std::vector<int64_t> dims;
    if (config_.max_batch_size > 0) dims.push_back(1);
    for (int64_t d : t.dims) dims.push_back(d < 0 ? 1 : d);
    inputs.emplace_back(t.name, Tensor::zeros(t.dtype, Shape(dims)));
  }
  const auto start = Clock::now();
  auto r = session_->run(inputs);
  if (r) run_micros_ = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  if (!r)
    log_warning(str_cat("model '", config_.name, "' version ", version_,
                        ": warm-up run on zeros failed (serving anyway): ", r.error().message()));
}

std::optional<ServeError> ModelVersion::validate(const InferRequest& req) const {
  const bool batched = config_.max_batch_size > 0;
  int64_t batch = -1;
  for (const auto& in : req.inputs) {
    auto it = std::find_if(config_.inputs.begin(), config_.inputs.end(),
                           [&](const TensorConfig& t) { return t.name == in.name; });
    if (it == config_.inputs.end())
      return ServeError{ErrorKind::BadRequest, str_cat("unknown input '", in.name, "' for model '", config_.name,
                                                       "'; its inputs are ", names_of(config_.inputs))};
    if (in.dtype != it->dtype)
      return ServeError{ErrorKind::BadRequest, str_cat("input '", in.name, "' has datatype ", kserve_name(in.dtype),
                                                       " but the model expects ", kserve_name(it->dtype))};
    std::vector<int64_t> expected = it->dims;
    if (batched) expected.insert(expected.begin(), -1);
    bool ok = in.shape.size() == expected.size();
    for (size_t i = 0; ok && i < expected.size(); ++i) ok = expected[i] < 0 || expected[i] == in.shape[i];
    if (!ok)
      return ServeError{ErrorKind::BadRequest,
                        str_cat("input '", in.name, "' has shape ", str_list(in.shape), " but the model expects ",
                                str_list(expected), " (-1: any extent)")};
    if (batched) {
      const int64_t b = in.shape[0];
      if (b < 1 || b > config_.max_batch_size)
        return ServeError{ErrorKind::BadRequest, str_cat("input '", in.name, "' has batch size ", b,
                                                         "; the model takes 1 to ", config_.max_batch_size)};
      if (batch >= 0 && b != batch)
        return ServeError{ErrorKind::BadRequest,
                          str_cat("inputs disagree on the batch size (", batch, " and ", b, " for '", in.name, "')")};
      batch = b;
    }
  }
  for (const auto& t : config_.inputs) {
    if (t.optional) continue;
    if (std::none_of(req.inputs.begin(), req.inputs.end(), [&](const InferInput& in) { return in.name == t.name; }))
      return ServeError{ErrorKind::BadRequest, str_cat("missing input '", t.name, "' for model '", config_.name, "'")};
  }
  for (const auto& o : req.outputs) {
    const auto& outs = session_->outputs();
    if (std::none_of(outs.begin(), outs.end(), [&](const ValueInfo& v) { return v.name == o.name; })) {
      std::vector<std::string> names;
      for (const auto& v : outs) names.push_back("'" + v.name + "'");
      return ServeError{ErrorKind::BadRequest, str_cat("unknown output '", o.name, "' for model '", config_.name,
                                                       "'; its outputs are ", str_join(names))};
    }
  }
  return std::nullopt;
}

uint64_t ModelVersion::signature(const InferRequest& req) const {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const auto& in : req.inputs) {
    h = mix(mix(h, in.name), static_cast<uint64_t>(in.dtype));
    // In a shape bucket, a variable extent counts as its bucket's edge.
    for (size_t d = 1; d < in.shape.size(); ++d)
      h = mix(h, static_cast<uint64_t>(bucketed_extent(in.name, d, in.shape[d])));
    h = mix(h, ~0ull);
  }
  for (const auto& o : req.outputs) h = mix(h, o.name);
  return h >> 1;  // the top bit marks requests that never batch
}

std::optional<ServeError> ModelVersion::submit(std::unique_ptr<InferJob> job) {
  const InferRequest& req = job->request;
  bool batchable = config_.max_batch_size > 1 && batchable_.load(std::memory_order_relaxed);
  for (const auto& in : req.inputs) batchable = batchable && in.shape.size() >= 1;
  const uint64_t sig = batchable ? signature(req) : 0;
  const int64_t rows = rows_of(req);
  bool run_here = false;
  bool wake_timer = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_)
      return ServeError{ErrorKind::Unavailable,
                        str_cat("model '", config_.name, "' version ", version_, " is being unloaded")};
    switch (policy_->admit(job->priority, running_jobs_)) {
      case Admission::Accepted: break;
      case Admission::QueueFull:
        metrics_.rejected_queue_full->add();
        return ServeError{ErrorKind::Overloaded,
                          str_cat("model '", config_.name, "' has ", policy_->size(job->priority),
                                  " requests queued at priority level ", job->priority, ", its max_queue_size")};
      case Admission::TooManyInflight:
        metrics_.rejected_inflight->add();
        return ServeError{ErrorKind::Overloaded, str_cat("model '", config_.name, "' has ", config_.max_inflight,
                                                         " requests in flight, its ignis.max_inflight")};
    }
    job->enqueued = Clock::now();
    if (adaptive_) adaptive_->observe_arrival(job->enqueued);
    if (ordering_) {
      std::lock_guard<std::mutex> order_lock(order_mu_);
      job->seq = ordering_->next();
    }
    const BatchPolicyConfig& pc = policy_->config();
    const bool delay = pc.dynamic_batching && (adaptive_ ? adaptive_->delay(rows).count() > 0 : pc.max_queue_delay.count() > 0);
    if (policy_->empty() && running_ < config_.instance_count && !delay && run_micros_.load() < kInlineRunMicros) {
      run_here = true;
      ++running_;
      ++running_jobs_;
    } else {
      QueuedRequest q;
      q.id = next_id_++;
      q.level = job->priority;
      q.arrival = job->enqueued;
      q.deadline = job->deadline;
      q.delay_on_timeout = job->delay_on_timeout;
      q.signature = batchable ? sig : (uint64_t{1} << 63) | q.id;
      q.rows = rows;
      wake_timer = q.deadline != Clock::time_point::max() && q.deadline < policy_->next_deadline();
      policy_->push(q);
      queued_jobs_.emplace(q.id, std::move(job));
    }
  }
  metrics_.inflight->add(1);
  if (run_here) {
    Jobs jobs;
    jobs.push_back(std::move(job));
    run_batch(jobs);
    finish_run(1);
    return std::nullopt;
  }
  metrics_.queued->add(1);
  cv_.notify_one();
  if (wake_timer) timer_cv_.notify_one();
  return std::nullopt;
}

size_t ModelVersion::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return policy_->size() + running_jobs_;
}

void ModelVersion::drain_and_stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
  }
  metrics_.ready->set(0);
  cv_.notify_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
  workers_.clear();
  {
    std::lock_guard<std::mutex> lock(mu_);
    timer_stop_ = true;
  }
  timer_cv_.notify_all();
  if (timer_.joinable()) timer_.join();
}

void ModelVersion::fail_queued(const ServeError& error) {
  Jobs dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, job] : queued_jobs_) {
      policy_->remove(id);
      dropped.push_back(std::move(job));
    }
    queued_jobs_.clear();
  }
  for (auto& job : dropped) {
    metrics_.queued->add(-1);
    metrics_.inflight->add(-1);
    record_failure(error.kind, Clock::now() - job->received);
    answer(std::move(job), error);
  }
}

void ModelVersion::take_expired(Clock::time_point now, Jobs* out) {
  for (uint64_t id : policy_->expire(now)) {
    auto it = queued_jobs_.find(id);
    out->push_back(std::move(it->second));
    queued_jobs_.erase(it);
  }
}

void ModelVersion::answer_timeout(std::unique_ptr<InferJob> job, Clock::time_point now) {
  metrics_.queued->add(-1);
  metrics_.inflight->add(-1);
  record_failure(ErrorKind::Timeout, now - job->received);
  const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(now - job->enqueued).count();
  answer(std::move(job), ServeError{ErrorKind::Timeout, str_cat("request timed out: it waited ", waited,
                                                                " us in the queue of model '", config_.name,
                                                                "' and its deadline passed before it could run")});
}

void ModelVersion::worker() {
  for (;;) {
    Jobs batch, expired;
    Clock::time_point now;
    {
      std::unique_lock<std::mutex> lock(mu_);
      for (;;) {
        now = Clock::now();
        take_expired(now, &expired);
        if (!expired.empty()) break;  // answer them outside the lock, then look again
        if (policy_->empty() && stopping_) return;
        if (policy_->empty() || running_ >= config_.instance_count) {
          cv_.wait(lock);
          continue;
        }
        const auto estimate = std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double, std::micro>(std::min(run_micros_.load(), 1e7)));
        BatchPolicy::Decision d = policy_->next_batch(now, estimate);
        if (d.batch.empty()) {
          if (d.wake == Clock::time_point::max())
            cv_.wait(lock);
          else
            cv_.wait_until(lock, d.wake);
          continue;
        }
        policy_->take(d.batch);
        for (uint64_t id : d.batch) {
          auto it = queued_jobs_.find(id);
          batch.push_back(std::move(it->second));
          queued_jobs_.erase(it);
        }
        ++running_;
        running_jobs_ += batch.size();
        break;
      }
      if (!batch.empty() && !policy_->empty() && running_ < config_.instance_count) cv_.notify_one();
    }
    for (auto& job : expired) answer_timeout(std::move(job), now);
    if (batch.empty()) continue;
    drop_cancelled(batch);
    if (batch.empty()) {
      finish_run(0);
      continue;
    }
    metrics_.queued->add(-static_cast<double>(batch.size()));
    run_batch(batch);
    finish_run(batch.size());
  }
}

void ModelVersion::drop_cancelled(Jobs& batch) {
  size_t kept = 0;
  for (auto& job : batch) {
    if (job->request.cancelled && job->request.cancelled()) {
      metrics_.queued->add(-1);
      metrics_.inflight->add(-1);
      record_failure(ErrorKind::Timeout, Clock::now() - job->received);
      answer(std::move(job), ServeError{ErrorKind::Timeout, "the client cancelled the request (or its deadline "
                                                            "passed) before it ran"});
      continue;
    }
    batch[kept++] = std::move(job);
  }
  if (kept == batch.size()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_jobs_ -= batch.size() - kept;
  }
  batch.resize(kept);
}

void ModelVersion::timer() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!timer_stop_) {
    const auto next = policy_->next_deadline();
    if (next == Clock::time_point::max())
      timer_cv_.wait(lock);
    else
      timer_cv_.wait_until(lock, next);
    Jobs expired;
    const auto now = Clock::now();
    take_expired(now, &expired);
    if (expired.empty()) continue;
    lock.unlock();
    for (auto& job : expired) answer_timeout(std::move(job), now);
    lock.lock();
  }
}

void ModelVersion::finish_run(size_t jobs) {
  bool waiting = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
    running_jobs_ -= jobs;
    waiting = !policy_->empty();
  }
  metrics_.inflight->add(-static_cast<double>(jobs));
  if (waiting) cv_.notify_one();  // a job queued meanwhile takes the freed instance
}

void ModelVersion::record_cache_hit(Clock::duration elapsed) {
  stats_.success_count.fetch_add(1, std::memory_order_relaxed);
  stats_.success_ns.fetch_add(nanos(elapsed), std::memory_order_relaxed);
  stats_.cache_hit_count.fetch_add(1, std::memory_order_relaxed);
  stats_.cache_hit_ns.fetch_add(nanos(elapsed), std::memory_order_relaxed);
  metrics_.success->add();
  metrics_.request->observe(seconds(elapsed));
}

void ModelVersion::record_cache_miss(Clock::duration lookup) {
  stats_.cache_miss_count.fetch_add(1, std::memory_order_relaxed);
  stats_.cache_miss_ns.fetch_add(nanos(lookup), std::memory_order_relaxed);
}

void VersionStats::record_execution(int64_t rows, uint64_t input_ns, uint64_t infer_ns, uint64_t output_ns) {
  std::lock_guard<std::mutex> lock(batch_mu_);
  BatchSizeStats& s = by_batch_size_[rows];
  ++s.count;
  s.input_ns += input_ns;
  s.infer_ns += infer_ns;
  s.output_ns += output_ns;
}

std::map<int64_t, VersionStats::BatchSizeStats> VersionStats::by_batch_size() const {
  std::lock_guard<std::mutex> lock(batch_mu_);
  return by_batch_size_;
}

void ModelVersion::record_failure(ErrorKind kind, Clock::duration elapsed) {
  stats_.fail_count.fetch_add(1, std::memory_order_relaxed);
  stats_.fail_ns.fetch_add(nanos(elapsed), std::memory_order_relaxed);
  metrics_.failure[failure_reason(kind)]->add();
}

void ModelVersion::answer(std::unique_ptr<InferJob> job, InferResult result) {
  if (!ordering_) {
    job->done(std::move(result));
    return;
  }
  // Answers leave in sequence: the thread that finds none being released releases every
  // answer that is ready, in order, calling each callback outside the lock (a callback may
  // reach back into this version).
  std::unique_lock<std::mutex> lock(order_mu_);
  const uint64_t seq = job->seq;
  held_.emplace(seq, std::make_pair(std::move(job), std::move(result)));
  for (uint64_t s : ordering_->complete(seq)) {
    auto it = held_.find(s);
    releasable_.push_back(std::move(it->second));
    held_.erase(it);
  }
  if (releasing_) return;
  releasing_ = true;
  while (!releasable_.empty()) {
    auto [next, r] = std::move(releasable_.front());
    releasable_.pop_front();
    lock.unlock();
    next->done(std::move(r));
    lock.lock();
  }
  releasing_ = false;
}

}  // namespace ignis::serve
