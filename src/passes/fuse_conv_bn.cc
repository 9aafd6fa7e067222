// SPDX-License-Identifier: Apache-2.0
// Folds an inference BatchNormalization into the Conv that feeds it.
// Algebra, per output channel m, with s = gamma / sqrt(var + eps):
//   BN(conv(x, W) + B) = conv(x, W * s) + (B - mean) * s + beta
// Computed in double, stored as float32. Legal when W, B and every BN parameter are
// float32 initializers, the Conv output feeds only the BN and is not a graph output, and the
// BN is in inference mode with only its first output used.
#include <cmath>

#include "core/strings.h"
#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

Result<int> fuse_conv_bn(ir::Graph& g, const PassContext&) {
  int count = 0;
  bool changed = true;
  while (changed) {  // recompute use lists after each rewrite: they index nodes
    changed = false;
    const auto uses = ir::consumers(g);
    const auto prod = ir::producers(g);
    for (size_t bi = 0; bi < g.nodes.size() && !changed; ++bi) {
      const ir::Node& bn = g.nodes[bi];
      if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.inputs.size() < 5) continue;
      if (bn.attrs.get_int("training_mode", 0) != 0 || bn.attrs.get_int("spatial", 1) != 1) continue;
      bool extra_outputs_used = false;
      for (size_t o = 1; o < bn.outputs.size(); ++o)
        extra_outputs_used |= !bn.outputs[o].empty() && (uses.count(bn.outputs[o]) || ir::is_graph_output(g, bn.outputs[o]));
      if (extra_outputs_used) continue;
      auto p = prod.find(bn.inputs[0]);
      if (p == prod.end()) continue;
      const ir::Node& conv = g.nodes[p->second];
      if (conv.op_type != "Conv" || !conv.domain.empty() || conv.outputs.size() != 1) continue;
      const std::string& mid = conv.outputs[0];
      if (uses.at(mid).size() != 1 || ir::is_graph_output(g, mid)) continue;
      const Tensor* w = f32_constant_input(g, conv, 1);
      const bool has_bias = conv.inputs.size() > 2 && !conv.inputs[2].empty();
      const Tensor* b = has_bias ? f32_constant_input(g, conv, 2) : nullptr;
      const Tensor* gamma = f32_constant_input(g, bn, 1);
      const Tensor* beta = f32_constant_input(g, bn, 2);
      const Tensor* mean = f32_constant_input(g, bn, 3);
      const Tensor* var = f32_constant_input(g, bn, 4);
      if (!w || (has_bias && !b) || !gamma || !beta || !mean || !var || w->rank() < 3) continue;
      const int64_t m = w->dim(0);
      if (gamma->numel() != m || beta->numel() != m || mean->numel() != m || var->numel() != m || (b && b->numel() != m))
        continue;
      const double eps = bn.attrs.get_float("epsilon", 1e-5f);

      Tensor w2 = Tensor::empty(DType::F32, w->shape());
      Tensor b2 = Tensor::empty(DType::F32, {m});
      const int64_t per_channel = w->numel() / std::max<int64_t>(m, 1);
      for (int64_t c = 0; c < m; ++c) {
        const double s = gamma->data_as<float>()[c] / std::sqrt(static_cast<double>(var->data_as<float>()[c]) + eps);
        for (int64_t k = 0; k < per_channel; ++k)
          w2.data_as<float>()[c * per_channel + k] = static_cast<float>(w->data_as<float>()[c * per_channel + k] * s);
        const double bias = b ? b->data_as<float>()[c] : 0.0;
        b2.data_as<float>()[c] =
            static_cast<float>((bias - mean->data_as<float>()[c]) * s + beta->data_as<float>()[c]);
      }
      const std::string w_name = ir::unique_value_name(g, conv.inputs[1] + "_bn");
      const std::string b_name = ir::unique_value_name(g, (has_bias ? conv.inputs[2] : conv.name + "_bias") + "_bn");
      g.initializers[w_name] = std::move(w2);
      g.initializers[b_name] = std::move(b2);
      const std::string out = bn.outputs[0];
      ir::Node& conv_mut = g.nodes[p->second];
      conv_mut.inputs.resize(3);
      conv_mut.inputs[1] = w_name;
      conv_mut.inputs[2] = b_name;
      conv_mut.outputs[0] = out;
      std::vector<bool> remove(g.nodes.size(), false);
      remove[bi] = true;
      ir::remove_nodes(g, remove);
      ir::remove_unused_initializers(g);
      ++count;
      changed = true;
    }
  }
  return count;
}

}  // namespace ignis::passes
