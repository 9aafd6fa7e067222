// SPDX-License-Identifier: Apache-2.0
// Calibration: runs the float model on each calibration sample through the public Session API
// and turns the values of chosen tensors into int8 ranges, keeping per tensor only a min, a
// max and (for the percentile and entropy methods) a bounded histogram, never the values; or
// into whatever else a visitor accumulates (int4's input Hessians).
#pragma once

#include <functional>
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

// Per channel of a tensor's last axis (calibrate's `by_channel`).
struct ChannelRanges {
  std::vector<float> min, max;  // over the finite values of every sample
  std::vector<float> abs_max;   // max |x| over the first `abs_max_samples` samples
};

struct Calibration {
  std::map<std::string, CalibratedRange> ranges;  // float32 tensors only
  std::map<std::string, ChannelRanges> channels;  // the by_channel tensors whose last axis was K in every sample
  std::vector<std::string> skipped;               // "<tensor>: <why>" for the others
  int64_t samples = 0;
};

// Called per sample with each of the tensors asked for (by index) as the model computed it;
// an error stops the run.
using CalibrationVisitor = std::function<Status(size_t, const Tensor&)>;

// Runs `g` (its files relative to `model_dir`), with `tensors` made graph outputs, on each
// sample of options.calibration_data (at most options.calibration_samples of them), passing
// their values to `visit`, which keeps what it needs; returns the number of samples run.
Result<int64_t> run_calibration(const ir::Graph& g, const std::string& model_dir, const std::vector<std::string>& tensors,
                                const QuantizeOptions& options, const CalibrationVisitor& visit);

// run_calibration with two graphs computing the same tensors (a partly quantized model and
// the float one it came from): visit(i, value in g, value in reference) per sample.
using CalibrationPairVisitor = std::function<Status(size_t, const Tensor&, const Tensor&)>;
Result<int64_t> run_calibration_pair(const ir::Graph& g, const ir::Graph& reference, const std::string& model_dir,
                                     const std::vector<std::string>& tensors, const QuantizeOptions& options,
                                     const CalibrationPairVisitor& visit);
// The same where the reference computes reference_tensors[i] for g's tensors[i].
Result<int64_t> run_calibration_pair(const ir::Graph& g, const ir::Graph& reference, const std::string& model_dir,
                                     const std::vector<std::string>& tensors,
                                     const std::vector<std::string>& reference_tensors, const QuantizeOptions& options,
                                     const CalibrationPairVisitor& visit);

// Runs `g` (its files relative to `model_dir`) on the samples of options.calibration_data and
// calibrates `tensors` with options.calibration_method. For each tensor of `by_channel`
// (name -> K, its last axis) it also keeps ChannelRanges, which SmoothQuant's factors and
// the min/max range of x / s need, so that both come from the one pass.
Result<Calibration> calibrate(const ir::Graph& g, const std::string& model_dir, const std::vector<std::string>& tensors,
                              const QuantizeOptions& options, const std::map<std::string, int64_t>& by_channel = {},
                              int64_t abs_max_samples = 0);

}  // namespace ignis::compress
