// SPDX-License-Identifier: Apache-2.0
// Reading and writing tensors in the file formats users bring: numpy .npy and ONNX
// TensorProto .pb (as in ONNX test-data folders).
#pragma once

#include <string>

#include "ignis/status.h"
#include "ignis/tensor.h"

namespace ignis {

Result<Tensor> read_npy(const std::string& path);
Status write_npy(const std::string& path, const Tensor& tensor);

// A serialized onnx.TensorProto; `name` receives the tensor's name field when not null.
Result<Tensor> read_tensor_proto(const std::string& path, std::string* name = nullptr);

// A serialized ONNX value of kind `kind` (the dtype a model declares for it): SequenceProto,
// OptionalProto or MapProto for the containers, TensorProto otherwise.
Result<Tensor> read_onnx_value(const std::string& path, DType kind);

// Dispatches on the extension: ".npy" or ".pb".
Result<Tensor> read_tensor_file(const std::string& path);

}  // namespace ignis
