// SPDX-License-Identifier: Apache-2.0
// Reference com.microsoft QLinearAdd: C = quantize(dequantize(A) + dequantize(B)), with A and
// B broadcast as Add broadcasts them; the per-element arithmetic is kernels/qlinear_add.h.
#include <cstdint>

#include "core/broadcast.h"
#include "kernels/qlinear_add.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {
namespace {

template <class T>
void add_all(const Tensor& a, const Tensor& b, Tensor& c, const QLinearAddParams& p) {
  const T* pa = a.data_as<T>();
  const T* pb = b.data_as<T>();
  T* pc = c.data_as<T>();
  if (c.numel() == 0) return;
  StridedIndexer it(c.shape(), {broadcast_strides(a.shape(), c.shape()), broadcast_strides(b.shape(), c.shape())});
  int64_t i = 0;
  do {
    pc[i++] = static_cast<T>(qlinear_add_one(pa[it.offset(0)], pb[it.offset(1)], p));
  } while (it.next());
}

Status qlinear_add_kernel(KernelContext& ctx) {
  const QLinearAddParams p = qlinear_add_params(ctx);
  if (p.is_signed) add_all<int8_t>(ctx.input(0), ctx.input(3), ctx.output(0), p);
  else add_all<uint8_t>(ctx.input(0), ctx.input(3), ctx.output(0), p);
  return Status::ok();
}

}  // namespace

void register_quantize_add(KernelRegistry& r) {
  r.add({.domain = "com.microsoft", .op_type = "QLinearAdd", .since_opset = 1, .types = DTypeSet{DType::U8, DType::I8},
         .id = "ref/qlinearadd", .fn = qlinear_add_kernel});
}

}  // namespace ignis::kernels::ref
