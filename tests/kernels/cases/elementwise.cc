// SPDX-License-Identifier: Apache-2.0
// Elementwise cases: Add, Sub, Mul, Div over every broadcast form the fast kernels take
// (equal shapes, scalars on either side, per-channel [1, C, 1, 1] against [N, C, H, W] from
// either side, row vectors, columns, outer products) with rows of 1..17 elements (every
// vector tail), tensors large enough to split over threads, and forms handed back to the
// reference kernel (Max and Min also with one and three inputs); Relu, Sigmoid, Tanh, Exp,
// Erf, Log, Sqrt, Abs, Neg, Reciprocal, Clip and LeakyRelu over lengths 1..17 and a large
// tensor; Pow by each scalar exponent the fast kernel takes and by ones it hands back.
// Values beyond [-1, 1], NaN and infinities are covered by tests/kernels/x86/elementwise_test.cc.
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

std::vector<std::pair<Shape, Shape>> binary_shapes() {
  std::vector<std::pair<Shape, Shape>> s;
  for (int64_t n = 1; n <= 17; ++n) {
    s.push_back({{n}, {n}});
    s.push_back({{2, 3, n}, {}});                 // scalar
    s.push_back({{1}, {3, n}});                   // scalar on the left
    s.push_back({{1, 4, n, 1}, {1, 4, 1, 1}});    // per-channel, one row per channel
    s.push_back({{2, 3, 2, n}, {1, 3, 1, 1}});    // per-channel, two images
    s.push_back({{3, 1, 1}, {1, 3, 1, n}});       // per-channel on the left, rank mismatch
    s.push_back({{2, 5, n}, {n}});                // row vector
    s.push_back({{1, 1, n}, {4, 3, n}});          // row vector on the left
  }
  s.push_back({{2, 3, 4, 5}, {2, 3, 4, 5}});
  s.push_back({{1, 1, 1, 9}, {1, 1, 1, 9}});
  s.push_back({{1, 32, 7, 7}, {1, 32, 1, 1}});
  s.push_back({{4, 1}, {4, 6}});                      // column
  s.push_back({{4, 1}, {1, 6}});                      // outer product
  s.push_back({{5, 1, 7}, {1, 3, 1}});                // three coalesced dims
  s.push_back({{2, 1, 3, 1}, {1, 4, 1, 5}});          // four coalesced dims: reference
  s.push_back({{0, 3}, {3}});                         // empty
  s.push_back({{1, 1}, {1}});
  // Large enough to split over two threads.
  s.push_back({{2, 256, 130}, {2, 256, 130}});
  s.push_back({{1, 32, 56, 56}, {1, 32, 1, 1}});
  s.push_back({{1, 1, 1, 1}, {1, 24, 60, 61}});
  s.push_back({{7, 97, 131}, {131}});
  return s;
}

std::vector<KernelCase> binary_cases(const char* op) {
  std::vector<KernelCase> cases;
  for (const auto& [a, b] : binary_shapes()) {
    KernelCase c;
    c.op_type = op;
    c.opset = 14;
    c.inputs = {a, b};
    c.label = str_cat("A", a.str(), " B", b.str());
    cases.push_back(c);
  }
  return cases;
}

std::vector<KernelCase> unary_cases(const char* op, int64_t opset) {
  std::vector<KernelCase> cases;
  std::vector<Shape> shapes;
  for (int64_t n = 1; n <= 17; ++n) shapes.push_back({n});
  shapes.push_back({3, 5, 31});
  shapes.push_back({1, 96, 28, 28});  // split over two threads
  shapes.push_back({0, 4});
  for (const Shape& s : shapes) {
    KernelCase c;
    c.op_type = op;
    c.opset = opset;
    c.inputs = {s};
    c.label = str_cat("X", s.str());
    cases.push_back(c);
  }
  return cases;
}

// Inputs drawn from [lo, hi] instead of [-1, 1].
std::vector<KernelCase> ranged(std::vector<KernelCase> cases, double lo, double hi) {
  for (KernelCase& c : cases) {
    c.input_ranges = {{lo, hi}};
    c.label += str_cat(" in [", lo, ", ", hi, "]");
  }
  return cases;
}

std::vector<KernelCase> variadic_cases(const char* op) {
  std::vector<KernelCase> cases = binary_cases(op);
  for (const auto& inputs : std::vector<std::vector<Shape>>{{{3, 5}}, {{2, 3, 5}, {5}, {3, 1}}}) {
    KernelCase c;
    c.op_type = op;
    c.opset = 13;
    c.inputs = inputs;
    c.label = str_cat(inputs.size(), " inputs");
    cases.push_back(c);
  }
  return cases;
}

}  // namespace

