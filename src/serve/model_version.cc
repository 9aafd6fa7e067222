// SPDX-License-Identifier: Apache-2.0
#include "serve/model_version.h"

#include <algorithm>
#include <cstring>

#include "core/strings.h"
#include "serve/datatype.h"
#include "serve/log.h"

namespace ignis::serve {
namespace {

uint64_t nanos(Clock::duration d) {
  return static_cast<uint64_t>(std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(d).count()));
}
double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

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
  m.inflight = r->gauge("ignis_inflight_requests", "Requests accepted and not yet answered (queued or running).", l);
  m.queued = r->gauge("ignis_queued_requests", "Requests waiting in the model's queue.", l);
  m.ready = r->gauge("ignis_model_ready", "1 when the model version serves requests, else 0.", l);
  m.max_batch_size = r->gauge("ignis_model_max_batch_size", "The version's max_batch_size (0: no batching).", l);
  m.max_batch_size->set(static_cast<double>(c.max_batch_size));
  return m;
}

}  // namespace

Result<std::shared_ptr<ModelVersion>> ModelVersion::load(const std::string& path, int64_t version, ModelConfig config,
                                                         bool derive_batch, int64_t default_max_batch_size,
                                                         const SessionOptions& session_options, MetricsRegistry* metrics) {
  IGNIS_ASSIGN_OR_RETURN(Session session, Session::open(path, session_options));
  IGNIS_RETURN_IF_ERROR(complete_model_config(&config, session, derive_batch, default_max_batch_size));
  std::shared_ptr<ModelVersion> v(new ModelVersion());
  v->config_ = std::move(config);
  v->version_ = version;
  v->session_.emplace(std::move(session));
  v->metrics_ = make_metrics(metrics, v->config_, version);
  v->warm_up();
  for (int i = 0; i < v->config_.instance_count; ++i) v->workers_.emplace_back([p = v.get()] { p->worker(); });
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

std::optional<ServeError> ModelVersion::submit(std::unique_ptr<InferJob> job) {
  uint32_t max_queue = 0;
  if (config_.dynamic_batching) {
    const auto& b = *config_.dynamic_batching;
    auto it = b.priority_queue_policy.find(job->priority);
    max_queue = it != b.priority_queue_policy.end() ? it->second.max_queue_size : b.default_queue_policy.max_queue_size;
  }
  bool run_here = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_)
      return ServeError{ErrorKind::Unavailable,
                        str_cat("model '", config_.name, "' version ", version_, " is being unloaded")};
    if (max_queue > 0 && queued_ >= max_queue)
      return ServeError{ErrorKind::Overloaded,
                        str_cat("model '", config_.name, "' has ", queued_, " requests queued, its max_queue_size")};
    job->enqueued = Clock::now();
    if (queued_ == 0 && running_ < config_.instance_count && run_micros_.load() < kInlineRunMicros) {
      run_here = true;
      ++running_;
    } else {
      queue_[job->priority].push_back(std::move(job));
      ++queued_;
    }
  }
  metrics_.inflight->add(1);
  if (run_here) {
    run_job(*job);
    finish_run();
    return std::nullopt;
  }
  metrics_.queued->add(1);
  cv_.notify_one();
  return std::nullopt;
}

size_t ModelVersion::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_ + static_cast<size_t>(running_);
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
}

void ModelVersion::fail_queued(const ServeError& error) {
  std::vector<std::unique_ptr<InferJob>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [level, q] : queue_)
      for (auto& job : q) dropped.push_back(std::move(job));
    queue_.clear();
    queued_ = 0;
  }
  for (auto& job : dropped) {
    metrics_.queued->add(-1);
    metrics_.inflight->add(-1);
    record_failure(error.kind, Clock::now() - job->received);
    job->done(error);
  }
}

void ModelVersion::worker() {
  for (;;) {
    std::unique_ptr<InferJob> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return (queued_ > 0 && running_ < config_.instance_count) || stopping_; });
      if (queued_ == 0) return;  // stopping and drained
      auto it = queue_.begin();
      while (it->second.empty()) it = queue_.erase(it);
      job = std::move(it->second.front());
      it->second.pop_front();
      --queued_;
      ++running_;
    }
    metrics_.queued->add(-1);
    run_job(*job);
    finish_run();
  }
}

