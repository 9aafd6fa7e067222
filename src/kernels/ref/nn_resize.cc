// SPDX-License-Identifier: Apache-2.0
// Reference Resize (opsets 10-19) and Upsample (7, 9).
//
// Every axis is resampled independently: per output coordinate the coordinate transform
// gives a source position x, from which "nearest" picks one index and "linear"/"cubic" a
// small set of (index, weight) taps (indices clamped to the edge, as edge padding; weights
// renormalized when exclude_outside or antialias is set). Nearest is a direct N-D gather on
// the stored type; linear and cubic run one pass per resized axis over a double buffer and
// convert at the end (rounding half to even and saturating for integer types).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/resize_geometry.h"
#include "core/strings.h"
#include "kernels/ref/nn_internal.h"
#include "kernels/ref/nn_resize.h"

namespace ignis::kernels::ref {

namespace {

template <class T>
T saturate_from_double(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (std::is_same_v<T, bool>) return v != 0.0;
    if (v != v) return T(0);
    const double r = std::nearbyint(v);
    if (r <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(r);
  } else {
    return from_compute<T>(v);
  }
}

template <class T>
void resize_nearest(const ResizeParams& p, const Shape& in, const T* x, T* y, ThreadPool* pool) {
  const int rank = in.rank();
  std::vector<std::vector<int64_t>> src(rank);  // source offset contribution, -1 = extrapolate
  const std::vector<int64_t> strides = in.strides();
  for (int a = 0; a < rank; ++a) {
    src[a].resize(static_cast<size_t>(p.out[a]));
    const bool identity = resize_axis_is_identity(p, a, in[a]);
    for (int64_t o = 0; o < p.out[a]; ++o) {
      if (identity) {
        src[a][o] = o * strides[a];
        continue;
      }
      bool outside;
      const double xs = resize_source_coord(p, a, in[a], o, outside);
      src[a][o] = outside ? -1 : std::clamp<int64_t>(resize_nearest_index(p, a, xs), 0, in[a] - 1) * strides[a];
    }
  }
  const T fill = saturate_from_double<T>(p.extrapolation_value);
  int64_t rows = 1;
  for (int a = 0; a + 1 < rank; ++a) rows *= p.out[a];
  const int64_t last = rank > 0 ? p.out[rank - 1] : 1;
  parallel_for(pool, rows, 64, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> o(rank, 0);
    for (int64_t r = begin; r < end; ++r) {
      int64_t rem = r, base = 0;
      bool outside = false;
      for (int a = rank - 2; a >= 0; --a) {
        o[a] = rem % p.out[a];
        rem /= p.out[a];
      }
      for (int a = 0; a + 1 < rank; ++a) {
        if (src[a][o[a]] < 0) outside = true;
        base += src[a][o[a]];
      }
      T* yrow = y + r * last;
      if (rank == 0) {
        yrow[0] = x[0];
        continue;
      }
      const std::vector<int64_t>& s = src[rank - 1];
      for (int64_t j = 0; j < last; ++j) yrow[j] = (outside || s[j] < 0) ? fill : x[base + s[j]];
    }
  });
}

template <class T>
void resize_interpolate(const ResizeParams& p, const Shape& in, const T* x, T* y, ThreadPool* pool) {
  const int rank = in.rank();
  std::vector<int64_t> cur_shape(in.begin(), in.end());
  std::vector<double> cur(static_cast<size_t>(in.numel()));
  for (size_t i = 0; i < cur.size(); ++i) cur[i] = static_cast<double>(to_compute(x[i]));
  for (int a = 0; a < rank; ++a) {
    if (resize_axis_is_identity(p, a, in[a])) continue;
    const ResizeTaps t = resize_axis_taps(p, a, in[a]);
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < a; ++i) outer *= cur_shape[i];
    for (int i = a + 1; i < rank; ++i) inner *= cur_shape[i];
    const int64_t len_in = cur_shape[a], len_out = p.out[a];
    std::vector<double> next(static_cast<size_t>(outer * len_out * inner));
    parallel_for(pool, outer, 1, [&](int64_t begin, int64_t end) {
      for (int64_t ou = begin; ou < end; ++ou) {
        const double* src = cur.data() + ou * len_in * inner;
        double* dst = next.data() + ou * len_out * inner;
        for (int64_t o = 0; o < len_out; ++o) {
          double* d = dst + o * inner;
          if (t.outside[o]) {
            std::fill(d, d + inner, p.extrapolation_value);
            continue;
          }
          std::fill(d, d + inner, 0.0);
          for (int j = 0; j < t.n; ++j) {
            const double w = t.weight[o * t.n + j];
            if (w == 0.0) continue;
            const double* s = src + t.index[o * t.n + j] * inner;
            for (int64_t i = 0; i < inner; ++i) d[i] += w * s[i];
          }
        }
      }
    });
    cur_shape[a] = len_out;
    cur.swap(next);
  }
  for (size_t i = 0; i < cur.size(); ++i) y[i] = saturate_from_double<T>(cur[i]);
}

