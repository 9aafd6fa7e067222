// SPDX-License-Identifier: Apache-2.0
// AVX2 com.microsoft QLinearMul (uint8 / int8): the squeeze-excitation gate of a quantized
// EfficientNet-style network (x [N, C, H, W] times a gate [N, C, 1, 1]), which
// fuse_qdq_into_qlinear_mul makes of DequantizeLinear, DequantizeLinear, Mul, QuantizeLinear.
// Two forms run here, split over the threads: A and B of one shape, and one operand whose shape
// is a prefix of C's followed by ones (a scalar is the empty prefix), each of whose values then
// multiplies a contiguous run of the other; other broadcasts run the reference kernel. 8 lanes
// at a time, 16 on CPUs with AVX-512 (quantize_mul_avx512.cc). Each lane does the reference's
// arithmetic (kernels/qlinear_mul.h): the exact integer product, its float32 times the ratio,
// round half to even, the zero point added in float, saturation.
#include <immintrin.h>

#include <algorithm>

#include "kernels/qlinear_mul.h"
#include "kernels/x86/quantize_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

__m256i widen(const uint8_t* p, bool is_signed) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
}

int32_t value(uint8_t v, bool is_signed) {
  return is_signed ? static_cast<int32_t>(static_cast<int8_t>(v)) : static_cast<int32_t>(v);
}

// 8 centered products (a - a_zp) * (b - b_zp) to 8 bytes at c.
void store_products(__m256i products, const QLinearMulParams& p, uint8_t* c) {
  const __m256 zc = _mm256_set1_ps(static_cast<float>(p.c_zero_point));
  const __m256 lo = _mm256_set1_ps(p.is_signed ? -128.0f : 0.0f), hi = _mm256_set1_ps(p.is_signed ? 127.0f : 255.0f);
  const __m256 scaled = _mm256_mul_ps(_mm256_cvtepi32_ps(products), _mm256_set1_ps(p.ratio));
  __m256 q = _mm256_round_ps(scaled, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  q = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, zc), lo), hi);
  const __m256i w = _mm256_cvtps_epi32(q);
  const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
  // In range already, so either pack keeps the values.
  _mm_storel_epi64(reinterpret_cast<__m128i*>(c), p.is_signed ? _mm_packs_epi16(w16, w16) : _mm_packus_epi16(w16, w16));
}

// c[i] for i in [begin, end) from a[i] and b[i].
void mul_same(const uint8_t* a, const uint8_t* b, uint8_t* c, int64_t begin, int64_t end, const QLinearMulParams& p,
              bool avx512) {
  const __m256i za = _mm256_set1_epi32(p.a_zero_point), zb = _mm256_set1_epi32(p.b_zero_point);
  int64_t i = avx512 ? qlinear_mul_range_avx512(a, b, c, begin, end, p) : begin;
  for (; i + 8 <= end; i += 8) {
    const __m256i ca = _mm256_sub_epi32(widen(a + i, p.is_signed), za);
    const __m256i cb = _mm256_sub_epi32(widen(b + i, p.is_signed), zb);
    store_products(_mm256_mullo_epi32(ca, cb), p, c + i);
  }
  for (; i < end; ++i)
    c[i] = static_cast<uint8_t>(qlinear_mul_one(value(a[i], p.is_signed), value(b[i], p.is_signed), p));
}

// c[i] for i in [0, n) from full[i] and one value `one` of the other operand (A's when
// !full_is_a).
void mul_run(const uint8_t* full, int32_t one, bool full_is_a, uint8_t* c, int64_t n, const QLinearMulParams& p,
             bool avx512) {
  const int32_t full_zp = full_is_a ? p.a_zero_point : p.b_zero_point;
  const int32_t one_zp = full_is_a ? p.b_zero_point : p.a_zero_point;
  const __m256i zf = _mm256_set1_epi32(full_zp), s = _mm256_set1_epi32(one - one_zp);
  int64_t i = avx512 ? qlinear_mul_run_avx512(full, full_zp, one - one_zp, c, n, p) : 0;
  for (; i + 8 <= n; i += 8)
    store_products(_mm256_mullo_epi32(_mm256_sub_epi32(widen(full + i, p.is_signed), zf), s), p, c + i);
  for (; i < n; ++i) {
    const int32_t f = value(full[i], p.is_signed);
    c[i] = static_cast<uint8_t>(full_is_a ? qlinear_mul_one(f, one, p) : qlinear_mul_one(one, f, p));
  }
}