void ModelVersion::finish_run() {
  bool waiting = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
    waiting = queued_ > 0;
  }
  metrics_.inflight->add(-1);
  if (waiting) cv_.notify_one();  // a job queued meanwhile takes the freed instance
}

void ModelVersion::record_failure(ErrorKind kind, Clock::duration elapsed) {
  stats_.fail_count.fetch_add(1, std::memory_order_relaxed);
  stats_.fail_ns.fetch_add(nanos(elapsed), std::memory_order_relaxed);
  metrics_.failure[failure_reason(kind)]->add();
}

void ModelVersion::run_job(InferJob& job) {
  const auto start = Clock::now();
  const InferRequest& req = job.request;
  metrics_.queue->observe(seconds(start - job.enqueued));
  stats_.queue_count.fetch_add(1, std::memory_order_relaxed);
  stats_.queue_ns.fetch_add(nanos(start - job.enqueued), std::memory_order_relaxed);
  if (start > job.deadline) {
    record_failure(ErrorKind::Timeout, start - job.received);
    job.done(ServeError{ErrorKind::Timeout,
                        str_cat("request timed out: it waited ",
                                std::chrono::duration_cast<std::chrono::microseconds>(start - job.enqueued).count(),
                                " us in the queue of model '", config_.name, "', past its deadline")});
    return;
  }
  NamedTensors inputs;
  inputs.reserve(req.inputs.size());
  for (const auto& in : req.inputs) inputs.emplace_back(in.name, in.tensor);
  std::vector<std::string> names;
  for (const auto& o : req.outputs) names.push_back(o.name);
  const auto run_start = Clock::now();
  auto result = session_->run(inputs, names);
  const auto run_end = Clock::now();
  metrics_.compute->observe(seconds(run_end - run_start));
  const double micros = std::chrono::duration<double, std::micro>(run_end - run_start).count();
  const double avg = run_micros_.load();
  run_micros_ = avg >= 1e9 ? micros : 0.9 * avg + 0.1 * micros;  // the first measurement, or a moving average
  metrics_.batch_size->observe(1);
  const int64_t rows = config_.max_batch_size > 0 && !req.inputs.empty() ? req.inputs[0].shape[0] : 1;
  if (metrics_.batch_fill) metrics_.batch_fill->observe(static_cast<double>(rows) / config_.max_batch_size);
  stats_.compute_count.fetch_add(1, std::memory_order_relaxed);
  stats_.compute_input_ns.fetch_add(nanos(run_start - start), std::memory_order_relaxed);
  stats_.compute_infer_ns.fetch_add(nanos(run_end - run_start), std::memory_order_relaxed);
  stats_.execution_count.fetch_add(1, std::memory_order_relaxed);
  stats_.inference_count.fetch_add(static_cast<uint64_t>(rows), std::memory_order_relaxed);
  stats_.last_inference_ms.store(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                           std::chrono::system_clock::now().time_since_epoch())
                                                           .count()),
                                 std::memory_order_relaxed);
  if (!result) {
    ServeError e = serve_error(result.error());
    e.message = str_cat("model '", config_.name, "': ", e.message);
    record_failure(e.kind, run_end - job.received);
    job.done(std::move(e));
    return;
  }
  InferResponse resp;
  resp.model = config_.name;
  resp.version = std::to_string(version_);
  resp.id = req.id;
  std::vector<Tensor>& outs = *result;
  const auto& declared = session_->outputs();
  for (size_t i = 0; i < outs.size(); ++i) {
    InferOutput o;
    if (req.outputs.empty()) {
      o.name = declared[i].name;
      o.binary = req.binary_output;
    } else {
      o.name = req.outputs[i].name;
      o.binary = req.outputs[i].binary.value_or(req.binary_output);
    }
    o.tensor = std::move(outs[i]);
    resp.outputs.push_back(std::move(o));
  }
  const auto end = Clock::now();
  stats_.compute_output_ns.fetch_add(nanos(end - run_end), std::memory_order_relaxed);
  stats_.success_count.fetch_add(1, std::memory_order_relaxed);
  stats_.success_ns.fetch_add(nanos(end - job.received), std::memory_order_relaxed);
  metrics_.success->add();
  metrics_.request->observe(seconds(end - job.received));
  job.done(std::move(resp));
}

}  // namespace ignis::serve
