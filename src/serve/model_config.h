// SPDX-License-Identifier: Apache-2.0
// A model's serving configuration with Triton's meaning: read from config.pbtxt (the fields
// ignis supports; the others are named in warnings), derived from the model when there is no
// file, completed and checked against the model's declared inputs and outputs, and written
// back as Triton's JSON form for /config.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ignis/session.h"
#include "ignis/status.h"

namespace ignis::serve {

struct VersionPolicy {
  enum class Kind { Latest, All, Specific };
  Kind kind = Kind::Latest;
  int64_t latest = 1;             // Kind::Latest: how many of the highest versions
  std::vector<int64_t> specific;  // Kind::Specific

  // Which of `available` (any order) to serve, highest first.
  std::vector<int64_t> select(std::vector<int64_t> available) const;
};

// One input or output. With max_batch_size > 0 `dims` excludes the batch dimension.
struct TensorConfig {
  std::string name;
  DType dtype = DType::Undefined;
  std::vector<int64_t> dims;  // -1 = any extent
  bool optional = false;
};

struct QueuePolicy {
  bool delay_on_timeout = false;  // timeout_action: DELAY (else REJECT)
  uint64_t default_timeout_us = 0;  // 0 = none
  bool allow_timeout_override = false;
  uint32_t max_queue_size = 0;  // 0 = unbounded
};

struct DynamicBatching {
  std::vector<int64_t> preferred_batch_size;
  uint64_t max_queue_delay_us = 0;
  bool auto_delay = false;  // `max_queue_delay_microseconds: auto`
  bool preserve_ordering = false;
  uint32_t priority_levels = 0;
  uint32_t default_priority_level = 0;
  QueuePolicy default_queue_policy;
  std::map<uint32_t, QueuePolicy> priority_queue_policy;
};

struct ModelConfig {
  std::string name;
  std::string platform = "onnxruntime_onnx";
  std::string backend = "onnxruntime";
  int64_t max_batch_size = 0;  // 0: the model has no batch dimension the server may use
  std::vector<TensorConfig> inputs;
  std::vector<TensorConfig> outputs;
  std::optional<DynamicBatching> dynamic_batching;
  int instance_count = 1;
  bool response_cache = false;
  VersionPolicy version_policy;
  std::string default_model_filename = "model.onnx";
  std::map<std::string, std::string> parameters;
  // Session settings the config maps (parameters / optimization); unset = server default.
  std::optional<int> threads;
  std::optional<OptLevel> optimization;
  // `ignis.precision` (f32 / bf16 / fp16: SessionOptions::precision) and `ignis.tuning` (off / cached
  // / measure: SessionOptions::tuning).
  std::optional<Precision> precision;
  std::optional<Tuning> tuning;
  // Scheduling beyond Triton's fields, also from `parameters`: requests queued plus running
  // (`ignis.max_inflight`, 0: unbounded) and the wait that lifts a request one priority level
  // (`ignis.priority_aging_microseconds`, 0: no aging).
  uint32_t max_inflight = 0;
  uint64_t priority_aging_us = 0;
  // The P99 an `auto` queue delay keeps under (`ignis.p99_target_microseconds`; 0: twice the
  // time of a one-row run).
  uint64_t p99_target_us = 0;
  // Shape buckets (`ignis.shape_buckets`: "16,32,64,128"): every variable non-batch extent of
  // a request is padded up to the next edge so that requests of different lengths batch
  // together; `ignis.pad_value.<input>` is what fills the padding (default 0, which is what a
  // transformer's attention mask needs).
  std::vector<int64_t> shape_buckets;
  std::map<std::string, double> pad_values;
  bool from_file = false;  // false: derived from the model
};

// Parses config.pbtxt text. Fields ignis does not use are appended to `warnings`, each named
// with its path (e.g. "optimization.cuda"); malformed text or values are errors.
Result<ModelConfig> parse_model_config(std::string_view text, std::vector<std::string>* warnings);

// Fills what the config leaves out from the session's declarations (all inputs/outputs when
// the config lists none, dtypes and dims), and checks that what it states agrees with the
// model: names, dtypes, ranks and fixed extents. With `derive_batch` (no config file) the
// batch dimension is assumed when every input and output has a symbolic first dim, with
// `default_max_batch_size`.
Status complete_model_config(ModelConfig* config, const Session& session, bool derive_batch,
                             int64_t default_max_batch_size);

// Triton's JSON form of a model config (GET /v2/models/{m}/config).
std::string model_config_json(const ModelConfig& config);

}  // namespace ignis::serve
