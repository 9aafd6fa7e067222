// SPDX-License-Identifier: Apache-2.0
// Reference kernels of the ai.ignis blocked channel layout ops (docs/ops_ai_ignis.md),
// float32 only. A blocked tensor [N, CB, S..., b] holds channel c = cb * b + l of position s
// at lane l; lanes past the last channel are zero. BlockChannels and UnblockChannels are
// plain copies. BlockedConv is its definition: X (and Z) are unblocked into scratch, X is
// multiplied by the per-channel scale S when given, the reference FusedConv kernel
// ("ref/fusedconv") computes the convolution with its epilogue into scratch, and the result is
// blocked into Y. BlockedMaxPool is likewise MaxPool-12's reference kernel ("ref/maxpool") on
// the unblocked X (every lane, padded ones too: their zeros pool to zero). BlockedGlobalAveragePool
// averages each lane over the positions. QLinearConvNhwc is QLinearConv's reference kernel
// ("ref/qlinearconv") between transposes: X [N, H, W, C] to NCHW, Y back to [N, OH, OW, M].
#include <algorithm>
#include <vector>

#include "kernels/registry.h"

namespace ignis::kernels::ref {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Product of dims [from, to) of `s`.
int64_t span_numel(const Shape& s, int from, int to) {
  int64_t n = 1;
  for (int i = from; i < to; ++i) n *= s[i];
  return n;
}

// x [N, C, S] (S positions) -> y [N, ceil(C / b), S, b], padded lanes zero.
void block_channels(const float* x, float* y, int64_t n, int64_t c, int64_t s, int64_t b, ThreadPool* pool) {
  const int64_t cb = ceil_div(c, b);
  parallel_for(pool, n * cb, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t ni = r / cb, c0 = r % cb * b;
      const int64_t lanes = std::min(b, c - c0);
      float* dst = y + r * s * b;
      for (int64_t p = 0; p < s; ++p) {
        for (int64_t l = 0; l < lanes; ++l) dst[p * b + l] = x[((ni * c) + c0 + l) * s + p];
        std::fill(dst + p * b + lanes, dst + (p + 1) * b, 0.0f);
      }
    }
  });
}

// x [N, ceil(C / b), S, b] -> y [N, C, S], padded lanes dropped.
void unblock_channels(const float* x, float* y, int64_t n, int64_t c, int64_t s, int64_t b, ThreadPool* pool) {
  const int64_t cb = ceil_div(c, b);
  parallel_for(pool, n * c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t ni = r / c, ci = r % c;
      const float* src = x + ((ni * cb + ci / b) * s) * b + ci % b;
      float* dst = y + r * s;
      for (int64_t p = 0; p < s; ++p) dst[p] = src[p * b];
    }
  });
}

Status block_channels_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t b = ctx.attrs().get_int("block", 16);
  block_channels(x.data_as<float>(), ctx.output(0).data_as<float>(), x.dim(0), x.dim(1),
                 span_numel(x.shape(), 2, x.rank()), b, ctx.pool());
  return Status::ok();
}

Status unblock_channels_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t b = ctx.attrs().get_int("block", 16);
  const int64_t c = ctx.attrs().get_int("channels", 1);
  unblock_channels(x.data_as<float>(), ctx.output(0).data_as<float>(), x.dim(0), c,
                   span_numel(x.shape(), 2, x.rank() - 1), b, ctx.pool());
  return Status::ok();
}

