// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the integer ops of quantized models: MatMulInteger, ConvInteger,
// QLinearMatMul and QLinearConv.
//
// Each subtracts the zero points into exact integers held as doubles (|q - zp| <= 255 and a sum
// of products stays far below 2^53, so nothing rounds), runs the float64 reference MatMul or
// Conv on them, and either stores the int32 accumulators (the *Integer ops) or requantizes in
// onnxruntime's arithmetic (float32 throughout, so that quantized models give its bytes):
// y = saturate(round_half_even(fl32(float(acc) * m)) + zp_y), m = fl32(fl32(scale_a * scale_b) / scale_y).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {
namespace {

// Zero point entry k of input `input` (0 when omitted); a one-entry tensor applies to all.
std::vector<double> zero_point_values(const KernelContext& ctx, int input) {
  if (!ctx.has_input(input)) return {0.0};
  const Tensor& zp = ctx.input(input);
  std::vector<double> out(static_cast<size_t>(std::max<int64_t>(zp.numel(), 1)), 0.0);
  for (int64_t i = 0; i < zp.numel(); ++i) out[static_cast<size_t>(i)] = load_as_double(zp.dtype(), zp.data(), i);
  return out;
}

// q - zp as float64, with zp per entry of axis `axis` when it has more than one entry.
Tensor centered(const Tensor& q, const std::vector<double>& zp, int axis) {
  Tensor out = Tensor::empty(DType::F64, q.shape());
  double* o = out.data_as<double>();
  int64_t inner = 1;
  for (int d = axis + 1; d < q.shape().rank(); ++d) inner *= q.shape()[d];
  const int64_t channels = axis < q.shape().rank() ? q.shape()[axis] : 1;
  for (int64_t i = 0; i < q.numel(); ++i) {
    const size_t k = zp.size() > 1 ? static_cast<size_t>((i / inner) % channels) : 0;
    o[i] = load_as_double(q.dtype(), q.data(), i) - zp[k];
  }
  return out;
}

// Runs the float64 reference kernel of `op_type` on `inputs`, writing `out` (float64).
Status run_float64(const KernelContext& ctx, std::string_view op_type, std::vector<const Tensor*> inputs, Tensor& out) {
  std::vector<DType> dtypes;
  for (const Tensor* t : inputs) dtypes.push_back(t ? t->dtype() : DType::Undefined);
  const KernelDef* def = KernelRegistry::global().reference("", op_type, 13, DType::F64);
  if (def == nullptr) return internal_error(str_cat("no float64 reference ", op_type, " kernel is registered"));
  std::vector<const Tensor*> constants(inputs.size(), nullptr);
  IGNIS_ASSIGN_OR_RETURN(auto kernel, make_kernel(*def, KernelInit{ctx.attrs(), 13, dtypes, constants}));
  Tensor* outs[1] = {&out};
  Scratch scratch;
  KernelContext inner(ctx.attrs(), 13, inputs, outs, ctx.pool(), &scratch);
  return kernel->run(inner);
}

// A scale input as floats (one entry per output channel, or one for all).
std::vector<float> scale_values(const Tensor& s) {
  std::vector<float> out(static_cast<size_t>(std::max<int64_t>(s.numel(), 1)), 1.0f);
  for (int64_t i = 0; i < s.numel(); ++i) out[static_cast<size_t>(i)] = static_cast<float>(load_as_double(s.dtype(), s.data(), i));
  return out;
}

// saturate(round_half_even(fl32(float(acc) * m)) + zp): acc an exact integer held as a double
// (converted to float32 as int32 would be, rounding half to even past 2^24), the product and its
// rounding in float32 (the default rounding mode: half to even). NaN saturates low.
template <class Q>
Q requantize_value(double acc, float m, double zp) {
  const float product = static_cast<float>(acc) * m;
  const double r = static_cast<double>(std::nearbyint(product)) + zp;
  if (!(r >= std::numeric_limits<Q>::min())) return std::numeric_limits<Q>::min();
  return static_cast<Q>(std::min(r, static_cast<double>(std::numeric_limits<Q>::max())));
}

// Writes y = requantize_value(acc, multiplier[channel], zp) with the output channel on `axis` of
// the accumulator (the last axis for MatMul, axis 1 for Conv).
Status requantize(const Tensor& acc, const std::vector<float>& multiplier, double zp, int axis, Tensor& y) {
  const double* a = acc.data_as<double>();
  int64_t inner = 1;
  for (int d = axis + 1; d < acc.shape().rank(); ++d) inner *= acc.shape()[d];
  const int64_t channels = acc.shape()[axis];
  auto write = [&](auto* yp) {
    using Q = std::remove_pointer_t<decltype(yp)>;
    for (int64_t i = 0; i < acc.numel(); ++i) {
      const size_t k = multiplier.size() > 1 ? static_cast<size_t>((i / inner) % channels) : 0;
      yp[i] = requantize_value<Q>(a[i], multiplier[k], zp);
    }
  };
  if (y.dtype() == DType::U8) write(y.data_as<uint8_t>());
  else if (y.dtype() == DType::I8) write(y.data_as<int8_t>());
  else return unsupported(str_cat("quantized output dtype ", dtype_name(y.dtype())));
  return Status::ok();
}

void store_int32(const Tensor& acc, Tensor& y) {
  const double* a = acc.data_as<double>();
  int32_t* yp = y.data_as<int32_t>();
  for (int64_t i = 0; i < acc.numel(); ++i) yp[i] = static_cast<int32_t>(a[i]);
}

// MatMulInteger(A, B, a_zero_point, b_zero_point): a_zero_point per row of A (axis -2) or
// scalar, b_zero_point per column of B (the last axis) or scalar.
Status matmul_integer_kernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor ca = centered(a, zero_point_values(ctx, 2), std::max(a.shape().rank() - 2, 0));
  const Tensor cb = centered(b, zero_point_values(ctx, 3), b.shape().rank() - 1);
  Tensor acc = Tensor::empty(DType::F64, ctx.output(0).shape());
  IGNIS_RETURN_IF_ERROR(run_float64(ctx, "MatMul", {&ca, &cb}, acc));
  store_int32(acc, ctx.output(0));
  return Status::ok();
}

