// SPDX-License-Identifier: Apache-2.0
// The JSON bodies of the informational endpoints: server and model metadata (KServe v2),
// statistics and the repository index (Triton's extensions).
#pragma once

#include <string>
#include <vector>

#include "serve/model_version.h"
#include "serve/repository.h"

namespace ignis::serve {

class InferenceServer;

inline constexpr const char* kServerName = "ignis";
inline constexpr const char* kServerVersion = "0.1.0";
// The protocol extensions this server implements, as Triton names them.
const std::vector<std::string>& server_extensions();

std::string server_metadata_json();
// Shapes as the model declares them, -1 for variable extents (the batch dim included).
struct TensorMetadata {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
};
std::vector<TensorMetadata> input_metadata(const ModelVersion& v);
std::vector<TensorMetadata> output_metadata(const ModelVersion& v);
std::string model_metadata_json(const ModelVersion& v, const std::vector<int64_t>& ready_versions);
// Every ready version of `model` ("" = every model), or just `version`.
std::string statistics_json(InferenceServer& server, const std::string& model, const std::string& version);
std::string repository_index_json(const std::vector<ModelIndexEntry>& entries, bool ready_only);

}  // namespace ignis::serve
