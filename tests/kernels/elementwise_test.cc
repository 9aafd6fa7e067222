// SPDX-License-Identifier: Apache-2.0
// Tests for the elementwise family: broadcasting walker, integer semantics, Cast rounding,
// per-opset attribute handling and error reporting. Expected values are hand-derived or come
// from independent scalar loops in this file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/broadcast.h"
#include "core/dtype_dispatch.h"
#include "core/thread_pool.h"
#include "kernels/ref/elementwise_internal.h"
#include "testing/op_runner.h"

namespace ignis {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::attr_string;
using testing::OpCall;
using testing::run_op;

template <class T>
Tensor make(const Shape& shape, const std::vector<T>& values) {
  Tensor t = Tensor::empty(dtype_of<T>(), shape);
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  for (size_t i = 0; i < values.size(); ++i) t.data_as<T>()[i] = values[i];
  return t;
}

Tensor make_bool(const Shape& shape, const std::vector<int>& values) {
  Tensor t = Tensor::empty(DType::Bool, shape);
  for (size_t i = 0; i < values.size(); ++i) t.data_as<bool>()[i] = values[i] != 0;
  return t;
}

template <class T>
std::vector<T> values_of(const Tensor& t) {
  EXPECT_EQ(t.dtype(), dtype_of<T>());
  return std::vector<T>(t.data_as<T>(), t.data_as<T>() + t.numel());
}

std::vector<float> floats_of(const Tensor& t) {
  std::vector<float> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = static_cast<float>(load_as_double(t.dtype(), t.data(), i));
  return v;
}

Result<Tensor> run1(const std::string& op, std::vector<Tensor> inputs, int64_t opset = 17, AttrMap attrs = {}) {
  OpCall call;
  call.op_type = op;
  call.opset = opset;
  call.attrs = std::move(attrs);
  call.inputs = std::move(inputs);
  IGNIS_ASSIGN_OR_RETURN(auto outs, run_op(call));
  return outs[0];
}

AttrMap attrs_of(std::initializer_list<std::pair<const char*, Attribute>> items) {
  AttrMap m;
  for (const auto& [k, v] : items) m.set(k, v);
  return m;
}

// Row-major multi-index of `flat` in `shape`, read at `in` with numpy broadcasting.
int64_t broadcast_index(int64_t flat, const Shape& out, const Shape& in) {
  std::vector<int64_t> idx(out.rank());
  for (int d = out.rank() - 1; d >= 0; --d) {
    idx[d] = flat % out[d];
    flat /= out[d];
  }
  int64_t off = 0;
  for (int d = 0; d < in.rank(); ++d) {
    const int od = d + out.rank() - in.rank();
    off = off * in[d] + (in[d] == 1 ? 0 : idx[od]);
  }
  return off;
}

std::vector<float> random_floats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Broadcasting

TEST(ElementwiseBroadcast, AddMatchesScalarLoopOverShapePairs) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}},       {{2, 3, 4}, {3, 1}},    {{1}, {5, 7}},
      {{2, 1, 4}, {3, 1}},    {{}, {3, 5}},           {{7, 1, 1, 3}, {1, 5, 2, 1}}, {{1, 1}, {1}},
      {{5, 1, 3}, {5, 2, 3}}, {{3, 1, 2, 1, 5}, {2, 4, 1}},
  };
  uint32_t seed = 1;
  for (const auto& [sa, sb] : cases) {
    const Shape out = *broadcast_shapes(sa, sb);
    const auto va = random_floats(sa.numel(), seed++);
    const auto vb = random_floats(sb.numel(), seed++);
    auto r = run1("Add", {make<float>(sa, va), make<float>(sb, vb)});
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    ASSERT_EQ(r->shape(), out) << sa.str() << " + " << sb.str();
    const auto got = values_of<float>(*r);
    for (int64_t i = 0; i < out.numel(); ++i)
      ASSERT_EQ(got[i], va[broadcast_index(i, out, sa)] + vb[broadcast_index(i, out, sb)])
          << sa.str() << " + " << sb.str() << " at " << i;
  }
}

TEST(ElementwiseBroadcast, RowWalkerSplitsAcrossThreadsCorrectly) {
  // Odd sizes larger than the parallel grain, so chunks start mid-row.
  ThreadPool pool(4);
  const Shape out{3, 7, 4099};
  const std::array<Shape, 2> ins = {Shape{3, 1, 4099}, Shape{7, 1}};
  std::vector<int64_t> seen(out.numel(), -1), a_off(out.numel()), b_off(out.numel());
  kernels::ref::ew::for_each_broadcast_row<2>(
      &pool, out, ins,
      [&](int64_t o, const std::array<int64_t, 2>& off, int64_t len, const std::array<int64_t, 2>& st) {
        for (int64_t i = 0; i < len; ++i) {
          seen[o + i] = o + i;
          a_off[o + i] = off[0] + i * st[0];
          b_off[o + i] = off[1] + i * st[1];
        }
      });
  for (int64_t i = 0; i < out.numel(); ++i) {
    ASSERT_EQ(seen[i], i);
    ASSERT_EQ(a_off[i], broadcast_index(i, out, ins[0])) << i;
    ASSERT_EQ(b_off[i], broadcast_index(i, out, ins[1])) << i;
  }
}

