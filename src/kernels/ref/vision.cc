// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the vision ops: GridSample, AffineGrid, RoiAlign, MaxRoiPool,
// NonMaxSuppression, DeformConv, Col2Im, CenterCropPad.
//
// Sampling ops (GridSample, DeformConv, RoiAlign) work point by point: the taps and weights
// of an output point are computed once and reused for every channel. Semantics follow the
// ONNX reference implementation (onnx/reference/ops), including its order of operations
// where results depend on it (GridSample's nearest rounding before padding, RoiAlign's max
// mode taking the largest weighted corner).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/non_max_suppression.h"
#include "core/strings.h"
#include "kernels/ref/nn_internal.h"

namespace ignis::kernels::ref {

namespace {

constexpr int kMaxSpatial = Shape::kMaxRank - 2;

// Steps a row-major multi-index over `dims`; false once it wraps around.
bool next_index(int64_t* idx, const int64_t* dims, int rank) {
  for (int i = rank - 1; i >= 0; --i) {
    if (++idx[i] < dims[i]) return true;
    idx[i] = 0;
  }
  return false;
}

// --- GridSample ----------------------------------------------------------------------------

enum class GsMode { Nearest, Linear, Cubic };
enum class GsPad { Zeros, Border, Reflection };

// Mirrors x at the borders lo and hi until it lies in [lo, hi].
template <class C>
C gs_reflect(C x, C lo, C hi) {
  const C range = hi - lo;
  if (!(range > 0)) return lo;
  if (x >= lo && x <= hi) return x;
  const bool below = x < lo;
  const C dx = below ? lo - x : x - hi;
  const C n = std::floor(dx / range);
  const C rem = dx - n * range;
  const bool even = std::fmod(n, C(2)) == 0;
  const C v = below ? (even ? lo + rem : hi - rem) : (even ? hi - rem : lo + rem);
  return std::clamp(v, lo, hi);  // rem loses all precision for huge x
}

// Keys cubic convolution weights (alpha = -0.75) of the taps at -1, 0, 1, 2 around t in [0, 1).
template <class C>
void gs_cubic_weights(C t, C* w) {
  constexpr C a = C(-0.75);
  const C x0 = t + 1, x1 = t, x2 = 1 - t, x3 = 2 - t;
  w[0] = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a;
  w[1] = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1;
  w[2] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1;
  w[3] = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a;
}

struct GridSampleArgs {
  GsMode mode;
  GsPad pad;
  bool align_corners;
  int rank;  // spatial axes
  int64_t in[kMaxSpatial];
  int64_t channels, points, batches, in_plane;
};

// Tap index i of an axis of extent d after padding: -1 when it reads zero padding.
template <class C>
int64_t gs_tap(int64_t i, int64_t d, GsPad pad, C lo, C hi) {
  if (pad == GsPad::Zeros) return i >= 0 && i < d ? i : -1;
  if (pad == GsPad::Border) return std::clamp<int64_t>(i, 0, d - 1);
  return std::clamp<int64_t>(static_cast<int64_t>(gs_reflect(static_cast<C>(i), lo, hi)), 0, d - 1);
}

template <class T, class G>
void grid_sample_typed(const GridSampleArgs& a, const T* x, const G* grid, T* y, ThreadPool* pool) {
  using C = compute_t<G>;   // coordinates, as precise as the grid
  using W = compute_t<T>;   // weights and sums, as precise as the data
  const int r = a.rank;
  const int ntaps = a.mode == GsMode::Nearest ? 1 : (a.mode == GsMode::Linear ? 2 : 4);
  int64_t row_stride[kMaxSpatial], kdims[kMaxSpatial];
  std::fill(kdims, kdims + kMaxSpatial, int64_t{ntaps});
  for (int i = r - 1; i >= 0; --i) row_stride[i] = i == r - 1 ? 1 : row_stride[i + 1] * a.in[i + 1];

  parallel_for(pool, a.batches * a.points, 16, [&](int64_t begin, int64_t end) {
    int64_t tap[kMaxSpatial][4];
    W weight[kMaxSpatial][4];
    for (int64_t q = begin; q < end; ++q) {
      const int64_t n = q / a.points, p = q % a.points;
      const G* g = grid + q * r;
      bool is_nan = false, all_zero = false;
      for (int ax = 0; ax < r; ++ax) {
        const C d = static_cast<C>(a.in[ax]);
        const C lo = a.align_corners ? C(0) : C(-0.5), hi = a.align_corners ? d - 1 : d - C(0.5);
        // The grid's last axis lists coordinates innermost-first: (x, y, z...).
        const C gn = static_cast<C>(to_compute(g[r - 1 - ax]));
        C v = a.align_corners ? (gn + 1) / 2 * (d - 1) : ((gn + 1) * d - 1) / 2;
        if (a.mode == GsMode::Nearest) v = std::nearbyint(v);  // ties to even, as PyTorch
        if (v < lo || v > hi) {
          if (a.pad == GsPad::Border) v = std::clamp(v, C(0), d - 1);
          else if (a.pad == GsPad::Reflection) v = gs_reflect(v, lo, hi);
        }
        if (std::isnan(v)) {
          is_nan = true;
          break;
        }
        // Far outside the image every tap reads padding zeros (and the index would overflow).
        if (!(v >= -4 && v <= d + 3)) {
          all_zero = true;
          continue;
        }
        if (a.mode == GsMode::Nearest) {
          tap[ax][0] = gs_tap(static_cast<int64_t>(v), a.in[ax], a.pad, lo, hi);
          weight[ax][0] = 1;
          continue;
        }
        const C v0 = std::floor(v);
        const W t = static_cast<W>(v - v0);
        const int64_t i0 = static_cast<int64_t>(v0);
        if (a.mode == GsMode::Linear) {
          weight[ax][0] = 1 - t;
          weight[ax][1] = t;
          for (int k = 0; k < 2; ++k) tap[ax][k] = gs_tap(i0 + k, a.in[ax], a.pad, lo, hi);
        } else {
          gs_cubic_weights(t, weight[ax]);
          for (int k = 0; k < 4; ++k) tap[ax][k] = gs_tap(i0 - 1 + k, a.in[ax], a.pad, lo, hi);
        }
      }
      for (int64_t c = 0; c < a.channels; ++c) {
        T* out = y + (n * a.channels + c) * a.points + p;
        if (is_nan || all_zero) {
          *out = from_compute<T>(is_nan ? std::numeric_limits<W>::quiet_NaN() : W(0));
          continue;
        }
        const T* plane = x + (n * a.channels + c) * a.in_plane;
        W sum = 0;
        int64_t k[kMaxSpatial] = {};
        do {
          W w = 1;
          int64_t off = 0;
          bool zero = false;
          for (int ax = 0; ax < r && !zero; ++ax) {
            const int64_t i = tap[ax][k[ax]];
            zero = i < 0;
            w *= weight[ax][k[ax]];
            off += i * row_stride[ax];
          }
          if (!zero) sum += w * to_compute(plane[off]);
        } while (next_index(k, kdims, r));
        *out = from_compute<T>(sum);
      }
    }
  });
}

Status grid_sample_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  const std::string mode = ctx.attrs().get_string("mode", ctx.opset() < 20 ? "bilinear" : "linear");
  const std::string pad = ctx.attrs().get_string("padding_mode", "zeros");
  GridSampleArgs a{};
  a.mode = mode == "nearest" ? GsMode::Nearest
                             : (mode == "cubic" || mode == "bicubic" ? GsMode::Cubic : GsMode::Linear);
  a.pad = pad == "border" ? GsPad::Border : (pad == "reflection" ? GsPad::Reflection : GsPad::Zeros);
  a.align_corners = ctx.attrs().get_int("align_corners", 0) != 0;
  a.rank = x.rank() - 2;
  for (int i = 0; i < a.rank; ++i) a.in[i] = x.dim(i + 2);
  a.batches = x.dim(0);
  a.channels = x.dim(1);
  a.in_plane = x.shape().numel(2, x.rank());
  a.points = grid.shape().numel(1, grid.rank() - 1);
  Status inner;
  Status outer = visit_float(x.dtype(), "GridSample", [&](auto xt) {
    using T = decltype(xt);
    inner = visit_float(grid.dtype(), "GridSample grid", [&](auto gt) {
      using G = decltype(gt);
      grid_sample_typed<T, G>(a, x.data_as<const T>(), grid.data_as<const G>(), ctx.output(0).data_as<T>(),
                              ctx.pool());
    });
  });
  return outer.is_ok() ? inner : outer;
}

// --- AffineGrid ----------------------------------------------------------------------------

// Normalized coordinate of pixel i of an axis of extent d, in [-1, 1].
double affine_base(int64_t i, int64_t d, bool align_corners) {
  if (align_corners) return d == 1 ? -1.0 : -1.0 + static_cast<double>(i) * (2.0 / static_cast<double>(d - 1));
  const double step = 2.0 / static_cast<double>(d);
  return (-1.0 + step / 2) + static_cast<double>(i) * step;
}

Status affine_grid_kernel(KernelContext& ctx) {
  const Tensor& theta = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int r = static_cast<int>(theta.dim(1));
  const bool align = ctx.attrs().get_int("align_corners", 0) != 0;
  int64_t dims[3];
  for (int i = 0; i < r; ++i) dims[i] = y.dim(i + 1);
  const int64_t points = y.shape().numel(1, 1 + r);
  return visit_float(theta.dtype(), "AffineGrid", [&](auto tag) {
    using T = decltype(tag);
    const T* th = theta.data_as<const T>();
    T* out = y.data_as<T>();
    for (int64_t n = 0; n < theta.dim(0); ++n) {
      const T* m = th + n * r * (r + 1);
      int64_t idx[3] = {0, 0, 0};
      for (int64_t p = 0; p < points; ++p, next_index(idx, dims, r)) {
        // Homogeneous position (x, y[, z], 1): component k belongs to spatial axis r-1-k.
        double v[4];
        for (int k = 0; k < r; ++k) v[k] = affine_base(idx[r - 1 - k], dims[r - 1 - k], align);
        v[r] = 1.0;
        for (int j = 0; j < r; ++j) {
          double s = 0;
          for (int k = 0; k <= r; ++k) s += static_cast<double>(to_compute(m[j * (r + 1) + k])) * v[k];
          out[(n * points + p) * r + j] = from_compute<T>(s);
        }
      }
    }
  });
}

// --- RoiAlign ------------------------------------------------------------------------------

// One bilinear sample: four plane offsets and their weights (all zero outside the map).
template <class C>
struct RoiSample {
  int64_t pos[4];
  C w[4];
};

// Bilinear samples per bin beyond which RoiAlign refuses (a 2048 x 2048-pixel bin; the
// table of 2^22 samples takes ~200 MB).
constexpr int64_t kMaxRoiSamples = int64_t{1} << 22;

// Samples per bin along one axis: sampling_ratio, or ceil(extent / bins) when adaptive.
// Capped above kMaxRoiSamples, so that an oversized grid is still refused but never overflows.
template <class C>
int64_t roi_grid(int64_t sampling_ratio, C extent, int64_t bins) {
  constexpr int64_t cap = kMaxRoiSamples + 1;
  if (sampling_ratio > 0) return std::min(sampling_ratio, cap);
  const C g = std::ceil(extent / static_cast<C>(bins));
  if (!(g > 0)) return 0;
  return g >= static_cast<C>(cap) ? cap : static_cast<int64_t>(g);
}

template <class C>
RoiSample<C> roi_bilinear(C y, C x, int64_t height, int64_t width) {
  RoiSample<C> s{};
  if (!(y >= -1 && y <= static_cast<C>(height) && x >= -1 && x <= static_cast<C>(width))) return s;
  y = std::max(y, C(0));
  x = std::max(x, C(0));
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= height - 1) {
    y0 = y1 = height - 1;
    y = static_cast<C>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= width - 1) {
    x0 = x1 = width - 1;
    x = static_cast<C>(x0);
  } else {
    x1 = x0 + 1;
  }
  const C ly = y - static_cast<C>(y0), lx = x - static_cast<C>(x0), hy = 1 - ly, hx = 1 - lx;
  s.pos[0] = y0 * width + x0;
  s.pos[1] = y0 * width + x1;
  s.pos[2] = y1 * width + x0;
  s.pos[3] = y1 * width + x1;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

// An ROI in input pixels: its top-left corner, bin sizes and samples per bin.
template <class C>
struct RoiBox {
  C x0, y0, bin_h, bin_w;
  int64_t grid_h, grid_w;
};

template <class T, class C = compute_t<T>>
RoiBox<C> roi_box(const T* roi, C scale, bool half_pixel, int64_t sampling_ratio, int64_t ph_n, int64_t pw_n) {
  // No rounding of the corners: this is what makes it RoiAlign rather than RoiPool.
  const C offset = half_pixel ? C(0.5) : C(0);
  const C x0 = to_compute(roi[0]) * scale - offset, y0 = to_compute(roi[1]) * scale - offset;
  const C x1 = to_compute(roi[2]) * scale - offset, y1 = to_compute(roi[3]) * scale - offset;
  C roi_w = x1 - x0, roi_h = y1 - y0;
  if (!half_pixel) {  // malformed ROIs become 1x1
    roi_w = std::max(roi_w, C(1));
    roi_h = std::max(roi_h, C(1));
  }
  return {x0,
          y0,
          roi_h / static_cast<C>(ph_n),
          roi_w / static_cast<C>(pw_n),
          roi_grid(sampling_ratio, roi_h, ph_n),
          roi_grid(sampling_ratio, roi_w, pw_n)};
}

Status roi_align_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  const int64_t* batch = ctx.input(2).data_as<const int64_t>();
  Tensor& y = ctx.output(0);
  const bool max_mode = ctx.attrs().get_string("mode", "avg") == "max";
  // Version 10 had no coordinate_transformation_mode and behaved as output_half_pixel.
  const bool half_pixel =
      ctx.opset() >= 16 && ctx.attrs().get_string("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  const int64_t sampling_ratio = ctx.attrs().get_int("sampling_ratio", 0);
  const float spatial_scale = ctx.attrs().get_float("spatial_scale", 1.0f);
  const int64_t num_rois = rois.dim(0), channels = x.dim(1), height = x.dim(2), width = x.dim(3);
  const int64_t ph_n = y.dim(2), pw_n = y.dim(3);
  for (int64_t i = 0; i < num_rois; ++i)
    if (batch[i] < 0 || batch[i] >= x.dim(0))
      return out_of_range(str_cat("RoiAlign: batch_indices[", i, "] = ", batch[i], " is outside [0, ", x.dim(0), ")"));
  Status status;
  Status dispatched = visit_float(x.dtype(), "RoiAlign", [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* xs = x.data_as<const T>();
    const T* rs = rois.data_as<const T>();
    T* ys = y.data_as<T>();
    const C scale = static_cast<C>(spatial_scale);
    for (int64_t n = 0; n < num_rois; ++n) {
      const RoiBox<C> box = roi_box(rs + n * 4, scale, half_pixel, sampling_ratio, ph_n, pw_n);
      if (box.grid_h * box.grid_w > kMaxRoiSamples) {
        status = resource_exhausted(str_cat("RoiAlign: ROI ", n, " needs ", box.grid_h, " x ", box.grid_w,
                                            " samples per bin (set a positive sampling_ratio)"));
        return;
      }
    }
    // Bins are independent; each bin's samples are computed once and serve every channel.
    parallel_for(ctx.pool(), num_rois * ph_n * pw_n, 1, [&](int64_t begin, int64_t end) {
      std::vector<RoiSample<C>> samples;
      for (int64_t q = begin; q < end; ++q) {
        const int64_t n = q / (ph_n * pw_n), b = q % (ph_n * pw_n), ph = b / pw_n, pw = b % pw_n;
        const RoiBox<C> box = roi_box(rs + n * 4, scale, half_pixel, sampling_ratio, ph_n, pw_n);
        samples.clear();
        for (int64_t iy = 0; iy < box.grid_h; ++iy) {
          const C yy = box.y0 + static_cast<C>(ph) * box.bin_h +
                       (static_cast<C>(iy) + C(0.5)) * box.bin_h / static_cast<C>(box.grid_h);
          for (int64_t ix = 0; ix < box.grid_w; ++ix) {
            const C xx = box.x0 + static_cast<C>(pw) * box.bin_w +
                         (static_cast<C>(ix) + C(0.5)) * box.bin_w / static_cast<C>(box.grid_w);
            samples.push_back(roi_bilinear(yy, xx, height, width));
          }
        }
        const C count = static_cast<C>(std::max<size_t>(samples.size(), 1));
        for (int64_t c = 0; c < channels; ++c) {
          const T* plane = xs + (batch[n] * channels + c) * height * width;
          C acc = 0;
          for (size_t s = 0; s < samples.size(); ++s) {
            const RoiSample<C>& sm = samples[s];
            C v[4];
            for (int k = 0; k < 4; ++k) v[k] = sm.w[k] * to_compute(plane[sm.pos[k]]);
            if (max_mode) {
              // The largest weighted corner, as the ONNX reference and onnxruntime do.
              const C m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
              acc = s == 0 ? m : std::max(acc, m);
            } else {
              acc += v[0] + v[1] + v[2] + v[3];
            }
          }
          ys[(n * channels + c) * ph_n * pw_n + b] = from_compute<T>(max_mode ? acc : acc / count);
        }
      }
    });
  });
  return dispatched.is_ok() ? status : dispatched;
}

// --- MaxRoiPool ----------------------------------------------------------------------------

// Rounds half away from zero into a bounded int64 (NaN -> 0).
template <class C>
int64_t roi_round(C v) {
  if (!(std::fabs(v) < C(1e15))) return 0;
  return static_cast<int64_t>(std::round(v));
}

Status max_roi_pool_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  Tensor& y = ctx.output(0);
  const float spatial_scale = ctx.attrs().get_float("spatial_scale", 1.0f);
  const int64_t num_rois = rois.dim(0), channels = x.dim(1), height = x.dim(2), width = x.dim(3);
  const int64_t ph_n = y.dim(2), pw_n = y.dim(3);
  Status status;
  Status dispatched = visit_float(x.dtype(), "MaxRoiPool", [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* xs = x.data_as<const T>();
    const T* rs = rois.data_as<const T>();
    T* ys = y.data_as<T>();
    for (int64_t n = 0; n < num_rois; ++n) {
      const T* roi = rs + n * 5;
      const double b_value = static_cast<double>(to_compute(roi[0]));
      if (!(b_value > -0.5 && b_value < static_cast<double>(x.dim(0)) - 0.5)) {
        status = out_of_range(str_cat("MaxRoiPool: rois[", n, ", 0] = ", b_value, " is not a batch index in [0, ",
                                      x.dim(0), ")"));
        return;
      }
      const int64_t b = roi_round(b_value);
      const C scale = static_cast<C>(spatial_scale);
      const int64_t sw = roi_round(to_compute(roi[1]) * scale), sh = roi_round(to_compute(roi[2]) * scale);
      const int64_t ew = roi_round(to_compute(roi[3]) * scale), eh = roi_round(to_compute(roi[4]) * scale);
      const C bin_h = static_cast<C>(std::max<int64_t>(eh - sh + 1, 1)) / static_cast<C>(ph_n);
      const C bin_w = static_cast<C>(std::max<int64_t>(ew - sw + 1, 1)) / static_cast<C>(pw_n);
      for (int64_t c = 0; c < channels; ++c) {
        const T* plane = xs + (b * channels + c) * height * width;
        T* out = ys + (n * channels + c) * ph_n * pw_n;
        for (int64_t ph = 0; ph < ph_n; ++ph)
          for (int64_t pw = 0; pw < pw_n; ++pw) {
            // Clamped while still floating, so that absurd ROIs cannot overflow the cast.
            auto edge = [](C v, int64_t start, int64_t extent) {
              return static_cast<int64_t>(std::clamp(v + static_cast<C>(start), C(0), static_cast<C>(extent)));
            };
            const int64_t hs = edge(std::floor(static_cast<C>(ph) * bin_h), sh, height);
            const int64_t he = edge(std::ceil(static_cast<C>(ph + 1) * bin_h), sh, height);
            const int64_t ws = edge(std::floor(static_cast<C>(pw) * bin_w), sw, width);
            const int64_t we = edge(std::ceil(static_cast<C>(pw + 1) * bin_w), sw, width);
            C best = 0;
            if (he > hs && we > ws) {
              best = -std::numeric_limits<C>::infinity();
              for (int64_t h = hs; h < he; ++h)
                for (int64_t w = ws; w < we; ++w) best = std::max(best, to_compute(plane[h * width + w]));
            }
            out[ph * pw_n + pw] = from_compute<T>(best);
          }
      }
    }
  });
  return dispatched.is_ok() ? status : dispatched;
}

