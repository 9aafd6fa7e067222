// SPDX-License-Identifier: Apache-2.0
// Reference Conv and ConvTranspose (1-D, 2-D, N-D; groups, dilations, strides, pads).
//
// Conv is im2col + GEMM: the output positions of one (image, group) are cut into column
// chunks sized so that the chunk's im2col buffer (Cg*K rows x chunk columns) stays around
// 512 KiB; every (image, group, chunk) is an independent task for the pool, writing its own
// columns of Y = W_g [Mg x Cg*K] * cols [Cg*K x chunk]. 1x1 stride-1 unpadded convolutions
// skip im2col and multiply X directly. Depthwise 2-D convolutions (one input channel per
// group) run a direct sliding loop instead: their GEMM would have a single row.
// ConvTranspose is GEMM + col2im: cols [Mg*K x chunk] = W_g^T * X chunk, then each column
// is scattered (added) into the output window it covers.
// float16 runs through float32 staging buffers.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "core/conv_geometry.h"
#include "core/strings.h"
#include "kernels/ref/nn_internal.h"

namespace ignis::kernels::ref {

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// Output positions o in [0, out) with 0 <= o * stride + offset < in, as [lo, hi).
void valid_range(int64_t offset, int64_t stride, int64_t in, int64_t out, int64_t& lo, int64_t& hi) {
  lo = std::max<int64_t>(0, ceil_div(-offset, stride));
  hi = std::min<int64_t>(out, floor_div(in - 1 - offset, stride) + 1);
  if (hi < lo) hi = lo;
}

struct ConvShape {
  int64_t n = 0, c = 0, m = 0, group = 1;
  WindowGeometry g;
  int64_t cg() const { return c / group; }
  int64_t mg() const { return m / group; }
};

// ---- im2col ---------------------------------------------------------------------------

// Geometry seen as 2-D: 1-D convolutions get a unit leading axis.
struct Geo2 {
  int64_t ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw;
};

Geo2 as_2d(const WindowGeometry& g) {
  if (g.rank == 1)
    return {1, g.in[0], 1, g.out[0], 1, g.kernel[0], 1, g.stride[0], 1, g.dilation[0], 0, g.pad_begin[0]};
  return {g.in[0],     g.in[1],     g.out[0],    g.out[1],    g.kernel[0],    g.kernel[1],
          g.stride[0], g.stride[1], g.dilation[0], g.dilation[1], g.pad_begin[0], g.pad_begin[1]};
}

// cols[r * ncols + (j - j0)] for rows r = (channel, kh, kw) and output positions j in [j0, j1).
template <class T>
void im2col_2d(const Geo2& g, int64_t channels, const T* x, int64_t j0, int64_t j1, T* cols) {
  const int64_t ncols = j1 - j0;
  T* dst = cols;
  for (int64_t c = 0; c < channels; ++c) {
    const T* xc = x + c * g.ih * g.iw;
    for (int64_t kh = 0; kh < g.kh; ++kh) {
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        const int64_t off = kw * g.dw - g.pw;
        int64_t lo, hi;
        valid_range(off, g.sw, g.iw, g.ow, lo, hi);
        int64_t j = j0;
        T* d = dst;
        while (j < j1) {
          const int64_t oh = j / g.ow, ow0 = j % g.ow;
          const int64_t seg = std::min(g.ow - ow0, j1 - j);
          const int64_t ih = oh * g.sh - g.ph + kh * g.dh;
          if (ih < 0 || ih >= g.ih) {
            std::fill(d, d + seg, T(0));
          } else {
            const T* xrow = xc + ih * g.iw;
            const int64_t a = std::clamp(lo, ow0, ow0 + seg), b = std::clamp(hi, a, ow0 + seg);
            std::fill(d, d + (a - ow0), T(0));
            if (b > a) {
              if (g.sw == 1) {
                std::memcpy(d + (a - ow0), xrow + a + off, static_cast<size_t>(b - a) * sizeof(T));
              } else {
                for (int64_t ow = a; ow < b; ++ow) d[ow - ow0] = xrow[ow * g.sw + off];
              }
            }
            std::fill(d + (b - ow0), d + seg, T(0));
          }
          d += seg;
          j += seg;
        }
        dst += ncols;
      }
    }
  }
}

// Decomposes flat index j over `dims` (row-major) into idx.
void unravel(int64_t j, const int64_t* dims, int rank, int64_t* idx) {
  for (int i = rank - 1; i >= 0; --i) {
    idx[i] = j % dims[i];
    j /= dims[i];
  }
}

