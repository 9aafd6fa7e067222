// SPDX-License-Identifier: Apache-2.0
// Fuzzes what a client controls in `ignis serve`: the KServe v2 request decoder (JSON and the
// binary tensor extension) and the config.pbtxt reader. The first byte picks where the JSON
// header ends (no header, the whole body, or a split point); decoded requests are encoded back
// as a response so the encoder sees every dtype and shape too. Crashes, hangs and sanitizer
// reports are bugs; error statuses are fine.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "serve/codec/kserve_http.h"
#include "serve/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  auto body = std::make_shared<std::string>(reinterpret_cast<const char*>(data + 1), size - 1);
  int64_t header_length = -1;
  if (mode % 3 == 1) header_length = static_cast<int64_t>(body->size());
  if (mode % 3 == 2) header_length = static_cast<int64_t>(body->find('\n') == std::string::npos ? body->size() : body->find('\n'));

  ignis::serve::DecodeLimits limits;
  limits.max_elements = 1 << 20;
  ignis::serve::InferRequest request;
  if (ignis::serve::decode_infer_request(body, header_length, limits, &request).is_ok()) {
    ignis::serve::InferResponse response;
    for (const auto& in : request.inputs) {
      if (!in.tensor.defined()) continue;
      response.outputs.push_back({in.name, in.tensor, (mode & 8) != 0});
    }
    std::string encoded;
    int64_t json_length = 0;
    ignis::serve::encode_infer_response(response, &encoded, &json_length);
  }

  std::vector<std::string> warnings;
  auto config = ignis::serve::parse_model_config(*body, &warnings);
  if (config) (void)ignis::serve::model_config_json(*config);
  return 0;
}
