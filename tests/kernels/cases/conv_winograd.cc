// SPDX-License-Identifier: Apache-2.0
// Conv and FusedConv cases that take the Winograd F(4x4, 3x3) path of the AVX-512 and AVX2 Conv
// kernels (src/kernels/x86/conv_winograd.h: 3x3, stride 1, 16 to 256 channels on each side, at
// least 36 output tiles on AVX-512, 16 on AVX2): output widths and heights that end inside a 4x4 tile (1, 3, 5, 7, 9, 13, 30,
// 56), rows of more than 16 tiles and more than 64 input columns, pads 0/1/2 and asymmetric,
// SAME padding, channel counts that are not multiples of 8 or 16, depth past one GEMM block,
// batch 2 (tile ranges across images), 14x14 images just below the tile limit, and through FusedConv the residual and every
// activation. Then the outputs F(2x2, 3x3) takes when the plan's shapes are known (14x14 and
// other images from 25 2x2 tiles up to the F(4x4) limit, counted over the batch). On other kernels these are ordinary
// 3x3 convolutions.
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

struct WinogradSpec {
  Shape x = {};  // [N, C, H, W]
  int64_t m = 1;
  std::vector<int64_t> pads = {};
  std::string auto_pad = {};
  bool bias = true;
};

KernelCase winograd_conv(const WinogradSpec& s) {
  KernelCase c;
  c.op_type = "Conv";
  c.opset = 11;
  const Shape w{s.m, s.x[1], 3, 3};
  c.inputs = {s.x, w};
  if (s.bias) c.inputs.push_back(Shape{s.m});
  c.weight_inputs = {1};
  // Winograd F(4x4, 3x3) sums 36 * cin transformed products whose transforms scale values by
  // up to ~10 on the way in and ~100 on the way out, so its rounding is that of a much deeper
  // sum: 8x the direct-sum tolerance. That matters where an activation shrinks the outputs far
  // below the sums they came from (Clip to [0, 0.5] of sums up to ~20 needed 2.2x the plain
  // tolerance).
  c.depth = s.x[1] * 9;
  c.error_scale = 8.0;
  if (!s.pads.empty()) c.attrs.set("pads", ints_attr(s.pads));
  if (!s.auto_pad.empty()) c.attrs.set("auto_pad", string_attr(s.auto_pad));
  c.label = str_cat("X", s.x.str(), " W", w.str(), " pads=", str_list(s.pads), s.auto_pad.empty() ? "" : " auto_pad=",
                    s.auto_pad, s.bias ? " bias" : " no bias");
  return c;
}

}  // namespace

