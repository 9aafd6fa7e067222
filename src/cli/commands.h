// SPDX-License-Identifier: Apache-2.0
// Options and entry points of the subcommands; main.cc parses the command line into these.
#pragma once

#include <optional>
#include <string>

#include "cli/common.h"

namespace ignis::cli {

struct InspectOptions {
  std::string model = kDefaultModel;
};
int run_inspect(const InspectOptions& opts);

struct RunOptions {
  std::string model = kDefaultModel;
  InputOptions inputs;
  std::string output_dir;
  int threads = 0;
  bool pin_threads = false;
  std::string precision = "f32";  // f32 | bf16 (SessionOptions::precision)
  TuningCliOptions tuning;
};
int run_run(const RunOptions& opts);

struct BenchOptions {
  std::string model = kDefaultModel;
  InputOptions inputs;
  int threads = 0;
  bool pin_threads = false;
  std::string precision = "f32";  // f32 | bf16 (SessionOptions::precision)
  int runs = 0;          // > 0: exactly this many timed runs
  double seconds = 3.0;  // otherwise: run for this long
  int warmup = 3;
  double warmup_seconds = 0;  // and at least this long (the CPU's clock ramps up under load)
  bool json = false;
  std::string profile;   // Chrome trace output path
  std::string level = "all";  // graph optimization level of the session
  TuningCliOptions tuning;
};
int run_bench(const BenchOptions& opts);

struct TuneOptions {
  std::string model = kDefaultModel;
  InputOptions inputs;             // --dim; `batches` replaces inputs.batch
  std::vector<int64_t> batches;    // one session per batch size; empty = the plan's default
  int threads = 0;
  std::string precision = "f32";
  std::string cache;               // empty: the default location
  bool verbose = false;            // every measured node, not only those whose choice changed
  bool again = false;              // re-measure nodes the cache already has
};
int run_tune(const TuneOptions& opts);

struct OptimizeCliOptions {
  std::string model;
  std::string output;
  std::string level = "extended";
  bool report = false;
  std::string dot_dir;
};
int run_optimize(const OptimizeCliOptions& opts);

struct QuantizeCliOptions {
  std::string model;
  std::string output;
  std::string mode = "int8";
  bool per_tensor = false;
  bool per_row = false;  // --mode dynamic: one scale per activation row
  int64_t block_size = 32;  // int4
  bool mode_given = false;  // --mode on the command line (only int4 goes with --calibrate)
  std::optional<int64_t> min_elements;
  std::vector<std::string> exclude;
  std::string calibrate;  // static int8, or int4 rounded by GPTQ: the calibration data folder
  std::string method = "minmax";
  double percentile = 99.999;
  double smooth = 0.7;  // --calibrate: SmoothQuant's strength (0: off)
  int64_t samples = 0;
  std::optional<double> max_drop;  // --calibrate: the accuracy budget
  std::string metric = "top1";     // top1 | cosine
  bool report = false;
};
int run_quantize(const QuantizeCliOptions& opts);

struct PruneCliOptions {
  std::string model;
  std::string output;
  double sparsity = 0.5;
  std::string granularity = "element";
  int64_t min_elements = 1024;
  bool report = false;
};
int run_prune(const PruneCliOptions& opts);

struct ServeCliOptions {
  std::string model_repository;
  std::string host = "127.0.0.1";
  int http_port = 8000;
  int grpc_port = 8001;
  int threads = 0;
  int io_threads = 1;
  double exit_timeout = 30;
  double repository_poll = 0;
  std::string log_format = "text";
  int64_t default_max_batch_size = 32;
  double max_body_mb = 64;
  int max_connections = 1024;
  double read_timeout = 30;
  double memory_limit_mb = 0;
  double response_cache_mb = 128;
  double response_cache_ttl = 0;
};
int run_serve(const ServeCliOptions& opts);

}  // namespace ignis::cli
