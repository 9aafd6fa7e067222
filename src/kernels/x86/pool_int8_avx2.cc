// SPDX-License-Identifier: Apache-2.0
// AVX2 MaxPool over uint8 / int8 NCHW tensors (1-D and 2-D windows): the quantized models'
// pools once eliminate_qdq_around_data_movement has dropped the float conversions around them.
//
// The same two passes as the float32 kernel (pool_avx2.cc): the vertical pass takes the
// maximum of the window's input rows, 32 columns per vector (vpmaxub / vpmaxsb), into a row
// buffer spanning the padded input width whose padding columns hold the type's minimum, which
// loses to every input; the horizontal pass reduces the kernel-width taps of the buffer for 32
// outputs at a time, loading directly at stride 1 and deinterleaving two loads at stride 2 (a
// last, partial vector of outputs spills into the next output row, which is written after it,
// or on a plane's last row goes through a small buffer); other strides are scalar. The
// maximum of integers is exact, so the output equals the reference kernel's byte for byte.
// MaxPool's Indices output, 3-D windows and windows without any input tap go to the reference.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/x86/pool_int8_avx2.h"
#include "kernels/x86/pool_window.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

using pool_window::Taps;
using pool_window::Window2d;

// Row buffer bytes beyond row_len: the stride-2 path loads 64 bytes per 32 outputs, and the
// last, partial vector of outputs reads up to that far past the last window.
constexpr int64_t kRowSlack = 64;

template <bool Signed>
inline __m256i max32(__m256i a, __m256i b) {
  if constexpr (Signed) return _mm256_max_epi8(a, b);
  else return _mm256_max_epu8(a, b);
}

template <bool Signed>
inline __m128i max16(__m128i a, __m128i b) {
  if constexpr (Signed) return _mm_max_epi8(a, b);
  else return _mm_max_epu8(a, b);
}

template <bool Signed>
inline uint8_t max1(uint8_t a, uint8_t b) {
  if constexpr (Signed) return static_cast<int8_t>(a) < static_cast<int8_t>(b) ? b : a;
  else return a < b ? b : a;
}

// 32 taps at output stride S (1 or 2) starting at p.
template <int S>
inline __m256i load_taps(const uint8_t* p) {
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  if constexpr (S == 1) {
    return lo;
  } else {
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    // The even bytes of each 16-bit lane, packed per 128-bit half: [lo0 hi0 | lo1 hi1] in
    // 8-byte groups, reordered to [lo0 lo1 hi0 hi1]. The mask leaves values 0..255, which the
    // unsigned saturating pack keeps as they are, whatever the bytes' signedness.
    const __m256i even_mask = _mm256_set1_epi16(0x00ff);
    const __m256i packed = _mm256_packus_epi16(_mm256_and_si256(lo, even_mask), _mm256_and_si256(hi, even_mask));
    return _mm256_permute4x64_epi64(packed, _MM_SHUFFLE(3, 1, 2, 0));
  }
}

template <bool Signed, int S>
inline __m256i window_max32(const uint8_t* p, int64_t kw, int64_t dw) {
  __m256i acc = load_taps<S>(p);
  for (int64_t k = 1; k < kw; ++k) acc = max32<Signed>(acc, load_taps<S>(p + k * dw));
  return acc;
}

// Output row from the row buffer. `room` is how many bytes after the row's end the output may
// overwrite (the plane's later rows, written afterwards): where the last, partial vector fits
// it is stored whole, else through a small buffer.
template <bool Signed, int S>
void pool_row(const Window2d& g, const uint8_t* row, uint8_t* y, int64_t room) {
  const int64_t ow = g.w.out, kw = g.w.kernel, sw = g.w.stride, dw = g.w.dilation;
  int64_t o = 0;
  if constexpr (S != 0) {
    for (; o + 32 <= ow; o += 32)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + o), window_max32<Signed, S>(row + o * sw, kw, dw));
    if (o < ow && o + 32 <= ow + room) {  // its loads stay inside the row buffer's slack
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + o), window_max32<Signed, S>(row + o * sw, kw, dw));
    } else if (o < ow) {
      alignas(32) uint8_t last[32];
      _mm256_store_si256(reinterpret_cast<__m256i*>(last), window_max32<Signed, S>(row + o * sw, kw, dw));
      std::memcpy(y + o, last, static_cast<size_t>(ow - o));
    }
    return;
  }
  for (; o < ow; ++o) {
    const uint8_t* p = row + o * sw;
    uint8_t acc = p[0];
    for (int64_t k = 1; k < kw; ++k) acc = max1<Signed>(acc, p[k * dw]);
    y[o] = acc;
  }
}

