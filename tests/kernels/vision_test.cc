// SPDX-License-Identifier: Apache-2.0
// Tests for the vision ops (GridSample, AffineGrid, NonMaxSuppression, RoiAlign, Col2Im,
// CenterCropPad). Expected values come from plain scalar implementations written here from
// the ONNX spec (iterative mirroring, per-pixel fetches, brute-force greedy NMS) or are
// worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

// --- GridSample -------------------------------------------------------------------------

struct Sampler {
  std::string mode;     // "linear", "nearest", "cubic"
  std::string padding;  // "zeros", "border", "reflection"
  bool align = false;
};

// Mirrors x at lo and hi one bounce at a time.
double mirror(double x, double lo, double hi) {
  while (x < lo || x > hi) x = x < lo ? 2 * lo - x : 2 * hi - x;
  return x;
}

// Pixel i of an axis of extent d under the padding mode; -1 means a zero pad.
int64_t padded_index(int64_t i, int64_t d, const Sampler& s) {
  if (s.padding == "zeros") return i >= 0 && i < d ? i : -1;
  if (s.padding == "border") return std::min(std::max<int64_t>(i, 0), d - 1);
  const double lo = s.align ? 0.0 : -0.5, hi = s.align ? d - 1.0 : d - 0.5;
  return static_cast<int64_t>(mirror(static_cast<double>(i), lo, hi));
}

// Continuous source coordinate of normalized g along an axis of extent d, after the padding
// rule for out-of-range coordinates (nearest rounds half to even first).
double source_coord(float g, int64_t d, const Sampler& s) {
  const float df = static_cast<float>(d);
  double x = s.align ? (g + 1.0f) / 2.0f * (df - 1.0f) : ((g + 1.0f) * df - 1.0f) / 2.0f;
  if (s.mode == "nearest") x = std::nearbyint(x);
  const double lo = s.align ? 0.0 : -0.5, hi = s.align ? d - 1.0 : d - 0.5;
  if (x < lo || x > hi) {
    if (s.padding == "border") x = std::min(std::max(x, 0.0), d - 1.0);
    if (s.padding == "reflection") x = mirror(x, lo, hi);
  }
  return x;
}

// Taps (index, weight) of one axis.
std::vector<std::pair<int64_t, double>> axis_taps(double x, int64_t d, const Sampler& s) {
  std::vector<std::pair<int64_t, double>> taps;
  if (s.mode == "nearest") {
    taps.push_back({padded_index(static_cast<int64_t>(x), d, s), 1.0});
    return taps;
  }
  const double f = std::floor(x), t = x - f;
  const int64_t i0 = static_cast<int64_t>(f);
  if (s.mode == "linear") {
    taps.push_back({padded_index(i0, d, s), 1 - t});
    taps.push_back({padded_index(i0 + 1, d, s), t});
    return taps;
  }
  // Keys cubic kernel, a = -0.75: distances 1 + t, t, 1 - t, 2 - t.
  auto keys = [](double u) {
    const double a = -0.75;
    u = std::fabs(u);
    if (u <= 1) return ((a + 2) * u - (a + 3)) * u * u + 1;
    if (u < 2) return ((a * u - 5 * a) * u + 8 * a) * u - 4 * a;
    return 0.0;
  };
  for (int k = -1; k <= 2; ++k) taps.push_back({padded_index(i0 + k, d, s), keys(t - k)});
  return taps;
}

// GridSample over X [N, C, spatial...] by definition: every output point sums the product
// of per-axis tap weights over the tap combinations.
std::vector<double> naive_grid_sample(const Shape& xs, const std::vector<float>& x, const Shape& gs,
                                      const std::vector<float>& grid, const Sampler& s) {
  const int r = xs.rank() - 2;
  const int64_t n_count = xs[0], channels = xs[1];
  const int64_t points = gs.numel() / (n_count * r), plane = xs.numel(2, xs.rank());
  std::vector<double> y(static_cast<size_t>(n_count * channels * points));
  for (int64_t n = 0; n < n_count; ++n)
    for (int64_t p = 0; p < points; ++p) {
      std::vector<std::vector<std::pair<int64_t, double>>> taps(static_cast<size_t>(r));
      for (int a = 0; a < r; ++a) {
        const float g = grid[(n * points + p) * r + (r - 1 - a)];
        taps[a] = axis_taps(source_coord(g, xs[a + 2], s), xs[a + 2], s);
      }
      for (int64_t c = 0; c < channels; ++c) {
        double sum = 0;
        std::vector<size_t> k(static_cast<size_t>(r), 0);
        for (;;) {
          double w = 1;
          int64_t off = 0;
          bool zero = false;
          for (int a = 0; a < r; ++a) {
            const auto [i, wt] = taps[a][k[a]];
            if (i < 0) zero = true;
            w *= wt;
            off = off * xs[a + 2] + i;
          }
          if (!zero) sum += w * x[(n * channels + c) * plane + off];
          int a = r - 1;
          for (; a >= 0; --a) {
            if (++k[a] < taps[a].size()) break;
            k[a] = 0;
          }
          if (a < 0) break;
        }
        y[(n * channels + c) * points + p] = sum;
      }
    }
  return y;
}

