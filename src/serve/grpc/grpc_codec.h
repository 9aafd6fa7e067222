// SPDX-License-Identifier: Apache-2.0
// Conversions between the gRPC messages of inference.GRPCInferenceService and the server's
// protocol-independent forms: infer requests and responses, and model configs. Decoding errors
// name the input and say what was expected, as the HTTP codec's do.
#pragma once

#include "grpc_service.pb.h"
#include "ignis/status.h"
#include "serve/infer_request.h"
#include "serve/model_config.h"

namespace ignis::serve {

// Decodes `request` into `out`. Input data comes from raw_input_contents (one entry per input,
// in order) or from each input's typed contents. Raw buffers are moved out of `request` into
// `out->storage`, and input tensors view them in place when aligned, so `request` may be
// destroyed before `out`. Unsupported protocol features (shared memory, classification) give
// StatusCode::Unsupported.
Status decode_grpc_infer_request(inference::ModelInferRequest* request, const DecodeLimits& limits,
                                 InferRequest* out);

// Every output as raw_output_contents (Triton's clients read outputs from there).
void encode_grpc_infer_response(const InferResponse& response, inference::ModelInferResponse* out);

// The same fields as model_config_json(), as Triton's ModelConfig message.
void encode_grpc_model_config(const ModelConfig& config, inference::ModelConfig* out);

}  // namespace ignis::serve
