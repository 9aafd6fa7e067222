// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the x86 op kernels: per-family registration functions (called from
// registry_x86.cc) and the delegation to reference kernels for configurations the
// optimized code does not cover.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>

#include "core/attribute.h"
#include "kernels/registry.h"
#include "kernels/x86/gemm.h"

namespace ignis::kernels::x86 {

void register_nn_recurrent(KernelRegistry& r);  // LSTM, GRU, RNN (nn_recurrent.cc)
void register_nn_gemm(KernelRegistry& r);  // MatMul, Gemm, ai.ignis FusedMatMul (nn_gemm.cc)
// MatMulInteger, ai.ignis MatMulIntegerToFloat, QLinearMatMul, DynamicQuantizeLinear,
// ai.ignis DynamicQuantizeRows, QuantizeLinear, DequantizeLinear (nn_int8.cc)
void register_nn_int8(KernelRegistry& r);
void register_quantize_lookup(KernelRegistry& r);  // ai.ignis QLinearLookup (quantize_lookup.cc)
void register_nn_qlinear_conv(KernelRegistry& r);  // QLinearConv, ConvInteger (nn_qlinear_conv.cc)
void register_nn_qlinear_conv_nhwc(KernelRegistry& r);  // ai.ignis QLinearConvNhwc (nn_qlinear_conv_nhwc.cc)
void register_nn_cast(KernelRegistry& r);  // Cast of int32 / uint8 / int8 to float32 (nn_cast.cc)
void register_nn_matmul_nbits(KernelRegistry& r);  // com.microsoft MatMulNBits (matmul_nbits.cc)
void register_nn_conv(KernelRegistry& r);  // Conv, ai.ignis FusedConv (nn_conv.cc)
void register_nn_conv_transpose(KernelRegistry& r);  // ConvTranspose (nn_conv_transpose.cc)
// ai.ignis BlockChannels, UnblockChannels, BlockedConv (nn_conv_blocked.cc)
void register_nn_conv_blocked(KernelRegistry& r);
// MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool (nn_pool.cc)
void register_nn_pool(KernelRegistry& r);
// Resize, Upsample (nn_resize.cc)
void register_nn_resize(KernelRegistry& r);
// Add, Sub, Mul, Div, Max, Min, Pow, Relu, Sigmoid, Tanh, Exp, Erf, Log, Sqrt, Abs, Neg,
// Reciprocal, Clip, LeakyRelu, Gelu and ai.ignis Gelu (elementwise.cc)
void register_elementwise(KernelRegistry& r);
// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceSumSquare, ReduceL2 (reduce.cc)
void register_reduce(KernelRegistry& r);
// Transpose of 4-byte elements (transpose.cc)
void register_transpose(KernelRegistry& r);
// Pad, float32 constant mode (pad.cc)
void register_pad(KernelRegistry& r);
// BatchNormalization, float32 inference (nn_norm.cc)
void register_nn_norm(KernelRegistry& r);
// ai.ignis Attention and SkipLayerNorm, LayerNormalization, Softmax (nn_transformer.cc)
void register_nn_transformer(KernelRegistry& r);
// TreeEnsembleRegressor, TreeEnsembleClassifier, TreeEnsemble from flat node arrays (ml_tree.cc).
void register_ml_tree(KernelRegistry& r);
// Concat over the thread pool (concat.cc).
void register_concat(KernelRegistry& r);
// Scaler on float32 input (ml_scaler.cc).
void register_ml_scaler(KernelRegistry& r);

// Instantiates the reference kernel of (domain, op_type) for `type` (the dtype of the op's main
// input: float32, or uint8/int8 for the quantized ops) at the opset in `init` (the ISA-less
// kernel of lowest priority), for optimized kernels that hand some configurations back to it.
Result<std::unique_ptr<Kernel>> make_reference_kernel(std::string_view domain, std::string_view op_type,
                                                      const KernelInit& init, DType type = DType::F32);

// Parts to split `work` multiply-adds (or element moves) over: at most `units` and the pool's
// threads, and one per ~64 Ki (below that a second thread costs more than it saves). Internal
// linkage (see gemm_blocked.h): files built with AVX2 flags call it too.
namespace {
inline int parallel_parts(ThreadPool* pool, int64_t work, int64_t units) {
  const int64_t threads = pool ? pool->threads() : 1;
  return static_cast<int>(std::clamp<int64_t>(std::min(work >> 16, units), 1, threads));
}
}  // namespace

// The activation of an ai.ignis fused op (`activation` and its parameter attributes, already
// validated by shape inference) as a GEMM epilogue without bias or residual.
GemmEpilogue fused_activation(const AttrMap& attrs);

// Entry i of a uint8 / int8 tensor (a zero point) as int32; zero_point_entry: of a zero-point
// input given as one value or one per channel, 0 when it is omitted (null). nn_int8.cc.
int32_t int8_entry(const Tensor& t, int64_t i);
int32_t zero_point_entry(const Tensor* zp, int64_t i);

}  // namespace ignis::kernels::x86
