// SPDX-License-Identifier: Apache-2.0
// Concat cases: every axis (negative too), one and many outer blocks, inputs of unequal extents,
// a single input, and copies large enough to be split over threads (a densenet-like feature
// map of one outer block, and many small rows), where the parts' borders fall inside rows.
#include <vector>

#include "core/strings.h"
#include "kernels/cases/cases.h"
#include "testing/op_runner.h"

namespace ignis::kernel_cases {

std::vector<KernelCase> concat_cases() {
  struct Spec {
    std::vector<Shape> inputs;
    int64_t axis;
  };
  const Spec specs[] = {
      {{{1, 64, 28, 28}, {1, 32, 28, 28}, {1, 32, 28, 28}, {1, 5, 28, 28}}, 1},
      {{{2, 3, 5}, {2, 4, 5}}, 1},
      {{{3, 7}, {5, 7}, {1, 7}}, 0},
      {{{4, 3, 2}, {4, 3, 9}}, -1},
      {{{6, 5, 7, 3}}, 2},
      {{{2, 1, 31, 57}, {2, 2, 31, 57}, {2, 1, 31, 57}}, -3},
      {{{4096, 17}, {4096, 6}}, 1},
      {{{1, 300, 1000}, {1, 77, 1000}}, 1},
  };
  std::vector<KernelCase> cases;
  for (const Spec& s : specs) {
    KernelCase c;
    c.op_type = "Concat";
    c.opset = 13;
    c.inputs = s.inputs;
    c.attrs.set("axis", int_attr(s.axis));
    std::string shapes;
    for (const Shape& x : s.inputs) shapes += x.str();
    c.label = str_cat(shapes, " axis=", s.axis);
    cases.push_back(c);
  }
  return cases;
}

}  // namespace ignis::kernel_cases
