// SPDX-License-Identifier: Apache-2.0
// Conv cases: pointwise and im2col GEMM paths (output widths around the 24- and 32-column panels,
// strides, asymmetric and SAME padding, dilations, groups, large channel depth), depthwise
// 3x3/5x5/other kernels at strides 1 and 2 with channel multipliers and widths around the
// 8- and 32-column vector blocks, plus the shapes handed back to the reference kernel
// (dilated depthwise, 3-D) and 1-D convolutions.
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

struct ConvSpec {
  Shape x = {};                      // [N, C, spatial...]
  int64_t m = 1;                     // output channels
  std::vector<int64_t> kernel = {};  // spatial kernel extents
  int64_t group = 1;
  std::vector<int64_t> strides = {};
  std::vector<int64_t> dilations = {};
  std::vector<int64_t> pads = {};
  std::string auto_pad = {};
  bool bias = true;
};

KernelCase conv(const ConvSpec& s) {
  KernelCase c;
  c.op_type = "Conv";
  c.opset = 11;
  Shape w{s.m, s.x[1] / s.group};
  int64_t taps = 1;
  for (int64_t k : s.kernel) {
    w.push_back(k);
    taps *= k;
  }
  c.inputs = {s.x, w};
  if (s.bias) c.inputs.push_back(Shape{s.m});
  c.weight_inputs = {1};
  c.depth = w[1] * taps;
  if (s.group != 1) c.attrs.set("group", int_attr(s.group));
  if (!s.strides.empty()) c.attrs.set("strides", ints_attr(s.strides));
  if (!s.pads.empty()) c.attrs.set("pads", ints_attr(s.pads));
  if (!s.dilations.empty()) c.attrs.set("dilations", ints_attr(s.dilations));
  if (!s.auto_pad.empty()) c.attrs.set("auto_pad", string_attr(s.auto_pad));
  c.label = str_cat("X", s.x.str(), " W", w.str(), " group=", s.group, " strides=", str_list(s.strides),
                    " pads=", str_list(s.pads), " dilations=", str_list(s.dilations),
                    s.auto_pad.empty() ? "" : " auto_pad=", s.auto_pad, s.bias ? " bias" : " no bias");
  return c;
}

}  // namespace

