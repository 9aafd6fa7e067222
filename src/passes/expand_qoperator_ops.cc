// SPDX-License-Identifier: Apache-2.0
// onnxruntime's QOperator contrib ops that have no kernel of their own here, rewritten as the
// dequantize -> float op -> quantize form that defines them:
//   QGemm(A, a_s, a_zp, B, b_s, b_zp, [C], [y_s, y_zp])
//     =>  Gemm(DQ(A), DQ(B, alpha * b_s), [DQ(C, a_s * alpha * b_s)]) [-> QuantizeLinear(y_s, y_zp)]
//   QLinearSoftmax / QLinearSigmoid / QLinearLeakyRelu / QLinearAveragePool(X, x_s, x_zp, y_s, y_zp)
//     =>  QuantizeLinear(op(DQ(X)), y_s, y_zp)
//   QLinearConcat(y_s, y_zp, X0, s0, zp0, X1, ...)  =>  QuantizeLinear(Concat(DQ(X0), DQ(X1), ...))
//   QLinearWhere(cond, X, x_s, x_zp, Y, y_s, y_zp, z_s, z_zp)  =>  QuantizeLinear(Where(cond, DQ(X), DQ(Y)))
// onnxruntime's quantize_static writes these in its QOperator format (QGemm for every Gemm,
// QLinearSoftmax in transformers, QLinearConcat, ...) next to QLinearConv, QLinearMatMul and
// QLinearAdd, which ignis runs as they are. Runs before the optimizer at every level (the
// session and `ignis optimize` call it), so the ops load even with optimization off; at the
// higher levels the QDQ fusions then take the expanded form back to integer kernels (the Gemm
// to MatMulIntegerToFloat, Sigmoid and LeakyRelu to a byte table, equal-scale Concats onto
// the bytes). The results are the QDQ form's: within one step of y of onnxruntime's fused
// kernels, which round once from the integer sums (and, for QLinearSoftmax, from a 256-entry
// table of exponentials).
// QGemm's alpha goes into B's scale, so the Gemm keeps alpha 1 as the fusions expect; C is
// int32 at the scale a_s * alpha * b_s (zero point 0), dequantized along its last axis.
#include <initializer_list>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/strings.h"
#include "ir/rewrite.h"
#include "passes/graph_facts.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

class Expander {
 public:
  explicit Expander(ir::Graph& g) : g_(g), facts_(g) {}

  // The nodes replacing `n`, or an empty list when `n` is not an op this expands.
  Result<std::vector<ir::Node>> expand(const ir::Node& n) {
    out_.clear();
    if (n.domain != "com.microsoft") return out_;
    if (n.op_type == "QGemm") IGNIS_RETURN_IF_ERROR(qgemm(n));
    else if (n.op_type == "QLinearSoftmax") IGNIS_RETURN_IF_ERROR(softmax(n));
    else if (n.op_type == "QLinearSigmoid") IGNIS_RETURN_IF_ERROR(unary(n, "Sigmoid"));
    else if (n.op_type == "QLinearLeakyRelu") IGNIS_RETURN_IF_ERROR(unary(n, "LeakyRelu"));
    else if (n.op_type == "QLinearAveragePool") IGNIS_RETURN_IF_ERROR(average_pool(n));
    else if (n.op_type == "QLinearConcat") IGNIS_RETURN_IF_ERROR(concat(n));
    else if (n.op_type == "QLinearWhere") IGNIS_RETURN_IF_ERROR(where(n));
    return out_;
  }

 private:
  static std::string input(const ir::Node& n, size_t i) { return i < n.inputs.size() ? n.inputs[i] : std::string(); }

  std::string fresh(const std::string& base) {
    std::string name = ir::unique_value_name(g_, base);
    for (int k = 1; reserved_.count(name); ++k) name = ir::unique_value_name(g_, str_cat(base, "_", k));
    reserved_.insert(name);
    return name;
  }

  std::string constant(const std::string& base, Tensor t) {
    const std::string name = fresh(base);
    g_.initializers[name] = std::move(t);
    return name;
  }