std::vector<KernelCase> conv_winograd_cases() {
  const WinogradSpec specs[] = {
      {.x = {1, 32, 24, 24}, .m = 32, .pads = {1, 1, 1, 1}},
      {.x = {1, 20, 25, 23}, .m = 24, .pads = {1, 1, 1, 1}},               // 42 tiles, 20 -> 24 channels
      {.x = {2, 16, 23, 22}, .m = 17, .pads = {1, 1, 1, 1}},               // 36 tiles per image
      {.x = {1, 256, 14, 14}, .m = 256, .pads = {1, 1, 1, 1}},             // 16 tiles: the GEMM path
      {.x = {1, 33, 141, 1}, .m = 40, .pads = {1, 1, 1, 1}},              // one output column
      {.x = {1, 40, 71, 5}, .m = 36, .pads = {1, 1, 1, 1}, .bias = false},  // 5 columns: 2 tiles, 1 used
      {.x = {1, 37, 47, 7}, .m = 45, .pads = {2, 2, 2, 2}},               // 49 x 9 output
      {.x = {1, 35, 143, 5}, .m = 34, .pads = {0, 0, 0, 0}},              // 141 x 3 output, no padding
      {.x = {2, 48, 13, 56}, .m = 33, .pads = {1, 1, 1, 1}},              // 13 rows, batch 2
      {.x = {1, 35, 30, 31}, .m = 50, .pads = {0, 1, 2, 0}},              // asymmetric pads
      {.x = {1, 32, 25, 27}, .m = 32, .auto_pad = "SAME_UPPER"},
      {.x = {1, 32, 8, 150}, .m = 32, .pads = {1, 1, 1, 1}},              // 38 tiles a row, 150 columns
      {.x = {1, 64, 56, 56}, .m = 64, .pads = {1, 1, 1, 1}},              // ResNet-50 stage 1
      {.x = {2, 96, 28, 28}, .m = 128, .pads = {1, 1, 1, 1}, .bias = false},
      {.x = {1, 256, 24, 24}, .m = 40, .pads = {1, 1, 1, 1}},             // depth 2304: two GEMM slices
      // F(2x2, 3x3) (with the plan's shapes): 49, 25, 42 (odd edges), 100 tiles, rows of 17
      // tiles, no padding, asymmetric pads with batch 2, depth past one slice, several blocks.
      {.x = {1, 64, 14, 14}, .m = 64, .pads = {1, 1, 1, 1}},
      {.x = {1, 20, 10, 10}, .m = 24, .pads = {1, 1, 1, 1}},
      {.x = {1, 33, 11, 13}, .m = 17, .pads = {1, 1, 1, 1}},
      {.x = {1, 16, 20, 20}, .m = 16, .pads = {1, 1, 1, 1}},
      {.x = {1, 16, 12, 34}, .m = 20, .pads = {1, 1, 1, 1}},
      {.x = {1, 24, 16, 16}, .m = 24, .pads = {0, 0, 0, 0}, .bias = false},
      {.x = {2, 32, 14, 14}, .m = 40, .pads = {0, 1, 2, 0}},
      {.x = {1, 300, 14, 14}, .m = 33, .pads = {1, 1, 1, 1}},
      {.x = {6, 16, 14, 14}, .m = 16, .pads = {1, 1, 1, 1}},
      // F(2x2) by the batch's tiles: 16 a 7x7 image, 9 an image of 5x6, over 2 to 4 images.
      {.x = {4, 32, 7, 7}, .m = 40, .pads = {1, 1, 1, 1}},
      {.x = {3, 17, 5, 6}, .m = 16, .pads = {1, 1, 1, 1}, .bias = false},
      {.x = {2, 24, 7, 7}, .m = 24, .pads = {0, 1, 2, 0}},
  };
  std::vector<KernelCase> cases;
  for (const WinogradSpec& s : specs) cases.push_back(winograd_conv(s));
  return cases;
}

std::vector<KernelCase> fused_conv_winograd_cases() {
  const WinogradSpec specs[] = {
      {.x = {1, 32, 24, 26}, .m = 36, .pads = {1, 1, 1, 1}},
      {.x = {2, 40, 21, 23}, .m = 32, .pads = {1, 1, 1, 1}},
      {.x = {1, 32, 14, 14}, .m = 36, .pads = {1, 1, 1, 1}},  // F(2x2, 3x3)
      {.x = {2, 40, 10, 12}, .m = 32, .pads = {1, 1, 1, 1}},  // F(2x2, 3x3), 30 tiles per image
  };
  std::vector<KernelCase> cases;
  for (const auto& act : fused_activations()) {
    for (const WinogradSpec& spec : specs) {
      for (bool residual : {false, true}) {
        KernelCase c = winograd_conv(spec);
        c.domain = "ai.ignis";
        c.op_type = "FusedConv";
        c.opset = 1;
        if (residual) c.inputs.push_back(Shape{spec.x[0], spec.m, spec.x[2], spec.x[3]});  // pads 1: same size
        set_activation(c.attrs, act);
        c.label += str_cat(residual ? " residual " : " ", activation_label(act));
        cases.push_back(c);
      }
    }
  }
  return cases;
}

}  // namespace ignis::kernel_cases
