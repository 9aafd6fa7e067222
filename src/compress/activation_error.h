// SPDX-License-Identifier: Apache-2.0
// The error each quantized activation carries in the model written: its dequantized value in
// the quantized model against the float model's value of the same tensor, on calibration
// samples. It includes what the quantized layers before it add, as a user comparing the two
// models layer by layer would see it, so the report shows where the error enters and grows.
#pragma once

#include <string>
#include <vector>

#include "compress/smooth_activations.h"
#include "ignis/compress.h"
#include "ir/graph.h"

namespace ignis::compress {

// Sets ActivationRange::error for each of report->activations found in `quantized` (the QDQ
// graph written): sqrt(sum (x_q - x)^2 / sum x^2) over the first `options.error_samples`
// calibration samples, x from `float_graph` (the model before quantization). A smoothed
// activation's pair quantizes x / s, so x is divided by s first.
Status measure_activation_errors(const ir::Graph& quantized, const ir::Graph& float_graph, const std::string& model_dir,
                                 const std::vector<SmoothedActivation>& smoothed, const QuantizeOptions& options,
                                 CompressReport* report);

}  // namespace ignis::compress