  std::string add_node(const ir::Node& from, const std::string& suffix, std::string op, std::vector<std::string> inputs,
                       std::string output = {}) {
    ir::Node m;
    m.name = from.name.empty() ? std::string() : from.name + "/" + suffix;
    m.op_type = std::move(op);
    m.inputs = std::move(inputs);
    if (output.empty()) output = fresh((from.name.empty() ? from.outputs[0] : from.name) + "_" + suffix);
    m.outputs = {output};
    out_.push_back(std::move(m));
    return output;
  }

  // DequantizeLinear(x, scale, zero_point) with `axis` for a vector of scales; "" when x is absent.
  std::string dq(const ir::Node& n, const std::string& suffix, const std::string& x, const std::string& scale,
                 const std::string& zero_point, int64_t axis = 1) {
    std::vector<std::string> in = {x, scale};
    if (!zero_point.empty()) in.push_back(zero_point);
    const std::string y = add_node(n, suffix, "DequantizeLinear", std::move(in));
    if (axis != 1) set_int(out_.back(), "axis", axis);
    return y;
  }

  // The quantized type of a node whose zero points (those named) may all be absent: a present
  // zero point's, else `data`'s as the facts know it.
  Result<DType> quantized_type(const ir::Node& n, std::initializer_list<size_t> zero_points, const std::string& data) {
    for (size_t i : zero_points) {
      const std::string zp = input(n, i);
      if (zp.empty()) continue;
      if (const Tensor* t = ir::constant_value(g_, zp)) return t->dtype();
      if (facts_.dtype(zp) != DType::Undefined) return facts_.dtype(zp);
    }
    const DType t = facts_.dtype(data);
    if (t == DType::U8 || t == DType::I8) return t;
    return unsupported(str_cat(n.label(), ": its quantized type is unknown (no zero point, and the type of '", data,
                               "' is not known before running)"));
  }

  // QuantizeLinear(v, scale, zero_point) into `output`; an absent zero point becomes a 0 of type t.
  void quantize(const ir::Node& n, const std::string& v, const std::string& scale, std::string zero_point, DType t,
                const std::string& output) {
    if (zero_point.empty()) zero_point = constant((n.name.empty() ? output : n.name) + "_zero_point", Tensor::zeros(t, Shape{}));
    add_node(n, "quantize", "QuantizeLinear", {v, scale, zero_point}, output);
  }

  // scale * factor, as a constant when scale is one, else a Mul node.
  std::string scaled(const ir::Node& n, const std::string& suffix, const std::string& scale, float factor) {
    if (factor == 1.0f) return scale;
    if (const Tensor* s = ir::constant_value(g_, scale); s && s->dtype() == DType::F32) {
      Tensor t = Tensor::empty(DType::F32, s->shape());
      for (int64_t i = 0; i < s->numel(); ++i) t.data_as<float>()[i] = s->data_as<float>()[i] * factor;
      return constant(n.name + "_" + suffix, std::move(t));
    }
    Tensor f = Tensor::empty(DType::F32, Shape{});
    f.data_as<float>()[0] = factor;
    return add_node(n, suffix, "Mul", {scale, constant(n.name + "_alpha", std::move(f))});
  }

  // a * b (a per tensor, b per tensor or per column), as a constant when both are, else a Mul node.
  std::string product(const ir::Node& n, const std::string& suffix, const std::string& a, const std::string& b) {
    const Tensor* ta = ir::constant_value(g_, a);
    const Tensor* tb = ir::constant_value(g_, b);
    if (ta && tb && ta->dtype() == DType::F32 && tb->dtype() == DType::F32 && ta->numel() == 1) {
      Tensor t = Tensor::empty(DType::F32, tb->shape());
      for (int64_t i = 0; i < tb->numel(); ++i) t.data_as<float>()[i] = ta->data_as<float>()[0] * tb->data_as<float>()[i];
      return constant(n.name + "_" + suffix, std::move(t));
    }
    return add_node(n, suffix, "Mul", {a, b});
  }

