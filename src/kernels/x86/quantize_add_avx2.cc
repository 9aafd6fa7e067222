// SPDX-License-Identifier: Apache-2.0
// AVX2 com.microsoft QLinearAdd (uint8 / int8): the residual sum of a quantized CNN, which
// fuse_qdq_into_qlinear_add makes of DequantizeLinear, DequantizeLinear, Add, QuantizeLinear. It
// reads and writes bytes where the QDQ form wrote and read three float tensors; and a
// transformer's quantized bias and attention-mask adds ([..., N] + [N], [B, H, S, S] +
// [B, 1, 1, S]). The output is walked row by row in broadcast_layout.h's coalesced form, each
// row reading each operand contiguously or as one repeated value, 8 lanes at a time (rows of
// two contiguous operands 16 at a time on CPUs with AVX-512: quantize_add_avx512.cc), split
// over the threads; forms that do not coalesce to three dims go to the reference kernel. Each
// lane does the reference's float32 arithmetic in its order (kernels/qlinear_add.h: two
// products by the scale ratios and a sum, no fused multiply-add; round half to even, the zero
// point added in float, saturation), so both give the same bytes.
#include <immintrin.h>

#include <algorithm>

#include "kernels/qlinear_add.h"
#include "kernels/x86/broadcast_layout.h"
#include "kernels/x86/quantize_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

__m256i widen(const uint8_t* p, bool is_signed) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
}

// One row: c[i] from a[i * SA] and b[i * SB], i < n, strides 0 (one repeated value) or 1.
template <int SA, int SB>
void add_row(const uint8_t* a, const uint8_t* b, uint8_t* c, int64_t n, const QLinearAddParams& p, bool avx512) {
  int64_t i = 0;
  if constexpr (SA == 1 && SB == 1)
    if (avx512) i = qlinear_add_range_avx512(a, b, c, 0, n, p);
  const __m256i za = _mm256_set1_epi32(p.a_zero_point), zb = _mm256_set1_epi32(p.b_zero_point);
  const __m256 sa = _mm256_set1_ps(p.a_ratio), sb = _mm256_set1_ps(p.b_ratio);
  const __m256 zc = _mm256_set1_ps(static_cast<float>(p.c_zero_point));
  const __m256 lo = _mm256_set1_ps(p.is_signed ? -128.0f : 0.0f), hi = _mm256_set1_ps(p.is_signed ? 127.0f : 255.0f);
  const auto scaled = [&](const uint8_t* v, __m256i z, __m256 s) {
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(widen(v, p.is_signed), z)), s);
  };
  const auto value = [&](uint8_t v) {
    return p.is_signed ? static_cast<int32_t>(static_cast<int8_t>(v)) : static_cast<int32_t>(v);
  };
  // A repeated operand's term once: (v - z) * ratio, as the lanes would compute it.
  const __m256 fa_rep = SA == 0 ? _mm256_set1_ps(static_cast<float>(value(a[0]) - p.a_zero_point) * p.a_ratio) : sa;
  const __m256 fb_rep = SB == 0 ? _mm256_set1_ps(static_cast<float>(value(b[0]) - p.b_zero_point) * p.b_ratio) : sb;
  for (; i + 8 <= n; i += 8) {
    const __m256 fa = SA == 0 ? fa_rep : scaled(a + i, za, sa);
    const __m256 fb = SB == 0 ? fb_rep : scaled(b + i, zb, sb);
    __m256 q = _mm256_round_ps(_mm256_add_ps(fa, fb), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, zc), lo), hi);  // max(NaN, lo) is lo
    const __m256i w = _mm256_cvtps_epi32(q);
    const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
    // In range already, so either pack keeps the values.
    _mm_storel_epi64(reinterpret_cast<__m128i*>(c + i), p.is_signed ? _mm_packs_epi16(w16, w16) : _mm_packus_epi16(w16, w16));
  }
  for (; i < n; ++i) c[i] = static_cast<uint8_t>(qlinear_add_one(value(a[i * SA]), value(b[i * SB]), p));
}

void add_row_any(const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb, uint8_t* c, int64_t n,
                 const QLinearAddParams& p, bool avx512) {
  if (sa && sb) add_row<1, 1>(a, b, c, n, p, avx512);
  else if (sa) add_row<1, 0>(a, b, c, n, p, avx512);
  else if (sb) add_row<0, 1>(a, b, c, n, p, avx512);
  else add_row<0, 0>(a, b, c, n, p, avx512);
}

class QLinearAddKernel final : public Kernel {
 public:
  explicit QLinearAddKernel(std::unique_ptr<Kernel> reference) : reference_(std::move(reference)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    Tensor& c = ctx.output(0);
    if (c.numel() == 0) return Status::ok();
    BroadcastLayout l;
    if (!make_broadcast_layout(c.shape(), a.shape(), b.shape(), l)) return reference_->run(ctx);
    const QLinearAddParams p = qlinear_add_params(ctx);
    const auto* pa = static_cast<const uint8_t*>(a.data());
    const auto* pb = static_cast<const uint8_t*>(b.data());
    auto* pc = static_cast<uint8_t*>(c.data());
    const int64_t n = c.numel();
    // A part per ~8 Ki elements (a few microseconds of work), each a whole number of vectors.
    const int parts = parallel_parts(ctx.pool(), n * 8, n / 16 + 1);
    const bool avx512 = isa_enabled(Isa::Avx512);
    parallel_for(ctx.pool(), parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        const int64_t lo = n * part / parts / 16 * 16, hi = part + 1 == parts ? n : n * (part + 1) / parts / 16 * 16;
        for_each_broadcast_row(l, lo, hi, [&](int64_t oa, int64_t ob, int64_t at, int64_t len) {
          add_row_any(pa + oa, l.sa[0], pb + ob, l.sb[0], pc + at, len, p, avx512);
        });
      }
    });
    return Status::ok();
  }

 private:
  std::unique_ptr<Kernel> reference_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> create_qlinear_add_avx2(const KernelInit& init) {
  IGNIS_ASSIGN_OR_RETURN(auto reference, make_reference_kernel("com.microsoft", "QLinearAdd", init, init.input_dtypes[0]));
  return std::unique_ptr<Kernel>(std::make_unique<QLinearAddKernel>(std::move(reference)));
}

}  // namespace ignis::kernels::x86