std::vector<double> read_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = load_as_double(t.dtype(), t.data(), static_cast<int64_t>(i));
  return v;
}

}  // namespace

Result<ResizeParams> resize_params_of(const KernelContext& ctx, bool is_upsample) {
  const Tensor& x = ctx.input(0);
  std::optional<std::vector<double>> scales, roi;
  std::optional<std::vector<int64_t>> sizes;
  if (is_upsample) {
    if (ctx.opset() < 9) {
      const auto f = ctx.attrs().get_floats("scales");
      scales.emplace(f.begin(), f.end());
    } else {
      scales = read_doubles(ctx.input(1));
    }
  } else if (ctx.opset() < 11) {
    scales = read_doubles(ctx.input(1));
  } else {
    if (ctx.has_input(1)) roi = read_doubles(ctx.input(1));
    if (ctx.has_input(2)) scales = read_doubles(ctx.input(2));
    if (ctx.has_input(3)) {
      const Tensor& s = ctx.input(3);
      sizes.emplace(static_cast<size_t>(s.numel()));
      for (int64_t i = 0; i < s.numel(); ++i) (*sizes)[i] = load_as_int64(s.dtype(), s.data(), i);
    }
  }
  ResizeValues values;
  if (scales) values.scales = &*scales;
  if (sizes) values.sizes = &*sizes;
  if (roi) values.roi = &*roi;
  return make_resize_params(ctx.attrs(), ctx.opset(), is_upsample, x.shape().dims(), values);
}

namespace {

Status run_resize(KernelContext& ctx, bool is_upsample) {
  const Tensor& x = ctx.input(0);
  IGNIS_ASSIGN_OR_RETURN(const ResizeParams p, resize_params_of(ctx, is_upsample));
  Tensor& y = ctx.output(0);
  if (y.numel() == 0) return Status::ok();
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if (p.mode == ResizeMode::Nearest) {
      resize_nearest(p, x.shape(), x.data_as<T>(), y.data_as<T>(), ctx.pool());
      return Status::ok();
    }
    if constexpr (std::is_same_v<T, bool>) {
      return unsupported("Resize: linear and cubic modes on bool tensors");
    } else {
      resize_interpolate(p, x.shape(), x.data_as<T>(), y.data_as<T>(), ctx.pool());
      return Status::ok();
    }
  });
}

Status resize_kernel(KernelContext& ctx) { return run_resize(ctx, false); }
Status upsample_kernel(KernelContext& ctx) { return run_resize(ctx, true); }

}  // namespace

void register_nn_resize(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "Resize", .since_opset = 10, .types = DTypeSet::all(),
         .id = "ref/resize", .fn = resize_kernel});
  r.add({.domain = "", .op_type = "Upsample", .since_opset = 7, .until_opset = 9, .types = DTypeSet::all(),
         .id = "ref/upsample", .fn = upsample_kernel});
}

}  // namespace ignis::kernels::ref
