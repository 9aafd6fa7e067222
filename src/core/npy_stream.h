// SPDX-License-Identifier: Apache-2.0
// The .npy parser behind read_npy, for arrays that are not files of their own (.npz members).
#pragma once

#include <istream>
#include <string>

#include "ignis/status.h"
#include "ignis/tensor.h"

namespace ignis {

// Reads one .npy array from `in`; `path` names it in errors.
Result<Tensor> read_npy_stream(std::istream& in, const std::string& path);

}  // namespace ignis
