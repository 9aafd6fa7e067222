// SPDX-License-Identifier: Apache-2.0
// The graph rewrites behind quantize_model's activation-quantizing modes. Each edits `g` in
// place and records what it changed or left in float in `report`.
#pragma once

#include <string>

#include "ignis/compress.h"
#include "ir/graph.h"

namespace ignis::compress {

// QuantizeMode::Dynamic: MatMul/Gemm with a constant 2-D float32 B become
// DynamicQuantizeLinear + MatMulInteger + Cast + Mul [+ Add] (quantize_dynamic.cc).
Status quantize_dynamic(ir::Graph& g, const QuantizeOptions& options, CompressReport* report);

// QuantizeMode::Static: calibrates `g` (read from `model_path`) on options.calibration_data and
// writes QDQ around Conv/MatMul/Gemm (quantize_static.cc).
Status quantize_static(ir::Graph& g, const std::string& model_path, const QuantizeOptions& options,
                       CompressReport* report);

// QuantizeMode::Int4: MatMul with a constant 2-D float32 B becomes com.microsoft MatMulNBits
// with 4-bit block-quantized weights (quantize_int4.cc), rounded by GPTQ when
// options.calibration_data is set (`g` read from `model_path`, then run on the samples).
Status quantize_int4(ir::Graph& g, const std::string& model_path, const QuantizeOptions& options,
                     CompressReport* report);

}  // namespace ignis::compress