  Status qgemm(const ir::Node& n) {
    if (n.inputs.size() < 6 || n.outputs.size() != 1) return invalid_model(str_cat(n.label(), ": expected 6 to 9 inputs"));
    const bool quantized_output = !input(n, 7).empty();
    if (!quantized_output && !input(n, 8).empty())
      return invalid_model(str_cat(n.label(), ": y_zero_point is given without y_scale"));
    const float alpha = n.attrs.get_float("alpha", 1.0f);
    const int64_t trans_b = n.attrs.get_int("transB", 0);
    const std::string a = dq(n, "dq_a", n.inputs[0], n.inputs[1], input(n, 2));
    const std::string b_scale = scaled(n, "b_scale_alpha", n.inputs[4], alpha);
    // Per-column scales lie along B's N axis: 0 when B is stored transposed ([N, K]).
    const std::string b = dq(n, "dq_b", n.inputs[3], b_scale, input(n, 5), trans_b ? 0 : 1);
    std::vector<std::string> gemm_in = {a, b};
    if (const std::string c = input(n, 6); !c.empty()) {
      const Tensor* tc = ir::constant_value(g_, c);
      const Tensor* ts = ir::constant_value(g_, b_scale);
      if (tc && ts && ts->numel() > 1 && (tc->rank() == 0 || tc->dim(tc->rank() - 1) != ts->numel()))
        return unsupported(str_cat(n.label(), ": C of shape ", tc->shape().str(), " with ", ts->numel(),
                                   " per-column scales (supported: C with one entry per column)"));
      gemm_in.push_back(dq(n, "dq_c", c, product(n, "c_scale", n.inputs[1], b_scale), "", -1));
    }
    const std::string y = n.outputs[0];
    const std::string product_out = quantized_output ? fresh(n.name.empty() ? y + "_float" : n.name + "_float") : y;
    ir::Node& gemm = out_.emplace_back();
    gemm.name = n.name;
    gemm.op_type = "Gemm";
    gemm.inputs = std::move(gemm_in);
    gemm.outputs = {product_out};
    if (n.attrs.get_int("transA", 0)) set_int(gemm, "transA", 1);
    if (trans_b) set_int(gemm, "transB", 1);
    if (quantized_output) {
      IGNIS_ASSIGN_OR_RETURN(DType t, quantized_type(n, {8, 2}, n.inputs[0]));
      quantize(n, product_out, n.inputs[7], input(n, 8), t, y);
    }
    return Status::ok();
  }

  // The float op of X(0), x_s(1), x_zp(2), y_s(3), y_zp(4) ops: `op` with `attrs` between DQ and Q.
  Status around(const ir::Node& n, const std::string& op, AttrMap attrs) {
    if (n.inputs.size() < 4 || n.outputs.size() != 1 || n.inputs[0].empty() || n.inputs[1].empty() || n.inputs[3].empty())
      return invalid_model(str_cat(n.label(), ": expected X, X_scale, [X_zero_point], Y_scale, [Y_zero_point]"));
    IGNIS_ASSIGN_OR_RETURN(DType t, quantized_type(n, {2, 4}, n.inputs[0]));
    const std::string x = dq(n, "dq", n.inputs[0], n.inputs[1], input(n, 2));
    const std::string v = add_node(n, "float", op, {x});
    out_.back().name = n.name;
    out_.back().attrs = std::move(attrs);
    quantize(n, v, n.inputs[3], input(n, 4), t, n.outputs[0]);
    return Status::ok();
  }

  Status unary(const ir::Node& n, const char* op) {
    AttrMap attrs;
    if (std::string(op) == "LeakyRelu") {
      Attribute a;
      a.kind = Attribute::Kind::Float;
      a.f = n.attrs.get_float("alpha", 0.01f);
      attrs.set("alpha", std::move(a));
    }
    return around(n, op, std::move(attrs));
  }

