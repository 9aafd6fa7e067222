// SPDX-License-Identifier: Apache-2.0
// Each int8 GEMM tile (AVX2 3x16, and 6x16 with vpmaddubsw for int8 A, split per call or
// beforehand; AVX-512 VNNI 6x64;
// src/kernels/x86/gemm_int8.h) against a plain int64 loop over (a - za)(b - zb):
// int8 and uint8 B, transposed B, extreme values (where vpmaddubsw would saturate on the raw
// bytes), every zero-point form, depths that are not a multiple of 4,
// the edges of both tiles, a wider leading dimension of C, the float epilogue (row and column
// scales, bias), the requantizing epilogue (with exact ties), the run-time packer and the thread split (with L2
// chunks). Op-level behaviour is covered by the registry-wide consistency test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"
#include "kernels/x86/gemm_int8.h"

#ifdef IGNIS_HAVE_X86_KERNELS
namespace ignis::kernels::x86 {
namespace {

std::vector<const Int8GemmBackend*> backends() {
  std::vector<const Int8GemmBackend*> list;
  if (isa_available(Isa::Avx2)) list.push_back(&int8_gemm_backend_avx2());
  if (cpu_features().avx512vnni && cpu_features().avx512bw) list.push_back(&int8_gemm_backend_vnni());
  return list;
}

// Random bytes; `extreme` draws only the ends of the uint8 and int8 ranges (0, 255, 127, -128).
std::vector<uint8_t> random_bytes(size_t n, uint32_t seed, bool extreme) {
  static constexpr uint8_t kEnds[4] = {0x00, 0xFF, 0x7F, 0x80};
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = extreme ? kEnds[rng() % 4] : static_cast<uint8_t>(rng());
  return v;
}

struct Problem {
  int64_t m, n, k;
  bool b_unsigned = false;
  bool trans = false;
  bool extreme = false;
  bool row_zps = false;    // one A zero point per row (else one for all)
  bool col_zps = false;    // one B zero point per column
  bool to_float = false;
  int64_t ldc_pad = 0;
  bool a_signed = false;  // A as int8 in [-127, 127] (Int8GemmArgs::a_signed)
  // With a_signed: 0, A in [-127, 127]; else A in [-128, 127] through int8_signed_rows, with
  // 1: fewer -128s than 127s (held -128s, shift 0), 2: fewer 127s (held 127s, shift 1).
  int a_raised = 0;
  // With a_signed, on a backend with signed_a: A split once beforehand (Int8GemmArgs::a_split,
  // int8_split_pairs over every row), a_signed then pointing at bytes that are not A.
  bool presplit = false;
  // With a_signed: A mostly within +-16, one value in 16 anywhere in [-127, 127], as quantized
  // weights are (few unsafe pairs: the AVX2 tile splits them; uniform or extreme A it runs as
  // given).
  bool narrow = false;
};

// A's values: random bytes, or with `is_signed` random int8 values other than -128 (the extremes
// are then -127, 127, -1 and 0).
std::vector<uint8_t> a_bytes(size_t n, uint32_t seed, bool extreme, bool is_signed) {
  std::vector<uint8_t> a = random_bytes(n, seed, extreme);
  if (is_signed) {
    std::replace(a.begin(), a.end(), uint8_t{0}, uint8_t{1});
    for (uint8_t& v : a) v ^= 0x80u;
  }
  return a;
}

// The backends that take A as given: every one for uint8 A, those with signed_a for int8 A.
bool takes(const Int8GemmBackend& backend, bool a_signed) { return !a_signed || backend.signed_a; }

std::string describe(const Problem& p, const Int8GemmBackend& b) {
  return std::string(b.name) + " m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k) +
         (p.b_unsigned ? " u8 B" : " s8 B") + (p.trans ? " trans" : "") + (p.extreme ? " extreme" : "") +
         (p.row_zps ? " row zps" : "") + (p.col_zps ? " col zps" : "") + (p.to_float ? " float" : "") + (p.a_signed ? " s8 A" : "") + (p.a_raised ? " held " + std::to_string(p.a_raised) : "") + (p.presplit ? " presplit" : "") + (p.narrow ? " narrow" : "");
}

void check(const Problem& p, const Int8GemmBackend& backend, ThreadPool* pool, uint32_t seed) {
  const std::string where = describe(p, backend);
  std::vector<uint8_t> a = p.a_raised ? random_bytes(static_cast<size_t>(p.m * p.k), seed, p.extreme)
                                      : a_bytes(static_cast<size_t>(p.m * p.k), seed, p.extreme, p.a_signed);
  if (p.narrow && p.a_signed && !p.a_raised)
    for (uint8_t& v : a)
      if (v % 16 != 0) v = static_cast<uint8_t>(static_cast<int8_t>(v) / 8);
  if (p.a_raised) {  // every other one of the more common end's bytes moved to the rarer end
    const uint8_t rare = p.a_raised == 1 ? 0x80 : 0x7F, common = p.a_raised == 1 ? 0x7F : 0x80;
    int seen = 0;
    for (uint8_t& v : a)
      if (v == rare && seen++ % 2 == 0) v = common;
  }
  // The signed copy (values plus the shift, the held ones one step nearer zero) and per row the
  // depths of the held values.
  std::vector<int8_t> held(a.size());
  std::vector<int32_t> counts(static_cast<size_t>(p.m)), fix_start(static_cast<size_t>(p.m + 1), 0), fix_k;
  int a_shift = 0;
  if (p.a_raised) {
    a_shift = int8_signed_rows(a.data(), false, p.m, p.k, held.data(), counts.data());
    if (p.extreme) {
      ASSERT_EQ(a_shift, p.a_raised - 1);
    }
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t kk = 0; kk < p.k; ++kk) {
        const int v = static_cast<int8_t>(a[static_cast<size_t>(i * p.k + kk)]);
        ASSERT_EQ(held[static_cast<size_t>(i * p.k + kk)], std::clamp(v + a_shift, -127, 127));
        if (v + a_shift == -128 || v + a_shift == 128) fix_k.push_back(static_cast<int32_t>(kk));
      }
      fix_start[static_cast<size_t>(i + 1)] = static_cast<int32_t>(fix_k.size());
      ASSERT_EQ(counts[static_cast<size_t>(i)], fix_start[static_cast<size_t>(i + 1)] - fix_start[static_cast<size_t>(i)]);
    }
  }
  const auto a_at = [&](int64_t i, int64_t kk) -> int32_t {
    const uint8_t raw = a[static_cast<size_t>(i * p.k + kk)];
    return p.a_signed ? static_cast<int32_t>(static_cast<int8_t>(raw)) + a_shift : static_cast<int32_t>(raw);
  };
  const std::vector<uint8_t> b = random_bytes(static_cast<size_t>(p.k * p.n), seed + 1, p.extreme);
  std::mt19937 rng(seed + 2);
  std::vector<int32_t> za(static_cast<size_t>(p.m)), zb(static_cast<size_t>(p.n));
  const int32_t za0 = static_cast<int32_t>(rng() % 256);
  const int32_t zb0 = p.b_unsigned ? static_cast<int32_t>(rng() % 256) : static_cast<int32_t>(rng() % 256) - 128;
  for (auto& z : za) z = (p.row_zps ? static_cast<int32_t>(rng() % 256) : za0) - (p.a_signed ? 128 : 0);
  // The GEMM sees A plus the shift (a_at), and so its zero point: the products stay the same.
  for (auto& z : za) z += a_shift;
  for (auto& z : zb) z = p.col_zps ? (p.b_unsigned ? static_cast<int32_t>(rng() % 256) : static_cast<int32_t>(rng() % 256) - 128) : zb0;
  std::vector<float> row_scale(static_cast<size_t>(p.m)), col_scale(static_cast<size_t>(p.n)), bias(static_cast<size_t>(p.n));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& v : row_scale) v = dist(rng);
  for (auto& v : col_scale) v = dist(rng) * 1e-3f;
  for (auto& v : bias) v = dist(rng);

  // B element (k, j) as stored: [K x N], or [N x K] when transposed.
  const auto b_at = [&](int64_t kk, int64_t j) -> int32_t {
    const uint8_t raw = p.trans ? b[static_cast<size_t>(j * p.k + kk)] : b[static_cast<size_t>(kk * p.n + j)];
    return p.b_unsigned ? static_cast<int32_t>(raw) : static_cast<int32_t>(static_cast<int8_t>(raw));
  };
  const PackedInt8B packed = PackedInt8B::pack(b.data(), p.b_unsigned, p.k, p.n, p.trans ? p.k : p.n, p.trans);
  std::vector<int32_t> shift(static_cast<size_t>(p.n)), corr(static_cast<size_t>(p.n)), row_sum(static_cast<size_t>(p.m));
  for (int64_t j = 0; j < p.n; ++j) {
    int64_t s = 0;
    for (int64_t kk = 0; kk < p.k; ++kk) s += b_at(kk, j);
    ASSERT_EQ(packed.column_sums()[j], s) << where << " column " << j;
    shift[static_cast<size_t>(j)] = (p.b_unsigned ? 128 : 0) - zb[static_cast<size_t>(j)];
    corr[static_cast<size_t>(j)] = static_cast<int32_t>(s - p.k * zb[static_cast<size_t>(j)]);
  }
  for (int64_t i = 0; i < p.m; ++i) {
    int32_t sum = 0;
    for (int64_t kk = 0; kk < p.k; ++kk) sum += a_at(i, kk);
    row_sum[static_cast<size_t>(i)] = sum;
  }

  const int64_t ldc = p.n + p.ldc_pad;
  std::vector<int32_t> ci(static_cast<size_t>(p.m * ldc), -7);
  std::vector<float> cf(static_cast<size_t>(p.m * ldc), -7.0f);
  Int8GemmArgs g;
  g.m = p.m;
  g.a = a.data();
  g.lda = p.k;
  g.b = &packed;
  g.row_zp = za.data();
  g.row_sum = row_sum.data();
  g.col_shift = shift.data();
  g.col_corr = corr.data();
  g.a_signed = p.a_raised ? held.data() : p.a_signed ? reinterpret_cast<const int8_t*>(a.data()) : nullptr;
  if (p.a_raised && !fix_k.empty()) {
    g.a_fix_start = fix_start.data();
    g.a_fix_k = fix_k.data();
    g.a_fix_up = a_shift == 1;
  }
  Int8PairSplit split;
  const std::vector<int8_t> not_a(a.size(), 0x55);
  if (p.presplit && g.a_signed && backend.signed_a) {
    int8_split_pairs(g.a_signed, p.k, p.k, 0, p.m, split);
    g.a_split = &split;
    g.a_signed = not_a.data();
  }
  g.ldc = ldc;
  if (p.to_float) {
    g.c_f32 = cf.data();
    g.row_scale = row_scale.data();
    g.col_scale = col_scale.data();
    g.bias = bias.data();
  } else {
    g.c_i32 = ci.data();
  }
  gemm_u8s8(g, pool, backend);

  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const size_t at = static_cast<size_t>(i * ldc + j);
      if (j >= p.n) {  // the padding of C is never written
        ASSERT_EQ(ci[at], -7) << where;
        ASSERT_EQ(cf[at], -7.0f) << where;
        continue;
      }
      int64_t want = 0;
      for (int64_t kk = 0; kk < p.k; ++kk)
        want += (static_cast<int64_t>(a_at(i, kk)) - za[static_cast<size_t>(i)]) *
                (b_at(kk, j) - zb[static_cast<size_t>(j)]);
      if (p.to_float) {
        const float expect = static_cast<float>(static_cast<int32_t>(want)) * col_scale[static_cast<size_t>(j)] *
                                 row_scale[static_cast<size_t>(i)] +
                             bias[static_cast<size_t>(j)];
        ASSERT_EQ(cf[at], expect) << where << " at (" << i << ", " << j << ")";
      } else {
        ASSERT_EQ(ci[at], want) << where << " at (" << i << ", " << j << ")";
      }
    }
  }
}

