// SPDX-License-Identifier: Apache-2.0
// GFLOP/s of the GEMM-based kernels: the raw x86 sgemm (also few rows against float32 or half
// weights), and the registered Conv and MatMul kernels on ResNet-50 and BERT-base shapes, at 1
// and 2 threads.
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
#include "core/attribute.h"
#include "core/thread_pool.h"
#include "ignis/tensor.h"
#include "kernels/registry.h"
#include "kernels/x86/gemm.h"

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
// prepacked (weights) when range(4) is 1, on the default backend (IGNIS_KERNELS=avx2 picks
// the AVX2 one on an AVX-512 CPU).

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
    b->Args({49, 2048, 512, 1, threads});   // ResNet-50 stage 4 1x1 expand, transposed
    b->Args({49, 512, 4608, 1, threads});   // ResNet-50 stage 4 3x3, transposed
    b->Args({196, 1024, 256, 1, threads});  // ResNet-50 stage 3 1x1 expand, transposed
  }
  b->ArgNames({"m", "n", "k", "prepacked", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_Sgemm)->Apply(sgemm_args);

// ---- few rows against prepacked weights, one thread: the memory-bound GEMV-like MatMuls of
// batch-1 transformers, with the weights stored as float32 or as half (precision fp16).
// WeightGB/s counts the packed weight bytes streamed per call.

// m x k by prepacked k x n weights packed by `backend`, on `threads` threads; each iteration
// multiplies by the next of enough copies of the weights to hold at least `min_bytes` (one
// copy for 0). WeightGB/s: the packed bytes read per second.
void run_weights_bench(benchmark::State& state, const kernels::x86::GemmBackend& backend, Isa isa, int64_t m,
                       int64_t k, int64_t n, int threads, size_t min_bytes) {
  if (!kernels::isa_available(isa)) {
    state.SkipWithError("CPU lacks the backend's ISA");
    return;
  }
  std::unique_ptr<ThreadPool> pool = threads > 1 ? std::make_unique<ThreadPool>(threads) : nullptr;
  const Tensor a = random_tensor({m, k}, 1), b = random_tensor({k, n}, 2);
  AlignedFloats c(static_cast<size_t>(m * n));
  using kernels::x86::PackedMatrix;
  std::vector<PackedMatrix> copies;
  size_t bytes = 0;
  do {
    copies.push_back(PackedMatrix::pack(PackedMatrix::Side::B, k, n, b.data_as<float>(), n, false, backend));
    bytes += copies.back().bytes();
  } while (bytes < min_bytes);
  kernels::x86::GemmArgs g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = {.data = a.data_as<float>(), .ld = k};
  g.b = {.packed = &copies[0]};
  g.c = c.get();
  g.ldc = n;
  AlignedFloats ws(kernels::x86::gemm_f32_workspace(g, threads));
  size_t next = 0;
  timed(state, 2.0 * static_cast<double>(m * n * k), [&] {
    g.b = {.packed = &copies[next]};
    next = (next + 1) % copies.size();
    kernels::x86::gemm_f32(g, pool.get(), ws.get());
  });
  state.counters["WeightGB/s"] = benchmark::Counter(
      static_cast<double>(copies[0].bytes()) * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

void BM_SgemmWeights(benchmark::State& state, const kernels::x86::GemmBackend& (*backend)(), Isa isa) {
  run_weights_bench(state, backend(), isa, state.range(0), state.range(1), state.range(2), 1, 0);
}

void sgemm_weights_args(benchmark::internal::Benchmark* b) {
  for (int64_t m : {1, 4}) {
    b->Args({m, 768, 768});
    b->Args({m, 768, 3072});
    b->Args({m, 3072, 768});
    b->Args({m, 3072, 3072});
  }
  b->ArgNames({"m", "k", "n"})->UseRealTime()->Unit(benchmark::kMicrosecond);
}
BENCHMARK_CAPTURE(BM_SgemmWeights, f32_avx512, kernels::x86::gemm_backend_avx512, Isa::Avx512)
    ->Apply(sgemm_weights_args);
BENCHMARK_CAPTURE(BM_SgemmWeights, f16w_avx512, kernels::x86::gemm_backend_f16w_avx512, Isa::Avx512)
    ->Apply(sgemm_weights_args);
BENCHMARK_CAPTURE(BM_SgemmWeights, f32_avx2, kernels::x86::gemm_backend_avx2, Isa::Avx2)->Apply(sgemm_weights_args);
BENCHMARK_CAPTURE(BM_SgemmWeights, f16w_avx2, kernels::x86::gemm_backend_f16w_avx2, Isa::Avx2)
    ->Apply(sgemm_weights_args);

// ---- a short sequence against weights that come from memory: a transformer at batch 1 and
// 16 tokens. MiniLM's 42 MB of float32 weights (BERT-base's 340 MB) do not fit in the L3, so
// in a model every projection streams its weights from DRAM, which a single-matrix benchmark
// (weights left in the caches by the previous iteration) never shows. Each iteration here
// multiplies by the next of enough copies of the weights to exceed 64 MiB, packed by the
// backend named (float32 or half panels).

void BM_SgemmColdWeights(benchmark::State& state, const kernels::x86::GemmBackend& (*backend)(), Isa isa) {
  run_weights_bench(state, backend(), isa, state.range(0), state.range(1), state.range(2),
                    static_cast<int>(state.range(3)), size_t{64} << 20);
}

void cold_weights_args(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    b->Args({16, 384, 384, threads});   // all-MiniLM-L6-v2 attention projections, 16 tokens
    b->Args({16, 384, 1536, threads});  // its FFN up
    b->Args({16, 1536, 384, threads});  // its FFN down
    b->Args({64, 768, 3072, threads});  // BERT-base FFN up, 64 tokens
  }
  b->ArgNames({"m", "k", "n", "threads"})->UseRealTime()->Unit(benchmark::kMicrosecond);
}
BENCHMARK_CAPTURE(BM_SgemmColdWeights, f32_avx512, kernels::x86::gemm_backend_avx512, Isa::Avx512)
    ->Apply(cold_weights_args);
BENCHMARK_CAPTURE(BM_SgemmColdWeights, f16w_avx512, kernels::x86::gemm_backend_f16w_avx512, Isa::Avx512)
    ->Apply(cold_weights_args);
BENCHMARK_CAPTURE(BM_SgemmColdWeights, f32_avx2, kernels::x86::gemm_backend_avx2, Isa::Avx2)->Apply(cold_weights_args);
BENCHMARK_CAPTURE(BM_SgemmColdWeights, f16w_avx2, kernels::x86::gemm_backend_f16w_avx2, Isa::Avx2)
    ->Apply(cold_weights_args);

// ---- registered kernels on model shapes --------------------------------------------------

Attribute ints_attr(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}

// Runs one op through the kernel `id` with the inputs in `const_inputs` known at creation
// (weights, so they are prepacked as in a real plan).
void run_kernel_bench(benchmark::State& state, std::string_view id, const AttrMap& attrs, int64_t opset,
                      std::vector<Tensor> inputs, const std::vector<int>& const_inputs, const Shape& out_shape,
                      double flops, int threads) {
  const kernels::KernelDef* def = kernels::KernelRegistry::global().find_by_id(id);
  if (!def) return state.SkipWithError("kernel not registered");
  if (!kernels::isa_available(def->isa)) return state.SkipWithError("CPU lacks the kernel's ISA");
  std::vector<const Tensor*> ptrs, known(inputs.size(), nullptr);
  std::vector<DType> dtypes;
  for (const Tensor& t : inputs) {
    ptrs.push_back(&t);
    dtypes.push_back(t.dtype());
  }
  for (int i : const_inputs) known[i] = &inputs[i];
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  kernels::KernelInit init{attrs, opset, dtypes, known, shapes};
  auto kernel = kernels::make_kernel(*def, init);
  if (!kernel) return state.SkipWithError(kernel.error().to_string().c_str());
  Tensor y = Tensor::empty(DType::F32, out_shape);
  std::vector<Tensor*> outs{&y};
  ThreadPool pool(threads);
  kernels::Scratch scratch;
  kernels::KernelContext ctx(attrs, opset, ptrs, outs, &pool, &scratch);
  timed(state, flops, [&] {
    if (!(*kernel)->run(ctx)) state.SkipWithError("kernel failed");
  });
}

// Conv N=1: {C, H, W, M, kernel, stride, pad}.
void BM_Conv(benchmark::State& state, std::string_view id) {
  const int64_t c = state.range(0), h = state.range(1), w = state.range(2), m = state.range(3), k = state.range(4),
                stride = state.range(5), pad = state.range(6);
  const int threads = static_cast<int>(state.range(7));
  AttrMap attrs;
  attrs.set("strides", ints_attr({stride, stride}));
  attrs.set("pads", ints_attr({pad, pad, pad, pad}));
  const int64_t oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
  const double flops = 2.0 * static_cast<double>(m * c * k * k * oh * ow);
  run_kernel_bench(state, id, attrs, 11,
                   {random_tensor({1, c, h, w}, 1), random_tensor({m, c, k, k}, 2), random_tensor({m}, 3)}, {1, 2},
                   {1, m, oh, ow}, flops, threads);
}

// Depthwise Conv N=1: {C, H, W, kernel, stride}, "same" padding.
void BM_DepthwiseConv(benchmark::State& state, std::string_view id) {
  const int64_t c = state.range(0), h = state.range(1), w = state.range(2), k = state.range(3),
                stride = state.range(4);
  const int threads = static_cast<int>(state.range(5));
  const int64_t pad = k / 2;
  AttrMap attrs;
  attrs.set("strides", ints_attr({stride, stride}));
  attrs.set("pads", ints_attr({pad, pad, pad, pad}));
  Attribute group;
  group.kind = Attribute::Kind::Int;
  group.i = c;
  attrs.set("group", group);
  const int64_t oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
  const double flops = 2.0 * static_cast<double>(c * k * k * oh * ow);
  run_kernel_bench(state, id, attrs, 11,
                   {random_tensor({1, c, h, w}, 1), random_tensor({c, 1, k, k}, 2), random_tensor({c}, 3)}, {1, 2},
                   {1, c, oh, ow}, flops, threads);
}

// ai.ignis BlockedConv N=1 on the 16-channel blocked layout: {C, H, W, M, kernel, stride, pad,
// depthwise (group = C = M), plain (X read as NCHW: stems)}.
void BM_BlockedConv(benchmark::State& state, std::string_view id) {
  const int64_t c = state.range(0), h = state.range(1), w = state.range(2), m = state.range(3), k = state.range(4),
                stride = state.range(5), pad = state.range(6);
  const bool depthwise = state.range(7) != 0, plain = state.range(8) != 0;
  const int threads = static_cast<int>(state.range(9));
  auto int_attr = [](int64_t v) {
    Attribute a;
    a.kind = Attribute::Kind::Int;
    a.i = v;
    return a;
  };
  AttrMap attrs;
  attrs.set("strides", ints_attr({stride, stride}));
  attrs.set("pads", ints_attr({pad, pad, pad, pad}));
  if (depthwise) attrs.set("group", int_attr(c));
  if (plain) attrs.set("plain_input", int_attr(1));
  const int64_t oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
  const int64_t cg = depthwise ? 1 : c;
  const double flops = 2.0 * static_cast<double>(m * cg * k * k * oh * ow);
  const Shape x = plain ? Shape{1, c, h, w} : Shape{1, (c + 15) / 16, h, w, 16};
  run_kernel_bench(state, id, attrs, 1, {random_tensor(x, 1), random_tensor({m, cg, k, k}, 2), random_tensor({m}, 3)},
                   {1, 2}, {1, (m + 15) / 16, oh, ow, 16}, flops, threads);
}

// MatMul [1, M, K] x constant [K, N] (a transformer projection).
void BM_MatMul(benchmark::State& state, std::string_view id) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  run_kernel_bench(state, id, AttrMap{}, 13, {random_tensor({1, m, k}, 1), random_tensor({k, n}, 2)}, {1},
                   {1, m, n}, 2.0 * static_cast<double>(m * n * k), threads);
}

void conv_args(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    b->Args({64, 56, 56, 64, 3, 1, 1, threads});   // ResNet-50 stage 1, 3x3
    b->Args({256, 56, 56, 64, 1, 1, 0, threads});  // ResNet-50 stage 1, 1x1 reduce
    b->Args({64, 56, 56, 256, 1, 1, 0, threads});  // ResNet-50 stage 1, 1x1 expand
    b->Args({128, 28, 28, 128, 3, 1, 1, threads}); // ResNet-50 stage 2, 3x3
    b->Args({3, 224, 224, 64, 7, 2, 3, threads});  // ResNet-50 stem
    b->Args({1024, 14, 14, 256, 1, 1, 0, threads});  // ResNet-50 stage 3, 1x1 reduce
    b->Args({256, 14, 14, 256, 3, 1, 1, threads});   // ResNet-50 stage 3, 3x3
    b->Args({256, 14, 14, 1024, 1, 1, 0, threads});  // ResNet-50 stage 3, 1x1 expand
    b->Args({2048, 7, 7, 512, 1, 1, 0, threads});    // ResNet-50 stage 4, 1x1 reduce
    b->Args({512, 7, 7, 512, 3, 1, 1, threads});     // ResNet-50 stage 4, 3x3
    b->Args({512, 7, 7, 2048, 1, 1, 0, threads});    // ResNet-50 stage 4, 1x1 expand
    b->Args({512, 14, 14, 512, 3, 1, 1, threads});   // 3x3 on 14x14, 512 channels
    b->Args({64, 10, 10, 64, 3, 1, 1, threads});     // 3x3 on 10x10
    b->Args({24, 56, 56, 144, 1, 1, 0, threads});    // MobileNetV2 expand 56x56
    b->Args({144, 56, 56, 24, 1, 1, 0, threads});    // MobileNetV2 project 56x56
    b->Args({32, 28, 28, 192, 1, 1, 0, threads});    // MobileNetV2 expand 28x28
    b->Args({192, 28, 28, 32, 1, 1, 0, threads});    // MobileNetV2 project 28x28
    b->Args({96, 14, 14, 576, 1, 1, 0, threads});    // MobileNetV2 expand 14x14
    b->Args({576, 14, 14, 96, 1, 1, 0, threads});    // MobileNetV2 project 14x14
    b->Args({1, 8, 8, 16, 3, 1, 1, threads});         // digits CNN conv 1
    b->Args({16, 4, 4, 32, 3, 1, 1, threads});        // digits CNN conv 2
  }
  b->ArgNames({"c", "h", "w", "m", "k", "stride", "pad", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
}

void depthwise_args(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    b->Args({96, 112, 112, 3, 2, threads});  // MobileNetV2 block 2
    b->Args({32, 112, 112, 3, 1, threads});  // MobileNetV2 block 1
    b->Args({144, 56, 56, 3, 2, threads});   // MobileNetV2 block 4
    b->Args({192, 28, 28, 3, 2, threads});   // MobileNetV2 block 7
    b->Args({576, 14, 14, 3, 2, threads});   // MobileNetV2 block 14
    b->Args({144, 56, 56, 3, 1, threads});
    b->Args({192, 28, 28, 3, 1, threads});
    b->Args({960, 7, 7, 3, 1, threads});
    b->Args({240, 28, 28, 5, 1, threads});  // EfficientNet-B0 5x5
  }
  b->ArgNames({"c", "h", "w", "k", "stride", "threads"})->UseRealTime()->Unit(benchmark::kMicrosecond);
}

void blocked_conv_args(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    b->Args({16, 112, 112, 96, 1, 1, 0, 0, 0, threads});  // MobileNetV2 expand 112x112
    b->Args({24, 56, 56, 144, 1, 1, 0, 0, 0, threads});   // MobileNetV2 expand 56x56
    b->Args({144, 56, 56, 24, 1, 1, 0, 0, 0, threads});   // MobileNetV2 project 56x56
    b->Args({96, 14, 14, 576, 1, 1, 0, 0, 0, threads});   // MobileNetV2 expand 14x14
    b->Args({576, 14, 14, 96, 1, 1, 0, 0, 0, threads});   // MobileNetV2 project 14x14
    b->Args({960, 7, 7, 160, 1, 1, 0, 0, 0, threads});    // MobileNetV2 project 7x7
    b->Args({320, 7, 7, 1280, 1, 1, 0, 0, 0, threads});   // MobileNetV2 head 1x1
    b->Args({32, 112, 112, 32, 3, 1, 1, 1, 0, threads});  // MobileNetV2 depthwise 112x112
    b->Args({96, 112, 112, 96, 3, 2, 1, 1, 0, threads});  // MobileNetV2 depthwise stride 2
    b->Args({144, 56, 56, 144, 3, 1, 1, 1, 0, threads});  // MobileNetV2 depthwise 56x56
    b->Args({576, 14, 14, 576, 3, 1, 1, 1, 0, threads});  // MobileNetV2 depthwise 14x14
    b->Args({672, 14, 14, 672, 5, 1, 2, 1, 0, threads});  // EfficientNet-B0 depthwise 5x5
    b->Args({3, 224, 224, 32, 3, 2, 1, 0, 1, threads});   // MobileNetV2 / EfficientNet-B0 stem
    b->Args({256, 56, 56, 128, 1, 1, 0, 0, 0, threads});  // ResNeXt50 stage 1 reduce
    b->Args({512, 28, 28, 256, 1, 1, 0, 0, 0, threads});  // ResNeXt50 stage 2 reduce
    b->Args({16, 55, 55, 64, 3, 1, 1, 0, 0, threads});    // SqueezeNet expand 3x3 (direct)
  }
  b->ArgNames({"c", "h", "w", "m", "k", "stride", "pad", "dw", "plain", "threads"})
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

void matmul_args(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    b->Args({128, 768, 768, threads});   // BERT-base attention projections
    b->Args({128, 768, 3072, threads});  // BERT-base FFN up
    b->Args({128, 3072, 768, threads});  // BERT-base FFN down
  }
  b->ArgNames({"m", "k", "n", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(BM_Conv, avx512, "x86/conv_f32_8x32")->Apply(conv_args);
BENCHMARK_CAPTURE(BM_Conv, avx2, "x86/conv_f32_4x24")->Apply(conv_args);
BENCHMARK_CAPTURE(BM_Conv, ref, "ref/conv")->Apply(conv_args);
BENCHMARK_CAPTURE(BM_DepthwiseConv, x86, "x86/conv_f32_8x32")->Apply(depthwise_args);
BENCHMARK_CAPTURE(BM_DepthwiseConv, ref, "ref/conv")->Apply(depthwise_args);
BENCHMARK_CAPTURE(BM_BlockedConv, avx512, "x86/blockedconv_f32_avx512")->Apply(blocked_conv_args);
BENCHMARK_CAPTURE(BM_BlockedConv, avx2, "x86/blockedconv_f32_avx2")->Apply(blocked_conv_args);
BENCHMARK_CAPTURE(BM_MatMul, avx512, "x86/matmul_f32_8x32")->Apply(matmul_args);
BENCHMARK_CAPTURE(BM_MatMul, avx2, "x86/matmul_f32_4x24")->Apply(matmul_args);
BENCHMARK_CAPTURE(BM_MatMul, ref, "ref/matmul")->Apply(matmul_args);

}  // namespace
}  // namespace ignis