TEST(ElementwiseBroadcast, ZeroSizedDimsProduceEmptyOutputs) {
  auto r = run1("Mul", {make<float>({0, 3}, {}), make<float>({3}, {1, 2, 3})});
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(r->shape(), (Shape{0, 3}));
  auto u = run1("Exp", {make<float>({2, 0}, {})});
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->numel(), 0);
}

TEST(ElementwiseBroadcast, IncompatibleShapesAreAnError) {
  auto r = run1("Add", {make<float>({2, 3}, std::vector<float>(6)), make<float>({4}, std::vector<float>(4))});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
}

TEST(ElementwiseBroadcast, MismatchedDtypesAreAnError) {
  auto r = run1("Add", {make<float>({2}, {1, 2}), make<int64_t>({2}, {1, 2})});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
}

TEST(ElementwiseBroadcast, LegacyAxisBroadcastBeforeOpset7) {
  // A [2, 3, 2], B [3] aligned at axis 1.
  std::vector<float> a(12);
  for (int i = 0; i < 12; ++i) a[i] = static_cast<float>(i);
  auto r = run1("Add", {make<float>({2, 3, 2}, a), make<float>({3}, {100, 200, 300})}, 6,
                attrs_of({{"broadcast", attr_int(1)}, {"axis", attr_int(1)}}));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  const auto got = values_of<float>(*r);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(got[i], a[i] + 100.0f * static_cast<float>((i / 2) % 3 + 1)) << i;

  // Without broadcast=1, shapes must match.
  auto bad = run1("Add", {make<float>({2, 3, 2}, a), make<float>({3}, {1, 2, 3})}, 6);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::InvalidArgument);
  // Suffix matching by default.
  auto sfx = run1("Sub", {make<float>({2, 2}, {5, 6, 7, 8}), make<float>({2}, {1, 2})}, 1,
                  attrs_of({{"broadcast", attr_int(1)}}));
  ASSERT_TRUE(sfx.has_value());
  EXPECT_EQ(values_of<float>(*sfx), (std::vector<float>{4, 4, 6, 6}));
}

// ---------------------------------------------------------------------------------------------
// Integer semantics

TEST(ElementwiseInteger, DivTruncatesAndDividingByZeroGivesZero) {
  auto r = run1("Div", {make<int32_t>({6}, {7, -7, 7, -7, 5, std::numeric_limits<int32_t>::min()}),
                        make<int32_t>({6}, {2, 2, -2, -2, 0, -1})});
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<int32_t>(*r), (std::vector<int32_t>{3, -3, -3, 3, 0, std::numeric_limits<int32_t>::min()}));
  auto u = run1("Div", {make<uint8_t>({3}, {250, 9, 1}), make<uint8_t>({3}, {7, 0, 3})});
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(values_of<uint8_t>(*u), (std::vector<uint8_t>{35, 0, 0}));
}

TEST(ElementwiseInteger, AddSubMulWrap) {
  const int32_t mx = std::numeric_limits<int32_t>::max();
  auto add = run1("Add", {make<int32_t>({2}, {mx, -5}), make<int32_t>({2}, {1, 3})});
  ASSERT_TRUE(add.has_value());
  EXPECT_EQ(values_of<int32_t>(*add), (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -2}));
  auto mul = run1("Mul", {make<uint16_t>({2}, {65535, 300}), make<uint16_t>({2}, {65535, 300})});
  ASSERT_TRUE(mul.has_value());
  EXPECT_EQ(values_of<uint16_t>(*mul), (std::vector<uint16_t>{1, static_cast<uint16_t>(90000 % 65536)}));
  auto sub = run1("Sub", {make<uint8_t>({1}, {3}), make<uint8_t>({1}, {5})});
  ASSERT_TRUE(sub.has_value());
  EXPECT_EQ(values_of<uint8_t>(*sub), (std::vector<uint8_t>{254}));
}

TEST(ElementwiseInteger, ModFollowsDivisorSignUnlessFmod) {
  const std::vector<int64_t> a = {5, -5, 5, -5, 7, 3};
  const std::vector<int64_t> b = {3, 3, -3, -3, 0, -1};
  auto py = run1("Mod", {make<int64_t>({6}, a), make<int64_t>({6}, b)});
  ASSERT_TRUE(py.has_value()) << py.error().to_string();
  EXPECT_EQ(values_of<int64_t>(*py), (std::vector<int64_t>{2, 1, -1, -2, 0, 0}));
  auto c = run1("Mod", {make<int64_t>({6}, a), make<int64_t>({6}, b)}, 13, attrs_of({{"fmod", attr_int(1)}}));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(values_of<int64_t>(*c), (std::vector<int64_t>{2, -2, 2, -2, 0, 0}));
  auto f = run1("Mod", {make<float>({2}, {5.5f, -5.5f}), make<float>({2}, {2.0f, 2.0f})}, 13,
                attrs_of({{"fmod", attr_int(1)}}));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(values_of<float>(*f), (std::vector<float>{1.5f, -1.5f}));
}