TEST(Int8Gemm, MatchesIntegerLoop) {
  const auto list = backends();
  if (list.empty()) GTEST_SKIP() << "CPU lacks AVX2";
  ThreadPool pool(2);
  uint32_t seed = 1;
  for (const Int8GemmBackend* backend : list) {
    for (int64_t m : {1, 2, 3, 5, 6, 7, 13})
      for (int64_t n : {1, 15, 16, 17, 33, 64, 65, 97})
        for (int64_t k : {1, 3, 4, 7, 64, 129}) {
          Problem p{.m = m, .n = n, .k = k};
          p.b_unsigned = (seed % 2) == 0;
          p.trans = (seed % 3) == 0;
          p.row_zps = (seed % 5) < 2;
          p.col_zps = (seed % 7) < 3;
          p.to_float = (seed % 4) == 1;
          p.ldc_pad = (seed % 6) == 0 ? 5 : 0;
          p.a_signed = (seed / 2) % 2 == 0;
          p.a_raised = p.a_signed ? static_cast<int>(seed / 4 % 3) : 0;
          p.presplit = (seed / 3) % 2 == 0;
          p.narrow = (seed / 5) % 3 != 0;
          if (takes(*backend, p.a_signed)) check(p, *backend, nullptr, seed);
          ++seed;
          if (HasFatalFailure()) return;
        }
  }
}

