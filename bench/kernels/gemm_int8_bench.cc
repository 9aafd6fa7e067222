// SPDX-License-Identifier: Apache-2.0
// GOP/s of the int8 GEMM (u8 x s8 -> int32 or scaled float32) on the shapes of a quantized
// transformer (MiniLM / BERT at 128 tokens), single thread, per tile implementation.
//
//   build/bench/ignis_kernel_bench --benchmark_filter=Int8Gemm
//
// GOPS counts 2 operations per multiply-add; GOPS_cpu divides by the thread's CPU time.
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/registry.h"
#include "kernels/x86/gemm_int8.h"

namespace ignis {
namespace {

using kernels::x86::Int8GemmArgs;
using kernels::x86::PackedInt8B;

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// range(0..2) = M, N, K; range(3) = 1 for the VNNI tile, 0 for AVX2; range(4) = 1 for float out;
// range(5): int8 A in [-127, 127] (Int8GemmArgs::a_signed: the AVX2 vpmaddubsw tile), 1 uniform
// (the worst case for its pair split: a quarter of the pairs unsafe), split per call; 2 normal
// with 4 standard deviations at 127 (like per-channel weights), split once beforehand as a
// convolution does; 0 for uint8 A.
void BM_Int8Gemm(benchmark::State& state) {
  const bool vnni = state.range(3) != 0;
  if (!kernels::isa_available(kernels::Isa::Avx2) || (vnni && !cpu_features().avx512vnni)) {
    state.SkipWithError("CPU lacks the tile's ISA");
    return;
  }
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  std::mt19937 rng(7);
  std::vector<uint8_t> a(static_cast<size_t>(m * k));
  std::vector<int8_t> b(static_cast<size_t>(k * n));
  const bool is_signed = state.range(5) != 0, presplit = state.range(5) == 2;
  std::normal_distribution<float> normal(0.0f, 127.0f / 4);
  for (auto& v : a) {
    if (presplit) v = static_cast<uint8_t>(static_cast<int8_t>(std::clamp(std::nearbyint(normal(rng)), -127.0f, 127.0f)));
    else v = static_cast<uint8_t>(is_signed ? 1 + rng() % 255 - 128 : rng());
  }
  for (auto& v : b) v = static_cast<int8_t>(rng());
  const PackedInt8B packed = PackedInt8B::pack(b.data(), false, k, n, n, false);
  std::vector<int32_t> c(static_cast<size_t>(m * n));
  std::vector<float> cf(static_cast<size_t>(m * n)), scale(static_cast<size_t>(n), 0.01f);
  std::vector<int32_t> zp(static_cast<size_t>(m), 3), corr(static_cast<size_t>(n), 5);
  Int8GemmArgs g;
  g.m = m;
  g.a = a.data();
  g.lda = k;
  g.b = &packed;
  g.row_zp = zp.data();
  g.col_corr = corr.data();
  g.ldc = n;
  g.a_signed = is_signed ? reinterpret_cast<const int8_t*>(a.data()) : nullptr;
  kernels::x86::Int8PairSplit split;
  if (presplit) {
    kernels::x86::int8_split_pairs(g.a_signed, k, k, 0, m, split);
    g.a_split = &split;
  }
  if (state.range(4) != 0) {
    g.c_f32 = cf.data();
    g.col_scale = scale.data();
  } else {
    g.c_i32 = c.data();
  }
  const auto& backend = vnni ? kernels::x86::int8_gemm_backend_vnni() : kernels::x86::int8_gemm_backend_avx2();
  double cpu = 0;
  for (auto _ : state) {
    const double c0 = cpu_seconds();
    kernels::x86::gemm_u8s8(g, nullptr, backend);
    cpu += cpu_seconds() - c0;
    benchmark::DoNotOptimize(c.data());
    benchmark::DoNotOptimize(cf.data());
  }
  const double ops = 2.0 * static_cast<double>(m * n * k) * static_cast<double>(state.iterations());
  state.counters["GOPS"] = benchmark::Counter(ops / 1e9, benchmark::Counter::kIsRate);
  state.counters["GOPS_cpu"] = cpu > 0 ? ops / cpu / 1e9 : 0.0;
}

BENCHMARK(BM_Int8Gemm)
    ->ArgNames({"m", "n", "k", "vnni", "f32", "s8a"})
    ->Args({128, 384, 384, 1, 0, 0})
    ->Args({128, 1536, 384, 1, 0, 0})
    ->Args({128, 384, 1536, 1, 0, 0})
    ->Args({128, 768, 768, 1, 1, 0})
    ->Args({128, 384, 384, 0, 0, 0})
    ->Args({128, 384, 384, 0, 0, 1})
    ->Args({128, 768, 768, 0, 1, 0})
    ->Args({128, 384, 384, 0, 0, 2})
    // resnet50 convolutions (Cout x positions x Cin * kernel): 3x3 at 28x28, 1x1 at 56x56
    ->Args({128, 784, 1152, 0, 0, 0})
    ->Args({128, 784, 1152, 0, 0, 1})
    ->Args({128, 784, 1152, 0, 0, 2})
    ->Args({256, 3136, 64, 0, 0, 2})
    ->Args({128, 784, 1152, 1, 0, 0})
    ->Args({256, 3136, 64, 1, 0, 0})
    ->Args({3136, 256, 64, 1, 0, 0})
    ->Args({784, 128, 1152, 1, 0, 0});

}  // namespace
}  // namespace ignis
