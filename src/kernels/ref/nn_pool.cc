// SPDX-License-Identifier: Apache-2.0
// Reference pooling kernels: MaxPool (with Indices), AveragePool, LpPool, their Global*
// forms, and MaxUnpool.
//
// Windowed pools walk each output position's window restricted to the taps that land inside
// the input (pads never contribute values); the number of taps inside the padded extent is
// tracked separately for AveragePool's count_include_pad. One-axis and two-axis pools run
// nested loops over precomputed per-axis tap ranges, higher ranks an odometer. (image,
// channel) planes are split over the pool.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/conv_geometry.h"
#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "kernels/ref/nn_internal.h"

namespace ignis::kernels::ref {

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// Taps k of the window at output coordinate o along one axis: input coordinate
// start + k * dilation; [lo, hi) are those inside the input, `padded` counts those inside
// [-pad_begin, in + pad_end).
struct AxisTaps {
  int64_t start, lo, hi, padded;
};

std::vector<AxisTaps> axis_taps(const WindowGeometry& g, int axis) {
  std::vector<AxisTaps> t(static_cast<size_t>(g.out[axis]));
  const int64_t k = g.kernel[axis], d = g.dilation[axis], in = g.in[axis];
  for (int64_t o = 0; o < g.out[axis]; ++o) {
    const int64_t start = o * g.stride[axis] - g.pad_begin[axis];
    auto range = [&](int64_t lo_coord, int64_t hi_coord, int64_t& lo, int64_t& hi) {
      // k with lo_coord <= start + k * d < hi_coord, clamped to [0, k)
      lo = std::clamp<int64_t>(ceil_div(lo_coord - start, d), 0, k);
      hi = std::clamp<int64_t>(floor_div(hi_coord - 1 - start, d) + 1, lo, k);
    };
    int64_t lo, hi, plo, phi;
    range(0, in, lo, hi);
    range(-g.pad_begin[axis], in + g.pad_end[axis], plo, phi);
    t[o] = {start, lo, hi, phi - plo};
  }
  return t;
}

// Accumulators. add() sees the tap's value and its spatial offset in row-major and in
// column-major order; finish() gets the counts of input taps and padded-extent taps.
template <class C>
struct MaxAcc {
  C best;
  int64_t row = -1, col = -1;
  void begin() {
    best = std::numeric_limits<C>::lowest();
    row = col = -1;
  }
  void add(C v, int64_t r, int64_t c) {
    // NaN loses to every number; an all-NaN window yields NaN.
    if (row < 0 || (best != best && v == v) || v > best) {
      best = v;
      row = r;
      col = c;
    }
  }
  C finish(int64_t, int64_t) const { return best; }
};

struct AvgAcc {
  double sum = 0.0;
  bool include_pad = false;
  void begin() { sum = 0.0; }
  void add(double v, int64_t, int64_t) { sum += v; }
  double finish(int64_t valid, int64_t padded) const {
    const int64_t n = include_pad ? padded : valid;
    return n > 0 ? sum / static_cast<double>(n) : 0.0;
  }
};

struct LpAcc {
  double sum = 0.0;
  double p = 2.0;
  void begin() { sum = 0.0; }
  void add(double v, int64_t, int64_t) {
    const double a = std::fabs(v);
    sum += p == 2.0 ? a * a : (p == 1.0 ? a : std::pow(a, p));
  }
  double finish(int64_t, int64_t) const {
    return p == 2.0 ? std::sqrt(sum) : (p == 1.0 ? sum : std::pow(sum, 1.0 / p));
  }
};

template <class T, class Acc>
struct PoolArgs {
  const WindowGeometry* g;
  const T* x;
  T* y;
  int64_t* indices;  // MaxPool's second output, or null
  bool column_major;
  int64_t planes;
  Acc proto;
};

// Writes index output for MaxAcc; other accumulators have no index.
template <class Acc>
int64_t acc_index(const Acc& a, bool column_major) {
  if constexpr (requires { a.row; }) return column_major ? a.col : a.row;
  else return -1;
}

template <class T, class Acc>
void pool_planes(const PoolArgs<T, Acc>& a, ThreadPool* pool) {
  const WindowGeometry& g = *a.g;
  const int rank = g.rank;
  std::vector<std::vector<AxisTaps>> taps;
  for (int i = 0; i < rank; ++i) taps.push_back(axis_taps(g, i));
  const int64_t in_plane = g.in_numel(), out_plane = g.out_numel();
  // Row-major and column-major strides of the input plane.
  int64_t rstride[WindowGeometry::kMaxSpatial], cstride[WindowGeometry::kMaxSpatial];
  for (int i = 0; i < rank; ++i) cstride[i] = i == 0 ? 1 : cstride[i - 1] * g.in[i - 1];
  for (int i = rank - 1; i >= 0; --i) rstride[i] = i == rank - 1 ? 1 : rstride[i + 1] * g.in[i + 1];

  parallel_for(pool, a.planes, 1, [&](int64_t begin, int64_t end) {
    Acc acc = a.proto;
    int64_t o[WindowGeometry::kMaxSpatial], k[WindowGeometry::kMaxSpatial];
    for (int64_t plane = begin; plane < end; ++plane) {
      const T* x = a.x + plane * in_plane;
      T* y = a.y + plane * out_plane;
      int64_t* idx = a.indices ? a.indices + plane * out_plane : nullptr;
      std::fill(o, o + rank, 0);
      for (int64_t j = 0; j < out_plane; ++j) {
        acc.begin();
        int64_t valid = 1, padded = 1;
        bool empty = false;
        for (int i = 0; i < rank; ++i) {
          const AxisTaps& t = taps[i][o[i]];
          valid *= t.hi - t.lo;
          padded *= t.padded;
          if (t.hi <= t.lo) empty = true;
          k[i] = t.lo;
        }
        if (rank == 1) {
          const AxisTaps& t = taps[0][o[0]];
          for (int64_t kk = t.lo; kk < t.hi; ++kk) {
            const int64_t p = t.start + kk * g.dilation[0];
            acc.add(to_compute(x[p]), p, p);
          }
        } else if (rank == 2) {
          const AxisTaps& th = taps[0][o[0]];
          const AxisTaps& tw = taps[1][o[1]];
          for (int64_t kh = th.lo; kh < th.hi; ++kh) {
            const int64_t ih = th.start + kh * g.dilation[0];
            const T* xrow = x + ih * g.in[1];
            for (int64_t kw = tw.lo; kw < tw.hi; ++kw) {
              const int64_t iw = tw.start + kw * g.dilation[1];
              acc.add(to_compute(xrow[iw]), ih * g.in[1] + iw, ih + iw * g.in[0]);
            }
          }
        } else if (!empty) {
          for (;;) {
            int64_t r = 0, c = 0;
            for (int i = 0; i < rank; ++i) {
              const int64_t p = taps[i][o[i]].start + k[i] * g.dilation[i];
              r += p * rstride[i];
              c += p * cstride[i];
            }
            acc.add(to_compute(x[r]), r, c);
            int i = rank - 1;
            for (; i >= 0; --i) {
              if (++k[i] < taps[i][o[i]].hi) break;
              k[i] = taps[i][o[i]].lo;
            }
            if (i < 0) break;
          }
        }
        y[j] = from_compute<T>(acc.finish(valid, padded));
        if (idx) {
          const int64_t spatial = acc_index(acc, a.column_major);
          idx[j] = spatial < 0 ? -1 : plane * in_plane + spatial;
        }
        for (int i = rank - 1; i >= 0; --i) {
          if (++o[i] < g.out[i]) break;
          o[i] = 0;
        }
      }
    }
  });
}

Result<WindowGeometry> pool_geometry(const KernelContext& ctx, int64_t ceil_since) {
  const Tensor& x = ctx.input(0);
  const bool ceil_mode = ctx.attrs().get_int("ceil_mode", 0) != 0 && ctx.opset() >= ceil_since;
  return make_window_geometry(ctx.attrs(), x.shape().dims().subspan(2), {}, ceil_mode);
}

Status max_pool_kernel(KernelContext& ctx) {
  IGNIS_ASSIGN_OR_RETURN(WindowGeometry g, pool_geometry(ctx, 10));
  const Tensor& x = ctx.input(0);
  const int64_t planes = x.dim(0) * x.dim(1);
  int64_t* indices = ctx.has_output(1) ? ctx.output(1).data_as<int64_t>() : nullptr;
  const bool column_major = ctx.attrs().get_int("storage_order", 0) == 1;
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return unsupported("MaxPool: bool");
    } else {
      PoolArgs<T, MaxAcc<compute_t<T>>> a{&g, x.data_as<T>(), ctx.output(0).data_as<T>(), indices, column_major, planes,
                                          {}};
      pool_planes(a, ctx.pool());
      return Status::ok();
    }
  });
}