// --- NonMaxSuppression ---------------------------------------------------------------------

// Writes the boxes core/non_max_suppression.h selects; shape inference ran the same selection.
Status non_max_suppression_kernel(KernelContext& ctx) {
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  Tensor& out = ctx.output(0);
  const bool center = ctx.attrs().get_int("center_point_box", 0) == 1;
  auto scalar = [&](int i) -> const Tensor* { return ctx.has_input(i) && ctx.input(i).numel() > 0 ? &ctx.input(i) : nullptr; };
  const int64_t max_out = scalar(2) ? std::max<int64_t>(scalar(2)->data_as<const int64_t>()[0], 0) : 0;
  const float iou = scalar(3) ? scalar(3)->data_as<const float>()[0] : 0.0f;
  const Tensor* score_t = scalar(4);
  const float score_threshold = score_t ? score_t->data_as<const float>()[0] : 0.0f;
  NmsOptions options;
  options.center_point_box = center;
  options.max_per_class = max_out;
  options.iou_threshold = iou;
  options.filter_scores = score_t != nullptr;
  options.score_threshold = score_threshold;
  const std::vector<int64_t> rows = non_max_suppression(boxes.data_as<const float>(), scores.data_as<const float>(),
                                                        boxes.dim(0), scores.dim(1), boxes.dim(1), options);
  if (static_cast<int64_t>(rows.size()) != out.numel())
    return internal_error(str_cat("NonMaxSuppression: selected ", rows.size() / 3, " boxes, shape inference expected ",
                                  out.dim(0)));
  std::copy(rows.begin(), rows.end(), out.data_as<int64_t>());
  return Status::ok();
}

