// SPDX-License-Identifier: Apache-2.0
// Signed A made safe for the AVX2 int8 tile's vpmaddubsw (gemm_int8.h, Int8PairSplit): the
// unsafe pairs found 32 bytes at a time, each moved to +-128 with the rest listed.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/x86/gemm_int8.h"

namespace ignis::kernels::x86 {

namespace {

// Moves the second value of the pair at row[k0], row[k0 + 1] so the pair is safe for
// vpmaddubsw (gemm_int8.h, Int8PairSplit); what it took off goes to the quad's bytes in
// `taken` (keyed by quad).
inline void split_pair(int8_t* row, int64_t k0, std::vector<std::pair<int32_t, uint32_t>>& taken) {
  const int v0 = row[k0], v1 = row[k0 + 1];
  int kept;
  if (std::max(v0, 0) + std::max(v1, 0) > 128) kept = 128 - v0;
  else if (std::min(v0, 0) + std::min(v1, 0) < -128) kept = -128 - v0;
  else return;
  row[k0 + 1] = static_cast<int8_t>(kept);
  const uint32_t bytes = static_cast<uint32_t>(static_cast<uint8_t>(v1 - kept)) << (8 * (k0 % kInt8Quad + 1));
  const auto q = static_cast<int32_t>(k0 / kInt8Quad);
  if (!taken.empty() && taken.back().first == q) taken.back().second |= bytes;  // the quad's other pair
  else taken.emplace_back(q, bytes);
}

// Unsafe pairs among the 16 of the 32 values at p (a bit per byte of each unsafe pair, as
// _mm256_movemask_epi8 gives).
inline uint32_t unsafe_mask(const int8_t* p) {
  const __m256i zero = _mm256_setzero_si256(), ones8 = _mm256_set1_epi8(1);
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i pos = _mm256_maddubs_epi16(ones8, _mm256_max_epi8(v, zero));
  const __m256i neg = _mm256_maddubs_epi16(ones8, _mm256_min_epi8(v, zero));
  const __m256i unsafe =
      _mm256_or_si256(_mm256_cmpgt_epi16(pos, _mm256_set1_epi16(128)), _mm256_cmpgt_epi16(_mm256_set1_epi16(-128), neg));
  return static_cast<uint32_t>(_mm256_movemask_epi8(unsafe));
}

// sum_k a[k] and the number of unsafe pairs of one row of k values.
std::pair<int32_t, int64_t> scan_row(const int8_t* a, int64_t k) {
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  __m256i sum = _mm256_setzero_si256();
  int64_t unsafe = 0, kk = 0;
  for (; kk + 32 <= k; kk += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + kk));
    sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, v), ones16));
    unsafe += __builtin_popcount(unsafe_mask(a + kk)) / 2;
  }
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sum);
  int32_t total = lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
  for (; kk < k; kk += 2) {
    const int v0 = a[kk], v1 = kk + 1 < k ? a[kk + 1] : 0;
    total += v0 + v1;
    unsafe += std::max(v0, 0) + std::max(v1, 0) > 128 || std::min(v0, 0) + std::min(v1, 0) < -128;
  }
  return {total, unsafe};
}

// Splits one row already copied to `row` (ld long, zero past k), listing what it takes off in
// `taken` in order of quads.
void split_row(int8_t* row, int64_t k, std::vector<std::pair<int32_t, uint32_t>>& taken) {
  int64_t kk = 0;
  for (; kk + 32 <= k; kk += 32) {
    if (unsafe_mask(row + kk) == 0) continue;
    for (int64_t k0 = kk; k0 < kk + 32; k0 += 2) split_pair(row, k0, taken);
  }
  for (; kk < k; kk += 2) split_pair(row, kk, taken);  // past K, row holds 0
}

}  // namespace

void int8_split_pairs(const int8_t* a, int64_t lda, int64_t k, int64_t i0, int64_t i1, Int8PairSplit& s) {
  const int64_t rows = i1 - i0;
  s.i0 = i0;
  s.ld = (k + kInt8Quad - 1) / kInt8Quad * kInt8Quad;
  s.main.assign(static_cast<size_t>(rows * s.ld), 0);
  s.sums.assign(static_cast<size_t>(rows), 0);
  s.start.assign(1, 0);
  s.quad.clear();
  s.word.clear();
  int64_t unsafe = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const auto [sum, count] = scan_row(a + (i0 + r) * lda, k);
    s.sums[static_cast<size_t>(r)] = sum;
    unsafe += count;
    std::memcpy(s.main.data() + r * s.ld, a + (i0 + r) * lda, static_cast<size_t>(k));
  }
  // The split tile runs a row step in about 0.78x the sign tile's time (three vector
  // instructions per 32 multiply-adds against four) and a listed quad costs about 1.5 row
  // steps: with more unsafe pairs than ~15% of the quads, A as given is faster.
  s.split = static_cast<double>(unsafe) <= 0.15 * static_cast<double>(rows * (s.ld / kInt8Quad));
  if (!s.split) {
    s.start.assign(static_cast<size_t>(rows + 1), 0);
    return;
  }
  std::vector<std::pair<int32_t, uint32_t>> taken;
  for (int64_t r = 0; r < rows; ++r) {
    taken.clear();
    split_row(s.main.data() + r * s.ld, k, taken);
    for (const auto& [q, bytes] : taken) {
      s.quad.push_back(q);
      s.word.push_back(static_cast<int32_t>(bytes));
    }
    s.start.push_back(static_cast<int32_t>(s.quad.size()));
  }
}

}  // namespace ignis::kernels::x86