// N-D im2col (3-D and up), one element at a time.
template <class T>
void im2col_nd(const WindowGeometry& g, int64_t channels, const T* x, int64_t j0, int64_t j1, T* cols) {
  const int rank = g.rank;
  const int64_t ncols = j1 - j0, kn = g.kernel_numel(), in_numel = g.in_numel();
  int64_t k[WindowGeometry::kMaxSpatial], o[WindowGeometry::kMaxSpatial];
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t kk = 0; kk < kn; ++kk) {
      unravel(kk, g.kernel, rank, k);
      T* d = cols + (c * kn + kk) * ncols;
      unravel(j0, g.out, rank, o);
      for (int64_t j = j0; j < j1; ++j) {
        int64_t off = 0;
        bool inside = true;
        for (int i = 0; i < rank; ++i) {
          const int64_t p = o[i] * g.stride[i] - g.pad_begin[i] + k[i] * g.dilation[i];
          if (p < 0 || p >= g.in[i]) inside = false;
          off = off * g.in[i] + p;
        }
        d[j - j0] = inside ? x[c * in_numel + off] : T(0);
        for (int i = rank - 1; i >= 0; --i) {
          if (++o[i] < g.out[i]) break;
          o[i] = 0;
        }
      }
    }
  }
}

// ---- Conv -------------------------------------------------------------------------------

template <class T>
void conv_depthwise_2d(const ConvShape& s, const T* x, const T* w, const T* bias, T* y, ThreadPool* pool) {
  const Geo2 g = as_2d(s.g);
  const int64_t mult = s.m / s.c;  // output channels per input channel
  const int64_t in_plane = g.ih * g.iw, out_plane = g.oh * g.ow, kn = g.kh * g.kw;
  parallel_for(pool, s.n * s.m, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t n = t / s.m, m = t % s.m;
      const T* xin = x + (n * s.c + m / mult) * in_plane;
      const T* wk = w + m * kn;
      T* yout = y + t * out_plane;
      const T b = bias ? bias[m] : T(0);
      for (int64_t oh = 0; oh < g.oh; ++oh) {
        T* row = yout + oh * g.ow;
        std::fill(row, row + g.ow, b);
        for (int64_t kh = 0; kh < g.kh; ++kh) {
          const int64_t ih = oh * g.sh - g.ph + kh * g.dh;
          if (ih < 0 || ih >= g.ih) continue;
          const T* xrow = xin + ih * g.iw;
          for (int64_t kw = 0; kw < g.kw; ++kw) {
            const T wv = wk[kh * g.kw + kw];
            const int64_t off = kw * g.dw - g.pw;
            int64_t lo, hi;
            valid_range(off, g.sw, g.iw, g.ow, lo, hi);
            if (g.sw == 1) {
              for (int64_t ow = lo; ow < hi; ++ow) row[ow] += wv * xrow[ow + off];
            } else {
              for (int64_t ow = lo; ow < hi; ++ow) row[ow] += wv * xrow[ow * g.sw + off];
            }
          }
        }
      }
    }
  });
}

template <class T>
void conv_gemm(const ConvShape& s, const T* x, const T* w, const T* bias, T* y, ThreadPool* pool) {
  const WindowGeometry& g = s.g;
  const int64_t cg = s.cg(), mg = s.mg();
  const int64_t kdim = cg * g.kernel_numel();  // GEMM depth
  const int64_t out_plane = g.out_numel(), in_plane = g.in_numel();
  const bool pointwise = g.is_pointwise();
  // Column chunk: ~128 Ki elements of im2col buffer, a multiple of 8, at least 64 columns.
  int64_t chunk = std::max<int64_t>(64, (int64_t{128} << 10) / std::max<int64_t>(kdim, 1)) / 8 * 8;
  chunk = std::max<int64_t>(1, std::min(chunk, out_plane));
  const int64_t chunks = (out_plane + chunk - 1) / chunk;
  const int64_t tasks = s.n * s.group * chunks;
  const int threads = pool ? pool->threads() : 1;
  // Few tasks (a single large chunk): let the GEMM split instead.
  ThreadPool* inner = tasks >= threads ? nullptr : pool;
  auto run = [&](int64_t begin, int64_t end) {
    std::unique_ptr<T[]> buf;
    if (!pointwise) buf.reset(new T[static_cast<size_t>(kdim * chunk)]);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t ci = t % chunks, ng = t / chunks;
      const int64_t n = ng / s.group, grp = ng % s.group;
      const int64_t j0 = ci * chunk, j1 = std::min(out_plane, j0 + chunk), cols = j1 - j0;
      const T* xg = x + (n * s.c + grp * cg) * in_plane;
      const T* wg = w + grp * mg * kdim;
      T* yg = y + (n * s.m + grp * mg) * out_plane + j0;
      const T* b;
      int64_t ldb;
      if (pointwise) {
        b = xg + j0;
        ldb = out_plane;
      } else {
        if (g.rank <= 2) im2col_2d(as_2d(g), cg, xg, j0, j1, buf.get());
        else im2col_nd(g, cg, xg, j0, j1, buf.get());
        b = buf.get();
        ldb = cols;
      }
      gemm<T>(false, false, mg, cols, kdim, T(1), wg, kdim, b, ldb, T(0), yg, out_plane, inner);
      if (bias) {
        for (int64_t mm = 0; mm < mg; ++mm) {
          const T bv = bias[grp * mg + mm];
          T* row = yg + mm * out_plane;
          for (int64_t j = 0; j < cols; ++j) row[j] += bv;
        }
      }
    }
  };
  if (inner) run(0, tasks);
  else parallel_for(pool, tasks, 1, run);
}

