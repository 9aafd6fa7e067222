// SPDX-License-Identifier: Apache-2.0
// The engine runs of a ModelVersion: a batch's inputs assembled (padded in a shape bucket),
// one Session::run, and each request answered with its part of the outputs.
#include <algorithm>

#include "core/strings.h"
#include "serve/batch_assembly.h"
#include "serve/durations.h"
#include "serve/log.h"
#include "serve/model_version.h"
#include "serve/padding.h"

namespace ignis::serve {

void ModelVersion::set_up_buckets() {
  const ModelConfig& c = config_;
  if (c.shape_buckets.empty()) return;
  if (c.max_batch_size <= 1 || !c.dynamic_batching) {
    log_warning(str_cat("model '", c.name, "': ignis.shape_buckets needs dynamic_batching and max_batch_size > 1; ",
                        "ignored"));
    return;
  }
  // The variable dims of each input, and the dimension names that carry them.
  std::map<std::string, std::pair<std::string, size_t>> by_dim_name;  // name -> (input, request dim)
  for (const TensorConfig& t : c.inputs) {
    std::vector<size_t>& dims = variable_dims_[t.name];
    const ValueInfo* info = nullptr;
    for (const auto& v : session_->inputs())
      if (v.name == t.name) info = &v;
    for (size_t d = 0; d < t.dims.size(); ++d) {
      if (t.dims[d] >= 0) continue;
      dims.push_back(d + 1);
      if (info && d + 1 < info->dim_names.size() && !info->dim_names[d + 1].empty())
        by_dim_name.emplace(info->dim_names[d + 1], std::make_pair(t.name, d + 1));
    }
  }
  // Each variable output dimension must follow an input's, or padding could not be cut back.
  for (const ValueInfo& out : session_->outputs()) {
    std::vector<DimLink>& links = output_links_[out.name];
    for (size_t d = 1; d < out.dims.size(); ++d) {
      if (out.dims[d] >= 0) continue;
      const std::string name = d < out.dim_names.size() ? out.dim_names[d] : "";
      auto it = by_dim_name.find(name);
      if (name.empty() || it == by_dim_name.end()) {
        log_warning(str_cat("model '", c.name, "': output '", out.name, "' dimension ", d, " (", name.empty() ? "unnamed" : name,
                            ") follows no input dimension by name, so padding could not be cut back; "
                            "ignis.shape_buckets ignored"));
        variable_dims_.clear();
        output_links_.clear();
        return;
      }
      links.push_back(DimLink{d, it->second.first, it->second.second});
    }
  }
  buckets_ = true;
}

int64_t ModelVersion::bucketed_extent(const std::string& input, size_t dim, int64_t extent) const {
  if (!buckets_) return extent;
  auto it = variable_dims_.find(input);
  const bool variable = it != variable_dims_.end() && std::find(it->second.begin(), it->second.end(), dim) != it->second.end();
  return variable ? bucket_extent(config_.shape_buckets, extent) : extent;
}

bool ModelVersion::off_edge(const InferRequest& request) const {
  for (const auto& in : request.inputs)
    for (size_t d = 1; d < in.shape.size(); ++d)
      if (bucketed_extent(in.name, d, in.shape[d]) != in.shape[d]) return true;
  return false;
}

int64_t ModelVersion::rows_of(const InferRequest& request) const {
  return config_.max_batch_size > 0 && !request.inputs.empty() ? request.inputs[0].shape[0] : 1;
}

const std::vector<DimLink>& ModelVersion::links(const InferRequest& request, size_t output) const {
  static const std::vector<DimLink> none;
  if (!buckets_) return none;
  const std::string& name = request.outputs.empty() ? session_->outputs()[output].name : request.outputs[output].name;
  auto it = output_links_.find(name);
  return it == output_links_.end() ? none : it->second;
}

void ModelVersion::observe_fill(const InferRequest& first, const BatchLayout& layout) {
  // The bucket: the edges of the first input's variable extents, e.g. "32" or "32x64".
  std::vector<std::string> edges;
  if (!first.inputs.empty())
    if (auto it = variable_dims_.find(first.inputs[0].name); it != variable_dims_.end())
      for (size_t d : it->second) edges.push_back(std::to_string(bucket_extent(config_.shape_buckets, layout.dims[0][d])));
  const std::string bucket = str_join(edges, "x");
  Histogram* h = nullptr;
  {
    std::lock_guard<std::mutex> lock(fill_mu_);
    Histogram*& slot = bucket_fill_[bucket];
    if (!slot)
      slot = registry_->histogram("ignis_bucket_fill_ratio",
                                  "Real input elements divided by padded input elements of a padded batch, by shape bucket.",
                                  {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0},
                                  {{"model", config_.name}, {"version", std::to_string(version_)}, {"bucket", bucket}});
    h = slot;
  }
  h->observe(static_cast<double>(layout.real_elements) / static_cast<double>(std::max<size_t>(layout.batch_elements, 1)));
}

void ModelVersion::run_each(Jobs& jobs) {
  for (auto& job : jobs) {
    Jobs one;
    one.push_back(std::move(job));
    run_batch(one);
  }
}

void ModelVersion::run_batch(Jobs& jobs) {
  const auto start = Clock::now();
  for (const auto& job : jobs) {
    metrics_.queue->observe(seconds(start - job->enqueued));
    stats_.queue_count.fetch_add(1, std::memory_order_relaxed);
    stats_.queue_ns.fetch_add(nanos(start - job->enqueued), std::memory_order_relaxed);
  }
  const InferRequest& first = jobs.front()->request;
  // Inputs: a single request's as they are; several requests' concatenated along the batch
  // dimension into buffers this thread keeps. In a shape bucket every run, a single request's
  // too, is padded to the bucket's edge, not to its longest request: a few shapes (edges x
  // batch sizes) recur, so their plans are reused and memory stays bounded.
  thread_local BatchBuffers buffers;
  BatchLayout layout;
  NamedTensors inputs;
  const bool assembled = jobs.size() > 1 || (buckets_ && off_edge(first));
  if (!assembled) {
    for (const auto& in : first.inputs) inputs.emplace_back(in.name, in.tensor);
    layout.rows.push_back(rows_of(first));
    layout.total_rows = layout.rows[0];
  } else {
    std::vector<const InferRequest*> requests;
    for (const auto& job : jobs) requests.push_back(&job->request);
    PaddedExtent to_edge;
    if (buckets_)
      to_edge = [this](const std::string& input, size_t dim, int64_t largest) {
        return bucketed_extent(input, dim, largest);
      };
    inputs = assemble_batch(requests, config_.pad_values, &buffers, &layout, to_edge);
  }
  const int64_t total_rows = layout.total_rows;
  std::vector<std::string> names;
  for (const auto& o : first.outputs) names.push_back(o.name);
  const auto run_start = Clock::now();
  auto result = session_->run(inputs, names);
  const auto run_end = Clock::now();
  if (assembled) {
    // One request's bad data fails the whole run; run them alone so only that one fails. An
    // output without the batch dimension, or that does not follow the padded extents, cannot
    // be split: the model stops batching and padding.
    bool split_ok = true;
    if (result)
      for (size_t i = 0; i < result->size(); ++i)
        split_ok = split_ok && splittable((*result)[i], layout, links(first, i), first);
    if ((!result && jobs.size() > 1) || (result && !split_ok)) {
      if (result) {
        batchable_ = false;
        buckets_ = false;
        log_warning(str_cat("model '", config_.name, "': an output's first dimension is not the batch of ",
                            total_rows, " rows (or a dimension that follows an input's is not the batch's extent); "
                            "requests are no longer batched"));
      }
      run_each(jobs);
      return;
    }
  }
  metrics_.compute->observe(seconds(run_end - run_start));
  const double micros = std::chrono::duration<double, std::micro>(run_end - run_start).count();
  const double avg = run_micros_.load();
  run_micros_ = avg >= 1e9 ? micros : 0.9 * avg + 0.1 * micros;  // the first measurement, or a moving average
  metrics_.batch_size->observe(static_cast<double>(jobs.size()));
  if (layout.padded) observe_fill(first, layout);
  if (metrics_.batch_fill) metrics_.batch_fill->observe(static_cast<double>(total_rows) / config_.max_batch_size);
  stats_.execution_count.fetch_add(1, std::memory_order_relaxed);
  stats_.inference_count.fetch_add(static_cast<uint64_t>(total_rows), std::memory_order_relaxed);
  stats_.last_inference_ms.store(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                           std::chrono::system_clock::now().time_since_epoch())
                                                           .count()),
                                 std::memory_order_relaxed);
  // Triton's compute statistics are per request: each request of a batch spent the batch's time.
  const uint64_t n = jobs.size();
  stats_.compute_count.fetch_add(n, std::memory_order_relaxed);
  stats_.compute_input_ns.fetch_add(n * nanos(run_start - start), std::memory_order_relaxed);
  stats_.compute_infer_ns.fetch_add(n * nanos(run_end - run_start), std::memory_order_relaxed);
  if (!result) {
    ServeError e = serve_error(result.error());
    e.message = str_cat("model '", config_.name, "': ", e.message);
    record_failure(e.kind, run_end - jobs.front()->received);
    answer(std::move(jobs.front()), std::move(e));
    return;
  }
  // Outputs: moved to a single request; split by rows for several, each slice viewing the
  // batch's output, which lives until the last slice is released.
  std::vector<std::shared_ptr<void>> owners;
  if (assembled)
    for (Tensor& t : *result) owners.push_back(std::make_shared<Tensor>(std::move(t)));
  const auto& declared = session_->outputs();
  std::vector<Clock::duration> latencies;  // for the adaptive delay
  for (size_t j = 0; j < jobs.size(); ++j) {
    const InferRequest& req = jobs[j]->request;
    InferResponse resp;
    resp.model = config_.name;
    resp.version = std::to_string(version_);
    resp.id = req.id;
    for (size_t i = 0; i < result->size(); ++i) {
      InferOutput o;
      if (req.outputs.empty()) {
        o.name = declared[i].name;
        o.binary = req.binary_output;
      } else {
        o.name = req.outputs[i].name;
        o.binary = req.outputs[i].binary.value_or(req.binary_output);
      }
      o.tensor = !assembled ? std::move((*result)[i])
                                  : request_output(*static_cast<Tensor*>(owners[i].get()), owners[i], layout, j,
                                                   links(req, i), req);
      resp.outputs.push_back(std::move(o));
    }
    const auto end = Clock::now();
    stats_.compute_output_ns.fetch_add(nanos(end - run_end), std::memory_order_relaxed);
    stats_.success_count.fetch_add(1, std::memory_order_relaxed);
    stats_.success_ns.fetch_add(nanos(end - jobs[j]->received), std::memory_order_relaxed);
    metrics_.success->add();
    metrics_.request->observe(seconds(end - jobs[j]->received));
    if (adaptive_) latencies.push_back(end - jobs[j]->received);
    answer(std::move(jobs[j]), std::move(resp));
  }
  stats_.record_execution(total_rows, nanos(run_start - start), nanos(run_end - run_start),
                          nanos(Clock::now() - run_end));
  if (adaptive_) {
    std::lock_guard<std::mutex> lock(mu_);
    adaptive_->observe_run(total_rows, run_end - run_start);
    for (auto l : latencies) adaptive_->observe_latency(l);
  }
}

}  // namespace ignis::serve