OpCall grid_sample_call(int64_t opset, const Tensor& x, const Tensor& grid, const Sampler& s) {
  OpCall call;
  call.op_type = "GridSample";
  call.opset = opset;
  call.attrs.set("mode", attr_string(s.mode));
  call.attrs.set("padding_mode", attr_string(s.padding));
  call.attrs.set("align_corners", attr_int(s.align ? 1 : 0));
  call.inputs = {x, grid};
  return call;
}

std::string sampler_name(const Sampler& s) { return s.mode + "/" + s.padding + (s.align ? "/align" : ""); }

TEST(GridSample, EveryModePaddingAndAlignmentOn2dMatchesScalarLoops) {
  const Shape xs{2, 3, 5, 7}, gs{2, 4, 6, 2};
  const Tensor x = random_tensor(xs, 11);
  // Up to 1.3 so that border, reflection and zero padding all come into play.
  const Tensor grid = random_tensor(gs, 12, -1.3f, 1.3f);
  for (const char* mode : {"linear", "nearest", "cubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (bool align : {false, true}) {
        const Sampler s{mode, padding, align};
        const auto want = naive_grid_sample(xs, values_of<float>(x), gs, values_of<float>(grid), s);
        for (int threads : {1, 3}) {
          auto r = run_op_threads(grid_sample_call(20, x, grid, s), threads);
          ASSERT_TRUE(r.has_value()) << r.error().to_string();
          ASSERT_EQ((*r)[0].shape(), (Shape{2, 3, 4, 6}));
          expect_close((*r)[0], want, 1e-4, 1e-5, sampler_name(s));
        }
      }
}

TEST(GridSample, AcceptsTheModeNamesOfBothVersions) {
  const Shape xs{2, 3, 4, 3}, gs{2, 5, 2, 2};
  const Tensor x = random_tensor(xs, 21);
  const Tensor grid = random_tensor(gs, 22, -1.2f, 1.2f);
  const std::pair<const char*, const char*> names[] = {{"bilinear", "linear"}, {"bicubic", "cubic"}, {"nearest", "nearest"}};
  for (const auto& [v16, v20] : names) {
    const auto want = naive_grid_sample(xs, values_of<float>(x), gs, values_of<float>(grid), {v20, "border", false});
    expect_close(run1(grid_sample_call(16, x, grid, {v16, "border", false})), want, 1e-4, 1e-5, v16);
    // Either spelling is accepted at either version, as onnxruntime does.
    expect_close(run1(grid_sample_call(16, x, grid, {v20, "border", false})), want, 1e-4, 1e-5, v20);
    expect_close(run1(grid_sample_call(22, x, grid, {v16, "border", false})), want, 1e-4, 1e-5, v16);
  }
}

TEST(GridSample, VolumetricAndOneDimensionalMatchScalarLoops) {
  const std::pair<Shape, Shape> cases[] = {{{2, 3, 3, 4, 5}, {2, 2, 3, 4, 3}}, {{2, 3, 6}, {2, 5, 1}}};
  for (const auto& [xs, gs] : cases) {
    const Tensor x = random_tensor(xs, 31);
    const Tensor grid = random_tensor(gs, 32, -1.25f, 1.25f);
    for (const char* mode : {"linear", "nearest", "cubic"})
      for (const char* padding : {"zeros", "border", "reflection"})
        for (bool align : {false, true}) {
          const Sampler s{mode, padding, align};
          const auto want = naive_grid_sample(xs, values_of<float>(x), gs, values_of<float>(grid), s);
          expect_close(run1(grid_sample_call(22, x, grid, s)), want, 1e-4, 1e-5, xs.str() + " " + sampler_name(s));
        }
  }
}

TEST(GridSample, RejectsUnknownModesAndMismatchedGrids) {
  const Tensor x = random_tensor({1, 1, 3, 3}, 1);
  const Tensor grid = random_tensor({1, 2, 2, 2}, 2);
  EXPECT_EQ(status_of(grid_sample_call(20, x, grid, {"area", "zeros", false})), StatusCode::Unsupported);
  EXPECT_EQ(status_of(grid_sample_call(20, x, grid, {"linear", "wrap", false})), StatusCode::Unsupported);
  const Tensor bad_grid = random_tensor({1, 2, 2, 3}, 2);
  EXPECT_EQ(status_of(grid_sample_call(20, x, bad_grid, {"linear", "zeros", false})), StatusCode::InvalidArgument);
  // 5-D inputs arrived with version 20.
  const Tensor x5 = random_tensor({1, 1, 2, 2, 2}, 3);
  const Tensor g5 = random_tensor({1, 1, 1, 1, 3}, 4);
  EXPECT_EQ(status_of(grid_sample_call(16, x5, g5, {"bilinear", "zeros", false})), StatusCode::InvalidArgument);
}

TEST(GridSample, DoubleAndHalfDataMatchScalarLoops) {
  const Shape xs{2, 3, 4, 5}, gs{2, 3, 2, 2};
  const Tensor x32 = random_tensor(xs, 51);
  const Tensor grid = random_tensor(gs, 52, -1.2f, 1.2f);
  const auto xv = values_of<float>(x32);
  std::vector<double> xd(xv.begin(), xv.end());
  std::vector<Half> xh;
  std::vector<float> xh_values;  // the half inputs, widened back, for the expected values
  for (float v : xv) {
    xh.push_back(Half{float_to_half(v)});
    xh_values.push_back(half_to_float(xh.back().bits));
  }
  for (const char* mode : {"linear", "cubic"}) {
    const Sampler s{mode, "reflection", false};
    const auto want = naive_grid_sample(xs, xv, gs, values_of<float>(grid), s);
    const Tensor y64 = run1(grid_sample_call(20, make_tensor<double>(xs, xd), grid, s));
    ASSERT_EQ(y64.dtype(), DType::F64);
    expect_close(y64, want, 1e-6, 1e-6, std::string("f64 ") + mode);
    const auto want_half = naive_grid_sample(xs, xh_values, gs, values_of<float>(grid), s);
    const Tensor y16 = run1(grid_sample_call(20, make_tensor<Half>(xs, xh), grid, s));
    ASSERT_EQ(y16.dtype(), DType::F16);
    expect_close(y16, want_half, 2e-3, 2e-3, std::string("f16 ") + mode);
  }
}

// NaN coordinates give NaN; huge ones read zeros, the border pixel, or a reflected pixel,
// without undefined behaviour on the way (the sanitizer build runs this).
TEST(GridSample, ExtremeCoordinatesStayDefined) {
  const Shape xs{1, 2, 3, 4};
  const Tensor x = random_tensor(xs, 61);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor grid = make_tensor_f32({1, 1, 5, 2}, {nan, 0, 1e30f, 1e30f, -inf, 0.5f, inf, inf, -1e30f, 0});
  for (const char* mode : {"linear", "nearest", "cubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (bool align : {false, true}) {
        const Sampler s{mode, padding, align};
        const auto y = values_of<float>(run1(grid_sample_call(20, x, grid, s)));
        ASSERT_EQ(y.size(), 10u);
        for (int c = 0; c < 2; ++c) {
          EXPECT_TRUE(std::isnan(y[c * 5])) << sampler_name(s);
          const float corner = x.data_as<float>()[c * 12 + 11];
          if (std::string(padding) == "zeros") {
            EXPECT_EQ(y[c * 5 + 1], 0.0f) << sampler_name(s);
          }
          if (std::string(padding) == "border") {
            EXPECT_NEAR(y[c * 5 + 1], corner, 1e-6) << sampler_name(s);
            EXPECT_NEAR(y[c * 5 + 3], corner, 1e-6) << sampler_name(s);
          }
        }
      }
}

// An identity affine grid with align_corners samples every pixel centre exactly.
TEST(AffineGrid, IdentityGridReproducesTheImageThroughGridSample) {
  for (bool align : {false, true}) {
    const Shape xs{2, 3, 5, 7};
    const Tensor x = random_tensor(xs, 41);
    OpCall ag;
    ag.op_type = "AffineGrid";
    ag.opset = 20;
    ag.attrs.set("align_corners", attr_int(align ? 1 : 0));
    ag.inputs = {make_tensor_f32({2, 2, 3}, {1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0}), make_tensor_i64({4}, {2, 3, 5, 7})};
    const Tensor grid = run1(ag);
    ASSERT_EQ(grid.shape(), (Shape{2, 5, 7, 2}));
    // x of column w, y of row h.
    const auto g = values_of<float>(grid);
    auto base = [&](int64_t i, int64_t d) { return align ? -1.0 + 2.0 * i / (d - 1) : (2.0 * i + 1) / d - 1; };
    EXPECT_NEAR(g[(1 * 7 + 4) * 2 + 0], base(4, 7), 1e-6);
    EXPECT_NEAR(g[(1 * 7 + 4) * 2 + 1], base(1, 5), 1e-6);
    const Tensor y = run1(grid_sample_call(20, x, grid, {"linear", "zeros", align}));
    std::vector<double> want(x.numel());
    for (int64_t i = 0; i < x.numel(); ++i) want[i] = x.data_as<float>()[i];
    expect_close(y, want, 1e-5, 1e-5, align ? "align" : "no align");
  }
}

TEST(AffineGrid, ThreeDimensionalRotationAndTranslation) {
  // theta maps (x, y, z) to (y + 0.5, -x, 2z): check one point by hand.
  OpCall ag;
  ag.op_type = "AffineGrid";
  ag.opset = 20;
  ag.attrs.set("align_corners", attr_int(1));
  ag.inputs = {make_tensor_f32({1, 3, 4}, {0, 1, 0, 0.5f, -1, 0, 0, 0, 0, 0, 2, 0}), make_tensor_i64({5}, {1, 1, 3, 2, 5})};
  const Tensor grid = run1(ag);
  ASSERT_EQ(grid.shape(), (Shape{1, 3, 2, 5, 3}));
  // Point d=2, h=0, w=1: (x, y, z) = (-0.5, -1, 1).
  const auto g = values_of<float>(grid);
  const int64_t p = (2 * 2 + 0) * 5 + 1;
  EXPECT_NEAR(g[p * 3 + 0], -0.5, 1e-6);
  EXPECT_NEAR(g[p * 3 + 1], 0.5, 1e-6);
  EXPECT_NEAR(g[p * 3 + 2], 2.0, 1e-6);
}

// --- NonMaxSuppression ------------------------------------------------------------------

struct NmsInput {
  int64_t batches, classes, boxes;
  std::vector<float> box_data, scores;
};

double iou(const float* a, const float* b, bool center) {
  auto corners = [&](const float* v, double* c) {  // y0, x0, y1, x1
    if (center) {
      c[0] = v[1] - v[3] / 2.0, c[1] = v[0] - v[2] / 2.0, c[2] = v[1] + v[3] / 2.0, c[3] = v[0] + v[2] / 2.0;
    } else {
      c[0] = std::min(v[0], v[2]), c[1] = std::min(v[1], v[3]), c[2] = std::max(v[0], v[2]),
      c[3] = std::max(v[1], v[3]);
    }
  };
  double p[4], q[4];
  corners(a, p);
  corners(b, q);
  const double h = std::min(p[2], q[2]) - std::max(p[0], q[0]), w = std::min(p[3], q[3]) - std::max(p[1], q[1]);
  if (h <= 0 || w <= 0) return 0;
  const double ap = (p[2] - p[0]) * (p[3] - p[1]), aq = (q[2] - q[0]) * (q[3] - q[1]);
  return h * w / (ap + aq - h * w);
}

// Brute force: repeatedly take the best remaining candidate (highest score, then lowest
// index), keep it, and drop every remaining box that overlaps it more than the threshold.
std::vector<int64_t> naive_nms(const NmsInput& in, bool center, int64_t max_out, float iou_threshold,
                               const float* score_threshold) {
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < in.batches; ++b)
    for (int64_t c = 0; c < in.classes; ++c) {
      const float* s = &in.scores[(b * in.classes + c) * in.boxes];
      std::vector<bool> alive(static_cast<size_t>(in.boxes));
      for (int64_t i = 0; i < in.boxes; ++i) alive[i] = !score_threshold || s[i] > *score_threshold;
      for (int64_t kept = 0; kept < max_out; ++kept) {
        int64_t best = -1;
        for (int64_t i = 0; i < in.boxes; ++i)
          if (alive[i] && (best < 0 || s[i] > s[best])) best = i;
        if (best < 0) break;
        rows.insert(rows.end(), {b, c, best});
        alive[best] = false;
        for (int64_t i = 0; i < in.boxes; ++i)
          if (alive[i] && iou(&in.box_data[(b * in.boxes + best) * 4], &in.box_data[(b * in.boxes + i) * 4], center) >
                              iou_threshold)
            alive[i] = false;
      }
    }
  return rows;
}

NmsInput random_nms_input(uint32_t seed) {
  NmsInput in{2, 3, 9, {}, {}};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> coord(0, 40), size(2, 24), score(0, 7);
  for (int64_t i = 0; i < in.batches * in.boxes; ++i) {
    // Quarter-unit coordinates keep areas exact; corners listed in either order.
    const float a = coord(rng) / 4.0f, b = coord(rng) / 4.0f, h = size(rng) / 4.0f, w = size(rng) / 4.0f;
    if (i % 3 == 0) in.box_data.insert(in.box_data.end(), {a + h, b + w, a, b});
    else in.box_data.insert(in.box_data.end(), {a, b, a + h, b + w});
  }
  // Duplicate a box so identical boxes compete too.
  std::copy_n(in.box_data.begin(), 4, in.box_data.begin() + 4);
  // Few distinct scores: many ties, broken by the lower box index.
  for (int64_t i = 0; i < in.batches * in.classes * in.boxes; ++i) in.scores.push_back(score(rng) / 8.0f);
  return in;
}

OpCall nms_call(const NmsInput& in, int64_t center, int64_t max_out, float iou_threshold, const float* score_threshold) {
  OpCall call;
  call.op_type = "NonMaxSuppression";
  call.opset = 11;
  if (center) call.attrs.set("center_point_box", attr_int(1));
  call.inputs = {make_tensor_f32({in.batches, in.boxes, 4}, in.box_data),
                 make_tensor_f32({in.batches, in.classes, in.boxes}, in.scores), make_tensor_i64({1}, {max_out}),
                 make_tensor_f32({1}, {iou_threshold})};
  if (score_threshold) call.inputs.push_back(make_tensor_f32({1}, {*score_threshold}));
  return call;
}

TEST(NonMaxSuppression, BatchesClassesAndTiesMatchBruteForce) {
  for (uint32_t seed : {1u, 2u, 3u, 4u})
    for (int64_t center : {0, 1})
      for (int64_t max_out : {1, 3, 100})
        for (float iou_threshold : {0.0f, 0.3f, 0.7f})
          for (bool with_score : {false, true}) {
            const NmsInput in = random_nms_input(seed);
            const float st = 0.3f;
            const float* score_threshold = with_score ? &st : nullptr;
            const auto want = naive_nms(in, center == 1, max_out, iou_threshold, score_threshold);
            const Tensor got = run1(nms_call(in, center, max_out, iou_threshold, score_threshold));
            ASSERT_EQ(got.shape(), (Shape{static_cast<int64_t>(want.size() / 3), 3}))
                << "seed " << seed << " center " << center << " max " << max_out << " iou " << iou_threshold;
            EXPECT_EQ(values_of<int64_t>(got), want)
                << "seed " << seed << " center " << center << " max " << max_out << " iou " << iou_threshold;
          }
}

TEST(NonMaxSuppression, ThresholdDecidesOverlapAndOmittedLimitSelectsNothing) {
  // Two boxes with IoU 1/3 (intersection 2, union 6): a 0.5 threshold keeps both, 0.3 drops
  // the lower-scored one.
  const NmsInput in{1, 1, 2, {0, 0, 2, 2, 0, 1, 2, 3}, {0.9f, 0.8f}};
  EXPECT_EQ(values_of<int64_t>(run1(nms_call(in, 0, 5, 0.5f, nullptr))), (std::vector<int64_t>{0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(values_of<int64_t>(run1(nms_call(in, 0, 5, 0.3f, nullptr))), (std::vector<int64_t>{0, 0, 0}));
  OpCall call = nms_call(in, 0, 5, 0.5f, nullptr);
  call.inputs.resize(2);
  EXPECT_EQ(run1(call).shape(), (Shape{0, 3}));
}

// --- RoiAlign ---------------------------------------------------------------------------

// The four weighted corners of a bilinear sample at (y, x) by the RoiAlign rules: nothing
// beyond one pixel outside, clamped to the edge inside that margin. Average mode sums them;
// max mode takes the largest (as the ONNX reference and onnxruntime do).
std::vector<double> roi_corners(const float* plane, int64_t h, int64_t w, double y, double x) {
  if (y < -1 || y > h || x < -1 || x > w) return {0, 0, 0, 0};
  y = std::min(std::max(y, 0.0), h - 1.0);
  x = std::min(std::max(x, 0.0), w - 1.0);
  const int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x);
  const int64_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
  const double ly = y - y0, lx = x - x0;
  return {(1 - ly) * (1 - lx) * plane[y0 * w + x0], (1 - ly) * lx * plane[y0 * w + x1],
          ly * (1 - lx) * plane[y1 * w + x0], ly * lx * plane[y1 * w + x1]};
}

TEST(RoiAlign, AverageAndMaxModesMatchScalarLoops) {
  const Shape xs{2, 3, 6, 9};
  const Tensor x = random_tensor(xs, 61);
  const std::vector<float> rois = {0.5f, 1.0f, 6.0f, 4.5f, 2.0f, 0.0f, 8.5f, 5.5f, 3.0f, 2.0f, 3.5f, 2.25f};
  const std::vector<int64_t> batch = {1, 0, 1};
  const auto xv = values_of<float>(x);
  for (bool max_mode : {false, true})
  for (bool half_pixel : {false, true})
    for (int64_t ratio : {0, 2}) {
      const int64_t oh = 2, ow = 3;
      const double scale = 0.5;
      OpCall call;
      call.op_type = "RoiAlign";
      call.opset = 16;
      call.attrs.set("output_height", attr_int(oh));
      call.attrs.set("output_width", attr_int(ow));
      call.attrs.set("sampling_ratio", attr_int(ratio));
      call.attrs.set("spatial_scale", attr_float(static_cast<float>(scale)));
      call.attrs.set("coordinate_transformation_mode", attr_string(half_pixel ? "half_pixel" : "output_half_pixel"));
      if (max_mode) call.attrs.set("mode", attr_string("max"));
      call.inputs = {x, make_tensor_f32({3, 4}, rois), make_tensor_i64({3}, batch)};
      std::vector<double> want;
      for (int64_t n = 0; n < 3; ++n)
        for (int64_t c = 0; c < 3; ++c) {
          const float* plane = &xv[(batch[n] * 3 + c) * 54];
          const double off = half_pixel ? 0.5 : 0.0;
          const double x0 = rois[n * 4] * scale - off, y0 = rois[n * 4 + 1] * scale - off;
          double rw = rois[n * 4 + 2] * scale - off - x0, rh = rois[n * 4 + 3] * scale - off - y0;
          if (!half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
          const int64_t gh = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / oh));
          const int64_t gw = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / ow));
          for (int64_t ph = 0; ph < oh; ++ph)
            for (int64_t pw = 0; pw < ow; ++pw) {
              double sum = 0, best = -1e30;
              for (int64_t iy = 0; iy < gh; ++iy)
                for (int64_t ix = 0; ix < gw; ++ix) {
                  const auto v = roi_corners(plane, 6, 9, y0 + (ph + (iy + 0.5) / gh) * rh / oh,
                                             x0 + (pw + (ix + 0.5) / gw) * rw / ow);
                  sum += v[0] + v[1] + v[2] + v[3];
                  best = std::max(best, *std::max_element(v.begin(), v.end()));
                }
              want.push_back(max_mode ? best : sum / std::max<int64_t>(gh * gw, 1));
            }
        }
      expect_close(run1(call), want, 1e-4, 1e-5,
                   std::string(max_mode ? "max " : "avg ") + (half_pixel ? "half_pixel" : "output_half_pixel"));
    }
}

