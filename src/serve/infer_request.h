// SPDX-License-Identifier: Apache-2.0
// The protocol-independent form of one inference request and its response: what the HTTP and
// gRPC codecs decode into and encode from, and what the queue and the engine see.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ignis/tensor.h"

namespace ignis::serve {

struct InferInput {
  std::string name;
  Tensor tensor;                   // the data (BOOL: one byte per element; BYTES: std::string elements)
  DType dtype = DType::Undefined;  // as the request states it; String for BYTES
  std::vector<int64_t> shape;
};

struct RequestedOutput {
  std::string name;
  std::optional<bool> binary;  // the output's own `binary_data` parameter, when given
};

struct InferRequest {
  std::string model;
  std::string version;  // empty: the model's default (highest ready) version
  std::string id;
  std::vector<InferInput> inputs;
  std::vector<RequestedOutput> outputs;  // empty: every output
  bool binary_output = false;            // request-level `binary_data_output`
  std::optional<uint64_t> priority;      // `parameters.priority`
  std::optional<uint64_t> timeout_us;    // `parameters.timeout` (microseconds)
  // Keeps alive the buffer that input tensors view (the request body), if any.
  std::shared_ptr<const void> storage;
  // When set, tells whether the client has gone (cancelled, or its own deadline passed); a
  // queued request whose client has gone is answered without running.
  std::function<bool()> cancelled;
};

struct InferOutput {
  std::string name;
  Tensor tensor;
  bool binary = false;  // HTTP: send as binary data after the JSON header
};

struct InferResponse {
  std::string model;
  std::string version;
  std::string id;
  std::vector<InferOutput> outputs;
};

// Limits a decoder enforces on one request.
struct DecodeLimits {
  int64_t max_elements = int64_t{1} << 31;  // per input tensor
  int max_inputs = 1024;
};

}  // namespace ignis::serve
