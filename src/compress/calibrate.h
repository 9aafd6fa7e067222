// SPDX-License-Identifier: Apache-2.0
// Calibration: runs the float model on each calibration sample through the public Session API
// and turns the values of chosen tensors into int8 ranges, keeping per tensor only a min, a
// max and (for the percentile and entropy methods) a bounded histogram, never the values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ignis/compress.h"
#include "ignis/session.h"
#include "ir/graph.h"

namespace ignis::compress {

struct CalibratedRange {
  float min = 0.0f, max = 0.0f;  // the range to quantize to (method applied)
};

struct Calibration {
  std::map<std::string, CalibratedRange> ranges;  // float32 tensors only
  std::vector<std::string> skipped;               // "<tensor>: <why>" for the others
  int64_t samples = 0;
};

// A session of `g` (its files relative to `dir`) with `tensors` also as graph outputs, opened at
// the basic level (cleanups only, which keep every graph output).
Result<Session> open_instrumented(const ir::Graph& g, const std::vector<std::string>& tensors, const std::string& dir);

// Runs `g` (its files relative to `model_dir`) on the samples of options.calibration_data and
// calibrates `tensors` with options.calibration_method.
Result<Calibration> calibrate(const ir::Graph& g, const std::string& model_dir, const std::vector<std::string>& tensors,
                              const QuantizeOptions& options);

}  // namespace ignis::compress
