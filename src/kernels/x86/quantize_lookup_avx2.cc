// SPDX-License-Identifier: Apache-2.0
// The byte table lookup of ai.ignis QLinearLookup on AVX2: 32 bytes at a time. vpshufb looks
// up 16-entry tables only, so the 256-entry table is 16 tables of 16 (entry hi * 16 + lo in
// table hi at lo): each is looked up by the low nibble, then the 16 results are narrowed to
// one by the high nibble's four bits, a binary tree of blends from bit 4 up (each bit shifted
// to a byte's top bit, which vpblendvb reads).
#include <immintrin.h>

#include <cstring>

#include "kernels/x86/quantize_lookup.h"

namespace ignis::kernels::x86 {

namespace {

struct Tables {
  __m256i t[16];  // table c in both 128-bit halves
};

// The entry of each byte of v (already flipped) in the 16 tables.
inline __m256i lookup32(const Tables& tb, __m256i v) {
  const __m256i lo = _mm256_and_si256(v, _mm256_set1_epi8(0x0F));
  const __m256i bit4 = _mm256_slli_epi16(v, 3), bit5 = _mm256_slli_epi16(v, 2), bit6 = _mm256_slli_epi16(v, 1);
  auto pair = [&](int c) {  // tables c, c + 1: they differ in bit 4
    return _mm256_blendv_epi8(_mm256_shuffle_epi8(tb.t[c], lo), _mm256_shuffle_epi8(tb.t[c + 1], lo), bit4);
  };
  auto quad = [&](int c) { return _mm256_blendv_epi8(pair(c), pair(c + 2), bit5); };
  auto octet = [&](int c) { return _mm256_blendv_epi8(quad(c), quad(c + 4), bit6); };
  return _mm256_blendv_epi8(octet(0), octet(8), v);
}

}  // namespace

void qlinear_lookup_avx2(const uint8_t* x, uint8_t flip, const uint8_t* table, uint8_t* y, int64_t n) {
  Tables tb;
  for (int c = 0; c < 16; ++c)
    tb.t[c] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * c)));
  const __m256i f = _mm256_set1_epi8(static_cast<char>(flip));
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)), f);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), lookup32(tb, v));
  }
  if (i < n) {  // the tail through a 32-byte buffer
    alignas(32) uint8_t buf[32] = {};
    const size_t rest = static_cast<size_t>(n - i);
    std::memcpy(buf, x + i, rest);
    const __m256i v = _mm256_xor_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(buf)), f);
    _mm256_store_si256(reinterpret_cast<__m256i*>(buf), lookup32(tb, v));
    std::memcpy(y + i, buf, rest);
  }
}

}  // namespace ignis::kernels::x86
