// SPDX-License-Identifier: Apache-2.0
// A made safe for the AVX2 int8 tile's vpmaddubsw (gemm_int8.h, Int8PairSplit): 32 values at a
// time checked in int16 (in int8's range, every pair safe) and stored as they are; the rest
// split quad by quad, what does not fit listed as extra quads.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "kernels/x86/gemm_int8.h"

namespace ignis::kernels::x86 {

namespace {

// The part of the pair (v0, v1) that int8 holds and vpmaddubsw sums exactly: each value clamped
// to [-128, 127], then the second moved so that the positive values sum to at most 128 and the
// negative ones to at least -128.
inline void safe_part(int v0, int v1, int& p0, int& p1) {
  p0 = std::clamp(v0, -128, 127);
  p1 = std::clamp(v1, -128, 127);
  if (std::max(p0, 0) + std::max(p1, 0) > 128) p1 = 128 - p0;
  else if (std::min(p0, 0) + std::min(p1, 0) < -128) p1 = -128 - p0;
}

// One quad's 4 values v (any int in [-383, 383]): its safe part to `main`, and what is left,
// again in safe parts, appended to the row's extra quads until nothing is.
void split_quad(const int* v, int32_t q, int8_t* main, Int8PairSplit& s) {
  int rest[4];
  for (int t = 0; t < 4; t += 2) {
    int p0, p1;
    safe_part(v[t], v[t + 1], p0, p1);
    main[t] = static_cast<int8_t>(p0);
    main[t + 1] = static_cast<int8_t>(p1);
    rest[t] = v[t] - p0;
    rest[t + 1] = v[t + 1] - p1;
  }
  while (rest[0] != 0 || rest[1] != 0 || rest[2] != 0 || rest[3] != 0) {
    uint32_t word = 0;
    for (int t = 0; t < 4; t += 2) {
      int p0, p1;
      safe_part(rest[t], rest[t + 1], p0, p1);
      word |= static_cast<uint32_t>(static_cast<uint8_t>(p0)) << (8 * t);
      word |= static_cast<uint32_t>(static_cast<uint8_t>(p1)) << (8 * (t + 1));
      rest[t] -= p0;
      rest[t + 1] -= p1;
    }
    s.quad.push_back(q);
    s.word.push_back(static_cast<int32_t>(word));
  }
}

// 16 raw bytes at p as int16 values less `offset`.
inline __m256i values16(const uint8_t* p, bool is_unsigned, __m256i offset) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_sub_epi16(is_unsigned ? _mm256_cvtepu8_epi16(raw) : _mm256_cvtepi8_epi16(raw), offset);
}

// Whether 16 int16 values are all in int8's range with every pair safe.
inline bool all_safe(__m256i v) {
  const __m256i ones = _mm256_set1_epi16(1), zero = _mm256_setzero_si256();
  const __m256i pos = _mm256_madd_epi16(_mm256_max_epi16(v, zero), ones);
  const __m256i neg = _mm256_madd_epi16(_mm256_min_epi16(v, zero), ones);
  __m256i bad = _mm256_or_si256(_mm256_cmpgt_epi16(v, _mm256_set1_epi16(127)),
                                _mm256_cmpgt_epi16(_mm256_set1_epi16(-128), v));
  bad = _mm256_or_si256(bad, _mm256_cmpgt_epi32(pos, _mm256_set1_epi32(128)));
  bad = _mm256_or_si256(bad, _mm256_cmpgt_epi32(_mm256_set1_epi32(-128), neg));
  return _mm256_testz_si256(bad, bad);
}

// Splits one row of k raw bytes (values raw - offset) into `main` (ld long, zero past k) and
// the extra quads; returns the values' sum, or nothing once more than `budget` quads are listed
// in all.
std::optional<int32_t> split_row(const uint8_t* raw, bool is_unsigned, int offset, int64_t k, int8_t* main,
                                 size_t budget, Int8PairSplit& s) {
  const __m256i off = _mm256_set1_epi16(static_cast<int16_t>(offset)), ones = _mm256_set1_epi16(1);
  __m256i sum = _mm256_setzero_si256();
  int v[4];
  const auto scalar_quads = [&](int64_t from, int64_t to) {  // quads [from, to) of the row
    for (int64_t q = from; q < to; ++q) {
      for (int t = 0; t < 4; ++t) {
        const int64_t kk = q * kInt8Quad + t;
        v[t] = kk < k ? (is_unsigned ? raw[kk] : static_cast<int8_t>(raw[kk])) - offset : 0;
      }
      split_quad(v, static_cast<int32_t>(q), main + q * kInt8Quad, s);
    }
  };
  int64_t kk = 0;
  for (; kk + 32 <= k; kk += 32) {
    const __m256i lo = values16(raw + kk, is_unsigned, off), hi = values16(raw + kk + 16, is_unsigned, off);
    sum = _mm256_add_epi32(sum, _mm256_add_epi32(_mm256_madd_epi16(lo, ones), _mm256_madd_epi16(hi, ones)));
    if (all_safe(lo) && all_safe(hi)) {
      // packs interleaves the 128-bit halves; the permute puts the 32 bytes back in order.
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(main + kk),
                          _mm256_permute4x64_epi64(_mm256_packs_epi16(lo, hi), 0xD8));
    } else {
      scalar_quads(kk / kInt8Quad, (kk + 32) / kInt8Quad);
      if (s.quad.size() > budget) return std::nullopt;
    }
  }
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sum);
  int32_t total = lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
  for (int64_t t = kk; t < k; ++t) total += (is_unsigned ? raw[t] : static_cast<int8_t>(raw[t])) - offset;
  scalar_quads(kk / kInt8Quad, (k + kInt8Quad - 1) / kInt8Quad);
  return total;
}

}  // namespace

