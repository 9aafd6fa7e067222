// SPDX-License-Identifier: Apache-2.0
// Blocked channel layout cases (ai.ignis BlockedConv, BlockChannels, UnblockChannels,
// BlockedMaxPool, BlockedGlobalAveragePool; block 16): pointwise 1x1 convolutions over the channel counts of MobileNet-style networks (16 to
// 320, whole blocks and partial ones) at 1, 7x7, 14x14, 13x17 and 56x56 positions, batch 2;
// depthwise 3x3 and 5x5 at strides 1 and 2 on 7x7 to 28x28 planes (and 112x112 with 32
// channels) with 16, 24, 40 and 144 channels; bias absent and present, the residual Z and the
// activations of those networks; general convolutions on blocked input (dense and grouped
// windows, strided 1x1); dense 3x3 at unit stride, which AVX-512 runs with Winograd F(4x4).
// The random inputs fill the padded lanes of X and Z too: kernels must ignore them. Work per
// case stays under ~5 M multiply-adds so the reference runs the whole file in seconds.
#include <array>

#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

constexpr int64_t kBlock = 16;

int64_t blocks(int64_t channels) { return (channels + kBlock - 1) / kBlock; }

struct ConvSpec {
  int64_t n = 1, c = 0, h = 0, w = 0, m = 0;
  int64_t kernel = 1, stride = 1, pad = 0, group = 1, dilation = 1;
  // Pads [top, left, bottom, right] where they differ (TensorFlow's "same" at stride 2); pad
  // is ignored then.
  std::array<int64_t, 4> pads = {-1, -1, -1, -1};
  bool bias = true;
  bool residual = false;  // needs bias (inputs cannot be omitted here)
  bool scale = false;     // S [N, C, 1, 1]; needs bias and residual
  bool plain = false;     // X plain [N, C, H, W] (plain_input = 1)
  FusedActivation act = {};
};

// The activations the blocked layout serves (MobileNet / EfficientNet blocks), with none.
std::vector<FusedActivation> blocked_activations() {
  return {{"", {}},
          {"Relu", {}},
          {"Clip", {{"activation_min", 0.0f}, {"activation_max", 6.0f}}},
          {"SiLU", {}},
          {"Sigmoid", {}},
          {"HardSwish", {}}};
}

KernelCase blocked_conv(const ConvSpec& s) {
  KernelCase c;
  c.domain = "ai.ignis";
  c.op_type = "BlockedConv";
  c.opset = 1;
  const int64_t span = s.dilation * (s.kernel - 1) + 1;
  const bool own_pads = s.pads[0] >= 0;
  const std::array<int64_t, 4> pads = own_pads ? s.pads : std::array<int64_t, 4>{s.pad, s.pad, s.pad, s.pad};
  const int64_t oh = (s.h + pads[0] + pads[2] - span) / s.stride + 1;
  const int64_t ow = (s.w + pads[1] + pads[3] - span) / s.stride + 1;
  c.inputs = {s.plain ? Shape{s.n, s.c, s.h, s.w} : Shape{s.n, blocks(s.c), s.h, s.w, kBlock},
              Shape{s.m, s.c / s.group, s.kernel, s.kernel}};
  if (s.plain) c.attrs.set("plain_input", int_attr(1));
  if (s.bias || s.residual || s.scale) c.inputs.push_back(Shape{s.m});
  if (s.residual || s.scale) c.inputs.push_back(Shape{s.n, blocks(s.m), oh, ow, kBlock});
  if (s.scale) c.inputs.push_back(Shape{s.n, s.c, 1, 1});
  // W and B are constants, as in a model (the optimized kernel takes its direct paths only
  // then; with run-time weights it hands the case to the reference kernel).
  c.weight_inputs = {1};
  if (c.inputs.size() > 2) c.weight_inputs.push_back(2);
  c.depth = s.c / s.group * s.kernel * s.kernel;
  // Dense 3x3 at unit stride with 16 to 256 channels each side: the AVX-512 kernel's Winograd
  // F(4x4) path, whose rounding is that of a deeper sum (conv_winograd.cc's cases).
  const bool winograd = s.kernel == 3 && s.stride == 1 && s.dilation == 1 && s.group == 1 && !s.plain &&
                        !s.scale && s.c >= 16 && s.m >= 16 && s.c <= 256 && s.m <= 256;
  if (winograd) c.error_scale = 8.0;
  if (s.group != 1) c.attrs.set("group", int_attr(s.group));
  if (s.stride != 1) c.attrs.set("strides", ints_attr({s.stride, s.stride}));
  if (own_pads || s.pad != 0) c.attrs.set("pads", ints_attr({pads[0], pads[1], pads[2], pads[3]}));
  if (s.dilation != 1) c.attrs.set("dilations", ints_attr({s.dilation, s.dilation}));
  set_activation(c.attrs, s.act);
  c.label = str_cat("X[", s.n, ", ", s.c, " (", blocks(s.c), " blocks), ", s.h, ", ", s.w, "] W[", s.m, ", ",
                    s.c / s.group, ", ", s.kernel, ", ", s.kernel, "] group=", s.group, " stride=", s.stride,
                    " pads=", pads[0], ",", pads[1], ",", pads[2], ",", pads[3], " dilation=", s.dilation, s.bias || s.residual ? " bias" : " no bias", s.residual ? " residual " : " ",
                    s.scale ? "scale S " : "", s.plain ? "plain X " : "", activation_label(s.act));
  return c;
}

}  // namespace

