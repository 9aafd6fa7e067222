// SPDX-License-Identifier: Apache-2.0
// Activation smoothing for static int8 (SmoothQuant, Xiao et al. 2022): a transformer's
// hidden states have a few channels far larger than the rest, and one int8 scale per tensor
// spends its levels on them. Each projection's input channel j is divided by s_j and the
// weight's row j multiplied by it, which leaves the product unchanged while moving part of the
// outlier into the weights (quantized per output channel, where it costs little):
//   s_j = max|x_j|^alpha / max|w_j|^(1 - alpha)
// over the calibration samples (x_j: channel j of the activation, the last axis; w_j: row j of
// every weight that reads it).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ignis/compress.h"
#include "ir/graph.h"

namespace ignis::compress {

// One activation the projections reading it now read divided by its smoothing factors.
struct SmoothedActivation {
  std::string value;   // the activation x
  std::string mul;     // the name of the Mul node computing x / s
  std::string output;  // its output, which the projections read
  std::vector<float> inverse;  // 1 / s_j, the Mul's constant
  int projections = 0;
};

// The factors come from max |x_j| over the first kSmoothingSamples calibration samples:
// maxima settle within a few dozen, and where this takes a pass of its own (percentile and
// entropy calibration) that pass stays short.
inline constexpr int64_t kSmoothingSamples = 64;

// The activations to smooth: each read as input A by a MatMul / Gemm of `targets` (node
// indices) with a constant float32 2-D weight, every such projection of it of one depth K.
struct SmoothingPlan {
  double alpha = 0.0;
  std::vector<std::string> values;                   // the activations, sorted
  std::map<std::string, std::vector<size_t>> projections;  // per activation, its readers among targets
  std::map<std::string, int64_t> depth;              // per activation, K
};

// The plan for strength alpha in [0, 1] (0: nothing to smooth).
Result<SmoothingPlan> plan_smoothing(const ir::Graph& g, const std::vector<size_t>& targets, double alpha);

// Divides the last-axis channels of each planned activation by its factors (a Mul by 1 / s)
// and scales its projections' weights' rows by them (copies where a weight has other
// readers). abs_max[x] holds max |x_j| per channel; an activation without an entry (its last
// axis was not K in some sample) is left alone. The Muls are sorted in, so node indices
// change: callers find their targets again.
Result<std::vector<SmoothedActivation>> apply_smoothing(ir::Graph& g, const SmoothingPlan& plan,
                                                        const std::map<std::string, std::vector<float>>& abs_max);

// plan_smoothing and apply_smoothing with the statistics from a pass of their own over the
// first kSmoothingSamples calibration samples.
Result<std::vector<SmoothedActivation>> smooth_activations(ir::Graph& g, const std::string& model_dir,
                                                           const std::vector<size_t>& targets,
                                                           const QuantizeOptions& o);

// After QDQ is written: each smoothing Mul whose output only a QuantizeLinear reads is folded
// into it, Q(x / s, y_s, z) = Q(x, y_s * s, z) with one scale per channel of the last axis, so
// the smoothing costs nothing at run time (opset >= 13; below, the Mul stays). Returns the
// number folded.
Result<int> fold_smoothing_into_quantize(ir::Graph& g, const std::vector<SmoothedActivation>& smoothed);

}  // namespace ignis::compress
