// SPDX-License-Identifier: Apache-2.0
// Transpose cases: 2-D transposes of every size around the 8x8 blocks (1..17 by 1..17 and
// larger odd ones), batched transposes, NCHW <-> NHWC, permutations of rank 3 to 5 that keep
// or move the innermost dim, the default (reversed) permutation, an int32 tensor, an empty
// one, and one large enough to split over threads.
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
  return cases;
}

}  // namespace ignis::kernel_cases