std::vector<KernelCase> blocked_conv_cases() {
  const std::vector<FusedActivation> acts = blocked_activations();
  std::vector<KernelCase> cases;
  int i = 0;
  // Pointwise {C, M, H, W}, batch 2: expansions, projections and the squeeze paths.
  const int64_t pointwise[][4] = {
      {16, 16, 56, 56},  {16, 24, 56, 56},   {24, 16, 56, 56},  {32, 16, 56, 56}, {24, 144, 14, 14},
      {144, 24, 14, 14}, {32, 96, 14, 14},   {96, 24, 13, 17},  {24, 40, 13, 17}, {144, 32, 7, 7},
      {160, 320, 7, 7},  {320, 160, 7, 7},   {96, 160, 7, 7},   {16, 320, 1, 1},  {320, 16, 1, 1},
      {144, 144, 1, 1},  {24, 96, 1, 1},     {40, 24, 14, 14},  {320, 24, 1, 1},  {160, 24, 13, 17},
  };
  for (const auto& p : pointwise) {
    cases.push_back(blocked_conv({.n = 2, .c = p[0], .h = p[2], .w = p[3], .m = p[1], .bias = i % 3 != 2,
                                  .residual = i % 4 == 1, .act = acts[i % acts.size()]}));
    ++i;
  }
  // Depthwise: 3x3 and 5x5, strides 1 and 2, "same" pads, each plane with each channel count
  // in turn (and 14x14 with every count).
  const int64_t channel_counts[] = {16, 24, 40, 144};
  int plane = 0;
  for (int64_t k : {3, 5})
    for (int64_t stride : {1, 2})
      for (int64_t size : {7, 14, 15, 28}) {
        for (int64_t j = 0; j < (size == 14 ? 4 : 1); ++j, ++i) {
          const int64_t ch = channel_counts[(plane + j) % 4];
          cases.push_back(blocked_conv({.n = size <= 7 ? 2 : 1, .c = ch, .h = size, .w = size, .m = ch, .kernel = k,
                                        .stride = stride, .pad = k / 2, .group = ch, .bias = i % 3 != 2,
                                        .residual = i % 2 == 0, .act = acts[i % acts.size()]}));
        }
        ++plane;
      }
  cases.push_back(blocked_conv({.c = 32, .h = 112, .w = 112, .m = 32, .kernel = 3, .pad = 1, .group = 32,
                                .act = acts[2]}));
  // Every activation, with and without the residual, on one pointwise and one depthwise shape.
  for (const auto& act : acts)
    for (bool residual : {false, true}) {
      cases.push_back(blocked_conv({.n = 2, .c = 24, .h = 7, .w = 9, .m = 40, .residual = residual, .act = act}));
      cases.push_back(blocked_conv({.c = 40, .h = 14, .w = 14, .m = 40, .kernel = 3, .pad = 1, .group = 40,
                                    .residual = residual, .act = act}));
    }
  // Input scaled per image and channel (S, a squeeze-excitation's gate): pointwise layers
  // where scaling the weights is less work (many positions) and where scaling the input is,
  // a depthwise one, batch 2 so each image takes its own scale.
  for (const auto& p : {std::array<int64_t, 4>{144, 24, 28, 28}, std::array<int64_t, 4>{240, 40, 3, 5},
                        std::array<int64_t, 4>{24, 40, 1, 1}, std::array<int64_t, 4>{40, 40, 6, 6}})
    cases.push_back(blocked_conv({.n = 2, .c = p[0], .h = p[2], .w = p[3], .m = p[1], .scale = true,
                                  .act = acts[static_cast<size_t>(p[0] % 6)]}));
  cases.push_back(blocked_conv({.n = 2, .c = 40, .h = 9, .w = 9, .m = 40, .kernel = 5, .pad = 2, .group = 40,
                                .scale = true, .act = acts[3]}));
  // Stems reading a plain image (plain_input = 1): 3 channels, 3x3 stride 2 into one or two
  // pairs of output blocks, odd sizes, 5x5 stride 1, a residual, batch 2, a 7x7 stem.
  cases.push_back(blocked_conv({.c = 3, .h = 56, .w = 56, .m = 32, .kernel = 3, .stride = 2, .pad = 1, .plain = true,
                                .act = acts[2]}));
  cases.push_back(blocked_conv({.n = 2, .c = 3, .h = 31, .w = 29, .m = 40, .kernel = 3, .stride = 2, .pad = 1,
                                .plain = true, .act = acts[3]}));
  cases.push_back(blocked_conv({.c = 3, .h = 17, .w = 40, .m = 24, .kernel = 5, .pad = 2, .bias = false,
                                .plain = true}));
  cases.push_back(blocked_conv({.c = 4, .h = 13, .w = 11, .m = 16, .kernel = 3, .pad = 0, .residual = true,
                                .plain = true, .act = acts[1]}));
  cases.push_back(blocked_conv({.c = 3, .h = 2, .w = 3, .m = 32, .kernel = 3, .stride = 2, .pad = 1, .plain = true}));
  // resnet's 7x7 stride-2 stem (147 taps, near the 160 bound), on an odd plane with 40 channels.
  cases.push_back(blocked_conv({.c = 3, .h = 37, .w = 43, .m = 40, .kernel = 7, .stride = 2, .pad = 3, .plain = true,
                                .act = acts[1]}));
  // General convolutions: a 3x3 stem (3 -> 16 channels, stride 2), a grouped 3x3, a strided
  // 1x1, and a dense 3x3 on partial blocks.
  cases.push_back(blocked_conv({.c = 3, .h = 56, .w = 56, .m = 16, .kernel = 3, .stride = 2, .pad = 1,
                                .act = acts[5]}));
  cases.push_back(blocked_conv({.c = 32, .h = 14, .w = 14, .m = 32, .kernel = 3, .pad = 1, .group = 2,
                                .act = acts[1]}));
  cases.push_back(blocked_conv({.n = 2, .c = 40, .h = 14, .w = 14, .m = 24, .stride = 2, .bias = false}));
  // Strided 1x1s: narrow outputs run as pointwise tiles over a copy of the positions read
  // (odd planes, partial blocks, a residual, an activation, the squeeze-excitation scale,
  // stride 3), wide ones (26 columns) with the direct kernel reading the input in place.
  for (const ConvSpec& s : std::initializer_list<ConvSpec>{
           {.c = 48, .h = 13, .w = 15, .m = 40, .stride = 2, .residual = true, .act = acts[1]},
           {.n = 2, .c = 32, .h = 7, .w = 7, .m = 64, .stride = 2, .act = acts[3]},
           {.c = 16, .h = 9, .w = 10, .m = 16, .stride = 3},
           {.c = 32, .h = 14, .w = 14, .m = 48, .stride = 2, .residual = true, .scale = true},
           {.c = 24, .h = 50, .w = 52, .m = 40, .stride = 2, .residual = true}})
    cases.push_back(blocked_conv(s));
  cases.push_back(blocked_conv({.c = 24, .h = 9, .w = 11, .m = 20, .kernel = 3, .pad = 1, .residual = true,
                                .act = acts[3]}));
  // Dense and grouped convolutions on blocked input (the AVX2 direct kernel): 3x3 at strides 1
  // and 2 on odd planes, "same" and no padding, 5x5, a 1x1 with padding, planes narrower than
  // a tile, groups of one and two blocks (regnet_x's width 16 and 32), of 8 channels as many in
  // as out (regnet_y's; the last block half padded at 24 and 40 channels), of 8 in and 16 out
  // (handed back), the 4608-tap bound, batch 2, and pads that differ per side.
  const ConvSpec direct[] = {
      {.n = 2, .c = 48, .h = 13, .w = 17, .m = 64, .kernel = 3, .pad = 1},
      {.c = 40, .h = 15, .w = 15, .m = 40, .kernel = 3, .stride = 2, .pad = 1, .residual = false},
      {.c = 64, .h = 15, .w = 15, .m = 64, .kernel = 3, .stride = 2, .pad = 1, .group = 4},
      {.n = 2, .c = 64, .h = 14, .w = 14, .m = 64, .kernel = 3, .pad = 1, .group = 2, .residual = true},
      {.c = 32, .h = 9, .w = 23, .m = 48, .kernel = 3, .group = 2},
      {.c = 24, .h = 12, .w = 12, .m = 24, .kernel = 3, .pad = 1, .group = 3},
      {.n = 2, .c = 48, .h = 14, .w = 13, .m = 48, .kernel = 3, .pad = 1, .group = 6, .residual = true},
      {.c = 40, .h = 15, .w = 15, .m = 40, .kernel = 3, .stride = 2, .pad = 1, .group = 5},
      {.c = 32, .h = 9, .w = 9, .m = 64, .kernel = 3, .pad = 1, .group = 4},
      {.c = 16, .h = 14, .w = 14, .m = 32, .kernel = 5, .pad = 2},
      {.c = 20, .h = 8, .w = 9, .m = 36, .kernel = 1, .stride = 2, .pad = 1, .bias = false},
      {.c = 33, .h = 3, .w = 4, .m = 17, .kernel = 3, .pad = 1, .residual = true},
      {.c = 512, .h = 4, .w = 5, .m = 32, .kernel = 3, .pad = 1},
      {.c = 32, .h = 16, .w = 15, .m = 48, .kernel = 3, .stride = 2, .pads = {0, 0, 1, 1}},
      {.n = 2, .c = 64, .h = 11, .w = 12, .m = 64, .kernel = 3, .stride = 2, .group = 4, .pads = {1, 0, 0, 1}},
      {.c = 16, .h = 9, .w = 10, .m = 16, .kernel = 5, .group = 2, .pads = {2, 1, 3, 0}},
  };
  for (ConvSpec d : direct) {
    d.act = acts[i++ % acts.size()];
    cases.push_back(blocked_conv(d));
  }
  // Grouped 3x3s the AVX-512 kernel runs input-stationary (3-wide windows at strides 1 and 2):
  // groups of 4 and 2 channels (densified to whole blocks: resnext50's first stage), of one
  // block with rows of every tile width 1 to 12 plus tails (widths 1, 5, 12, 13, 25), and of
  // two blocks (output pairs, tiles of 8: widths 3, 7, 8, 16, 17), strided, batch 2, residual.
  const ConvSpec grouped_w3[] = {
      {.c = 64, .h = 9, .w = 11, .m = 64, .kernel = 3, .pad = 1, .group = 16, .residual = true},
      {.c = 32, .h = 6, .w = 25, .m = 32, .kernel = 3, .pad = 1, .group = 16},
      {.n = 2, .c = 48, .h = 13, .w = 13, .m = 48, .kernel = 3, .stride = 2, .pad = 1, .group = 12},
      {.c = 32, .h = 4, .w = 1, .m = 32, .kernel = 3, .pad = 1, .group = 2},
      {.c = 48, .h = 5, .w = 5, .m = 48, .kernel = 3, .pad = 1, .group = 3, .bias = false},
      {.c = 32, .h = 3, .w = 14, .m = 32, .kernel = 3, .group = 2, .residual = true},
      {.c = 16, .h = 7, .w = 15, .m = 16, .kernel = 3, .pad = 1},
      {.c = 64, .h = 5, .w = 3, .m = 64, .kernel = 3, .pad = 1, .group = 2},
      {.n = 2, .c = 96, .h = 7, .w = 7, .m = 96, .kernel = 3, .pad = 1, .group = 3, .residual = true},
      {.c = 64, .h = 4, .w = 10, .m = 64, .kernel = 3, .group = 2},
      {.c = 64, .h = 9, .w = 31, .m = 64, .kernel = 3, .stride = 2, .pad = 1, .group = 2},
      {.c = 64, .h = 5, .w = 17, .m = 64, .kernel = 3, .pad = 1, .group = 2, .pads = {1, 0, 0, 1}},
      {.c = 40, .h = 10, .w = 10, .m = 40, .kernel = 3, .stride = 2, .group = 20},
  };
  for (ConvSpec d : grouped_w3) {
    d.act = acts[i++ % acts.size()];
    cases.push_back(blocked_conv(d));
  }
  // Dense 3x3 at unit stride (Winograd F(4x4) on AVX-512): outputs that end inside a 4x4 tile,
  // no padding, asymmetric pads, partial channel blocks on either side, 256 channels in or out,
  // batch 3 (tile ranges across images), with residual and activations.
  const ConvSpec winograd[] = {
      {.c = 16, .h = 28, .w = 28, .m = 16, .kernel = 3, .pad = 1},
      {.n = 2, .c = 32, .h = 13, .w = 17, .m = 48, .kernel = 3, .pad = 1, .residual = true},
      {.c = 16, .h = 5, .w = 7, .m = 40, .kernel = 3},
      {.c = 48, .h = 14, .w = 13, .m = 48, .kernel = 3, .pads = {0, 1, 2, 0}, .residual = true},
      {.c = 40, .h = 30, .w = 6, .m = 17, .kernel = 3, .pad = 2},
      {.n = 3, .c = 16, .h = 8, .w = 8, .m = 16, .kernel = 3, .pad = 1, .bias = false},
      {.c = 256, .h = 6, .w = 6, .m = 32, .kernel = 3, .pad = 1},
      {.c = 16, .h = 7, .w = 7, .m = 256, .kernel = 3, .pad = 1, .residual = true},
      {.c = 20, .h = 1, .w = 9, .m = 24, .kernel = 3, .pad = 1},
  };
  for (ConvSpec d : winograd) {
    d.act = acts[i++ % acts.size()];
    cases.push_back(blocked_conv(d));
  }
  // Dilated depthwise (dilation 2 to 4, as DeepLabV3's backbone tail): 3x3 and 5x5, strides
  // 1 and 2, odd planes (small ones take the padded copy, large ones the per-position path),
  // "same" pads and pads reaching past the plane (taps that never read the input), partial
  // channel blocks; a dilated stem, which the blocked kernel hands back.
  const int64_t dilated[][6] = {
      // {C, H, W, kernel, stride, dilation}
      {40, 14, 14, 5, 1, 2}, {24, 13, 11, 3, 1, 2}, {16, 9, 15, 3, 2, 3}, {40, 7, 7, 3, 1, 4},
      {20, 17, 9, 5, 2, 3},  {48, 5, 6, 5, 1, 4},   {33, 14, 14, 3, 1, 3},
      {16, 37, 41, 3, 1, 2}, {24, 33, 35, 3, 2, 3},  // planes too large for the padded copy
  };
  for (const auto& d : dilated) {
    const int64_t ch = d[0], k = d[3], dil = d[5];
    cases.push_back(blocked_conv({.n = 1 + i % 2, .c = ch, .h = d[1], .w = d[2], .m = ch, .kernel = k, .stride = d[4],
                                  .pad = dil * (k / 2) + i % 2, .group = ch, .dilation = dil, .bias = i % 3 != 2,
                                  .residual = i % 2 == 0 && d[4] == 1, .act = acts[i % acts.size()]}));
    ++i;
  }
  cases.push_back(blocked_conv({.c = 3, .h = 15, .w = 13, .m = 16, .kernel = 3, .pad = 2, .dilation = 2,
                                .plain = true, .act = acts[1]}));
  return cases;
}

