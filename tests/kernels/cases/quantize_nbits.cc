// SPDX-License-Identifier: Apache-2.0
// com.microsoft MatMulNBits cases: 1, 3 and 17 rows of A (the int8 path's row counts and the
// float GEMM beyond), a batched A, K below, at and off a multiple of the block (16 to 128), N
// around the 16-column groups (1, 7, 16, 33, 50), with and without zero points and bias (bias
// without zero points leaves input 3 omitted), at accuracy_level 0 and 4.
//
// Tolerance. Level 0 dequantizes B exactly as the reference ((q - zp) * scale in float32); only
// the order of the float sums differs, with |W| <= 15 * 0.1, hence error_scale 2. Level 4 also
// rounds each A element to int8 per K block (error <= max|a| / 254, uniform, so the error of a
// sum of K products is about sqrt(K) * rms(W) * 0.0023 with rms(W) ~ 0.3 here): error_scale 4000
// allows 8e-3 * sqrt(K), ~10 standard deviations, while a misplaced nibble or scale costs
// O(rms(W) * sqrt(K)), 40 times more.
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

std::vector<KernelCase> matmul_nbits_cases() {
  struct Dims {
    Shape a;
    int64_t k, n, block;
  };
  const std::vector<Dims> dims = {
      {{1, 16}, 16, 1, 16},     {{1, 45}, 45, 7, 16},      {{3, 45}, 45, 33, 32},  {{17, 45}, 45, 33, 32},
      {{1, 96}, 96, 50, 32},    {{3, 200}, 200, 16, 64},   {{17, 200}, 200, 50, 128}, {{2, 3, 64}, 64, 17, 32},
      {{1, 768}, 768, 40, 32},  {{4, 130}, 130, 48, 128},  {{1, 32}, 32, 50, 32},
  };
  enum class Extra { None, ZeroPoints, ZeroPointsBias, Bias };
  std::vector<KernelCase> cases;
  for (int64_t level : {0, 4}) {
    for (const Dims& d : dims) {
      for (Extra e : {Extra::None, Extra::ZeroPoints, Extra::ZeroPointsBias, Extra::Bias}) {
        const int64_t blocks = (d.k + d.block - 1) / d.block;
        KernelCase c;
        c.domain = "com.microsoft";
        c.op_type = "MatMulNBits";
        c.opset = 1;
        c.attrs.set("K", int_attr(d.k));
        c.attrs.set("N", int_attr(d.n));
        c.attrs.set("bits", int_attr(4));
        c.attrs.set("block_size", int_attr(d.block));
        c.attrs.set("accuracy_level", int_attr(level));
        c.inputs = {d.a, Shape{d.n, blocks, d.block / 2}, Shape{d.n * blocks}};
        c.input_dtypes = {DType::F32, DType::U8, DType::F32};
        c.input_ranges = {{1.0, 0.0}, {1.0, 0.0}, {0.01, 0.1}};
        c.weight_inputs = {1, 2};
        if (e != Extra::None) {
          c.inputs.push_back(Shape{d.n * ((blocks + 1) / 2)});
          c.input_dtypes.push_back(e == Extra::Bias ? DType::Undefined : DType::U8);
          if (e != Extra::Bias) c.weight_inputs.push_back(3);
        }
        if (e == Extra::ZeroPointsBias || e == Extra::Bias) {
          c.inputs.push_back(Shape{});
          c.input_dtypes.push_back(DType::Undefined);
          c.inputs.push_back(Shape{d.n});
          c.input_dtypes.push_back(DType::F32);
        }
        c.depth = d.k;
        c.error_scale = level == 4 ? 4000.0 : 2.0;
        c.label = str_cat("A ", d.a.str(), " N=", d.n, " block_size=", d.block, " accuracy_level=", level,
                          e == Extra::None             ? ""
                          : e == Extra::ZeroPoints     ? " zero points"
                          : e == Extra::ZeroPointsBias ? " zero points, bias"
                                                       : " bias");
        cases.push_back(std::move(c));
      }
    }
  }
  return cases;
}

}  // namespace ignis::kernel_cases
