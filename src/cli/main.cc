// SPDX-License-Identifier: Apache-2.0
// The `ignis` command: parses the command line (CLI11 stays in this file) and dispatches.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace {

void add_input_options(CLI::App* cmd, ignis::cli::InputOptions& in) {
  cmd->add_option("--input,-i", in.files, "NAME=FILE input tensor (.npy or ONNX TensorProto .pb); repeatable");
  cmd->add_option("--inputs", in.dir,
                  "folder of input tensors: NAME.npy per input name, and/or ONNX test data input_0.pb, input_1.pb, ...");
  cmd->add_option("--dim", in.dim_specs, "NAME=VALUE for a symbolic dim of generated inputs, e.g. --dim seq=128");
  cmd->add_option("--seed", in.seed, "seed for generated random inputs")->default_val(0);
}

void add_precision_option(CLI::App* cmd, std::string& precision) {
  cmd->add_option("--precision", precision,
                  "f32 | bf16 | fp16: bf16 runs MatMul, Gemm and Conv with constant weights in bfloat16 where "
                  "the CPU has AVX512_BF16 (float32 elsewhere; shallow convolutions stay float32); fp16 stores "
                  "the constant weights of MatMul and Gemm as float16 (half the bytes) and computes in float32 "
                  "where the CPU has F16C")
      ->default_val("f32")
      ->check(CLI::IsMember({"f32", "bf16", "fp16"}));
}