std::vector<KernelCase> add_cases() { return binary_cases("Add"); }
std::vector<KernelCase> sub_cases() { return binary_cases("Sub"); }
std::vector<KernelCase> mul_cases() { return binary_cases("Mul"); }
std::vector<KernelCase> div_cases() { return binary_cases("Div"); }
std::vector<KernelCase> relu_cases() { return unary_cases("Relu", 14); }
std::vector<KernelCase> sigmoid_cases() { return unary_cases("Sigmoid", 13); }
std::vector<KernelCase> tanh_cases() { return unary_cases("Tanh", 13); }
std::vector<KernelCase> exp_cases() { return unary_cases("Exp", 13); }
std::vector<KernelCase> erf_cases() { return unary_cases("Erf", 13); }
std::vector<KernelCase> max_cases() { return variadic_cases("Max"); }
std::vector<KernelCase> min_cases() { return variadic_cases("Min"); }
std::vector<KernelCase> log_cases() {
  // Near 0 the results reach -17 and the tolerance scales with them: also a range near 1.
  return concat(concat(ranged(unary_cases("Log", 13), 1e-7, 100.0), ranged(unary_cases("Log", 13), 0.5, 2.0)),
                unary_cases("Log", 13));
}
std::vector<KernelCase> sqrt_cases() { return concat(ranged(unary_cases("Sqrt", 13), 0.0, 50.0), unary_cases("Sqrt", 13)); }
std::vector<KernelCase> abs_cases() { return unary_cases("Abs", 13); }
std::vector<KernelCase> neg_cases() { return unary_cases("Neg", 13); }
std::vector<KernelCase> reciprocal_cases() { return unary_cases("Reciprocal", 13); }
std::vector<KernelCase> leaky_relu_cases() {
  std::vector<KernelCase> cases = unary_cases("LeakyRelu", 16);
  for (KernelCase c : unary_cases("LeakyRelu", 16)) {
    c.attrs.set("alpha", float_attr(0.2f));
    c.label += " alpha=0.2";
    cases.push_back(std::move(c));
  }
  return cases;
}
std::vector<KernelCase> clip_cases() {
  std::vector<KernelCase> cases;
  for (KernelCase c : unary_cases("Clip", 6)) {  // bounds as attributes
    c.attrs.set("min", float_attr(-0.5f));
    c.attrs.set("max", float_attr(0.25f));
    c.label += " min=-0.5 max=0.25";
    cases.push_back(c);
    c.attrs = {};
    c.attrs.set("max", float_attr(-0.75f));
    c.label += " (max only)";
    cases.push_back(std::move(c));
  }
  for (KernelCase c : unary_cases("Clip", 13)) {  // bounds as inputs, crossed in some cases
    c.inputs.push_back(Shape{});
    c.input_ranges = {{1.0, 0.0}, {-1.0, 0.5}};
    cases.push_back(c);
    c.inputs.push_back(Shape{});
    c.input_ranges.push_back({-0.5, 1.0});
    c.label += " min and max inputs";
    cases.push_back(std::move(c));
  }
  return cases;
}
std::vector<KernelCase> pow_cases() {
  std::vector<KernelCase> cases;
  for (double e : {2.0, 3.0, 1.0, -1.0, -2.0, 0.5, -0.5, 2.5}) {
    for (KernelCase c : unary_cases("Pow", 15)) {
      c.inputs.push_back(Shape{});
      c.input_ranges = {{1.0, 0.0}, {e, e}};
      c.label += str_cat(" exponent ", e);
      cases.push_back(c);
      if (e == 0.5 || e == -0.5 || e == 2.5) {  // positive bases, away from the poles
        c.input_ranges[0] = {0.01, 10.0};
        c.label += " of [0.01, 10]";
        cases.push_back(std::move(c));
      }
    }
  }
  KernelCase tensor_exponent;  // the reference's
  tensor_exponent.op_type = "Pow";
  tensor_exponent.opset = 15;
  tensor_exponent.inputs = {{3, 5}, {5}};
  tensor_exponent.input_ranges = {{0.1, 2.0}, {-2.0, 2.0}};
  tensor_exponent.label = "tensor exponent";
  cases.push_back(tensor_exponent);
  return cases;
}
std::vector<KernelCase> gelu_cases() {
  std::vector<KernelCase> cases = unary_cases("Gelu", 20);
  for (KernelCase c : unary_cases("Gelu", 20)) {
    c.attrs.set("approximate", string_attr("tanh"));
    c.label += " approximate=tanh";
    cases.push_back(std::move(c));
  }
  return cases;
}
std::vector<KernelCase> ignis_gelu_cases() {
  std::vector<KernelCase> cases = gelu_cases();
  for (KernelCase& c : cases) {
    c.domain = "ai.ignis";
    c.opset = 1;
  }
  return cases;
}

}  // namespace ignis::kernel_cases