TEST(Int8Gemm, ExtremeValuesStayExact) {
  // 255 * 127 summed over a quad exceeds int16: exact only without 16-bit saturation.
  for (const Int8GemmBackend* backend : backends()) {
    for (bool b_unsigned : {false, true}) {
      for (int a_form = 0; a_form < 4; ++a_form) {  // uint8, int8 in [-127, 127], int8 with held values
        const bool a_signed = a_form > 0;
        if (!takes(*backend, a_signed)) continue;
        Problem p{.m = 7, .n = 40, .k = 515, .b_unsigned = b_unsigned, .extreme = true, .a_signed = a_signed,
                  .a_raised = std::max(a_form - 1, 0)};
        check(p, *backend, nullptr, 11);
        Problem q = p;
        q.row_zps = q.col_zps = true;
        q.to_float = true;
        check(q, *backend, nullptr, 12);
        q.presplit = true;
        check(q, *backend, nullptr, 13);
      }
    }
  }
}

TEST(Int8Gemm, ThreadSplitByColumnsAndRows) {
  ThreadPool pool(2);
  for (const Int8GemmBackend* backend : backends()) {
    check(Problem{.m = 130, .n = 300, .k = 384}, *backend, &pool, 21);              // by column panels
    check(Problem{.m = 131, .n = 20, .k = 2000, .col_zps = true}, *backend, &pool, 22);  // one panel: by rows
    // 2 panels per L2 chunk at this depth: each thread walks its panels chunk by chunk.
    check(Problem{.m = 13, .n = 300, .k = 1030}, *backend, &pool, 23);
    check(Problem{.m = 13, .n = 300, .k = 1030}, *backend, nullptr, 24);
    if (takes(*backend, true)) {
      check(Problem{.m = 131, .n = 70, .k = 700, .col_zps = true, .a_signed = true}, *backend, &pool, 25);
      // Rows split by the thread split in groups of 8, not of the tile's 6.
      check(Problem{.m = 131, .n = 20, .k = 700, .a_signed = true, .presplit = true}, *backend, &pool, 26);
      check(Problem{.m = 131, .n = 20, .k = 700, .a_signed = true, .presplit = true, .narrow = true}, *backend, &pool, 27);
      check(Problem{.m = 131, .n = 70, .k = 700, .col_zps = true, .a_signed = true, .narrow = true}, *backend, &pool, 28);
    }
  }
}

