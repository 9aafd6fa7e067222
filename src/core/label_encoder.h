// SPDX-License-Identifier: Apache-2.0
// LabelEncoder's attributes (ai.onnx.ml versions 1, 2 and 4) read into one validated table:
// shape inference uses it to report malformed models and to type the output, the reference
// kernel to look values up.
#pragma once

#include <cstdint>

#include "core/attribute.h"
#include "ignis/status.h"
#include "ignis/tensor.h"

namespace ignis {

struct LabelEncoderTable {
  Tensor keys;           // [n]: string, int64, float (v2), or int16, int32, double (v4)
  Tensor values;         // [n], of the output type
  Tensor default_value;  // [1], of the output type: what keys not in the table map to
  bool nan_matches_nan = false;  // v4: a NaN key maps NaN inputs (they never compare equal)
};

// `version` is the op's (1, 2 or 4). Version 1 maps strings to their index in classes_strings
// or indices to strings, so its table depends on `input` (string or int64); Undefined reads and
// checks the attributes only. Errors are InvalidArgument naming the attribute.
Result<LabelEncoderTable> read_label_encoder(const AttrMap& attrs, int64_t version, DType input);

}  // namespace ignis
