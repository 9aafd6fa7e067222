// SPDX-License-Identifier: Apache-2.0
// ai.onnx.ml Scaler on float32 input: Y = (X - offset) * scale per column of the last axis,
// each value computed in double and rounded once, as the reference kernel (ref/ml.cc) does, so
// the two agree to the bit. The reference reads any input type through a double copy of X and
// finds each value's column by a division; here the columns' offsets and scales are expanded
// once per run and the rows stream through them (plain C++, vectorized by the compiler).
#include <cstdint>
#include <vector>

#include "kernels/ref/ml_internal.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

// A length-1 attribute applies to every column, an empty one is `fallback`.
std::vector<double> per_column(const std::vector<float>& v, int64_t columns, double fallback) {
  std::vector<double> out(static_cast<size_t>(columns), fallback);
  for (int64_t j = 0; j < columns && !v.empty(); ++j) out[static_cast<size_t>(j)] = v[v.size() == 1 ? 0 : static_cast<size_t>(j)];
  return out;
}

Status scaler_f32(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const int64_t columns = xt.rank() == 0 ? 1 : xt.dim(xt.rank() - 1);
  if (columns <= 0 || xt.numel() == 0) return Status::ok();
  const std::vector<double> offset = per_column(ctx.attrs().get_floats("offset"), columns, 0.0);
  const std::vector<double> scale = per_column(ctx.attrs().get_floats("scale"), columns, 1.0);
  const float* x = xt.data_as<float>();
  float* y = ctx.output(0).data_as<float>();
  const int64_t rows = xt.numel() / columns;
  for (int64_t r = 0; r < rows; ++r, x += columns, y += columns)
    for (int64_t j = 0; j < columns; ++j)
      y[j] = static_cast<float>((static_cast<double>(x[j]) - offset[static_cast<size_t>(j)]) * scale[static_cast<size_t>(j)]);
  return Status::ok();
}

}  // namespace

void register_ml_scaler(KernelRegistry& r) {
  // No ISA: plain C++, preferred over the reference wherever optimized kernels are.
  r.add({.domain = ref::kMl,
         .op_type = "Scaler",
         .types = {DType::F32},
         .priority = 1,
         .role = KernelRole::Optimized,
         .id = "cpu/scaler_f32",
         .fn = scaler_f32});
}

}  // namespace ignis::kernels::x86
