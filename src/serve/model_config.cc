// SPDX-License-Identifier: Apache-2.0
#include "serve/model_config.h"

#include <algorithm>
#include <charconv>

#include "core/strings.h"
#include "serve/datatype.h"
#include "serve/json_writer.h"
#include "serve/pbtxt.h"

namespace ignis::serve {

std::vector<int64_t> VersionPolicy::select(std::vector<int64_t> available) const {
  std::sort(available.begin(), available.end(), std::greater<>());
  std::vector<int64_t> out;
  switch (kind) {
    case Kind::All: return available;
    case Kind::Latest:
      for (size_t i = 0; i < available.size() && static_cast<int64_t>(i) < latest; ++i) out.push_back(available[i]);
      return out;
    case Kind::Specific:
      for (int64_t v : available)
        if (std::find(specific.begin(), specific.end(), v) != specific.end()) out.push_back(v);
      return out;
  }
  return out;
}

namespace {

// Walks one message: `on_field` returns false for fields it does not know, which become warnings.
template <class F>
Status each_field(const TextMessage& m, const std::string& path, std::vector<std::string>* warnings, F&& on_field) {
  for (const auto& f : m.fields) {
    const std::string where = path.empty() ? f.name : path + "." + f.name;
    IGNIS_ASSIGN_OR_RETURN(bool known, on_field(f, where));
    if (!known && warnings) warnings->push_back(where);
  }
  return Status::ok();
}

Status bad_value(const TextField& f, const std::string& where, const char* expected) {
  return invalid_argument(str_cat("'", where, "' must be ", expected, ", got '", f.scalar, "'"));
}

Result<int64_t> int_of(const TextField& f, const std::string& where) {
  auto v = f.as_int();
  if (!v) return bad_value(f, where, "an integer");
  return *v;
}

Result<uint64_t> uint_of(const TextField& f, const std::string& where) {
  auto v = f.as_uint();
  if (!v) return bad_value(f, where, "a non-negative integer");
  return *v;
}

Result<bool> bool_of(const TextField& f, const std::string& where) {
  auto v = f.as_bool();
  if (!v) return bad_value(f, where, "true or false");
  return *v;
}

Result<std::string> string_of(const TextField& f, const std::string& where) {
  if (f.kind != TextField::Kind::Scalar || !f.quoted)
    return invalid_argument(str_cat("'", where, "' must be a quoted string"));
  return f.scalar;
}

Result<const TextMessage*> message_of(const TextField& f, const std::string& where) {
  if (f.kind != TextField::Kind::Message) return invalid_argument(str_cat("'", where, "' must be a message { ... }"));
  return f.message.get();
}

Result<TensorConfig> parse_tensor(const TextMessage& m, const std::string& path, std::vector<std::string>* warnings) {
  TensorConfig t;
  IGNIS_RETURN_IF_ERROR(each_field(m, path, warnings, [&](const TextField& f, const std::string& w) -> Result<bool> {
    if (f.name == "name") {
      IGNIS_ASSIGN_OR_RETURN(t.name, string_of(f, w));
    } else if (f.name == "data_type") {
      auto d = dtype_from_triton(f.scalar);
      if (!d) return bad_value(f, w, "a Triton data type such as TYPE_FP32");
      t.dtype = *d;
    } else if (f.name == "dims") {
      IGNIS_ASSIGN_OR_RETURN(int64_t d, int_of(f, w));
      if (d < -1) return bad_value(f, w, "-1 or a non-negative extent");
      t.dims.push_back(d);
    } else if (f.name == "optional") {
      IGNIS_ASSIGN_OR_RETURN(t.optional, bool_of(f, w));
    } else if (f.name == "format" || f.name == "label_filename" || f.name == "is_shape_tensor") {
      // Descriptive only: ignis reads the layout from the model.
      if (f.name == "is_shape_tensor" && f.as_bool().value_or(false)) return false;
    } else {
      return false;
    }
    return true;
  }));
  if (t.name.empty()) return invalid_argument(str_cat("'", path, "' has no name"));
  return t;
}

Result<QueuePolicy> parse_queue_policy(const TextMessage& m, const std::string& path,
                                       std::vector<std::string>* warnings) {
  QueuePolicy q;
  IGNIS_RETURN_IF_ERROR(each_field(m, path, warnings, [&](const TextField& f, const std::string& w) -> Result<bool> {
    if (f.name == "timeout_action") {
      if (f.scalar == "REJECT") q.delay_on_timeout = false;
      else if (f.scalar == "DELAY") q.delay_on_timeout = true;
      else return bad_value(f, w, "REJECT or DELAY");
    } else if (f.name == "default_timeout_microseconds") {
      IGNIS_ASSIGN_OR_RETURN(q.default_timeout_us, uint_of(f, w));
    } else if (f.name == "allow_timeout_override") {
      IGNIS_ASSIGN_OR_RETURN(q.allow_timeout_override, bool_of(f, w));
    } else if (f.name == "max_queue_size") {
      IGNIS_ASSIGN_OR_RETURN(uint64_t v, uint_of(f, w));
      q.max_queue_size = static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX));
    } else {
      return false;
    }
    return true;
  }));
  return q;
}

