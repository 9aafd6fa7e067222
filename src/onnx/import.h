// SPDX-License-Identifier: Apache-2.0
// ONNX protobuf -> ir::Graph. The only code (with tensor_proto.cc) that sees protobuf types.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "ignis/status.h"
#include "ignis/tensor.h"
#include "ir/graph.h"

namespace ignis::onnx_io {

// Parses a serialized onnx.ModelProto. `base_dir` resolves external-data files; empty means
// external data is refused. External data is memory-mapped read-only and used in place where
// aligned (the tensors keep the mapping alive), so the data files must not be modified or
// truncated while the graph lives. Constant nodes become initializers.
Result<ir::Graph> import_model(std::span<const std::byte> bytes, const std::string& base_dir);

// As import_model, reading the model from file `path` as a stream: the serialized bytes are
// never held whole, so peak memory is about one copy of the weights. With `external_bytes`,
// stores the total size of the external data files the model reads.
Result<ir::Graph> import_model_file(const std::string& path, const std::string& base_dir,
                                    int64_t* external_bytes = nullptr);

// Parses a serialized onnx.TensorProto (as in ONNX test-data folders).
Result<Tensor> import_tensor_proto(std::span<const std::byte> bytes, std::string* name);

// Parses a serialized SequenceProto, OptionalProto or MapProto when `kind` is Sequence,
// Optional or Map, else a TensorProto.
Result<Tensor> import_value_proto(std::span<const std::byte> bytes, DType kind);

}  // namespace ignis::onnx_io
