// SPDX-License-Identifier: Apache-2.0
// Transpose and Pad cases. Transpose: 2-D transposes of every size around the 8x8 blocks
// (1..17 by 1..17 and larger odd ones), batched transposes, NCHW <-> NHWC, permutations of
// rank 3 to 5 that keep or move the innermost dim, the default (reversed) permutation, an
// int32 tensor, an empty one, and one large enough to split over threads. Pad: below.
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

KernelCase transpose_case(Shape shape, std::vector<int64_t> perm, DType dtype = DType::F32) {
  KernelCase c;
  c.op_type = "Transpose";
  c.opset = 13;
  c.inputs = {shape};
  c.label = str_cat("X", shape.str());
  if (!perm.empty()) {
    c.attrs.set("perm", ints_attr(perm));
    c.label += " perm=[";
    for (size_t i = 0; i < perm.size(); ++i) c.label += str_cat(i ? "," : "", perm[i]);
    c.label += "]";
  }
  if (dtype != DType::F32) {
    c.input_dtypes = {dtype};
    c.input_ranges = {{-1000000.0, 1000000.0}};
    c.label += str_cat(" ", dtype_name(dtype));
  }
  return c;
}

}  // namespace

std::vector<KernelCase> transpose_cases() {
  std::vector<KernelCase> cases;
  for (int64_t n : {1, 3, 7, 8, 9, 16, 17})
    for (int64_t m : {1, 5, 8, 12, 17}) cases.push_back(transpose_case({n, m}, {1, 0}));
  cases.push_back(transpose_case({257, 100}, {1, 0}));
  cases.push_back(transpose_case({3, 40, 33}, {0, 2, 1}));
  cases.push_back(transpose_case({2, 19, 5, 7}, {0, 2, 3, 1}));   // NCHW -> NHWC
  cases.push_back(transpose_case({2, 5, 7, 19}, {0, 3, 1, 2}));   // NHWC -> NCHW
  cases.push_back(transpose_case({4, 9, 10, 3}, {2, 0, 3, 1}));
  cases.push_back(transpose_case({2, 3, 4, 5, 9}, {4, 2, 0, 3, 1}));
  cases.push_back(transpose_case({6, 10, 12}, {1, 0, 2}));        // innermost kept: rows copied
  cases.push_back(transpose_case({5, 9, 11}, {}));                // reversed
  cases.push_back(transpose_case({1, 16, 1, 24}, {3, 1, 2, 0}));  // extent-1 dims
  cases.push_back(transpose_case({13, 21}, {1, 0}, DType::I32));
  cases.push_back(transpose_case({0, 8}, {1, 0}));
  cases.push_back(transpose_case({1, 64, 56, 56}, {0, 2, 3, 1}));  // split over two threads
  // Bytes (a quantized channels-last run's edges): both directions, odd extents, a plane of
  // fewer than 8 in one dim (the strided copy), 3-D.
  cases.push_back(transpose_case({2, 19, 5, 7}, {0, 2, 3, 1}, DType::U8));
  cases.push_back(transpose_case({1, 7, 7, 2048}, {0, 3, 1, 2}, DType::U8));
  cases.push_back(transpose_case({1, 64, 56, 56}, {0, 2, 3, 1}, DType::U8));
  cases.push_back(transpose_case({3, 5, 40}, {0, 2, 1}, DType::I8));
  cases.push_back(transpose_case({33, 70}, {1, 0}, DType::I8));
  return cases;
}

}  // namespace ignis::kernel_cases