Result<DynamicBatching> parse_dynamic_batching(const TextMessage& m, const std::string& path,
                                               std::vector<std::string>* warnings) {
  DynamicBatching b;
  IGNIS_RETURN_IF_ERROR(each_field(m, path, warnings, [&](const TextField& f, const std::string& w) -> Result<bool> {
    if (f.name == "preferred_batch_size") {
      IGNIS_ASSIGN_OR_RETURN(int64_t v, int_of(f, w));
      if (v <= 0) return bad_value(f, w, "a positive batch size");
      b.preferred_batch_size.push_back(v);
    } else if (f.name == "max_queue_delay_microseconds") {
      // ignis also takes `auto`: the delay is learned (see AdaptiveDelay).
      if (f.kind == TextField::Kind::Scalar && !f.quoted && f.scalar == "auto") {
        b.auto_delay = true;
      } else {
        IGNIS_ASSIGN_OR_RETURN(b.max_queue_delay_us, uint_of(f, w));
      }
    } else if (f.name == "preserve_ordering") {
      IGNIS_ASSIGN_OR_RETURN(b.preserve_ordering, bool_of(f, w));
    } else if (f.name == "priority_levels") {
      IGNIS_ASSIGN_OR_RETURN(uint64_t v, uint_of(f, w));
      b.priority_levels = static_cast<uint32_t>(std::min<uint64_t>(v, 1u << 20));
    } else if (f.name == "default_priority_level") {
      IGNIS_ASSIGN_OR_RETURN(uint64_t v, uint_of(f, w));
      b.default_priority_level = static_cast<uint32_t>(std::min<uint64_t>(v, 1u << 20));
    } else if (f.name == "default_queue_policy") {
      IGNIS_ASSIGN_OR_RETURN(const TextMessage* q, message_of(f, w));
      IGNIS_ASSIGN_OR_RETURN(b.default_queue_policy, parse_queue_policy(*q, w, warnings));
    } else if (f.name == "priority_queue_policy") {
      // A map<uint64, ModelQueuePolicy>: entries { key: N value { ... } }.
      IGNIS_ASSIGN_OR_RETURN(const TextMessage* e, message_of(f, w));
      const TextField* k = e->find("key");
      const TextField* v = e->find("value");
      if (!k || !v) return invalid_argument(str_cat("'", w, "' entries need a key and a value"));
      IGNIS_ASSIGN_OR_RETURN(uint64_t level, uint_of(*k, w + ".key"));
      IGNIS_ASSIGN_OR_RETURN(const TextMessage* q, message_of(*v, w + ".value"));
      IGNIS_ASSIGN_OR_RETURN(b.priority_queue_policy[static_cast<uint32_t>(level)],
                             parse_queue_policy(*q, w + ".value", warnings));
    } else {
      return false;
    }
    return true;
  }));
  if (b.priority_levels > 0 && b.default_priority_level > b.priority_levels)
    return invalid_argument(str_cat("'", path, ".default_priority_level' (", b.default_priority_level,
                                    ") is above priority_levels (", b.priority_levels, ")"));
  return b;
}

