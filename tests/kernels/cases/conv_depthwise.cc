// SPDX-License-Identifier: Apache-2.0
// Depthwise Conv and FusedConv cases for the direct depthwise kernels (conv_avx2.cc and
// conv_depthwise_avx512.cc): 3x3 and 5x5 at strides 1 and 2 on square and oblong planes of
// 1 to 113 columns (around the 8- and 16-lane vectors and their multiples), asymmetric and
// oversized pads, mixed strides, other kernel shapes (1x1, also as a per-channel scale; 2x2,
// 1x3, 3x5, 7x7), channel
// multipliers, batches, 1-D, and dilation (handed to the reference kernel); every plane up to
// 15x15 with 1 to 33 channels (the AVX-512 kernel's 16-channel units); through FusedConv the
// residual and every activation.
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

struct DepthwiseSpec {
  Shape x = {};  // [N, C, spatial...]
  int64_t multiplier = 1;
  std::vector<int64_t> kernel = {};
  std::vector<int64_t> strides = {};
  std::vector<int64_t> pads = {};
  std::vector<int64_t> dilations = {};
  bool bias = true;
};

KernelCase depthwise(const DepthwiseSpec& s) {
  KernelCase c;
  c.op_type = "Conv";
  c.opset = 11;
  const int64_t channels = s.x[1], m = channels * s.multiplier;
  Shape w{m, 1};
  int64_t taps = 1;
  for (int64_t k : s.kernel) {
    w.push_back(k);
    taps *= k;
  }
  c.inputs = {s.x, w};
  if (s.bias) c.inputs.push_back(Shape{m});
  c.weight_inputs = {1};
  c.depth = taps;
  c.attrs.set("group", int_attr(channels));
  if (!s.strides.empty()) c.attrs.set("strides", ints_attr(s.strides));
  if (!s.pads.empty()) c.attrs.set("pads", ints_attr(s.pads));
  if (!s.dilations.empty()) c.attrs.set("dilations", ints_attr(s.dilations));
  c.label = str_cat("X", s.x.str(), " W", w.str(), " group=", channels, " strides=", str_list(s.strides),
                    " pads=", str_list(s.pads), " dilations=", str_list(s.dilations), s.bias ? " bias" : " no bias");
  return c;
}

// The output shape of a spec (no auto_pad).
Shape output_shape(const DepthwiseSpec& s) {
  Shape y{s.x[0], s.x[1] * s.multiplier};
  const size_t rank = s.kernel.size();
  for (size_t i = 0; i < rank; ++i) {
    const int64_t pad = s.pads.empty() ? 0 : s.pads[i] + s.pads[i + rank];
    const int64_t stride = s.strides.empty() ? 1 : s.strides[i];
    const int64_t dilation = s.dilations.empty() ? 1 : s.dilations[i];
    y.push_back((s.x[2 + static_cast<int>(i)] + pad - dilation * (s.kernel[i] - 1) - 1) / stride + 1);
  }
  return y;
}

}  // namespace