TEST(MaxRoiPool, RoundedRoisPoolTheirBins) {
  // X[b, c, h, w] = 40 b + 20 c + 5 h + w, so each bin's max is its bottom-right pixel.
  std::vector<float> x(80);
  for (int i = 0; i < 80; ++i) x[i] = static_cast<float>(i);
  OpCall call;
  call.op_type = "MaxRoiPool";
  call.opset = 22;
  call.attrs.set("pooled_shape", attr_ints({2, 2}));
  call.attrs.set("spatial_scale", attr_float(0.5f));
  // ROI 0 spans columns 1..3, rows 0..2 (bins of 1.5: rows {0,1},{1,2}, columns {1,2},{2,3});
  // ROI 1 in image 1 rounds to columns 1..4 (3.5 -> 4), rows 1..3 (2.5 -> 3).
  call.inputs = {make_tensor_f32({2, 2, 4, 5}, x), make_tensor_f32({2, 5}, {0, 2, 0, 6, 4, 1, 2, 2, 7, 5})};
  const std::vector<double> want = {7, 8, 12, 13, 27, 28, 32, 33, 52, 54, 57, 59, 72, 74, 77, 79};
  expect_close(run1(call), want, 0, 0, "maxroipool");
  // A batch index outside the input is a data error, not a silent zero.
  call.inputs[1] = make_tensor_f32({1, 5}, {2, 0, 0, 1, 1});
  EXPECT_EQ(status_of(call), StatusCode::OutOfRange);
}

