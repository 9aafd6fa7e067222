// SPDX-License-Identifier: Apache-2.0
// An inference BatchNormalization that no convolution absorbed (fuse_conv_bn: it reads a
// Concat, a pool or an input, as in densenet's pre-activation layers BN -> Relu -> Conv)
// becomes a depthwise 1x1 Conv with W[c] = s[c] and B[c] = beta[c] - mean[c] * s[c],
// s = gamma / sqrt(var + eps) (double, stored as float32, as fuse_conv_bn computes them).
// Then fuse_conv_activation takes the Relu after it (one pass over the tensor, not two), and
// convert_to_blocked_layout takes it into the run of the convolutions around it as a
// depthwise convolution, so the BN no longer cuts the run. Only where the blocked layout runs
// (PassContext::blocked_layout); only 4-D float32 inputs with a fixed channel count, float32
// parameters as initializers, and the Y output alone read.
// Exactness: x * s + t instead of (x - mean) / sqrt(var + eps) * gamma + beta, float32 either
// way: the values differ by float rounding, as after fuse_conv_bn.
#include <cmath>

#include "ir/rewrite.h"
#include "passes/graph_facts.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

Result<int> convert_batch_norm_to_conv(ir::Graph& g, const PassContext& ctx) {
  if (!ctx.blocked_layout) return 0;
  const GraphFacts facts(g);
  const auto uses = ir::consumers(g);
  int count = 0;
  for (ir::Node& bn : g.nodes) {
    if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.inputs.size() < 5 || bn.outputs.empty()) continue;
    if (bn.attrs.get_int("training_mode", 0) != 0 || bn.attrs.get_int("spatial", 1) != 1) continue;
    bool extra_outputs_used = false;
    for (size_t o = 1; o < bn.outputs.size(); ++o)
      extra_outputs_used |= !bn.outputs[o].empty() && (uses.count(bn.outputs[o]) || ir::is_graph_output(g, bn.outputs[o]));
    if (extra_outputs_used) continue;
    const ValueFact& x = facts[bn.inputs[0]];
    if (x.dtype != DType::F32 || x.rank != 4 || !x.dims[1].is_fixed()) continue;
    const int64_t c = x.dims[1].value;
    const Tensor* gamma = f32_constant_input(g, bn, 1);
    const Tensor* beta = f32_constant_input(g, bn, 2);
    const Tensor* mean = f32_constant_input(g, bn, 3);
    const Tensor* var = f32_constant_input(g, bn, 4);
    if (!gamma || !beta || !mean || !var || c < 1) continue;
    if (gamma->numel() != c || beta->numel() != c || mean->numel() != c || var->numel() != c) continue;
    const double eps = bn.attrs.get_float("epsilon", 1e-5f);
    Tensor w = Tensor::empty(DType::F32, {c, 1, 1, 1});
    Tensor b = Tensor::empty(DType::F32, {c});
    for (int64_t k = 0; k < c; ++k) {
      const double s = gamma->data_as<float>()[k] / std::sqrt(static_cast<double>(var->data_as<float>()[k]) + eps);
      w.data_as<float>()[k] = static_cast<float>(s);
      b.data_as<float>()[k] = static_cast<float>(beta->data_as<float>()[k] - mean->data_as<float>()[k] * s);
    }
    const std::string base = bn.name.empty() ? bn.outputs[0] : bn.name;
    const std::string w_name = ir::unique_value_name(g, base + "_dw_weight");
    g.initializers[w_name] = std::move(w);
    const std::string b_name = ir::unique_value_name(g, base + "_dw_bias");
    g.initializers[b_name] = std::move(b);
    bn.op_type = "Conv";
    bn.inputs = {bn.inputs[0], w_name, b_name};
    bn.outputs.resize(1);
    bn.attrs = {};
    set_int(bn, "group", c);
    set_ints(bn, "kernel_shape", {1, 1});
    ++count;
  }
  if (count > 0) ir::remove_unused_initializers(g);
  return count;
}

}  // namespace ignis::passes
