// SPDX-License-Identifier: Apache-2.0
// Reading and writing tensors in the file formats users bring: numpy .npy and ONNX
// TensorProto .pb (as in ONNX test-data folders).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ignis/status.h"
#include "ignis/tensor.h"

namespace ignis {

Result<Tensor> read_npy(const std::string& path);
Status write_npy(const std::string& path, const Tensor& tensor);

// A numpy .npz archive (np.savez or np.savez_compressed): its arrays in archive order, each
// named as np.load names it (the member name without ".npy").
Result<std::vector<std::pair<std::string, Tensor>>> read_npz(const std::string& path);

// A serialized onnx.TensorProto; `name` receives the tensor's name field when not null.
Result<Tensor> read_tensor_proto(const std::string& path, std::string* name = nullptr);

// A serialized ONNX value of kind `kind` (the dtype a model declares for it): SequenceProto,
// OptionalProto or MapProto for the containers, TensorProto otherwise.
Result<Tensor> read_onnx_value(const std::string& path, DType kind);

// A tensor name made safe as a file name ('/', '\\', ':' become '_'): `ignis run -o` writes
// DIR/<tensor_file_name>.npy, and input folders are read by the same rule.
std::string tensor_file_name(const std::string& name);

// Dispatches on the extension: ".npy" or ".pb".
Result<Tensor> read_tensor_file(const std::string& path);

}  // namespace ignis