void add_tuning_options(CLI::App* cmd, ignis::cli::TuningCliOptions& t) {
  cmd->add_option("--tuning", t.mode,
                  "off | cached | measure: kernel choice by the built-in rules, by the tuning cache where it "
                  "has the node (else the rules), or measured now for nodes the cache lacks (and saved)")
      ->default_val("cached")
      ->check(CLI::IsMember({"off", "cached", "measure"}));
  cmd->add_option("--tuning-cache", t.cache,
                  "tuning cache file (default: $IGNIS_TUNING_CACHE, else ~/.cache/ignis/tuning-cache.tsv)");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ignis::cli;
  CLI::App app{"ignis: fast ONNX inference.\nWith no MODEL, commands use the built-in digits CNN."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ignis 0.1.0");

  InspectOptions inspect;
  auto* c_inspect = app.add_subcommand("inspect", "show inputs, outputs, opsets, op counts, parameters and FLOPs");
  c_inspect->add_option("MODEL", inspect.model, "model.onnx (default: built-in digits CNN)");

  RunOptions run;
  auto* c_run = app.add_subcommand("run", "run the model once and summarize (and optionally save) its outputs");
  c_run->add_option("MODEL", run.model, "model.onnx (default: built-in digits CNN)");
  add_input_options(c_run, run.inputs);
  c_run->add_option("--output-dir,-o", run.output_dir, "write each output as DIR/<output name>.npy");
  c_run->add_option("--threads,-t", run.threads, "intra-op threads (0 = physical cores)")->default_val(0);
  c_run->add_flag("--pin", run.pin_threads, "bind each worker thread to its own physical core");
  add_precision_option(c_run, run.precision);
  add_tuning_options(c_run, run.tuning);
  c_run->add_option("--batch", run.inputs.batch, "value for the leading symbolic dim of generated inputs");

  BenchOptions bench;
  auto* c_bench = app.add_subcommand("bench", "measure latency, throughput and memory");
  c_bench->add_option("MODEL", bench.model, "model.onnx (default: built-in digits CNN)");
  add_input_options(c_bench, bench.inputs);
  c_bench->footer(
      "Inputs not given with --input/--inputs are generated from the declared shapes:\n"
      "floats normal(0, 1), integers in [0, 100), inputs named like *mask* all ones. An integer\n"
      "input that indexes a constant table through Gather (directly or via Cast/Reshape/Unsqueeze/...)\n"
      "stays below the smallest such table's extent, e.g. token_type_ids into a 2-row embedding.\n");
  // 0: a model's fixed batch as declared, 1 for a symbolic one.
  c_bench->add_option("--batch", bench.inputs.batch,
                      "batch size for generated inputs (default: a fixed batch as declared, else 1)")
      ->default_val(0);
  c_bench->add_option("--threads,-t", bench.threads, "intra-op threads (0 = physical cores)")->default_val(0);
  c_bench->add_flag("--pin", bench.pin_threads, "bind each worker thread to its own physical core");
  add_precision_option(c_bench, bench.precision);
  add_tuning_options(c_bench, bench.tuning);
  auto* runs = c_bench->add_option("--runs,-n", bench.runs, "number of timed runs");
  c_bench->add_option("--seconds,-s", bench.seconds, "time budget for timed runs")->default_val(3.0)->excludes(runs);
  c_bench->add_option("--warmup", bench.warmup, "untimed runs first")->default_val(3);
  c_bench->add_option("--warmup-seconds", bench.warmup_seconds,
                      "keep the untimed runs going for at least this long (a short run on an idle machine "
                      "otherwise times the CPU's clock ramping up)")
      ->default_val(0.0)
      ->check(CLI::Range(0.0, 3600.0));
  c_bench->add_flag("--json", bench.json, "print one JSON object");
  c_bench->add_option("--profile", bench.profile, "write a Chrome/Perfetto trace of per-op times to this file");
  c_bench->add_option("--level", bench.level, "graph optimization level: none | basic | extended | all")
      ->default_val("all")
      ->check(CLI::IsMember({"none", "basic", "extended", "all"}));

  TuneOptions tune;
  auto* c_tune = app.add_subcommand(
      "tune", "time every kernel and algorithm that can run each node, keep the fastest in the tuning cache");
  c_tune->add_option("MODEL", tune.model, "model.onnx (default: built-in digits CNN)");
  c_tune->add_option("--batch", tune.batches, "batch sizes to tune for, e.g. --batch 1 8 (default: 1)")
      ->check(CLI::PositiveNumber);
  c_tune->add_option("--dim", tune.inputs.dim_specs, "NAME=VALUE for a symbolic dim, e.g. --dim seq=128");
  c_tune->add_option("--threads,-t", tune.threads, "intra-op threads the sessions will use (0 = physical cores)")
      ->default_val(0);
  add_precision_option(c_tune, tune.precision);
  c_tune->add_option("--cache", tune.cache,
                     "tuning cache file to update (default: $IGNIS_TUNING_CACHE, else ~/.cache/ignis/tuning-cache.tsv)");
  c_tune->add_flag("--verbose,-v", tune.verbose, "list every measured node, not only those the rules get wrong");
  c_tune->add_flag("--again", tune.again, "measure nodes the cache already holds too, replacing their entries");
  c_tune->footer(
      "Entries are keyed by CPU, thread count, op, input shapes and attributes. Sessions read the\n"
      "cache by default (--tuning cached); entries for other CPUs in the same file are kept and ignored.\n");

  OptimizeCliOptions optimize;
  auto* c_opt = app.add_subcommand("optimize", "rewrite the graph (folding, fusion, cleanups) and write a new ONNX file");
  c_opt->add_option("MODEL", optimize.model, "input model.onnx")->required();
  c_opt->add_option("--output,-o", optimize.output, "output .onnx path")->required();
  c_opt->add_option("--level", optimize.level,
                    "basic | extended (standard ONNX ops only) | all (may use ai.ignis fused ops)")
      ->default_val("extended")
      ->check(CLI::IsMember({"none", "basic", "extended", "all"}));
  c_opt->add_flag("--report", optimize.report, "print node counts by op type, FLOPs, parameters and pass counts");
  c_opt->add_option("--dot", optimize.dot_dir, "write before/after Graphviz files (and SVGs when `dot` exists) here");

  QuantizeCliOptions quantize;
  auto* c_quant = app.add_subcommand("quantize", "quantize weights (and activations) and write a new ONNX file");
  c_quant->add_option("MODEL", quantize.model, "input model.onnx")->required();
  c_quant->add_option("--output,-o", quantize.output, "output .onnx path")->required();
  c_quant->add_option("--mode", quantize.mode,
                      "int8 (weights only: symmetric, DequantizeLinear per output channel) | fp16 (weights only: "
                      "Cast from float16) | dynamic (MatMul/Gemm as DynamicQuantizeLinear + MatMulInteger) | int4 (MatMul as "
                      "com.microsoft MatMulNBits: 4-bit weights per block, asymmetric)")
      ->default_val("int8")
      ->check(CLI::IsMember({"int8", "fp16", "dynamic", "int4"}));
  c_quant->add_option("--block-size", quantize.block_size, "int4: depths per quantization block (a power of 2 >= 16)")
      ->default_val(32);
  auto* per_tensor = c_quant->add_flag("--per-tensor", quantize.per_tensor,
                                       "one scale per weight tensor instead of per output channel");
  bool per_channel = false;  // the default; the flag exists to say so explicitly
  c_quant->add_flag("--per-channel", per_channel, "one scale per output channel of each weight (the default)")
      ->excludes(per_tensor);
  c_quant->add_flag("--per-row", quantize.per_row,
                    "--mode dynamic: one symmetric int8 scale per activation row (last axis) instead of one per "
                    "tensor, written in standard ops");
  c_quant->add_option("--min-elements", quantize.min_elements,
                      "leave weights with fewer elements in float32 (default 1024; 0 with --calibrate)")
      ->check(CLI::Range(0.0, 3600.0));
  c_quant->add_option("--exclude", quantize.exclude, "dynamic/int4/--calibrate: NODE,... node names to keep in float32")
      ->delimiter(',');
  c_quant->add_option("--calibrate", quantize.calibrate,
                      "static int8 (QDQ) calibrated on the samples in this folder: *.npz, *.npy, or sub-folders "
                      "of NAME.npy / input_0.pb (see README); with --mode int4, GPTQ rounding calibrated on them");
  c_quant->add_option("--method", quantize.method, "--calibrate: minmax | percentile | entropy (KL, as TensorRT)")
      ->default_val("minmax")
      ->check(CLI::IsMember({"minmax", "percentile", "entropy"}));
  c_quant->add_option("--percentile", quantize.percentile, "--method percentile: share of |x| kept in range, in %")
      ->default_val(99.999)
      ->check(CLI::Range(0.0, 100.0));
  c_quant->add_option("--smooth", quantize.smooth,
                      "--calibrate: SmoothQuant strength alpha in [0, 1]: each MatMul/Gemm input channel is divided "
                      "by max|x|^alpha / max|w|^(1-alpha) and its weight row multiplied by it (0: off)")
      ->default_val(0.7)
      ->check(CLI::Range(0.0, 1.0));
  c_quant->add_option("--samples", quantize.samples, "--calibrate: use at most N samples (0: all)")
      ->default_val(0)
      ->check(CLI::Range(0.0, 3600.0));
  c_quant->add_option("--max-drop", quantize.max_drop,
                      "--calibrate: largest accuracy loss allowed on the calibration samples (0.01 = 1 point); "
                      "the nodes that cost the most when quantized alone stay float32 until it holds");
  c_quant->add_option("--metric", quantize.metric,
                      "--max-drop: top1 (share of argmax rows that change) | cosine (1 - mean cosine to float)")
      ->default_val("top1")
      ->check(CLI::IsMember({"top1", "cosine"}));
  c_quant->add_flag("--report", quantize.report,
                    "print every weight changed or skipped; with --calibrate, each activation's range and its error "
                    "against the float model on the first 16 samples");

  PruneCliOptions prune;
  auto* c_prune = app.add_subcommand("prune", "zero the smallest weights (magnitude pruning) and write a new ONNX file");
  c_prune->add_option("MODEL", prune.model, "input model.onnx")->required();
  c_prune->add_option("--output,-o", prune.output, "output .onnx path")->required();
  c_prune->add_option("--sparsity", prune.sparsity, "fraction of each weight tensor set to zero, in [0, 1)")
      ->default_val(0.5)
      ->check(CLI::Range(0.0, 1.0));
  c_prune->add_option("--granularity", prune.granularity,
                      "element (smallest |w|) | channel (whole output channels of smallest L2 norm)")
      ->default_val("element")
      ->check(CLI::IsMember({"element", "channel"}));
  c_prune->add_option("--min-elements", prune.min_elements, "leave weights with fewer elements untouched")
      ->default_val(1024)
      ->check(CLI::Range(0.0, 3600.0));
  c_prune->add_flag("--report", prune.report, "print every weight changed or skipped");

  ServeCliOptions serve;
  auto* c_serve = app.add_subcommand(
      "serve", "serve a model repository over HTTP and gRPC (KServe v2 / Triton protocol) until SIGTERM or SIGINT");
  c_serve->add_option("--model-repository", serve.model_repository,
                      "folder in Triton's layout: <model>/[config.pbtxt] and <model>/<version>/model.onnx")
      ->required();
  c_serve->add_option("--host", serve.host, "address to bind (0.0.0.0 for every interface)")->default_val("127.0.0.1");
  c_serve->add_option("--http-port", serve.http_port, "HTTP port (0: any free port, printed at start)")
      ->default_val(8000)
      ->check(CLI::Range(0, 65535));
  c_serve->add_option("--grpc-port", serve.grpc_port, "gRPC port (-1: none)")->default_val(8001)->check(CLI::Range(-1, 65535));
  c_serve->add_option("--threads,-t", serve.threads,
                      "thread budget for I/O and inference together (0 = physical cores); see docs/serve.md")
      ->default_val(0)
      ->check(CLI::Range(0.0, 3600.0));
  c_serve->add_option("--io-threads", serve.io_threads, "HTTP I/O threads, taken from the budget")
      ->default_val(1)
      ->check(CLI::Range(1, 64));
  c_serve->add_option("--exit-timeout", serve.exit_timeout, "seconds to finish accepted requests after SIGTERM")
      ->default_val(30)
      ->check(CLI::Range(0.0, 3600.0));
  c_serve->add_option("--repository-poll", serve.repository_poll,
                      "seconds between scans of the repository for changed models (0: no polling)")
      ->default_val(0)
      ->check(CLI::Range(0.0, 3600.0));
  c_serve->add_option("--log-format", serve.log_format, "text | json")
      ->default_val("text")
      ->check(CLI::IsMember({"text", "json"}));
  c_serve->add_option("--default-max-batch-size", serve.default_max_batch_size,
                      "max_batch_size given to models without config.pbtxt whose inputs and outputs all start "
                      "with a symbolic dim")
      ->default_val(32)
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  c_serve->add_option("--max-body-mb", serve.max_body_mb, "largest request body accepted (413 above)")
      ->default_val(64)
      ->check(CLI::PositiveNumber);
  c_serve->add_option("--max-connections", serve.max_connections, "open HTTP connections at most")
      ->default_val(1024)
      ->check(CLI::Range(1, 1 << 20));
  c_serve->add_option("--read-timeout", serve.read_timeout,
                      "seconds a client has to send a whole request (slow clients are disconnected)")
      ->default_val(30)
      ->check(CLI::PositiveNumber);
  c_serve->add_option("--response-cache-mb", serve.response_cache_mb,
                      "memory for cached responses of the models whose config enables response_cache "
                      "(0: no cache)")
      ->default_val(128)
      ->check(CLI::Range(0.0, 3600.0));
  c_serve->add_option("--response-cache-ttl", serve.response_cache_ttl,
                      "seconds a cached response stays valid (0: until evicted or its model version is unloaded)")
      ->default_val(0)
      ->check(CLI::Range(0.0, 3600.0));
  c_serve->add_option("--memory-limit-mb", serve.memory_limit_mb,
                      "memory one inference may use for activations and outputs; a request needing more gets "
                      "an error (0 = the machine's physical memory)")
      ->default_val(0)
      ->check(CLI::Range(0.0, 3600.0));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (run.threads < 0 || bench.threads < 0) {
    std::fprintf(stderr, "ignis: error: --threads must be >= 0\n");
    return 2;
  }
  if (*c_inspect) return run_inspect(inspect);
  if (*c_run) return run_run(run);
  if (*c_bench) return run_bench(bench);
  if (*c_tune) return run_tune(tune);
  if (*c_opt) return run_optimize(optimize);
  if (*c_quant) {
    quantize.mode_given = c_quant->count("--mode") > 0;
    return run_quantize(quantize);
  }
  if (*c_prune) return run_prune(prune);
  if (*c_serve) return run_serve(serve);
  return 2;
}
