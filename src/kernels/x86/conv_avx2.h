// SPDX-License-Identifier: Apache-2.0
// AVX2 pieces of the x86 Conv kernel: the im2col packer that feeds the GEMM its B operand
// straight from the image, and the direct depthwise kernel. The op-level logic (geometry,
// weight prepacking, threading) is in nn_conv.cc.
//
// Files built with AVX2 flags, AVX-512 flags and none include this header. Its inline helpers
// and the packers' tap and panel types therefore sit in unnamed namespaces (see
// gemm_blocked.h): each file compiles its own copy with its own flags, so the linker cannot
// hand an AVX-512 copy to code that must run on an AVX2-only CPU. ConvGeometry2d and
// Im2colSource appear in the signatures of functions defined in other files, so they keep
// external linkage; they are aggregates whose only member functions are the implicit ones.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/conv_geometry.h"
#include "kernels/kernel.h"
#include "kernels/x86/gemm.h"

namespace ignis::kernels::x86 {

// 2-D sliding-window geometry of one convolution (1-D convolutions use ih = oh = kh = 1).
struct ConvGeometry2d {
  int64_t ih = 0, iw = 0, oh = 0, ow = 0;
  int64_t kh = 0, kw = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t ph = 0, pw = 0;  // padding before the first row / column
};

namespace {

// The 2-D form of a 1-D or 2-D window geometry.
inline ConvGeometry2d as_2d(const WindowGeometry& w) {
  ConvGeometry2d g;
  if (w.rank == 1) {
    g.ih = g.oh = g.kh = 1;
    g.iw = w.in[0];
    g.ow = w.out[0];
    g.kw = w.kernel[0];
    g.sw = w.stride[0];
    g.dw = w.dilation[0];
    g.pw = w.pad_begin[0];
    return g;
  }
  g.ih = w.in[0];
  g.iw = w.in[1];
  g.oh = w.out[0];
  g.ow = w.out[1];
  g.kh = w.kernel[0];
  g.kw = w.kernel[1];
  g.sh = w.stride[0];
  g.sw = w.stride[1];
  g.dh = w.dilation[0];
  g.dw = w.dilation[1];
  g.ph = w.pad_begin[0];
  g.pw = w.pad_begin[1];
  return g;
}

// Whether g was made for these input and kernel extents.
inline bool same_spatial(const WindowGeometry& g, std::span<const int64_t> in, std::span<const int64_t> kernel) {
  if (g.rank == 0 || static_cast<size_t>(g.rank) != in.size() || in.size() != kernel.size()) return false;
  for (int i = 0; i < g.rank; ++i)
    if (g.in[i] != in[static_cast<size_t>(i)] || g.kernel[i] != kernel[static_cast<size_t>(i)]) return false;
  return true;
}

// The geometry of a convolution in the plan's shapes (KernelInit::input_shapes, x at input 0
// and the weights at `w_input`), or an empty one (rank 0) when they are not given. Kernels
// keep it to serve every run of those spatial shapes without parsing the attributes again (a
// tenth of a small model's run).
inline WindowGeometry plan_window_geometry(const KernelInit& init, size_t w_input) {
  const auto& shapes = init.input_shapes;
  if (shapes.size() <= w_input || shapes[0].rank() < 3 || shapes[0].rank() != shapes[w_input].rank()) return {};
  auto wg = make_window_geometry(init.attrs, shapes[0].dims().subspan(2), shapes[w_input].dims().subspan(2), false);
  return wg ? *wg : WindowGeometry{};
}

// `planned` when it was made for these extents, else the geometry from the attributes.
inline Result<WindowGeometry> run_window_geometry(const WindowGeometry& planned, const AttrMap& attrs,
                                                  std::span<const int64_t> x_spatial,
                                                  std::span<const int64_t> w_spatial) {
  if (same_spatial(planned, x_spatial, w_spatial)) return planned;
  return make_window_geometry(attrs, x_spatial, w_spatial, false);
}
}  // namespace

// B operand of a convolution as GEMM: rows are (input channel, ky, kx), columns are output
// positions; `x` points at the first input channel of the group, planes of ih * iw floats.
struct Im2colSource {
  const float* x = nullptr;
  ConvGeometry2d g;
};

// GemmPackFn for an Im2colSource: writes the packed B block without materializing im2col.
void conv_f32_pack_im2col(const void* source, const GemmBackend& backend, int64_t p0, int64_t kc, int64_t j0,
                          int64_t nc, float* dst);

// GemmPackFn for the A operand of the transposed formulation, C^T = im2col^T * W^T: output
// positions [i0, i0 + mc) as rows, packed in panels of the backend's mr rows: a multiple of 8
// (the AVX-512 backend) or 4 (AVX2: packed 8 at a time and split). Same data as
// conv_f32_pack_im2col, narrower panels.
void conv_f32_pack_im2col_rows(const void* source, const GemmBackend& backend, int64_t p0, int64_t kc, int64_t i0,
                               int64_t mc, float* dst);

// conv_f32_pack_im2col for panels of a multiple of 16 columns, in 16-column groups; it
// runs for the AVX-512 backend. Requires AVX-512F and the 32-bit gather offsets
// (im2col_gather_fits).
void conv_f32_pack_im2col_avx512(const Im2colSource& s, int64_t nr, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                                 float* dst);

// ---- pieces shared by the packers ----

namespace {

inline int64_t im2col_floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Whether every input offset a packer gathers, relative to a channel plane, fits 32 bits
// (lane rows up to oh + 16 and columns up to ow + 16, shifted by a kernel's reach).
inline bool im2col_gather_fits(const ConvGeometry2d& g) {
  const int64_t reach = (g.oh + 16) * g.sh * g.iw + (g.ow + 16) * g.sw + (g.kh * g.dh + g.ph) * g.iw +
                        g.kw * g.dw + g.pw;
  return reach < (int64_t{1} << 30);
}

// One row of the im2col matrix: input channel c, kernel tap (ky, kx). Rows are visited in
// order, so the packers step taps instead of dividing the row index (integer divisions were
// most of the packing time on small images).
struct Im2colTap {
  int64_t c = 0, ky = 0, kx = 0;