Result<VersionPolicy> parse_version_policy(const TextMessage& m, const std::string& path,
                                           std::vector<std::string>* warnings) {
  VersionPolicy p;
  IGNIS_RETURN_IF_ERROR(each_field(m, path, warnings, [&](const TextField& f, const std::string& w) -> Result<bool> {
    IGNIS_ASSIGN_OR_RETURN(const TextMessage* body, message_of(f, w));
    if (f.name == "all") {
      p.kind = VersionPolicy::Kind::All;
    } else if (f.name == "latest") {
      p.kind = VersionPolicy::Kind::Latest;
      p.latest = 1;
      if (const TextField* n = body->find("num_versions")) {
        IGNIS_ASSIGN_OR_RETURN(p.latest, int_of(*n, w + ".num_versions"));
        if (p.latest < 1) return bad_value(*n, w + ".num_versions", "at least 1");
      }
    } else if (f.name == "specific") {
      p.kind = VersionPolicy::Kind::Specific;
      for (const TextField* v : body->all("versions")) {
        IGNIS_ASSIGN_OR_RETURN(int64_t x, int_of(*v, w + ".versions"));
        p.specific.push_back(x);
      }
    } else {
      return false;
    }
    return true;
  }));
  return p;
}

Result<OptLevel> opt_level_from_name(const std::string& s, const std::string& where) {
  if (s == "none") return OptLevel::None;
  if (s == "basic") return OptLevel::Basic;
  if (s == "extended") return OptLevel::Extended;
  if (s == "all") return OptLevel::All;
  return invalid_argument(str_cat("'", where, "' must be none, basic, extended or all, got '", s, "'"));
}

// `parameters { key: "K" value { string_value: "V" } }`; the keys ignis maps become options.
Status parse_parameter(const TextMessage& e, const std::string& where, ModelConfig* c,
                       std::vector<std::string>* warnings) {
  const TextField* k = e.find("key");
  const TextField* v = e.find("value");
  if (!k || !v || v->kind != TextField::Kind::Message)
    return invalid_argument(str_cat("'", where, "' entries need a key and a value { string_value: ... }"));
  IGNIS_ASSIGN_OR_RETURN(std::string key, string_of(*k, where + ".key"));
  const TextField* sv = v->message->find("string_value");
  if (!sv) return invalid_argument(str_cat("'", where, "' value for '", key, "' has no string_value"));
  IGNIS_ASSIGN_OR_RETURN(std::string value, string_of(*sv, where + ".value.string_value"));
  c->parameters[key] = value;
  // A parameter that holds a non-negative integer.
  auto count = [&](auto* out) -> Status {
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), *out);
    if (ec != std::errc() || p != value.data() + value.size())
      return invalid_argument(str_cat("parameter '", key, "' must be a non-negative integer, got '", value, "'"));
    return Status::ok();
  };
  if (key == "intra_op_thread_count") {
    uint32_t n = 0;
    IGNIS_RETURN_IF_ERROR(count(&n));
    if (n > 0) c->threads = static_cast<int>(n);
  } else if (key == "ignis.max_inflight") {
    IGNIS_RETURN_IF_ERROR(count(&c->max_inflight));
  } else if (key == "ignis.priority_aging_microseconds") {
    IGNIS_RETURN_IF_ERROR(count(&c->priority_aging_us));
  } else if (key == "ignis.p99_target_microseconds") {
    IGNIS_RETURN_IF_ERROR(count(&c->p99_target_us));
  } else if (key == "ignis.shape_buckets") {
    c->shape_buckets.clear();
    std::string_view rest = value;
    for (;;) {
      const size_t comma = rest.find(',');
      std::string_view t = rest.substr(0, comma);
      while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
      while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
      int64_t edge = 0;
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), edge);
      if (t.empty() || ec != std::errc() || p != t.data() + t.size() || edge < 1)
        return invalid_argument(str_cat("parameter 'ignis.shape_buckets' must list positive extents like \"16,32,64\", got '",
                                        value, "'"));
      c->shape_buckets.push_back(edge);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    std::sort(c->shape_buckets.begin(), c->shape_buckets.end());
    c->shape_buckets.erase(std::unique(c->shape_buckets.begin(), c->shape_buckets.end()), c->shape_buckets.end());
  } else if (key.starts_with("ignis.pad_value.")) {
    double v = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || p != value.data() + value.size())
      return invalid_argument(str_cat("parameter '", key, "' must be a number, got '", value, "'"));
    c->pad_values[key.substr(std::string_view("ignis.pad_value.").size())] = v;
  } else if (key == "ignis.optimization") {
    IGNIS_ASSIGN_OR_RETURN(c->optimization, opt_level_from_name(value, "parameters.ignis.optimization"));
  } else if (key == "ignis.precision") {
    if (value == "f32") c->precision = Precision::F32;
    else if (value == "bf16") c->precision = Precision::Bf16;
    else if (value == "fp16") c->precision = Precision::F16;
    else return invalid_argument(str_cat("parameter 'ignis.precision' must be f32, bf16 or fp16, got '", value, "'"));
  } else if (key == "ignis.tuning") {
    if (value == "off") c->tuning = Tuning::Off;
    else if (value == "cached") c->tuning = Tuning::Cached;
    else if (value == "measure") c->tuning = Tuning::Measure;
    else return invalid_argument(str_cat("parameter 'ignis.tuning' must be off, cached or measure, got '", value, "'"));
  } else if (warnings) {
    warnings->push_back(str_cat(where, "[", key, "]"));
  }
  return Status::ok();
}

}  // namespace

