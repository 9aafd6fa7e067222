// SPDX-License-Identifier: Apache-2.0
// What static quantization costs in accuracy, measured on the calibration samples: the float
// and the quantized model run side by side on each sample (one sample in memory at a time),
// giving the loss under QuantizeOptions::metric and the error of the model's outputs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ignis/compress.h"
#include "ir/graph.h"

namespace ignis::compress {

struct QuantizationError {
  double loss = 0;          // under the metric, over all samples
  double output_error = 0;  // 1 - mean cosine of the model's float32 outputs to float's
};

// Runs `float_graph` and `quantized` (files relative to `dir`) on the samples of
// options.calibration_data (at most options.calibration_samples).
Result<QuantizationError> measure_quantization_error(const ir::Graph& float_graph, const ir::Graph& quantized,
                                                     const std::string& dir, const QuantizeOptions& options);

}  // namespace ignis::compress