std::vector<KernelCase> block_channels_cases() {
  std::vector<KernelCase> cases;
  for (int64_t ch : {3, 16, 24, 40, 1280})
    for (int64_t size : {1, 7, 56}) {
      KernelCase c;
      c.domain = "ai.ignis";
      c.op_type = "BlockChannels";
      c.opset = 1;
      c.inputs = {Shape{1, ch, size, size}};
      c.label = str_cat("X", c.inputs[0].str());
      cases.push_back(c);
    }
  return cases;
}

std::vector<KernelCase> blocked_global_average_pool_cases() {
  std::vector<KernelCase> cases;
  for (int64_t ch : {3, 16, 24, 40, 1280})
    for (auto [n, h, w] : {std::array<int64_t, 3>{1, 1, 1}, std::array<int64_t, 3>{2, 7, 7},
                           std::array<int64_t, 3>{1, 56, 56}, std::array<int64_t, 3>{2, 5, 3}}) {
      KernelCase c;
      c.domain = "ai.ignis";
      c.op_type = "BlockedGlobalAveragePool";
      c.opset = 1;
      c.inputs = {Shape{n, blocks(ch), h, w, kBlock}};
      c.attrs.set("channels", int_attr(ch));
      c.label = str_cat("X", c.inputs[0].str(), " channels=", ch);
      cases.push_back(c);
    }
  return cases;
}

