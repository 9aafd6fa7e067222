// SPDX-License-Identifier: Apache-2.0
// KServe v2 / Open Inference Protocol over HTTP: the JSON request and response bodies, with
// Triton's binary tensor extension (a JSON header of Inference-Header-Content-Length bytes,
// then each binary tensor's bytes in order). Errors name the input and what was wrong.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ignis/status.h"
#include "serve/infer_request.h"

namespace ignis::serve {

// Decodes `body`. `header_length` is the Inference-Header-Content-Length value (the JSON's
// size) or -1 when the header is absent (the whole body is JSON). Binary input tensors view
// `body` in place when suitably aligned (else they are copied once); `body` is kept alive
// through `request->storage`.
Status decode_infer_request(std::shared_ptr<const std::string> body, int64_t header_length,
                            const DecodeLimits& limits, InferRequest* request);

// The body of POST /v2/repository/index ({"ready": bool}) or .../load ({"parameters": {...}}).
struct RepositoryRequest {
  bool ready_only = false;
  bool has_parameters = false;  // load with a config or files override, which ignis does not do
};
// An empty body is the default request.
Status decode_repository_request(std::string_view body, RepositoryRequest* request);

// Encodes a response: JSON only when no output is binary, else the JSON header followed by the
// binary outputs; `*header_length` is the JSON's size then, -1 otherwise.
void encode_infer_response(const InferResponse& response, std::string* body, int64_t* header_length);

}  // namespace ignis::serve