// ai.ignis MatMulIntegerToFloat(A, B, scale, a_zero_point, b_zero_point, bias, row_scale): the
// exact integer product converted to float32, times scale (per column or scalar), times
// row_scale (per row of A, broadcast over B's batch as Mul broadcasts it), plus bias, each step
// rounding as the unfused MatMulInteger -> Cast -> Mul -> Mul -> Add does.
Status matmul_integer_to_float_kernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor ca = centered(a, zero_point_values(ctx, 3), std::max(a.shape().rank() - 2, 0));
  const Tensor cb = centered(b, zero_point_values(ctx, 4), b.shape().rank() - 1);
  Tensor& y = ctx.output(0);
  Tensor acc = Tensor::empty(DType::F64, y.shape());
  IGNIS_RETURN_IF_ERROR(run_float64(ctx, "MatMul", {&ca, &cb}, acc));
  const std::vector<float> scale = scale_values(ctx.input(2));
  const float* bias = ctx.has_input(5) ? ctx.input(5).data_as<float>() : nullptr;
  const float* row_scale = ctx.has_input(6) ? ctx.input(6).data_as<float>() : nullptr;
  const int64_t rows = ctx.has_input(6) ? ctx.input(6).numel() : 1;
  const int64_t n = y.shape().rank() >= 1 ? y.shape()[y.shape().rank() - 1] : 1;
  const double* ap = acc.data_as<double>();
  float* yp = y.data_as<float>();
  for (int64_t i = 0; i < y.numel(); ++i) {
    const int64_t j = n > 0 ? i % n : 0;
    float v = static_cast<float>(static_cast<int32_t>(ap[i])) * scale[scale.size() == 1 ? 0 : static_cast<size_t>(j)];
    if (row_scale) v *= row_scale[(i / n) % rows];
    if (bias) v += bias[j];
    yp[i] = v;
  }
  return Status::ok();
}

