// SPDX-License-Identifier: Apache-2.0
// Tests for Conv and ConvTranspose. Expected values come from direct N-D loops over the
// definition (gather for Conv, scatter for ConvTranspose) written here, with pads worked
// out per case.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

struct Window {
  std::vector<int64_t> strides, dilations, pad_begin;
};

// Iterates all index tuples of `dims`.
bool next_index(std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    if (++idx[i] < dims[i]) return true;
    idx[i] = 0;
  }
  return false;
}

int64_t flat(const std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  int64_t f = 0;
  for (size_t i = 0; i < dims.size(); ++i) f = f * dims[i] + idx[i];
  return f;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t d : v) p *= d;
  return p;
}

// y[n, m, o] = b[m] + sum_{c in group, k} x[n, c, o * s - p + k * d] * w[m, c - c0, k]
std::vector<double> naive_conv(const Shape& xs, const std::vector<float>& x, const Shape& wsh,
                               const std::vector<float>& w, const std::vector<float>& b, int64_t group,
                               const Window& win, const std::vector<int64_t>& out) {
  const int64_t n = xs[0], c = xs[1], m = wsh[0], cg = c / group, mg = m / group;
  const std::vector<int64_t> in(xs.begin() + 2, xs.end()), ker(wsh.begin() + 2, wsh.end());
  const int rank = static_cast<int>(in.size());
  std::vector<double> y(static_cast<size_t>(n * m * product(out)));
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t mi = 0; mi < m; ++mi) {
      std::vector<int64_t> o(rank, 0);
      do {
        double s = b.empty() ? 0.0 : b[mi];
        const int64_t g = mi / mg;
        for (int64_t ci = 0; ci < cg; ++ci) {
          std::vector<int64_t> k(rank, 0);
          do {
            std::vector<int64_t> p(rank);
            bool inside = true;
            for (int i = 0; i < rank; ++i) {
              p[i] = o[i] * win.strides[i] - win.pad_begin[i] + k[i] * win.dilations[i];
              if (p[i] < 0 || p[i] >= in[i]) inside = false;
            }
            if (!inside) continue;
            const double xv = x[(ni * c + g * cg + ci) * product(in) + flat(p, in)];
            const double wv = w[(mi * cg + ci) * product(ker) + flat(k, ker)];
            s += xv * wv;
          } while (next_index(k, ker));
        }
        y[(ni * m + mi) * product(out) + flat(o, out)] = s;
      } while (product(out) > 0 && next_index(o, out));
    }
  return y;
}

struct ConvCase {
  std::string name;
  Shape x, w;
  int64_t group;
  std::vector<int64_t> strides, dilations, pads;  // ONNX attributes; empty = default
  std::string auto_pad;
  bool bias;
  // Expected pads (begin) and output extents, worked out by hand for the case.
  std::vector<int64_t> pad_begin, out;
};