  Status softmax(const ir::Node& n) {
    const int64_t version = n.attrs.get_int("opset", 0);
    if (version < 1) return invalid_model(str_cat(n.label(), ": attribute 'opset' (>= 1) is required"));
    const int64_t axis = n.attrs.get_int("axis", version < 13 ? 1 : -1);
    // Before opset 13 Softmax normalizes over every axis from `axis` on, since over `axis`
    // alone. The float Softmax takes the graph's version; where the two differ, only a last
    // axis means the same in both.
    const bool old_node = version < 13, old_graph = g_.opset("") < 13;
    if (old_node != old_graph) {
      const int rank = facts_.rank(n.inputs[0]);
      if (axis != -1 && (rank < 0 || axis != rank - 1))
        return unsupported(str_cat(n.label(), ": softmax over axis ", axis, " with attribute opset ", version,
                                   " in a model of opset ", g_.opset(""), " (supported: the last axis, or one opset)"));
    }
    AttrMap attrs;
    Attribute a;
    a.kind = Attribute::Kind::Int;
    a.i = axis;
    attrs.set("axis", std::move(a));
    return around(n, "Softmax", std::move(attrs));
  }

  Status average_pool(const ir::Node& n) {
    if (n.attrs.get_int("channels_last", 0) != 0)
      return unsupported(str_cat(n.label(), ": channels_last = 1 (supported: channels first)"));
    AttrMap attrs;
    for (const auto& [name, a] : n.attrs.items())
      if (name != "channels_last") attrs.set(name, a);
    return around(n, "AveragePool", std::move(attrs));
  }

  Status concat(const ir::Node& n) {
    if (n.inputs.size() < 5 || (n.inputs.size() - 2) % 3 != 0 || n.outputs.size() != 1)
      return invalid_model(str_cat(n.label(), ": expected Y_scale, Y_zero_point and triples of X, X_scale, X_zero_point"));
    IGNIS_ASSIGN_OR_RETURN(DType t, quantized_type(n, {1, 4}, n.inputs[2]));
    std::vector<std::string> parts;
    for (size_t i = 2; i + 2 < n.inputs.size(); i += 3)
      parts.push_back(dq(n, str_cat("dq_", (i - 2) / 3), n.inputs[i], n.inputs[i + 1], n.inputs[i + 2]));
    const std::string v = add_node(n, "float", "Concat", std::move(parts));
    out_.back().name = n.name;
    set_int(out_.back(), "axis", n.attrs.get_int("axis", 0));
    quantize(n, v, n.inputs[0], n.inputs[1], t, n.outputs[0]);
    return Status::ok();
  }

  Status where(const ir::Node& n) {
    if (n.inputs.size() < 8 || n.outputs.size() != 1)
      return invalid_model(str_cat(n.label(), ": expected condition, X, x_scale, x_zero_point, Y, y_scale, "
                                              "y_zero_point, z_scale, z_zero_point"));
    IGNIS_ASSIGN_OR_RETURN(DType t, quantized_type(n, {8, 3, 6}, n.inputs[1]));
    const std::string x = dq(n, "dq_x", n.inputs[1], n.inputs[2], n.inputs[3]);
    const std::string y = dq(n, "dq_y", n.inputs[4], n.inputs[5], n.inputs[6]);
    const std::string v = add_node(n, "float", "Where", {n.inputs[0], x, y});
    out_.back().name = n.name;
    quantize(n, v, n.inputs[7], input(n, 8), t, n.outputs[0]);
    return Status::ok();
  }

  ir::Graph& g_;
  GraphFacts facts_;
  std::unordered_set<std::string> reserved_;
  std::vector<ir::Node> out_;
};

}  // namespace

Result<int> expand_qoperator_ops(ir::Graph& g) {
  bool any = false;
  for (const auto& n : g.nodes) any = any || n.domain == "com.microsoft";
  if (!any) return 0;
  Expander e(g);
  std::vector<ir::Node> nodes;
  nodes.reserve(g.nodes.size());
  int count = 0;
  // Copies, not moves: the new names must stay clear of every value of the graph as it was.
  for (const auto& n : g.nodes) {
    IGNIS_ASSIGN_OR_RETURN(auto replaced, e.expand(n));
    if (replaced.empty()) {
      nodes.push_back(n);
      continue;
    }
    for (auto& m : replaced) nodes.push_back(std::move(m));
    ++count;
  }
  g.nodes = std::move(nodes);
  return count;
}

}  // namespace ignis::passes