// int8_split_rows / int8_split_pairs: every pair of `main` and of each listed quad is safe for
// vpmaddubsw against uint8 B (positive values summing to at most 128, negative ones to at least
// -128), main plus the listed quads gives A back (each byte less its row's offset; zero past
// K), and the sums are A's; where too many quads would be listed, nothing is, and main is int8
// A as given.
TEST(Int8PairSplit, EveryPairSafeAndTheSumIsA) {
  if (!isa_available(Isa::Avx2)) GTEST_SKIP() << "CPU lacks AVX2";
  for (int64_t k : {1, 2, 7, 32, 33, 64, 101, 515}) {
    // int8: 0 random bytes, 1 the ends only, 2 small values with a few large;
    // uint8 less a per-row offset: 3 bunched at 0 (post-activation), 4 around the offset.
    for (int form = 0; form < 5; ++form) {
      const int64_t m = 9, lda = k + 3;
      const bool is_unsigned = form >= 3;
      std::mt19937 rng(static_cast<uint32_t>(k * 5 + form));
      std::vector<int32_t> offsets(static_cast<size_t>(m));
      for (auto& o : offsets) o = form == 3 ? static_cast<int32_t>(rng() % 40) : 100 + static_cast<int32_t>(rng() % 56);
      std::vector<uint8_t> a(static_cast<size_t>(m * lda), 99);  // past K in each row: not A
      for (int64_t i = 0; i < m; ++i)
        for (int64_t kk = 0; kk < k; ++kk) {
          int v = static_cast<int>(rng() % 256) - 128;
          if (form == 1) v = v < 0 ? -128 + static_cast<int>(rng() % 2) : 127 - static_cast<int>(rng() % 2);
          if (form == 2 && rng() % 16 != 0) v /= 8;
          if (form == 3) v = rng() % 16 == 0 ? static_cast<int>(rng() % 256) : static_cast<int>(rng() % 24);
          if (form == 4) v = std::clamp(offsets[static_cast<size_t>(i)] + (rng() % 16 == 0 ? v : v / 8), 0, 255);
          a[static_cast<size_t>(i * lda + kk)] = static_cast<uint8_t>(v);
        }
      const auto value = [&](int64_t i, int64_t kk) {
        const uint8_t raw = a[static_cast<size_t>(i * lda + kk)];
        return is_unsigned ? raw - offsets[static_cast<size_t>(i)] : static_cast<int8_t>(raw);
      };
      Int8PairSplit s;
      if (is_unsigned) int8_split_rows(a.data(), true, offsets.data(), lda, k, 2, m, s);  // rows 2..8
      else int8_split_pairs(reinterpret_cast<const int8_t*>(a.data()), lda, k, 2, m, s);
      const std::string where = "k=" + std::to_string(k) + " form " + std::to_string(form);
      ASSERT_EQ(s.i0, 2);
      ASSERT_EQ(s.ld % kInt8Quad, 0);
      ASSERT_GE(s.ld, k);
      ASSERT_EQ(s.start.size(), static_cast<size_t>(m - 2 + 1));
      if (form == 1 && k >= 32) {
        ASSERT_FALSE(s.split) << where;
      }
      if (form >= 2) {
        ASSERT_TRUE(s.split) << where;
      }
      if (!s.split) {
        ASSERT_TRUE(s.quad.empty()) << where;
        ASSERT_EQ(s.start.back(), 0) << where;
      }
      const auto safe = [&](int v0, int v1) {
        return std::max(v0, 0) + std::max(v1, 0) <= 128 && std::min(v0, 0) + std::min(v1, 0) >= -128;
      };
      for (int64_t r = 0; r < m - 2; ++r) {
        std::vector<int> total(static_cast<size_t>(s.ld));
        for (int64_t kk = 0; kk < s.ld; ++kk) total[static_cast<size_t>(kk)] = s.main[static_cast<size_t>(r * s.ld + kk)];
        for (int64_t kk = 0; kk < s.ld && s.split; kk += 2) {
          ASSERT_TRUE(safe(total[static_cast<size_t>(kk)], total[static_cast<size_t>(kk + 1)]))
              << where << " row " << r << " depth " << kk;
        }
        int prev = -1;
        for (int32_t e = s.start[static_cast<size_t>(r)]; e < s.start[static_cast<size_t>(r + 1)]; ++e) {
          const int q = s.quad[static_cast<size_t>(e)];
          ASSERT_GE(q, prev) << where;  // in order of quads
          prev = q;
          ASSERT_LT(q * kInt8Quad, s.ld) << where;
          int8_t bytes[4];
          std::memcpy(bytes, &s.word[static_cast<size_t>(e)], 4);
          for (int t = 0; t < 4; t += 2) ASSERT_TRUE(safe(bytes[t], bytes[t + 1])) << where;
          for (int t = 0; t < 4; ++t) total[static_cast<size_t>(q * kInt8Quad + t)] += bytes[t];
        }
        int64_t sum = 0;
        for (int64_t kk = 0; kk < s.ld; ++kk) {
          const int want = kk < k ? value(r + 2, kk) : 0;
          ASSERT_EQ(total[static_cast<size_t>(kk)], want) << where << " row " << r << " depth " << kk;
          sum += want;
        }
        ASSERT_EQ(s.sums[static_cast<size_t>(r)], sum) << where << " row " << r;
      }
    }
  }
}