class ConvOp : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvOp, MatchesDirectLoops) {
  const ConvCase cc = GetParam();
  const int rank = cc.x.rank() - 2;
  OpCall call;
  call.op_type = "Conv";
  call.opset = 11;
  if (cc.group != 1) call.attrs.set("group", attr_int(cc.group));
  if (!cc.strides.empty()) call.attrs.set("strides", attr_ints(cc.strides));
  if (!cc.dilations.empty()) call.attrs.set("dilations", attr_ints(cc.dilations));
  if (!cc.pads.empty()) call.attrs.set("pads", attr_ints(cc.pads));
  if (!cc.auto_pad.empty()) call.attrs.set("auto_pad", attr_string(cc.auto_pad));
  Tensor x = random_tensor(cc.x, 31), w = random_tensor(cc.w, 32), b = random_tensor({cc.w[0]}, 33);
  call.inputs = {x, w};
  if (cc.bias) call.inputs.push_back(b);
  Window win{cc.strides.empty() ? std::vector<int64_t>(rank, 1) : cc.strides,
             cc.dilations.empty() ? std::vector<int64_t>(rank, 1) : cc.dilations, cc.pad_begin};
  const auto want = naive_conv(cc.x, values_of<float>(x), cc.w, values_of<float>(w),
                               cc.bias ? values_of<float>(b) : std::vector<float>{}, cc.group, win, cc.out);
  std::vector<int64_t> yshape = {cc.x[0], cc.w[0]};
  yshape.insert(yshape.end(), cc.out.begin(), cc.out.end());
  for (int threads : {1, 2, 3}) {
    auto r = run_op_threads(call, threads);
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    ASSERT_EQ((*r)[0].shape(), Shape(yshape)) << cc.name;
    expect_close((*r)[0], want, 1e-5, 1e-5, cc.name);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConvOp,
    ::testing::Values(
        ConvCase{"conv1d", {2, 3, 11}, {4, 3, 3}, 1, {2}, {2}, {1, 2}, "", true, {1}, {5}},
        ConvCase{"conv2d_asym", {1, 3, 7, 9}, {5, 3, 3, 3}, 1, {2, 1}, {1, 2}, {1, 0, 2, 1}, "", true, {1, 0}, {4, 6}},
        ConvCase{"conv2d_groups", {2, 4, 6, 6}, {6, 2, 3, 3}, 2, {}, {}, {1, 1, 1, 1}, "", false, {1, 1}, {6, 6}},
        ConvCase{"depthwise", {1, 4, 9, 8}, {4, 1, 3, 3}, 4, {2, 2}, {}, {1, 1, 1, 1}, "", true, {1, 1}, {5, 4}},
        ConvCase{"depthwise_mult", {1, 3, 6, 6}, {6, 1, 5, 5}, 3, {}, {}, {2, 2, 2, 2}, "", true, {2, 2}, {6, 6}},
        ConvCase{"depthwise_dilated", {2, 5, 10, 7}, {5, 1, 3, 3}, 5, {1, 2}, {2, 1}, {2, 1, 2, 1}, "", false, {2, 1},
                 {10, 4}},
        ConvCase{"depthwise_1d", {1, 3, 12}, {3, 1, 4}, 3, {3}, {}, {2, 1}, "", true, {2}, {4}},
        ConvCase{"pointwise", {2, 5, 4, 3}, {7, 5, 1, 1}, 1, {}, {}, {}, "", true, {0, 0}, {4, 3}},
        ConvCase{"pointwise_strided", {1, 5, 5, 7}, {3, 5, 1, 1}, 1, {2, 3}, {}, {}, "", true, {0, 0}, {3, 3}},
        ConvCase{"conv3d", {1, 2, 5, 6, 4}, {3, 2, 3, 2, 3}, 1, {2, 1, 1}, {}, {1, 0, 1, 0, 1, 1}, "", true,
                 {1, 0, 1}, {2, 6, 4}},
        ConvCase{"conv3d_groups", {1, 4, 4, 4, 4}, {4, 2, 2, 2, 2}, 2, {}, {1, 2, 1}, {}, "", false, {0, 0, 0},
                 {3, 2, 3}},
        // out = ceil(in / 2) = 4, 4; total pads 2 (split 1/1) and 1 (upper: 0/1, lower: 1/0).
        ConvCase{"same_upper", {1, 2, 7, 8}, {3, 2, 3, 3}, 1, {2, 2}, {}, {}, "SAME_UPPER", true, {1, 0}, {4, 4}},
        ConvCase{"same_lower", {1, 2, 7, 8}, {3, 2, 3, 3}, 1, {2, 2}, {}, {}, "SAME_LOWER", true, {1, 1}, {4, 4}},
        ConvCase{"valid", {1, 2, 7, 8}, {3, 2, 3, 3}, 1, {2, 2}, {}, {}, "VALID", true, {0, 0}, {3, 3}},
        ConvCase{"chunked", {1, 64, 20, 21}, {8, 64, 3, 3}, 1, {}, {}, {1, 1, 1, 1}, "", true, {1, 1}, {20, 21}},
        ConvCase{"chunked_groups", {2, 32, 17, 19}, {16, 8, 3, 3}, 4, {}, {}, {1, 1, 1, 1}, "", true, {1, 1},
                 {17, 19}},
        ConvCase{"zero_batch", {0, 3, 5, 5}, {2, 3, 3, 3}, 1, {}, {}, {}, "", true, {0, 0}, {3, 3}}),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return info.param.name; });

