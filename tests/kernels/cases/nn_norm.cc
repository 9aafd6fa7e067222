// SPDX-License-Identifier: Apache-2.0
// BatchNormalization cases (inference): channel planes of 1..17 elements (every tail of the
// 8-lane FMA) and of long ones, ranks 2 to 5, one channel and many, a large epsilon, the
// per-element parameters of spatial = 0 (opset 7), one large enough to split over threads,
// and training mode, which the fast kernel hands back to the reference.
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

KernelCase batch_norm_case(Shape x, int64_t opset = 15, float epsilon = 1e-5f) {
  KernelCase c;
  c.op_type = "BatchNormalization";
  c.opset = opset;
  const Shape param{x[1]};
  c.inputs = {x, param, param, param, param};
  // scale and B in [-1, 1], mean in [-1, 1], var positive.
  c.input_ranges = {{1.0, 0.0}, {1.0, 0.0}, {1.0, 0.0}, {1.0, 0.0}, {0.05, 2.0}};
  c.weight_inputs = {1, 2, 3, 4};
  c.attrs.set("epsilon", float_attr(epsilon));
  c.label = str_cat("X", x.str(), " epsilon=", epsilon, " opset ", opset);
  return c;
}

}  // namespace

std::vector<KernelCase> batch_norm_cases() {
  std::vector<KernelCase> cases;
  for (int64_t hw = 1; hw <= 17; ++hw) cases.push_back(batch_norm_case({2, 3, 1, hw}));
  cases.push_back(batch_norm_case({4, 7}));
  cases.push_back(batch_norm_case({2, 5, 33}));
  cases.push_back(batch_norm_case({1, 1, 9, 9}));
  cases.push_back(batch_norm_case({2, 6, 3, 4, 5}));
  cases.push_back(batch_norm_case({1, 16, 28, 28}, 9, 0.5f));
  cases.push_back(batch_norm_case({1, 64, 56, 56}));  // split over threads
  {
    KernelCase c = batch_norm_case({2, 3, 4, 5}, 7);
    const Shape param{3, 4, 5};
    c.inputs = {Shape{2, 3, 4, 5}, param, param, param, param};
    c.attrs.set("spatial", int_attr(0));
    c.label += " spatial=0";
    cases.push_back(c);
  }
  {
    KernelCase c = batch_norm_case({2, 3, 4, 5});
    c.attrs.set("training_mode", int_attr(1));
    c.label += " training_mode=1";
    cases.push_back(c);
  }
  return cases;
}

}  // namespace ignis::kernel_cases
