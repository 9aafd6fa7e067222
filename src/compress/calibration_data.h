// SPDX-License-Identifier: Apache-2.0
// The calibration data folder of `ignis quantize --calibrate DATA`: which files make up each
// sample, and loading one sample at a time as the model's named inputs.
#pragma once

#include <string>
#include <vector>

#include "ignis/session.h"
#include "ignis/status.h"

namespace ignis::compress {

// One sample: a .npz archive, a .npy file, or a folder.
struct CalibrationSample {
  enum class Kind { Npz, Npy, Folder } kind;
  std::string path;
};

// The samples of DATA, sorted by path:
//  - DATA/*.npz: one sample per archive, its arrays named by model input;
//  - DATA/*.npy: one sample per file, for a model with a single input;
//  - DATA/<folder>/: one sample per folder holding <input>.npy per model input (names made
//    file-safe as `ignis run -o` writes them) or input_0.pb, input_1.pb, ... in input order
//    (an ONNX test-data folder such as test_data_set_0/);
//  - DATA itself when it holds input_0.pb (a single ONNX test-data folder).
// Fails when DATA is missing or holds none of these.
Result<std::vector<CalibrationSample>> list_calibration_samples(const std::string& data);

// The inputs of `sample` for a model declaring `inputs`, in declaration order. A .npz with a
// single array feeds a single-input model whatever the array's name.
Result<NamedTensors> load_calibration_sample(const CalibrationSample& sample, const std::vector<ValueInfo>& inputs);

}  // namespace ignis::compress