TEST(ConvOp, KernelShapeAttributeMustMatchWeights) {
  OpCall call;
  call.op_type = "Conv";
  call.inputs = {random_tensor({1, 2, 5, 5}, 1), random_tensor({3, 2, 3, 3}, 2)};
  call.attrs.set("kernel_shape", attr_ints({3, 3}));
  EXPECT_EQ(status_of(call), StatusCode::Ok);
  call.attrs.set("kernel_shape", attr_ints({2, 3}));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
}

TEST(ConvOp, RejectsInvalidModels) {
  auto base = [] {
    OpCall call;
    call.op_type = "Conv";
    call.inputs = {random_tensor({1, 4, 5, 5}, 1), random_tensor({6, 2, 3, 3}, 2)};
    call.attrs.set("group", attr_int(2));
    return call;
  };
  EXPECT_EQ(status_of(base()), StatusCode::Ok);
  OpCall c = base();
  c.attrs.set("group", attr_int(3));
  EXPECT_EQ(status_of(c), StatusCode::InvalidArgument) << "channels not divisible";
  c = base();
  c.attrs.set("group", attr_int(0));
  EXPECT_EQ(status_of(c), StatusCode::InvalidArgument) << "group 0";
  c = base();
  c.inputs.push_back(random_tensor({5}, 3));
  EXPECT_EQ(status_of(c), StatusCode::InvalidArgument) << "bias size";
  c = base();
  c.attrs.set("auto_pad", attr_string("SAME"));
  EXPECT_EQ(status_of(c), StatusCode::InvalidArgument) << "auto_pad";
  c = base();
  c.attrs.set("pads", attr_ints({1, 1, -1, 1}));
  EXPECT_EQ(status_of(c), StatusCode::InvalidArgument) << "negative pad";
  c = base();
  c.attrs.set("pads", attr_ints({1, 1}));
  EXPECT_EQ(status_of(c), StatusCode::InvalidArgument) << "pads length";
  c = base();
  c.attrs.set("strides", attr_ints({0, 1}));
  EXPECT_EQ(status_of(c), StatusCode::InvalidArgument) << "stride 0";
  c = base();
  c.inputs[1] = random_tensor({6, 2, 3}, 2);
  EXPECT_EQ(status_of(c), StatusCode::InvalidArgument) << "weight rank";
  c = base();
  c.inputs[1] = random_tensor({6, 2, 7, 7}, 2);
  EXPECT_EQ(status_of(c), StatusCode::InvalidArgument) << "kernel larger than input";
  c = base();
  c.inputs = {make_tensor<int32_t>({1, 1, 2, 2}, {1, 2, 3, 4}), make_tensor<int32_t>({1, 1, 1, 1}, {1})};
  c.attrs = AttrMap();
  EXPECT_EQ(status_of(c), StatusCode::Unsupported) << "int conv";
  c = base();
  c.inputs = {random_tensor({4, 5}, 1), random_tensor({6, 4}, 2)};
  EXPECT_EQ(status_of(c), StatusCode::InvalidArgument) << "2-D input";
}

TEST(ConvOp, DoubleAndHalf) {
  OpCall call;
  call.op_type = "Conv";
  call.inputs = {make_tensor<double>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                 make_tensor<double>({1, 1, 2, 2}, {1, 0, 0, -1}), make_tensor<double>({1}, {0.5})};
  EXPECT_EQ(values_of<double>(run1(call)), (std::vector<double>{-3.5, -3.5, -3.5, -3.5}));
  Tensor xh = Tensor::empty(DType::F16, {1, 1, 2, 2}), wh = Tensor::empty(DType::F16, {1, 1, 1, 1});
  for (int i = 0; i < 4; ++i) xh.data_as<Half>()[i] = Half{float_to_half(static_cast<float>(i))};
  wh.data_as<Half>()[0] = Half{float_to_half(2.0f)};
  call.inputs = {xh, wh};
  Tensor y = run1(call);
  ASSERT_EQ(y.dtype(), DType::F16);
  expect_close(y, {0, 2, 4, 6}, 0, 0, "f16 conv");
}