// Scratch holds the unblocked X [N, C, H, W], the unblocked Z [N, M, OH, OW] when present,
// and the FusedConv result [N, M, OH, OW]. FusedConv ignores the `block` attribute.
Status blocked_conv_kernel(KernelContext& ctx) {
  static const KernelDef* const fused_conv = KernelRegistry::global().reference("ai.ignis", "FusedConv", 1, DType::F32);
  if (fused_conv == nullptr || fused_conv->fn == nullptr)
    return internal_error("the reference FusedConv kernel is not registered");
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  Tensor& y = ctx.output(0);
  const int64_t b = ctx.attrs().get_int("block", 16);
  const int64_t n = x.dim(0), c = w.dim(1) * ctx.attrs().get_int("group", 1), m = w.dim(0);
  const int64_t oh = y.dim(2), ow = y.dim(3);
  const bool has_z = ctx.has_input(3);
  const int64_t x_floats = n * c * x.dim(2) * x.dim(3), y_floats = n * m * oh * ow;
  const int64_t floats = x_floats + (has_z ? 2 : 1) * y_floats;
  float* buf = static_cast<float*>(ctx.scratch(static_cast<size_t>(std::max<int64_t>(floats, 1)) * sizeof(float)));
  float* xu = buf;
  float* conv = xu + x_floats;
  float* zu = conv + y_floats;
  if (ctx.attrs().get_int("plain_input", 0) == 1)
    std::copy_n(x.data_as<float>(), x_floats, xu);  // X is already [N, C, H, W]
  else
    unblock_channels(x.data_as<float>(), xu, n, c, x.dim(2) * x.dim(3), b, ctx.pool());
  if (ctx.has_input(4)) {  // S [N, C, 1, 1]: X * S, channel by channel
    const float* scale = ctx.input(4).data_as<float>();
    const int64_t plane = x.dim(2) * x.dim(3);
    for (int64_t i = 0; i < n * c; ++i)
      for (int64_t p = 0; p < plane; ++p) xu[i * plane + p] *= scale[i];
  }
  if (has_z) unblock_channels(ctx.input(3).data_as<float>(), zu, n, m, oh * ow, b, ctx.pool());
  const Tensor x_t = Tensor::view(DType::F32, Shape{n, c, x.dim(2), x.dim(3)}, xu);
  const Tensor z_t = Tensor::view(DType::F32, Shape{n, m, oh, ow}, zu);
  Tensor conv_t = Tensor::view(DType::F32, Shape{n, m, oh, ow}, conv);
  const Tensor* inputs[4] = {&x_t, &w, ctx.has_input(2) ? &ctx.input(2) : nullptr, has_z ? &z_t : nullptr};
  Tensor* outputs[1] = {&conv_t};
  Scratch scratch;  // FusedConv's own; ours holds its operands
  KernelContext inner(ctx.attrs(), 1, inputs, outputs, ctx.pool(), &scratch);
  IGNIS_RETURN_IF_ERROR(fused_conv->fn(inner));
  block_channels(conv, y.data_as<float>(), n, m, oh * ow, b, ctx.pool());
  return Status::ok();
}

// Scratch holds the unblocked X [N, CB * b, H, W] and the MaxPool result [N, CB * b, OH, OW].
Status blocked_max_pool_kernel(KernelContext& ctx) {
  constexpr int64_t kMaxPoolOpset = 12;  // the ai.onnx MaxPool whose attributes BlockedMaxPool takes
  static const KernelDef* const max_pool = KernelRegistry::global().reference("", "MaxPool", kMaxPoolOpset, DType::F32);
  if (max_pool == nullptr || max_pool->fn == nullptr) return internal_error("the reference MaxPool kernel is not registered");
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t n = x.dim(0), c = x.dim(1) * x.dim(4), b = x.dim(4);
  const int64_t x_floats = n * c * x.dim(2) * x.dim(3), y_floats = n * c * y.dim(2) * y.dim(3);
  float* buf = static_cast<float*>(ctx.scratch(static_cast<size_t>(std::max<int64_t>(x_floats + y_floats, 1)) * sizeof(float)));
  unblock_channels(x.data_as<float>(), buf, n, c, x.dim(2) * x.dim(3), b, ctx.pool());
  const Tensor x_t = Tensor::view(DType::F32, Shape{n, c, x.dim(2), x.dim(3)}, buf);
  Tensor y_t = Tensor::view(DType::F32, Shape{n, c, y.dim(2), y.dim(3)}, buf + x_floats);
  const Tensor* inputs[1] = {&x_t};
  Tensor* outputs[1] = {&y_t};
  Scratch scratch;
  KernelContext inner(ctx.attrs(), kMaxPoolOpset, inputs, outputs, ctx.pool(), &scratch);
  IGNIS_RETURN_IF_ERROR(max_pool->fn(inner));
  block_channels(buf + x_floats, y.data_as<float>(), n, c, y.dim(2) * y.dim(3), b, ctx.pool());
  return Status::ok();
}

// X [N, CB, H, W, b] -> Y [N, channels, 1, 1]: the mean over H * W of each real lane.
Status blocked_global_average_pool_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t b = x.dim(4), c = ctx.attrs().get_int("channels", 1);
  const int64_t n = x.dim(0), cb = x.dim(1), positions = x.dim(2) * x.dim(3);
  const float* src = x.data_as<float>();
  float* y = ctx.output(0).data_as<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* lane = src + ((i * cb + ch / b) * positions) * b + ch % b;
      double sum = 0;
      for (int64_t p = 0; p < positions; ++p) sum += lane[p * b];
      y[i * c + ch] = static_cast<float>(sum / static_cast<double>(positions));
    }
  return Status::ok();
}

