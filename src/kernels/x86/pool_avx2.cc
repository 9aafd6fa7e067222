// SPDX-License-Identifier: Apache-2.0
// AVX2 pooling kernels (float32, NCHW): MaxPool and AveragePool over 1-D and 2-D windows,
// GlobalMaxPool and GlobalAveragePool; and ai.ignis BlockedMaxPool on the 16-channel blocked
// layout (its 16 lanes as two vectors; the walk is pool_blocked_max.h's).
//
// A windowed pool produces each output row in two passes. The vertical pass reduces the
// window's input rows (only those inside the input) column by column, 8 columns per vector
// (the last ones under a mask), into a row buffer that spans the padded input width, for up
// to 8 output rows before their horizontal passes run; the buffers' padding columns hold the
// reduction's neutral value (NaN for max, which loses to every number; 0 for average) and
// are written once per call, so the horizontal pass has no border cases: it reduces the
// kernel-width taps of the buffer for 8 outputs at a time, loading directly at unit stride,
// deinterleaving two loads at stride 2 (the last, partial vector stored under a mask) and
// gathering at other strides. Average divides by the window's count of input taps (or of
// taps inside the padded extent with count_include_pad), as the reference does. Max ignores
// NaN unless every tap of the window is NaN. Global pools reduce each plane with four 8-lane
// accumulators. Channel planes are split over the pool only when the work pays for waking
// workers. MaxPool's Indices output, 3-D windows and windows without any input tap go to the
// reference kernel.
#include "kernels/x86/pool_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>

#include "core/conv_geometry.h"
#include "kernels/x86/pool_blocked_max.h"
#include "kernels/x86/pool_window.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

using namespace pool_window;

enum class Reduce { Max, Average };

// NaN-ignoring max: the other operand when one is NaN, NaN only when both are.
inline __m256 nanmax8(__m256 a, __m256 b) {
  return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
}
inline float nanmax1(float a, float b) {
  if (b != b) return a;
  return (a != a || b > a) ? b : a;
}

template <Reduce R>
inline __m256 combine8(__m256 a, __m256 b) {
  if constexpr (R == Reduce::Max) return nanmax8(a, b);
  else return _mm256_add_ps(a, b);
}
template <Reduce R>
inline __m128 combine4(__m128 a, __m128 b) {
  if constexpr (R == Reduce::Max) return _mm_blendv_ps(_mm_max_ps(a, b), a, _mm_cmpunord_ps(b, b));
  else return _mm_add_ps(a, b);
}
template <Reduce R>
inline float combine1(float a, float b) {
  if constexpr (R == Reduce::Max) return nanmax1(a, b);
  else return a + b;
}

inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline float hmax8(__m256 v) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  float m = lanes[0];
  for (int i = 1; i < 8; ++i) m = nanmax1(m, lanes[i]);
  return m;
}

// Row buffer floats beyond row_len: the stride-2 path loads 16 floats per 8 outputs, and the
// last, partial vector of outputs reads up to 8 outputs' worth past the last window.
constexpr int64_t kRowSlack = 32;

// Columns of output stride S (0 = any stride, read by gathering).
template <int S>
inline __m256 load_taps(const float* p, __m256i gather_index) {
  if constexpr (S == 1) {
    return _mm256_loadu_ps(p);
  } else if constexpr (S == 2) {
    const __m256 lo = _mm256_loadu_ps(p), hi = _mm256_loadu_ps(p + 8);
    // [lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6] -> [lo0 lo2 lo4 lo6 hi0 hi2 hi4 hi6]
    const __m256 even = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), _MM_SHUFFLE(3, 1, 2, 0)));
  } else {
    return _mm256_i32gather_ps(p, gather_index, 4);
  }
}

