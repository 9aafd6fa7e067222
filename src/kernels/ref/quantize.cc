// SPDX-License-Identifier: Apache-2.0
// Reference kernels for linear quantization: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear and ai.ignis DynamicQuantizeRows.
//
// A per-axis scale splits the data into [outer, channels, inner] around `axis`; a scalar
// (or one-entry) scale is the case of one channel; a blocked scale (opset 21) has one entry per
// block of slices along `axis` at each position of the other axes. Arithmetic is float, as the spec states it:
// q = saturate(round_half_even(x / scale) + zero_point), x = (q - zero_point) * scale.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/broadcast.h"
#include "core/channel_split.h"
#include "core/dtype_dispatch.h"
#include "core/low_bit.h"
#include "core/strings.h"
#include "kernels/dynamic_quantize_rows.h"
#include "kernels/ref/elementwise_internal.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {
namespace {

using ew::dtype_unsupported;

// Which scale entry each element of the data uses: one for all, one per slice along `axis`,
// or (blocked, opset 21) one per `block` consecutive slices along `axis` at each position of
// the other axes, the scale then having the data's rank.
struct ScaleMap {
  ChannelSplit split;
  int64_t block = 0;    // 0: per tensor or per axis
  int64_t entries = 1;  // scale entries

  // Calls f(scale entry, flat index) for every element, in memory order.
  template <class F>
  void for_each(F&& f) const {
    if (block == 0) return split.for_each(f);
    const int64_t blocks = (split.channels + block - 1) / block;
    int64_t i = 0;
    for (int64_t o = 0; o < split.outer; ++o)
      for (int64_t c = 0; c < split.channels; ++c) {
        const int64_t base = (o * blocks + c / block) * split.inner;
        for (int64_t k = 0; k < split.inner; ++k) f(base + k, i++);
      }
  }
};

ScaleMap scale_map(const Shape& data, const Tensor& scale, const AttrMap& attrs) {
  const int64_t block = attrs.get_int("block_size", 0);
  const int axis = normalize_axis(attrs.get_int("axis", 1), data.rank()).value_or(0);  // validated by inference
  if (block > 0) return ScaleMap{ChannelSplit(data, axis), block, scale.numel()};
  if (scale.numel() <= 1) return ScaleMap{ChannelSplit::whole(data), 0, 1};
  const ChannelSplit split(data, axis);
  return ScaleMap{split, 0, split.channels};
}

// The scale tensor's entries as floats.
std::vector<float> scales_as_float(const Tensor& scale) {
  std::vector<float> out(static_cast<size_t>(scale.numel()));
  visit_dtype(scale.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || is_half_like_v<T>) {
      const T* p = scale.data_as<T>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(to_compute(p[i]));
    }
  });
  return out;
}

// The zero point's entries as int32 (zeros when the input is omitted, and for the float8 types,
// whose zero point the spec fixes at 0).
std::vector<int32_t> zero_points(const KernelContext& ctx, int input, int64_t n) {
  std::vector<int32_t> out(static_cast<size_t>(n), 0);
  if (!ctx.has_input(input)) return out;
  const Tensor& zp = ctx.input(input);
  if (dtype_is_low_bit(zp.dtype())) {
    if (dtype_is_low_bit_float(zp.dtype())) return out;
    for (int64_t i = 0; i < n && i < zp.numel(); ++i)
      out[static_cast<size_t>(i)] = static_cast<int32_t>(low_bit_int_to_int64(zp.dtype(), zp.data_as<uint8_t>()[i]));
    return out;
  }
  visit_dtype(zp.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      const T* p = zp.data_as<T>();
      for (int64_t i = 0; i < n && i < zp.numel(); ++i) out[static_cast<size_t>(i)] = static_cast<int32_t>(p[i]);
    }
  });
  return out;
}

template <class Q>
Q saturate_round(float v, int32_t zero_point) {
  const float r = std::nearbyint(v) + static_cast<float>(zero_point);
  constexpr float lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  if (!(r >= lo)) return std::numeric_limits<Q>::min();  // NaN saturates low, as onnxruntime does
  return static_cast<Q>(std::min(r, hi));
}