// ConvInteger(x, w, x_zero_point, w_zero_point): w_zero_point per output channel or scalar.
Status conv_integer_kernel(KernelContext& ctx) {
  const Tensor cx = centered(ctx.input(0), zero_point_values(ctx, 2), 0);
  const Tensor cw = centered(ctx.input(1), zero_point_values(ctx, 3), 0);
  Tensor acc = Tensor::empty(DType::F64, ctx.output(0).shape());
  IGNIS_RETURN_IF_ERROR(run_float64(ctx, "Conv", {&cx, &cw}, acc));
  store_int32(acc, ctx.output(0));
  return Status::ok();
}

// The requantization multipliers scale_a * scale_b[k] / scale_y, in float32 as the scales are.
std::vector<float> multipliers(const Tensor& sa, const Tensor& sb, const Tensor& sy) {
  const float a = scale_values(sa)[0], y = scale_values(sy)[0];
  std::vector<float> m = scale_values(sb);
  for (float& v : m) v = a * v / y;
  return m;
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp).
Status qlinear_matmul_kernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(3);
  const Tensor ca = centered(a, zero_point_values(ctx, 2), std::max(a.shape().rank() - 2, 0));
  const Tensor cb = centered(b, zero_point_values(ctx, 5), b.shape().rank() - 1);
  Tensor acc = Tensor::empty(DType::F64, ctx.output(0).shape());
  IGNIS_RETURN_IF_ERROR(run_float64(ctx, "MatMul", {&ca, &cb}, acc));
  const std::vector<float> m = multipliers(ctx.input(1), ctx.input(4), ctx.input(6));
  return requantize(acc, m, zero_point_values(ctx, 7)[0], acc.shape().rank() - 1, ctx.output(0));
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B): w_scale and w_zp per
// output channel or scalar; B (int32) adds to the accumulator before requantization.
Status qlinear_conv_kernel(KernelContext& ctx) {
  const Tensor cx = centered(ctx.input(0), zero_point_values(ctx, 2), 0);
  const Tensor cw = centered(ctx.input(3), zero_point_values(ctx, 5), 0);
  Tensor bias;
  if (ctx.has_input(8)) bias = centered(ctx.input(8), {0.0}, 0);
  Tensor acc = Tensor::empty(DType::F64, ctx.output(0).shape());
  IGNIS_RETURN_IF_ERROR(run_float64(ctx, "Conv", {&cx, &cw, ctx.has_input(8) ? &bias : nullptr}, acc));
  const std::vector<float> m = multipliers(ctx.input(1), ctx.input(4), ctx.input(6));
  return requantize(acc, m, zero_point_values(ctx, 7)[0], 1, ctx.output(0));
}

}  // namespace

void register_quantize_integer(KernelRegistry& r) {
  const DTypeSet q{DType::U8, DType::I8};
  r.add({.domain = "", .op_type = "MatMulInteger", .since_opset = 10, .types = q, .id = "ref/matmulinteger",
         .fn = matmul_integer_kernel});
  r.add({.domain = "ai.ignis", .op_type = "MatMulIntegerToFloat", .since_opset = 1, .types = q,
         .id = "ref/matmulintegertofloat", .fn = matmul_integer_to_float_kernel});
  r.add({.domain = "", .op_type = "ConvInteger", .since_opset = 10, .types = q, .id = "ref/convinteger",
         .fn = conv_integer_kernel});
  r.add({.domain = "", .op_type = "QLinearMatMul", .since_opset = 10, .types = q, .id = "ref/qlinearmatmul",
         .fn = qlinear_matmul_kernel});
  r.add({.domain = "", .op_type = "QLinearConv", .since_opset = 10, .types = q, .id = "ref/qlinearconv",
         .fn = qlinear_conv_kernel});
}

}  // namespace ignis::kernels::ref