// The run-time packer (row pointers) writes the same panels and column sums as
// PackedInt8B::pack, for both signedness, ragged depths and ragged last panels.
TEST(Int8Gemm, PackRowsMatchesPack) {
  if (!isa_available(Isa::Avx2)) GTEST_SKIP() << "CPU lacks AVX2";
  uint32_t seed = 31;
  for (bool is_unsigned : {false, true}) {
    for (int64_t k : {1, 3, 4, 7, 130}) {
      for (int64_t n : {1, 31, 32, 33, 100}) {
        const int64_t ld = n + 3;
        const std::vector<uint8_t> b = random_bytes(static_cast<size_t>(k * ld), seed++, false);
        std::vector<const uint8_t*> rows(static_cast<size_t>(k));
        for (int64_t r = 0; r < k; ++r) rows[static_cast<size_t>(r)] = b.data() + r * ld;
        const PackedInt8B want = PackedInt8B::pack(b.data() + 1, is_unsigned, k, n, ld, false);
        const size_t bytes = static_cast<size_t>(want.panels() * want.quads() * kInt8Quad * kInt8PanelCols);
        std::vector<int8_t> got(bytes, 99);
        std::vector<int32_t> sums(static_cast<size_t>(n), -1);
        int8_pack_rows(rows.data(), 1, k, n, is_unsigned, got.data(), sums.data());
        const std::string where = std::string(is_unsigned ? "u8" : "s8") + " k=" + std::to_string(k) + " n=" + std::to_string(n);
        for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(got[i], want.panel(0)[i]) << where << " byte " << i;
        for (int64_t j = 0; j < n; ++j) ASSERT_EQ(sums[static_cast<size_t>(j)], want.column_sums()[j]) << where << " column " << j;
      }
    }
  }
}

