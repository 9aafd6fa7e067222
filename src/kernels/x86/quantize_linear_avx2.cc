// SPDX-License-Identifier: Apache-2.0
// AVX2 QuantizeLinear (float32 -> uint8 / int8) and DequantizeLinear (uint8 / int8 ->
// float32), per tensor or per axis: what stays between the quantized ops of a QDQ model
// (residual Adds, pools). The data is walked as [outer, channels, inner] rows with one scale
// and zero point per row, 8 lanes at a time; long rows (per tensor: one row) are split over the
// threads in whole vectors. The arithmetic is the reference kernel's, lane by lane (x / scale
// with a true division, round half to even, add the zero point in float, saturate, NaN low;
// (q - zero point) converted to float times scale), so both give the same values. Scales along
// the last axis (one per channel of a row: a smoothed projection's input) run 8 channels per
// vector instead, each lane with its own scale and zero point. Blocked
// quantization (scale of x's rank), float8/int4 types and float16 scales go to the reference.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/broadcast.h"
#include "core/channel_split.h"
#include "kernels/x86/quantize_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int64_t kElementsPerPart = int64_t{1} << 14;

// One scale and zero point over x[begin, end).
struct Row {
  int64_t begin, end;
  float scale;
  int32_t zero_point;
};

// 8 values x / scale rounded half to even, plus the zero point, saturated to [lo, hi] (NaN to
// lo), stored as bytes; and one value the same way.
inline void quantize8(const float* x, __m256 scale, __m256 zero, __m256 lo, __m256 hi, uint8_t* y, bool is_signed) {
  __m256 q = _mm256_add_ps(_mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(x), scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                           zero);
  q = _mm256_min_ps(_mm256_max_ps(q, lo), hi);  // max(NaN, lo) is lo
  const __m256i w = _mm256_cvtps_epi32(q);
  const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
  // In range already, so either pack keeps the values.
  _mm_storel_epi64(reinterpret_cast<__m128i*>(y), is_signed ? _mm_packs_epi16(w16, w16) : _mm_packus_epi16(w16, w16));
}

inline uint8_t quantize1(float x, float scale, float zero, float lo, float hi) {
  const float v = std::nearbyint(x / scale) + zero;
  return static_cast<uint8_t>(static_cast<int32_t>(!(v >= lo) ? lo : std::min(v, hi)));
}

// 8 bytes (q - zero point) * scale as floats; and one.
inline void dequantize8(const uint8_t* x, __m256 scale, __m256i zero, float* y, bool is_signed) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x));
  const __m256i v = is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
  _mm256_storeu_ps(y, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, zero)), scale));
}

inline float dequantize1(uint8_t x, float scale, int32_t zero, bool is_signed) {
  const int32_t q = is_signed ? static_cast<int32_t>(static_cast<int8_t>(x)) : static_cast<int32_t>(x);
  return static_cast<float>(q - zero) * scale;
}

void quantize_row(const float* x, uint8_t* y, const Row& r, bool is_signed) {
  const float lo = is_signed ? -128.0f : 0.0f, hi = is_signed ? 127.0f : 255.0f;
  const float zero = static_cast<float>(r.zero_point);
  const __m256 vs = _mm256_set1_ps(r.scale), vz = _mm256_set1_ps(zero);
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  int64_t i = r.begin;
  for (; i + 8 <= r.end; i += 8) quantize8(x + i, vs, vz, vlo, vhi, y + i, is_signed);
  for (; i < r.end; ++i) y[i] = quantize1(x[i], r.scale, zero, lo, hi);
}

void dequantize_row(const uint8_t* x, float* y, const Row& r, bool is_signed) {
  const __m256 vs = _mm256_set1_ps(r.scale);
  const __m256i vz = _mm256_set1_epi32(r.zero_point);
  int64_t i = r.begin;
  for (; i + 8 <= r.end; i += 8) dequantize8(x + i, vs, vz, y + i, is_signed);
  for (; i < r.end; ++i) y[i] = dequantize1(x[i], r.scale, r.zero_point, is_signed);
}