Result<ModelConfig> parse_model_config(std::string_view text, std::vector<std::string>* warnings) {
  IGNIS_ASSIGN_OR_RETURN(TextMessage doc, parse_text_message(text));
  ModelConfig c;
  c.from_file = true;
  bool saw_instance_group = false;
  int instances = 0;
  IGNIS_RETURN_IF_ERROR(each_field(doc, "", warnings, [&](const TextField& f, const std::string& w) -> Result<bool> {
    if (f.name == "name") {
      IGNIS_ASSIGN_OR_RETURN(c.name, string_of(f, w));
    } else if (f.name == "platform") {
      IGNIS_ASSIGN_OR_RETURN(c.platform, string_of(f, w));
      if (c.platform != "onnxruntime_onnx")
        return invalid_argument(str_cat("platform '", c.platform, "' is not served by ignis (only onnxruntime_onnx)"));
    } else if (f.name == "backend") {
      IGNIS_ASSIGN_OR_RETURN(c.backend, string_of(f, w));
      if (c.backend != "onnxruntime" && c.backend != "ignis")
        return invalid_argument(str_cat("backend '", c.backend, "' is not served by ignis (onnxruntime or ignis)"));
    } else if (f.name == "max_batch_size") {
      IGNIS_ASSIGN_OR_RETURN(c.max_batch_size, int_of(f, w));
      if (c.max_batch_size < 0) return bad_value(f, w, "0 or a positive batch size");
    } else if (f.name == "input" || f.name == "output") {
      IGNIS_ASSIGN_OR_RETURN(const TextMessage* m, message_of(f, w));
      IGNIS_ASSIGN_OR_RETURN(TensorConfig t, parse_tensor(*m, w, warnings));
      (f.name == "input" ? c.inputs : c.outputs).push_back(std::move(t));
    } else if (f.name == "dynamic_batching") {
      IGNIS_ASSIGN_OR_RETURN(const TextMessage* m, message_of(f, w));
      IGNIS_ASSIGN_OR_RETURN(c.dynamic_batching, parse_dynamic_batching(*m, w, warnings));
    } else if (f.name == "instance_group") {
      IGNIS_ASSIGN_OR_RETURN(const TextMessage* m, message_of(f, w));
      saw_instance_group = true;
      int count = 1;
      IGNIS_RETURN_IF_ERROR(each_field(*m, w, warnings, [&](const TextField& g, const std::string& gw) -> Result<bool> {
        if (g.name == "count") {
          IGNIS_ASSIGN_OR_RETURN(int64_t n, int_of(g, gw));
          if (n < 1 || n > 64) return bad_value(g, gw, "between 1 and 64");
          count = static_cast<int>(n);
        } else if (g.name == "name") {
        } else if (g.name == "kind") {
          if (g.scalar != "KIND_CPU" && g.scalar != "KIND_AUTO") return false;  // GPU kinds run on the CPU
        } else {
          return false;
        }
        return true;
      }));
      instances += count;
    } else if (f.name == "response_cache") {
      IGNIS_ASSIGN_OR_RETURN(const TextMessage* m, message_of(f, w));
      if (const TextField* e = m->find("enable")) {
        IGNIS_ASSIGN_OR_RETURN(c.response_cache, bool_of(*e, w + ".enable"));
      }
    } else if (f.name == "version_policy") {
      IGNIS_ASSIGN_OR_RETURN(const TextMessage* m, message_of(f, w));
      IGNIS_ASSIGN_OR_RETURN(c.version_policy, parse_version_policy(*m, w, warnings));
    } else if (f.name == "default_model_filename") {
      IGNIS_ASSIGN_OR_RETURN(c.default_model_filename, string_of(f, w));
      if (c.default_model_filename.empty() || c.default_model_filename.find('/') != std::string::npos ||
          c.default_model_filename == "..")
        return invalid_argument(str_cat("'", w, "' must be a file name, got '", c.default_model_filename, "'"));
    } else if (f.name == "parameters") {
      IGNIS_ASSIGN_OR_RETURN(const TextMessage* m, message_of(f, w));
      IGNIS_RETURN_IF_ERROR(parse_parameter(*m, w, &c, warnings));
    } else if (f.name == "optimization") {
      IGNIS_ASSIGN_OR_RETURN(const TextMessage* m, message_of(f, w));
      IGNIS_RETURN_IF_ERROR(each_field(*m, w, warnings, [&](const TextField& o, const std::string& ow) -> Result<bool> {
        if (o.name != "graph") return false;
        IGNIS_ASSIGN_OR_RETURN(const TextMessage* g, message_of(o, ow));
        // onnxruntime's backend: -1 basic, 0 (default) and 1 everything.
        if (const TextField* l = g->find("level")) {
          IGNIS_ASSIGN_OR_RETURN(int64_t level, int_of(*l, ow + ".level"));
          c.optimization = level < 0 ? OptLevel::Basic : OptLevel::All;
        }
        return true;
      }));
    } else {
      return false;
    }
    return true;
  }));
  if (saw_instance_group) c.instance_count = std::max(1, instances);
  return c;
}

