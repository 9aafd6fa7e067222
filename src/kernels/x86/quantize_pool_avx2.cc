// SPDX-License-Identifier: Apache-2.0
// AVX2 com.microsoft QLinearGlobalAveragePool over channels-first uint8 / int8 tensors: the
// classifier head of a quantized CNN (resnet50: 2048 channels of 7x7). Each channel's sum comes
// from vpsadbw against zero, 32 bytes at a time, then 16, then single bytes; int8 values are
// read as value + 128 (the sign bit flipped), and 128 per value taken off the sum. The sums are
// exact, and the requantization is the reference kernel's (kernels/qlinear_pool.h), so the bytes
// match it. Channels-last tensors and empty channels go to the reference kernel.
#include <immintrin.h>

#include <cstdint>

#include "kernels/qlinear_pool.h"
#include "kernels/x86/pool_window.h"
#include "kernels/x86/quantize_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

// The sum of v[0..n) ^ flip as unsigned bytes.
int64_t byte_sum(const uint8_t* v, int64_t n, uint8_t flip) {
  const __m256i flip32 = _mm256_set1_epi8(static_cast<char>(flip));
  __m256i acc = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i x = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + i)), flip32);
    acc = _mm256_add_epi64(acc, _mm256_sad_epu8(x, _mm256_setzero_si256()));
  }
  __m128i sum = _mm_add_epi64(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  if (i + 16 <= n) {
    const __m128i x = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i)), _mm256_castsi256_si128(flip32));
    sum = _mm_add_epi64(sum, _mm_sad_epu8(x, _mm_setzero_si128()));
    i += 16;
  }
  int64_t s = _mm_cvtsi128_si64(sum) + _mm_extract_epi64(sum, 1);
  for (; i < n; ++i) s += static_cast<uint8_t>(v[i] ^ flip);
  return s;
}

class QLinearGlobalAveragePoolKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<QLinearGlobalAveragePoolKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("com.microsoft", "QLinearGlobalAveragePool", init,
                                                                  init.input_dtypes[0]));
    k->channels_last_ = init.attrs.get_int("channels_last", 0) != 0;
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t size = x.shape().numel(2, x.rank());
    if (channels_last_ || size == 0) return reference_->run(ctx);
    const QLinearGlobalPoolParams p = qlinear_global_pool_params(ctx, size);
    const int64_t planes = x.dim(0) * x.dim(1);
    const auto* xs = static_cast<const uint8_t*>(x.data());
    auto* ys = static_cast<uint8_t*>(ctx.output(0).data());
    const uint8_t flip = p.is_signed ? 0x80 : 0x00;
    const int64_t offset = p.is_signed ? 128 * size : 0;
    auto run_planes = [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c)
        ys[c] = static_cast<uint8_t>(qlinear_average_one(byte_sum(xs + c * size, size, flip) - offset, p));
    };
    pool_window::split_planes(ctx.pool(), planes, planes * size, run_planes);
    return Status::ok();
  }

 private:
  std::unique_ptr<Kernel> reference_;  // channels last, empty channels
  bool channels_last_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> create_qlinear_global_average_pool_avx2(const KernelInit& init) {
  return QLinearGlobalAveragePoolKernel::create(init);
}

}  // namespace ignis::kernels::x86
