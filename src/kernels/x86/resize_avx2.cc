// SPDX-License-Identifier: Apache-2.0
// AVX2 Resize and Upsample (float32, 4-D NCHW, resizing H and W only): nearest and linear;
// and the same over the blocked channel layout [N, CB, H, W, block] (run_blocked).
//
// Each run takes the reference kernel's coordinate math (core/resize_geometry.h) once per
// output column and once per output row, into tables in scratch: the source column(s) and
// weights of every output column, the source row(s) and weights of every output row. Along W,
// 8 outputs at a time pick their source values: when the 8 source columns of a tap lie in
// one window of 8 input floats (always when upsampling, as every model here does), one
// unaligned load and a lane permute (vpermps) pick them, otherwise a gather does.
//
// Nearest stores each picked vector to every output row with the same source row (both rows
// of a pair when upsampling by 2). Linear, when the output is at least as
// tall as the input, interpolates along W first, each input row it needs into one of two row
// buffers keyed by source row (the source rows grow with the output row, so each input row
// is interpolated once per plane), then blends the two buffered rows of each output row;
// when the output is shorter, it blends two input rows first and interpolates the blend.
// Rows of all planes are split over the threads as contiguous (plane, row) ranges.
//
// The float sums differ from the reference's double ones by rounding only; a tap of weight 0
// contributes nothing (not 0 * inf = NaN), as in the reference. Other ranks, resized N or C
// axes, cubic mode, tf_crop_and_resize and antialiased downscaling (more than two taps per
// axis) go to the reference kernel.
#include "kernels/x86/resize_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "core/resize_geometry.h"
#include "kernels/ref/nn_resize.h"
#include "kernels/x86/simd_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// One tap of `out` outputs in blocks of 8: per block, `base` is the first input column of
// the 8-float window that holds the block's source columns, with `index` relative to it
// (picked by a permute), or -1 with `index` absolute (picked by a gather). Lanes past `out`
// repeat a valid index.
struct ColumnPick {
  int32_t* index = nullptr;  // round_up(out, 8)
  int32_t* base = nullptr;   // out / 8 rounded up
};

void build_pick(const int64_t* src, int64_t out, int64_t in, ColumnPick& pick) {
  for (int64_t b = 0; b * 8 < out; ++b) {
    const int64_t o0 = b * 8, n = std::min<int64_t>(8, out - o0);
    int64_t lo = src[o0], hi = src[o0];
    for (int64_t j = 1; j < n; ++j) {
      lo = std::min(lo, src[o0 + j]);
      hi = std::max(hi, src[o0 + j]);
    }
    const bool window = in >= 8 && hi - lo <= 7;
    const int64_t base = window ? std::min(lo, in - 8) : 0;
    pick.base[b] = window ? static_cast<int32_t>(base) : -1;
    for (int64_t j = 0; j < 8; ++j) pick.index[o0 + j] = static_cast<int32_t>(src[o0 + std::min(j, n - 1)] - base);
  }
}

inline __m256 pick8(const float* src, const ColumnPick& pick, int64_t b) {
  const __m256i index = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pick.index + b * 8));
  const int32_t base = pick.base[b];
  return base >= 0 ? _mm256_permutevar8x32_ps(_mm256_loadu_ps(src + base), index) : _mm256_i32gather_ps(src, index, 4);
}

// dst[c * ld + o] = src[source column of o] for o < out and copies c: one pick stored to
// every output row with the same source row.
void pick_rows(const float* src, const ColumnPick& pick, int64_t out, float* dst, int64_t copies, int64_t ld) {
  int64_t b = 0;
  for (; b * 8 + 8 <= out; ++b) {
    const __m256 v = pick8(src, pick, b);
    for (int64_t c = 0; c < copies; ++c) _mm256_storeu_ps(dst + c * ld + b * 8, v);
  }
  if (b * 8 < out) {
    const __m256 v = pick8(src, pick, b);
    const __m256i mask = lane_mask(static_cast<int>(out - b * 8));
    for (int64_t c = 0; c < copies; ++c) _mm256_maskstore_ps(dst + c * ld + b * 8, mask, v);
  }
}

