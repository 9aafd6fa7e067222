// SPDX-License-Identifier: Apache-2.0
// Tests for the tensor op family (shape, data movement, indexing): schema + reference kernel
// through run_op. Expected values are written out by hand or computed by plain loops here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "core/dtype_dispatch.h"
#include "ir/op_schema.h"
#include "testing/op_runner.h"

namespace ignis {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::OpCall;
using testing::run_op;

template <class T>
Tensor make(const Shape& shape, const std::vector<T>& v) {
  Tensor t = Tensor::empty(dtype_of<T>(), shape);
  EXPECT_EQ(static_cast<int64_t>(v.size()), t.numel());
  if (!v.empty()) std::memcpy(t.data(), v.data(), v.size() * sizeof(T));
  return t;
}

Tensor f32(const Shape& shape, const std::vector<float>& v) { return make<float>(shape, v); }
Tensor i64(const Shape& shape, const std::vector<int64_t>& v) { return make<int64_t>(shape, v); }
Tensor i32(const Shape& shape, const std::vector<int32_t>& v) { return make<int32_t>(shape, v); }
Tensor scalar_i64(int64_t v) { return make<int64_t>(Shape{}, {v}); }

Tensor boolean(const Shape& shape, const std::vector<int>& v) {
  Tensor t = Tensor::empty(DType::Bool, shape);
  for (size_t i = 0; i < v.size(); ++i) t.data_as<bool>()[i] = v[i] != 0;
  return t;
}

// 0, 1, 2, ... as float32.
Tensor iota(const Shape& shape) {
  std::vector<float> v(shape.numel());
  std::iota(v.begin(), v.end(), 0.0f);
  return f32(shape, v);
}

template <class T>
std::vector<T> values(const Tensor& t) {
  std::vector<T> v(t.numel());
  if (t.numel() > 0) std::memcpy(v.data(), t.data(), v.size() * sizeof(T));
  return v;
}

std::vector<int> bools(const Tensor& t) {
  std::vector<int> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.data_as<bool>()[i] ? 1 : 0);
  return v;
}

struct Call {
  OpCall c;
  Call(std::string op, int64_t opset, std::vector<Tensor> inputs, int outputs = 1) {
    c.op_type = std::move(op);
    c.opset = opset;
    c.inputs = std::move(inputs);
    c.num_outputs = outputs;
  }
  Call& attr(const std::string& name, Attribute a) {
    c.attrs.set(name, std::move(a));
    return *this;
  }
  Result<std::vector<Tensor>> run() const { return run_op(c); }
  // Runs and expects success; returns output `i`.
  Tensor out(int i = 0) const {
    auto r = run_op(c);
    EXPECT_TRUE(r.has_value()) << r.error().to_string();
    if (!r.has_value()) return Tensor();
    return (*r)[i];
  }
  StatusCode code() const {
    auto r = run_op(c);
    return r.has_value() ? StatusCode::Ok : r.error().code();
  }
};

Attribute attr_tensor(Tensor t) {
  Attribute a;
  a.kind = Attribute::Kind::Tensor;
  a.t = std::move(t);
  return a;
}

// ---------------------------------------------------------------------------------------------
// Shape, Size

TEST(TensorShape, ReturnsDims) {
  Tensor out = Call("Shape", 13, {iota({2, 3, 4})}).out();
  EXPECT_EQ(out.dtype(), DType::I64);
  EXPECT_EQ(values<int64_t>(out), (std::vector<int64_t>{2, 3, 4}));
}