// A requantizing GEMM of A [m x k] (uint8 `a`, or int8 `a_s` where not null) by `packed` into
// c [m x n]: A's zero points `za` per row, and B's column sums as the correction (B's zero
// point 0). The caller sets the multipliers, zero point and bounds.
struct RequantProblem {
  std::vector<int32_t> za, corr;
  Int8GemmArgs g;
  RequantProblem(int64_t m, int64_t k, const uint8_t* a, const int8_t* a_s, int32_t a_zero_point,
                 const PackedInt8B& packed, std::vector<uint8_t>& c)
      : za(static_cast<size_t>(m), a_zero_point), corr(packed.column_sums(), packed.column_sums() + packed.n()) {
    g.m = m;
    g.a = a;
    g.a_signed = a_s;
    g.lda = k;
    g.b = &packed;
    g.row_zp = za.data();
    g.col_corr = corr.data();
    g.c_q = c.data();
    g.ldc = packed.n();
  }
};

// The requantizing epilogue against its definition (gemm_int8.h) evaluated on the exact
// integer sums: per-row multipliers with a bias, per-column multipliers, uint8 and int8, a
// raised lower bound (a folded Relu), and multipliers of 1/2 and 1/4 on small sums, whose products are often
// exact half-integers (rounded to even before the zero point is added: with the odd int8 zero
// point, rounding after adding it would give the other integer).
TEST(Int8Gemm, RequantizedOutputFollowsItsDefinition) {
  for (const Int8GemmBackend* backend : backends()) {
    for (int variant = 0; variant < 16; ++variant) {
      const int64_t m = 7, n = 45, k = 37;
      const bool per_row = variant % 2 == 0, is_signed = variant % 4 >= 2, ties = variant % 8 >= 4;
      const bool a_signed = variant >= 8;  // A's values are then a - 128 as int8, with zero point 0
      if (!takes(*backend, a_signed)) continue;
      std::vector<uint8_t> a = a_bytes(static_cast<size_t>(m * k), 40 + variant, false, false);
      std::vector<uint8_t> b = random_bytes(static_cast<size_t>(k * n), 50 + variant, false);
      if (ties) {  // sums of a few hundred, so that a half-integer product lands inside the range
        for (auto& v : a) v = static_cast<uint8_t>(125 + v % 7);
        for (auto& v : b) v = static_cast<uint8_t>(static_cast<int8_t>(v % 7 - 3));
      }
      const PackedInt8B packed = PackedInt8B::pack(b.data(), false, k, n, n, false);
      std::vector<int32_t> bias(static_cast<size_t>(m));
      std::vector<int8_t> a_s(a.size());
      for (size_t i = 0; i < a.size(); ++i) a_s[i] = static_cast<int8_t>(std::max<int>(a[i], 1) - 128);
      if (a_signed)
        for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(a_s[i] + 128);
      std::vector<float> scale(static_cast<size_t>(per_row ? m : n));
      std::mt19937 rng(60 + variant);
      for (auto& v : scale) v = ties ? (rng() % 2 ? 0.5f : 0.25f) : std::uniform_real_distribution<float>(2e-4f, 6e-4f)(rng);
      for (auto& v : bias) v = ties ? static_cast<int32_t>(rng() % 41) - 20 : static_cast<int32_t>(rng() % 20001) - 10000;
      const int32_t zp = is_signed ? -3 : 130, lo = is_signed ? -100 : 0, hi = is_signed ? 127 : 255;
      std::vector<uint8_t> c(static_cast<size_t>(m * n), 0xA5);
      RequantProblem rp(m, k, a.data(), a_signed ? a_s.data() : nullptr, a_signed ? 0 : 128, packed, c);
      Int8GemmArgs& g = rp.g;
      g.q_signed = is_signed;
      g.q_bias = per_row ? bias.data() : nullptr;
      (per_row ? g.q_row_scale : g.q_col_scale) = scale.data();
      g.q_zero_point = zp;
      g.q_min = lo;
      g.q_max = hi;
      gemm_u8s8(g, nullptr, *backend);
      int in_range_ties = 0;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          int64_t acc = per_row ? bias[static_cast<size_t>(i)] : 0;
          for (int64_t kk = 0; kk < k; ++kk)
            acc += (static_cast<int64_t>(a[static_cast<size_t>(i * k + kk)]) - 128) *
                   static_cast<int8_t>(b[static_cast<size_t>(kk * n + j)]);
          const float mult = scale[static_cast<size_t>(per_row ? i : j)];
          const float product = static_cast<float>(acc) * mult;
          const double r = static_cast<double>(std::nearbyint(product)) + zp;
          in_range_ties += product - std::floor(product) == 0.5f && product + zp > lo && product + zp < hi;
          const auto want = static_cast<int32_t>(std::clamp(r, static_cast<double>(lo), static_cast<double>(hi)));
          const uint8_t raw = c[static_cast<size_t>(i * n + j)];
          const int32_t got = is_signed ? static_cast<int8_t>(raw) : raw;
          ASSERT_EQ(got, want) << backend->name << " variant " << variant << " at (" << i << ", " << j << ")";
        }
      }
      if (ties) {
        EXPECT_GT(in_range_ties, 30) << backend->name << " variant " << variant;
      }
    }
  }
}