std::vector<KernelCase> conv_depthwise_cases() {
  std::vector<KernelCase> cases;
  // Square planes at both strides; "same" padding.
  for (int64_t k : {3, 5})
    for (int64_t stride : {1, 2})
      for (int64_t size : {1, 2, 7, 15, 17, 33, 113}) {
        const int64_t p = k / 2;
        cases.push_back(depthwise({.x = {1, size > 50 ? 2 : 3, size, size}, .kernel = {k, k},
                                   .strides = {stride, stride}, .pads = {p, p, p, p}, .bias = size % 2 == 1}));
      }
  // Channels in lanes (the AVX-512 kernel's path for outputs up to 56x56, in units of 16
  // channels): every plane from 1x1 to 15x15 at both strides, channel counts around the unit
  // (1, 15, 16, 17, 33), symmetric and asymmetric pads.
  {
    const int64_t channel_counts[] = {1, 15, 16, 17, 33};
    int i = 0;
    for (int64_t k : {3, 5})
      for (int64_t stride : {1, 2})
        for (int64_t size = 1; size <= 15; ++size, ++i) {
          const int64_t p = k / 2;
          const std::vector<int64_t> pads = i % 2 ? std::vector<int64_t>{p - 1, p, p + 1, p + 1}
                                                  : std::vector<int64_t>{p, p, p, p};
          cases.push_back(depthwise({.x = {1, channel_counts[i % 5], size, size + i % 3}, .kernel = {k, k},
                                     .strides = {stride, stride}, .pads = pads, .bias = i % 4 != 3}));
        }
    // Units spanning images, with channel multipliers.
    cases.push_back(depthwise({.x = {2, 17, 6, 7}, .multiplier = 2, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));
    cases.push_back(depthwise({.x = {3, 5, 9, 9}, .multiplier = 3, .kernel = {5, 5}, .strides = {2, 2},
                               .pads = {2, 1, 2, 2}}));
    // Output planes just past 56x56, on the phase-plane path.
    cases.push_back(depthwise({.x = {1, 2, 57, 61}, .kernel = {3, 3}, .pads = {0, 1, 2, 0}}));
    cases.push_back(depthwise({.x = {1, 1, 130, 120}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 0, 0, 1}}));
    cases.push_back(depthwise({.x = {1, 2, 60, 60}, .kernel = {5, 5}, .pads = {2, 1, 2, 3}}));
  }
  // Oblong planes: one row, one column, widths around 16 and 32 lanes.
  cases.push_back(depthwise({.x = {1, 2, 1, 40}, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));
  cases.push_back(depthwise({.x = {1, 2, 40, 1}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}));
  cases.push_back(depthwise({.x = {1, 3, 9, 16}, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));
  cases.push_back(depthwise({.x = {1, 3, 6, 31}, .kernel = {5, 5}, .pads = {2, 2, 2, 2}}));
  cases.push_back(depthwise({.x = {1, 3, 11, 64}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}));
  cases.push_back(depthwise({.x = {1, 2, 5, 130}, .kernel = {5, 5}, .strides = {2, 2}, .pads = {2, 2, 2, 2}}));
  // Asymmetric, missing and oversized pads ([top, left, bottom, right]).
  cases.push_back(depthwise({.x = {1, 3, 13, 17}, .kernel = {3, 3}, .pads = {0, 1, 2, 0}}));
  cases.push_back(depthwise({.x = {1, 3, 13, 17}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 0, 0, 1}}));
  cases.push_back(depthwise({.x = {1, 3, 16, 16}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {0, 0, 1, 1}}));
  cases.push_back(depthwise({.x = {1, 3, 12, 19}, .kernel = {5, 5}, .pads = {2, 1, 0, 3}}));
  cases.push_back(depthwise({.x = {1, 3, 21, 14}, .kernel = {5, 5}, .strides = {2, 2}, .pads = {1, 2, 2, 1}}));
  cases.push_back(depthwise({.x = {1, 2, 10, 11}, .kernel = {3, 3}, .pads = {2, 2, 2, 2}}));
  cases.push_back(depthwise({.x = {1, 2, 10, 11}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {2, 3, 2, 3}}));
  cases.push_back(depthwise({.x = {1, 3, 9, 9}, .kernel = {3, 3}, .bias = false}));  // no padding
  cases.push_back(depthwise({.x = {1, 3, 2, 2}, .kernel = {5, 5}, .pads = {2, 2, 2, 2}}));  // mostly padding
  // Mixed strides.
  cases.push_back(depthwise({.x = {1, 3, 15, 18}, .kernel = {3, 3}, .strides = {1, 2}, .pads = {1, 1, 1, 1}}));
  cases.push_back(depthwise({.x = {1, 3, 18, 15}, .kernel = {3, 3}, .strides = {2, 1}, .pads = {1, 1, 1, 1}}));
  cases.push_back(depthwise({.x = {1, 2, 17, 35}, .kernel = {5, 5}, .strides = {2, 1}, .pads = {2, 2, 2, 2}}));
  // Other kernel shapes.
  cases.push_back(depthwise({.x = {1, 3, 9, 21}, .kernel = {1, 1}}));
  cases.push_back(depthwise({.x = {1, 3, 9, 21}, .kernel = {1, 1}, .strides = {2, 2}}));
  // 1x1, unit strides, no padding: a per-channel scale (conv_depthwise_scale_avx2.cc), with
  // planes shorter than, equal to and around 8 lanes, multipliers, batches and many channels.
  cases.push_back(depthwise({.x = {1, 5, 1, 7}, .kernel = {1, 1}}));
  cases.push_back(depthwise({.x = {1, 4, 2, 4}, .kernel = {1, 1}, .bias = false}));
  cases.push_back(depthwise({.x = {2, 3, 5, 3}, .multiplier = 2, .kernel = {1, 1}}));
  cases.push_back(depthwise({.x = {1, 130, 28, 28}, .kernel = {1, 1}}));
  cases.push_back(depthwise({.x = {2, 7, 13}, .kernel = {1}}));
  cases.push_back(depthwise({.x = {1, 3, 9, 9}, .kernel = {1, 1}, .pads = {1, 0, 0, 1}}));  // padded: not a scale
  cases.push_back(depthwise({.x = {1, 3, 9, 21}, .kernel = {2, 2}, .strides = {2, 2}}));
  cases.push_back(depthwise({.x = {1, 3, 8, 19}, .kernel = {1, 3}, .pads = {0, 1, 0, 1}}));
  cases.push_back(depthwise({.x = {1, 3, 14, 23}, .kernel = {3, 5}, .strides = {2, 2}, .pads = {1, 2, 1, 2}}));
  cases.push_back(depthwise({.x = {1, 2, 15, 15}, .kernel = {7, 7}, .pads = {3, 3, 3, 3}}));
  cases.push_back(depthwise({.x = {1, 2, 29, 22}, .kernel = {7, 7}, .strides = {2, 2}, .pads = {3, 3, 3, 3}}));
  // Channel multipliers and batches.
  cases.push_back(depthwise({.x = {1, 3, 11, 13}, .multiplier = 2, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));
  cases.push_back(depthwise({.x = {2, 4, 14, 14}, .kernel = {5, 5}, .strides = {2, 2}, .pads = {2, 2, 2, 2}}));
  cases.push_back(depthwise({.x = {3, 2, 7, 7}, .multiplier = 3, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}));
  // Many channels (the planes are split over threads).
  cases.push_back(depthwise({.x = {1, 96, 28, 28}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}));
  cases.push_back(depthwise({.x = {1, 160, 7, 7}, .kernel = {5, 5}, .pads = {2, 2, 2, 2}}));
  // 1-D.
  cases.push_back(depthwise({.x = {1, 3, 37}, .kernel = {3}, .strides = {2}, .pads = {1, 1}}));
  cases.push_back(depthwise({.x = {2, 3, 50}, .kernel = {5}, .pads = {2, 2}}));
  // Dilated: handed to the reference kernel.
  cases.push_back(depthwise({.x = {1, 3, 15, 17}, .kernel = {3, 3}, .pads = {2, 2, 2, 2}, .dilations = {2, 2}}));
  cases.push_back(depthwise({.x = {1, 3, 15, 17}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 2, 1, 2},
                             .dilations = {1, 2}}));
  return cases;
}

std::vector<KernelCase> fused_conv_depthwise_cases() {
  const DepthwiseSpec specs[] = {
      {.x = {1, 3, 17, 15}, .kernel = {3, 3}, .pads = {1, 1, 1, 1}},
      {.x = {1, 2, 33, 33}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {0, 0, 1, 1}},
      {.x = {1, 3, 7, 7}, .kernel = {5, 5}, .pads = {2, 2, 2, 2}},
      {.x = {1, 2, 15, 20}, .kernel = {5, 5}, .strides = {2, 2}, .pads = {2, 2, 2, 2}},
      {.x = {1, 3, 2, 2}, .kernel = {3, 3}, .pads = {1, 1, 1, 1}},
      {.x = {1, 2, 9, 9}, .kernel = {3, 3}, .pads = {2, 2, 2, 2}, .dilations = {2, 2}},
      // Channels in lanes, with a partial unit of 16 channels.
      {.x = {1, 17, 7, 7}, .kernel = {3, 3}, .pads = {1, 1, 1, 1}},
      {.x = {1, 33, 6, 5}, .kernel = {5, 5}, .strides = {2, 2}, .pads = {1, 2, 2, 1}},
      {.x = {2, 16, 14, 14}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {0, 0, 1, 1}},
      // A per-channel scale (a BatchNormalization made a convolution), with a masked tail.
      {.x = {2, 19, 5, 7}, .kernel = {1, 1}},
  };
  std::vector<KernelCase> cases;
  for (const auto& act : fused_activations()) {
    for (const DepthwiseSpec& spec : specs) {
      for (bool residual : {false, true}) {
        KernelCase c = depthwise(spec);
        c.domain = "ai.ignis";
        c.op_type = "FusedConv";
        c.opset = 1;
        if (residual) c.inputs.push_back(output_shape(spec));
        set_activation(c.attrs, act);
        c.label += str_cat(residual ? " residual " : " ", activation_label(act));
        cases.push_back(c);
      }
    }
  }
  return cases;
}

}  // namespace ignis::kernel_cases