namespace {

std::string dims_string(const std::vector<int64_t>& dims) { return str_list(dims); }

// The model's declared dims of one value as the config writes them: -1 for symbolic.
std::vector<int64_t> declared_dims(const ValueInfo& v) {
  std::vector<int64_t> d;
  for (int64_t x : v.dims) d.push_back(x < 0 ? -1 : x);
  return d;
}

// With max_batch_size > 0 the first dimension of every model input and output is the batch:
// it must be symbolic, or requests of other batch sizes would pass validation and fail to run.
Status check_batch_dim(const ValueInfo& v, int64_t batch, const char* kind) {
  if (batch <= 0 || !v.has_shape) return Status::ok();
  if (v.dims.empty())
    return invalid_argument(str_cat("max_batch_size is ", batch, " but the model's ", kind, " '", v.name,
                                    "' has no dimensions to batch over"));
  if (v.dims[0] >= 0)
    return invalid_argument(str_cat("max_batch_size is ", batch, " but the model's ", kind, " '", v.name,
                                    "' has a fixed first dimension ", v.dims[0],
                                    "; batching needs a symbolic one (or max_batch_size: 0)"));
  return Status::ok();
}

Status complete_tensors(std::vector<TensorConfig>* configs, const std::vector<ValueInfo>& declared, int64_t batch,
                        const char* kind) {
  for (const auto& v : declared) {
    // The low-bit types (float8, int4...) have no KServe or Triton datatype to carry them.
    if (v.dtype != DType::Undefined && kserve_name(v.dtype).empty())
      return unsupported(str_cat("the model's ", kind, " '", v.name, "' is ", dtype_name(v.dtype),
                                 ", which KServe and Triton have no datatype for"));
    IGNIS_RETURN_IF_ERROR(check_batch_dim(v, batch, kind));
  }
  if (configs->empty()) {
    for (const auto& v : declared) {
      TensorConfig t;
      t.name = v.name;
      t.dtype = v.dtype;
      if (v.has_shape) {
        t.dims = declared_dims(v);
        if (batch > 0 && !t.dims.empty()) t.dims.erase(t.dims.begin());
      } else {
        t.dims = {-1};
      }
      configs->push_back(std::move(t));
    }
    return Status::ok();
  }
  for (auto& t : *configs) {
    auto it = std::find_if(declared.begin(), declared.end(), [&](const ValueInfo& v) { return v.name == t.name; });
    if (it == declared.end()) {
      std::vector<std::string> names;
      for (const auto& v : declared) names.push_back("'" + v.name + "'");
      return invalid_argument(str_cat("config ", kind, " '", t.name, "' is not in the model; its ", kind, "s are ",
                                      str_join(names)));
    }
    if (t.dtype == DType::Undefined) t.dtype = it->dtype;
    if (t.dtype != it->dtype)
      return invalid_argument(str_cat("config ", kind, " '", t.name, "' is ", triton_type_name(t.dtype),
                                      " but the model declares ", triton_type_name(it->dtype)));
    if (!it->has_shape) continue;
    std::vector<int64_t> model_dims = declared_dims(*it);
    if (batch > 0) {
      if (model_dims.empty())
        return invalid_argument(str_cat("max_batch_size is ", batch, " but the model's ", kind, " '", t.name,
                                        "' has no dimensions to batch over"));
      model_dims.erase(model_dims.begin());
    }
    if (t.dims.empty()) {
      t.dims = model_dims;
      continue;
    }
    bool ok = t.dims.size() == model_dims.size();
    for (size_t i = 0; ok && i < t.dims.size(); ++i)
      ok = t.dims[i] == model_dims[i] || t.dims[i] == -1 || model_dims[i] == -1;
    if (!ok)
      return invalid_argument(str_cat("config ", kind, " '", t.name, "' has dims ", dims_string(t.dims),
                                      " but the model declares ", dims_string(model_dims),
                                      batch > 0 ? " (after the batch dimension)" : ""));
  }
  // Model outputs the config does not list are still served (Triton lists only some too);
  // inputs must all be present.
  if (std::string(kind) == "input") {
    for (const auto& v : declared)
      if (std::none_of(configs->begin(), configs->end(), [&](const TensorConfig& t) { return t.name == v.name; }))
        return invalid_argument(str_cat("the model's input '", v.name, "' is missing from the config"));
  }
  return Status::ok();
}

}  // namespace

