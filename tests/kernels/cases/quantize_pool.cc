// SPDX-License-Identifier: Apache-2.0
// com.microsoft QLinearGlobalAveragePool cases: uint8 and int8, with and without zero points,
// channel sizes around the 16- and 32-byte widths, resnet50's head (2048 channels of 7x7), a
// tensor large enough to split over threads, 1-D and 3-D images, and channels-last inputs
// (which the x86 kernel hands to the reference). Integer outputs must match exactly.
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

std::vector<KernelCase> qlinear_global_average_pool_cases() {
  std::vector<std::pair<Shape, bool>> shapes;  // X, channels_last
  for (int64_t size : {1, 7, 15, 16, 17, 31, 32, 33, 49, 64, 100}) shapes.push_back({{1, 3, 1, size}, false});
  for (const Shape& s : std::initializer_list<Shape>{{1, 2048, 7, 7}, {2, 64, 56, 56}, {2, 5, 9}, {1, 3, 4, 5, 6}})
    shapes.push_back({s, false});
  shapes.push_back({{2, 7, 7, 12}, true});
  std::vector<KernelCase> cases;
  for (DType ty : {DType::U8, DType::I8}) {
    for (bool zero_points : {true, false}) {
      for (const auto& [x, channels_last] : shapes) {
        KernelCase c;
        c.domain = "com.microsoft";
        c.op_type = "QLinearGlobalAveragePool";
        c.opset = 1;
        const DType zp = zero_points ? ty : DType::Undefined;
        c.inputs = {x, {}, {}, {}};
        c.input_dtypes = {ty, DType::F32, zp, DType::F32};
        // Scale ratios about 0.3 to 1.3: means rarely saturate, and land between steps of y.
        c.input_ranges = {{1.0, 0.0}, {0.02, 0.04}, {1.0, 0.0}, {0.03, 0.06}};
        if (zero_points) {
          c.inputs.push_back({});
          c.input_dtypes.push_back(ty);
        }
        if (channels_last) c.attrs.set("channels_last", int_attr(1));
        c.label = str_cat(ty == DType::U8 ? "u8" : "s8", " X", x.str(), channels_last ? " channels_last" : "",
                          zero_points ? " zero points" : "");
        cases.push_back(std::move(c));
      }
    }
  }
  return cases;
}

}  // namespace ignis::kernel_cases