TEST(ElementwiseInteger, ModOnFloatsRequiresFmod) {
  auto r = run1("Mod", {make<float>({1}, {1}), make<float>({1}, {1})}, 13);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
  auto bad = run1("Mod", {make<int32_t>({1}, {1}), make<int32_t>({1}, {1})}, 13, attrs_of({{"fmod", attr_int(2)}}));
  ASSERT_FALSE(bad.has_value());
}

TEST(ElementwiseInteger, PowIsExactForIntegersAndWraps) {
  auto r = run1("Pow", {make<int64_t>({5}, {3, -2, 2, 2, -1}), make<int64_t>({5}, {40, 5, 70, -1, -3})});
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  uint64_t p = 1;
  for (int i = 0; i < 40; ++i) p *= 3;
  EXPECT_EQ(values_of<int64_t>(*r), (std::vector<int64_t>{static_cast<int64_t>(p), -32, 0, 0, -1}));
}

TEST(ElementwiseInteger, PowWithMixedTypes) {
  auto fi = run1("Pow", {make<float>({3}, {2.0f, 1.5f, 4.0f}), make<int32_t>({3}, {3, 2, -1})}, 15);
  ASSERT_TRUE(fi.has_value()) << fi.error().to_string();
  EXPECT_EQ(values_of<float>(*fi), (std::vector<float>{8.0f, 2.25f, 0.25f}));
  auto iff = run1("Pow", {make<int32_t>({3}, {2, 9, 5}), make<float>({3}, {0.5f, 0.5f, 2.0f})}, 15);
  ASSERT_TRUE(iff.has_value());
  EXPECT_EQ(values_of<int32_t>(*iff), (std::vector<int32_t>{1, 3, 25}));
  // Before opset 12 the exponent must share the base's dtype.
  auto old = run1("Pow", {make<float>({1}, {2}), make<int32_t>({1}, {3})}, 7);
  ASSERT_FALSE(old.has_value());
}

TEST(ElementwiseInteger, BitShiftAndBitwise) {
  auto l = run1("BitShift", {make<uint8_t>({4}, {1, 255, 3, 16}), make<uint8_t>({4}, {7, 1, 8, 2})}, 11,
                attrs_of({{"direction", attr_string("LEFT")}}));
  ASSERT_TRUE(l.has_value()) << l.error().to_string();
  EXPECT_EQ(values_of<uint8_t>(*l), (std::vector<uint8_t>{128, 254, 0, 64}));
  auto rt = run1("BitShift", {make<uint64_t>({2}, {~uint64_t{0}, 8}), make<uint64_t>({2}, {63, 64})}, 11,
                 attrs_of({{"direction", attr_string("RIGHT")}}));
  ASSERT_TRUE(rt.has_value());
  EXPECT_EQ(values_of<uint64_t>(*rt), (std::vector<uint64_t>{1, 0}));
  auto bad = run1("BitShift", {make<uint8_t>({1}, {1}), make<uint8_t>({1}, {1})}, 11,
                  attrs_of({{"direction", attr_string("UP")}}));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::InvalidArgument);
  auto missing = run1("BitShift", {make<uint8_t>({1}, {1}), make<uint8_t>({1}, {1})}, 11);
  ASSERT_FALSE(missing.has_value());

  auto x = run1("BitwiseXor", {make<int8_t>({2}, {-1, 0x0f}), make<int8_t>({1}, {0x55})}, 18);
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(values_of<int8_t>(*x), (std::vector<int8_t>{static_cast<int8_t>(~0x55), 0x5a}));
  auto n = run1("BitwiseNot", {make<uint16_t>({2}, {0, 0xff00})}, 18);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(values_of<uint16_t>(*n), (std::vector<uint16_t>{0xffff, 0x00ff}));
}

TEST(ElementwiseInteger, AbsAndNegWrapAtMinimum) {
  const int8_t mn = std::numeric_limits<int8_t>::min();
  auto a = run1("Abs", {make<int8_t>({3}, {mn, -3, 4})}, 13);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(values_of<int8_t>(*a), (std::vector<int8_t>{mn, 3, 4}));
  auto n = run1("Neg", {make<int8_t>({2}, {mn, 5})}, 13);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(values_of<int8_t>(*n), (std::vector<int8_t>{mn, -5}));
  auto s = run1("Sign", {make<int32_t>({3}, {-7, 0, 9})}, 13);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(values_of<int32_t>(*s), (std::vector<int32_t>{-1, 0, 1}));
}

// ---------------------------------------------------------------------------------------------
// Logic and comparisons

TEST(ElementwiseCompare, ComparisonsProduceBool) {
  auto a = make<float>({4}, {1, 2, 3, std::nanf("")});
  auto b = make<float>({1}, {2});
  const std::vector<std::pair<const char*, std::vector<bool>>> cases = {
      {"Less", {1, 0, 0, 0}},        {"LessOrEqual", {1, 1, 0, 0}}, {"Greater", {0, 0, 1, 0}},
      {"GreaterOrEqual", {0, 1, 1, 0}}, {"Equal", {0, 1, 0, 0}},
  };
  for (const auto& [op, want] : cases) {
    auto r = run1(op, {a, b}, 16);
    ASSERT_TRUE(r.has_value()) << op << ": " << r.error().to_string();
    ASSERT_EQ(r->dtype(), DType::Bool);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(r->data_as<bool>()[i], want[i]) << op << " at " << i;
  }
}