// Output row from the row buffer; `count` is the per-column window count (average only)
// and `row_count` the window count along the other axis.
template <Reduce R, int S>
void pool_row(const Window2d& g, const float* row, const float* count, float row_count, float* y) {
  const int64_t ow = g.w.out, kw = g.w.kernel, sw = g.w.stride, dw = g.w.dilation;
  const __m256i index = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                           _mm256_set1_epi32(static_cast<int>(sw)));
  const __m256 rc = _mm256_set1_ps(row_count);
  int64_t o = 0;
  for (; o + 8 <= ow; o += 8) {
    const float* p = row + o * sw;
    __m256 acc = load_taps<S>(p, index);
    for (int64_t k = 1; k < kw; ++k) acc = combine8<R>(acc, load_taps<S>(p + k * dw, index));
    if constexpr (R == Reduce::Average) acc = _mm256_div_ps(acc, _mm256_mul_ps(rc, _mm256_loadu_ps(count + o)));
    _mm256_storeu_ps(y + o, acc);
  }
  if constexpr (S != 0) {
    // The last outputs as one more vector: its loads stay inside the row buffer's slack,
    // which holds the neutral value, and only the outputs' lanes are stored.
    if (o < ow) {
      const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(ow - o)),
                                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      const float* p = row + o * sw;
      __m256 acc = load_taps<S>(p, index);
      for (int64_t k = 1; k < kw; ++k) acc = combine8<R>(acc, load_taps<S>(p + k * dw, index));
      if constexpr (R == Reduce::Average)
        acc = _mm256_div_ps(acc, _mm256_mul_ps(rc, _mm256_maskload_ps(count + o, mask)));
      _mm256_maskstore_ps(y + o, mask, acc);
    }
    return;
  }
  for (; o < ow; ++o) {
    const float* p = row + o * sw;
    float acc = p[0];
    for (int64_t k = 1; k < kw; ++k) acc = combine1<R>(acc, p[k * dw]);
    if constexpr (R == Reduce::Average) acc /= row_count * count[o];
    y[o] = acc;
  }
}

// Output rows per batch of vertical passes: the rows' buffers are all written before the
// first is read back, so the horizontal pass's loads (at column offsets 1, 2, ... from the
// vertical pass's 8-column stores) find the stores retired instead of failing to forward
// from them, one failed forward per load when each row was read right after it was written
// (googlenet's 3x3 stride-1 pools over 14x14 planes ran at ~2 ns per output).
constexpr int64_t kRowBatch = 8;

// One (image, channel) plane. `rows` holds this thread's kRowBatch row buffers, `row_stride`
// floats apart, with their padding columns already set to the neutral value.
template <Reduce R>
void pool_plane(const Window2d& g, const Taps* row_taps, const float* x, float* y, float* rows, int64_t row_stride,
                const float* count) {
  const int64_t iw = g.w.in;
  const int64_t cols = std::clamp<int64_t>(g.row_len - g.w.pad_begin, 0, iw);
  const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(cols % 8)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  for (int64_t oh0 = 0; oh0 < g.h.out; oh0 += kRowBatch) {
    const int64_t batch = std::min(kRowBatch, g.h.out - oh0);
    for (int64_t i = 0; i < batch; ++i) {
      const Taps th = row_taps[oh0 + i];
      const float* first = x + ((oh0 + i) * g.h.stride - g.h.pad_begin + th.lo * g.h.dilation) * iw;
      const int64_t step = g.h.dilation * iw, n = th.hi - th.lo;
      float* dst = rows + i * row_stride + g.w.pad_begin;
      int64_t c = 0;
      for (; c + 8 <= cols; c += 8) {
        __m256 acc = _mm256_loadu_ps(first + c);
        for (int64_t k = 1; k < n; ++k) acc = combine8<R>(acc, _mm256_loadu_ps(first + k * step + c));
        _mm256_storeu_ps(dst + c, acc);
      }
      if (c < cols) {  // the last columns under a mask: the buffer's padding past them stays neutral
        __m256 acc = _mm256_maskload_ps(first + c, tail);
        for (int64_t k = 1; k < n; ++k) acc = combine8<R>(acc, _mm256_maskload_ps(first + k * step + c, tail));
        _mm256_maskstore_ps(dst + c, tail, acc);
      }
    }
    for (int64_t i = 0; i < batch; ++i) {
      const Taps th = row_taps[oh0 + i];
      const float row_count = static_cast<float>(g.include_pad ? th.padded : th.hi - th.lo);
      const float* row = rows + i * row_stride;
      float* yrow = y + (oh0 + i) * g.w.out;
      if (g.w.stride == 1) pool_row<R, 1>(g, row, count, row_count, yrow);
      else if (g.w.stride == 2) pool_row<R, 2>(g, row, count, row_count, yrow);
      else pool_row<R, 0>(g, row, count, row_count, yrow);
    }
  }
}

