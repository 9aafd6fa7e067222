// SPDX-License-Identifier: Apache-2.0
// Offline graph optimization: read an ONNX model, run the graph passes, write ONNX.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ignis/session.h"
#include "ignis/status.h"

namespace ignis {

struct OptimizeOptions {
  // Basic and Extended write standard ONNX ops only (any ONNX runtime can run the result);
  // All may also write ai.ignis fused ops (see docs/ops_ai_ignis.md).
  OptLevel level = OptLevel::Extended;
  std::string dot_dir;  // when set: before.dot/after.dot (and .svg when `dot` is installed)
};

struct OptimizeReport {
  std::map<std::string, int> ops_before, ops_after;  // op type -> node count
  int64_t nodes_before = 0, nodes_after = 0;
  int64_t parameters_before = 0, parameters_after = 0;
  int64_t flops_before = -1, flops_after = -1;  // symbolic dims = 1; -1 when unknown
  std::vector<std::pair<std::string, int>> passes;  // pass name -> rewrites made
  std::vector<std::string> files_written;
};

// Optimizes `input_path` and writes the result to `output_path`.
Result<OptimizeReport> optimize_model(const std::string& input_path, const std::string& output_path,
                                      const OptimizeOptions& options = {});

}  // namespace ignis