// Deformable convolution by definition: every kernel tap reads the input bilinearly at its
// offset position (zero outside), scaled by the mask.
std::vector<double> naive_deform_conv_2d(const Shape& xs, const std::vector<float>& x, const Shape& ws,
                                         const std::vector<float>& w, const std::vector<float>& off,
                                         const std::vector<float>& mask, const std::vector<float>& bias, int64_t group,
                                         int64_t offset_group, const int64_t* stride, const int64_t* pad,
                                         const int64_t* dil, int64_t oh, int64_t ow) {
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], OC = ws[0], KH = ws[2], KW = ws[3];
  const int64_t cg = C / group, ocg = OC / group, K = KH * KW;
  auto pixel = [&](int64_t n, int64_t c, int64_t h, int64_t v) {
    return h < 0 || h >= H || v < 0 || v >= W ? 0.0 : static_cast<double>(x[((n * C + c) * H + h) * W + v]);
  };
  std::vector<double> y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < OC; ++oc)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double sum = bias[oc];
          for (int64_t cl = 0; cl < cg; ++cl) {
            const int64_t c = oc / ocg * cg + cl, og = c / (C / offset_group);
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t k = kh * KW + kw;
                const double dy = off[(((n * offset_group + og) * K + k) * 2 + 0) * oh * ow + i * ow + j];
                const double dx = off[(((n * offset_group + og) * K + k) * 2 + 1) * oh * ow + i * ow + j];
                const double m = mask[((n * offset_group + og) * K + k) * oh * ow + i * ow + j];
                const double py = i * stride[0] - pad[0] + kh * dil[0] + dy;
                const double px = j * stride[1] - pad[1] + kw * dil[1] + dx;
                const double fy = std::floor(py), fx = std::floor(px), ty = py - fy, tx = px - fx;
                const int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
                const double v = (1 - ty) * (1 - tx) * pixel(n, c, y0, x0) + (1 - ty) * tx * pixel(n, c, y0, x0 + 1) +
                                 ty * (1 - tx) * pixel(n, c, y0 + 1, x0) + ty * tx * pixel(n, c, y0 + 1, x0 + 1);
                sum += w[((oc * cg + cl) * KH + kh) * KW + kw] * m * v;
              }
          }
          y.push_back(sum);
        }
  return y;
}

