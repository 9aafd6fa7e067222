// SPDX-License-Identifier: Apache-2.0
// Scaler cases (ai.onnx.ml): float32 rows of odd widths with an offset and a scale per column,
// one of each for all columns, or none; a vector, and an input of rank 3 (columns are the last
// axis). Both kernels compute in double and round once.
#include <vector>

#include "core/strings.h"
#include "kernels/cases/cases.h"
#include "testing/op_runner.h"

namespace ignis::kernel_cases {

namespace {

std::vector<double> ramp(int64_t n, double start, double step) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + step * static_cast<double>(i));
  return v;
}

std::vector<float> as_floats(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

}  // namespace

std::vector<KernelCase> scaler_cases() {
  std::vector<KernelCase> cases;
  struct Spec {
    Shape x;
    int offsets, scales;  // per column (-1), one for all (1), none (0)
  };
  const Spec specs[] = {{{5, 7}, -1, -1}, {{33, 4}, 1, -1}, {{2, 13}, -1, 1}, {{9}, -1, -1},
                        {{3, 2, 6}, -1, 0}, {{4, 30}, 0, -1}, {{1, 1}, 1, 1}};
  for (const Spec& s : specs) {
    KernelCase c;
    c.domain = "ai.onnx.ml";
    c.op_type = "Scaler";
    c.opset = 1;
    c.inputs = {s.x};
    const int64_t columns = s.x[s.x.rank() - 1];
    auto values = [&](int kind, double start, double step) {
      return kind < 0 ? ramp(columns, start, step) : kind > 0 ? std::vector<double>{start} : std::vector<double>{};
    };
    const std::vector<double> offset = values(s.offsets, -0.3, 0.11), scale = values(s.scales, 1.7, -0.23);
    if (!offset.empty()) c.attrs.set("offset", testing::attr_floats(as_floats(offset)));
    if (!scale.empty()) c.attrs.set("scale", testing::attr_floats(as_floats(scale)));
    c.label = str_cat("X", s.x.str(), " offsets ", offset.size(), " scales ", scale.size());
    cases.push_back(c);
  }
  return cases;
}

}  // namespace ignis::kernel_cases
