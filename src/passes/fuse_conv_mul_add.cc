// SPDX-License-Identifier: Apache-2.0
// Folds a per-output-channel Mul, Add or Sub by a constant into the Conv or ConvTranspose
// that feeds it: tf2onnx writes an inference BatchNormalization it did not fold itself (after
// depthwise convolutions, say) as Mul(conv, s) then Add(., t), s and t of shape [1, M, 1, 1].
// Algebra, per output channel m:
//   conv(x, W, B)[m] * s[m] = conv(x, W * s[m], B * s[m])[m]
//   conv(x, W, B)[m] + t[m] = conv(x, W, B + t[m])[m]            (Sub: B - t[m])
// One operation folds per rewrite, so Mul then Add folds in two. The new W and B are computed
// in double and stored as float32, so the conv computes (w * s) . x + (b * s + t) rounded
// where the graph computed ((w . x + b) * s + t): the same rounding difference fuse_conv_bn
// makes, within a few float32 ulps of the output's magnitude.
// Legality: opset 7 or newer (broadcasting without the legacy attributes); W, B (if present)
// and the other operand float32 initializers; that operand finite and broadcasting along the
// output channels only (a scalar, or 1s except M on axis 1 when aligned to the output's rank,
// so it neither widens the output nor varies over batch or positions); the conv's output read
// only by the Mul/Add/Sub and not a graph output.
#include <cmath>
#include <optional>
#include <vector>

#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

enum class Fold { Scale, Shift, Subtract };

// Per-output-channel values of `c` broadcast against a conv output of `rank` with `m`
// channels, or nullopt when `c` is not such a constant.
std::optional<std::vector<double>> channel_values(const ir::Graph& g, const std::string& c, int rank, int64_t m) {
  const Tensor* t = ir::constant_value(g, c);
  if (!t || t->dtype() != DType::F32 || t->rank() > rank) return std::nullopt;
  for (int j = 0; j < t->rank(); ++j) {
    const int axis = rank - t->rank() + j;
    if (t->dim(j) != 1 && !(axis == 1 && t->dim(j) == m)) return std::nullopt;
  }
  std::vector<double> v(static_cast<size_t>(m));
  for (int64_t k = 0; k < m; ++k) {
    v[k] = t->data_as<float>()[t->numel() == 1 ? 0 : k];
    if (!std::isfinite(v[k])) return std::nullopt;
  }
  return v;
}

// The output channel of each weight element's slice along W's first two axes: Conv's W is
// [M, C/group, ...]; ConvTranspose's is [C, M/group, ...] with input channel c in group
// c / (C/group).
int64_t output_channel(bool transposed, int64_t i0, int64_t i1, int64_t d0, int64_t d1, int64_t group) {
  if (!transposed) return i0;
  return i0 / (d0 / group) * d1 + i1;
}

}  // namespace

Result<int> fuse_conv_mul_add(ir::Graph& g, const PassContext&) {
  if (g.opset("") < 7) return 0;
  return rewrite_all(g, [&](const GraphIndex& index, int oi) -> Result<bool> {
    const ir::Node& op = g.nodes[oi];
    Fold fold;
    if (is_onnx(op, "Mul")) fold = Fold::Scale;
    else if (is_onnx(op, "Add")) fold = Fold::Shift;
    else if (is_onnx(op, "Sub")) fold = Fold::Subtract;
    else return false;
    if (op.inputs.size() != 2 || op.outputs.size() != 1) return false;
    for (int side = 0; side < (fold == Fold::Subtract ? 1 : 2); ++side) {
      const std::string& y = op.inputs[side];
      const std::string& c = op.inputs[1 - side];
      const int ci = index.producer(y);
      if (ci < 0 || y == c || !index.single_use(y)) continue;
      const ir::Node& conv = g.nodes[ci];
      const bool transposed = is_onnx(conv, "ConvTranspose");
      if (!(transposed || is_onnx(conv, "Conv")) || conv.outputs.size() != 1 || conv.inputs.size() < 2) continue;
      const Tensor* w = f32_constant_input(g, conv, 1);
      const bool has_bias = conv.inputs.size() > 2 && !conv.inputs[2].empty();
      const Tensor* b = has_bias ? f32_constant_input(g, conv, 2) : nullptr;
      if (!w || (has_bias && !b) || w->rank() < 3 || conv.inputs.size() > 3) continue;
      const int64_t group = conv.attrs.get_int("group", 1);
      if (group < 1 || (transposed && w->dim(0) % group != 0)) continue;
      const int64_t m = transposed ? w->dim(1) * group : w->dim(0);
      if (b && b->numel() != m) continue;
      const auto values = channel_values(g, c, w->rank(), m);
      if (!values) continue;

      ir::Node folded = conv;
      folded.outputs = op.outputs;
      folded.inputs.resize(3);
      Tensor b2 = Tensor::empty(DType::F32, {m});
      for (int64_t k = 0; k < m; ++k) {
        const double bias = b ? b->data_as<float>()[k] : 0.0;
        const double v = (*values)[k];
        b2.data_as<float>()[k] =
            static_cast<float>(fold == Fold::Scale ? bias * v : fold == Fold::Shift ? bias + v : bias - v);
      }
      if (fold == Fold::Scale) {
        Tensor w2 = Tensor::empty(DType::F32, w->shape());
        const int64_t d0 = w->dim(0), d1 = w->dim(1);
        const int64_t window = w->numel() / std::max<int64_t>(d0 * d1, 1);
        for (int64_t i0 = 0; i0 < d0; ++i0)
          for (int64_t i1 = 0; i1 < d1; ++i1) {
            const double s = (*values)[output_channel(transposed, i0, i1, d0, d1, group)];
            const int64_t base = (i0 * d1 + i1) * window;
            for (int64_t k = 0; k < window; ++k)
              w2.data_as<float>()[base + k] = static_cast<float>(w->data_as<float>()[base + k] * s);
          }
        folded.inputs[1] = ir::unique_value_name(g, conv.inputs[1] + "_scaled");
        g.initializers[folded.inputs[1]] = std::move(w2);
      }
      // Scaling a conv without B keeps it without one: 0 * s = 0.
      if (b || fold != Fold::Scale) {
        folded.inputs[2] = ir::unique_value_name(g, (has_bias ? conv.inputs[2] : conv.name + "_bias") + "_folded");
        g.initializers[folded.inputs[2]] = std::move(b2);
      } else {
        folded.inputs.resize(2);
      }
      replace_nodes(g, {ci, oi}, std::move(folded));
      ir::remove_unused_initializers(g);
      return true;
    }
    return false;
  });
}

}  // namespace ignis::passes