TEST(DeformConv, GroupsOffsetGroupsStridesPadsDilationsAndMaskMatchScalarLoops) {
  // X [2, 4, 5, 6], W [6, 2, 2, 3], group 2, offset_group 2, strides (1, 2), pads (1, 0, 0, 1),
  // dilations (2, 1): output rows (5 + 1 - 3) / 1 + 1 = 4, columns (6 + 1 - 3) / 2 + 1 = 3.
  const Shape xs{2, 4, 5, 6}, ws{6, 2, 2, 3};
  const int64_t oh = 4, ow = 3, stride[] = {1, 2}, pad[] = {1, 0}, dil[] = {2, 1};
  const Tensor x = random_tensor(xs, 71), w = random_tensor(ws, 72), b = random_tensor({6}, 73);
  const Tensor off = random_tensor({2, 2 * 6 * 2, oh, ow}, 74, -1.5f, 1.5f);
  const Tensor mask = random_tensor({2, 2 * 6, oh, ow}, 75, 0.0f, 1.0f);
  OpCall call;
  call.op_type = "DeformConv";
  call.opset = 19;
  call.attrs.set("group", attr_int(2));
  call.attrs.set("offset_group", attr_int(2));
  call.attrs.set("strides", attr_ints({1, 2}));
  call.attrs.set("pads", attr_ints({1, 0, 0, 1}));
  call.attrs.set("dilations", attr_ints({2, 1}));
  call.inputs = {x, w, off, b, mask};
  const auto want = naive_deform_conv_2d(xs, values_of<float>(x), ws, values_of<float>(w), values_of<float>(off),
                                         values_of<float>(mask), values_of<float>(b), 2, 2, stride, pad, dil, oh, ow);
  const Tensor y = run1(call);
  ASSERT_EQ(y.shape(), (Shape{2, 6, oh, ow}));
  expect_close(y, want, 1e-4, 1e-5, "deform_conv");
  // Without mask and bias: mask 1, bias 0.
  call.inputs = {x, w, off};
  const std::vector<float> ones(static_cast<size_t>(mask.numel()), 1.0f), zeros(6, 0.0f);
  const auto plain = naive_deform_conv_2d(xs, values_of<float>(x), ws, values_of<float>(w), values_of<float>(off),
                                          ones, zeros, 2, 2, stride, pad, dil, oh, ow);
  expect_close(run1(call), plain, 1e-4, 1e-5, "deform_conv without mask");
}