// The windows of the networks that pool between blocked convolutions (squeezenet's 3x3/2 with
// ceil_mode, resnet's 3x3/2 padded, googlenet's 3x3/1 padded, 2x2/2) and the attribute forms
// a pool can take (asymmetric pads, SAME_UPPER, dilation, a window wider than the plane's
// padded edge), over 1 to 3 channel blocks, batch 1 and 2.
std::vector<KernelCase> blocked_max_pool_cases() {
  struct Pool {
    int64_t n, cb, h, w;
    std::vector<int64_t> kernel, strides, pads;
    int64_t ceil_mode = 0;
    std::vector<int64_t> dilations = {};
    std::string auto_pad = "";
  };
  const Pool pools[] = {
      {1, 4, 27, 27, {3, 3}, {2, 2}, {0, 0, 0, 0}, 1},  // squeezenet (55 -> 27 -> 13 with ceil)
      {2, 3, 14, 13, {3, 3}, {2, 2}, {1, 1, 1, 1}},
      {1, 2, 9, 11, {3, 3}, {1, 1}, {1, 1, 1, 1}},
      {1, 1, 8, 6, {2, 2}, {2, 2}, {0, 0, 0, 0}},
      {1, 2, 7, 7, {2, 3}, {2, 1}, {0, 1, 1, 0}},
      {2, 1, 10, 9, {3, 3}, {1, 2}, {0, 0, 0, 0}, 0, {2, 2}},
      {1, 3, 5, 6, {3, 3}, {2, 2}, {}, 0, {}, "SAME_UPPER"},
      {1, 1, 3, 3, {1, 1}, {1, 1}, {0, 0, 0, 0}},
      {1, 2, 4, 5, {5, 5}, {1, 1}, {2, 2, 2, 2}},
  };
  std::vector<KernelCase> cases;
  for (const Pool& p : pools) {
    KernelCase c;
    c.domain = "ai.ignis";
    c.op_type = "BlockedMaxPool";
    c.opset = 1;
    c.inputs = {Shape{p.n, p.cb, p.h, p.w, kBlock}};
    c.attrs.set("kernel_shape", ints_attr(p.kernel));
    c.attrs.set("strides", ints_attr(p.strides));
    if (!p.auto_pad.empty()) c.attrs.set("auto_pad", string_attr(p.auto_pad));
    else c.attrs.set("pads", ints_attr(p.pads));
    if (p.ceil_mode) c.attrs.set("ceil_mode", int_attr(1));
    if (!p.dilations.empty()) c.attrs.set("dilations", ints_attr(p.dilations));
    c.label = str_cat("X", c.inputs[0].str(), " kernel ", p.kernel[0], "x", p.kernel[1], " strides ", p.strides[0],
                      ",", p.strides[1], p.ceil_mode ? " ceil" : "", p.auto_pad);
    cases.push_back(c);
  }
  return cases;
}

std::vector<KernelCase> unblock_channels_cases() {
  std::vector<KernelCase> cases;
  for (int64_t ch : {3, 16, 24, 40, 1280})
    for (int64_t size : {1, 7, 56}) {
      KernelCase c;
      c.domain = "ai.ignis";
      c.op_type = "UnblockChannels";
      c.opset = 1;
      c.inputs = {Shape{1, blocks(ch), size, size, kBlock}};
      c.attrs.set("channels", int_attr(ch));
      c.label = str_cat("X", c.inputs[0].str(), " channels=", ch);
      cases.push_back(c);
    }
  return cases;
}

}  // namespace ignis::kernel_cases