// The number of C's leading values one value of `small` covers when small's shape is a prefix
// of c's followed by ones (rank-aligned from the right as broadcasting aligns), else 0.
int64_t run_length(const Shape& small, const Shape& c) {
  if (small.rank() > c.rank()) return 0;
  if (small.numel() == 1) return c.numel();  // a scalar, of any rank up to c's
  const int64_t lead = c.rank() - small.rank();
  // small's dims, aligned with c's last small.rank() dims: a prefix equal to c's, then ones.
  int64_t k = 0;
  while (k < small.rank() && small[k] == c[lead + k]) ++k;
  for (int64_t j = k; j < small.rank(); ++j)
    if (small[j] != 1) return 0;
  // A leading dim of c that small lacks must be 1 for small's values to map to leading runs.
  for (int64_t j = 0; j < lead; ++j)
    if (c[j] != 1) return 0;
  return c.numel(lead + k, c.rank());
}

class QLinearMulKernel final : public Kernel {
 public:
  explicit QLinearMulKernel(std::unique_ptr<Kernel> reference) : reference_(std::move(reference)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    Tensor& c = ctx.output(0);
    const QLinearMulParams p = qlinear_mul_params(ctx);
    const auto* pa = static_cast<const uint8_t*>(a.data());
    const auto* pb = static_cast<const uint8_t*>(b.data());
    auto* pc = static_cast<uint8_t*>(c.data());
    const int64_t n = c.numel();
    if (n == 0) return Status::ok();
    const bool avx512 = isa_enabled(Isa::Avx512);
    if (a.shape() == b.shape()) {
      // A part per ~8 Ki elements, each a whole number of vectors.
      const int parts = parallel_parts(ctx.pool(), n * 8, n / 8 + 1);
      parallel_for(ctx.pool(), parts, 1, [&](int64_t begin, int64_t end) {
        for (int64_t part = begin; part < end; ++part) {
          const int64_t lo = n * part / parts / 8 * 8, hi = part + 1 == parts ? n : n * (part + 1) / parts / 8 * 8;
          mul_same(pa, pb, pc, lo, hi, p, avx512);
        }
      });
      return Status::ok();
    }
    // One operand as long as C, the other one value per run of it.
    const bool a_full = a.numel() == n;
    const Tensor& small = a_full ? b : a;
    const int64_t run = (a_full || b.numel() == n) ? run_length(small.shape(), c.shape()) : 0;
    if (run == 0 || small.numel() * run != n) return reference_->run(ctx);
    const uint8_t* full = a_full ? pa : pb;
    const auto* ps = static_cast<const uint8_t*>(small.data());
    const int64_t runs = small.numel();
    const int parts = parallel_parts(ctx.pool(), n * 8, runs);
    parallel_for(ctx.pool(), parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part)
        for (int64_t r = runs * part / parts; r < runs * (part + 1) / parts; ++r)
          mul_run(full + r * run, value(ps[r], p.is_signed), a_full, pc + r * run, run, p, avx512);
    });
    return Status::ok();
  }

 private:
  std::unique_ptr<Kernel> reference_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> create_qlinear_mul_avx2(const KernelInit& init) {
  IGNIS_ASSIGN_OR_RETURN(auto reference, make_reference_kernel("com.microsoft", "QLinearMul", init, init.input_dtypes[0]));
  return std::unique_ptr<Kernel>(std::make_unique<QLinearMulKernel>(std::move(reference)));
}

}  // namespace ignis::kernels::x86
