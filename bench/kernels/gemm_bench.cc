// SPDX-License-Identifier: Apache-2.0
// GFLOP/s of the GEMM-based kernels: the raw x86 sgemm, and the registered Conv and MatMul
// kernels on ResNet-50 and BERT-base shapes, at 1 and 2 threads.
//
//   build/bench/ignis_kernel_bench --benchmark_filter=Sgemm
//
// Counters: GFLOPS uses wall time (what a caller sees); GFLOPS_cpu divides by the calling
// thread's CPU time, which on a shared machine excludes time the thread was descheduled and
// so tracks kernel quality (single-thread runs only).
#include <benchmark/benchmark.h>
#include <time.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/aligned_alloc.h"
#include "core/thread_pool.h"
#include "ignis/tensor.h"
#include "kernels/registry.h"
#include "kernels/x86/gemm_avx2.h"

namespace ignis {
namespace {

using kernels::Isa;

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct AlignedFloats {
  explicit AlignedFloats(size_t n)
      : p(static_cast<float*>(aligned_malloc(std::max<size_t>(n, 1) * sizeof(float))), aligned_free) {}
  float* get() const { return p.get(); }
  std::unique_ptr<float, void (*)(void*)> p;
};

Tensor random_tensor(const Shape& shape, uint32_t seed) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = dist(rng);
  return t;
}

// Runs `body` under the benchmark loop and sets the GFLOP/s counters.
template <class Body>
void timed(benchmark::State& state, double flops, Body&& body) {
  double cpu = 0;
  for (auto _ : state) {
    const double c0 = thread_cpu_seconds();
    body();
    cpu += thread_cpu_seconds() - c0;
  }
  const double total = flops * static_cast<double>(state.iterations());
  state.counters["GFLOPS"] = benchmark::Counter(total / 1e9, benchmark::Counter::kIsRate);
  state.counters["GFLOPS_cpu"] = cpu > 0 ? total / cpu / 1e9 : 0.0;
}

bool skip_without_avx2(benchmark::State& state) {
  if (kernels::isa_available(Isa::Avx2)) return false;
  state.SkipWithError("CPU lacks AVX2/FMA/F16C");
  return true;
}

// ---- raw sgemm: C[m x n] = A[m x k] * B[k x n], both operands packed on the fly, or B
// prepacked (weights) when range(4) is 1.

void BM_Sgemm(benchmark::State& state) {
  if (skip_without_avx2(state)) return;
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const bool prepacked = state.range(3) != 0;
  const int threads = static_cast<int>(state.range(4));
  ThreadPool pool(threads);
  const Tensor a = random_tensor({m, k}, 1), b = random_tensor({k, n}, 2);
  AlignedFloats c(static_cast<size_t>(m * n));
  kernels::x86::GemmArgs g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = {.data = a.data_as<float>(), .ld = k};
  g.b = {.data = b.data_as<float>(), .ld = n};
  kernels::x86::PackedMatrix packed;
  if (prepacked) {
    packed = kernels::x86::PackedMatrix::pack(kernels::x86::PackedMatrix::Side::B, k, n, b.data_as<float>(), n, false);
    g.b = {.packed = &packed};
  }
  g.c = c.get();
  g.ldc = n;
  AlignedFloats ws(kernels::x86::gemm_f32_workspace(g, threads));
  timed(state, 2.0 * static_cast<double>(m * n * k), [&] { kernels::x86::gemm_f32(g, &pool, ws.get()); });
}

void sgemm_args(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    b->Args({1024, 1024, 1024, 0, threads});
    b->Args({1024, 1024, 1024, 1, threads});
    b->Args({256, 256, 256, 0, threads});
  }
  b->ArgNames({"m", "n", "k", "prepacked", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_Sgemm)->Apply(sgemm_args);

}  // namespace
}  // namespace ignis