// One quantized low-bit element from v = x / scale: the integer types round half to even,
// add the zero point and saturate; float8 rounds (saturating unless `saturate` is 0) and has no
// zero point; float4e2m1 adds its zero point's value, then rounds (always saturating).
uint8_t quantize_low_bit(DType t, float v, int32_t zero_point, float float_zero_point, bool saturate) {
  if (DTypeSet::float8().contains(t)) return low_bit_float_from_double(t, v, saturate);
  if (t == DType::F4E2M1) return low_bit_float_from_double(t, static_cast<double>(v + float_zero_point));
  const float r = std::nearbyint(v) + static_cast<float>(zero_point);
  const auto lo = static_cast<float>(low_bit_int_min(t)), hi = static_cast<float>(low_bit_int_max(t));
  const float c = !(r >= lo) ? lo : std::min(r, hi);  // NaN saturates low, as for int8
  return low_bit_int_from_int64(t, static_cast<int64_t>(c));
}

Status quantize_linear_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const std::vector<float> scale = scales_as_float(ctx.input(1));
  const ScaleMap s = scale_map(x.shape(), ctx.input(1), ctx.attrs());
  const std::vector<int32_t> zp = zero_points(ctx, 2, s.entries);
  std::vector<float> float_zp(static_cast<size_t>(s.entries), 0.0f);
  if (y.dtype() == DType::F4E2M1 && ctx.has_input(2))
    for (int64_t i = 0; i < s.entries && i < ctx.input(2).numel(); ++i)
      float_zp[static_cast<size_t>(i)] = static_cast<float>(load_as_double(DType::F4E2M1, ctx.input(2).data(), i));
  const bool saturate = ctx.attrs().get_int("saturate", 1) != 0;
  Status status = Status::ok();
  visit_dtype(x.dtype(), [&](auto xtag) {
    using TX = decltype(xtag);
    if constexpr (std::is_same_v<TX, bool> || std::is_same_v<TX, std::string>) {
      status = dtype_unsupported("QuantizeLinear", x.dtype());
    } else {
      const TX* xp = x.data_as<TX>();
      auto run = [&](auto* yp) {
        using Q = std::remove_pointer_t<decltype(yp)>;
        s.for_each([&](int64_t c, int64_t i) {
          const auto k = static_cast<size_t>(c);
          yp[i] = saturate_round<Q>(static_cast<float>(to_compute(xp[i])) / scale[k], zp[k]);
        });
      };
      if (y.dtype() == DType::U8) run(y.data_as<uint8_t>());
      else if (y.dtype() == DType::I8) run(y.data_as<int8_t>());
      else if (y.dtype() == DType::U16) run(y.data_as<uint16_t>());
      else if (y.dtype() == DType::I16) run(y.data_as<int16_t>());
      else if (dtype_is_low_bit(y.dtype())) {
        uint8_t* yp = y.data_as<uint8_t>();
        s.for_each([&](int64_t c, int64_t i) {
          const auto k = static_cast<size_t>(c);
          yp[i] = quantize_low_bit(y.dtype(), static_cast<float>(to_compute(xp[i])) / scale[k], zp[k], float_zp[k], saturate);
        });
      } else {
        status = dtype_unsupported("QuantizeLinear", y.dtype());
      }
    }
  });
  return status;
}

// y[i] = value(i, channel) * scale[channel], written at y's type (float, fp16 or bf16).
template <class F>
Status write_dequantized(Tensor& y, const ScaleMap& s, const std::vector<float>& scale, F value) {
  Status status = Status::ok();
  visit_dtype(y.dtype(), [&](auto ytag) {
    using TY = decltype(ytag);
    if constexpr (std::is_same_v<TY, float> || is_half_like_v<TY>) {
      TY* yp = y.data_as<TY>();
      s.for_each([&](int64_t c, int64_t i) {
        const auto k = static_cast<size_t>(c);
        yp[i] = from_compute<TY>(value(i, k) * scale[k]);
      });
    } else {
      status = dtype_unsupported("DequantizeLinear", y.dtype());
    }
  });
  return status;
}

Status dequantize_linear_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const std::vector<float> scale = scales_as_float(ctx.input(1));
  const ScaleMap s = scale_map(x.shape(), ctx.input(1), ctx.attrs());
  const std::vector<int32_t> zp = zero_points(ctx, 2, s.entries);
  if (dtype_is_low_bit(x.dtype())) {
    // Low-bit floats decode to their value (no zero point: float8's is 0, float4's is ignored
    // as in onnx's reference); the 4- and 2-bit integers subtract theirs.
    const uint8_t* xp = x.data_as<uint8_t>();
    const DType t = x.dtype();
    if (dtype_is_low_bit_float(t))
      return write_dequantized(y, s, scale, [&](int64_t i, size_t) { return low_bit_float_to_float(t, xp[i]); });
    return write_dequantized(y, s, scale, [&](int64_t i, size_t k) {
      return static_cast<float>(low_bit_int_to_int64(t, xp[i]) - zp[k]);
    });
  }
  Status status = Status::ok();
  visit_dtype(x.dtype(), [&](auto xtag) {
    using TX = decltype(xtag);
    if constexpr (!std::is_integral_v<TX> || std::is_same_v<TX, bool>) {
      status = dtype_unsupported("DequantizeLinear", x.dtype());
    } else {
      const TX* xp = x.data_as<TX>();
      status = write_dequantized(y, s, scale, [&](int64_t i, size_t k) {
        return static_cast<float>(static_cast<int32_t>(xp[i]) - zp[k]);
      });
    }
  });
  return status;
}

