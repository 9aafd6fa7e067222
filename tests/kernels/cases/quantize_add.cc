// SPDX-License-Identifier: Apache-2.0
// com.microsoft QLinearAdd and QLinearMul cases: uint8 and int8, with and without zero points,
// on sizes around the 8- and 16-lane widths, a residual-sized tensor the kernel splits over
// threads, an empty one, and broadcast shapes: for QLinearMul the per-channel gate of
// squeeze-excitation and a scalar (which its x86 kernel runs), for QLinearAdd a transformer's
// bias and attention-mask adds, per-channel, scalar and repeated-A forms at odd sizes (which its
// x86 kernel runs row by row), for both others (which the x86 kernels hand to the reference,
// e.g. [3, 1, 5] + [4, 5], whose three dims do not coalesce). Scales differ per input and lie
// below and above C's, so the
// ratios are not 1. Integer outputs must match the reference exactly: both do the same float32
// operations in the same order. ai.ignis QLinearLookup: random tables over uint8 and int8
// inputs of sizes around the 32- and 64-byte vectors and one the kernel splits over threads.
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

std::vector<KernelCase> qlinear_binary_cases(const std::string& op, const std::vector<std::pair<Shape, Shape>>& shapes) {
  std::vector<KernelCase> cases;
  for (DType ty : {DType::U8, DType::I8}) {
    for (bool zero_points : {true, false}) {
      for (const auto& [a, b] : shapes) {
        KernelCase c;
        c.domain = "com.microsoft";
        c.op_type = op;
        c.opset = 1;
        const DType zp = zero_points ? ty : DType::Undefined;
        c.inputs = {a, {}, {}, b, {}, {}, {}};
        c.input_dtypes = {ty, DType::F32, zp, ty, DType::F32, zp, DType::F32};
        c.input_ranges = {{1.0, 0.0}, {0.01, 0.03}, {1.0, 0.0}, {1.0, 0.0}, {0.02, 0.05}, {1.0, 0.0}, {0.02, 0.04}};
        if (zero_points) {
          c.inputs.push_back({});
          c.input_dtypes.push_back(ty);
        }
        c.label = str_cat(ty == DType::U8 ? "u8" : "s8", " A", a.str(), " B", b.str(), zero_points ? " zero points" : "");
        cases.push_back(std::move(c));
      }
    }
  }
  return cases;
}

}  // namespace

std::vector<KernelCase> qlinear_add_cases() {
  return qlinear_binary_cases("QLinearAdd", {
      {{1}, {1}},         {{7}, {7}},   {{15}, {15}},           {{16}, {16}},
      {{17}, {17}},       {{33}, {33}}, {{2, 130, 257}, {2, 130, 257}}, {{1, 256, 56, 56}, {1, 256, 56, 56}},
      {{0, 4}, {0, 4}},   {{3, 1, 5}, {4, 5}}, {{2, 8, 3}, {}},
      {{3, 37, 67}, {67}},          {{67}, {3, 37, 67}},      {{2, 3, 17, 17}, {2, 1, 1, 17}},
      {{1, 4, 5, 6}, {1, 4, 1, 1}}, {{}, {3, 9}},             {{2, 3, 4}, {1, 3, 4}},
      {{1, 128, 1536}, {1536}},
  });
}

std::vector<KernelCase> qlinear_mul_cases() {
  return qlinear_binary_cases("QLinearMul", {
      {{1}, {1}},
      {{7}, {7}},
      {{17}, {17}},
      {{2, 130, 257}, {2, 130, 257}},
      {{1, 4, 5, 6}, {1, 4, 1, 1}},
      {{1, 4, 1, 1}, {1, 4, 5, 6}},
      {{2, 24, 13, 11}, {2, 24, 1, 1}},
      {{4, 1, 1}, {1, 4, 5, 6}},
      {{1, 96, 56, 56}, {1, 96, 1, 1}},
      {{2, 8, 3}, {}},
      {{}, {3, 9}},
      {{0, 4}, {0, 4}},
      {{3, 1, 5}, {4, 5}},
      {{2, 3, 4}, {1, 3, 4}},
  });
}

std::vector<KernelCase> qlinear_lookup_cases() {
  std::vector<KernelCase> cases;
  for (DType ty : {DType::U8, DType::I8}) {
    for (const Shape& x : {Shape{1}, Shape{31}, Shape{33}, Shape{63}, Shape{64}, Shape{65}, Shape{3, 129}, Shape{1, 32, 112, 112}, Shape{0, 5}}) {
      KernelCase c;
      c.domain = "ai.ignis";
      c.op_type = "QLinearLookup";
      c.opset = 1;
      c.inputs = {x, Shape{256}};
      c.input_dtypes = {ty, ty == DType::U8 ? DType::I8 : DType::U8};
      c.label = str_cat(ty == DType::U8 ? "u8" : "s8", " X", x.str());
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

}  // namespace ignis::kernel_cases
