// SPDX-License-Identifier: Apache-2.0
// Reduce* cases (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceSumSquare, ReduceL2):
// innermost axes (rows of 1..17 elements, every vector tail, and long ones), outer axes
// (strips of kept columns of odd widths), middle axes between kept ones, all axes, keepdims
// 0 and 1, and interleavings the fast kernel hands back to the reference. Axes are attributes
// (ReduceSum at opset 11, the others at opset 17), as the reference reads both forms alike.
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

std::vector<KernelCase> reduce_cases(const char* op) {
  struct Form {
    Shape shape;
    std::vector<int64_t> axes;  // empty: all
  };
  std::vector<Form> forms;
  for (int64_t n = 1; n <= 17; ++n) {
    forms.push_back({{3, n}, {1}});
    forms.push_back({{n, 5}, {0}});
    forms.push_back({{2, n, 3}, {1}});
  }
  forms.push_back({{1000}, {}});
  forms.push_back({{7, 333}, {-1}});
  forms.push_back({{2, 3, 5, 7}, {2, 3}});      // spatial axes of NCHW: rows
  forms.push_back({{2, 3, 5, 7}, {0, 1}});      // outer axes: columns
  forms.push_back({{4, 97, 41}, {1}});          // strips of 32 plus a tail of 9
  forms.push_back({{2, 3, 5, 7}, {1, 2}});
  forms.push_back({{1, 6, 1, 9}, {1}});         // extent-1 dims
  forms.push_back({{2, 3, 5, 7}, {0, 2}});      // interleaved: reference
  forms.push_back({{3, 4}, {}});
  forms.push_back({{8, 128, 130}, {2}});        // split over two threads
  forms.push_back({{8, 130, 128}, {1}});
  std::vector<KernelCase> cases;
  const bool sum_op = std::string_view(op) == "ReduceSum";
  for (const Form& f : forms) {
    for (int64_t keepdims : {1, 0}) {
      KernelCase c;
      c.op_type = op;
      c.opset = sum_op ? 11 : 17;
      c.inputs = {f.shape};
      if (!f.axes.empty()) c.attrs.set("axes", ints_attr(f.axes));
      c.attrs.set("keepdims", int_attr(keepdims));
      int64_t count = 1;
      for (int d = 0; d < f.shape.rank(); ++d) {
        bool reduced = f.axes.empty();
        for (int64_t a : f.axes) reduced |= (a < 0 ? a + f.shape.rank() : a) == d;
        if (reduced) count *= f.shape[d];
      }
      c.depth = count;
      c.label = str_cat("X", f.shape.str(), " axes=", f.axes.size(), " keepdims=", keepdims);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

}  // namespace

std::vector<KernelCase> reduce_sum_cases() { return reduce_cases("ReduceSum"); }
std::vector<KernelCase> reduce_mean_cases() { return reduce_cases("ReduceMean"); }
std::vector<KernelCase> reduce_max_cases() { return reduce_cases("ReduceMax"); }
std::vector<KernelCase> reduce_min_cases() { return reduce_cases("ReduceMin"); }
std::vector<KernelCase> reduce_sum_square_cases() { return reduce_cases("ReduceSumSquare"); }
std::vector<KernelCase> reduce_l2_cases() { return reduce_cases("ReduceL2"); }

}  // namespace ignis::kernel_cases