  Im2colTap(const ConvGeometry2d& g, int64_t r) : c(r / (g.kh * g.kw)), ky((r / g.kw) % g.kh), kx(r % g.kw) {}
  void next(const ConvGeometry2d& g) {
    if (++kx < g.kw) return;
    kx = 0;
    if (++ky < g.kh) return;
    ky = 0;
    ++c;
  }
};

// What one im2col row reads: output (oy, ox) reads input row oy * sh + iy0 and column
// ox * sw + off of plane `xc`; output columns [lo, hi) and output rows [ylo, yhi) read
// inside the input.
struct Im2colTapSource {
  const float* xc = nullptr;
  int64_t iy0 = 0, off = 0, lo = 0, hi = 0, ylo = 0, yhi = 0;
  int64_t base = 0;  // offset of output (0, 0)'s input element from s.x (may be outside the image)

  Im2colTapSource() = default;
  Im2colTapSource(const Im2colSource& s, const Im2colTap& t) {
    const ConvGeometry2d& g = s.g;
    xc = s.x + t.c * g.ih * g.iw;
    iy0 = t.ky * g.dh - g.ph;
    off = t.kx * g.dw - g.pw;
    lo = std::min(g.ow, std::max<int64_t>(0, -im2col_floor_div(off, g.sw)));
    hi = std::max(lo, std::min(g.ow, im2col_floor_div(g.iw - 1 - off, g.sw) + 1));
    ylo = std::min(g.oh, std::max<int64_t>(0, -im2col_floor_div(iy0, g.sh)));
    yhi = std::max(ylo, std::min(g.oh, im2col_floor_div(g.ih - 1 - iy0, g.sh) + 1));
    base = t.c * g.ih * g.iw + iy0 * g.iw + off;
  }
};

// One panel of a packed im2col block, summarized from its groups of `width` output positions
// (each group: lane 0's output row y and column x, and its real lanes): whether every group is
// whole and inside one output row (`simple`), and then the columns and rows the panel covers.
struct Im2colPanel {
  bool simple = true;
  int64_t xmin = 0, xmax = 0, ymin = 0, ymax = 0;