// Bytes [N, A, B, C] -> [N, C, A, B] (to_planes) or [N, A, B, C] <- [N, C, A, B].
void transpose_bytes(const uint8_t* src, uint8_t* dst, int64_t n, int64_t positions, int64_t c, bool to_planes) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < positions; ++p)
      for (int64_t ch = 0; ch < c; ++ch) {
        const int64_t nhwc = (i * positions + p) * c + ch, nchw = (i * c + ch) * positions + p;
        if (to_planes) dst[nchw] = src[nhwc];
        else dst[nhwc] = src[nchw];
      }
}

// Scratch holds X as NCHW and Y as NCHW.
Status qlinear_conv_nhwc_kernel(KernelContext& ctx) {
  constexpr int64_t kQLinearConvOpset = 10;  // the ai.onnx QLinearConv whose inputs QLinearConvNhwc takes
  const Tensor& x = ctx.input(0);
  const KernelDef* const qlinear_conv = KernelRegistry::global().reference("", "QLinearConv", kQLinearConvOpset, x.dtype());
  if (qlinear_conv == nullptr || qlinear_conv->fn == nullptr)
    return internal_error("the reference QLinearConv kernel is not registered");
  Tensor& y = ctx.output(0);
  const int64_t n = x.dim(0), c = x.dim(3), m = y.dim(3);
  const int64_t x_bytes = x.numel(), y_bytes = y.numel();
  auto* buf = static_cast<uint8_t*>(ctx.scratch(static_cast<size_t>(std::max<int64_t>(x_bytes + y_bytes, 1))));
  transpose_bytes(static_cast<const uint8_t*>(x.data()), buf, n, x.dim(1) * x.dim(2), c, true);
  const Tensor x_t = Tensor::view(x.dtype(), Shape{n, c, x.dim(1), x.dim(2)}, buf);
  Tensor y_t = Tensor::view(y.dtype(), Shape{n, m, y.dim(1), y.dim(2)}, buf + x_bytes);
  std::vector<const Tensor*> inputs(static_cast<size_t>(ctx.num_inputs()), nullptr);
  inputs[0] = &x_t;
  for (int i = 1; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) inputs[static_cast<size_t>(i)] = &ctx.input(i);
  Tensor* outputs[1] = {&y_t};
  Scratch scratch;  // QLinearConv's own; ours holds its operands
  KernelContext inner(ctx.attrs(), kQLinearConvOpset, inputs, outputs, ctx.pool(), &scratch);
  IGNIS_RETURN_IF_ERROR(qlinear_conv->fn(inner));
  transpose_bytes(buf + x_bytes, static_cast<uint8_t*>(y.data()), n, y.dim(1) * y.dim(2), m, false);
  return Status::ok();
}

constexpr DTypeSet kF32{DType::F32};

}  // namespace

void register_blocked(KernelRegistry& r) {
  r.add({.domain = "ai.ignis", .op_type = "QLinearConvNhwc", .since_opset = 1, .until_opset = 1,
         .types = DTypeSet{DType::U8, DType::I8}, .id = "ref/qlinearconvnhwc", .fn = qlinear_conv_nhwc_kernel});
  r.add({.domain = "ai.ignis", .op_type = "BlockChannels", .since_opset = 1, .until_opset = 1, .types = kF32,
         .id = "ref/blockchannels", .fn = block_channels_kernel});
  r.add({.domain = "ai.ignis", .op_type = "UnblockChannels", .since_opset = 1, .until_opset = 1, .types = kF32,
         .id = "ref/unblockchannels", .fn = unblock_channels_kernel});
  r.add({.domain = "ai.ignis", .op_type = "BlockedConv", .since_opset = 1, .until_opset = 1, .types = kF32,
         .id = "ref/blockedconv", .fn = blocked_conv_kernel});
  r.add({.domain = "ai.ignis", .op_type = "BlockedMaxPool", .since_opset = 1, .until_opset = 1, .types = kF32,
         .id = "ref/blockedmaxpool", .fn = blocked_max_pool_kernel});
  r.add({.domain = "ai.ignis", .op_type = "BlockedGlobalAveragePool", .since_opset = 1, .until_opset = 1,
         .types = kF32, .id = "ref/blockedglobalaveragepool", .fn = blocked_global_average_pool_kernel});
}

}  // namespace ignis::kernels::ref
