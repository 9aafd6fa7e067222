// SPDX-License-Identifier: Apache-2.0
// Reference com.microsoft QLinearGlobalAveragePool: the mean of each channel of a quantized
// tensor, requantized from the channel's exact integer sum (kernels/qlinear_pool.h), channels
// first ([N, C, spatial...]) or last ([N, spatial..., C]).
#include <cstdint>

#include "kernels/qlinear_pool.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {
namespace {

template <class T>
void average_channels(const Tensor& x, Tensor& y, bool channels_last, const QLinearGlobalPoolParams& p) {
  const int64_t batch = x.dim(0);
  const int64_t channels = channels_last ? x.dim(x.rank() - 1) : x.dim(1);
  // Where value i of channel c lies within an image.
  const int64_t value_stride = channels_last ? channels : 1, channel_stride = channels_last ? 1 : p.size;
  const T* xs = x.data_as<T>();
  T* ys = y.data_as<T>();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      const T* v = xs + b * channels * p.size + c * channel_stride;
      int64_t sum = 0;
      for (int64_t i = 0; i < p.size; ++i) sum += v[i * value_stride];
      ys[b * channels + c] = static_cast<T>(qlinear_average_one(sum, p));
    }
  }
}

Status qlinear_global_average_pool_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (y.numel() == 0) return Status::ok();
  const bool channels_last = ctx.attrs().get_int("channels_last", 0) != 0;
  const int64_t size = channels_last ? x.shape().numel(1, x.rank() - 1) : x.shape().numel(2, x.rank());
  const QLinearGlobalPoolParams p = qlinear_global_pool_params(ctx, size);
  if (p.is_signed) average_channels<int8_t>(x, y, channels_last, p);
  else average_channels<uint8_t>(x, y, channels_last, p);
  return Status::ok();
}

}  // namespace

void register_quantize_pool(KernelRegistry& r) {
  r.add({.domain = "com.microsoft", .op_type = "QLinearGlobalAveragePool", .since_opset = 1,
         .types = DTypeSet{DType::U8, DType::I8}, .id = "ref/qlinearglobalaveragepool",
         .fn = qlinear_global_average_pool_kernel});
}

}  // namespace ignis::kernels::ref