  template <class Group>
  Im2colPanel(const Group* groups, int64_t count, int64_t width, int64_t ow)
      : xmin(ow), ymin(groups[0].y), ymax(groups[count - 1].y) {
    for (int64_t v = 0; v < count; ++v) {
      simple = simple && groups[v].lanes == width && groups[v].x + width <= ow;
      xmin = std::min(xmin, groups[v].x);
      xmax = std::max(xmax, groups[v].x + width);
    }
  }
  Im2colPanel() = default;

  // Whether every group of the panel reads inside the input for tap t: then each group is
  // one plain load.
  bool inside(const Im2colTapSource& t) const {
    return simple && xmin >= t.lo && xmax <= t.hi && ymin >= t.ylo && ymax < t.yhi;
  }
};

}  // namespace

// Whether the direct depthwise kernel handles this geometry: kernel up to 7x7, strides 1
// or 2, no dilation.
bool conv_f32_depthwise_supported(const ConvGeometry2d& g);

// Floats of scratch one call of conv_f32_depthwise_plane needs.
size_t conv_f32_depthwise_scratch(const ConvGeometry2d& g);

// One channel of a depthwise convolution:
//   y[oh x ow] = act(sum_k w[k] * x[window] + bias + residual)
// with `residual` (a plane laid out like y) optional; `e` supplies the activation (its bias
// and residual fields are ignored). Requires AVX2 + FMA.
void conv_f32_depthwise_plane(const ConvGeometry2d& g, const float* x, const float* w, float bias,
                              const float* residual, const GemmEpilogue& e, float* y, float* scratch);

// Planes of a depthwise convolution of n images, c input channels and m output channels (m a
// multiple of c, mg = m / c outputs per input channel): output plane t = image * m + o is
//   y[t] = act(sum_k w[o][k] * x[image * c + o / mg][window] + bias[o] + residual[t])
// with planes of oh x ow (y, residual) and ih x iw (x) floats, w [m, kh * kw]. bias and
// residual may be null; residual may alias y. `act` supplies the activation (its bias and
// residual fields are ignored).
struct DepthwisePlanes {
  const float* x = nullptr;
  const float* w = nullptr;
  const float* bias = nullptr;
  const float* residual = nullptr;
  float* y = nullptr;
  int64_t c = 0, m = 0, mg = 1;
  const GemmEpilogue* act = nullptr;
};

// Whether a depthwise geometry is a per-channel scale (1x1 window, unit strides, no padding),
// and planes [t0, t1) of such a convolution (planes of `plane` floats), in one streaming
// pass (conv_depthwise_scale_avx2.cc). Requires AVX2 + FMA.
bool conv_f32_depthwise_is_scale(const ConvGeometry2d& g);
void conv_f32_depthwise_scale_avx2(const DepthwisePlanes& d, int64_t plane, int64_t t0, int64_t t1);

// Channels in lanes on AVX2, for small planes (conv_depthwise_lanes_avx2.cc): the convolution
// above in work units of 8 output channels of one image (unit u = image * ceil(m / 8) + o / 8;
// the last unit of an image takes the m % 8 remaining channels), units [u0, u1). Whether it
// beats conv_f32_depthwise_plane for a geometry is conv_f32_depthwise_avx2_lanes; scratch of
// conv_f32_depthwise_avx2_lanes_scratch(g) floats (a multiple of 8). Geometry as accepted by
// conv_f32_depthwise_supported. Requires AVX2 + FMA.
bool conv_f32_depthwise_avx2_lanes(const ConvGeometry2d& g);
size_t conv_f32_depthwise_avx2_lanes_scratch(const ConvGeometry2d& g);
void conv_f32_depthwise_lanes_avx2(const ConvGeometry2d& g, const DepthwisePlanes& p, int64_t u0, int64_t u1,
                                   float* scratch);

}  // namespace ignis::kernels::x86
