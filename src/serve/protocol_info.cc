// SPDX-License-Identifier: Apache-2.0
#include "serve/protocol_info.h"

#include "serve/datatype.h"
#include "serve/json_writer.h"
#include "serve/server.h"

namespace ignis::serve {

const std::vector<std::string>& server_extensions() {
  static const std::vector<std::string> e{"binary_tensor_data", "model_configuration", "model_repository",
                                          "schedule_policy", "statistics"};
  return e;
}

std::string server_metadata_json() {
  std::string out;
  JsonWriter w(&out);
  w.begin_object().member("name", kServerName).member("version", kServerVersion);
  w.key("extensions").begin_array();
  for (const auto& e : server_extensions()) w.value(e);
  w.end_array().end_object();
  return out;
}

namespace {

std::vector<TensorMetadata> tensor_metadata(const std::vector<TensorConfig>& ts, bool batched) {
  std::vector<TensorMetadata> out;
  for (const auto& t : ts) {
    TensorMetadata m{t.name, t.dtype, t.dims};
    if (batched) m.shape.insert(m.shape.begin(), -1);
    out.push_back(std::move(m));
  }
  return out;
}

void write_tensors(JsonWriter& w, const char* key, const std::vector<TensorMetadata>& ts) {
  w.key(key).begin_array();
  for (const auto& t : ts) {
    w.begin_object().member("name", t.name).member("datatype", kserve_name(t.dtype));
    w.key("shape").begin_array();
    for (int64_t d : t.shape) w.value(d);
    w.end_array().end_object();
  }
  w.end_array();
}

void write_duration(JsonWriter& w, const char* key, uint64_t count, uint64_t ns) {
  w.key(key).begin_object().member("count", count).member("ns", ns).end_object();
}

void write_stats(JsonWriter& w, ModelVersion& v) {
  VersionStats& s = v.stats();
  auto ld = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  w.begin_object();
  w.member("name", v.name()).member("version", std::to_string(v.version()));
  w.member("last_inference", ld(s.last_inference_ms));
  w.member("inference_count", ld(s.inference_count)).member("execution_count", ld(s.execution_count));
  w.key("inference_stats").begin_object();
  write_duration(w, "success", ld(s.success_count), ld(s.success_ns));
  write_duration(w, "fail", ld(s.fail_count), ld(s.fail_ns));
  write_duration(w, "queue", ld(s.queue_count), ld(s.queue_ns));
  write_duration(w, "compute_input", ld(s.compute_count), ld(s.compute_input_ns));
  write_duration(w, "compute_infer", ld(s.compute_count), ld(s.compute_infer_ns));
  write_duration(w, "compute_output", ld(s.compute_count), ld(s.compute_output_ns));
  write_duration(w, "cache_hit", ld(s.cache_hit_count), ld(s.cache_hit_ns));
  write_duration(w, "cache_miss", ld(s.cache_miss_count), ld(s.cache_miss_ns));
  w.end_object();
  w.key("batch_stats").begin_array();
  for (const auto& [rows, b] : s.by_batch_size()) {
    w.begin_object().member("batch_size", static_cast<uint64_t>(rows));
    write_duration(w, "compute_input", b.count, b.input_ns);
    write_duration(w, "compute_infer", b.count, b.infer_ns);
    write_duration(w, "compute_output", b.count, b.output_ns);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace

std::vector<TensorMetadata> input_metadata(const ModelVersion& v) {
  return tensor_metadata(v.config().inputs, v.config().max_batch_size > 0);
}

std::vector<TensorMetadata> output_metadata(const ModelVersion& v) {
  // Every output the model declares, typed by the config where it lists them.
  std::vector<TensorConfig> outs;
  for (const auto& o : v.session().outputs()) {
    TensorConfig t{o.name, o.dtype, {}, false};
    bool listed = false;
    for (const auto& c : v.config().outputs)
      if (c.name == o.name) t = c, listed = true;
    if (!listed) {
      for (int64_t d : o.dims) t.dims.push_back(d < 0 ? -1 : d);
      if (v.config().max_batch_size > 0 && !t.dims.empty()) t.dims.erase(t.dims.begin());
    }
    outs.push_back(std::move(t));
  }
  return tensor_metadata(outs, v.config().max_batch_size > 0);
}

std::string model_metadata_json(const ModelVersion& v, const std::vector<int64_t>& ready_versions) {
  std::string out;
  JsonWriter w(&out);
  w.begin_object().member("name", v.name());
  w.key("versions").begin_array();
  for (int64_t x : ready_versions) w.value(std::to_string(x));
  w.end_array();
  w.member("platform", v.config().platform);
  write_tensors(w, "inputs", input_metadata(v));
  write_tensors(w, "outputs", output_metadata(v));
  w.end_object();
  return out;
}

std::string statistics_json(InferenceServer& server, const std::string& model, const std::string& version) {
  std::string out;
  JsonWriter w(&out);
  w.begin_object().key("model_stats").begin_array();
  for (const auto& v : server.repository().all_versions()) {
    if (!model.empty() && v->name() != model) continue;
    if (!version.empty() && std::to_string(v->version()) != version) continue;
    write_stats(w, *v);
  }
  w.end_array().end_object();
  return out;
}

std::string repository_index_json(const std::vector<ModelIndexEntry>& entries, bool ready_only) {
  std::string out;
  JsonWriter w(&out);
  w.begin_array();
  for (const auto& e : entries) {
    if (ready_only && e.state != "READY") continue;
    w.begin_object().member("name", e.name);
    if (!e.version.empty()) w.member("version", e.version);
    w.member("state", e.state).member("reason", e.reason).end_object();
  }
  w.end_array();
  return out;
}

}  // namespace ignis::serve
