// SPDX-License-Identifier: Apache-2.0
// Graph passes: each a small named rewrite with a level, run in the order pipeline.cc gives.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ignis/dtype.h"
#include "ignis/status.h"
#include "ir/graph.h"

namespace ignis::passes {

// Levels as onnxruntime names them. Basic and Extended emit standard ONNX ops only, so their
// output runs in any ONNX runtime; All may emit ai.ignis ops that need ignis' kernels.
enum class Level { Basic = 1, Extended = 2, All = 3 };

// What passes need from layers above them: evaluating a node on constant inputs (for
// constant folding) is done with the runtime's kernels, injected here.
struct PassContext {
  std::function<Result<std::vector<Tensor>>(const ir::Node& node, int64_t opset,
                                            const std::vector<const Tensor*>& inputs)>
      evaluate;
  // Whether the kernels that make the blocked channel layout pay (ai.ignis BlockedConv on
  // AVX2 or AVX-512) will run: convert_to_blocked_layout does nothing otherwise.
  bool blocked_layout = false;
  // Whether those kernels also run dense and grouped windows on blocked input faster than the
  // NCHW kernels (the AVX2 ones): convert_to_blocked_layout then takes such convolutions into
  // its runs, except the 3x3 ones the NCHW kernels run with Winograd F(4x4).
  bool blocked_direct = false;
  // Whether they do so for strided windows only (the AVX-512 ones: at unit stride the NCHW
  // kernels' Winograd F(2x2) and transposed GEMM are faster, where the blocked Winograd does
  // not take the convolution).
  bool blocked_direct_strided = false;
  // Whether they do so for grouped windows (group > 1) at any stride (the AVX-512 ones: no
  // NCHW kernel runs a grouped convolution as one GEMM, so the blocked tile is ahead there).
  bool blocked_direct_grouped = false;
  // Whether those kernels run 3x3 convolutions at unit stride with Winograd F(4x4) on blocked
  // input (the AVX-512 ones): convert_to_blocked_layout then takes the 3x3s the NCHW kernels
  // would run with F(4x4) into its runs.
  bool blocked_winograd = false;
  // Whether the AVX-512 direct kernel runs in bfloat16 (a bf16 session on a CPU with
  // AVX512_BF16): strided windows then join blocked runs in bf16 sessions too.
  bool blocked_direct_bf16 = false;
  // Whether ai.ignis QLinearConvNhwc's kernel is the fast one for quantized convolutions (the
  // int8 GEMM's AVX-512 VNNI tile): convert_qlinear_conv_to_nhwc does nothing otherwise.
  bool int8_channels_last = false;
  // The session's GEMM precision: in bfloat16 the im2col GEMM runs a stem faster than the
  // float32 blocked kernel, so convert_to_blocked_layout leaves lone stems alone.
  Precision precision = Precision::F32;
  // Graph outputs that convert_to_blocked_layout may leave in the blocked layout ([N, C/16,
  // H, W, 16], padding lanes of the last block included) under their own names, with no
  // declared shape, instead of reordering them back to NCHW: for a caller that reads that
  // layout itself (calibration's observed activations). Empty for sessions.
  std::unordered_set<std::string> blocked_outputs;
};

struct Pass {
  std::string_view name;
  Level level;
  // Returns how many rewrites it made (0 = graph unchanged).
  Result<int> (*run)(ir::Graph& g, const PassContext& ctx);
};

struct PassCount {
  std::string name;
  int rewrites = 0;
};

// Every pass, in pipeline order.
const std::vector<Pass>& pipeline();

// Runs the passes of `level` and below until none changes the graph (at most a few rounds);
// the IR verifier runs after every pass that changed something. Control-flow bodies, nested
// ones too, are optimized the same way (optimize_bodies.h); the counts include their rewrites.
Result<std::vector<PassCount>> optimize(ir::Graph& g, Level level, const PassContext& ctx);

// Before the levels, at every level (optimization off included): onnxruntime's QOperator
// contrib ops without kernels here (QGemm, QLinearSoftmax, QLinearConcat, ...) as their
// dequantize -> float op -> quantize form. Returns the number of nodes expanded; fails naming
// the node where one cannot be expressed so.
Result<int> expand_qoperator_ops(ir::Graph& g);

// The passes, one per file.
Result<int> eliminate_identity(ir::Graph& g, const PassContext& ctx);
Result<int> eliminate_dead_code(ir::Graph& g, const PassContext& ctx);
Result<int> fold_constants(ir::Graph& g, const PassContext& ctx);
Result<int> inline_constant_if(ir::Graph& g, const PassContext& ctx);
Result<int> eliminate_common_subexpressions(ir::Graph& g, const PassContext& ctx);
Result<int> eliminate_no_ops(ir::Graph& g, const PassContext& ctx);
Result<int> fold_static_shapes(ir::Graph& g, const PassContext& ctx);
Result<int> reduce_strength(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_leaky_relu(ir::Graph& g, const PassContext& ctx);
Result<int> fold_pad_into_conv(ir::Graph& g, const PassContext& ctx);
Result<int> trim_padded_conv_taps(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_conv_bn(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_conv_mul_add(ir::Graph& g, const PassContext& ctx);
Result<int> convert_batch_norm_to_conv(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_matmul_add_gemm(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_qdq_into_qlinear(ir::Graph& g, const PassContext& ctx);
Result<int> eliminate_qdq_around_data_movement(ir::Graph& g, const PassContext& ctx);
// Level All: these emit ai.ignis ops (docs/ops_ai_ignis.md), or onnxruntime's com.microsoft ones.
Result<int> fuse_qdq_into_lookup_table(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_blocked_dq_into_matmul_nbits(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_qdq_into_qlinear_add(ir::Graph& g, const PassContext& ctx);
Result<int> convert_qlinear_conv_to_nhwc(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_qdq_into_qlinear_mul(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_qdq_into_qlinear_global_average_pool(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_qdq_gemm_into_matmul_integer(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_gelu(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_layer_norm(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_attention(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_conv_activation(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_matmul_activation(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_dynamic_quantize_rows(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_matmul_integer(ir::Graph& g, const PassContext& ctx);
Result<int> fuse_skip_layer_norm(ir::Graph& g, const PassContext& ctx);
Result<int> fold_transpose_into_matmul(ir::Graph& g, const PassContext& ctx);
Result<int> split_conv_padding_bands(ir::Graph& g, const PassContext& ctx);
Result<int> convert_to_blocked_layout(ir::Graph& g, const PassContext& ctx);

}  // namespace ignis::passes
