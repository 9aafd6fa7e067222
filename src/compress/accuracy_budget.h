// SPDX-License-Identifier: Apache-2.0
// What static quantization costs in accuracy, measured on the calibration samples: the float
// and the quantized model run side by side on each sample (one sample in memory at a time),
// giving the loss under QuantizeOptions::metric and, per quantized node, how much relative
// error it adds (from its input to its output), which ranks the nodes to keep in float32.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ignis/compress.h"
#include "ir/graph.h"

namespace ignis::compress {

// A quantized node's activation input and output, by their names in the float model (the
// quantized model keeps both names: QDQ pairs are inserted after them).
struct ErrorProbe {
  std::string node;
  std::string input;
  std::string output;
};

struct QuantizationError {
  double loss = 0;                          // under the metric, over all samples
  std::map<std::string, double> growth;     // node -> mean relative error added by the node
};

// Runs `float_graph` and `quantized` (files relative to `dir`) on the samples of
// options.calibration_data (at most options.calibration_samples).
Result<QuantizationError> measure_quantization_error(const ir::Graph& float_graph, const ir::Graph& quantized,
                                                     const std::string& dir, const std::vector<ErrorProbe>& probes,
                                                     const QuantizeOptions& options);

}  // namespace ignis::compress