TEST(ElementwiseCompare, LogicOpsBroadcastOnBool) {
  auto a = make_bool({2, 2}, {1, 0, 1, 0});
  auto b = make_bool({2, 1}, {1, 0});
  auto r_and = run1("And", {a, b});
  auto r_or = run1("Or", {a, b});
  auto r_xor = run1("Xor", {a, b});
  ASSERT_TRUE(r_and.has_value() && r_or.has_value() && r_xor.has_value());
  EXPECT_EQ(values_of<bool>(*r_and), (std::vector<bool>{1, 0, 0, 0}));
  EXPECT_EQ(values_of<bool>(*r_or), (std::vector<bool>{1, 1, 1, 0}));
  EXPECT_EQ(values_of<bool>(*r_xor), (std::vector<bool>{0, 1, 1, 0}));
  auto n = run1("Not", {a});
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(values_of<bool>(*n), (std::vector<bool>{0, 1, 0, 1}));
  auto bad = run1("And", {make<float>({1}, {1}), make<float>({1}, {1})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::Unsupported);
}

TEST(ElementwiseCompare, WhereBroadcastsAllThreeInputs) {
  auto c = make_bool({2, 1}, {1, 0});
  auto x = make<int64_t>({3}, {1, 2, 3});
  auto y = make<int64_t>({2, 3}, {10, 20, 30, 40, 50, 60});
  auto r = run1("Where", {c, x, y}, 16);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(r->shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of<int64_t>(*r), (std::vector<int64_t>{1, 2, 3, 40, 50, 60}));
  auto bad = run1("Where", {make<float>({1}, {1}), x, x}, 16);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Variadic

TEST(ElementwiseVariadic, SumMeanMaxMinBroadcast) {
  auto a = make<float>({2, 1}, {1, 4});
  auto b = make<float>({3}, {2, 3, 7});
  auto c = make<float>({1}, {3});
  auto sum = run1("Sum", {a, b, c}, 13);
  ASSERT_TRUE(sum.has_value()) << sum.error().to_string();
  EXPECT_EQ(values_of<float>(*sum), (std::vector<float>{6, 7, 11, 9, 10, 14}));
  auto mean = run1("Mean", {a, b, c}, 13);
  ASSERT_TRUE(mean.has_value());
  EXPECT_EQ(values_of<float>(*mean), (std::vector<float>{2, 7.0f / 3, 11.0f / 3, 3, 10.0f / 3, 14.0f / 3}));
  auto mx = run1("Max", {a, b, c}, 13);
  ASSERT_TRUE(mx.has_value());
  EXPECT_EQ(values_of<float>(*mx), (std::vector<float>{3, 3, 7, 4, 4, 7}));
  auto mn = run1("Min", {a, b}, 13);
  ASSERT_TRUE(mn.has_value());
  EXPECT_EQ(values_of<float>(*mn), (std::vector<float>{1, 1, 1, 2, 3, 4}));
  auto one = run1("Max", {b}, 13);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(values_of<float>(*one), (std::vector<float>{2, 3, 7}));
}

TEST(ElementwiseVariadic, MaxPropagatesNanAndSupportsIntegers) {
  auto r = run1("Max", {make<float>({2}, {std::nanf(""), 1}), make<float>({2}, {5, std::nanf("")})}, 13);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(std::isnan(r->data_as<float>()[0]));
  EXPECT_TRUE(std::isnan(r->data_as<float>()[1]));
  auto i = run1("Min", {make<uint32_t>({2}, {4000000000u, 3}), make<uint32_t>({2}, {1, 7})}, 13);
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(values_of<uint32_t>(*i), (std::vector<uint32_t>{1, 3}));
  auto mixed = run1("Sum", {make<float>({1}, {1}), make<double>({1}, {1})}, 13);
  ASSERT_FALSE(mixed.has_value());
  EXPECT_EQ(mixed.error().code(), StatusCode::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Unary math and activations

TEST(ElementwiseUnary, RoundIsHalfToEven) {
  auto r = run1("Round", {make<float>({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f, 3.0f})}, 11);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(values_of<float>(*r), (std::vector<float>{0, 2, 2, -0.0f, -2, 2, -3, 3}));
}

TEST(ElementwiseUnary, MathOpsMatchLibm) {
  const std::vector<float> x = {0.1f, 0.5f, 0.9f};
  struct Case {
    const char* op;
    double (*f)(double);
  };
  const Case cases[] = {{"Exp", std::exp},   {"Log", std::log},     {"Sqrt", std::sqrt},   {"Sin", std::sin},
                        {"Cos", std::cos},   {"Tan", std::tan},     {"Asin", std::asin},   {"Acos", std::acos},
                        {"Atan", std::atan}, {"Sinh", std::sinh},   {"Cosh", std::cosh},   {"Asinh", std::asinh},
                        {"Atanh", std::atanh}, {"Tanh", std::tanh}, {"Erf", std::erf},     {"Floor", std::floor},
                        {"Ceil", std::ceil}};
  for (const auto& c : cases) {
    auto r = run1(c.op, {make<float>({3}, x)}, 13);
    ASSERT_TRUE(r.has_value()) << c.op << ": " << r.error().to_string();
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(r->data_as<float>()[i], c.f(x[i]), 1e-6) << c.op;
  }
  auto ach = run1("Acosh", {make<float>({1}, {2.0f})}, 13);
  ASSERT_TRUE(ach.has_value());
  EXPECT_NEAR(ach->data_as<float>()[0], std::acosh(2.0), 1e-6);
  auto rec = run1("Reciprocal", {make<double>({2}, {4, -0.5})}, 13);
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(values_of<double>(*rec), (std::vector<double>{0.25, -2}));
}

TEST(ElementwiseUnary, ActivationsMatchFormulas) {
  const std::vector<float> x = {-3.0f, -0.5f, 0.0f, 0.7f, 2.5f, 25.0f};
  auto check = [&](const char* op, AttrMap attrs, auto f, int64_t opset = 18) {
    auto r = run1(op, {make<float>({6}, x)}, opset, attrs);
    ASSERT_TRUE(r.has_value()) << op << ": " << r.error().to_string();
    for (int i = 0; i < 6; ++i) {
      const double want = f(static_cast<double>(x[i]));
      EXPECT_NEAR(r->data_as<float>()[i], want, 1e-5 * std::max(1.0, std::fabs(want))) << op << " x=" << x[i];
    }
  };
  check("Relu", {}, [](double v) { return v > 0 ? v : 0; });
  check("LeakyRelu", attrs_of({{"alpha", attr_float(0.1f)}}), [](double v) { return v < 0 ? 0.1f * v : v; });
  check("Sigmoid", {}, [](double v) { return 1 / (1 + std::exp(-v)); });
  check("HardSigmoid", {}, [](double v) { return std::clamp(0.2f * v + 0.5, 0.0, 1.0); });
  check("HardSwish", {}, [](double v) { return v * std::clamp(v / 6 + 0.5, 0.0, 1.0); });
  check("Elu", attrs_of({{"alpha", attr_float(2.0f)}}), [](double v) { return v < 0 ? 2 * (std::exp(v) - 1) : v; });
  check("Selu", {}, [](double v) {
    return v > 0 ? 1.0507009873554805 * v : 1.0507009873554805 * 1.6732632423543772 * (std::exp(v) - 1);
  });
  check("Celu", attrs_of({{"alpha", attr_float(2.0f)}}),
        [](double v) { return std::max(0.0, v) + std::min(0.0, 2 * (std::exp(v / 2) - 1)); });
  check("Softplus", {}, [](double v) { return std::log(std::exp(v) + 1); });
  check("Softsign", {}, [](double v) { return v / (1 + std::fabs(v)); });
  check("ThresholdedRelu", attrs_of({{"alpha", attr_float(0.6f)}}), [](double v) { return v > 0.6f ? v : 0; });
  check("Mish", {}, [](double v) { return v * std::tanh(std::log1p(std::exp(v))); });
  check("Gelu", {}, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }, 20);
  check("Gelu", attrs_of({{"approximate", attr_string("tanh")}}),
        [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))); }, 20);
}

