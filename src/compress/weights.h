// SPDX-License-Identifier: Apache-2.0
// Which initializers are weights that quantization and pruning may change, and along which
// axis their output channels lie.
#pragma once

#include <string>
#include <vector>

#include "core/channel_split.h"
#include "ignis/compress.h"
#include "ignis/status.h"
#include "ir/graph.h"

namespace ignis::compress {

struct WeightTensor {
  std::string value;    // initializer name
  std::string op_type;  // the op reading it
  int channel_axis = 0;  // axis of the output channels (the per-channel quantization axis)
};

// Float32 initializers read only as the weight operand of Conv (input 1, channels on axis 0),
// ConvTranspose (input 1, axis 1), MatMul (input 1, last axis) or Gemm (input 1, axis 1, or 0
// with transB) in the default domain, with at least `min_elements` elements. Initializers that
// are graph outputs, read by other ops, or read with disagreeing axes are not weights; those
// with a weight reader are listed in `skipped` with the reason.
std::vector<WeightTensor> find_weights(const ir::Graph& g, int64_t min_elements, std::vector<std::string>* skipped);

// Elements of all initializers, and their bytes.
int64_t initializer_elements(const ir::Graph& g);
int64_t initializer_bytes(const ir::Graph& g);

// Reads and verifies the model at `input_path` (its size in bytes, external data included, to
// *file_bytes).
Result<ir::Graph> read_model_graph(const std::string& input_path, int64_t* file_bytes);
// Writes `g` as ONNX to `output_path`, large weights in `<file>.data` beside it past
// onnx_io::ExportOptions' threshold (the bytes of both to *file_bytes).
Status write_model_graph(const ir::Graph& g, const std::string& output_path, int64_t* file_bytes);

}  // namespace ignis::compress