// Per channel of the last axis (a smoothed projection's input): rows of `channels` values, each
// lane with its channel's scale and zero point. The arithmetic is quantize_row's.
void quantize_last_axis(const float* x, uint8_t* y, int64_t row_begin, int64_t row_end, int64_t channels,
                        const float* scale, const float* zero_point, bool is_signed) {
  const float lo = is_signed ? -128.0f : 0.0f, hi = is_signed ? 127.0f : 255.0f;
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* xr = x + r * channels;
    uint8_t* yr = y + r * channels;
    int64_t c = 0;
    for (; c + 8 <= channels; c += 8)
      quantize8(xr + c, _mm256_loadu_ps(scale + c), _mm256_loadu_ps(zero_point + c), vlo, vhi, yr + c, is_signed);
    for (; c < channels; ++c) yr[c] = quantize1(xr[c], scale[c], zero_point[c], lo, hi);
  }
}

void dequantize_last_axis(const uint8_t* x, float* y, int64_t row_begin, int64_t row_end, int64_t channels,
                          const float* scale, const int32_t* zero_point, bool is_signed) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* xr = x + r * channels;
    float* yr = y + r * channels;
    int64_t c = 0;
    for (; c + 8 <= channels; c += 8)
      dequantize8(xr + c, _mm256_loadu_ps(scale + c),
                  _mm256_loadu_si256(reinterpret_cast<const __m256i*>(zero_point + c)), yr + c, is_signed);
    for (; c < channels; ++c) yr[c] = dequantize1(xr[c], scale[c], zero_point[c], is_signed);
  }
}

// Whether the scales are one per entry of x's last axis (and there is more than one).
bool per_last_axis(const KernelContext& ctx, const Shape& x) {
  const Tensor& scale = ctx.input(1);
  if (scale.numel() <= 1 || x.rank() < 1) return false;
  const auto axis = normalize_axis(ctx.attrs().get_int("axis", 1), x.rank());
  return axis && *axis == x.rank() - 1 && scale.numel() == x[x.rank() - 1];
}

// Runs the last-axis kernel over x's rows, split over the threads.
template <class F>
void for_last_axis_rows(const KernelContext& ctx, const Shape& x, F fn) {
  const int64_t channels = x[x.rank() - 1];
  const int64_t rows = x.numel() / channels;
  ThreadPool* pool = ctx.pool();
  const int64_t threads = pool ? pool->threads() : 1;
  const int64_t parts = std::clamp<int64_t>(x.numel() / kElementsPerPart, 1, std::min(threads, rows));
  parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) fn(rows * p / parts, rows * (p + 1) / parts, channels);
  });
}

// The rows of x with their scales, split so that no piece is much longer than a part's share.
std::vector<Row> rows_of(const KernelContext& ctx, const Shape& x, int64_t pieces_per_row) {
  const Tensor& scale = ctx.input(1);
  const ChannelSplit s = scale.numel() <= 1
                             ? ChannelSplit::whole(x)
                             : ChannelSplit(x, normalize_axis(ctx.attrs().get_int("axis", 1), x.rank()).value_or(0));
  std::vector<Row> rows;
  rows.reserve(static_cast<size_t>(s.outer * s.channels * pieces_per_row));
  int64_t base = 0;
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t c = 0; c < s.channels; ++c, base += s.inner) {
      const float sc = scale.data_as<float>()[scale.numel() <= 1 ? 0 : c];
      const int32_t zp = zero_point_entry(ctx.has_input(2) ? &ctx.input(2) : nullptr, c);
      for (int64_t p = 0; p < pieces_per_row; ++p) {
        const int64_t b = base + s.inner * p / pieces_per_row / 8 * 8;
        const int64_t e = p + 1 == pieces_per_row ? base + s.inner : base + s.inner * (p + 1) / pieces_per_row / 8 * 8;
        if (e > b) rows.push_back({b, e, sc, zp});
      }
    }
  }
  return rows;
}