Status complete_model_config(ModelConfig* c, const Session& session, bool derive_batch,
                             int64_t default_max_batch_size) {
  if (derive_batch) {
    bool batchable = !session.inputs().empty();
    auto leading_symbolic = [](const ValueInfo& v) { return v.has_shape && !v.dims.empty() && v.dims[0] < 0; };
    for (const auto& v : session.inputs()) batchable = batchable && leading_symbolic(v);
    for (const auto& v : session.outputs()) batchable = batchable && leading_symbolic(v);
    c->max_batch_size = batchable ? default_max_batch_size : 0;
  }
  IGNIS_RETURN_IF_ERROR(complete_tensors(&c->inputs, session.inputs(), c->max_batch_size, "input"));
  IGNIS_RETURN_IF_ERROR(complete_tensors(&c->outputs, session.outputs(), c->max_batch_size, "output"));
  for (const auto& pad : c->pad_values) {
    const std::string& name = pad.first;
    if (std::none_of(c->inputs.begin(), c->inputs.end(), [&](const TensorConfig& t) { return t.name == name; }))
      return invalid_argument(str_cat("parameter 'ignis.pad_value.", name, "' names no input of the model"));
  }
  return Status::ok();
}

namespace {

void write_queue_policy(JsonWriter& w, const QueuePolicy& q) {
  w.begin_object();
  w.member("timeout_action", q.delay_on_timeout ? "DELAY" : "REJECT");
  w.member("default_timeout_microseconds", q.default_timeout_us);
  w.member("allow_timeout_override", q.allow_timeout_override);
  w.member("max_queue_size", static_cast<uint64_t>(q.max_queue_size));
  w.end_object();
}

void write_tensors(JsonWriter& w, const char* key, const std::vector<TensorConfig>& ts, bool is_input) {
  w.key(key).begin_array();
  for (const auto& t : ts) {
    w.begin_object();
    w.member("name", t.name);
    w.member("data_type", triton_type_name(t.dtype));
    w.key("dims").begin_array();
    for (int64_t d : t.dims) w.value(d);
    w.end_array();
    w.member("is_shape_tensor", false);
    if (is_input) {
      w.member("format", "FORMAT_NONE");
      w.member("allow_ragged_batch", false);
      w.member("optional", t.optional);
    } else {
      w.member("label_filename", "");
    }
    w.end_object();
  }
  w.end_array();
}

}  // namespace

