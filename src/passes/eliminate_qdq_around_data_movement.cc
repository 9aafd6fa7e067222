// SPDX-License-Identifier: Apache-2.0
// Drops the dequantize / quantize pair that QDQ models (onnxruntime's quantize_static,
// `ignis quantize --calibrate`) put around ops that only select or move elements, so that they
// run on the quantized bytes:
//   QuantizeLinear(OP(DequantizeLinear(x_q, s, zp), ...), s', zp')  =>  OP(x_q, ...)
// for OP in MaxPool (Indices unused), Reshape, Flatten, Transpose, Squeeze, Unsqueeze,
// Identity, Slice, Concat (every input a DequantizeLinear), Resize in nearest mode,
// SpaceToDepth and DepthToSpace; and a bare pair QuantizeLinear(DequantizeLinear(x_q)) => x_q.
// Exact, not approximately so: s' == s and zp' == zp (values compared; per tensor), and s is a
// positive normal float32. Then Q(DQ(q)) == q for every q of the type: with n = q - zp,
// |n| <= 255, fl(fl(n * s) / s) lies within two ulps of n, far less than the 0.5 that would
// change its rounding, and q is inside the type's range so nothing saturates. Each of these
// ops outputs copies of its input elements (MaxPool: the largest of a window, and DQ is
// increasing for s > 0, so it picks the same element; its padding is no value), hence
// Q(OP(DQ(x))) == OP(Q(DQ(x))) == OP(x) element for element. Resize's tf_crop_and_resize
// mode writes an extrapolation value that is no input element, and is left alone.
// Legality: the DQ outputs and the op's output feed only the next node of the pattern and are
// not graph outputs (the Q output may be one); the op is in the default domain at an opset
// whose schema takes uint8/int8 (MaxPool since 12).
#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"
#include "passes/qdq_params.h"

namespace ignis::passes {

namespace {

// Whether `op` outputs copies of its data input elements, so that it runs unchanged on the
// quantized values; MaxPool also needs its Indices output unused (checked by the caller).
bool moves_elements(const ir::Graph& g, const ir::Node& op) {
  static constexpr std::string_view kOps[] = {"Reshape", "Flatten", "Transpose", "Squeeze",     "Unsqueeze",
                                              "Identity", "Slice",  "Concat",    "SpaceToDepth", "DepthToSpace"};
  if (!op.domain.empty()) return false;
  for (std::string_view name : kOps)
    if (op.op_type == name) return true;
  if (op.op_type == "MaxPool") return g.opset("") >= 12;  // uint8/int8 inputs since MaxPool-12
  if (op.op_type == "Resize")
    return op.attrs.get_string("mode", "nearest") == "nearest" &&
           op.attrs.get_string("coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize";
  return false;
}

// A scale for which DQ then Q gives back every value of the type (see the file comment).
bool round_trips(float s) {
  return std::isnormal(s) && s > 0.0f && s < std::numeric_limits<float>::max() / 256.0f;
}

bool same_params(const QParams& a, const QParams& b) {
  return a.scale->data_as<float>()[0] == b.scale->data_as<float>()[0] &&
         a.zero_point->dtype() == b.zero_point->dtype() && zero_point_value(a, 0) == zero_point_value(b, 0);
}

}  // namespace

Result<int> eliminate_qdq_around_data_movement(ir::Graph& g, const PassContext&) {
  return rewrite_all(g, [&](const GraphIndex& index, int qi) -> Result<bool> {
    const ir::Node& q = g.nodes[qi];
    if (!is_onnx(q, "QuantizeLinear") || q.outputs.size() != 1) return false;
    const auto y = constant_params(g, q);
    if (!y || y->count() != 1 || !round_trips(y->scale->data_as<float>()[0])) return false;
    const std::string& v = q.inputs[0];
    if (!index.single_use(v)) return false;
    // A bare pair, Q(DQ(x_q)) at the same parameters (what is left when the op between them
    // was dropped as a no-op, e.g. a Reshape to the shape its input has): x_q itself.
    if (const auto dq = per_tensor_dq(g, index, v); dq && same_params(dq->second, *y)) {
      ir::Node id;
      id.name = q.name;
      id.op_type = "Identity";
      id.inputs = {g.nodes[dq->first].inputs[0]};
      id.outputs = {q.outputs[0]};
      replace_nodes(g, {dq->first, qi}, std::move(id));
      return true;
    }
    const int oi = index.producer(v);
    if (oi < 0 || !moves_elements(g, g.nodes[oi])) return false;
    const ir::Node& op = g.nodes[oi];
    if (op.inputs.empty() || op.outputs.empty() || op.outputs[0] != v) return false;
    // MaxPool's Indices: dropped when nothing reads it, else the op cannot move.
    for (size_t i = 1; i < op.outputs.size(); ++i)
      if (!op.outputs[i].empty() && (!index.consumers(op.outputs[i]).empty() || ir::is_graph_output(g, op.outputs[i])))
        return false;
    // The data inputs: all of Concat's, the first of the others.
    const size_t data_inputs = op.op_type == "Concat" ? op.inputs.size() : 1;
    std::vector<int> pattern;
    ir::Node moved = op;
    for (size_t i = 0; i < data_inputs; ++i) {
      const auto dq = per_tensor_dq(g, index, op.inputs[i]);
      if (!dq || !index.single_use(op.inputs[i]) || !same_params(dq->second, *y)) return false;
      pattern.push_back(dq->first);
      moved.inputs[i] = g.nodes[dq->first].inputs[0];
    }
    pattern.push_back(oi);
    pattern.push_back(qi);
    moved.outputs = {q.outputs[0]};
    replace_nodes(g, std::move(pattern), std::move(moved));
    return true;
  });
}

}  // namespace ignis::passes
