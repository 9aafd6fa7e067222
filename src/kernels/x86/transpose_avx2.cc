// SPDX-License-Identifier: Apache-2.0
// AVX2 transpose of 4-byte elements. The view is split into the plane (k, last), in which
// output rows along last read the source with stride s[last] while output dim k is
// contiguous in the source, and the other dims, walked as independent planes. Each plane is
// cut into strips of kStrip output rows (one work item); a strip moves as 8x8 blocks: eight
// source lines of 8 contiguous elements are loaded, transposed in registers (transpose8) and
// stored as 8 output rows of 8. Block edges go element by element. A strip reads kStrip
// elements from each of up to d[last] source lines and writes kStrip output rows, which with
// kStrip = 32 stays within L1 for rows of a few thousand elements.
#include "kernels/x86/transpose_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int64_t kStrip = 32;

// Output rows [k0, k1) of one plane: out[kk * ok + j] = in[kk + j * sj] for j < n.
void transpose_strip(float* out, const float* in, int64_t k0, int64_t k1, int64_t ok, int64_t n, int64_t sj) {
  int64_t kk = k0;
  for (; kk + 8 <= k1; kk += 8) {
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
      __m256 r[8];
      for (int q = 0; q < 8; ++q) r[q] = _mm256_loadu_ps(in + kk + (j + q) * sj);
      transpose8(r);
      for (int q = 0; q < 8; ++q) _mm256_storeu_ps(out + (kk + q) * ok + j, r[q]);
    }
    for (; j < n; ++j)
      for (int q = 0; q < 8; ++q) out[(kk + q) * ok + j] = in[kk + q + j * sj];
  }
  for (; kk < k1; ++kk)
    for (int64_t j = 0; j < n; ++j) out[kk * ok + j] = in[kk + j * sj];
}

}  // namespace

void transpose_tiles_b32_avx2(void* dst, const void* src, const std::vector<int64_t>& d,
                              const std::vector<int64_t>& s, int k, ThreadPool* pool) {
  const int rank = static_cast<int>(d.size());
  const int last = rank - 1;
  std::vector<int64_t> o(rank);  // dense output strides
  int64_t acc = 1;
  for (int i = rank - 1; i >= 0; --i) {
    o[i] = acc;
    acc *= d[i];
  }
  std::vector<int> others;
  int64_t planes = 1;
  for (int i = 0; i < last; ++i)
    if (i != k) {
      others.push_back(i);
      planes *= d[i];
    }
  const int64_t strips = (d[k] + kStrip - 1) / kStrip;
  // Bit copies: float loads and stores move any 4-byte pattern unchanged.
  float* out = static_cast<float*>(dst);
  const float* in = static_cast<const float*>(src);
  parallel_for(pool, planes * strips, std::max<int64_t>(1, (int64_t{1} << 14) / (kStrip * d[last])),
               [&](int64_t begin, int64_t end) {
                 for (int64_t item = begin; item < end; ++item) {
                   int64_t rem = item / strips, src_off = 0, dst_off = 0;
                   for (int j = static_cast<int>(others.size()) - 1; j >= 0; --j) {
                     const int axis = others[j];
                     const int64_t idx = rem % d[axis];
                     rem /= d[axis];
                     src_off += idx * s[axis];
                     dst_off += idx * o[axis];
                   }
                   const int64_t k0 = (item % strips) * kStrip, k1 = std::min(k0 + kStrip, d[k]);
                   transpose_strip(out + dst_off, in + src_off, k0, k1, o[k], d[last], s[last]);
                 }
               });
}

}  // namespace ignis::kernels::x86