TEST(ElementwiseUnary, GeluRejectsUnknownApproximation) {
  auto r = run1("Gelu", {make<float>({1}, {1})}, 20, attrs_of({{"approximate", attr_string("fast")}}));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
  auto old = run1("Gelu", {make<float>({1}, {1})}, 18);
  EXPECT_FALSE(old.has_value());
}

TEST(ElementwiseUnary, AttributeOfWrongKindIsAnError) {
  auto r = run1("LeakyRelu", {make<float>({1}, {1})}, 16, attrs_of({{"alpha", attr_string("x")}}));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
}

TEST(ElementwiseUnary, IsNanIsInfFlags) {
  const float inf = std::numeric_limits<float>::infinity();
  auto x = make<float>({4}, {inf, -inf, std::nanf(""), 1.0f});
  auto nan = run1("IsNaN", {x}, 13);
  ASSERT_TRUE(nan.has_value());
  EXPECT_EQ(values_of<bool>(*nan), (std::vector<bool>{0, 0, 1, 0}));
  auto both = run1("IsInf", {x}, 10);
  auto pos = run1("IsInf", {x}, 10, attrs_of({{"detect_negative", attr_int(0)}}));
  auto neg = run1("IsInf", {x}, 10, attrs_of({{"detect_positive", attr_int(0)}}));
  ASSERT_TRUE(both.has_value() && pos.has_value() && neg.has_value());
  EXPECT_EQ(values_of<bool>(*both), (std::vector<bool>{1, 1, 0, 0}));
  EXPECT_EQ(values_of<bool>(*pos), (std::vector<bool>{1, 0, 0, 0}));
  EXPECT_EQ(values_of<bool>(*neg), (std::vector<bool>{0, 1, 0, 0}));
}

TEST(ElementwiseUnary, ShrinkOnFloatsAndIntegers) {
  auto f = run1("Shrink", {make<float>({5}, {-2, -0.5f, 0, 0.5f, 2})}, 9,
                attrs_of({{"lambd", attr_float(1.0f)}, {"bias", attr_float(0.5f)}}));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(values_of<float>(*f), (std::vector<float>{-1.5f, 0, 0, 0, 1.5f}));
  auto i = run1("Shrink", {make<int32_t>({3}, {-5, 1, 5})}, 9,
                attrs_of({{"lambd", attr_float(1.5f)}, {"bias", attr_float(2.0f)}}));
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(values_of<int32_t>(*i), (std::vector<int32_t>{-3, 0, 3}));
}

