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
  int projections = 0;
};

// Divides the last-axis channels of each activation read by a MatMul / Gemm of `targets`
// (node indices) with a constant 2-D weight by its factors (a Mul by 1 / s) and scales those
// weights' rows by them (copies where a weight has other readers); alpha in (0, 1]. The
// statistics come from one pass over the first 64 calibration samples. The Muls are sorted
// in, so node indices change: callers find their targets again.
Result<std::vector<SmoothedActivation>> smooth_activations(ir::Graph& g, const std::string& model_dir,
                                                           const std::vector<size_t>& targets,
                                                           const QuantizeOptions& o);

// After QDQ is written: each smoothing Mul whose output only a QuantizeLinear reads is folded
// into it, Q(x / s, y_s, z) = Q(x, y_s * s, z) with one scale per channel of the last axis, so
// the smoothing costs nothing at run time (opset >= 13; below, the Mul stays). Returns the
// number folded.
Result<int> fold_smoothing_into_quantize(ir::Graph& g, const std::vector<SmoothedActivation>& smoothed);

}  // namespace ignis::compress