// ---- ConvTranspose -------------------------------------------------------------------------

// y[n, m, i * s - p + k * d] += x[n, c, i] * w[c, m - m0, k], plus bias.
std::vector<double> naive_conv_transpose(const Shape& xs, const std::vector<float>& x, const Shape& wsh,
                                         const std::vector<float>& w, const std::vector<float>& b, int64_t group,
                                         const Window& win, const std::vector<int64_t>& out) {
  const int64_t n = xs[0], c = xs[1], cg = c / group, mg = wsh[1], m = mg * group;
  const std::vector<int64_t> in(xs.begin() + 2, xs.end()), ker(wsh.begin() + 2, wsh.end());
  const int rank = static_cast<int>(in.size());
  std::vector<double> y(static_cast<size_t>(n * m * product(out)));
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t mi = 0; mi < m; ++mi)
      for (int64_t j = 0; j < product(out); ++j) y[(ni * m + mi) * product(out) + j] = b.empty() ? 0.0 : b[mi];
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t ci = 0; ci < c; ++ci) {
      const int64_t g = ci / cg;
      std::vector<int64_t> i(rank, 0);
      do {
        for (int64_t mm = 0; mm < mg; ++mm) {
          std::vector<int64_t> k(rank, 0);
          do {
            std::vector<int64_t> o(rank);
            bool inside = true;
            for (int a = 0; a < rank; ++a) {
              o[a] = i[a] * win.strides[a] - win.pad_begin[a] + k[a] * win.dilations[a];
              if (o[a] < 0 || o[a] >= out[a]) inside = false;
            }
            if (!inside) continue;
            const double xv = x[(ni * c + ci) * product(in) + flat(i, in)];
            const double wv = w[(ci * mg + mm) * product(ker) + flat(k, ker)];
            y[(ni * m + g * mg + mm) * product(out) + flat(o, out)] += xv * wv;
          } while (next_index(k, ker));
        }
      } while (next_index(i, in));
    }
  return y;
}

struct ConvTCase {
  std::string name;
  Shape x, w;
  int64_t group;
  std::vector<int64_t> strides, dilations, pads, output_padding, output_shape;
  std::string auto_pad;
  bool bias;
  std::vector<int64_t> pad_begin, out;
};

class ConvTransposeOp : public ::testing::TestWithParam<ConvTCase> {};

