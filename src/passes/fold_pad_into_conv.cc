// SPDX-License-Identifier: Apache-2.0
// Folds a zero Pad of the spatial axes into the Conv that reads it: tf2onnx writes
// TensorFlow's asymmetric 'SAME' padding of strided convolutions as Pad -> Conv.
//   Conv(Pad(x, begin, end, 0), pads = p) = Conv(x, pads = p + (begin, end))
// Conv's pads are zeros outside the input, per axis at the start and at the end, so adding
// the Pad's extents there reads the same zeros at the same window positions: the sums are the
// same products in the same order, so the result is exact.
// Legality: Pad in constant mode with the value 0 (attribute before opset 11, optional input
// after; a missing value is 0), constant non-negative pads, none on the batch or channel axes;
// the Pad's output read only by the Conv's X; the Conv's auto_pad NOTSET (or VALID, which
// pads nothing). Not AveragePool: its count_include_pad = 0 would then leave the Pad's zeros
// out of the average.
#include <optional>
#include <vector>

#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

// Whether a one-element constant holds zero (negative zero included).
bool holds_zero(const Tensor& t) {
  if (t.numel() != 1) return false;
  if (t.dtype() == DType::F32) return t.data_as<float>()[0] == 0.0f;
  if (t.dtype() == DType::F64) return t.data_as<double>()[0] == 0.0;
  const auto* bytes = static_cast<const unsigned char*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i)
    if (bytes[i] != 0) return false;
  return true;
}

// Begin and end extents of the Pad per axis of a rank-`rank` input, when the Pad is a zero
// constant pad the pass can fold; else nullopt.
std::optional<std::vector<int64_t>> zero_pads(const ir::Graph& g, const ir::Node& pad, int rank) {
  if (pad.attrs.get_string("mode", "constant") != "constant") return std::nullopt;
  const int64_t opset = g.opset("");
  std::vector<int64_t> pads;
  std::vector<int64_t> axes;
  if (opset < 11) {
    if (pad.attrs.get_float("value", 0.0f) != 0.0f) return std::nullopt;
    pads = pad.attrs.get_ints(opset < 2 ? "paddings" : "pads");
  } else {
    auto p = constant_ints(g, pad, 1);
    if (!p) return std::nullopt;
    pads = std::move(*p);
    if (pad.inputs.size() > 2 && !pad.inputs[2].empty()) {
      const Tensor* value = ir::constant_value(g, pad.inputs[2]);
      if (!value || !holds_zero(*value)) return std::nullopt;
    }
    if (pad.inputs.size() > 3 && !pad.inputs[3].empty()) {
      auto a = constant_ints(g, pad, 3);
      if (!a) return std::nullopt;
      axes = std::move(*a);
    }
  }
  if (axes.empty() && !(pad.inputs.size() > 3 && !pad.inputs[3].empty()))
    for (int k = 0; k < rank; ++k) axes.push_back(k);
  const size_t n = axes.size();
  if (pads.size() != 2 * n) return std::nullopt;
  std::vector<int64_t> full(2 * static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank || pads[i] < 0 || pads[i + n] < 0) return std::nullopt;
    full[a] += pads[i];
    full[a + rank] += pads[i + n];
  }
  if (full[0] || full[1] || full[rank] || full[rank + 1]) return std::nullopt;
  return full;
}

}  // namespace

Result<int> fold_pad_into_conv(ir::Graph& g, const PassContext&) {
  const GraphFacts facts(g);
  return rewrite_all(g, [&](const GraphIndex& index, int ci) -> Result<bool> {
    const ir::Node& conv = g.nodes[ci];
    if (!is_onnx(conv, "Conv") || conv.inputs.size() < 2) return false;
    const std::string auto_pad = conv.attrs.get_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
    const int pi = index.producer(conv.inputs[0]);
    if (pi < 0 || !is_onnx(g.nodes[pi], "Pad") || !index.single_use(conv.inputs[0])) return false;
    const ir::Node& pad = g.nodes[pi];
    if (pad.inputs.empty() || pad.outputs.size() != 1) return false;
    // The rank from the input or, failing that, from W (the same rank by Conv's definition).
    int rank = facts.rank(pad.inputs[0]);
    if (rank < 0) rank = facts.rank(conv.inputs[1]);
    if (rank < 3) return false;
    const auto extents = zero_pads(g, pad, rank);
    if (!extents) return false;
    const int spatial = rank - 2;
    std::vector<int64_t> pads =
        auto_pad == "VALID" ? std::vector<int64_t>{} : conv.attrs.get_ints("pads");
    if (pads.empty()) pads.assign(2 * static_cast<size_t>(spatial), 0);
    if (pads.size() != 2 * static_cast<size_t>(spatial)) return false;
    for (int k = 0; k < spatial; ++k) {
      pads[k] += (*extents)[k + 2];
      pads[k + spatial] += (*extents)[rank + k + 2];
    }
    ir::Node folded = conv;
    folded.inputs[0] = pad.inputs[0];
    set_ints(folded, "pads", std::move(pads));
    if (auto_pad == "VALID") {
      Attribute a;
      a.kind = Attribute::Kind::String;
      a.s = "NOTSET";
      folded.attrs.set("auto_pad", std::move(a));
    }
    replace_nodes(g, {pi, ci}, std::move(folded));
    ir::remove_unused_initializers(g);
    return true;
  });
}

}  // namespace ignis::passes