// Products within about 1e-5 of a half-integer, where an evaluation other than the definition's
// (a float64 product, or the zero point added before rounding in one fused multiply-add) can
// round to the other side: per-column multipliers chosen as (t + 0.5 + d) / acc for small d,
// checked against the float32 definition, with both AVX2 tiles (A with and without zero bytes).
TEST(Int8Gemm, RequantizesNearTiesAsDefined) {
  for (const Int8GemmBackend* backend : backends()) {
    for (bool a_signed : {false, true}) {
      if (!takes(*backend, a_signed)) continue;
      const int64_t m = 2, n = 4096, k = 1;
      const std::vector<uint8_t> a = {255, 200};  // a - 128 = 127 and 72
      const std::vector<int8_t> a_s = {127, 72};
      std::vector<uint8_t> b(static_cast<size_t>(n));
      std::vector<float> scale(static_cast<size_t>(n));
      std::mt19937 rng(a_signed ? 71 : 72);
      for (int64_t j = 0; j < n; ++j) {
        const int32_t bj = 40 + static_cast<int32_t>(rng() % 88);  // 40..127
        b[static_cast<size_t>(j)] = static_cast<uint8_t>(static_cast<int8_t>(rng() % 2 ? bj : -bj));
        const double acc0 = 127.0 * static_cast<int8_t>(b[static_cast<size_t>(j)]);
        const double d = std::uniform_real_distribution<double>(-2e-5, 2e-5)(rng);
        const double target = std::floor(std::uniform_real_distribution<double>(-100.0, 100.0)(rng)) + 0.5 + d;
        scale[static_cast<size_t>(j)] = static_cast<float>(target / acc0);
      }
      const PackedInt8B packed = PackedInt8B::pack(b.data(), false, k, n, n, false);
      std::vector<uint8_t> c(static_cast<size_t>(m * n), 0xA5);
      RequantProblem rp(m, k, a.data(), a_signed ? a_s.data() : nullptr, a_signed ? 0 : 128, packed, c);
      Int8GemmArgs& g = rp.g;
      g.q_signed = true;
      g.q_col_scale = scale.data();
      g.q_zero_point = 3;
      g.q_min = -128;
      g.q_max = 127;
      gemm_u8s8(g, nullptr, *backend);
      int near = 0;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          const int64_t acc = (static_cast<int64_t>(a[static_cast<size_t>(i)]) - 128) * static_cast<int8_t>(b[static_cast<size_t>(j)]);
          const double exact = static_cast<double>(acc) * static_cast<double>(scale[static_cast<size_t>(j)]);
          near += std::abs(exact - std::floor(exact) - 0.5) < 1e-4;
          const float product = static_cast<float>(acc) * scale[static_cast<size_t>(j)];
          const auto want = static_cast<int32_t>(std::clamp(std::nearbyint(product) + 3.0f, -128.0f, 127.0f));
          const double v = product;
          ASSERT_EQ(static_cast<int8_t>(c[static_cast<size_t>(i * n + j)]), want)
              << backend->name << (a_signed ? " s8 A" : "") << " at (" << i << ", " << j << "): " << v;
        }
      }
      EXPECT_GT(near, n / 2) << backend->name;
    }
  }
}

