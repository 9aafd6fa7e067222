// SPDX-License-Identifier: Apache-2.0
// Pass order and levels. Cleanups first so fusions see canonical patterns, then cleanups
// again (in the next round) for what fusions leave behind.
#include "passes/pass.h"

#include "core/strings.h"
#include "ir/outer_scope.h"
#include "passes/optimize_bodies.h"

namespace ignis::passes {

const std::vector<Pass>& pipeline() {
  static const std::vector<Pass> passes = [] {
    std::vector<Pass> p = {
        {"eliminate_identity", Level::Basic, eliminate_identity},
        {"eliminate_no_ops", Level::Basic, eliminate_no_ops},
        // Before fold_constants, which would fold the weights' DequantizeLinear into float
        // weights and so hide the quantized convolutions and matrix products.
        {"fuse_qdq_into_qlinear", Level::Extended, fuse_qdq_into_qlinear},
        // Before fold_constants too, which would expand 4-bit weights into float32.
        {"fuse_blocked_dq_into_matmul_nbits", Level::All, fuse_blocked_dq_into_matmul_nbits},
        // The Q/DQ pairs around MaxPool, Reshape, Concat, ... which then run on the quantized bytes.
        {"eliminate_qdq_around_data_movement", Level::Extended, eliminate_qdq_around_data_movement},
        // Before the Add / Mul fusions, which would otherwise take a quantized SiLU's Mul.
        {"fuse_qdq_into_lookup_table", Level::All, fuse_qdq_into_lookup_table},
        {"fuse_qdq_into_qlinear_add", Level::All, fuse_qdq_into_qlinear_add},
        {"fuse_qdq_into_qlinear_mul", Level::All, fuse_qdq_into_qlinear_mul},
        {"fuse_qdq_into_qlinear_global_average_pool", Level::All, fuse_qdq_into_qlinear_global_average_pool},
        {"fuse_qdq_gemm_into_matmul_integer", Level::All, fuse_qdq_gemm_into_matmul_integer},
        // Before fold_constants, which then folds the arithmetic on the static shapes.
        {"fold_static_shapes", Level::Basic, fold_static_shapes},
        {"fold_constants", Level::Basic, fold_constants},
        // After folding, which may have made a condition constant.
        {"inline_constant_if", Level::Basic, inline_constant_if},
        // After folding, so values folded to equal constants merge too.
        {"eliminate_common_subexpressions", Level::Basic, eliminate_common_subexpressions},
        {"eliminate_dead_code", Level::Basic, eliminate_dead_code},
        // After folding, which makes constant exponents, divisors and slopes initializers;
        // before the fusions, which then see Mul and LeakyRelu (fuse_gelu takes x^3 as Muls,
        // fuse_conv_activation takes LeakyRelu).
        {"reduce_strength", Level::Basic, reduce_strength},
        {"fuse_leaky_relu", Level::Basic, fuse_leaky_relu},
        // Before the conv fusions, so the padded convolution is one Conv for them (and for
        // convert_to_blocked_layout's runs).
        {"fold_pad_into_conv", Level::Basic, fold_pad_into_conv},
        // After fold_pad_into_conv, so the pads are final; before convert_to_blocked_layout,
        // which then sees the 1x1 convolutions some dilated ones become.
        {"trim_padded_conv_taps", Level::Basic, trim_padded_conv_taps},
        {"fuse_conv_bn", Level::Basic, fuse_conv_bn},
        // tf2onnx's BatchNormalization as Mul + Add; folded before fuse_conv_activation, which
        // needs the activation to read the Conv directly.
        {"fuse_conv_mul_add", Level::Basic, fuse_conv_mul_add},
        // After the BN folds, so only the BatchNormalizations no convolution absorbed; before
        // fuse_conv_activation, which then takes the Relu after them.
        {"convert_batch_norm_to_conv", Level::All, convert_batch_norm_to_conv},
        {"fuse_matmul_add_gemm", Level::Extended, fuse_matmul_add_gemm},
        // Gelu and attention first: they consume the Erf/Tanh chains and the attention MatMuls
        // before the MatMul fusion could claim them, then the MatMul fusion takes Gelu as its
        // activation.
        {"fuse_gelu", Level::All, fuse_gelu},
        {"fuse_layer_norm", Level::Extended, fuse_layer_norm},
        {"fuse_attention", Level::All, fuse_attention},
        {"fuse_conv_activation", Level::All, fuse_conv_activation},
        {"fuse_matmul_activation", Level::All, fuse_matmul_activation},
        {"fuse_dynamic_quantize_rows", Level::All, fuse_dynamic_quantize_rows},
        {"fuse_matmul_integer", Level::All, fuse_matmul_integer},
        {"fuse_skip_layer_norm", Level::All, fuse_skip_layer_norm},
        // After the MatMul fusions, so it adds the flags to the FusedMatMul they leave.
        {"fold_transpose_into_matmul", Level::All, fold_transpose_into_matmul},
        // After the conv fusions: a BatchNormalization or activation after a split convolution
        // would read the Concat and no longer fold.
        {"split_conv_padding_bands", Level::All, split_conv_padding_bands},
        // Last: it works on the fused convolutions and changes the tensors' layout, which the
        // other passes' patterns do not expect.
        {"convert_to_blocked_layout", Level::All, convert_to_blocked_layout},
        // After the QDQ fusions, which make the QLinearConv and QLinearAdd nodes it converts.
        {"convert_qlinear_conv_to_nhwc", Level::All, convert_qlinear_conv_to_nhwc},
    };
    return p;
  }();
  return passes;
}

namespace {

// Rounds of the passes over `g` itself until none changes it; adds to `counts`.
Result<int> run_passes(ir::Graph& g, Level level, const PassContext& ctx, std::vector<PassCount>& counts) {
  constexpr int kMaxRounds = 4;
  int total = 0;
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed = false;
    size_t k = 0;
    for (const auto& p : pipeline()) {
      if (p.level > level) continue;
      IGNIS_ASSIGN_OR_RETURN(int n, p.run(g, ctx));
      counts[k++].rewrites += n;
      total += n;
      if (n > 0) {
        changed = true;
        Status s = ir::verify(g);
        if (!s) return internal_error(str_cat("pass ", p.name, " left an invalid graph: ", s.message()));
      }
    }
    if (!changed) break;
  }
  return total;
}

// `g` and, through optimize_bodies, its bodies. The graph first: what it folds may become a
// constant the bodies fold with. Then the bodies; where that drops captured inputs, the graph
// again, since values only a body read may now be dead.
Result<int> optimize_graph(ir::Graph& g, Level level, const PassContext& ctx, const OuterConstants& outer,
                           std::vector<PassCount>& counts) {
  const auto optimize_body = [&](ir::Graph& body, const OuterConstants& visible) {
    return optimize_graph(body, level, ctx, visible, counts);
  };
  constexpr int kMaxRounds = 3;
  int total = 0;
  for (int round = 0; round < kMaxRounds; ++round) {
    IGNIS_ASSIGN_OR_RETURN(int n, run_passes(g, level, ctx, counts));
    total += n;
    if (round > 0 && n == 0) break;
    ir::sync_outer_reads(g);
    int dropped = 0;
    IGNIS_ASSIGN_OR_RETURN(int in_bodies, optimize_bodies(g, outer, optimize_body, &dropped));
    total += in_bodies;
    if (dropped == 0) break;
  }
  ir::sync_outer_reads(g);
  return total;
}

}  // namespace

Result<std::vector<PassCount>> optimize(ir::Graph& g, Level level, const PassContext& ctx) {
  std::vector<PassCount> counts;
  for (const auto& p : pipeline())
    if (p.level <= level) counts.push_back({std::string(p.name), 0});
  IGNIS_RETURN_IF_ERROR(optimize_graph(g, level, ctx, {}, counts).status());
  return counts;
}

}  // namespace ignis::passes