TEST(ElementwiseUnary, HalfAndBfloat16ComputeInFloatAndRoundBack) {
  Tensor h = Tensor::empty(DType::F16, {3});
  Tensor b = Tensor::empty(DType::BF16, {3});
  const float v[3] = {1.0f, 0.333251953125f, -2.5f};
  for (int i = 0; i < 3; ++i) {
    h.data_as<Half>()[i] = Half{float_to_half(v[i])};
    b.data_as<BFloat16>()[i] = BFloat16{float_to_bf16(v[i])};
  }
  auto rh = run1("Add", {h, h}, 14);
  ASSERT_TRUE(rh.has_value()) << rh.error().to_string();
  EXPECT_EQ(floats_of(*rh), (std::vector<float>{2.0f, 0.66650390625f, -5.0f}));
  auto rb = run1("Relu", {b}, 14);
  ASSERT_TRUE(rb.has_value());
  EXPECT_EQ(floats_of(*rb), (std::vector<float>{1.0f, bf16_to_float(float_to_bf16(v[1])), 0.0f}));
  auto sh = run1("Sqrt", {h}, 13);
  ASSERT_TRUE(sh.has_value());
  EXPECT_EQ(sh->data_as<Half>()[0].bits, float_to_half(1.0f));
  EXPECT_EQ(sh->data_as<Half>()[1].bits, float_to_half(std::sqrt(half_to_float(float_to_half(v[1])))));
}

TEST(ElementwiseUnary, StringInputIsUnsupported) {
  Tensor s = Tensor::empty(DType::String, {1});
  auto r = run1("Abs", {s}, 13);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::Unsupported);
}

// ---------------------------------------------------------------------------------------------
// Clip, PRelu

TEST(ElementwiseClip, AttributesBeforeOpset11) {
  auto r = run1("Clip", {make<float>({4}, {-3, -1, 1, 3})}, 6,
                attrs_of({{"min", attr_float(-2.0f)}, {"max", attr_float(2.0f)}}));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<float>(*r), (std::vector<float>{-2, -1, 1, 2}));
  auto only_max = run1("Clip", {make<float>({2}, {-1e30f, 5})}, 6, attrs_of({{"max", attr_float(0.0f)}}));
  ASSERT_TRUE(only_max.has_value());
  EXPECT_EQ(values_of<float>(*only_max), (std::vector<float>{-1e30f, 0}));
}

TEST(ElementwiseClip, OptionalInputsFromOpset11) {
  auto x = make<int8_t>({4}, {-128, -5, 5, 127});
  auto r = run1("Clip", {x, Tensor(), make<int8_t>({}, {4})}, 13);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<int8_t>(*r), (std::vector<int8_t>{-128, -5, 4, 4}));
  // min > max gives max everywhere.
  auto inv = run1("Clip", {make<float>({3}, {-1, 0, 9}), make<float>({}, {3}), make<float>({}, {1})}, 13);
  ASSERT_TRUE(inv.has_value());
  EXPECT_EQ(values_of<float>(*inv), (std::vector<float>{1, 1, 1}));
  auto none = run1("Clip", {make<float>({2}, {-7, 7})}, 13);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(values_of<float>(*none), (std::vector<float>{-7, 7}));
  auto bad = run1("Clip", {make<float>({2}, {-7, 7}), make<float>({2}, {0, 0})}, 13);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::InvalidArgument);
  auto mixed = run1("Clip", {make<float>({2}, {-7, 7}), make<double>({}, {0})}, 13);
  ASSERT_FALSE(mixed.has_value());
  // Integer clip arrived in opset 12.
  auto early = run1("Clip", {x}, 11);
  ASSERT_FALSE(early.has_value());
  EXPECT_EQ(early.error().code(), StatusCode::Unsupported);
}

TEST(ElementwisePRelu, BroadcastSlopeAndLegacyChannelSlope) {
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i % 2 == 0 ? -(i + 1) : i + 1);
  // [1, 3, 2, 2] with a per-channel slope.
  auto modern = run1("PRelu", {make<float>({1, 3, 2, 2}, x), make<float>({3, 1, 1}, {0.5f, 0.25f, 2.0f})}, 16);
  auto legacy = run1("PRelu", {make<float>({1, 3, 2, 2}, x), make<float>({3}, {0.5f, 0.25f, 2.0f})}, 6);
  ASSERT_TRUE(modern.has_value()) << modern.error().to_string();
  ASSERT_TRUE(legacy.has_value()) << legacy.error().to_string();
  const float slope[3] = {0.5f, 0.25f, 2.0f};
  for (int i = 0; i < 12; ++i) {
    const float want = x[i] < 0 ? x[i] * slope[i / 4] : x[i];
    EXPECT_EQ(modern->data_as<float>()[i], want) << i;
    EXPECT_EQ(legacy->data_as<float>()[i], want) << i;
  }
  auto bad = run1("PRelu", {make<float>({2}, {1, 2}), make<float>({2, 2}, {1, 2, 3, 4})}, 16);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Cast, CastLike, Identity, Dropout

