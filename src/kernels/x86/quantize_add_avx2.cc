// SPDX-License-Identifier: Apache-2.0
// AVX2 com.microsoft QLinearAdd (uint8 / int8): the residual sum of a quantized CNN, which
// fuse_qdq_into_qlinear_add makes of DequantizeLinear, DequantizeLinear, Add, QuantizeLinear. It
// reads and writes bytes where the QDQ form wrote and read three float tensors. A and B of one
// shape run 8 lanes at a time (16 on CPUs with AVX-512: quantize_add_avx512.cc), split over
// the threads; broadcasting goes to the reference kernel. Each lane does the reference's float32 arithmetic in its order (kernels/qlinear_add.h:
// two products by the scale ratios and a sum, no fused multiply-add; round half to even, the
// zero point added in float, saturation), so both give the same bytes.
#include <immintrin.h>

#include <algorithm>

#include "kernels/qlinear_add.h"
#include "kernels/x86/quantize_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

__m256i widen(const uint8_t* p, bool is_signed) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
}

void add_range(const uint8_t* a, const uint8_t* b, uint8_t* c, int64_t begin, int64_t end, const QLinearAddParams& p,
               bool avx512) {
  if (avx512) begin = qlinear_add_range_avx512(a, b, c, begin, end, p);
  const __m256i za = _mm256_set1_epi32(p.a_zero_point), zb = _mm256_set1_epi32(p.b_zero_point);
  const __m256 sa = _mm256_set1_ps(p.a_ratio), sb = _mm256_set1_ps(p.b_ratio);
  const __m256 zc = _mm256_set1_ps(static_cast<float>(p.c_zero_point));
  const __m256 lo = _mm256_set1_ps(p.is_signed ? -128.0f : 0.0f), hi = _mm256_set1_ps(p.is_signed ? 127.0f : 255.0f);
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m256 fa = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(widen(a + i, p.is_signed), za)), sa);
    const __m256 fb = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(widen(b + i, p.is_signed), zb)), sb);
    __m256 q = _mm256_round_ps(_mm256_add_ps(fa, fb), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, zc), lo), hi);  // max(NaN, lo) is lo
    const __m256i w = _mm256_cvtps_epi32(q);
    const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
    // In range already, so either pack keeps the values.
    _mm_storel_epi64(reinterpret_cast<__m128i*>(c + i), p.is_signed ? _mm_packs_epi16(w16, w16) : _mm_packus_epi16(w16, w16));
  }
  for (; i < end; ++i) {
    const auto value = [&](uint8_t v) { return p.is_signed ? static_cast<int32_t>(static_cast<int8_t>(v)) : static_cast<int32_t>(v); };
    c[i] = static_cast<uint8_t>(qlinear_add_one(value(a[i]), value(b[i]), p));
  }
}

class QLinearAddKernel final : public Kernel {
 public:
  explicit QLinearAddKernel(std::unique_ptr<Kernel> reference) : reference_(std::move(reference)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    if (!(a.shape() == b.shape())) return reference_->run(ctx);
    const QLinearAddParams p = qlinear_add_params(ctx);
    const auto* pa = static_cast<const uint8_t*>(a.data());
    const auto* pb = static_cast<const uint8_t*>(b.data());
    auto* pc = static_cast<uint8_t*>(ctx.output(0).data());
    const int64_t n = a.numel();
    // A part per ~8 Ki elements (a few microseconds of work), each a whole number of vectors.
    const int parts = parallel_parts(ctx.pool(), n * 8, n / 16 + 1);
    const bool avx512 = isa_enabled(Isa::Avx512);
    parallel_for(ctx.pool(), parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        const int64_t lo = n * part / parts / 16 * 16, hi = part + 1 == parts ? n : n * (part + 1) / parts / 16 * 16;
        add_range(pa, pb, pc, lo, hi, p, avx512);
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
