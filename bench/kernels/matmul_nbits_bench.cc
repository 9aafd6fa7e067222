// SPDX-License-Identifier: Apache-2.0
// Batch-1 matrix-vector products with 4-bit weights (com.microsoft MatMulNBits, block 32, with
// zero points) against the float32 MatMul of the same shape, each run through the kernel the
// registry picks, weights given as constants (prepacked), single thread.
//
//   build/bench/ignis_kernel_bench --benchmark_filter=MatMulNBits
//
// Variants: f32 (MatMul), int4_level4 (accuracy_level 4: A rounded to int8 per block, integer
// dot products), int4_level0 (A kept in float32: codes converted to float in registers for M <= 4,
// panels dequantized into the float GEMM beyond).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kernels/registry.h"

namespace ignis {
namespace {

Attribute int_attr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}

// range(0) = K, range(1) = N, range(2) = M; range(3): 0 float32 MatMul, 1 int4 level 4, 2 int4 level 0.
void BM_MatMulNBits(benchmark::State& state) {
  const int64_t k = state.range(0), n = state.range(1), m = state.range(2), variant = state.range(3);
  constexpr int64_t kBlock = 32;
  const int64_t blocks = (k + kBlock - 1) / kBlock;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  Tensor a = Tensor::empty(DType::F32, Shape{m, k});
  for (int64_t i = 0; i < a.numel(); ++i) a.data_as<float>()[i] = uni(rng);
  Tensor y = Tensor::empty(DType::F32, Shape{m, n});

  AttrMap attrs;
  std::vector<Tensor> inputs;
  std::string_view domain, op;
  int64_t opset = 13;
  if (variant == 0) {
    domain = "";
    op = "MatMul";
    Tensor w = Tensor::empty(DType::F32, Shape{k, n});
    for (int64_t i = 0; i < w.numel(); ++i) w.data_as<float>()[i] = uni(rng);
    inputs = {a, w};
  } else {
    domain = "com.microsoft";
    op = "MatMulNBits";
    opset = 1;
    attrs.set("K", int_attr(k));
    attrs.set("N", int_attr(n));
    attrs.set("bits", int_attr(4));
    attrs.set("block_size", int_attr(kBlock));
    attrs.set("accuracy_level", int_attr(variant == 1 ? 4 : 0));
    Tensor b = Tensor::empty(DType::U8, Shape{n, blocks, kBlock / 2});
    for (int64_t i = 0; i < b.numel(); ++i) b.data_as<uint8_t>()[i] = static_cast<uint8_t>(rng());
    Tensor scales = Tensor::empty(DType::F32, Shape{n * blocks});
    for (int64_t i = 0; i < scales.numel(); ++i) scales.data_as<float>()[i] = 0.01f + 0.05f * (uni(rng) + 1.0f);
    Tensor zp = Tensor::empty(DType::U8, Shape{n * ((blocks + 1) / 2)});
    for (int64_t i = 0; i < zp.numel(); ++i) zp.data_as<uint8_t>()[i] = static_cast<uint8_t>(rng());
    inputs = {a, b, scales, zp};
  }
  std::vector<DType> dtypes;
  std::vector<const Tensor*> ptrs, constants;
  for (size_t i = 0; i < inputs.size(); ++i) {
    dtypes.push_back(inputs[i].dtype());
    ptrs.push_back(&inputs[i]);
    constants.push_back(i == 0 ? nullptr : &inputs[i]);
  }
  const kernels::KernelDef* def = kernels::KernelRegistry::global().find(domain, op, opset, dtypes);
  if (def == nullptr) {
    state.SkipWithError("no kernel");
    return;
  }
  auto kernel = kernels::make_kernel(*def, kernels::KernelInit{attrs, opset, dtypes, constants});
  if (!kernel) {
    state.SkipWithError(kernel.error().message().c_str());
    return;
  }
  Tensor* outs[1] = {&y};
  kernels::Scratch scratch;
  for (auto _ : state) {
    kernels::KernelContext ctx(attrs, opset, ptrs, outs, nullptr, &scratch);
    benchmark::DoNotOptimize((*kernel)->run(ctx));
    benchmark::ClobberMemory();
  }
  state.SetLabel(std::string(def->id));
  state.counters["GFLOPS"] = benchmark::Counter(static_cast<double>(2 * m * n * k),
                                                benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::OneK::kIs1000);
}

void args(benchmark::internal::Benchmark* b) {
  for (auto [k, n] : {std::pair<int64_t, int64_t>{768, 768}, {3072, 768}, {768, 3072}})
    for (int64_t v : {0, 1, 2}) b->Args({k, n, 1, v});
  b->ArgNames({"K", "N", "M", "variant"});
}

BENCHMARK(BM_MatMulNBits)->Apply(args)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ignis