template <class T>
void conv_compute(const ConvShape& s, const T* x, const T* w, const T* bias, T* y, ThreadPool* pool) {
  if (s.n == 0 || s.m == 0 || s.g.out_numel() == 0) return;
  if (s.c == 0 || s.g.kernel_numel() == 0) {
    // No input channels: the output is the bias.
    const int64_t plane = s.g.out_numel();
    for (int64_t t = 0; t < s.n * s.m; ++t) std::fill(y + t * plane, y + (t + 1) * plane, bias ? bias[t % s.m] : T(0));
    return;
  }
  if (s.group == s.c && s.g.rank <= 2) return conv_depthwise_2d(s, x, w, bias, y, pool);
  conv_gemm(s, x, w, bias, y, pool);
}

Status conv_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  Tensor& y = ctx.output(0);
  ConvShape s;
  s.n = x.dim(0);
  s.c = x.dim(1);
  s.m = w.dim(0);
  s.group = ctx.attrs().get_int("group", 1);
  IGNIS_ASSIGN_OR_RETURN(s.g, make_window_geometry(ctx.attrs(), x.shape().dims().subspan(2),
                                                   w.shape().dims().subspan(2), false));
  const bool has_bias = ctx.has_input(2);
  switch (x.dtype()) {
    case DType::F32:
      conv_compute(s, x.data_as<float>(), w.data_as<float>(), has_bias ? ctx.input(2).data_as<float>() : nullptr,
                   y.data_as<float>(), ctx.pool());
      break;
    case DType::F64:
      conv_compute(s, x.data_as<double>(), w.data_as<double>(), has_bias ? ctx.input(2).data_as<double>() : nullptr,
                   y.data_as<double>(), ctx.pool());
      break;
    case DType::F16: {
      const std::vector<float> xf = to_float_vector(x), wf = to_float_vector(w);
      std::vector<float> bf;
      if (has_bias) bf = to_float_vector(ctx.input(2));
      std::vector<float> yf(static_cast<size_t>(y.numel()));
      conv_compute(s, xf.data(), wf.data(), has_bias ? bf.data() : nullptr, yf.data(), ctx.pool());
      store_float_vector(yf, y);
      break;
    }
    default:
      return unsupported(str_cat("Conv: dtype ", dtype_name(x.dtype())));
  }
  return Status::ok();
}

// ---- ConvTranspose ------------------------------------------------------------------------

// Adds cols[r * ncols + (j - j0)] into y for rows r = (channel, kernel offset) and input
// positions j in [j0, j1): input position i writes output i * stride - pad + k * dilation.
template <class T>
void col2im_nd(const WindowGeometry& g, int64_t channels, const T* cols, int64_t j0, int64_t j1, T* y) {
  const int rank = g.rank;
  const int64_t ncols = j1 - j0, kn = g.kernel_numel(), out_numel = g.out_numel();
  int64_t k[WindowGeometry::kMaxSpatial], p[WindowGeometry::kMaxSpatial];
  for (int64_t c = 0; c < channels; ++c) {
    T* yc = y + c * out_numel;
    for (int64_t kk = 0; kk < kn; ++kk) {
      unravel(kk, g.kernel, rank, k);
      const T* src = cols + (c * kn + kk) * ncols;
      unravel(j0, g.in, rank, p);
      for (int64_t j = j0; j < j1; ++j) {
        int64_t off = 0;
        bool inside = true;
        for (int i = 0; i < rank; ++i) {
          const int64_t o = p[i] * g.stride[i] - g.pad_begin[i] + k[i] * g.dilation[i];
          if (o < 0 || o >= g.out[i]) inside = false;
          off = off * g.out[i] + o;
        }
        if (inside) yc[off] += src[j - j0];
        for (int i = rank - 1; i >= 0; --i) {
          if (++p[i] < g.in[i]) break;
          p[i] = 0;
        }
      }
    }
  }
}