TEST(ElementwiseCast, FloatToIntegerTruncatesAndBoolIsNonzero) {
  auto x = make<float>({6}, {2.9f, -2.9f, 0.0f, -0.0f, std::nanf(""), 300.0f});
  auto i = run1("Cast", {x}, 13, attrs_of({{"to", attr_int(6)}}));
  ASSERT_TRUE(i.has_value()) << i.error().to_string();
  EXPECT_EQ(i->data_as<int32_t>()[0], 2);
  EXPECT_EQ(i->data_as<int32_t>()[1], -2);
  EXPECT_EQ(i->data_as<int32_t>()[5], 300);
  auto b = run1("Cast", {x}, 13, attrs_of({{"to", attr_int(9)}}));
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(values_of<bool>(*b), (std::vector<bool>{1, 1, 0, 0, 1, 1}));
  auto u8 = run1("Cast", {make<int32_t>({3}, {200, 256, -1})}, 13, attrs_of({{"to", attr_int(3)}}));
  ASSERT_TRUE(u8.has_value());
  EXPECT_EQ(values_of<int8_t>(*u8), (std::vector<int8_t>{-56, 0, -1}));
  auto fb = run1("Cast", {make_bool({2}, {1, 0})}, 13, attrs_of({{"to", attr_int(11)}}));
  ASSERT_TRUE(fb.has_value());
  EXPECT_EQ(values_of<double>(*fb), (std::vector<double>{1.0, 0.0}));
}

TEST(ElementwiseCast, DoubleToHalfRoundsOnce) {
  // 1 + 2^-11 + 2^-30 lies just above the half-way point between 1 and 1 + 2^-10: correct
  // rounding gives 1 + 2^-10, while rounding to float first (which drops 2^-30) gives a tie
  // that rounds to even, 1.0.
  const double v = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30);
  auto r = run1("Cast", {make<double>({2}, {v, 65520.0})}, 13, attrs_of({{"to", attr_int(10)}}));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(half_to_float(r->data_as<Half>()[0].bits), 1.0f + std::ldexp(1.0f, -10));
  EXPECT_TRUE(std::isinf(half_to_float(r->data_as<Half>()[1].bits)));
  auto bf = run1("Cast", {make<float>({1}, {1.00390625f})}, 13, attrs_of({{"to", attr_int(16)}}));
  ASSERT_TRUE(bf.has_value());
  EXPECT_EQ(bf->data_as<BFloat16>()[0].bits, float_to_bf16(1.00390625f));
}

TEST(ElementwiseCast, StringNamedTargetInOpset1) {
  auto r = run1("Cast", {make<int64_t>({2}, {3, -4})}, 1, attrs_of({{"to", attr_string("FLOAT")}}));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<float>(*r), (std::vector<float>{3, -4}));
}

TEST(ElementwiseCast, ComplexAndFloat6TargetsAreUnsupported) {
  auto x = make<float>({1}, {1});
  for (int64_t to : {14, 15, 27, 28}) {
    auto r = run1("Cast", {x}, 19, attrs_of({{"to", attr_int(to)}}));
    ASSERT_FALSE(r.has_value()) << to;
    EXPECT_EQ(r.error().code(), StatusCode::Unsupported) << to;
  }
  for (int64_t to : {0, -3, 1000}) {
    auto r = run1("Cast", {x}, 19, attrs_of({{"to", attr_int(to)}}));
    ASSERT_FALSE(r.has_value()) << to;
    EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument) << to;
  }
  auto missing = run1("Cast", {x}, 13);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), StatusCode::InvalidArgument);
}

// The stored bytes of a low-bit tensor (one per element).
template <class T>
std::vector<T> bytes_of(const Tensor& t) {
  return std::vector<T>(static_cast<const T*>(t.data()), static_cast<const T*>(t.data()) + t.numel());
}

// Low-bit targets go through their conversions (tests/core/low_bit_test.cc checks those).
TEST(ElementwiseCast, ConvertsToAndFromLowBitTypes) {
  auto x = make<float>({5}, {0.3f, -1e6f, 2.5f, 100.0f, -9.0f});
  auto f8 = run1("Cast", {x}, 25, attrs_of({{"to", attr_int(17)}}));  // float8e4m3fn, saturating
  ASSERT_TRUE(f8.has_value()) << f8.error().to_string();
  EXPECT_EQ(f8->dtype(), DType::F8E4M3FN);
  EXPECT_EQ(bytes_of<uint8_t>(*f8), (std::vector<uint8_t>{0x2A, 0xFE, 0x42, 0x6C, 0xD1}));
  auto back = run1("Cast", {*f8}, 25, attrs_of({{"to", attr_int(1)}}));
  ASSERT_TRUE(back.has_value()) << back.error().to_string();
  EXPECT_EQ(values_of<float>(*back), (std::vector<float>{0.3125f, -448.0f, 2.5f, 96.0f, -9.0f}));
  auto i4 = run1("Cast", {x}, 25, attrs_of({{"to", attr_int(22)}}));  // int4: truncate, then wrap
  ASSERT_TRUE(i4.has_value()) << i4.error().to_string();
  EXPECT_EQ(bytes_of<int8_t>(*i4)[4], 7);
  auto i64 = run1("Cast", {*i4}, 25, attrs_of({{"to", attr_int(7)}}));
  ASSERT_TRUE(i64.has_value()) << i64.error().to_string();
  EXPECT_EQ(values_of<int64_t>(*i64)[2], 2);
  auto e8 = run1("Cast", {x}, 25, attrs_of({{"to", attr_int(24)}, {"round_mode", attr_string("down")}}));
  ASSERT_TRUE(e8.has_value()) << e8.error().to_string();
  EXPECT_EQ(bytes_of<uint8_t>(*e8)[2], 128);  // 2.5 rounds down to 2
  auto bad = run1("Cast", {x}, 25, attrs_of({{"to", attr_int(24)}, {"round_mode", attr_string("odd")}}));
  ASSERT_FALSE(bad.has_value());
}