// One (image, channel) plane. `row` is this thread's row buffer with its padding columns
// already set to the type's minimum.
template <bool Signed>
void pool_plane(const Window2d& g, const Taps* row_taps, const uint8_t* x, uint8_t* y, uint8_t* row) {
  const int64_t iw = g.w.in;
  const int64_t cols = std::clamp<int64_t>(g.row_len - g.w.pad_begin, 0, iw);
  uint8_t* dst = row + g.w.pad_begin;
  for (int64_t oh = 0; oh < g.h.out; ++oh) {
    const Taps th = row_taps[oh];
    const uint8_t* first = x + (oh * g.h.stride - g.h.pad_begin + th.lo * g.h.dilation) * iw;
    const int64_t step = g.h.dilation * iw, n = th.hi - th.lo;
    int64_t c = 0;
    for (; c + 32 <= cols; c += 32) {
      __m256i acc = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(first + c));
      for (int64_t k = 1; k < n; ++k)
        acc = max32<Signed>(acc, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(first + k * step + c)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + c), acc);
    }
    if (c + 16 <= cols) {
      __m128i acc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(first + c));
      for (int64_t k = 1; k < n; ++k)
        acc = max16<Signed>(acc, _mm_loadu_si128(reinterpret_cast<const __m128i*>(first + k * step + c)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + c), acc);
      c += 16;
    }
    for (; c < cols; ++c) {
      uint8_t acc = first[c];
      for (int64_t k = 1; k < n; ++k) acc = max1<Signed>(acc, first[k * step + c]);
      dst[c] = acc;
    }
    uint8_t* yrow = y + oh * g.w.out;
    const int64_t room = (g.h.out - 1 - oh) * g.w.out;
    if (g.w.stride == 1) pool_row<Signed, 1>(g, row, yrow, room);
    else if (g.w.stride == 2) pool_row<Signed, 2>(g, row, yrow, room);
    else pool_row<Signed, 0>(g, row, yrow, room);
  }
}

class MaxPoolInt8Kernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<MaxPoolInt8Kernel>();
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("", "MaxPool", init, init.input_dtypes[0]));
    k->ceil_mode_ = init.attrs.get_int("ceil_mode", 0) != 0 && init.opset >= 10;
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if ((x.rank() != 3 && x.rank() != 4) || ctx.has_output(1)) return reference_->run(ctx);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return Status::ok();
    IGNIS_ASSIGN_OR_RETURN(const WindowGeometry wg,
                           make_window_geometry(ctx.attrs(), x.shape().dims().subspan(2), {}, ceil_mode_));
    const Window2d g = pool_window::as_2d(wg);
    if (!pool_window::every_window_has_input(g.h) || !pool_window::every_window_has_input(g.w))
      return reference_->run(ctx);

    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t in_plane = g.h.in * g.w.in, out_plane = g.h.out * g.w.out;
    const int64_t work = planes * g.h.out * (g.h.kernel * g.w.in + g.w.out * g.w.kernel);
    const int parts = pool_window::parts_for(ctx.pool(), work, planes);
    const int64_t row_stride = pool_window::round_up(g.row_len + kRowSlack, 32);
    const int64_t taps_bytes = pool_window::round_up(g.h.out * static_cast<int64_t>(sizeof(Taps)), 32);
    auto* scratch = static_cast<uint8_t*>(ctx.scratch(static_cast<size_t>(taps_bytes + parts * row_stride)));
    Taps* row_taps = reinterpret_cast<Taps*>(scratch);
    for (int64_t o = 0; o < g.h.out; ++o) row_taps[o] = pool_window::axis_taps(g.h, o);
    const bool is_signed = x.dtype() == DType::I8;
    const auto* xs = static_cast<const uint8_t*>(x.data());
    auto* ys = static_cast<uint8_t*>(y.data());
    auto run_parts = [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        uint8_t* row = scratch + taps_bytes + part * row_stride;
        std::memset(row, is_signed ? 0x80 : 0x00, static_cast<size_t>(row_stride));  // the type's minimum
        for (int64_t p = planes * part / parts; p < planes * (part + 1) / parts; ++p) {
          if (is_signed) pool_plane<true>(g, row_taps, xs + p * in_plane, ys + p * out_plane, row);
          else pool_plane<false>(g, row_taps, xs + p * in_plane, ys + p * out_plane, row);
        }
      }
    };
    if (parts == 1) run_parts(0, 1);
    else parallel_for(ctx.pool(), parts, 1, run_parts);
    return Status::ok();
  }

 private:
  std::unique_ptr<Kernel> reference_;  // Indices output, 3-D windows, windows without input taps
  bool ceil_mode_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> pool_int8_create_max(const KernelInit& init) {
  return MaxPoolInt8Kernel::create(init);
}

}  // namespace ignis::kernels::x86