// The two taps of linear interpolation along W, weights padded with zeros.
struct ColumnTaps {
  ColumnPick tap[2];
  float* weight[2] = {};
};

// w * v, or 0 where w is 0.
inline __m256 weighted(__m256 w, __m256 v) {
  return _mm256_and_ps(_mm256_mul_ps(w, v), _mm256_cmp_ps(w, _mm256_setzero_ps(), _CMP_NEQ_UQ));
}

inline __m256 interpolate8(const float* src, const ColumnTaps& t, int64_t b) {
  const __m256 v0 = weighted(_mm256_loadu_ps(t.weight[0] + b * 8), pick8(src, t.tap[0], b));
  return _mm256_add_ps(v0, weighted(_mm256_loadu_ps(t.weight[1] + b * 8), pick8(src, t.tap[1], b)));
}

void interpolate_row(const float* src, const ColumnTaps& t, int64_t out, float* dst) {
  int64_t b = 0;
  for (; b * 8 + 8 <= out; ++b) _mm256_storeu_ps(dst + b * 8, interpolate8(src, t, b));
  if (b * 8 < out) _mm256_maskstore_ps(dst + b * 8, lane_mask(static_cast<int>(out - b * 8)), interpolate8(src, t, b));
}

// dst = wa * a + wb * b over n floats, a tap of weight 0 left out.
void blend_rows(const float* a, float wa, const float* b, float wb, int64_t n, float* dst) {
  if (wa == 0.0f && wb == 0.0f) {
    std::fill(dst, dst + n, 0.0f);
    return;
  }
  if (wa == 0.0f) {
    std::swap(a, b);
    std::swap(wa, wb);
  }
  const __m256 va = _mm256_set1_ps(wa), vb = _mm256_set1_ps(wb);
  int64_t i = 0;
  if (wb == 0.0f) {
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_mul_ps(va, _mm256_loadu_ps(a + i)));
    for (; i < n; ++i) dst[i] = wa * a[i];
    return;
  }
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_fmadd_ps(vb, _mm256_loadu_ps(b + i), _mm256_mul_ps(va, _mm256_loadu_ps(a + i))));
  for (; i < n; ++i) dst[i] = wb * b[i] + wa * a[i];
}

// Scratch carved into 64-byte aligned pieces.
class Carver {
 public:
  explicit Carver(void* base) : next_(static_cast<char*>(base)) {}
  template <class T>
  T* take(int64_t count) {
    T* p = reinterpret_cast<T*>(next_);
    next_ += round_up(count * static_cast<int64_t>(sizeof(T)), 64);
    return p;
  }

 private:
  char* next_;
};
int64_t carved_bytes(int64_t count, size_t size) { return round_up(count * static_cast<int64_t>(size), 64); }

struct Plane {
  int64_t planes = 0, ih = 0, iw = 0, oh = 0, ow = 0;
};

class ResizeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, bool is_upsample) {
    auto k = std::make_unique<ResizeKernel>();
    k->is_upsample_ = is_upsample;
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("", is_upsample ? "Upsample" : "Resize", init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() != 4 && x.rank() != 5) return reference_->run(ctx);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return Status::ok();
    IGNIS_ASSIGN_OR_RETURN(const ResizeParams p, ref::resize_params_of(ctx, is_upsample_));
    if (!resize_axis_is_identity(p, 0, x.dim(0)) || !resize_axis_is_identity(p, 1, x.dim(1)) ||
        (x.rank() == 5 && !resize_axis_is_identity(p, 4, x.dim(4))) || p.mode == ResizeMode::Cubic ||
        p.coord == ResizeCoord::TfCropAndResize)
      return reference_->run(ctx);
    const Plane g{x.dim(0) * x.dim(1), x.dim(2), x.dim(3), y.dim(2), y.dim(3)};
    if (x.rank() == 5) return run_blocked(ctx, p, g, x.dim(4), x.data_as<float>(), y.data_as<float>());
    if (p.mode == ResizeMode::Nearest) {
      run_nearest(ctx, p, g, x.data_as<float>(), y.data_as<float>());
      return Status::ok();
    }
    const bool identity_h = resize_axis_is_identity(p, 2, g.ih), identity_w = resize_axis_is_identity(p, 3, g.iw);
    ResizeTaps th, tw;
    if (!identity_h) th = resize_axis_taps(p, 2, g.ih);
    if (!identity_w) tw = resize_axis_taps(p, 3, g.iw);
    if ((!identity_h && th.n != 2) || (!identity_w && tw.n != 2)) return reference_->run(ctx);
    run_linear(ctx, g, identity_h ? nullptr : &th, identity_w ? nullptr : &tw, x.data_as<float>(), y.data_as<float>());
    return Status::ok();
  }

 private:
  // Source index of every output position along `axis` (identity axes map o to o).
  static void nearest_sources(const ResizeParams& p, int axis, int64_t in, int64_t out, int64_t* src) {
    const bool identity = resize_axis_is_identity(p, axis, in);
    for (int64_t o = 0; o < out; ++o) {
      bool outside;
      src[o] = identity ? o
                        : std::clamp<int64_t>(
                              resize_nearest_index(p, axis, resize_source_coord(p, axis, in, o, outside)), 0, in - 1);
    }
  }

  void run_nearest(KernelContext& ctx, const ResizeParams& p, const Plane& g, const float* x, float* y) const {
    const int64_t ow_pad = round_up(g.ow, 8);
    auto* scratch =
        ctx.scratch(static_cast<size_t>(carved_bytes(g.oh, sizeof(int64_t)) + carved_bytes(g.ow, sizeof(int64_t)) +
                                        carved_bytes(ow_pad + ow_pad / 8, sizeof(int32_t))));
    Carver carve(scratch);
    int64_t* rows = carve.take<int64_t>(g.oh);
    int64_t* cols = carve.take<int64_t>(g.ow);
    ColumnPick pick;
    pick.index = carve.take<int32_t>(ow_pad);
    pick.base = pick.index + ow_pad;
    nearest_sources(p, 2, g.ih, g.oh, rows);
    nearest_sources(p, 3, g.iw, g.ow, cols);
    build_pick(cols, g.ow, g.iw, pick);
    const int64_t units = g.planes * g.oh;
    const int parts = parallel_parts(ctx.pool(), units * g.ow, units);
    auto run_parts = [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        const int64_t r0 = units * part / parts, r1 = units * (part + 1) / parts;
        for (int64_t r = r0; r < r1;) {
          const int64_t plane = r / g.oh, o = r % g.oh;
          int64_t copies = 1;
          while (r + copies < r1 && o + copies < g.oh && rows[o + copies] == rows[o]) ++copies;
          pick_rows(x + (plane * g.ih + rows[o]) * g.iw, pick, g.ow, y + r * g.ow, copies, g.ow);
          r += copies;
        }
      }
    };
    if (parts == 1)
      run_parts(0, 1);
    else
      parallel_for(ctx.pool(), parts, 1, run_parts);
  }

  // th / tw null: that axis is not resized.
  void run_linear(KernelContext& ctx, const Plane& g, const ResizeTaps* th, const ResizeTaps* tw, const float* x,
                  float* y) const {
    const int64_t ow_pad = round_up(g.ow, 8);
    const int64_t units = g.planes * g.oh;
    const int parts = parallel_parts(ctx.pool(), units * g.ow * 4, units);
    // W first (into buffers of the output width) unless the output is shorter than the input.
    const bool w_first = g.oh >= g.ih;
    const int64_t buffer = round_up(w_first ? g.ow : g.iw, 16);
    const int64_t bytes = 4 * carved_bytes(ow_pad, sizeof(float)) + 2 * carved_bytes(ow_pad / 8, sizeof(int32_t)) +
                          2 * carved_bytes(g.oh, sizeof(int32_t)) + 2 * carved_bytes(g.oh, sizeof(float)) +
                          carved_bytes(g.ow, sizeof(int64_t)) + 2 * parts * carved_bytes(buffer, sizeof(float));
    Carver carve(ctx.scratch(static_cast<size_t>(bytes)));
    ColumnTaps ct;
    for (int j = 0; j < 2; ++j) {
      ct.tap[j].index = carve.take<int32_t>(ow_pad);
      ct.tap[j].base = carve.take<int32_t>(ow_pad / 8);
      ct.weight[j] = carve.take<float>(ow_pad);
    }
    int32_t* row_src[2] = {carve.take<int32_t>(g.oh), carve.take<int32_t>(g.oh)};
    float* row_weight[2] = {carve.take<float>(g.oh), carve.take<float>(g.oh)};
    int64_t* src = carve.take<int64_t>(g.ow);
    float* buffers = carve.take<float>(2 * parts * buffer);
    if (tw) {
      for (int j = 0; j < 2; ++j) {
        for (int64_t o = 0; o < g.ow; ++o) {
          src[o] = tw->index[o * 2 + j];
          ct.weight[j][o] = static_cast<float>(tw->weight[o * 2 + j]);
        }
        std::fill(ct.weight[j] + g.ow, ct.weight[j] + ow_pad, 0.0f);
        build_pick(src, g.ow, g.iw, ct.tap[j]);
      }
    }
    for (int64_t o = 0; o < g.oh; ++o) {
      for (int j = 0; j < 2; ++j) {
        row_src[j][o] = th ? static_cast<int32_t>(th->index[o * 2 + j]) : static_cast<int32_t>(o);
        row_weight[j][o] = th ? static_cast<float>(th->weight[o * 2 + j]) : (j == 0 ? 1.0f : 0.0f);
      }
    }
    auto run_parts = [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        float* buf[2] = {buffers + 2 * part * buffer, buffers + (2 * part + 1) * buffer};
        int64_t tag[2] = {-1, -1};  // source row held by buf[k]
        int64_t plane_of_tags = -1;
        const int64_t r0 = units * part / parts, r1 = units * (part + 1) / parts;
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t plane = r / g.oh, o = r % g.oh;
          const float* xp = x + plane * g.ih * g.iw;
          float* dst = y + r * g.ow;
          const int64_t h0 = row_src[0][o], h1 = row_src[1][o];
          const float w0 = row_weight[0][o], w1 = row_weight[1][o];
          if (!tw) {
            blend_rows(xp + h0 * g.iw, w0, xp + h1 * g.iw, w1, g.ow, dst);
            continue;
          }
          if (!th) {
            interpolate_row(xp + o * g.iw, ct, g.ow, dst);
            continue;
          }
          if (!w_first) {
            blend_rows(xp + h0 * g.iw, w0, xp + h1 * g.iw, w1, g.iw, buf[0]);
            interpolate_row(buf[0], ct, g.ow, dst);
            continue;
          }
          if (plane != plane_of_tags) {
            tag[0] = tag[1] = -1;
            plane_of_tags = plane;
          }
          // Row h interpolated along W, computed into the buffer not holding `keep`.
          auto row = [&](int64_t h, int64_t keep) -> const float* {
            for (int k = 0; k < 2; ++k)
              if (tag[k] == h) return buf[k];
            const int k = tag[0] == keep ? 1 : 0;
            interpolate_row(xp + h * g.iw, ct, g.ow, buf[k]);
            tag[k] = h;
            return buf[k];
          };
          const float* a = row(h0, -1);
          const float* b = row(h1, h0);
          blend_rows(a, w0, b, w1, g.ow, dst);
        }
      }
    };
    if (parts == 1)
      run_parts(0, 1);
    else
      parallel_for(ctx.pool(), parts, 1, run_parts);
  }

  // [N, CB, H, W, block] (the blocked channel layout): every pixel a vector of `block`
  // floats, moved or blended whole. Linear blends the two source rows over the whole input
  // row first (when H is resized), then each output pixel from its two source pixels.
  Status run_blocked(KernelContext& ctx, const ResizeParams& p, const Plane& g, int64_t block, const float* x,
                     float* y) const {
    const bool nearest = p.mode == ResizeMode::Nearest;
    const bool identity_h = resize_axis_is_identity(p, 2, g.ih), identity_w = resize_axis_is_identity(p, 3, g.iw);
    ResizeTaps th, tw;
    if (!nearest && !identity_h) th = resize_axis_taps(p, 2, g.ih);
    if (!nearest && !identity_w) tw = resize_axis_taps(p, 3, g.iw);
    if ((!nearest && !identity_h && th.n != 2) || (!nearest && !identity_w && tw.n != 2)) return reference_->run(ctx);
    const int64_t in_row = g.iw * block, out_row = g.ow * block;
    const int64_t units = g.planes * g.oh;
    const int parts = parallel_parts(ctx.pool(), units * out_row, units);
    const int64_t bytes = carved_bytes(g.oh, sizeof(int64_t)) + carved_bytes(g.ow, sizeof(int64_t)) +
                          parts * carved_bytes(in_row, sizeof(float));
    Carver carve(ctx.scratch(static_cast<size_t>(bytes)));
    int64_t* rows = carve.take<int64_t>(g.oh);
    int64_t* cols = carve.take<int64_t>(g.ow);
    float* buffers = carve.take<float>(parts * round_up(in_row, 16));
    if (nearest) {
      nearest_sources(p, 2, g.ih, g.oh, rows);
      nearest_sources(p, 3, g.iw, g.ow, cols);
    }
    auto run_parts = [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        float* buf = buffers + part * round_up(in_row, 16);
        const int64_t r0 = units * part / parts, r1 = units * (part + 1) / parts;
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t plane = r / g.oh, o = r % g.oh;
          const float* xp = x + plane * g.ih * in_row;
          float* dst = y + r * out_row;
          if (nearest) {
            if (o > 0 && r > r0 && rows[o] == rows[o - 1]) {
              std::copy(dst - out_row, dst, dst);  // the row above had the same source row
              continue;
            }
            const float* src = xp + rows[o] * in_row;
            for (int64_t c = 0; c < g.ow; ++c) std::copy_n(src + cols[c] * block, block, dst + c * block);
            continue;
          }
          const float* row = xp + o * in_row;
          if (!identity_h) {
            blend_rows(xp + th.index[o * 2] * in_row, static_cast<float>(th.weight[o * 2]),
                       xp + th.index[o * 2 + 1] * in_row, static_cast<float>(th.weight[o * 2 + 1]), in_row, buf);
            row = buf;
          }
          if (identity_w) {
            std::copy_n(row, out_row, dst);
            continue;
          }
          for (int64_t c = 0; c < g.ow; ++c)
            blend_rows(row + tw.index[c * 2] * block, static_cast<float>(tw.weight[c * 2]),
                       row + tw.index[c * 2 + 1] * block, static_cast<float>(tw.weight[c * 2 + 1]), block,
                       dst + c * block);
        }
      }
    };
    if (parts == 1)
      run_parts(0, 1);
    else
      parallel_for(ctx.pool(), parts, 1, run_parts);
    return Status::ok();
  }

  bool is_upsample_ = false;
  std::unique_ptr<Kernel> reference_;  // other ranks, resized N, C or block, cubic, tf_crop_and_resize, antialias
};

}  // namespace

Result<std::unique_ptr<Kernel>> resize_f32_create(const KernelInit& init) { return ResizeKernel::create(init, false); }
Result<std::unique_ptr<Kernel>> upsample_f32_create(const KernelInit& init) { return ResizeKernel::create(init, true); }

}  // namespace ignis::kernels::x86
