// SPDX-License-Identifier: Apache-2.0
// Pooling cases: MaxPool and AveragePool over output widths 1..17 (every tail of the 8-column
// vectors) at strides 1, 2 and 3, padding, ceil_mode windows that run past the end padding,
// count_include_pad, dilations, auto_pad, 1-D windows, planes enough to split over threads,
// and shapes the fast kernels hand back to the reference (3-D windows); global pools over
// plane sizes 1..40, odd planes, 1-D and 3-D inputs; MaxPool also over uint8 and int8. NaN
// and infinity inputs are covered by tests/kernels/x86/pool_test.cc.
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

struct PoolSpec {
  Shape x = {};
  std::vector<int64_t> kernel = {};
  std::vector<int64_t> strides = {};
  std::vector<int64_t> pads = {};
  std::vector<int64_t> dilations = {};
  std::string auto_pad = {};
  bool ceil_mode = false;
  bool include_pad = false;  // AveragePool only
};

KernelCase pool(std::string op, const PoolSpec& s) {
  KernelCase c;
  c.op_type = std::move(op);
  c.opset = 19;  // AveragePool dilations
  c.inputs = {s.x};
  c.attrs.set("kernel_shape", ints_attr(s.kernel));
  int64_t taps = 1;
  for (int64_t k : s.kernel) taps *= k;
  c.depth = taps;
  if (!s.strides.empty()) c.attrs.set("strides", ints_attr(s.strides));
  if (!s.pads.empty()) c.attrs.set("pads", ints_attr(s.pads));
  if (!s.dilations.empty()) c.attrs.set("dilations", ints_attr(s.dilations));
  if (!s.auto_pad.empty()) c.attrs.set("auto_pad", string_attr(s.auto_pad));
  if (s.ceil_mode) c.attrs.set("ceil_mode", int_attr(1));
  if (s.include_pad) c.attrs.set("count_include_pad", int_attr(1));
  c.label = str_cat("X", s.x.str(), " kernel=", str_list(s.kernel), " strides=", str_list(s.strides),
                    " pads=", str_list(s.pads), " dilations=", str_list(s.dilations),
                    s.auto_pad.empty() ? "" : " auto_pad=", s.auto_pad, s.ceil_mode ? " ceil_mode" : "",
                    s.include_pad ? " count_include_pad" : "");
  return c;
}

std::vector<PoolSpec> window_specs(bool average) {
  std::vector<PoolSpec> specs;
  for (int64_t width = 1; width <= 17; ++width) {
    specs.push_back({.x = {1, 2, 3 + width % 4, width}, .kernel = {3, 3}, .strides = {1, 1}, .pads = {1, 1, 1, 1}});
    specs.push_back({.x = {1, 2, 4, 2 * width}, .kernel = {2, 2}, .strides = {2, 2}});
    specs.push_back({.x = {1, 3, 7, 2 * width + 1}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1},
                     .include_pad = average && width % 2 == 0});
    specs.push_back({.x = {1, 1, 5, 3 * width}, .kernel = {3, 2}, .strides = {1, 3}, .pads = {0, 1, 0, 0}});
  }
  // ResNet stem and LeNet-style pools.
  specs.push_back({.x = {1, 8, 112, 112}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}});
  specs.push_back({.x = {1, 4, 8, 8}, .kernel = {2, 2}, .strides = {2, 2}});
  specs.push_back({.x = {2, 3, 9, 35}, .kernel = {2, 2}, .strides = {2, 2}});  // last row and column unread
  // Enough planes to split over two threads.
  specs.push_back({.x = {2, 16, 64, 64}, .kernel = {3, 3}, .strides = {1, 1}, .pads = {1, 1, 1, 1}});
  // ceil_mode: the last window runs past the input (and past the end padding).
  specs.push_back({.x = {1, 2, 8, 10}, .kernel = {3, 3}, .strides = {2, 2}, .ceil_mode = true});
  specs.push_back({.x = {1, 2, 9, 20}, .kernel = {2, 2}, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .ceil_mode = true,
                   .include_pad = average});
  specs.push_back({.x = {1, 3, 11, 12}, .kernel = {3, 3}, .strides = {3, 3}, .pads = {1, 0, 1, 0}, .ceil_mode = true,
                   .include_pad = average});
  // Asymmetric kernels, strides and pads; dilations.
  specs.push_back({.x = {2, 3, 10, 13}, .kernel = {2, 4}, .strides = {3, 1}, .pads = {1, 2, 0, 3},
                   .include_pad = average});
  specs.push_back({.x = {1, 2, 12, 19}, .kernel = {3, 3}, .strides = {1, 1}, .pads = {2, 2, 2, 2},
                   .dilations = {2, 2}});
  specs.push_back({.x = {1, 2, 13, 29}, .kernel = {2, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1},
                   .dilations = {3, 2}, .include_pad = average});
  specs.push_back({.x = {1, 2, 9, 33}, .kernel = {3, 3}, .strides = {2, 4}, .pads = {1, 1, 1, 1},
                   .dilations = {1, 3}});
  specs.push_back({.x = {1, 1, 6, 9}, .kernel = {1, 1}, .strides = {2, 2}});
  specs.push_back({.x = {1, 3, 7, 7}, .kernel = {7, 7}});  // one window per plane
  specs.push_back({.x = {1, 2, 5, 5}, .kernel = {5, 5}, .pads = {4, 4, 4, 4}, .include_pad = average});
  // A window whose dilated taps all miss the input (reference).
  specs.push_back({.x = {1, 1, 3, 2}, .kernel = {1, 2}, .pads = {0, 1, 0, 1}, .dilations = {1, 3}});
  // auto_pad.
  specs.push_back({.x = {1, 2, 7, 11}, .kernel = {3, 3}, .strides = {2, 2}, .auto_pad = "SAME_UPPER",
                   .include_pad = average});
  specs.push_back({.x = {1, 2, 8, 11}, .kernel = {4, 4}, .strides = {3, 3}, .auto_pad = "SAME_LOWER"});
  specs.push_back({.x = {1, 2, 8, 11}, .kernel = {3, 2}, .strides = {2, 1}, .auto_pad = "VALID"});
  // 1-D, and 3-D (reference).
  specs.push_back({.x = {2, 3, 37}, .kernel = {3}, .strides = {2}, .pads = {1, 1}});
  specs.push_back({.x = {1, 2, 9}, .kernel = {4}, .strides = {1}, .pads = {2, 1}, .include_pad = average});
  specs.push_back({.x = {1, 2, 5, 6, 7}, .kernel = {2, 2, 2}, .strides = {2, 2, 2}});
  return specs;
}