// Data-movement kernels go by dtype size, so they move the one-byte low-bit elements as they are.
TEST(ElementwiseCast, LowBitTensorsMoveThroughDataMovementOps) {
  auto x = make<float>({2, 3}, {1, -2, 3, -4, 5, -6});
  auto i4 = run1("Cast", {x}, 25, attrs_of({{"to", attr_int(22)}}));
  ASSERT_TRUE(i4.has_value()) << i4.error().to_string();
  auto t = run1("Transpose", {*i4}, 25);
  ASSERT_TRUE(t.has_value()) << t.error().to_string();
  EXPECT_EQ(t->dtype(), DType::I4);
  EXPECT_EQ(bytes_of<int8_t>(*t), (std::vector<int8_t>{1, -4, -2, 5, 3, -6}));
  auto id = run1("Identity", {*t}, 25);
  ASSERT_TRUE(id.has_value()) << id.error().to_string();
  EXPECT_EQ(bytes_of<int8_t>(*id), bytes_of<int8_t>(*t));
  // Ops whose kernels compute on values have none for the low-bit types.
  auto nz = run1("NonZero", {*t}, 25);
  ASSERT_FALSE(nz.has_value());
  EXPECT_EQ(nz.error().code(), StatusCode::Unsupported) << nz.error().to_string();
}

TEST(ElementwiseCast, CastLikeTakesTheSecondInputsType) {
  auto r = run1("CastLike", {make<double>({2}, {1.5, -7.25}), make<int16_t>({}, {0})}, 15);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<int16_t>(*r), (std::vector<int16_t>{1, -7}));
}

TEST(ElementwisePassThrough, IdentityCopies) {
  auto r = run1("Identity", {make<int64_t>({2, 2}, {1, 2, 3, 4})}, 16);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of<int64_t>(*r), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(ElementwisePassThrough, DropoutIsIdentityWithAllTrueMask) {
  OpCall call;
  call.op_type = "Dropout";
  call.opset = 13;
  call.inputs = {make<float>({3}, {1, -2, 3}), make<float>({}, {0.3f})};
  call.num_outputs = 2;
  auto r = run_op(call);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0]), (std::vector<float>{1, -2, 3}));
  EXPECT_EQ(values_of<bool>((*r)[1]), (std::vector<bool>{1, 1, 1}));

  // Opset 7..9 masks have the data type.
  call.opset = 7;
  call.inputs = {make<float>({2}, {4, 5})};
  auto old = run_op(call);
  ASSERT_TRUE(old.has_value()) << old.error().to_string();
  EXPECT_EQ(values_of<float>((*old)[1]), (std::vector<float>{1, 1}));
}

TEST(ElementwisePassThrough, TrainingDropoutIsUnsupportedUnlessRatioIsZero) {
  OpCall call;
  call.op_type = "Dropout";
  call.opset = 13;
  call.inputs = {make<float>({2}, {1, 2}), make<float>({}, {0.5f}), make_bool({}, {1})};
  auto r = run_op(call);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::Unsupported);
  call.inputs[1] = make<float>({}, {0.0f});
  auto zero = run_op(call);
  ASSERT_TRUE(zero.has_value()) << zero.error().to_string();
  EXPECT_EQ(values_of<float>((*zero)[0]), (std::vector<float>{1, 2}));
  call.inputs[1] = make<float>({}, {0.5f});
  call.inputs[2] = make_bool({}, {0});
  auto off = run_op(call);
  ASSERT_TRUE(off.has_value());
}

}  // namespace
}  // namespace ignis

namespace ignis {
namespace {

// ONNX's reference and onnxruntime give NaN for HardSigmoid(NaN); clamping must not turn it
// into 1 (std::min(1, NaN) is 1).
TEST(ElementwiseUnary, HardSigmoidKeepsNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto y = run1("HardSigmoid", {make<float>(Shape{4}, {nan, -10.0f, 0.0f, 10.0f})});
  ASSERT_TRUE(y.has_value()) << y.error().to_string();
  const std::vector<float> v = values_of<float>(*y);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 0.0f);
  EXPECT_EQ(v[2], 0.5f);
  EXPECT_EQ(v[3], 1.0f);
}

}  // namespace
}  // namespace ignis