// --- Col2Im, CenterCropPad ----------------------------------------------------------------

TEST(Col2Im, StridedPaddedDilatedBlocksSumIntoTheImage) {
  // Image 4x5, block 2x2, stride (2, 1), dilation (1, 2), pads (1, 0, 0, 1): blocks
  // (4 + 1 - 2) / 2 + 1 = 2 by (5 + 1 - 3) / 1 + 1 = 4.
  const int64_t C = 2, L = 8;
  std::vector<float> cols(static_cast<size_t>(2 * C * 4 * L));
  for (size_t i = 0; i < cols.size(); ++i) cols[i] = static_cast<float>(i % 13) - 6;
  OpCall call;
  call.op_type = "Col2Im";
  call.opset = 18;
  call.attrs.set("strides", attr_ints({2, 1}));
  call.attrs.set("dilations", attr_ints({1, 2}));
  call.attrs.set("pads", attr_ints({1, 0, 0, 1}));
  call.inputs = {make_tensor_f32({2, C * 4, L}, cols), make_tensor_i64({2}, {4, 5}), make_tensor_i64({2}, {2, 2})};
  std::vector<double> want(static_cast<size_t>(2 * C * 20), 0.0);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t kh = 0; kh < 2; ++kh)
        for (int64_t kw = 0; kw < 2; ++kw)
          for (int64_t bh = 0; bh < 2; ++bh)
            for (int64_t bw = 0; bw < 4; ++bw) {
              const int64_t h = bh * 2 - 1 + kh, w = bw + kw * 2;
              if (h < 0 || h >= 4 || w < 0 || w >= 5) continue;
              want[((n * C + c) * 4 + h) * 5 + w] += cols[((n * C + c) * 4 + kh * 2 + kw) * L + bh * 4 + bw];
            }
  const Tensor y = run1(call);
  ASSERT_EQ(y.shape(), (Shape{2, C, 4, 5}));
  expect_close(y, want, 0, 1e-6, "col2im");
}

TEST(CenterCropPad, CropsAndPadsOddDifferencesTowardTheEnd) {
  // [3, 4] -> crop rows to 2 (start 0), pad columns to 7 (one zero before, two after).
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i + 1);
  OpCall call;
  call.op_type = "CenterCropPad";
  call.opset = 18;
  call.inputs = {make_tensor_f32({3, 4}, x), make_tensor_i64({2}, {2, 7})};
  const std::vector<double> want = {0, 1, 2, 3, 4, 0, 0, 0, 5, 6, 7, 8, 0, 0};
  expect_close(run1(call), want, 0, 0, "crop+pad");
  // Negative axes pick the last axis only: [3, 4] -> [3, 1] keeps column (4 - 1) / 2 = 1.
  call.attrs.set("axes", attr_ints({-1}));
  call.inputs = {make_tensor_f32({3, 4}, x), make_tensor_i64({1}, {1})};
  expect_close(run1(call), {2, 6, 10}, 0, 0, "axes");
}

}  // namespace
}  // namespace ignis::nn_test