// Whether the window is 2x2 at stride 2 with every window inside the input (no padding,
// no dilation): the common downsampling pool, which pool_2x2s2_plane computes directly.
bool is_2x2s2(const Window2d& g) {
  auto plain = [](const Axis& a) {
    return a.kernel == 2 && a.stride == 2 && a.dilation == 1 && a.pad_begin == 0 && 2 * a.out <= a.in;
  };
  return plain(g.h) && plain(g.w);
}

// One plane of a 2x2 stride-2 pool straight from the two input rows of each output row.
// The general path goes through a row buffer whose odd-column reloads overlap the store
// just made (a failed store forward per row, most of the time on small planes: the digits
// CNN's 16 planes of 8x8 took ~1 us).
template <Reduce R>
void pool_2x2s2_plane(const Window2d& g, const float* x, float* y) {
  const int64_t iw = g.w.in, ow = g.w.out;
  for (int64_t oh = 0; oh < g.h.out; ++oh) {
    const float* r0 = x + 2 * oh * iw;
    const float* r1 = r0 + iw;
    float* yr = y + oh * ow;
    int64_t o = 0;
    for (; o + 8 <= ow; o += 8) {
      const __m256 lo = combine8<R>(_mm256_loadu_ps(r0 + 2 * o), _mm256_loadu_ps(r1 + 2 * o));
      const __m256 hi = combine8<R>(_mm256_loadu_ps(r0 + 2 * o + 8), _mm256_loadu_ps(r1 + 2 * o + 8));
      // Even and odd columns, each in output order (see load_taps).
      const __m256 even = _mm256_castpd_ps(_mm256_permute4x64_pd(
          _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0))), _MM_SHUFFLE(3, 1, 2, 0)));
      const __m256 odd = _mm256_castpd_ps(_mm256_permute4x64_pd(
          _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1))), _MM_SHUFFLE(3, 1, 2, 0)));
      __m256 v = combine8<R>(even, odd);
      if constexpr (R == Reduce::Average) v = _mm256_mul_ps(v, _mm256_set1_ps(0.25f));
      _mm256_storeu_ps(yr + o, v);
    }
    if (o + 4 <= ow) {  // 4 more outputs at 128 bits (an 8x8 plane's whole row)
      const __m128 lo = combine4<R>(_mm_loadu_ps(r0 + 2 * o), _mm_loadu_ps(r1 + 2 * o));
      const __m128 hi = combine4<R>(_mm_loadu_ps(r0 + 2 * o + 4), _mm_loadu_ps(r1 + 2 * o + 4));
      __m128 v = combine4<R>(_mm_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)), _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
      if constexpr (R == Reduce::Average) v = _mm_mul_ps(v, _mm_set1_ps(0.25f));
      _mm_storeu_ps(yr + o, v);
      o += 4;
    }
    for (; o < ow; ++o) {
      float v = combine1<R>(combine1<R>(r0[2 * o], r1[2 * o]), combine1<R>(r0[2 * o + 1], r1[2 * o + 1]));
      if constexpr (R == Reduce::Average) v *= 0.25f;
      yr[o] = v;
    }
  }
}