template <class Acc>
Status float_pool(KernelContext& ctx, const WindowGeometry& g, Acc proto) {
  const Tensor& x = ctx.input(0);
  const int64_t planes = x.dim(0) * x.dim(1);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    PoolArgs<T, Acc> a{&g, x.data_as<T>(), ctx.output(0).data_as<T>(), nullptr, false, planes, proto};
    pool_planes(a, ctx.pool());
  };
  switch (x.dtype()) {
    case DType::F32: run(float{}); break;
    case DType::F64: run(double{}); break;
    case DType::F16: run(Half{}); break;
    case DType::BF16: run(BFloat16{}); break;
    default: return unsupported(str_cat("pooling: dtype ", dtype_name(x.dtype())));
  }
  return Status::ok();
}

Status average_pool_kernel(KernelContext& ctx) {
  IGNIS_ASSIGN_OR_RETURN(WindowGeometry g, pool_geometry(ctx, 10));
  AvgAcc acc;
  acc.include_pad = ctx.attrs().get_int("count_include_pad", 0) != 0;
  return float_pool(ctx, g, acc);
}

Status lp_pool_kernel(KernelContext& ctx) {
  IGNIS_ASSIGN_OR_RETURN(WindowGeometry g, pool_geometry(ctx, 18));
  LpAcc acc;
  acc.p = ctx.attrs().get_float("p", 2.0f);
  return float_pool(ctx, g, acc);
}

