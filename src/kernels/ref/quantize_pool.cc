// SPDX-License-Identifier: Apache-2.0
// Reference com.microsoft QLinearGlobalAveragePool: the mean of each channel of a quantized
// tensor, requantized. As onnxruntime computes it: the exact integer sum s of the channel's n
// values, then y = saturate(round_half_even((s - n * x_zp) * (x_scale / (y_scale * n))) + y_zp)
// in float32. Against the QDQ form it replaces (dequantize, float mean, quantize) the float
// roundings differ, so a value may land one step of y away where it lies near a boundary.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/registry.h"

namespace ignis::kernels::ref {
namespace {

int32_t zero_point(const KernelContext& ctx, int i) {
  if (!ctx.has_input(i)) return 0;
  const Tensor& z = ctx.input(i);
  return z.dtype() == DType::I8 ? static_cast<int32_t>(z.data_as<int8_t>()[0]) : static_cast<int32_t>(z.data_as<uint8_t>()[0]);
}

template <class T>
void average_channels(const Tensor& x, Tensor& y, bool channels_last, float x_scale, int32_t x_zp, float y_scale,
                      int32_t y_zp) {
  const int64_t batch = x.dim(0);
  const int64_t channels = channels_last ? x.dim(x.rank() - 1) : x.dim(1);
  const int64_t size = channels_last ? x.shape().numel(1, x.rank() - 1) : x.shape().numel(2, x.rank());
  // Where channel c's value i of image b lies.
  const int64_t value_stride = channels_last ? channels : 1, channel_stride = channels_last ? 1 : size;
  const float scale = x_scale / (y_scale * static_cast<float>(size));
  const float lo = std::is_signed_v<T> ? -128.0f : 0.0f, hi = std::is_signed_v<T> ? 127.0f : 255.0f;
  const T* xs = x.data_as<T>();
  T* ys = y.data_as<T>();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      const T* p = xs + b * channels * size + c * channel_stride;
      int64_t sum = 0;
      for (int64_t i = 0; i < size; ++i) sum += p[i * value_stride];
      const float v = static_cast<float>(sum - size * x_zp) * scale;
      const float r = std::nearbyint(v) + static_cast<float>(y_zp);
      ys[b * channels + c] = static_cast<T>(!(r >= lo) ? lo : std::min(r, hi));
    }
  }
}

Status qlinear_global_average_pool_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const bool channels_last = ctx.attrs().get_int("channels_last", 0) != 0;
  const float x_scale = ctx.input(1).data_as<float>()[0], y_scale = ctx.input(3).data_as<float>()[0];
  const int32_t x_zp = zero_point(ctx, 2), y_zp = zero_point(ctx, 4);
  if (y.numel() == 0) return Status::ok();
  if (x.dtype() == DType::I8) average_channels<int8_t>(x, y, channels_last, x_scale, x_zp, y_scale, y_zp);
  else average_channels<uint8_t>(x, y, channels_last, x_scale, x_zp, y_scale, y_zp);
  return Status::ok();
}

}  // namespace

void register_quantize_pool(KernelRegistry& r) {
  r.add({.domain = "com.microsoft", .op_type = "QLinearGlobalAveragePool", .since_opset = 1,
         .types = DTypeSet{DType::U8, DType::I8}, .id = "ref/qlinearglobalaveragepool",
         .fn = qlinear_global_average_pool_kernel});
}

}  // namespace ignis::kernels::ref