template <class T>
void conv_transpose_compute(const ConvShape& s, const T* x, const T* w, const T* bias, T* y, ThreadPool* pool) {
  const WindowGeometry& g = s.g;
  const int64_t cg = s.cg(), mg = s.mg();
  const int64_t rows = mg * g.kernel_numel();  // GEMM rows: (output channel, kernel offset)
  const int64_t in_plane = g.in_numel(), out_plane = g.out_numel();
  for (int64_t t = 0; t < s.n * s.m; ++t)
    std::fill(y + t * out_plane, y + (t + 1) * out_plane, bias ? bias[t % s.m] : T(0));
  if (s.n == 0 || rows == 0 || in_plane == 0 || out_plane == 0) return;
  int64_t chunk = std::max<int64_t>(64, (int64_t{128} << 10) / rows) / 8 * 8;
  chunk = std::max<int64_t>(1, std::min(chunk, in_plane));
  const int64_t tasks = s.n * s.group;
  const int threads = pool ? pool->threads() : 1;
  ThreadPool* inner = tasks >= threads ? nullptr : pool;
  auto run = [&](int64_t begin, int64_t end) {
    std::unique_ptr<T[]> buf(new T[static_cast<size_t>(rows * chunk)]);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t n = t / s.group, grp = t % s.group;
      const T* xg = x + (n * s.c + grp * cg) * in_plane;
      const T* wg = w + grp * cg * rows;  // W is [C, Mg, k...]: group grp's rows are contiguous
      T* yg = y + (n * s.m + grp * mg) * out_plane;
      for (int64_t j0 = 0; j0 < in_plane; j0 += chunk) {
        const int64_t j1 = std::min(in_plane, j0 + chunk), cols = j1 - j0;
        gemm<T>(true, false, rows, cols, cg, T(1), wg, rows, xg + j0, in_plane, T(0), buf.get(), cols, inner);
        col2im_nd(g, mg, buf.get(), j0, j1, yg);
      }
    }
  };
  if (inner) run(0, tasks);
  else parallel_for(pool, tasks, 1, run);
}

Status conv_transpose_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  Tensor& y = ctx.output(0);
  ConvShape s;
  s.n = x.dim(0);
  s.c = x.dim(1);
  s.group = ctx.attrs().get_int("group", 1);
  s.m = w.dim(1) * s.group;
  IGNIS_ASSIGN_OR_RETURN(s.g, make_transposed_window_geometry(ctx.attrs(), x.shape().dims().subspan(2),
                                                              w.shape().dims().subspan(2)));
  const bool has_bias = ctx.has_input(2);
  switch (x.dtype()) {
    case DType::F32:
      conv_transpose_compute(s, x.data_as<float>(), w.data_as<float>(),
                             has_bias ? ctx.input(2).data_as<float>() : nullptr, y.data_as<float>(), ctx.pool());
      break;
    case DType::F64:
      conv_transpose_compute(s, x.data_as<double>(), w.data_as<double>(),
                             has_bias ? ctx.input(2).data_as<double>() : nullptr, y.data_as<double>(), ctx.pool());
      break;
    case DType::F16: {
      const std::vector<float> xf = to_float_vector(x), wf = to_float_vector(w);
      std::vector<float> bf;
      if (has_bias) bf = to_float_vector(ctx.input(2));
      std::vector<float> yf(static_cast<size_t>(y.numel()));
      conv_transpose_compute(s, xf.data(), wf.data(), has_bias ? bf.data() : nullptr, yf.data(), ctx.pool());
      store_float_vector(yf, y);
      break;
    }
    default:
      return unsupported(str_cat("ConvTranspose: dtype ", dtype_name(x.dtype())));
  }
  return Status::ok();
}

constexpr DTypeSet kConvTypes{DType::F32, DType::F64, DType::F16};

}  // namespace

void register_nn_conv(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "Conv", .since_opset = 1, .types = kConvTypes,
         .id = "ref/conv", .fn = conv_kernel});
  r.add({.domain = "", .op_type = "ConvTranspose", .since_opset = 1, .types = kConvTypes,
         .id = "ref/convtranspose", .fn = conv_transpose_kernel});
}

}  // namespace ignis::kernels::ref