template <Reduce R>
class WindowPoolKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<WindowPoolKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->reference_,
                           make_reference_kernel("", R == Reduce::Max ? "MaxPool" : "AveragePool", init));
    k->ceil_mode_ = init.attrs.get_int("ceil_mode", 0) != 0 && init.opset >= 10;
    k->include_pad_ = R == Reduce::Average && init.attrs.get_int("count_include_pad", 0) != 0;
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if ((x.rank() != 3 && x.rank() != 4) || (R == Reduce::Max && ctx.has_output(1))) return reference_->run(ctx);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return Status::ok();
    Window2d g;
    IGNIS_RETURN_IF_ERROR(geometry(ctx, g));
    if (!g.supported) return reference_->run(ctx);

    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t in_plane = g.h.in * g.w.in, out_plane = g.h.out * g.w.out;
    const int64_t work = planes * g.h.out * (g.h.kernel * g.w.in + g.w.out * g.w.kernel);
    const int parts = parts_for(ctx.pool(), work, planes);
    if (is_2x2s2(g)) {
      const float* xs = x.data_as<float>();
      float* ys = y.data_as<float>();
      auto run_parts = [&](int64_t begin, int64_t end) {
        for (int64_t part = begin; part < end; ++part)
          for (int64_t p = planes * part / parts; p < planes * (part + 1) / parts; ++p)
            pool_2x2s2_plane<R>(g, xs + p * in_plane, ys + p * out_plane);
      };
      if (parts == 1) run_parts(0, 1);
      else parallel_for(ctx.pool(), parts, 1, run_parts);
      return Status::ok();
    }
    const int64_t count_len = R == Reduce::Average ? round_up(g.w.out, 16) : 0;
    const int64_t row_stride = round_up(g.row_len + kRowSlack, 16);
    // The taps of each output row, the same for every plane: computed once per run (their
    // divisions cost more than pooling a small plane's row).
    const int64_t taps_floats = round_up(g.h.out * static_cast<int64_t>(sizeof(Taps) / sizeof(float)), 16);
    float* scratch = static_cast<float*>(
        ctx.scratch(static_cast<size_t>(count_len + parts * kRowBatch * row_stride + taps_floats) * sizeof(float)));
    Taps* row_taps = reinterpret_cast<Taps*>(scratch + count_len + parts * kRowBatch * row_stride);
    for (int64_t o = 0; o < g.h.out; ++o) row_taps[o] = axis_taps(g.h, o);
    float* count = scratch;
    if constexpr (R == Reduce::Average) {
      for (int64_t o = 0; o < g.w.out; ++o) {
        const Taps t = axis_taps(g.w, o);
        count[o] = static_cast<float>(g.include_pad ? t.padded : t.hi - t.lo);
      }
    }
    const float neutral = R == Reduce::Max ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
    const float* xs = x.data_as<float>();
    float* ys = y.data_as<float>();
    auto run_parts = [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        float* rows = scratch + count_len + part * kRowBatch * row_stride;
        const __m256 fill = _mm256_set1_ps(neutral);
        for (int64_t i = 0; i < kRowBatch * row_stride; i += 8) _mm256_store_ps(rows + i, fill);
        for (int64_t p = planes * part / parts; p < planes * (part + 1) / parts; ++p)
          pool_plane<R>(g, row_taps, xs + p * in_plane, ys + p * out_plane, rows, row_stride, count);
      }
    };
    if (parts == 1) run_parts(0, 1);
    else parallel_for(ctx.pool(), parts, 1, run_parts);
    return Status::ok();
  }

 private:
  // The window geometry for the input's spatial extents. Parsing the attributes costs about
  // as much as pooling a small plane, so the last geometry is kept for the next run.
  Status geometry(const KernelContext& ctx, Window2d& g) const {
    const auto spatial = ctx.input(0).shape().dims().subspan(2);
    const int rank = static_cast<int>(spatial.size());
    {
      std::lock_guard<std::mutex> lock(mu_);
      bool hit = cached_rank_ == rank;
      for (int i = 0; hit && i < rank; ++i) hit = cached_in_[i] == spatial[i];
      if (hit) {
        g = cached_;
        return Status::ok();
      }
    }
    IGNIS_ASSIGN_OR_RETURN(const WindowGeometry wg, make_window_geometry(ctx.attrs(), spatial, {}, ceil_mode_));
    g = as_2d(wg);
    g.include_pad = include_pad_;
    g.supported = every_window_has_input(g.h) && every_window_has_input(g.w);
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < rank; ++i) cached_in_[i] = spatial[i];
    cached_rank_ = rank;
    cached_ = g;
    return Status::ok();
  }

  std::unique_ptr<Kernel> reference_;  // Indices output, 3-D windows, windows without input taps
  bool ceil_mode_ = false;
  bool include_pad_ = false;
  mutable std::mutex mu_;  // guards the cached geometry
  mutable int cached_rank_ = -1;
  mutable int64_t cached_in_[2] = {};
  mutable Window2d cached_;
};