// uint8 with the range widened to include 0, so that 0 is exactly representable.
Status dynamic_quantize_linear_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const float* xp = x.data_as<float>();
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < x.numel(); ++i) {
    lo = std::min(lo, xp[i]);
    hi = std::max(hi, xp[i]);
  }
  const float scale = (hi - lo) / 255.0f;
  const uint8_t zero_point = scale > 0.0f ? saturate_round<uint8_t>(-lo / scale, 0) : 0;
  uint8_t* yp = ctx.output(0).data_as<uint8_t>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = scale > 0.0f ? saturate_round<uint8_t>(xp[i] / scale, zero_point) : 0;
  if (ctx.has_output(1)) *ctx.output(1).data_as<float>() = scale;
  if (ctx.has_output(2)) *ctx.output(2).data_as<uint8_t>() = zero_point;
  return Status::ok();
}

// ai.ignis DynamicQuantizeRows: per row (last axis), the arithmetic of
// kernels/dynamic_quantize_rows.h, the ops it stands for step by step (Abs, ReduceMax, Max,
// Div; Div, Round, Clip, Cast to int8). A NaN element is left out of the row's maximum.
Status dynamic_quantize_rows_kernel(KernelContext& ctx) {
  const QuantizeRowsCall c = quantize_rows_call(ctx);
  for (int64_t r = 0; r < c.rows; ++r) {
    const float* row = c.x + r * c.k;
    float m = 0.0f;
    for (int64_t i = 0; i < c.k; ++i) m = std::max(m, std::fabs(row[i]));
    const float scale = row_scale(m, c);
    if (c.scales) c.scales[r] = scale;
    for (int64_t i = 0; i < c.k; ++i) c.y[r * c.k + i] = row_code(row[i], scale, c.limit);
  }
  return Status::ok();
}

}  // namespace

void register_quantize_integer(KernelRegistry& r);  // quantize_integer.cc
void register_quantize_nbits(KernelRegistry& r);    // quantize_nbits.cc
void register_quantize_binary(KernelRegistry& r);   // quantize_binary.cc (QLinearAdd, QLinearMul)
void register_quantize_lookup(KernelRegistry& r);   // quantize_lookup.cc
void register_quantize_pool(KernelRegistry& r);     // quantize_pool.cc

void register_quantize(KernelRegistry& r) {
  register_quantize_integer(r);
  register_quantize_nbits(r);
  register_quantize_binary(r);
  register_quantize_lookup(r);
  register_quantize_pool(r);
  KernelDef q;
  q.op_type = "QuantizeLinear";
  q.since_opset = 10;
  q.types = DTypeSet{DType::F32, DType::F16, DType::BF16, DType::I32};
  q.id = "ref/quantizelinear";
  q.fn = quantize_linear_kernel;
  r.add(q);

  KernelDef dq;
  dq.op_type = "DequantizeLinear";
  dq.since_opset = 10;
  dq.types = DTypeSet{DType::U8, DType::I8, DType::U16, DType::I16, DType::I32} | DTypeSet::float8() |
             DTypeSet::int4() | DTypeSet::int2() | DTypeSet{DType::F4E2M1};
  dq.id = "ref/dequantizelinear";
  dq.fn = dequantize_linear_kernel;
  r.add(dq);

  KernelDef dyn;
  dyn.op_type = "DynamicQuantizeLinear";
  dyn.since_opset = 11;
  dyn.types = DTypeSet{DType::F32};
  dyn.id = "ref/dynamicquantizelinear";
  dyn.fn = dynamic_quantize_linear_kernel;
  r.add(dyn);

  r.add({.domain = "ai.ignis", .op_type = "DynamicQuantizeRows", .since_opset = 1, .types = DTypeSet{DType::F32},
         .id = "ref/dynamicquantizerows", .fn = dynamic_quantize_rows_kernel});
}

}  // namespace ignis::kernels::ref