// A through a table of row pointers (Int8GemmArgs::a_table) gives the bytes of the same A
// given directly: taps of one depth run each, scattered rows (each tap's run of a row lives in
// its own buffer, in reverse row order), row counts that leave partial groups of six, both
// panel widths, and the row split of a thread pool (one panel: tiles start at multiples of 8).
TEST(Int8Gemm, IndirectAMatchesDirectA) {
  bool ran = false;
  for (const Int8GemmBackend* backend : backends()) {
    if (!backend->indirect_a) continue;
    ran = true;
    for (const auto& [m, taps, depth, n] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{13, 3, 8, 64},
                                            {7, 9, 4, 45}, {200, 4, 16, 96}, {6, 1, 32, 32},
                                            {701, 8, 32, 32}}) {
      const int64_t k = taps * depth;
      const std::vector<uint8_t> a = random_bytes(static_cast<size_t>(m * k), 90 + static_cast<uint32_t>(m), false);
      const std::vector<uint8_t> b = random_bytes(static_cast<size_t>(k * n), 91 + static_cast<uint32_t>(n), false);
      const PackedInt8B packed = PackedInt8B::pack(b.data(), false, k, n, n, false);
      // Run t of row i copied to runs[t][m - 1 - i]; table entries past m point at row 0's.
      std::vector<std::vector<uint8_t>> runs(static_cast<size_t>(taps), std::vector<uint8_t>(static_cast<size_t>(m * depth)));
      const int64_t stride = m + 5;
      std::vector<const uint8_t*> table(static_cast<size_t>(taps * stride));
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t i = 0; i < stride; ++i) {
          uint8_t* run = runs[static_cast<size_t>(t)].data() + (m - 1 - std::min(i, m - 1)) * depth;
          if (i < m) std::memcpy(run, a.data() + i * k + t * depth, static_cast<size_t>(depth));
          table[static_cast<size_t>(t * stride + i)] = run;
        }
      std::vector<float> scale(static_cast<size_t>(n));
      std::vector<int32_t> offset(static_cast<size_t>(n));
      std::mt19937 rng(92);
      for (auto& v : scale) v = std::uniform_real_distribution<float>(1e-4f, 3e-3f)(rng);
      for (auto& v : offset) v = static_cast<int32_t>(rng() % 20001) - 10000;
      ThreadPool two(2);
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &two}) {
        std::vector<uint8_t> want(static_cast<size_t>(m * n)), got(static_cast<size_t>(m * n), 0xA5);
        Int8GemmArgs g;
        g.m = m;
        g.a = a.data();
        g.lda = k;
        g.b = &packed;
        g.col_offset = offset.data();
        g.q_col_scale = scale.data();
        g.q_zero_point = 7;
        g.q_min = 0;
        g.q_max = 255;
        g.c_q = want.data();
        g.ldc = n;
        gemm_u8s8(g, pool, *backend);
        g.a = nullptr;
        g.a_table = table.data();
        g.a_taps = taps;
        g.a_table_stride = stride;
        g.c_q = got.data();
        gemm_u8s8(g, pool, *backend);
        ASSERT_EQ(got, want) << backend->name << " m " << m << " taps " << taps << " n " << n << (pool ? " pooled" : "");
      }
    }
  }
  if (!ran) GTEST_SKIP() << "no int8 GEMM backend here takes A through a table (AVX-512 VNNI)";
}

}  // namespace
}  // namespace ignis::kernels::x86
#endif  // IGNIS_HAVE_X86_KERNELS
