// SPDX-License-Identifier: Apache-2.0
// Pieces shared by the ignis subcommands: model loading (file or the built-in default),
// input assembly (files, ONNX test-data folders, random), and output summaries.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ignis/ignis.h"

namespace ignis::cli {

// The name that selects the built-in default model (the digits CNN) when no MODEL is given.
inline constexpr const char* kDefaultModel = "@digits";

Result<Session> open_model(const std::string& path, const SessionOptions& options);

struct InputOptions {
  std::vector<std::string> files;              // NAME=FILE (.npy or .pb)
  std::string dir;                             // folder of NAME.npy and/or ONNX test data input_<i>.pb
  std::vector<std::string> dim_specs;          // NAME=VALUE for symbolic dims
  int64_t batch = 0;                           // > 0: value for the leading symbolic dim
  uint64_t seed = 0;
};

// Inputs from files/folder (errors name the input and file); inputs not given are filled with
// seeded random values whose shape comes from the declaration (symbolic dims from `dims`,
// `batch`, or 1). Generated integers stay below ModelInfo::index_limits where the input has one.
Result<NamedTensors> make_inputs(const Session& session, const InputOptions& opts);

// "float32[1, 10]  min -2.1 max 3.4 mean 0.1  [0.12, -0.5, ...]" (and argmax for 2-D scores).
std::string summarize(const Tensor& t);

// Peak resident set size of this process in bytes.
int64_t peak_rss_bytes();

// One-line error to stderr; returns the exit code for the caller to return.
int fail(const Status& s);

// "none" | "basic" | "extended" | "all" (the --level values; the CLI checks membership).
OptLevel parse_level(const std::string& level);
// "f32" | "bf16" | "fp16" (checked by the option parser).
Precision parse_precision(const std::string& precision);

// --tuning and --tuning-cache, shared by the commands that open a session.
struct TuningCliOptions {
  std::string mode = "cached";  // off | cached | measure
  std::string cache;            // empty: the default location
};
// Applies `tuning` to `so`, and plans the session for the shapes `inputs` will generate
// (SessionOptions::plan_dims / plan_batch); bad --dim values are reported by make_inputs.
void apply_session_cli(SessionOptions& so, const TuningCliOptions& tuning, const InputOptions& inputs);

// NAME=VALUE specs of --dim.
Result<std::map<std::string, int64_t>> parse_dim_specs(const std::vector<std::string>& specs);

}  // namespace ignis::cli