// --- DeformConv ----------------------------------------------------------------------------
//
// Per image: a column buffer cols[C * K, P] (K kernel taps, P output points) holds each
// channel's value sampled at its tap's offset position, times the mask; then each group's
// output is W_g[oC/g, C/g * K] x cols_g. A sample is N-linear over the 2^r surrounding
// pixels, pixels outside the image reading zero.

struct DeformGeometry {
  int r;
  int64_t in[kMaxSpatial], kernel[kMaxSpatial], out[kMaxSpatial];
  int64_t stride[kMaxSpatial], dilation[kMaxSpatial], pad[kMaxSpatial];
  int64_t in_plane, ksize, points;
};

// Corners of an N-linear sample at `pos`; false (weights unused) when it is NaN.
template <class C>
bool deform_corners(const DeformGeometry& g, const C* pos, int64_t* offs, C* ws, int* count) {
  int64_t lo[kMaxSpatial];
  C t[kMaxSpatial];
  for (int a = 0; a < g.r; ++a) {
    if (std::isnan(pos[a])) return false;
    if (!(pos[a] > -1 && pos[a] < static_cast<C>(g.in[a]))) {  // every corner is outside
      *count = 0;
      return true;
    }
    const C f = std::floor(pos[a]);
    lo[a] = static_cast<int64_t>(f);
    t[a] = pos[a] - f;
  }
  int n = 0;
  for (int corner = 0; corner < (1 << g.r); ++corner) {
    C w = 1;
    int64_t off = 0;
    bool inside = true;
    for (int a = 0; a < g.r; ++a) {
      const bool up = (corner >> (g.r - 1 - a)) & 1;
      const int64_t i = lo[a] + (up ? 1 : 0);
      inside = inside && i >= 0 && i < g.in[a];
      w *= up ? t[a] : 1 - t[a];
      off = off * g.in[a] + i;
    }
    if (!inside) continue;
    offs[n] = off;
    ws[n] = w;
    ++n;
  }
  *count = n;
  return true;
}