// Runs fn(row) over the rows of x, in parallel when there is enough data.
template <class F>
void for_rows(const KernelContext& ctx, const Shape& x, F fn) {
  ThreadPool* pool = ctx.pool();
  const int64_t n = x.numel();
  const int64_t threads = pool ? pool->threads() : 1;
  const int parts = static_cast<int>(std::clamp<int64_t>(n / kElementsPerPart, 1, threads));
  const Tensor& scale = ctx.input(1);
  // One row (per tensor) is cut into one piece per part; many rows are dealt out whole.
  const std::vector<Row> rows = rows_of(ctx, x, scale.numel() <= 1 ? parts : 1);
  const auto count = static_cast<int64_t>(rows.size());
  parallel_for(pool, std::min<int64_t>(parts, count), 1, [&](int64_t begin, int64_t end) {
    const int64_t chunks = std::min<int64_t>(parts, count);
    for (int64_t p = begin; p < end; ++p)
      for (int64_t r = count * p / chunks; r < count * (p + 1) / chunks; ++r) fn(rows[static_cast<size_t>(r)]);
  });
}

// Whether the vector kernels take the call: float32 scale of one value or one per entry of an
// axis (not blocked), float32 data on the float side, uint8 / int8 on the other.
bool takes(const KernelContext& ctx, DType float_side) {
  const Tensor& scale = ctx.input(1);
  if (scale.dtype() != DType::F32 || scale.rank() > 1 || float_side != DType::F32) return false;
  if (ctx.attrs().get_int("block_size", 0) != 0) return false;
  return !ctx.has_input(2) || ctx.input(2).dtype() == DType::U8 || ctx.input(2).dtype() == DType::I8;
}

class LinearQuantKernel final : public Kernel {
 public:
  LinearQuantKernel(bool quantize, std::unique_ptr<Kernel> reference)
      : quantize_(quantize), reference_(std::move(reference)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const DType q = quantize_ ? y.dtype() : x.dtype();
    if (!takes(ctx, quantize_ ? x.dtype() : y.dtype()) || (q != DType::U8 && q != DType::I8))
      return reference_->run(ctx);
    if (x.numel() == 0) return Status::ok();
    const bool is_signed = q == DType::I8;
    if (per_last_axis(ctx, x.shape())) {
      const Tensor& scale = ctx.input(1);
      const int64_t channels = scale.numel();
      const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
      std::vector<int32_t> zero(static_cast<size_t>(channels));
      for (int64_t c = 0; c < channels; ++c) zero[static_cast<size_t>(c)] = zero_point_entry(zp, c);
      if (quantize_) {
        const std::vector<float> zero_f(zero.begin(), zero.end());
        for_last_axis_rows(ctx, x.shape(), [&](int64_t r0, int64_t r1, int64_t k) {
          quantize_last_axis(x.data_as<float>(), y.data_as<uint8_t>(), r0, r1, k, scale.data_as<float>(), zero_f.data(),
                             is_signed);
        });
      } else {
        for_last_axis_rows(ctx, x.shape(), [&](int64_t r0, int64_t r1, int64_t k) {
          dequantize_last_axis(static_cast<const uint8_t*>(x.data()), y.data_as<float>(), r0, r1, k,
                               scale.data_as<float>(), zero.data(), is_signed);
        });
      }
      return Status::ok();
    }
    if (quantize_) {
      for_rows(ctx, x.shape(), [&](const Row& r) { quantize_row(x.data_as<float>(), y.data_as<uint8_t>(), r, is_signed); });
    } else {
      for_rows(ctx, x.shape(), [&](const Row& r) {
        dequantize_row(static_cast<const uint8_t*>(x.data()), y.data_as<float>(), r, is_signed);
      });
    }
    return Status::ok();
  }

 private:
  bool quantize_;
  std::unique_ptr<Kernel> reference_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> create_quantize_linear_avx2(const KernelInit& init) {
  IGNIS_ASSIGN_OR_RETURN(auto reference, make_reference_kernel("", "QuantizeLinear", init, init.input_dtypes[0]));
  return std::unique_ptr<Kernel>(std::make_unique<LinearQuantKernel>(true, std::move(reference)));
}

Result<std::unique_ptr<Kernel>> create_dequantize_linear_avx2(const KernelInit& init) {
  IGNIS_ASSIGN_OR_RETURN(auto reference, make_reference_kernel("", "DequantizeLinear", init, init.input_dtypes[0]));
  return std::unique_ptr<Kernel>(std::make_unique<LinearQuantKernel>(false, std::move(reference)));
}

}  // namespace ignis::kernels::x86
