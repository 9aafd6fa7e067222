// SPDX-License-Identifier: Apache-2.0
// ConvTranspose cases: the stride == kernel form (2x2 stride 2 as UNet/FPN decoders use it,
// 3x3 stride 3, 1x2 stride 1x2; widths around the 8-input vectors, one output channel, input
// rows enough for several chunks) and the general col2im path (stride 1 and 2 with pads,
// output_padding, dilations, asymmetric strides, output_shape, auto_pad, groups), 1-D
// convolutions, a batch of two, and 3-D convolutions (handed back to the reference).
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

struct ConvTransposeSpec {
  Shape x = {};                      // [N, C, spatial...]
  int64_t m = 1;                     // output channels
  std::vector<int64_t> kernel = {};  // spatial kernel extents
  int64_t group = 1;
  std::vector<int64_t> strides = {};
  std::vector<int64_t> dilations = {};
  std::vector<int64_t> pads = {};
  std::vector<int64_t> output_padding = {};
  std::vector<int64_t> output_shape = {};
  std::string auto_pad = {};
  bool bias = true;
};

KernelCase conv_transpose(const ConvTransposeSpec& s) {
  KernelCase c;
  c.op_type = "ConvTranspose";
  c.opset = 11;
  Shape w{s.x[1], s.m / s.group};
  int64_t taps = 1;
  for (int64_t k : s.kernel) {
    w.push_back(k);
    taps *= k;
  }
  c.inputs = {s.x, w};
  if (s.bias) c.inputs.push_back(Shape{s.m});
  c.weight_inputs = {1};
  c.depth = s.x[1] / s.group * taps;
  if (s.group != 1) c.attrs.set("group", int_attr(s.group));
  if (!s.strides.empty()) c.attrs.set("strides", ints_attr(s.strides));
  if (!s.pads.empty()) c.attrs.set("pads", ints_attr(s.pads));
  if (!s.dilations.empty()) c.attrs.set("dilations", ints_attr(s.dilations));
  if (!s.output_padding.empty()) c.attrs.set("output_padding", ints_attr(s.output_padding));
  if (!s.output_shape.empty()) c.attrs.set("output_shape", ints_attr(s.output_shape));
  if (!s.auto_pad.empty()) c.attrs.set("auto_pad", string_attr(s.auto_pad));
  c.label = str_cat("X", s.x.str(), " W", w.str(), " group=", s.group, " strides=", str_list(s.strides),
                    " pads=", str_list(s.pads), " dilations=", str_list(s.dilations),
                    " output_padding=", str_list(s.output_padding), " output_shape=", str_list(s.output_shape),
                    s.auto_pad.empty() ? "" : " auto_pad=", s.auto_pad, s.bias ? " bias" : " no bias");
  return c;
}

}  // namespace

std::vector<KernelCase> conv_transpose_cases() {
  std::vector<KernelCase> cases;
  // Stride == kernel: every output one tap.
  for (int64_t width = 1; width <= 17; width += 4)
    cases.push_back(conv_transpose({.x = {1, 8, 3, width}, .m = 6, .kernel = {2, 2}, .strides = {2, 2}}));
  cases.push_back(conv_transpose({.x = {1, 32, 12, 12}, .m = 16, .kernel = {2, 2}, .strides = {2, 2}}));
  cases.push_back(conv_transpose({.x = {2, 16, 20, 20}, .m = 1, .kernel = {2, 2}, .strides = {2, 2}}));
  cases.push_back(conv_transpose({.x = {1, 5, 7, 9}, .m = 3, .kernel = {3, 3}, .strides = {3, 3}, .bias = false}));
  cases.push_back(conv_transpose({.x = {1, 4, 6, 11}, .m = 5, .kernel = {1, 2}, .strides = {1, 2}}));
  cases.push_back(conv_transpose({.x = {1, 4, 64, 80}, .m = 8, .kernel = {2, 2}, .strides = {2, 2}}));  // chunks
  // General geometry: overlapping taps, pads, output_padding, dilations.
  cases.push_back(conv_transpose({.x = {1, 6, 5, 7}, .m = 4, .kernel = {3, 3}}));
  cases.push_back(conv_transpose({.x = {1, 6, 5, 7}, .m = 4, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));
  cases.push_back(conv_transpose({.x = {1, 8, 9, 10}, .m = 5, .kernel = {3, 3}, .strides = {2, 2},
                                  .pads = {1, 1, 1, 1}, .output_padding = {1, 1}}));
  cases.push_back(conv_transpose({.x = {1, 8, 9, 10}, .m = 5, .kernel = {4, 4}, .strides = {2, 2},
                                  .pads = {1, 1, 1, 1}, .bias = false}));
  cases.push_back(conv_transpose({.x = {1, 3, 6, 7}, .m = 2, .kernel = {3, 2}, .strides = {1, 3},
                                  .dilations = {2, 1}, .pads = {0, 1, 2, 0}}));
  cases.push_back(conv_transpose({.x = {1, 4, 5, 5}, .m = 3, .kernel = {2, 2}, .strides = {2, 2},
                                  .output_padding = {1, 1}}));  // stride == kernel plus a bias-only edge
  cases.push_back(conv_transpose({.x = {1, 4, 5, 6}, .m = 3, .kernel = {2, 2}, .strides = {2, 2},
                                  .pads = {1, 0, 0, 1}}));
  cases.push_back(conv_transpose({.x = {1, 4, 6, 6}, .m = 4, .kernel = {3, 3}, .strides = {2, 2},
                                  .output_shape = {12, 13}}));
  cases.push_back(conv_transpose({.x = {1, 4, 6, 7}, .m = 4, .kernel = {3, 3}, .strides = {2, 2},
                                  .auto_pad = "SAME_UPPER"}));
  cases.push_back(conv_transpose({.x = {1, 32, 24, 24}, .m = 16, .kernel = {4, 4}, .strides = {2, 2},
                                  .pads = {1, 1, 1, 1}}));
  // Groups, 1-D, a batch, 3-D (reference).
  cases.push_back(conv_transpose({.x = {1, 6, 5, 6}, .m = 4, .kernel = {3, 3}, .group = 2, .strides = {2, 2}}));
  cases.push_back(conv_transpose({.x = {2, 4, 5, 6}, .m = 4, .kernel = {2, 2}, .group = 4, .strides = {2, 2}}));
  cases.push_back(conv_transpose({.x = {2, 5, 13}, .m = 3, .kernel = {4}, .strides = {2}, .pads = {1, 1}}));
  cases.push_back(conv_transpose({.x = {1, 5, 13}, .m = 3, .kernel = {2}, .strides = {2}}));
  cases.push_back(conv_transpose({.x = {1, 2, 3, 4, 5}, .m = 2, .kernel = {2, 2, 2}, .strides = {2, 2, 2}}));
  return cases;
}

}  // namespace ignis::kernel_cases