TEST_P(ConvTransposeOp, MatchesScatterLoops) {
  const ConvTCase cc = GetParam();
  const int rank = cc.x.rank() - 2;
  OpCall call;
  call.op_type = "ConvTranspose";
  call.opset = 11;
  if (cc.group != 1) call.attrs.set("group", attr_int(cc.group));
  if (!cc.strides.empty()) call.attrs.set("strides", attr_ints(cc.strides));
  if (!cc.dilations.empty()) call.attrs.set("dilations", attr_ints(cc.dilations));
  if (!cc.pads.empty()) call.attrs.set("pads", attr_ints(cc.pads));
  if (!cc.output_padding.empty()) call.attrs.set("output_padding", attr_ints(cc.output_padding));
  if (!cc.output_shape.empty()) call.attrs.set("output_shape", attr_ints(cc.output_shape));
  if (!cc.auto_pad.empty()) call.attrs.set("auto_pad", attr_string(cc.auto_pad));
  const int64_t m = cc.w[1] * cc.group;
  Tensor x = random_tensor(cc.x, 41), w = random_tensor(cc.w, 42), b = random_tensor({m}, 43);
  call.inputs = {x, w};
  if (cc.bias) call.inputs.push_back(b);
  Window win{cc.strides.empty() ? std::vector<int64_t>(rank, 1) : cc.strides,
             cc.dilations.empty() ? std::vector<int64_t>(rank, 1) : cc.dilations, cc.pad_begin};
  const auto want = naive_conv_transpose(cc.x, values_of<float>(x), cc.w, values_of<float>(w),
                                         cc.bias ? values_of<float>(b) : std::vector<float>{}, cc.group, win, cc.out);
  std::vector<int64_t> yshape = {cc.x[0], m};
  yshape.insert(yshape.end(), cc.out.begin(), cc.out.end());
  for (int threads : {1, 2}) {
    auto r = run_op_threads(call, threads);
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    ASSERT_EQ((*r)[0].shape(), Shape(yshape)) << cc.name;
    expect_close((*r)[0], want, 1e-5, 1e-5, cc.name);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConvTransposeOp,
    ::testing::Values(
        ConvTCase{"basic", {1, 1, 3, 3}, {1, 2, 3, 3}, 1, {}, {}, {}, {}, {}, "", false, {0, 0}, {5, 5}},
        ConvTCase{"strided_output_padding", {1, 1, 3, 3}, {1, 2, 3, 3}, 1, {3, 2}, {}, {}, {1, 1}, {}, "", true,
                  {0, 0}, {10, 8}},
        ConvTCase{"pads", {2, 3, 4, 3}, {3, 2, 3, 3}, 1, {3, 2}, {}, {1, 2, 1, 2}, {}, {}, "", true, {1, 2}, {10, 3}},
        // total padding 3*2+0+3-10 = -1: floor split puts the extra row at the end.
        ConvTCase{"output_shape", {1, 1, 3, 3}, {1, 2, 3, 3}, 1, {3, 2}, {}, {}, {}, {10, 8}, "", true, {0, 0},
                  {10, 8}},
        // total padding 2*3+1+3-8 = 2, split 1 / 1.
        ConvTCase{"output_shape_smaller", {1, 2, 4, 4}, {2, 1, 3, 3}, 1, {2, 2}, {}, {}, {1, 1}, {8, 8}, "", false,
                  {1, 1}, {8, 8}},
        ConvTCase{"dilated", {1, 2, 4, 5}, {2, 3, 2, 3}, 1, {}, {2, 3}, {}, {}, {}, "", true, {0, 0}, {6, 11}},
        ConvTCase{"groups", {1, 4, 3, 3}, {4, 3, 2, 2}, 2, {2, 2}, {}, {}, {}, {}, "", true, {0, 0}, {6, 6}},
        ConvTCase{"conv1d", {2, 3, 5}, {3, 2, 4}, 1, {2}, {}, {1, 1}, {}, {}, "", true, {1}, {10}},
        ConvTCase{"conv3d", {1, 1, 3, 4, 5}, {1, 2, 3, 3, 3}, 1, {}, {}, {}, {}, {}, "", false, {0, 0, 0}, {5, 6, 7}},
        // SAME: out = in * stride; total = 2*2 + 3 - 6 = 1 -> upper puts it at the end.
        ConvTCase{"same_upper", {1, 1, 3, 3}, {1, 2, 3, 3}, 1, {2, 2}, {}, {}, {}, {}, "SAME_UPPER", true, {0, 0},
                  {6, 6}},
        ConvTCase{"same_lower", {1, 1, 3, 3}, {1, 2, 3, 3}, 1, {2, 2}, {}, {}, {}, {}, "SAME_LOWER", true, {1, 1},
                  {6, 6}},
        ConvTCase{"large", {2, 16, 9, 9}, {16, 8, 3, 3}, 1, {2, 2}, {}, {1, 1, 1, 1}, {1, 1}, {}, "", true, {1, 1},
                  {18, 18}}),
    [](const ::testing::TestParamInfo<ConvTCase>& info) { return info.param.name; });

TEST(ConvTransposeOp, RejectsInvalidModels) {
  OpCall call;
  call.op_type = "ConvTranspose";
  call.inputs = {random_tensor({1, 4, 3, 3}, 1), random_tensor({3, 2, 3, 3}, 2)};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "W[0] != C";
  call.inputs = {random_tensor({1, 4, 3, 3}, 1), random_tensor({4, 2, 3, 3}, 2)};
  call.attrs.set("group", attr_int(3));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "group";
  call.attrs.set("group", attr_int(2));
  call.inputs.push_back(random_tensor({3}, 3));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "bias size (M = 4)";
  call.inputs.pop_back();
  call.attrs.set("output_shape", attr_ints({5}));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "output_shape length";
}

}  // namespace
}  // namespace ignis::nn_test
