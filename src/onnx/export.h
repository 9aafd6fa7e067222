// SPDX-License-Identifier: Apache-2.0
// ir::Graph -> serialized ONNX ModelProto (what `ignis optimize` writes).
#pragma once

#include <cstdint>
#include <string>

#include "ignis/status.h"
#include "ir/graph.h"

namespace ignis::onnx_io {

struct ExportOptions {
  // Initializers past this many bytes in all (control-flow bodies included) go to an external
  // data file: one protobuf message cannot reach 2 GiB, and the rest of the graph needs room
  // too. Tests lower it to exercise the external path without writing gigabytes.
  int64_t external_data_threshold = int64_t{1} << 30;
  // When writing external data, tensors smaller than this stay inline (ONNX's writer's default).
  int64_t external_min_bytes = 1024;
};

// Initializers are written as raw_data; graph inputs and outputs keep their declared
// types and symbolic dim names. Fails for attributes ignis does not represent, and for models
// that one protobuf message cannot hold (export_model_file puts their weights beside them).
Result<std::string> export_model(const ir::Graph& g);

struct ExportedFiles {
  int64_t model_bytes = 0;
  std::string data_path;  // empty when every initializer is inline
  int64_t data_bytes = 0;
};

// Writes `g` to the file `path`. Past options.external_data_threshold, the initializers of at
// least external_min_bytes go to `<file name>.data` beside it, each at a 64-byte aligned offset
// (so import maps them in place), referenced by ONNX external_data entries. Both files are
// written under temporary names and renamed into place, so `path` may be the model being read,
// whose mapped data file then stays intact until it is unmapped.
Result<ExportedFiles> export_model_file(const ir::Graph& g, const std::string& path, const ExportOptions& options = {});

}  // namespace ignis::onnx_io