template <class T>
void deform_conv_typed(KernelContext& ctx, const DeformGeometry& g) {
  using C = compute_t<T>;
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& offset = ctx.input(2);
  const T* bias = ctx.has_input(3) ? ctx.input(3).data_as<const T>() : nullptr;
  const T* mask = ctx.has_input(4) ? ctx.input(4).data_as<const T>() : nullptr;
  Tensor& y = ctx.output(0);
  const int64_t batches = x.dim(0), channels = x.dim(1), out_channels = w.dim(0);
  const int64_t group = ctx.attrs().get_int("group", 1), offset_group = ctx.attrs().get_int("offset_group", 1);
  const int64_t cg = channels / group, ocg = out_channels / group, c_per_og = channels / offset_group;
  const int64_t K = g.ksize, P = g.points, r = g.r;

  std::vector<C> wc(static_cast<size_t>(w.numel()));
  for (int64_t i = 0; i < w.numel(); ++i) wc[i] = to_compute(w.data_as<const T>()[i]);
  std::vector<C> cols(static_cast<size_t>(channels * K * P)), acc(static_cast<size_t>(ocg * P));
  const T* xs = x.data_as<const T>();
  const T* os = offset.data_as<const T>();
  T* ys = y.data_as<T>();
  for (int64_t n = 0; n < batches; ++n) {
    for (int64_t og = 0; og < offset_group; ++og) {
      int64_t k[kMaxSpatial] = {};
      for (int64_t kk = 0; kk < K; ++kk, next_index(k, g.kernel, g.r)) {
        const T* off_k = os + ((n * offset_group + og) * K + kk) * r * P;
        const T* mask_k = mask ? mask + ((n * offset_group + og) * K + kk) * P : nullptr;
        int64_t o[kMaxSpatial] = {};
        for (int64_t p = 0; p < P; ++p, next_index(o, g.out, g.r)) {
          C pos[kMaxSpatial];
          for (int a = 0; a < g.r; ++a)
            pos[a] = static_cast<C>(o[a] * g.stride[a] - g.pad[a] + k[a] * g.dilation[a]) +
                     to_compute(off_k[a * P + p]);
          int64_t offs[1 << kMaxSpatial];
          C ws[1 << kMaxSpatial];
          int count = 0;
          const bool finite = deform_corners(g, pos, offs, ws, &count);
          const C m = mask_k ? to_compute(mask_k[p]) : C(1);
          for (int64_t c = og * c_per_og; c < (og + 1) * c_per_og; ++c) {
            const T* plane = xs + (n * channels + c) * g.in_plane;
            C v = finite ? C(0) : std::numeric_limits<C>::quiet_NaN();
            for (int i = 0; i < count; ++i) v += ws[i] * to_compute(plane[offs[i]]);
            cols[(c * K + kk) * P + p] = m * v;
          }
        }
      }
    }
    for (int64_t gi = 0; gi < group; ++gi) {
      gemm<C>(false, false, ocg, P, cg * K, C(1), wc.data() + gi * ocg * cg * K, cg * K, cols.data() + gi * cg * K * P,
              P, C(0), acc.data(), P, ctx.pool());
      for (int64_t oc = 0; oc < ocg; ++oc) {
        const C b = bias ? to_compute(bias[gi * ocg + oc]) : C(0);
        T* out = ys + (n * out_channels + gi * ocg + oc) * P;
        for (int64_t p = 0; p < P; ++p) out[p] = from_compute<T>(acc[oc * P + p] + b);
      }
    }
  }
}