KernelCase global_pool(std::string op, const Shape& x) {
  KernelCase c;
  c.op_type = std::move(op);
  c.opset = 1;
  c.inputs = {x};
  c.depth = x.numel(2, x.rank());
  c.label = str_cat("X", x.str());
  return c;
}

std::vector<Shape> global_shapes() {
  std::vector<Shape> shapes;
  for (int64_t size = 1; size <= 40; ++size) shapes.push_back({1, 3, 1, size});
  for (const Shape& s : std::initializer_list<Shape>{{1, 1, 1, 1}, {2, 5, 7, 7}, {1, 7, 14, 14}, {1, 3, 33, 35},
                                                     {1, 64, 64, 64}, {2, 3, 13}, {1, 2, 3, 4, 5}})
    shapes.push_back(s);
  return shapes;
}

}  // namespace

std::vector<KernelCase> max_pool_cases() {
  std::vector<KernelCase> cases;
  for (const PoolSpec& s : window_specs(false)) cases.push_back(pool("MaxPool", s));
  // Opset 8: no ceil_mode (the attribute is ignored), no dilations.
  PoolSpec old{.x = {1, 2, 8, 10}, .kernel = {3, 3}, .strides = {2, 2}};
  KernelCase c = pool("MaxPool", old);
  c.opset = 8;
  cases.push_back(c);
  // uint8 / int8 (MaxPool-12): the same windows, and rows wide enough for several 32-byte
  // vectors of outputs. Integer outputs compare exactly.
  std::vector<PoolSpec> int8_specs = window_specs(false);
  int8_specs.push_back({.x = {1, 3, 5, 200}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}});
  int8_specs.push_back({.x = {1, 2, 4, 131}, .kernel = {2, 3}, .strides = {1, 1}, .dilations = {1, 2}});
  for (DType t : {DType::U8, DType::I8}) {
    for (const PoolSpec& s : int8_specs) {
      KernelCase q = pool("MaxPool", s);
      q.input_dtypes = {t};
      q.label = str_cat(dtype_name(t), " ", q.label);
      cases.push_back(std::move(q));
    }
  }
  return cases;
}

std::vector<KernelCase> average_pool_cases() {
  std::vector<KernelCase> cases;
  for (const PoolSpec& s : window_specs(true)) cases.push_back(pool("AveragePool", s));
  return cases;
}

std::vector<KernelCase> global_max_pool_cases() {
  std::vector<KernelCase> cases;
  for (const Shape& s : global_shapes()) cases.push_back(global_pool("GlobalMaxPool", s));
  return cases;
}

std::vector<KernelCase> global_average_pool_cases() {
  std::vector<KernelCase> cases;
  for (const Shape& s : global_shapes()) cases.push_back(global_pool("GlobalAveragePool", s));
  return cases;
}

}  // namespace ignis::kernel_cases
