// SPDX-License-Identifier: Apache-2.0
// Reference com.microsoft QLinearAdd and QLinearMul: C = quantize(dequantize(A) + (or *)
// dequantize(B)), with A and B broadcast as Add broadcasts them; the per-element arithmetic is
// kernels/qlinear_add.h and kernels/qlinear_mul.h.
#include <cstdint>

#include "core/broadcast.h"
#include "kernels/qlinear_add.h"
#include "kernels/qlinear_mul.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {
namespace {

template <class T, class Params, int32_t (*one)(int32_t, int32_t, const Params&)>
void apply_all(const Tensor& a, const Tensor& b, Tensor& c, const Params& p) {
  const T* pa = a.data_as<T>();
  const T* pb = b.data_as<T>();
  T* pc = c.data_as<T>();
  if (c.numel() == 0) return;
  StridedIndexer it(c.shape(), {broadcast_strides(a.shape(), c.shape()), broadcast_strides(b.shape(), c.shape())});
  int64_t i = 0;
  do {
    pc[i++] = static_cast<T>(one(pa[it.offset(0)], pb[it.offset(1)], p));
  } while (it.next());
}

template <class Params, Params (*params)(const KernelContext&), int32_t (*one)(int32_t, int32_t, const Params&)>
Status binary_kernel(KernelContext& ctx) {
  const Params p = params(ctx);
  if (p.is_signed) apply_all<int8_t, Params, one>(ctx.input(0), ctx.input(3), ctx.output(0), p);
  else apply_all<uint8_t, Params, one>(ctx.input(0), ctx.input(3), ctx.output(0), p);
  return Status::ok();
}

}  // namespace

void register_quantize_binary(KernelRegistry& r) {
  r.add({.domain = "com.microsoft", .op_type = "QLinearAdd", .since_opset = 1, .types = DTypeSet{DType::U8, DType::I8},
         .id = "ref/qlinearadd",
         .fn = binary_kernel<QLinearAddParams, qlinear_add_params, qlinear_add_one>});
  r.add({.domain = "com.microsoft", .op_type = "QLinearMul", .since_opset = 1, .types = DTypeSet{DType::U8, DType::I8},
         .id = "ref/qlinearmul",
         .fn = binary_kernel<QLinearMulParams, qlinear_mul_params, qlinear_mul_one>});
}

}  // namespace ignis::kernels::ref
