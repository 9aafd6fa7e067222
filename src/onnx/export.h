// SPDX-License-Identifier: Apache-2.0
// ir::Graph -> serialized ONNX ModelProto (what `ignis optimize` writes).
#pragma once

#include <string>

#include "ignis/status.h"
#include "ir/graph.h"

namespace ignis::onnx_io {

// Initializers are written as raw_data; graph inputs and outputs keep their declared
// types and symbolic dim names. Fails for attributes ignis does not represent (subgraphs).
Result<std::string> export_model(const ir::Graph& g);

}  // namespace ignis::onnx_io