Status deform_conv_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& y = ctx.output(0);
  DeformGeometry g{};
  g.r = x.rank() - 2;
  if (g.r > 3) return unsupported(str_cat("DeformConv: ", g.r, " spatial axes (at most 3)"));
  const auto ones = std::vector<int64_t>(static_cast<size_t>(g.r), 1);
  const auto strides = ctx.attrs().get_ints("strides", ones), dilations = ctx.attrs().get_ints("dilations", ones);
  const auto pads = ctx.attrs().get_ints("pads", std::vector<int64_t>(static_cast<size_t>(2 * g.r), 0));
  g.ksize = 1;
  for (int a = 0; a < g.r; ++a) {
    g.in[a] = x.dim(a + 2);
    g.kernel[a] = w.dim(a + 2);
    g.out[a] = y.dim(a + 2);
    g.stride[a] = strides[a];
    g.dilation[a] = dilations[a];
    g.pad[a] = pads[a];
    g.ksize *= g.kernel[a];
  }
  g.in_plane = x.shape().numel(2, x.rank());
  g.points = y.shape().numel(2, y.rank());
  return visit_float(x.dtype(), "DeformConv", [&](auto tag) { deform_conv_typed<decltype(tag)>(ctx, g); });
}

// --- Col2Im --------------------------------------------------------------------------------