TEST(TensorShape, StartEndClampFromOpset15) {
  Tensor x = iota({2, 3, 4, 5});
  EXPECT_EQ(values<int64_t>(Call("Shape", 15, {x}).attr("start", attr_int(1)).attr("end", attr_int(-1)).out()),
            (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(values<int64_t>(Call("Shape", 15, {x}).attr("start", attr_int(-10)).attr("end", attr_int(10)).out()),
            (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(Call("Shape", 15, {x}).attr("start", attr_int(3)).attr("end", attr_int(1)).out().numel(), 0);
  // Before opset 15 the attributes do not exist.
  EXPECT_EQ(Call("Shape", 13, {x}).attr("start", attr_int(2)).out().numel(), 4);
}

TEST(TensorShape, ScalarAndBoolInput) {
  EXPECT_EQ(Call("Shape", 13, {boolean({}, {1})}).out().shape(), (Shape{0}));
  EXPECT_EQ(values<int64_t>(Call("Size", 13, {boolean({2, 3}, {1, 0, 1, 0, 1, 0})}).out()), (std::vector<int64_t>{6}));
}

TEST(TensorSize, CountsElementsIncludingZero) {
  Tensor out = Call("Size", 13, {iota({0, 7})}).out();
  EXPECT_EQ(out.shape(), Shape{});
  EXPECT_EQ(values<int64_t>(out), (std::vector<int64_t>{0}));
}

// ---------------------------------------------------------------------------------------------
// Reshape, Flatten, Squeeze, Unsqueeze

TEST(TensorReshape, CopiesZeroAndInfersMinusOne) {
  Tensor x = iota({2, 3, 4});
  Tensor out = Call("Reshape", 14, {x, i64({3}, {0, -1, 2})}).out();
  EXPECT_EQ(out.shape(), (Shape{2, 6, 2}));
  EXPECT_EQ(values<float>(out), values<float>(x));
}

TEST(TensorReshape, AllowZeroKeepsZero) {
  Tensor out = Call("Reshape", 14, {iota({0, 3}), i64({2}, {3, 0})}).attr("allowzero", attr_int(1)).out();
  EXPECT_EQ(out.shape(), (Shape{3, 0}));
  // Without allowzero the 0 copies input dim 1 (3), which no longer matches the count.
  EXPECT_EQ(Call("Reshape", 14, {iota({0, 3}), i64({2}, {3, 0})}).code(), StatusCode::InvalidArgument);
  // 0 and -1 together are invalid with allowzero.
  EXPECT_EQ(Call("Reshape", 14, {iota({2, 3}), i64({2}, {0, -1})}).attr("allowzero", attr_int(1)).code(),
            StatusCode::InvalidArgument);
}

TEST(TensorReshape, ToScalarAndFromOpset1Attribute) {
  EXPECT_EQ(Call("Reshape", 13, {f32({1, 1}, {5}), i64({0}, {})}).out().shape(), Shape{});
  Tensor out = Call("Reshape", 1, {iota({6})}).attr("shape", attr_ints({3, -1})).out();
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
}

TEST(TensorReshape, RejectsBadTargets) {
  Tensor x = iota({2, 3});
  EXPECT_EQ(Call("Reshape", 13, {x, i64({2}, {-1, -1})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Reshape", 13, {x, i64({2}, {4, 2})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Reshape", 13, {x, i64({2}, {-2, 3})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Reshape", 13, {x, i64({3}, {1, 6, 0})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Reshape", 13, {x, i64({9}, {1, 1, 1, 1, 1, 1, 1, 2, 3})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Reshape", 13, {x, i64({2}, {int64_t{1} << 62, int64_t{1} << 62})}).code(),
            StatusCode::InvalidArgument);
}

TEST(TensorFlatten, AxesIncludingZeroAndNegative) {
  Tensor x = iota({2, 3, 4});
  EXPECT_EQ(Call("Flatten", 13, {x}).out().shape(), (Shape{2, 12}));
  EXPECT_EQ(Call("Flatten", 13, {x}).attr("axis", attr_int(0)).out().shape(), (Shape{1, 24}));
  EXPECT_EQ(Call("Flatten", 13, {x}).attr("axis", attr_int(3)).out().shape(), (Shape{24, 1}));
  EXPECT_EQ(Call("Flatten", 13, {x}).attr("axis", attr_int(-1)).out().shape(), (Shape{6, 4}));
  EXPECT_EQ(Call("Flatten", 13, {x}).attr("axis", attr_int(4)).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(values<float>(Call("Flatten", 13, {x}).out()), values<float>(x));
}

TEST(TensorSqueeze, AxesAttributeInputAndDefault) {
  Tensor x = iota({1, 3, 1, 2});
  EXPECT_EQ(Call("Squeeze", 11, {x}).attr("axes", attr_ints({-2})).out().shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(Call("Squeeze", 13, {x, i64({1}, {0})}).out().shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(Call("Squeeze", 13, {x}).out().shape(), (Shape{3, 2}));
  EXPECT_EQ(Call("Squeeze", 13, {x, i64({1}, {1})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Squeeze", 13, {x, i64({1}, {4})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(values<float>(Call("Squeeze", 13, {x}).out()), values<float>(x));
}

TEST(TensorUnsqueeze, AxesAttributeAndInput) {
  Tensor x = iota({3, 2});
  EXPECT_EQ(Call("Unsqueeze", 11, {x}).attr("axes", attr_ints({0, -1})).out().shape(), (Shape{1, 3, 2, 1}));
  EXPECT_EQ(Call("Unsqueeze", 13, {x, i64({2}, {3, 1})}).out().shape(), (Shape{3, 1, 2, 1}));
  EXPECT_EQ(Call("Unsqueeze", 13, {f32({}, {4}), i64({1}, {0})}).out().shape(), (Shape{1}));
  EXPECT_EQ(Call("Unsqueeze", 13, {x, i64({2}, {1, 1})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Unsqueeze", 13, {x, i64({1}, {3})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Unsqueeze", 13, {x}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Unsqueeze", 13, {x, i64({7}, {0, 1, 2, 3, 4, 5, 6})}).code(), StatusCode::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Transpose

TEST(TensorTranspose, MatchesLoopForEveryPermutation) {
  const Shape s{3, 5, 2, 7};
  Tensor x = iota(s);
  std::vector<int64_t> perm = {0, 1, 2, 3};
  const auto st = s.strides();
  do {
    Tensor out = Call("Transpose", 13, {x}).attr("perm", attr_ints(perm)).out();
    const Shape os{s[perm[0]], s[perm[1]], s[perm[2]], s[perm[3]]};
    ASSERT_EQ(out.shape(), os);
    const auto got = values<float>(out);
    int64_t n = 0;
    for (int64_t a = 0; a < os[0]; ++a)
      for (int64_t b = 0; b < os[1]; ++b)
        for (int64_t c = 0; c < os[2]; ++c)
          for (int64_t d = 0; d < os[3]; ++d) {
            const int64_t src = a * st[perm[0]] + b * st[perm[1]] + c * st[perm[2]] + d * st[perm[3]];
            ASSERT_EQ(got[n++], static_cast<float>(src));
          }
  } while (std::next_permutation(perm.begin(), perm.end()));
}

// Sizes past the 32-wide tiles, odd and with a remainder, in every element size.
TEST(TensorTranspose, LargeTiledMatchesLoop) {
  const Shape s{3, 37, 70};
  const auto st = s.strides();
  const std::vector<std::vector<int64_t>> perms = {{0, 2, 1}, {2, 1, 0}, {1, 2, 0}};
  for (const auto& perm : perms) {
    const Shape os{s[perm[0]], s[perm[1]], s[perm[2]]};
    std::vector<int64_t> want;
    for (int64_t a = 0; a < os[0]; ++a)
      for (int64_t b = 0; b < os[1]; ++b)
        for (int64_t c = 0; c < os[2]; ++c) want.push_back(a * st[perm[0]] + b * st[perm[1]] + c * st[perm[2]]);
    std::vector<double> d(s.numel());
    std::vector<uint16_t> h(s.numel());
    std::vector<int8_t> b(s.numel());
    for (int64_t i = 0; i < s.numel(); ++i) {
      d[i] = static_cast<double>(i);
      h[i] = static_cast<uint16_t>(i);
      b[i] = static_cast<int8_t>(i % 127);
    }
    const auto gd = values<double>(Call("Transpose", 13, {make<double>(s, d)}).attr("perm", attr_ints(perm)).out());
    const auto gh = values<uint16_t>(Call("Transpose", 13, {make<uint16_t>(s, h)}).attr("perm", attr_ints(perm)).out());
    const auto gb = values<int8_t>(Call("Transpose", 13, {make<int8_t>(s, b)}).attr("perm", attr_ints(perm)).out());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(gd[i], static_cast<double>(want[i]));
      ASSERT_EQ(gh[i], static_cast<uint16_t>(want[i]));
      ASSERT_EQ(gb[i], static_cast<int8_t>(want[i] % 127));
    }
  }
}

TEST(TensorTranspose, DefaultReversesAndKeepsDtype) {
  Tensor x = make<int8_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor out = Call("Transpose", 13, {x}).out();
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<int8_t>(out), (std::vector<int8_t>{1, 4, 2, 5, 3, 6}));
  Tensor h = make<Half>({2, 1, 2}, {Half{1}, Half{2}, Half{3}, Half{4}});
  auto hv = values<Half>(Call("Transpose", 13, {h}).attr("perm", attr_ints({2, 1, 0})).out());
  EXPECT_EQ(hv[1].bits, 3);
  EXPECT_EQ(Call("Transpose", 13, {iota({0, 3})}).out().shape(), (Shape{3, 0}));
}

TEST(TensorTranspose, RejectsNonPermutation) {
  EXPECT_EQ(Call("Transpose", 13, {iota({2, 3})}).attr("perm", attr_ints({0, 0})).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Transpose", 13, {iota({2, 3})}).attr("perm", attr_ints({0})).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Transpose", 13, {iota({2, 3})}).attr("perm", attr_ints({1, 2})).code(), StatusCode::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Concat, Split

TEST(TensorConcat, NegativeAxisThreeInputsAndEmptyInput) {
  Tensor a = f32({2, 1}, {1, 2});
  Tensor b = f32({2, 2}, {3, 4, 5, 6});
  Tensor e = f32({2, 0}, {});
  Tensor out = Call("Concat", 13, {a, e, b}).attr("axis", attr_int(-1)).out();
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 3, 4, 2, 5, 6}));
  Tensor rows = Call("Concat", 13, {a, a}).attr("axis", attr_int(0)).out();
  EXPECT_EQ(values<float>(rows), (std::vector<float>{1, 2, 1, 2}));
}

TEST(TensorConcat, RejectsMismatches) {
  EXPECT_EQ(Call("Concat", 13, {iota({2, 2}), iota({3, 3})}).attr("axis", attr_int(0)).code(),
            StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Concat", 13, {iota({2}), i64({2}, {1, 2})}).attr("axis", attr_int(0)).code(),
            StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Concat", 13, {iota({2}), iota({2})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Concat", 13, {iota({2}), iota({2})}).attr("axis", attr_int(1)).code(), StatusCode::InvalidArgument);
}

TEST(TensorSplit, EqualVariableAndUneven) {
  Tensor x = iota({2, 6});
  auto r = Call("Split", 13, {x}, 3).attr("axis", attr_int(1)).run();
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values<float>((*r)[1]), (std::vector<float>{2, 3, 8, 9}));

  auto v = Call("Split", 13, {x, i64({2}, {1, 5})}, 2).attr("axis", attr_int(-1)).run();
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(values<float>((*v)[0]), (std::vector<float>{0, 6}));
  EXPECT_EQ((*v)[1].shape(), (Shape{2, 5}));

  auto a = Call("Split", 11, {x}, 2).attr("axis", attr_int(1)).attr("split", attr_ints({4, 2})).run();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(values<float>((*a)[1]), (std::vector<float>{4, 5, 10, 11}));

  // Opset 18: ceil-sized chunks, the last smaller.
  auto u = Call("Split", 18, {iota({7})}, 3).attr("num_outputs", attr_int(3)).run();
  ASSERT_TRUE(u.has_value()) << u.error().to_string();
  EXPECT_EQ((*u)[0].shape(), (Shape{3}));
  EXPECT_EQ(values<float>((*u)[2]), (std::vector<float>{6}));

  auto z = Call("Split", 13, {iota({3}), i64({3}, {0, 3, 0})}, 3).run();
  ASSERT_TRUE(z.has_value());
  EXPECT_EQ((*z)[0].numel(), 0);
  EXPECT_EQ(values<float>((*z)[1]), (std::vector<float>{0, 1, 2}));
}

TEST(TensorSplit, RejectsBadSizes) {
  EXPECT_EQ(Call("Split", 13, {iota({7})}, 3).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Split", 13, {iota({6}), i64({2}, {1, 2})}, 2).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Split", 13, {iota({6}), i64({2}, {1, 5})}, 3).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Split", 13, {iota({6}), i64({2}, {-1, 7})}, 2).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Split", 18, {iota({5})}, 4).attr("num_outputs", attr_int(4)).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Split", 18, {iota({6})}, 2).attr("num_outputs", attr_int(3)).code(), StatusCode::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Slice

// Indices a Slice visits on an axis of size d, by walking from the clamped start (ONNX
// Slice-13 text; an INT_MAX end with a negative step slices to the front).
std::vector<int64_t> walk_slice(int64_t d, int64_t start, int64_t end, int64_t step) {
  const bool to_front = step < 0 && end == std::numeric_limits<int64_t>::max();
  if (start < 0) start += d;
  if (end < 0) end += d;
  if (step > 0) {
    start = std::min(std::max<int64_t>(start, 0), d);
    end = std::min(std::max<int64_t>(end, 0), d);
  } else {
    start = std::min(std::max<int64_t>(start, 0), d - 1);
    end = to_front ? -1 : std::min(std::max<int64_t>(end, -1), d - 1);
  }
  std::vector<int64_t> out;
  if (step > 0)
    for (int64_t i = start; i < end; i += step) out.push_back(i);
  else
    for (int64_t i = start; i > end; i += step) out.push_back(i);
  return out;
}

TEST(TensorSlice, MatchesWalkOverManyParameters) {
  const int64_t rows = 5, cols = 7;
  Tensor x = iota({rows, cols});
  const int64_t big = std::numeric_limits<int64_t>::max(), small = std::numeric_limits<int64_t>::min();
  const std::vector<int64_t> bounds = {small, -9, -7, -3, -1, 0, 1, 3, 6, 7, 9, big};
  const std::vector<int64_t> steps = {-8, -3, -1, 1, 2, 5};
  for (int64_t s0 : bounds)
    for (int64_t e0 : bounds)
      for (int64_t st : steps) {
        // Axis 1 sliced by (s0, e0, st), axis 0 by (1, -1, 1), axes given in reverse order.
        Tensor out =
            Call("Slice", 13, {x, i64({2}, {s0, 1}), i64({2}, {e0, -1}), i64({2}, {-1, 0}), i64({2}, {st, 1})}).out();
        const auto ci = walk_slice(cols, s0, e0, st);
        const auto ri = walk_slice(rows, 1, -1, 1);
        ASSERT_EQ(out.shape(), (Shape{static_cast<int64_t>(ri.size()), static_cast<int64_t>(ci.size())}))
            << s0 << ":" << e0 << ":" << st;
        const auto got = values<float>(out);
        for (size_t r = 0; r < ri.size(); ++r)
          for (size_t c = 0; c < ci.size(); ++c)
            ASSERT_EQ(got[r * ci.size() + c], static_cast<float>(ri[r] * cols + ci[c])) << s0 << ":" << e0 << ":" << st;
      }
}

TEST(TensorSlice, Opset1AttributesAndDefaults) {
  Tensor x = iota({2, 4});
  Tensor out = Call("Slice", 1, {x}).attr("starts", attr_ints({0, 1})).attr("ends", attr_ints({-1, 1000})).out();
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 2, 3}));
  Tensor a = Call("Slice", 9, {x})
                 .attr("axes", attr_ints({1}))
                 .attr("starts", attr_ints({2}))
                 .attr("ends", attr_ints({3}))
                 .out();
  EXPECT_EQ(values<float>(a), (std::vector<float>{2, 6}));
  // Default axes at opset 10+ are 0..n-1; int32 starts/ends work.
  Tensor b = Call("Slice", 10, {x, i32({1}, {1}), i32({1}, {2})}).out();
  EXPECT_EQ(values<float>(b), (std::vector<float>{4, 5, 6, 7}));
}

TEST(TensorSlice, RejectsBadParameters) {
  Tensor x = iota({4});
  EXPECT_EQ(Call("Slice", 13, {x, i64({1}, {0}), i64({1}, {4}), i64({1}, {0}), i64({1}, {0})}).code(),
            StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Slice", 13, {x, i64({1}, {0}), i64({2}, {4, 4})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Slice", 13, {x, i64({1}, {0}), i64({1}, {4}), i64({1}, {1})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Slice", 13, {iota({2, 2}), i64({2}, {0, 0}), i64({2}, {1, 1}), i64({2}, {0, -2})}).code(),
            StatusCode::InvalidArgument);
}

TEST(TensorSlice, ExtremeStepAndEmptyInput) {
  Tensor x = iota({5});
  const int64_t small = std::numeric_limits<int64_t>::min();
  Tensor out = Call("Slice", 13, {x, i64({1}, {-1}), i64({1}, {small}), i64({1}, {0}), i64({1}, {small})}).out();
  EXPECT_EQ(values<float>(out), (std::vector<float>{4}));
  EXPECT_EQ(Call("Slice", 13, {iota({0, 3}), i64({1}, {0}), i64({1}, {2}), i64({1}, {1})}).out().shape(),
            (Shape{0, 2}));
  EXPECT_EQ(
      Call("Slice", 13, {iota({0}), i64({1}, {-1}), i64({1}, {small}), i64({1}, {0}), i64({1}, {-1})}).out().shape(),
      (Shape{0}));
}

// ---------------------------------------------------------------------------------------------
// Expand, Tile

TEST(TensorExpand, BroadcastsBothWays) {
  Tensor x = f32({3, 1}, {1, 2, 3});
  Tensor out = Call("Expand", 13, {x, i64({3}, {2, 1, 4})}).out();
  EXPECT_EQ(out.shape(), (Shape{2, 3, 4}));
  const auto v = values<float>(out);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) EXPECT_EQ(v[(a * 3 + b) * 4 + c], b + 1.0f);
  // A shorter shape keeps the input's dims.
  EXPECT_EQ(Call("Expand", 13, {x, i64({1}, {1})}).out().shape(), (Shape{3, 1}));
  EXPECT_EQ(Call("Expand", 13, {x, i64({2}, {3, 0})}).out().shape(), (Shape{3, 0}));
  EXPECT_EQ(Call("Expand", 13, {x, i64({2}, {2, 4})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Expand", 13, {x, i64({2}, {-1, 4})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Expand", 13, {x, i64({3}, {int64_t{1} << 40, int64_t{1} << 40, 1})}).code(),
            StatusCode::InvalidArgument);
}

TEST(TensorTile, RepeatsEveryAxis) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor out = Call("Tile", 13, {x, i64({2}, {2, 3})}).out();
  EXPECT_EQ(out.shape(), (Shape{4, 9}));
  const auto v = values<float>(out);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 9; ++j) EXPECT_EQ(v[i * 9 + j], (i % 2) * 3 + (j % 3) + 1.0f);
  EXPECT_EQ(Call("Tile", 13, {x, i64({2}, {0, 3})}).out().shape(), (Shape{0, 9}));
  EXPECT_EQ(Call("Tile", 13, {x, i64({2}, {-1, 3})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Tile", 13, {x, i64({1}, {2})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Tile", 13, {x, i64({2}, {int64_t{1} << 62, 4})}).code(), StatusCode::InvalidArgument);
}

TEST(TensorTile, Opset1TilesAlongAxis) {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  Tensor out = Call("Tile", 1, {x, scalar_i64(2), scalar_i64(1)}).out();
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4}));
}

// ---------------------------------------------------------------------------------------------
// Pad

TEST(TensorPad, ConstantWithValueAndNegativePads) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor out = Call("Pad", 13, {x, i64({4}, {1, 0, 0, -1}), f32({}, {9})}).out();
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>(out), (std::vector<float>{9, 9, 1, 2, 4, 5}));
}

TEST(TensorPad, ReflectEdgeWrapLikeNumpy) {
  Tensor x = f32({3}, {1, 2, 3});
  const std::vector<int64_t> pads = {5, 5};
  EXPECT_EQ(values<float>(Call("Pad", 13, {x, i64({2}, pads)}).attr("mode", attr_string("reflect")).out()),
            (std::vector<float>{2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(values<float>(Call("Pad", 13, {x, i64({2}, {2, 1})}).attr("mode", attr_string("edge")).out()),
            (std::vector<float>{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(values<float>(Call("Pad", 19, {x, i64({2}, pads)}).attr("mode", attr_string("wrap")).out()),
            (std::vector<float>{2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2}));
  EXPECT_EQ(Call("Pad", 18, {x, i64({2}, pads)}).attr("mode", attr_string("wrap")).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Pad", 13, {x, i64({2}, pads)}).attr("mode", attr_string("mirror")).code(),
            StatusCode::InvalidArgument);
}

TEST(TensorPad, SpecExamples2D) {
  Tensor x = f32({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  EXPECT_EQ(values<float>(Call("Pad", 13, {x, i64({4}, {0, 2, 0, 0})}).attr("mode", attr_string("reflect")).out()),
            (std::vector<float>{1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f}));
  Tensor w = Call("Pad", 19, {x, i64({4}, {2, 1, 1, 1})}).attr("mode", attr_string("wrap")).out();
  EXPECT_EQ(w.shape(), (Shape{6, 4}));
  EXPECT_EQ(values<float>(w),
            (std::vector<float>{3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f,
                                3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f}));
}

TEST(TensorPad, AxesInputAttributesAndInts) {
  Tensor x = make<int32_t>({2, 2}, {1, 2, 3, 4});
  Tensor out = Call("Pad", 18, {x, i64({2}, {1, 1}), make<int32_t>({}, {7}), i64({1}, {-1})}).out();
  EXPECT_EQ(out.shape(), (Shape{2, 4}));
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{7, 1, 2, 7, 7, 3, 4, 7}));
  Tensor a = Call("Pad", 2, {f32({2}, {1, 2})}).attr("pads", attr_ints({1, 0})).attr("value", attr_float(-1)).out();
  EXPECT_EQ(values<float>(a), (std::vector<float>{-1, 1, 2}));
  Tensor p = Call("Pad", 1, {f32({2}, {1, 2})}).attr("paddings", attr_ints({0, 2})).out();
  EXPECT_EQ(values<float>(p), (std::vector<float>{1, 2, 0, 0}));
}

TEST(TensorPad, RejectsBadPads) {
  Tensor x = iota({2, 2});
  EXPECT_EQ(Call("Pad", 13, {x, i64({2}, {1, 1})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Pad", 13, {x, i64({4}, {-3, 0, 0, 0})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Pad", 13, {iota({0, 2}), i64({4}, {1, 0, 0, 0})}).attr("mode", attr_string("edge")).code(),
            StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Pad", 13, {x, i64({4}, {0, 0, 0, 0}), i64({}, {0})}).code(), StatusCode::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// ConstantOfShape, Range, EyeLike

TEST(TensorConstantOfShape, DefaultValueAndDtype) {
  Tensor out = Call("ConstantOfShape", 9, {i64({2}, {2, 3})}).out();
  EXPECT_EQ(out.dtype(), DType::F32);
  EXPECT_EQ(values<float>(out), std::vector<float>(6, 0.0f));
  Tensor v = Call("ConstantOfShape", 9, {i64({1}, {3})}).attr("value", attr_tensor(make<int32_t>({1}, {5}))).out();
  EXPECT_EQ(values<int32_t>(v), (std::vector<int32_t>{5, 5, 5}));
  EXPECT_EQ(Call("ConstantOfShape", 9, {i64({0}, {})}).out().shape(), Shape{});
  EXPECT_EQ(Call("ConstantOfShape", 9, {i64({2}, {0, 4})}).out().numel(), 0);
  EXPECT_EQ(Call("ConstantOfShape", 9, {i64({1}, {-2})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("ConstantOfShape", 9, {i64({2}, {int64_t{1} << 40, int64_t{1} << 40})}).code(),
            StatusCode::InvalidArgument);
}

TEST(TensorRange, FloatIntAndEmpty) {
  Tensor f = Call("Range", 11, {f32({}, {1}), f32({}, {2}), f32({}, {0.3f})}).out();
  ASSERT_EQ(f.numel(), 4);
  EXPECT_NEAR(values<float>(f)[3], 1.9f, 1e-6);
  Tensor i = Call("Range", 11, {i32({}, {10}), i32({}, {4}), i32({}, {-3})}).out();
  EXPECT_EQ(values<int32_t>(i), (std::vector<int32_t>{10, 7}));
  EXPECT_EQ(Call("Range", 11, {i64({}, {5}), i64({}, {1}), i64({}, {2})}).out().numel(), 0);
  EXPECT_EQ(Call("Range", 11, {i64({}, {0}), i64({}, {5}), i64({}, {0})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Range", 11, {i64({}, {0}), i32({}, {5}), i64({}, {1})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Range", 11, {make<uint8_t>({}, {0}), make<uint8_t>({}, {5}), make<uint8_t>({}, {1})}).code(),
            StatusCode::Unsupported);
}

TEST(TensorEyeLike, OffsetDiagonalAndDtype) {
  Tensor out = Call("EyeLike", 9, {iota({3, 4})}).attr("k", attr_int(1)).out();
  EXPECT_EQ(values<float>(out), (std::vector<float>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  Tensor i = Call("EyeLike", 9, {iota({2, 2})}).attr("dtype", attr_int(7)).attr("k", attr_int(-1)).out();
  EXPECT_EQ(i.dtype(), DType::I64);
  EXPECT_EQ(values<int64_t>(i), (std::vector<int64_t>{0, 0, 1, 0}));
  EXPECT_EQ(
      values<float>(Call("EyeLike", 9, {iota({2, 2})}).attr("k", attr_int(std::numeric_limits<int64_t>::max())).out()),
      std::vector<float>(4, 0.0f));
  EXPECT_EQ(Call("EyeLike", 9, {iota({2})}).code(), StatusCode::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// DepthToSpace, SpaceToDepth

TEST(TensorDepthToSpace, DcrAndCrdMatchLoops) {
  const int64_t n = 2, c = 8, h = 3, w = 2, b = 2, co = c / (b * b);
  Tensor x = iota({n, c, h, w});
  for (const char* mode : {"DCR", "CRD"}) {
    Tensor out = Call("DepthToSpace", 13, {x}).attr("blocksize", attr_int(b)).attr("mode", attr_string(mode)).out();
    ASSERT_EQ(out.shape(), (Shape{n, co, h * b, w * b}));
    const auto v = values<float>(out);
    const bool dcr = std::string(mode) == "DCR";
    for (int64_t in = 0; in < n; ++in)
      for (int64_t oc = 0; oc < co; ++oc)
        for (int64_t y = 0; y < h * b; ++y)
          for (int64_t xx = 0; xx < w * b; ++xx) {
            const int64_t by = y % b, bx = xx % b;
            const int64_t ch = dcr ? (by * b + bx) * co + oc : oc * b * b + by * b + bx;
            const float want = static_cast<float>(((in * c + ch) * h + y / b) * w + xx / b);
            ASSERT_EQ(v[((in * co + oc) * h * b + y) * w * b + xx], want) << mode;
          }
  }
}

TEST(TensorSpaceToDepth, InvertsDepthToSpaceDcr) {
  Tensor x = iota({1, 3, 4, 6});
  Tensor d = Call("SpaceToDepth", 13, {x}).attr("blocksize", attr_int(2)).out();
  EXPECT_EQ(d.shape(), (Shape{1, 12, 2, 3}));
  Tensor back = Call("DepthToSpace", 13, {d}).attr("blocksize", attr_int(2)).out();
  EXPECT_EQ(values<float>(back), values<float>(x));
  // Channel (by*b + bx)*C + c holds x[c][y*b + by][x*b + bx]; here by=0, bx=1, c=2, y=1, x=2.
  EXPECT_EQ(values<float>(d)[(1 * 3 + 2) * 6 + 1 * 3 + 2], static_cast<float>((2 * 4 + 1 * 2 + 0) * 6 + 2 * 2 + 1));
  EXPECT_EQ(Call("SpaceToDepth", 13, {iota({1, 1, 3, 4})}).attr("blocksize", attr_int(2)).code(),
            StatusCode::InvalidArgument);
  EXPECT_EQ(Call("DepthToSpace", 13, {iota({1, 3, 2, 2})}).attr("blocksize", attr_int(2)).code(),
            StatusCode::InvalidArgument);
  EXPECT_EQ(Call("DepthToSpace", 1, {iota({1, 4, 1, 1})})
                .attr("blocksize", attr_int(2))
                .attr("mode", attr_string("CRD"))
                .code(),
            StatusCode::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Gather, GatherElements, GatherND

TEST(TensorGather, AxisNegativeIndicesAndInt32) {
  Tensor data = iota({3, 4});
  Tensor out = Call("Gather", 13, {data, i64({2, 2}, {0, -1, 2, 1})}).attr("axis", attr_int(1)).out();
  EXPECT_EQ(out.shape(), (Shape{3, 2, 2}));
  EXPECT_EQ(values<float>(out), (std::vector<float>{0, 3, 2, 1, 4, 7, 6, 5, 8, 11, 10, 9}));
  Tensor s = Call("Gather", 13, {data, i32({}, {-3})}).out();
  EXPECT_EQ(s.shape(), (Shape{4}));
  EXPECT_EQ(values<float>(s), (std::vector<float>{0, 1, 2, 3}));
  EXPECT_EQ(Call("Gather", 13, {data, i64({0}, {})}).out().shape(), (Shape{0, 4}));
}

TEST(TensorGather, OutOfRangeIndexIsAnError) {
  Tensor data = iota({3, 4});
  EXPECT_EQ(Call("Gather", 13, {data, i64({1}, {3})}).code(), StatusCode::OutOfRange);
  EXPECT_EQ(Call("Gather", 13, {data, i64({1}, {-4})}).code(), StatusCode::OutOfRange);
  EXPECT_EQ(Call("Gather", 13, {data, f32({1}, {0})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Gather", 13, {data, i64({1}, {0})}).attr("axis", attr_int(2)).code(), StatusCode::InvalidArgument);
}

TEST(TensorGatherElements, SpecExampleAndErrors) {
  Tensor data = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor out = Call("GatherElements", 13, {data, i64({2, 3}, {1, 2, 0, 2, 0, -3})}).out();
  EXPECT_EQ(values<float>(out), (std::vector<float>{4, 8, 3, 7, 2, 3}));
  Tensor a1 = Call("GatherElements", 13, {data, i32({3, 1}, {2, 0, 1})}).attr("axis", attr_int(-1)).out();
  EXPECT_EQ(values<float>(a1), (std::vector<float>{3, 4, 8}));
  EXPECT_EQ(Call("GatherElements", 13, {data, i64({1, 1}, {3})}).code(), StatusCode::OutOfRange);
  EXPECT_EQ(Call("GatherElements", 13, {data, i64({1, 4}, {0, 0, 0, 0})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("GatherElements", 13, {data, i64({3}, {0, 0, 0})}).code(), StatusCode::InvalidArgument);
}

TEST(TensorGatherND, SlicesAndBatchDims) {
  Tensor data = make<int32_t>({2, 2}, {0, 1, 2, 3});
  EXPECT_EQ(values<int32_t>(Call("GatherND", 13, {data, i64({2, 2}, {0, 0, 1, 1})}).out()),
            (std::vector<int32_t>{0, 3}));
  Tensor rows = Call("GatherND", 13, {data, i64({2, 1}, {1, -2})}).out();
  EXPECT_EQ(rows.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int32_t>(rows), (std::vector<int32_t>{2, 3, 0, 1}));
  Tensor cube = make<int32_t>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor b = Call("GatherND", 13, {cube, i64({2, 1}, {1, 0})}).attr("batch_dims", attr_int(1)).out();
  EXPECT_EQ(b.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int32_t>(b), (std::vector<int32_t>{2, 3, 4, 5}));
  EXPECT_EQ(Call("GatherND", 13, {data, i64({1, 2}, {0, 2})}).code(), StatusCode::OutOfRange);
  EXPECT_EQ(Call("GatherND", 13, {data, i64({1, 3}, {0, 0, 0})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("GatherND", 13, {cube, i64({3, 1}, {0, 0, 0})}).attr("batch_dims", attr_int(1)).code(),
            StatusCode::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// ScatterElements, Scatter, ScatterND

TEST(TensorScatterElements, SpecExampleAndReductions) {
  Tensor data = f32({3, 3}, std::vector<float>(9, 0.0f));
  Tensor idx = i64({2, 3}, {1, 0, 2, 0, 2, 1});
  Tensor upd = f32({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f});
  EXPECT_EQ(values<float>(Call("ScatterElements", 13, {data, idx, upd}).out()),
            (std::vector<float>{2.0f, 1.1f, 0.0f, 1.0f, 0.0f, 2.2f, 0.0f, 2.1f, 1.2f}));

  Tensor d = f32({1, 5}, {1, 2, 3, 4, 5});
  Tensor dup = i64({1, 2}, {1, -4});
  Tensor u = f32({1, 2}, {1.5f, 2.0f});
  auto with = [&](int64_t opset, const char* red) {
    return values<float>(Call("ScatterElements", opset, {d, dup, u})
                             .attr("axis", attr_int(1))
                             .attr("reduction", attr_string(red))
                             .out());
  };
  EXPECT_EQ(with(16, "add"), (std::vector<float>{1, 5.5f, 3, 4, 5}));
  EXPECT_EQ(with(16, "mul"), (std::vector<float>{1, 6, 3, 4, 5}));
  EXPECT_EQ(with(18, "max"), (std::vector<float>{1, 2, 3, 4, 5}));
  EXPECT_EQ(with(18, "min"), (std::vector<float>{1, 1.5f, 3, 4, 5}));
  EXPECT_EQ(Call("ScatterElements", 16, {d, dup, u}).attr("reduction", attr_string("max")).code(),
            StatusCode::InvalidArgument);
}

TEST(TensorScatterElements, IntegerWrapAndErrors) {
  Tensor d = make<int8_t>({2}, {100, 1});
  Tensor out = Call("ScatterElements", 16, {d, i64({1}, {0}), make<int8_t>({1}, {100})})
                   .attr("reduction", attr_string("add"))
                   .out();
  EXPECT_EQ(values<int8_t>(out)[0], static_cast<int8_t>(-56));
  EXPECT_EQ(Call("ScatterElements", 13, {d, i64({1}, {2}), make<int8_t>({1}, {1})}).code(), StatusCode::OutOfRange);
  EXPECT_EQ(Call("ScatterElements", 13, {d, i64({1}, {0}), make<int8_t>({2}, {1, 1})}).code(),
            StatusCode::InvalidArgument);
  EXPECT_EQ(Call("ScatterElements", 13, {d, i64({1}, {0}), f32({1}, {1})}).code(), StatusCode::InvalidArgument);
}

TEST(TensorScatter, Opset10Alias) {
  Tensor data = f32({1, 5}, {1, 2, 3, 4, 5});
  Tensor out =
      Call("Scatter", 10, {data, i64({1, 2}, {1, 3}), f32({1, 2}, {1.1f, 2.1f})}).attr("axis", attr_int(1)).out();
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 1.1f, 3, 2.1f, 5}));
  EXPECT_EQ(Call("Scatter", 11, {data, i64({1, 2}, {1, 3}), f32({1, 2}, {1.1f, 2.1f})}).code(),
            StatusCode::Unsupported);
}

TEST(TensorScatterND, ElementsSlicesAndReduction) {
  Tensor data = f32({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor out = Call("ScatterND", 13, {data, i64({4, 1}, {4, 3, 1, -1}), f32({4}, {9, 10, 11, 12})}).out();
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));

  Tensor m = iota({2, 3});
  Tensor rows = Call("ScatterND", 16, {m, i64({2, 1}, {1, 1}), f32({2, 3}, {1, 1, 1, 2, 2, 2})})
                    .attr("reduction", attr_string("add"))
                    .out();
  EXPECT_EQ(values<float>(rows), (std::vector<float>{0, 1, 2, 6, 7, 8}));
  Tensor mul =
      Call("ScatterND", 16, {m, i64({1, 2}, {1, 2}), f32({1}, {10})}).attr("reduction", attr_string("mul")).out();
  EXPECT_EQ(values<float>(mul), (std::vector<float>{0, 1, 2, 3, 4, 50}));
  EXPECT_EQ(Call("ScatterND", 13, {m, i64({1, 2}, {2, 0}), f32({1}, {1})}).code(), StatusCode::OutOfRange);
  EXPECT_EQ(Call("ScatterND", 13, {m, i64({1, 1}, {0}), f32({1}, {1})}).code(), StatusCode::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// OneHot, NonZero, Compress

TEST(TensorOneHot, AxisNegativeAndOutOfRangeIndices) {
  Tensor idx = i64({3}, {0, -1, 5});
  Tensor vals = f32({2}, {0, 3});
  Tensor out = Call("OneHot", 11, {idx, f32({}, {3}), vals}).out();
  EXPECT_EQ(out.shape(), (Shape{3, 3}));
  EXPECT_EQ(values<float>(out), (std::vector<float>{3, 0, 0, 0, 0, 3, 0, 0, 0}));
  Tensor a0 = Call("OneHot", 11, {f32({2}, {1.7f, 0}), i64({1}, {2}), make<int32_t>({2}, {-1, 1})})
                  .attr("axis", attr_int(0))
                  .out();
  EXPECT_EQ(a0.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int32_t>(a0), (std::vector<int32_t>{-1, 1, 1, -1}));
  EXPECT_EQ(Call("OneHot", 11, {idx, f32({}, {0}), vals}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("OneHot", 11, {idx, f32({}, {3}), f32({3}, {0, 1, 2})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("OneHot", 11, {idx, f32({}, {3}), vals}).attr("axis", attr_int(2)).code(),
            StatusCode::InvalidArgument);
}

TEST(TensorNonZero, CoordinatesAndScalar) {
  Tensor out = Call("NonZero", 13, {f32({2, 3}, {0, 1, 0, -2, 0, NAN})}).out();
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(out), (std::vector<int64_t>{0, 1, 1, 1, 0, 2}));
  EXPECT_EQ(Call("NonZero", 13, {boolean({}, {1})}).out().shape(), (Shape{1, 1}));
  EXPECT_EQ(Call("NonZero", 13, {iota({0, 2})}).out().shape(), (Shape{2, 0}));
}

TEST(TensorNonZero, NeedsTheInputValue) {
  const auto* schema = ir::OpSchemaRegistry::global().find("", "NonZero", 13);
  ASSERT_NE(schema, nullptr);
  ir::ValueType t{DType::F32, Shape{4}};
  const ir::ValueType* types[] = {&t};
  const Tensor* vals[] = {nullptr};
  AttrMap attrs;
  ir::InferContext ctx("n", "NonZero", 13, attrs, types, vals, 1);
  EXPECT_EQ(schema->infer(ctx).code(), StatusCode::ValueRequired);
}

TEST(TensorReshape, UnknownShapeValueIsValueRequired) {
  const auto* schema = ir::OpSchemaRegistry::global().find("", "Reshape", 13);
  ASSERT_NE(schema, nullptr);
  ir::ValueType x{DType::F32, Shape{4}}, s{DType::I64, Shape{2}};
  const ir::ValueType* types[] = {&x, &s};
  const Tensor* vals[] = {nullptr, nullptr};
  AttrMap attrs;
  ir::InferContext ctx("r", "Reshape", 13, attrs, types, vals, 1);
  EXPECT_EQ(schema->infer(ctx).code(), StatusCode::ValueRequired);
}

TEST(TensorCompress, AxisFlattenAndShortCondition) {
  Tensor x = iota({3, 2});
  Tensor rows = Call("Compress", 11, {x, boolean({2}, {0, 1})}).attr("axis", attr_int(0)).out();
  EXPECT_EQ(rows.shape(), (Shape{1, 2}));
  EXPECT_EQ(values<float>(rows), (std::vector<float>{2, 3}));
  Tensor cols = Call("Compress", 11, {x, boolean({2}, {0, 1})}).attr("axis", attr_int(-1)).out();
  EXPECT_EQ(values<float>(cols), (std::vector<float>{1, 3, 5}));
  Tensor flat = Call("Compress", 11, {x, boolean({6}, {0, 1, 0, 0, 1, 1})}).out();
  EXPECT_EQ(values<float>(flat), (std::vector<float>{1, 4, 5}));
  EXPECT_EQ(Call("Compress", 11, {x, boolean({4}, {0, 0, 0, 1})}).attr("axis", attr_int(0)).code(),
            StatusCode::InvalidArgument);
  EXPECT_EQ(Call("Compress", 11, {x, boolean({4}, {1, 0, 0, 0})}).attr("axis", attr_int(0)).out().shape(),
            (Shape{1, 2}));
}

// ---------------------------------------------------------------------------------------------
// Trilu, ReverseSequence, CumSum, TopK

TEST(TensorTrilu, UpperLowerWithK) {
  const int64_t rows = 3, cols = 4;
  Tensor x = iota({2, rows, cols});
  for (int upper = 0; upper <= 1; ++upper)
    for (int64_t k : {-4, -1, 0, 2, 5}) {
      Tensor out = Call("Trilu", 14, {x, scalar_i64(k)}).attr("upper", attr_int(upper)).out();
      const auto v = values<float>(out);
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t at = (b * rows + i) * cols + j;
            const bool keep = upper ? j >= i + k : j <= i + k;
            ASSERT_EQ(v[at], keep ? static_cast<float>(at) : 0.0f) << upper << " " << k;
          }
    }
  Tensor d = Call("Trilu", 14, {iota({2, 2})}).out();
  EXPECT_EQ(values<float>(d), (std::vector<float>{0, 1, 0, 3}));
  EXPECT_EQ(Call("Trilu", 14, {iota({3})}).code(), StatusCode::InvalidArgument);
}

TEST(TensorReverseSequence, SpecExamples) {
  Tensor x = iota({4, 4});
  Tensor t0 = Call("ReverseSequence", 10, {x, i64({4}, {4, 3, 2, 1})})
                  .attr("time_axis", attr_int(0))
                  .attr("batch_axis", attr_int(1))
                  .out();
  // x[t][b] = 4t + b.
  EXPECT_EQ(values<float>(t0), (std::vector<float>{12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15}));
  Tensor t1 = Call("ReverseSequence", 10, {x, i64({4}, {1, 2, 3, 4})})
                  .attr("time_axis", attr_int(1))
                  .attr("batch_axis", attr_int(0))
                  .out();
  EXPECT_EQ(values<float>(t1), (std::vector<float>{0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12}));
  EXPECT_EQ(Call("ReverseSequence", 10, {x, i64({4}, {1, 2, 3, 5})}).code(), StatusCode::OutOfRange);
  EXPECT_EQ(Call("ReverseSequence", 10, {x, i64({3}, {1, 2, 3})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("ReverseSequence", 10, {x, i64({4}, {1, 1, 1, 1})}).attr("time_axis", attr_int(1)).code(),
            StatusCode::InvalidArgument);
}

TEST(TensorCumSum, ExclusiveReverseCombinations) {
  Tensor x = f32({3}, {1, 2, 3});
  auto run = [&](int ex, int rev) {
    return values<float>(
        Call("CumSum", 14, {x, i32({}, {0})}).attr("exclusive", attr_int(ex)).attr("reverse", attr_int(rev)).out());
  };
  EXPECT_EQ(run(0, 0), (std::vector<float>{1, 3, 6}));
  EXPECT_EQ(run(1, 0), (std::vector<float>{0, 1, 3}));
  EXPECT_EQ(run(0, 1), (std::vector<float>{6, 5, 3}));
  EXPECT_EQ(run(1, 1), (std::vector<float>{5, 3, 0}));
  Tensor m = Call("CumSum", 14, {make<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}), i64({1}, {-2})}).out();
  EXPECT_EQ(values<int32_t>(m), (std::vector<int32_t>{1, 2, 3, 5, 7, 9}));
  Tensor wrap = Call("CumSum", 14, {make<int32_t>({2}, {std::numeric_limits<int32_t>::max(), 1}), i64({}, {0})}).out();
  EXPECT_EQ(values<int32_t>(wrap)[1], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(Call("CumSum", 14, {x, i64({}, {1})}).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("CumSum", 14, {boolean({1}, {1}), i64({}, {0})}).code(), StatusCode::Unsupported);
}

TEST(TensorTopK, LargestSmallestTiesAndNan) {
  Tensor x = f32({2, 4}, {3, 1, 3, 2, NAN, 5, 5, -1});
  auto r = Call("TopK", 11, {x, i64({1}, {3})}, 2).run();
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values<int64_t>((*r)[1]), (std::vector<int64_t>{0, 2, 3, 0, 1, 2}));
  const auto v = values<float>((*r)[0]);
  EXPECT_EQ(v[0], 3);
  EXPECT_TRUE(std::isnan(v[3]));
  EXPECT_EQ(v[4], 5);

  auto s = Call("TopK", 11, {x, i64({1}, {2})}, 2).attr("largest", attr_int(0)).attr("axis", attr_int(0)).run();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(values<int64_t>((*s)[1]), (std::vector<int64_t>{0, 0, 0, 1, 1, 1, 1, 0}));

  auto k0 = Call("TopK", 11, {x, i64({1}, {0})}, 2).run();
  ASSERT_TRUE(k0.has_value());
  EXPECT_EQ((*k0)[0].shape(), (Shape{2, 0}));

  auto v1 = Call("TopK", 1, {make<int64_t>({5}, {4, 9, 9, 1, 7})}, 2).attr("k", attr_int(2)).run();
  ASSERT_TRUE(v1.has_value());
  EXPECT_EQ(values<int64_t>((*v1)[0]), (std::vector<int64_t>{9, 9}));
  EXPECT_EQ(values<int64_t>((*v1)[1]), (std::vector<int64_t>{1, 2}));

  EXPECT_EQ(Call("TopK", 11, {x, i64({1}, {5})}, 2).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Call("TopK", 11, {x, i64({1}, {-1})}, 2).code(), StatusCode::InvalidArgument);
}

TEST(TensorUnique, SortedUnsortedAndAxis) {
  Tensor x = f32({6}, {2, 1, 1, 3, 4, 3});
  auto s = Call("Unique", 11, {x}, 4).run();
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  EXPECT_EQ(values<float>((*s)[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>((*s)[1]), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(values<int64_t>((*s)[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>((*s)[3]), (std::vector<int64_t>{2, 1, 2, 1}));

  auto u = Call("Unique", 11, {x}, 4).attr("sorted", attr_int(0)).run();
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(values<float>((*u)[0]), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>((*u)[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>((*u)[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>((*u)[3]), (std::vector<int64_t>{1, 2, 2, 1}));

  // Columns of [[1,0,0],[1,0,0],[2,3,3]]: (1,1,2), (0,0,3), (0,0,3).
  Tensor m = f32({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 3});
  auto a = Call("Unique", 11, {m}, 4).attr("axis", attr_int(-1)).run();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ((*a)[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>((*a)[0]), (std::vector<float>{0, 1, 0, 1, 3, 2}));
  EXPECT_EQ(values<int64_t>((*a)[2]), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(Call("Unique", 11, {m}, 4).attr("axis", attr_int(2)).code(), StatusCode::InvalidArgument);
  auto e = Call("Unique", 11, {iota({0})}, 4).run();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ((*e)[0].numel(), 0);
}

// ---------------------------------------------------------------------------------------------
// Dtype coverage: the data-movement kernels are element-size generic.

TEST(TensorDtypes, MovesEveryElementSize) {
  Tensor b = boolean({2, 2}, {1, 0, 0, 1});
  EXPECT_EQ(bools(Call("Transpose", 13, {b}).attr("perm", attr_ints({1, 0})).out()), (std::vector<int>{1, 0, 0, 1}));
  EXPECT_EQ(bools(Call("Concat", 13, {b, b}).attr("axis", attr_int(1)).out()),
            (std::vector<int>{1, 0, 1, 0, 0, 1, 0, 1}));
  Tensor h = make<uint16_t>({3}, {1, 2, 3});
  EXPECT_EQ(
      values<uint16_t>(Call("Slice", 13, {h, i64({1}, {-1}), i64({1}, {-4}), i64({1}, {0}), i64({1}, {-1})}).out()),
      (std::vector<uint16_t>{3, 2, 1}));
  Tensor d = make<double>({2}, {1.5, 2.5});
  EXPECT_EQ(values<double>(Call("Tile", 13, {d, i64({1}, {2})}).out()), (std::vector<double>{1.5, 2.5, 1.5, 2.5}));
  Tensor bf = make<BFloat16>({1}, {BFloat16{0x3f80}});
  EXPECT_EQ(values<BFloat16>(Call("Expand", 13, {bf, i64({1}, {3})}).out())[2].bits, 0x3f80);
  Tensor fh =
      Call("CumSum", 14, {make<Half>({2}, {Half{float_to_half(1.5f)}, Half{float_to_half(2.0f)}}), i64({}, {0})}).out();
  EXPECT_EQ(half_to_float(values<Half>(fh)[1].bits), 3.5f);
}

}  // namespace
}  // namespace ignis