std::vector<KernelCase> conv_cases() {
  std::vector<KernelCase> cases;
  // Pointwise (X read directly as the GEMM B operand).
  cases.push_back(conv({.x = {1, 16, 8, 8}, .m = 24, .kernel = {1, 1}}));
  cases.push_back(conv({.x = {2, 7, 5, 13}, .m = 13, .kernel = {1, 1}, .bias = false}));
  cases.push_back(conv({.x = {1, 3, 1, 1}, .m = 1, .kernel = {1, 1}}));
  // 1x1 strided (im2col path) and ResNet-like 3x3.
  cases.push_back(conv({.x = {1, 32, 14, 14}, .m = 20, .kernel = {1, 1}, .strides = {2, 2}}));
  cases.push_back(conv({.x = {1, 16, 15, 17}, .m = 16, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));
  cases.push_back(conv({.x = {2, 5, 9, 31}, .m = 7, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = false}));
  cases.push_back(conv({.x = {1, 8, 16, 16}, .m = 12, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}));
  cases.push_back(conv({.x = {1, 3, 33, 35}, .m = 8, .kernel = {7, 7}, .strides = {2, 2}, .pads = {3, 3, 3, 3}}));
  cases.push_back(conv({.x = {1, 300, 6, 6}, .m = 10, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));  // depth 2700
  cases.push_back(conv({.x = {1, 4, 10, 12}, .m = 5, .kernel = {3, 2}, .strides = {1, 3}, .pads = {0, 2, 1, 0}}));
  cases.push_back(conv({.x = {1, 4, 11, 11}, .m = 6, .kernel = {3, 3}, .dilations = {2, 2}, .pads = {2, 2, 2, 2}}));
  cases.push_back(conv({.x = {1, 3, 12, 9}, .m = 4, .kernel = {5, 5}, .strides = {3, 2}, .dilations = {1, 2},
                        .pads = {2, 1, 3, 4}}));
  cases.push_back(conv({.x = {1, 6, 7, 7}, .m = 6, .kernel = {3, 3}, .auto_pad = "SAME_UPPER"}));
  cases.push_back(conv({.x = {1, 6, 8, 8}, .m = 6, .kernel = {4, 4}, .strides = {2, 2}, .auto_pad = "SAME_LOWER"}));
  cases.push_back(conv({.x = {1, 6, 9, 9}, .m = 3, .kernel = {2, 2}, .auto_pad = "VALID"}));
  cases.push_back(conv({.x = {1, 2, 2, 2}, .m = 3, .kernel = {3, 3}, .pads = {2, 2, 2, 2}}));  // mostly padding
  cases.push_back(conv({.x = {1, 1, 28, 28}, .m = 8, .kernel = {5, 5}}));
  cases.push_back(conv({.x = {1, 16, 40, 40}, .m = 16, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));  // 1600 columns
  cases.push_back(conv({.x = {1, 8, 23, 25}, .m = 9, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));  // 575 columns
  // Squeeze-excitation 1x1 convolutions of 1x1 images (the narrow GEMM path), one and two images.
  cases.push_back(conv({.x = {1, 300, 1, 1}, .m = 20, .kernel = {1, 1}}));
  cases.push_back(conv({.x = {2, 40, 1, 2}, .m = 9, .kernel = {1, 1}}));
  // Around the AVX-512 8x32 tile, its 256-deep slices and 512-column packing chunks.
  cases.push_back(conv({.x = {1, 29, 3, 11}, .m = 17, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));  // depth 261, 33 cols
  cases.push_back(conv({.x = {1, 32, 1, 31}, .m = 9, .kernel = {1, 1}}));                           // 31 columns
  cases.push_back(conv({.x = {1, 7, 19, 27}, .m = 8, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));  // 513 columns
  // Strided im2col packing: 8-column groups loaded directly, at padding edges, running into the
  // next output row (outputs narrower than 8 too) and past the block's end; stems with 1, 3, 5
  // channels, asymmetric pads 0..3, dilation with stride, strides 3 and 4, depth across the
  // 256- and 384-deep slices, columns across the 512-column blocks.
  cases.push_back(conv({.x = {1, 3, 37, 41}, .m = 8, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}));
  cases.push_back(conv({.x = {1, 3, 35, 35}, .m = 16, .kernel = {7, 7}, .strides = {2, 2}, .pads = {3, 2, 1, 0}}));
  cases.push_back(conv({.x = {1, 1, 29, 30}, .m = 4, .kernel = {5, 5}, .strides = {2, 2}, .pads = {2, 0, 1, 3}}));
  cases.push_back(conv({.x = {1, 5, 19, 23}, .m = 6, .kernel = {3, 3}, .strides = {3, 3}, .pads = {0, 1, 2, 3}}));
  cases.push_back(conv({.x = {1, 4, 21, 22}, .m = 5, .kernel = {3, 3}, .strides = {2, 2}, .dilations = {2, 2},
                        .pads = {2, 2, 2, 2}}));
  cases.push_back(conv({.x = {1, 50, 13, 15}, .m = 9, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}));
  cases.push_back(conv({.x = {1, 3, 70, 66}, .m = 8, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1},
                        .bias = false}));  // 35 x 33 = 1155 columns
  cases.push_back(conv({.x = {2, 6, 9, 11}, .m = 7, .kernel = {3, 3}, .strides = {2, 2}, .pads = {0, 1, 0, 1}}));
  cases.push_back(conv({.x = {1, 4, 9, 3}, .m = 3, .kernel = {3, 3}, .strides = {2, 2}}));  // one output column
  cases.push_back(conv({.x = {1, 20, 15, 13}, .m = 12, .kernel = {1, 1}, .strides = {2, 2}}));
  cases.push_back(conv({.x = {1, 2, 4, 5}, .m = 3, .kernel = {3, 3}, .strides = {2, 2}, .pads = {3, 0, 2, 3}}));
  cases.push_back(conv({.x = {1, 8, 48, 64}, .m = 4, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}));
  cases.push_back(conv({.x = {1, 3, 31, 29}, .m = 5, .kernel = {5, 5}, .strides = {3, 3}, .pads = {2, 2, 2, 2}}));
  cases.push_back(conv({.x = {1, 2, 17, 19}, .m = 3, .kernel = {4, 4}, .strides = {4, 4}, .pads = {1, 0, 0, 2}}));
  cases.push_back(conv({.x = {1, 7, 40, 45}, .m = 10, .kernel = {3, 3}, .strides = {1, 2}, .pads = {1, 1, 1, 1}}));
  // Few output positions against many channels: the transposed formulation when the plan's
  // shapes are known (x86 AVX-512). 8-row position tiles with tails, 32-channel panels
  // whole and split, depth across 256-deep slices, positions across the 144-row blocks,
  // strides, pointwise with two images, 1-D.
  cases.push_back(conv({.x = {1, 64, 7, 7}, .m = 64, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));
  cases.push_back(conv({.x = {2, 400, 7, 7}, .m = 64, .kernel = {1, 1}}));
  cases.push_back(conv({.x = {1, 64, 9, 9}, .m = 96, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = false}));
  cases.push_back(conv({.x = {1, 300, 4, 4}, .m = 32, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));  // depth 2700
  cases.push_back(conv({.x = {1, 64, 15, 15}, .m = 96, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));  // 225 rows
  cases.push_back(conv({.x = {1, 32, 14, 14}, .m = 64, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}));
  cases.push_back(conv({.x = {2, 512, 13, 13}, .m = 96, .kernel = {1, 1}, .strides = {2, 2}}));
  cases.push_back(conv({.x = {1, 128, 20}, .m = 64, .kernel = {3}, .pads = {1, 1}}));
  cases.push_back(conv({.x = {1, 64, 3, 3}, .m = 200, .kernel = {1, 1}}));
  cases.push_back(conv({.x = {1, 512, 15, 15}, .m = 96, .kernel = {1, 1}}));  // 225 rows, pointwise
  // Images spread over the threads (even counts, or many): 8 images of a padded 3x3; 3 images
  // split per image instead.
  cases.push_back(conv({.x = {8, 40, 6, 6}, .m = 48, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));
  cases.push_back(conv({.x = {3, 64, 9, 9}, .m = 40, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}));
  // Grouped, not depthwise.
  cases.push_back(conv({.x = {1, 8, 9, 9}, .m = 12, .kernel = {3, 3}, .group = 2, .pads = {1, 1, 1, 1}}));
  cases.push_back(conv({.x = {2, 12, 6, 7}, .m = 12, .kernel = {1, 1}, .group = 3}));
  cases.push_back(conv({.x = {1, 32, 5, 5}, .m = 64, .kernel = {3, 3}, .group = 8, .strides = {2, 2},
                        .pads = {1, 1, 1, 1}}));
  // Depthwise: widths around the 8/32-column blocks, strides 1 and 2, multipliers.
  for (int64_t k : {3, 5})
    for (int64_t stride : {1, 2})
      for (int64_t width : {1, 7, 8, 9, 31, 33, 67}) {
        const int64_t p = k / 2;
        cases.push_back(conv({.x = {1, 4, 5 + width % 7, width}, .m = 4, .kernel = {k, k}, .group = 4,
                              .strides = {stride, stride}, .pads = {p, p, p, p}, .bias = width % 2 == 1}));
      }
  cases.push_back(conv({.x = {2, 3, 12, 12}, .m = 6, .kernel = {3, 3}, .group = 3, .pads = {1, 1, 1, 1}}));
  cases.push_back(conv({.x = {1, 5, 10, 11}, .m = 5, .kernel = {3, 3}, .group = 5}));  // no padding
  cases.push_back(conv({.x = {1, 4, 9, 40}, .m = 4, .kernel = {2, 4}, .group = 4, .pads = {0, 1, 1, 2}}));
  cases.push_back(conv({.x = {1, 3, 20, 20}, .m = 3, .kernel = {7, 7}, .group = 3, .strides = {2, 1},
                        .pads = {3, 3, 3, 3}}));
  cases.push_back(conv({.x = {1, 4, 14, 14}, .m = 4, .kernel = {3, 3}, .group = 4, .strides = {2, 2},
                        .auto_pad = "SAME_UPPER"}));
  cases.push_back(conv({.x = {1, 64, 14, 14}, .m = 64, .kernel = {3, 3}, .group = 64, .pads = {1, 1, 1, 1}}));
  // Depthwise the direct kernel hands back to the reference: dilated, stride 3, 9x9.
  cases.push_back(conv({.x = {1, 4, 12, 12}, .m = 4, .kernel = {3, 3}, .group = 4, .dilations = {2, 2},
                        .pads = {2, 2, 2, 2}}));
  cases.push_back(conv({.x = {1, 4, 12, 12}, .m = 4, .kernel = {3, 3}, .group = 4, .strides = {3, 3}}));
  cases.push_back(conv({.x = {1, 2, 12, 12}, .m = 2, .kernel = {9, 9}, .group = 2, .pads = {4, 4, 4, 4}}));
  // 1-D and 3-D.
  cases.push_back(conv({.x = {2, 6, 37}, .m = 5, .kernel = {3}, .strides = {2}, .pads = {1, 1}}));
  cases.push_back(conv({.x = {1, 4, 20}, .m = 4, .kernel = {5}, .group = 4, .pads = {2, 2}}));
  cases.push_back(conv({.x = {1, 3, 5, 6, 7}, .m = 4, .kernel = {3, 3, 3}, .pads = {1, 1, 1, 1, 1, 1}}));
  return cases;
}

std::vector<KernelCase> fused_conv_cases() {
  // Each path of the Conv kernel (im2col GEMM, pointwise, grouped, depthwise at both strides,
  // the reference fallback for 3-D, transposed) with the residual Z and every activation.
  const ConvSpec specs[] = {
      {.x = {1, 6, 9, 11}, .m = 10, .kernel = {3, 3}, .pads = {1, 1, 1, 1}},
      {.x = {2, 8, 5, 7}, .m = 26, .kernel = {1, 1}},
      {.x = {1, 8, 6, 6}, .m = 4, .kernel = {3, 3}, .group = 2, .strides = {2, 2}, .pads = {1, 1, 1, 1}},
      {.x = {1, 5, 12, 35}, .m = 5, .kernel = {3, 3}, .group = 5, .pads = {1, 1, 1, 1}},
      {.x = {1, 3, 13, 13}, .m = 3, .kernel = {5, 5}, .group = 3, .strides = {2, 2}, .pads = {2, 2, 2, 2}},
      {.x = {1, 2, 4, 5, 6}, .m = 3, .kernel = {3, 3, 3}, .pads = {1, 1, 1, 1, 1, 1}},
      // The transposed formulation (with the plan's shapes): 35 positions, 64 channels; 16
      // positions, 33 channels (one in the last panel), strided 1x1, two images.
      {.x = {1, 64, 5, 7}, .m = 64, .kernel = {3, 3}, .pads = {1, 1, 1, 1}},
      {.x = {2, 256, 7, 7}, .m = 33, .kernel = {1, 1}, .strides = {2, 2}},
  };
  std::vector<KernelCase> cases;
  for (const auto& act : fused_activations()) {
    for (const ConvSpec& spec : specs) {
      for (bool residual : {false, true}) {
        KernelCase c = conv(spec);
        c.domain = "ai.ignis";
        c.op_type = "FusedConv";
        c.opset = 1;
        if (residual) {
          // Z has the convolution's output shape (all specs here keep it computable).
          Shape y{spec.x[0], spec.m};
          for (size_t i = 0; i < spec.kernel.size(); ++i) {
            const int64_t pad = spec.pads.empty() ? 0 : spec.pads[i] + spec.pads[i + spec.kernel.size()];
            const int64_t stride = spec.strides.empty() ? 1 : spec.strides[i];
            y.push_back((spec.x[2 + static_cast<int>(i)] + pad - spec.kernel[i]) / stride + 1);
          }
          c.inputs.push_back(y);
        }
        set_activation(c.attrs, act);
        c.label += str_cat(residual ? " residual " : " ", activation_label(act));
        cases.push_back(c);
      }
    }
  }
  return cases;
}

}  // namespace ignis::kernel_cases