// Sums each column entry into the image pixel its (kernel tap, block position) covers.
Status col2im_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& y = ctx.output(0);
  const Tensor& block_t = ctx.input(2);
  const int r = static_cast<int>(block_t.numel());
  const auto ones = std::vector<int64_t>(static_cast<size_t>(r), 1);
  const auto strides = ctx.attrs().get_ints("strides", ones), dilations = ctx.attrs().get_ints("dilations", ones);
  const auto pads = ctx.attrs().get_ints("pads", std::vector<int64_t>(static_cast<size_t>(2 * r), 0));
  int64_t image[Shape::kMaxRank], block[Shape::kMaxRank], nblocks[Shape::kMaxRank];
  int64_t ksize = 1;
  for (int a = 0; a < r; ++a) {
    image[a] = y.dim(a + 2);
    block[a] = block_t.data_as<const int64_t>()[a];
    nblocks[a] = (image[a] + pads[a] + pads[a + r] - (dilations[a] * (block[a] - 1) + 1)) / strides[a] + 1;
    ksize *= block[a];
  }
  const int64_t planes = y.dim(0) * y.dim(1), image_size = y.shape().numel(2, y.rank()), L = in.dim(2);
  if (in.dtype() == DType::Bool) return unsupported("Col2Im: dtype bool");
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using C = compute_t<T>;
      const T* src = in.data_as<const T>();
      T* dst = y.data_as<T>();
      parallel_for(ctx.pool(), planes, 1, [&](int64_t begin, int64_t end) {
        std::vector<C> acc(static_cast<size_t>(image_size));
        for (int64_t pl = begin; pl < end; ++pl) {
          std::fill(acc.begin(), acc.end(), C(0));
          int64_t k[Shape::kMaxRank] = {};
          for (int64_t kk = 0; kk < ksize; ++kk, next_index(k, block, r)) {
            const T* col = src + (pl * ksize + kk) * L;
            int64_t b[Shape::kMaxRank] = {};
            for (int64_t l = 0; l < L; ++l, next_index(b, nblocks, r)) {
              int64_t off = 0;
              bool inside = true;
              for (int a = 0; a < r && inside; ++a) {
                const int64_t i = b[a] * strides[a] - pads[a] + k[a] * dilations[a];
                inside = i >= 0 && i < image[a];
                off = off * image[a] + i;
              }
              if (inside) acc[off] += to_compute(col[l]);
            }
          }
          for (int64_t i = 0; i < image_size; ++i) dst[pl * image_size + i] = from_compute<T>(acc[i]);
        }
      });
    }
  });
  return Status::ok();
}

