// SPDX-License-Identifier: Apache-2.0
// ONNX value types that are not plain tensors (sequences, optionals, maps) as text, the form
// ValueInfo::type_text keeps them in: "seq(tensor(float))", "optional(seq(tensor(int64)))",
// "map(string,tensor(float))". The importer writes it, the exporter reads it back.
#pragma once

#include <string>
#include <string_view>

#include "ignis/status.h"

namespace onnx {
class TypeProto;
}

namespace ignis::onnx_io {

// The text of `type`; Unsupported naming what cannot be represented (complex elements, a
// sparse tensor). A tensor type gives "tensor(float)".
Result<std::string> type_text(const onnx::TypeProto& type);

// Fills `type` from text written by type_text.
Status fill_type(onnx::TypeProto* type, std::string_view text);

}  // namespace ignis::onnx_io
