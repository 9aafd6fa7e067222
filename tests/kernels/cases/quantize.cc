// SPDX-License-Identifier: Apache-2.0
// Quantized op cases: MatMulInteger and ai.ignis MatMulIntegerToFloat over every uint8/int8
// pairing of A and B, shapes around the int8 GEMM's tiles (6 and 3 rows, 32 and 16 columns,
// depths not a multiple of 4), with no, one-value and per-row / per-column zero points,
// batched A; DynamicQuantizeLinear on sizes around the 8-lane width and split over threads.
// Integer outputs must match the reference exactly.
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

struct Dims {
  Shape a;
  int64_t k, n;
};

enum class ZeroPoints { None, Scalar, Vector };

const std::vector<Dims>& matmul_dims() {
  static const std::vector<Dims> dims = {
      {{1, 1}, 1, 1},     {{5, 3}, 3, 7},       {{7, 13}, 13, 33},     {{6, 64}, 64, 64},
      {{9, 65}, 65, 100}, {{13, 17}, 17, 16},   {{2, 3, 9}, 9, 40},    {{130, 384}, 384, 72},
      {{4, 1536}, 1536, 3}, {{37, 96}, 96, 160}};
  return dims;
}

const char* type_label(DType t) { return t == DType::U8 ? "u8" : "s8"; }

// Cases of an op reading (A, B) at inputs 0, 1 and their zero points at `a_zp`, `a_zp + 1`;
// `extra` adds the op's other inputs (after B) for one case.
template <class Extra>
std::vector<KernelCase> integer_matmul_cases(const char* domain, const char* op, int64_t opset, Extra extra) {
  std::vector<KernelCase> cases;
  for (DType ta : {DType::U8, DType::I8}) {
    for (DType tb : {DType::I8, DType::U8}) {
      for (const Dims& d : matmul_dims()) {
        for (ZeroPoints zp : {ZeroPoints::None, ZeroPoints::Scalar, ZeroPoints::Vector}) {
          // The per-row A zero point needs a 2-D A (its rows are axis -2).
          if (zp == ZeroPoints::Vector && d.a.rank() != 2) continue;
          KernelCase c;
          c.domain = domain;
          c.op_type = op;
          c.opset = opset;
          c.inputs = {d.a, Shape{d.k, d.n}};
          c.input_dtypes = {ta, tb};
          extra(c, d);
          if (zp != ZeroPoints::None) {
            const int64_t m = d.a[d.a.rank() - 2];
            c.inputs.push_back(zp == ZeroPoints::Vector ? Shape{m} : Shape{});
            c.inputs.push_back(zp == ZeroPoints::Vector ? Shape{d.n} : Shape{});
            c.input_dtypes.push_back(ta);
            c.input_dtypes.push_back(tb);
            c.weight_inputs = {1, static_cast<int>(c.inputs.size()) - 1};
          } else {
            c.weight_inputs = {1};
          }
          c.label = str_cat("A ", type_label(ta), d.a.str(), " B ", type_label(tb), Shape{d.k, d.n}.str(),
                            zp == ZeroPoints::None ? "" : zp == ZeroPoints::Scalar ? " scalar zero points"
                                                                                    : " per-row/column zero points");
          cases.push_back(std::move(c));
        }
      }
    }
  }
  return cases;
}

}  // namespace

std::vector<KernelCase> matmul_integer_cases() {
  return integer_matmul_cases("", "MatMulInteger", 10, [](KernelCase&, const Dims&) {});
}

// Inputs: A, B, scale (one value or one per column, alternating), zero points, and a bias on
// every other shape. The zero points come at 3 and 4, so a bias needs them present: the cases
// without zero points have no bias.
std::vector<KernelCase> matmul_integer_to_float_cases() {
  int index = 0;
  std::vector<KernelCase> cases = integer_matmul_cases("ai.ignis", "MatMulIntegerToFloat", 1, [&](KernelCase& c, const Dims& d) {
    c.inputs.push_back(index++ % 2 == 0 ? Shape{d.n} : Shape{});
    c.input_dtypes.push_back(DType::F32);
  });
  for (KernelCase& c : cases) {
    if (c.inputs.size() == 5 && (index++ % 2) == 0) {
      c.inputs.push_back(Shape{c.inputs[1][1]});
      c.input_dtypes.push_back(DType::F32);
      c.label += " bias";
    }
  }
  return cases;
}

std::vector<KernelCase> dynamic_quantize_linear_cases() {
  std::vector<KernelCase> cases;
  for (const Shape& s : {Shape{1}, Shape{7}, Shape{8}, Shape{9}, Shape{3, 37}, Shape{0, 4}, Shape{128, 384},
                         Shape{2, 130, 257}}) {
    KernelCase c;
    c.op_type = "DynamicQuantizeLinear";
    c.opset = 11;
    c.inputs = {s};
    c.label = str_cat("X", s.str());
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace ignis::kernel_cases