template <Reduce R>
float reduce_plane(const float* v, int64_t n) {
  const __m256 init = R == Reduce::Max ? _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()) : _mm256_setzero_ps();
  __m256 a0 = init, a1 = init, a2 = init, a3 = init;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = combine8<R>(a0, _mm256_loadu_ps(v + i));
    a1 = combine8<R>(a1, _mm256_loadu_ps(v + i + 8));
    a2 = combine8<R>(a2, _mm256_loadu_ps(v + i + 16));
    a3 = combine8<R>(a3, _mm256_loadu_ps(v + i + 24));
  }
  for (; i + 8 <= n; i += 8) a0 = combine8<R>(a0, _mm256_loadu_ps(v + i));
  const __m256 a = combine8<R>(combine8<R>(a0, a1), combine8<R>(a2, a3));
  float r = R == Reduce::Max ? hmax8(a) : hsum8(a);
  for (; i < n; ++i) r = combine1<R>(r, v[i]);
  return r;
}

template <Reduce R>
class GlobalPoolKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<GlobalPoolKernel>();
    IGNIS_ASSIGN_OR_RETURN(
        k->reference_, make_reference_kernel("", R == Reduce::Max ? "GlobalMaxPool" : "GlobalAveragePool", init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 3) return reference_->run(ctx);
    const int64_t size = x.shape().numel(2, x.rank());
    if (size == 0) return reference_->run(ctx);
    const int64_t planes = x.dim(0) * x.dim(1);
    const float* xs = x.data_as<float>();
    float* ys = ctx.output(0).data_as<float>();
    const float count = static_cast<float>(size);
    auto run_planes = [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const float r = reduce_plane<R>(xs + p * size, size);
        ys[p] = R == Reduce::Max ? r : r / count;
      }
    };
    split_planes(ctx.pool(), planes, planes * size, run_planes);
    return Status::ok();
  }

 private:
  std::unique_ptr<Kernel> reference_;  // rank below 3, empty planes
};

// BlockedMaxPool's 16 lanes as two 8-lane vectors (pool_blocked_max.h).
struct BlockedMaxLanesAvx2 {
  struct V {
    __m256 lo, hi;
  };
  static V nan() {
    const __m256 n = _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN());
    return {n, n};
  }
  static V max(V a, const float* x) { return {nanmax8(a.lo, _mm256_loadu_ps(x)), nanmax8(a.hi, _mm256_loadu_ps(x + 8))}; }
  static void store(float* y, V v) {
    _mm256_storeu_ps(y, v.lo);
    _mm256_storeu_ps(y + 8, v.hi);
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> pool_f32_create_blocked_max(const KernelInit& init) {
  return BlockedMaxPoolKernel<BlockedMaxLanesAvx2>::create(init);
}

Result<std::unique_ptr<Kernel>> pool_f32_create_max(const KernelInit& init) {
  return WindowPoolKernel<Reduce::Max>::create(init);
}
Result<std::unique_ptr<Kernel>> pool_f32_create_average(const KernelInit& init) {
  return WindowPoolKernel<Reduce::Average>::create(init);
}
Result<std::unique_ptr<Kernel>> pool_f32_create_global_max(const KernelInit& init) {
  return GlobalPoolKernel<Reduce::Max>::create(init);
}
Result<std::unique_ptr<Kernel>> pool_f32_create_global_average(const KernelInit& init) {
  return GlobalPoolKernel<Reduce::Average>::create(init);
}

}  // namespace ignis::kernels::x86
