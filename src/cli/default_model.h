// SPDX-License-Identifier: Apache-2.0
// The built-in default model (assets/digits_cnn.onnx compiled into the binary), so
// `ignis run` and `ignis bench` work with no arguments on a fresh checkout.
#pragma once

#include <cstddef>
#include <span>

namespace ignis::cli {

// Empty when the build had no assets/digits_cnn.onnx.
std::span<const std::byte> default_model_bytes();

}  // namespace ignis::cli