void int8_split_rows(const uint8_t* a, bool is_unsigned, const int32_t* offsets, int64_t lda, int64_t k, int64_t i0,
                     int64_t i1, Int8PairSplit& s) {
  const int64_t rows = i1 - i0;
  s.i0 = i0;
  s.ld = (k + kInt8Quad - 1) / kInt8Quad * kInt8Quad;
  s.main.assign(static_cast<size_t>(rows * s.ld), 0);
  s.sums.assign(static_cast<size_t>(rows), 0);
  s.start.assign(1, 0);
  s.quad.clear();
  s.word.clear();
  // The split tile runs a row step in about 0.78x the sign tile's time (three vector
  // instructions per 32 multiply-adds against four) and an extra quad costs about 1.5 row
  // steps: with more than ~15% of the quads listed, the sign tile on A as given is faster (and
  // splitting stops there: on uniform int8 A it would cost half the GEMM's time).
  const auto budget = static_cast<size_t>(0.15 * static_cast<double>(rows * (s.ld / kInt8Quad)));
  s.split = true;
  for (int64_t r = 0; r < rows && s.split; ++r) {
    const int offset = offsets ? offsets[i0 + r] : 0;
    const std::optional<int32_t> sum =
        split_row(a + (i0 + r) * lda, is_unsigned, offset, k, s.main.data() + r * s.ld, budget, s);
    s.split = sum.has_value() && s.quad.size() <= budget;
    s.sums[static_cast<size_t>(r)] = sum.value_or(0);
    s.start.push_back(static_cast<int32_t>(s.quad.size()));
  }
  if (s.split) return;
  s.start.assign(static_cast<size_t>(rows + 1), 0);
  s.quad.clear();
  s.word.clear();
  if (is_unsigned || offsets) return;  // not representable as given: the caller takes another path
  std::fill(s.main.begin(), s.main.end(), int8_t{0});
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(s.main.data() + r * s.ld, a + (i0 + r) * lda, static_cast<size_t>(k));
    int32_t sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) sum += static_cast<int8_t>(a[(i0 + r) * lda + kk]);
    s.sums[static_cast<size_t>(r)] = sum;
  }
}

void int8_split_pairs(const int8_t* a, int64_t lda, int64_t k, int64_t i0, int64_t i1, Int8PairSplit& s) {
  int8_split_rows(reinterpret_cast<const uint8_t*>(a), false, nullptr, lda, k, i0, i1, s);
}

}  // namespace ignis::kernels::x86
