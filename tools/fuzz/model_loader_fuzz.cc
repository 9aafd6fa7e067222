// SPDX-License-Identifier: Apache-2.0
// Fuzzes the model loader: arbitrary bytes go through parsing, import, verification and
// planning; when a session opens, it runs once on zero-filled inputs of the declared shapes
// (symbolic dims = 1). Any crash, hang or sanitizer report is a bug; error statuses are fine.
#include <cstddef>
#include <cstdint>
#include <span>

#include "ignis/ignis.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ignis::SessionOptions options;
  options.threads = 1;
  auto session = ignis::Session::open_bytes(std::as_bytes(std::span<const uint8_t>(data, size)), options);
  if (!session) return 0;
  ignis::NamedTensors inputs;
  for (const auto& in : session->inputs()) {
    if (in.dtype == ignis::DType::Undefined || in.dtype == ignis::DType::String) return 0;
    ignis::Shape shape;
    for (int64_t d : in.dims) shape.push_back(d < 0 ? 1 : d);
    if (shape.numel() > (1 << 20)) return 0;  // keep runs small
    inputs.emplace_back(in.name, ignis::Tensor::zeros(in.dtype, shape));
  }
  auto outputs = session->run(inputs);
  (void)outputs;
  return 0;
}