// --- CenterCropPad -------------------------------------------------------------------------

// The output is zero; the overlap of the centered input and output windows is copied in.
Status center_crop_pad_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int rank = in.rank();
  std::memset(y.data(), 0, y.nbytes());
  if (y.numel() == 0 || in.numel() == 0) return Status::ok();
  int64_t src0[Shape::kMaxRank], dst0[Shape::kMaxRank], count[Shape::kMaxRank];
  for (int a = 0; a < rank; ++a) {
    const int64_t d = in.dim(a), s = y.dim(a);
    src0[a] = d > s ? (d - s) / 2 : 0;
    dst0[a] = s > d ? (s - d) / 2 : 0;
    count[a] = std::min(d, s);
  }
  const size_t esize = dtype_size(in.dtype());
  const auto* src = static_cast<const unsigned char*>(in.data());
  auto* dst = static_cast<unsigned char*>(y.data());
  if (rank == 0) {
    std::memcpy(dst, src, esize);
    return Status::ok();
  }
  const std::vector<int64_t> is = in.shape().strides(), os = y.shape().strides();
  int64_t idx[Shape::kMaxRank] = {};
  do {  // one innermost row per step
    int64_t si = 0, di = 0;
    for (int a = 0; a < rank; ++a) {
      si += (src0[a] + idx[a]) * is[a];
      di += (dst0[a] + idx[a]) * os[a];
    }
    std::memcpy(dst + di * esize, src + si * esize, static_cast<size_t>(count[rank - 1]) * esize);
  } while (next_index(idx, count, rank - 1));
  return Status::ok();
}

