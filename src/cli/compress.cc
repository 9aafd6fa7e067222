// SPDX-License-Identifier: Apache-2.0
// `ignis quantize` and `ignis prune`: weight compression written as a new ONNX file.
#include <algorithm>
#include <cstdio>

#include "cli/commands.h"
#include "cli/progress_line.h"
#include "core/strings.h"
#include "ignis/compress.h"

namespace ignis::cli {

namespace {

// --report measures each activation's error against float on this many calibration samples.
constexpr int64_t kReportErrorSamples = 16;

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// gptq: int4 calibrated the rounding of its weights (not activation ranges).
void print_report(const std::string& output, const CompressReport& r, bool details, bool gptq) {
  int64_t zeros_before = 0, zeros_after = 0;
  for (const auto& c : r.changed) {
    zeros_before += c.zeros_before;
    zeros_after += c.zeros_after;
  }
  std::printf("wrote %s: %zu weight tensors changed (%lld of %lld parameters), %zu skipped\n", output.c_str(),
              r.changed.size(), static_cast<long long>(r.parameters_changed), static_cast<long long>(r.parameters),
              r.skipped.size());
  std::printf("  weights %.2f -> %.2f MiB, file %.2f -> %.2f MiB\n", mib(r.initializer_bytes_before),
              mib(r.initializer_bytes_after), mib(r.file_bytes_before), mib(r.file_bytes_after));
  if (r.parameters_changed > 0)
    std::printf("  zeros in the changed weights: %.1f%% -> %.1f%%\n",
                100.0 * static_cast<double>(zeros_before) / static_cast<double>(r.parameters_changed),
                100.0 * static_cast<double>(zeros_after) / static_cast<double>(r.parameters_changed));
  if (r.calibration_samples > 0 && gptq)
    std::printf("  weights rounded by GPTQ, calibrated on %lld samples\n", static_cast<long long>(r.calibration_samples));
  else if (r.calibration_samples > 0)
    std::printf("  %zu activations quantized, calibrated on %lld samples\n", r.activations.size(),
                static_cast<long long>(r.calibration_samples));
  if (r.accuracy_loss >= 0) {
    std::printf("  accuracy loss on the calibration samples: %.4g\n", r.accuracy_loss);
    for (const auto& d : r.decisions) std::printf("    %s\n", d.c_str());
  }
  if (!details) return;
  int scheme_width = 26;  // the longest scheme's, at least
  for (const auto& c : r.changed) scheme_width = std::max(scheme_width, static_cast<int>(c.scheme.size()));
  std::printf("\n  %-40s %-14s %-*s %10s %12s %12s\n", "weight", "op", scheme_width, "scheme", "elements", "max|w|",
              "max|error|");
  for (const auto& c : r.changed)
    std::printf("  %-40s %-14s %-*s %10lld %12.4g %12.4g\n", c.value.c_str(), c.op_type.c_str(), scheme_width,
                c.scheme.c_str(), static_cast<long long>(c.elements), static_cast<double>(c.max_abs),
                static_cast<double>(c.max_abs_error));
  if (!r.activations.empty())
    std::printf("\n  %-48s %12s %12s %12s %6s %10s\n", "activation", "min", "max", "scale", "zp", "error");
  for (const auto& a : r.activations) {
    char error[32] = "-";
    if (a.error >= 0) std::snprintf(error, sizeof error, "%.3g%%", 100.0 * a.error);
    std::printf("  %-48s %12.4g %12.4g %12.4g %6d %10s\n", a.value.c_str(), static_cast<double>(a.min),
                static_cast<double>(a.max), static_cast<double>(a.scale), a.zero_point, error);
  }
  if (!r.activations.empty() && r.activations.front().error >= 0)
    std::printf("  (error: |x_q - x| / |x| of each dequantized activation against the float model, over the first "
                "%lld samples)\n",
                static_cast<long long>(std::min<int64_t>(kReportErrorSamples, r.calibration_samples)));
  if (!r.skipped.empty()) std::printf("\nskipped:\n");
  for (const auto& s : r.skipped) std::printf("  %s\n", s.c_str());
}

}  // namespace

int run_quantize(const QuantizeCliOptions& opts) {
  ProgressLine progress;
  QuantizeOptions o;
  o.mode = opts.mode == "fp16"      ? QuantizeMode::Fp16
           : opts.mode == "dynamic" ? QuantizeMode::Dynamic
           : opts.mode == "int4"    ? QuantizeMode::Int4
                                    : QuantizeMode::Int8;
  o.block_size = opts.block_size;
  if (!opts.calibrate.empty()) {
    // Without --mode, --calibrate means static int8; with --mode int4 it picks GPTQ rounding.
    if (opts.mode_given && o.mode != QuantizeMode::Int4)
      return fail(invalid_argument(str_cat("--calibrate writes static int8 (QDQ) and takes no --mode, or calibrates "
                                           "--mode int4; got --mode ", opts.mode)));
    if (o.mode != QuantizeMode::Int4) o.mode = QuantizeMode::Static;
    o.calibration_data = opts.calibrate;
    o.calibration_method = opts.method == "entropy"      ? CalibrationMethod::Entropy
                           : opts.method == "percentile" ? CalibrationMethod::Percentile
                                                         : CalibrationMethod::MinMax;
    o.percentile = opts.percentile;
    o.smooth_alpha = opts.smooth;
    o.calibration_samples = opts.samples;
    o.max_drop = opts.max_drop;
    o.metric = opts.metric == "cosine" ? AccuracyMetric::Cosine : AccuracyMetric::Top1Disagreement;
    o.progress = [&progress](const std::string& line) { progress.report(line); };
  }
  if (opts.max_drop && opts.calibrate.empty())
    return fail(invalid_argument("--max-drop measures accuracy on calibration samples and needs --calibrate DATA"));
  o.per_channel = !opts.per_tensor;
  o.per_row = opts.per_row;
  o.min_elements = opts.min_elements;
  o.exclude_nodes = opts.exclude;
  if (opts.report && o.mode == QuantizeMode::Static) o.error_samples = kReportErrorSamples;
  auto report = quantize_model(opts.model, opts.output, o);
  progress.finish();
  if (!report) return fail(report.error());
  print_report(opts.output, *report, opts.report, o.mode == QuantizeMode::Int4);
  return 0;
}

int run_prune(const PruneCliOptions& opts) {
  PruneOptions o;
  o.sparsity = opts.sparsity;
  o.granularity = opts.granularity == "channel" ? PruneGranularity::Channel : PruneGranularity::Element;
  o.min_elements = opts.min_elements;
  auto report = prune_model(opts.model, opts.output, o);
  if (!report) return fail(report.error());
  print_report(opts.output, *report, opts.report, false);
  return 0;
}

}  // namespace ignis::cli