std::string model_config_json(const ModelConfig& c) {
  std::string out;
  JsonWriter w(&out);
  w.begin_object();
  w.member("name", c.name);
  w.member("platform", c.platform);
  w.member("backend", c.backend);
  w.key("version_policy").begin_object();
  switch (c.version_policy.kind) {
    case VersionPolicy::Kind::Latest:
      w.key("latest").begin_object().member("num_versions", c.version_policy.latest).end_object();
      break;
    case VersionPolicy::Kind::All: w.key("all").begin_object().end_object(); break;
    case VersionPolicy::Kind::Specific:
      w.key("specific").begin_object().key("versions").begin_array();
      for (int64_t v : c.version_policy.specific) w.value(v);
      w.end_array().end_object();
      break;
  }
  w.end_object();
  w.member("max_batch_size", c.max_batch_size);
  write_tensors(w, "input", c.inputs, true);
  write_tensors(w, "output", c.outputs, false);
  if (c.dynamic_batching) {
    const DynamicBatching& b = *c.dynamic_batching;
    w.key("dynamic_batching").begin_object();
    w.key("preferred_batch_size").begin_array();
    for (int64_t s : b.preferred_batch_size) w.value(s);
    w.end_array();
    w.member("max_queue_delay_microseconds", b.max_queue_delay_us);
    w.member("preserve_ordering", b.preserve_ordering);
    w.member("priority_levels", static_cast<uint64_t>(b.priority_levels));
    w.member("default_priority_level", static_cast<uint64_t>(b.default_priority_level));
    w.key("default_queue_policy");
    write_queue_policy(w, b.default_queue_policy);
    w.key("priority_queue_policy").begin_object();
    for (const auto& [level, q] : b.priority_queue_policy) {
      w.key(std::to_string(level));
      write_queue_policy(w, q);
    }
    w.end_object();
    w.end_object();
  }
  w.key("instance_group").begin_array().begin_object();
  w.member("name", c.name + "_0");
  w.member("kind", "KIND_CPU");
  w.member("count", c.instance_count);
  w.end_object().end_array();
  w.member("default_model_filename", c.default_model_filename);
  w.key("parameters").begin_object();
  for (const auto& [k, v] : c.parameters) w.key(k).begin_object().member("string_value", v).end_object();
  w.end_object();
  w.key("response_cache").begin_object().member("enable", c.response_cache).end_object();
  w.end_object();
  return out;
}

}  // namespace ignis::serve