constexpr DTypeSet kVisionFloats = DTypeSet::floats();

}  // namespace

void register_vision(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "GridSample", .since_opset = 16, .until_opset = 22, .types = kVisionFloats,
         .id = "ref/gridsample", .fn = grid_sample_kernel});
  r.add({.domain = "", .op_type = "AffineGrid", .since_opset = 20, .until_opset = 20, .types = kVisionFloats,
         .id = "ref/affinegrid", .fn = affine_grid_kernel});
  r.add({.domain = "", .op_type = "RoiAlign", .since_opset = 10, .until_opset = 22, .types = kVisionFloats,
         .id = "ref/roialign", .fn = roi_align_kernel});
  r.add({.domain = "", .op_type = "MaxRoiPool", .since_opset = 1, .until_opset = 22, .types = kVisionFloats,
         .id = "ref/maxroipool", .fn = max_roi_pool_kernel});
  r.add({.domain = "", .op_type = "NonMaxSuppression", .since_opset = 10, .until_opset = 11, .types = {DType::F32},
         .id = "ref/nonmaxsuppression", .fn = non_max_suppression_kernel});
  r.add({.domain = "", .op_type = "DeformConv", .since_opset = 19, .until_opset = 22, .types = kVisionFloats,
         .id = "ref/deformconv", .fn = deform_conv_kernel});
  r.add({.domain = "", .op_type = "Col2Im", .since_opset = 18, .until_opset = 18, .types = DTypeSet::numeric(),
         .id = "ref/col2im", .fn = col2im_kernel});
  r.add({.domain = "", .op_type = "CenterCropPad", .since_opset = 18, .until_opset = 18, .types = DTypeSet::all(),
         .id = "ref/centercroppad", .fn = center_crop_pad_kernel});
}

}  // namespace ignis::kernels::ref
