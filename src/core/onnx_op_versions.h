// SPDX-License-Identifier: Apache-2.0
// Which version of an ONNX operator a model's opset import selects. A model that imports
// opset 23 and uses Add runs Add-14, the newest Add published at or before opset 23. Schemas
// and kernels state the op versions they implement; resolving the model's opset to the op's
// version first lets an op unchanged since opset 14 run in an opset-23 model, while a version
// ignis has not reviewed (Conv-22, say) stays unsupported until a schema covers it.
#pragma once

#include <cstdint>
#include <string_view>

namespace ignis {

// The version of (domain, op) in effect at `opset`. Domains other than ai.onnx (""),
// ai.onnx.ml and ai.onnx.preview, ops the table does not list, and opsets newer than the table knows resolve to
// `opset` itself, so nothing unknown is assumed unchanged.
int64_t onnx_op_version(std::string_view domain, std::string_view op_type, int64_t opset);

// The newest opset of `domain` the table describes, or 0 for a domain it does not cover.
int64_t onnx_newest_opset(std::string_view domain);

}  // namespace ignis