// Global pools: one window covering each whole (image, channel) plane.
template <int Kind>  // 0 = average, 1 = max, 2 = Lp
Status global_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t size = x.shape().numel(2, x.rank());
  const double p = ctx.attrs().get_float("p", 2.0f);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* xs = x.data_as<T>();
    T* ys = y.data_as<T>();
    parallel_for(ctx.pool(), planes, 16, [&](int64_t begin, int64_t end) {
      for (int64_t pl = begin; pl < end; ++pl) {
        const T* v = xs + pl * size;
        double r;
        if constexpr (Kind == 1) {
          using C = compute_t<T>;
          C best = size > 0 ? to_compute(v[0]) : std::numeric_limits<C>::lowest();
          for (int64_t i = 1; i < size; ++i) {
            const C e = to_compute(v[i]);
            if (e > best || best != best) best = e;
          }
          r = static_cast<double>(best);
        } else if constexpr (Kind == 0) {
          double s = 0.0;
          for (int64_t i = 0; i < size; ++i) s += static_cast<double>(to_compute(v[i]));
          r = size > 0 ? s / static_cast<double>(size) : 0.0;
        } else {
          double s = 0.0;
          for (int64_t i = 0; i < size; ++i) s += std::pow(std::fabs(static_cast<double>(to_compute(v[i]))), p);
          r = std::pow(s, 1.0 / p);
        }
        ys[pl] = from_compute<T>(r);
      }
    });
  };
  switch (x.dtype()) {
    case DType::F32: run(float{}); break;
    case DType::F64: run(double{}); break;
    case DType::F16: run(Half{}); break;
    case DType::BF16: run(BFloat16{}); break;
    default: return unsupported(str_cat("global pooling: dtype ", dtype_name(x.dtype())));
  }
  return Status::ok();
}

// Indices address the unpooled shape [N, C, (in - 1) * stride + kernel - pads...]; a larger
// output_shape keeps that block at the origin and zero-fills the rest.
Status max_unpool_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  Tensor& y = ctx.output(0);
  IGNIS_ASSIGN_OR_RETURN(WindowGeometry g,
                         make_transposed_window_geometry(ctx.attrs(), x.shape().dims().subspan(2), {}));
  Shape unpooled{x.dim(0), x.dim(1)};
  for (int i = 0; i < g.rank; ++i) unpooled.push_back(g.out[i]);
  std::memset(y.data(), 0, y.nbytes());
  const int64_t total = unpooled.numel();
  const std::vector<int64_t> ystrides = y.shape().strides();
  const int64_t* idx = ind.data_as<int64_t>();
  const size_t esize = dtype_size(x.dtype());
  const auto* src = static_cast<const unsigned char*>(x.data());
  auto* dst = static_cast<unsigned char*>(y.data());
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (idx[i] < 0 || idx[i] >= total)
      return out_of_range(str_cat("MaxUnpool: index ", idx[i], " at position ", i, " is outside the unpooled shape ",
                                  unpooled.str()));
    int64_t rem = idx[i], off = 0;
    for (int a = unpooled.rank() - 1; a >= 0; --a) {
      off += (rem % unpooled[a]) * ystrides[a];
      rem /= unpooled[a];
    }
    std::memcpy(dst + off * esize, src + i * esize, esize);
  }
  return Status::ok();
}

constexpr DTypeSet kPoolTypes{DType::F32, DType::F64, DType::F16};

}  // namespace

void register_nn_pool(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "MaxPool", .since_opset = 1,
         .types = kPoolTypes | DTypeSet{DType::I8, DType::U8}, .id = "ref/maxpool", .fn = max_pool_kernel});
  r.add({.domain = "", .op_type = "AveragePool", .since_opset = 1, .types = kPoolTypes,
         .id = "ref/averagepool", .fn = average_pool_kernel});
  r.add({.domain = "", .op_type = "LpPool", .since_opset = 1, .types = kPoolTypes,
         .id = "ref/lppool", .fn = lp_pool_kernel});
  r.add({.domain = "", .op_type = "GlobalAveragePool", .since_opset = 1, .types = kPoolTypes,
         .id = "ref/globalaveragepool", .fn = global_pool<0>});
  r.add({.domain = "", .op_type = "GlobalMaxPool", .since_opset = 1, .types = kPoolTypes,
         .id = "ref/globalmaxpool", .fn = global_pool<1>});
  r.add({.domain = "", .op_type = "GlobalLpPool", .since_opset = 1, .types = kPoolTypes,
         .id = "ref/globallppool", .fn = global_pool<2>});
  r.add({.domain = "", .op_type = "MaxUnpool", .since_opset = 9, .types = kPoolTypes,
         .id = "ref/maxunpool", .fn = max_unpool_kernel});
}

}  // namespace ignis::kernels::ref