// Pad: constant padding of the last axis for row widths 1..17 (every tail of the 8-lane
// fill), the spatial axes of NCHW (tf's SAME padding and symmetric), padding of outer axes
// only (whole rows of the value), ranks 1, 2, 3 and 5, cropping by negative pads, axes (opset
// 18), the pads attribute before opset 11, a non-zero value, no padding at all, empty tensors,
// one large enough to split over threads, and the modes the fast kernel hands back to the
// reference (reflect, edge).
namespace ignis::kernel_cases {

namespace {

std::vector<double> as_doubles(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

// Pad at opset 18 with pads (and axes when given) as inputs; `value` adds a random
// constant_value.
KernelCase pad_case(Shape x, std::vector<int64_t> pads, std::vector<int64_t> axes = {}, bool value = false,
                    const std::string& mode = "constant") {
  KernelCase c;
  c.op_type = "Pad";
  c.opset = 18;
  c.inputs = {x, Shape{static_cast<int64_t>(pads.size())}};
  c.input_dtypes = {DType::F32, DType::I64};
  c.input_values = {{}, as_doubles(pads)};
  c.label = str_cat("X", x.str(), " pads=", str_list(pads));
  if (value || !axes.empty()) {
    c.inputs.push_back(Shape{});
    c.input_dtypes.push_back(value ? DType::F32 : DType::Undefined);
    c.label += value ? " value" : "";
  }
  if (!axes.empty()) {
    c.inputs.push_back(Shape{static_cast<int64_t>(axes.size())});
    c.input_dtypes.push_back(DType::I64);
    c.input_values.resize(3);
    c.input_values.push_back(as_doubles(axes));
    c.label += str_cat(" axes=", str_list(axes));
  }
  if (mode != "constant") {
    c.attrs.set("mode", string_attr(mode));
    c.label += " mode=" + mode;
  }
  return c;
}

}  // namespace

std::vector<KernelCase> pad_cases() {
  std::vector<KernelCase> cases;
  for (int64_t w = 1; w <= 17; ++w) {
    cases.push_back(pad_case({2, 3, w}, {0, 0, 1, 0, 0, 2}));
    cases.push_back(pad_case({1, 2, 3, w}, {0, 0, 0, 0, 0, 0, 1, 1}));  // tf SAME, stride 2
  }
  cases.push_back(pad_case({1, 4, 9, 11}, {0, 0, 1, 1, 0, 0, 1, 1}, {}, true));
  cases.push_back(pad_case({1, 4, 9, 11}, {0, 0, 2, 0, 0, 0, 0, 3}));
  cases.push_back(pad_case({3, 4, 5}, {1, 2, 0, 0, 1, 0}));  // outer axes only: whole rows
  cases.push_back(pad_case({13}, {3, 4}, {}, true));
  cases.push_back(pad_case({5, 6}, {-1, 2, 1, -2}));           // cropping and padding
  cases.push_back(pad_case({2, 3, 10}, {0, 0, -3, 0, 0, 15}));  // more padding than the row keeps
  cases.push_back(pad_case({2, 3, 4, 5, 6}, {0, 1, 0, 1, 2, 0, 0, 1, 1, 0}));
  cases.push_back(pad_case({2, 3, 7, 8}, {1, 2, 0, 1}, {-1, 2}));
  cases.push_back(pad_case({2, 3, 7, 8}, {0, 0, 0, 0, 0, 0, 0, 0}));
  cases.push_back(pad_case({2, 0, 3}, {0, 0, 1, 0, 0, 1}));
  cases.push_back(pad_case({1, 144, 112, 112}, {0, 0, 0, 0, 0, 0, 1, 1}));  // split over threads
  cases.push_back(pad_case({1, 3, 6, 7}, {0, 0, 2, 1, 0, 0, 1, 2}, {}, false, "reflect"));
  cases.push_back(pad_case({1, 3, 6, 7}, {0, 0, 2, 1, 0, 0, 1, 2}, {}, false, "edge"));
  for (int64_t opset : {2, 10}) {
    KernelCase c;
    c.op_type = "Pad";
    c.opset = opset;
    c.inputs = {Shape{2, 3, 5, 9}};
    c.attrs.set("pads", ints_attr({0, 1, 1, 2, 0, 0, 2, 1}));
    c.attrs.set("value", float_attr(-0.75f));
    c.label = str_cat("X[2, 3, 5, 9] pads attribute, opset ", opset);
    cases.push_back(c);
  }
  return cases;
}

}  // namespace ignis::kernel_cases
