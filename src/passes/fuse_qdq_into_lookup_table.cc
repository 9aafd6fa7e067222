// SPDX-License-Identifier: Apache-2.0
// Replaces a float function of one quantized tensor, quantized again, with a table of its 256
// results:
//   QuantizeLinear(f(DequantizeLinear(x_q)), y_s, y_zp)  =>  ai.ignis QLinearLookup(x_q, table)
// where f is a DAG of element-wise float ops (elementwise_unary's: Sigmoid, Tanh, HardSwish,
// Clip, ...; Add, Sub, Mul, Div, Max, Min, Pow of two such values or of one and a scalar
// constant) and of inner per-tensor QuantizeLinear / DequantizeLinear pairs, whose every leaf is
// a per-tensor DequantizeLinear of the same x_q. A quantized SiLU as onnxruntime's quantizer
// writes it, Mul(DQ(x), DQ(Q(Sigmoid(DQ(x))))) -> Q, is one: five float ops over the whole
// tensor become one byte lookup per element.
// The table is computed at optimization time by running the nodes themselves (the runtime's
// kernels, through PassContext::evaluate) on the 256 values of x_q's type, so it holds what the
// float graph computes for each input value, up to the kernels' own differences between lane
// positions (none for the element-wise ops here).
// Legality: the scales and zero points are constants, per tensor (zero points present: their
// type names the quantized type, uint8 or int8); the scalar constants have rank at most x_q's,
// so they do not widen its shape. Only the final QuantizeLinear is replaced: a value inside f
// that something else reads keeps its nodes, and eliminate_dead_code drops the rest.
// Level All (an ai.ignis op). Runs before fuse_qdq_into_qlinear_mul, which would otherwise
// take the SiLU's Mul.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/rewrite.h"
#include "passes/graph_facts.h"
#include "passes/match.h"
#include "passes/pass.h"
#include "passes/qdq_params.h"

namespace ignis::passes {

namespace {

// More nodes than this in one function are not searched further.
constexpr size_t kMaxNodes = 32;

bool binary_elementwise(const ir::Node& n) {
  static const std::unordered_set<std::string> kOps = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"};
  return n.domain.empty() && n.inputs.size() == 2 && n.outputs.size() == 1 && kOps.count(n.op_type) > 0;
}

bool byte_type(DType t) { return t == DType::U8 || t == DType::I8; }

// Per-tensor constant parameters of a QuantizeLinear / DequantizeLinear of bytes.
bool per_tensor_bytes(const ir::Graph& g, const ir::Node& n) {
  const auto p = constant_params(g, n);
  return p && p->count() == 1 && byte_type(p->zero_point->dtype());
}

// The nodes of f found so far and its one quantized input.
struct Function {
  std::set<int> nodes;
  std::string root;  // x_q
  DType root_type = DType::Undefined;
  std::set<std::string> seen;
};

class FunctionFinder {
 public:
  FunctionFinder(const ir::Graph& g, const GraphIndex& index, const GraphFacts& facts)
      : g_(g), index_(index), facts_(facts) {}

  // Adds the nodes computing `value` to f; false when `value` is not such a function.
  bool add(const std::string& value, Function& f) const {
    if (f.seen.count(value)) return true;
    f.seen.insert(value);
    const int p = index_.producer(value);
    if (p < 0 || f.nodes.size() >= kMaxNodes) return false;
    const ir::Node& n = g_.nodes[p];
    f.nodes.insert(p);
    if (is_onnx(n, "DequantizeLinear")) {
      if (!per_tensor_bytes(g_, n)) return false;
      // An inner pair (the DQ of a Q, or of an earlier table, that is itself part of f), else a
      // leaf.
      Function inner = f;
      const int qp = index_.producer(n.inputs[0]);
      const bool inner_op = qp >= 0 && (is_onnx(g_.nodes[qp], "QuantizeLinear") || is_ignis(g_.nodes[qp], "QLinearLookup"));
      if (inner_op && add(n.inputs[0], inner)) {
        f = std::move(inner);
        return true;
      }
      return set_root(n.inputs[0], constant_params(g_, n)->zero_point->dtype(), f);
    }
    // A table this pass made of a part of f (a quantized Sigmoid inside a SiLU): its input is
    // f's input.
    if (is_ignis(n, "QLinearLookup")) return set_root(n.inputs[0], quantized_type(n.inputs[0]), f);
    if (is_onnx(n, "QuantizeLinear")) return per_tensor_bytes(g_, n) && add(n.inputs[0], f);
    if (elementwise_unary(n)) {
      for (size_t i = 1; i < n.inputs.size(); ++i)  // Clip's bounds
        if (!n.inputs[i].empty() && ir::constant_value(g_, n.inputs[i]) == nullptr) return false;
      return add(n.inputs[0], f);
    }
    if (binary_elementwise(n)) {
      int computed = 0;
      for (const std::string& in : n.inputs) {
        if (scalar_constant(g_, in, scalar_rank_limit(f)).has_value()) continue;
        if (!add(in, f)) return false;
        ++computed;
      }
      return computed > 0;
    }
    return false;
  }

 private:
  // The type of a quantized value: known to the facts, or named by the zero point of a
  // DequantizeLinear reading it (the facts may not know the outputs of the fused int8 ops).
  DType quantized_type(const std::string& value) const {
    if (byte_type(facts_.dtype(value))) return facts_.dtype(value);
    for (int c : index_.consumers(value))
      if (is_onnx(g_.nodes[c], "DequantizeLinear") && per_tensor_bytes(g_, g_.nodes[c]))
        return constant_params(g_, g_.nodes[c])->zero_point->dtype();
    return DType::Undefined;
  }

  static bool set_root(const std::string& value, DType t, Function& f) {
    if (!byte_type(t) || (!f.root.empty() && (f.root != value || f.root_type != t))) return false;
    f.root = value;
    f.root_type = t;
    return true;
  }

  // A scalar constant of rank above x_q's would widen the result's shape; x_q's rank is known
  // only once the leaf is found, so an unknown one admits rank 0 only.
  int scalar_rank_limit(const Function& f) const {
    const int r = f.root.empty() ? -1 : facts_.rank(f.root);
    return std::max(r, 0);
  }

  const ir::Graph& g_;
  const GraphIndex& index_;
  const GraphFacts& facts_;
};

// The 256 results of f followed by the final QuantizeLinear `q`, evaluated node by node in the
// graph's (topological) order on x_q = every value of its type.
Result<std::optional<Tensor>> evaluate_table(const ir::Graph& g, const PassContext& ctx, const Function& f,
                                             const ir::Node& q) {
  Tensor x = Tensor::empty(f.root_type, Shape{256});
  auto* xb = static_cast<uint8_t*>(x.data());
  // Index i holds the value min(type) + i: for int8, the byte i with its sign bit flipped.
  for (int i = 0; i < 256; ++i) xb[i] = static_cast<uint8_t>(f.root_type == DType::I8 ? i ^ 0x80 : i);
  std::map<std::string, Tensor> values;
  values.emplace(f.root, std::move(x));
  const auto run = [&](const ir::Node& n) -> Result<std::optional<Tensor>> {
    std::vector<const Tensor*> inputs;
    for (const std::string& in : n.inputs) {
      if (in.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      const auto it = values.find(in);
      const Tensor* t = it != values.end() ? &it->second : ir::constant_value(g, in);
      if (t == nullptr) return std::optional<Tensor>();
      inputs.push_back(t);
    }
    IGNIS_ASSIGN_OR_RETURN(std::vector<Tensor> out, ctx.evaluate(n, g.opset(n.domain), inputs));
    if (out.size() != 1 || out[0].numel() != 256) return std::optional<Tensor>();
    return std::optional<Tensor>(std::move(out[0]));
  };
  for (int i : f.nodes) {  // ascending: the graph's topological order
    IGNIS_ASSIGN_OR_RETURN(std::optional<Tensor> out, run(g.nodes[i]));
    if (!out) return std::optional<Tensor>();
    values.insert_or_assign(g.nodes[i].outputs[0], std::move(*out));
  }
  return run(q);
}

}  // namespace

Result<int> fuse_qdq_into_lookup_table(ir::Graph& g, const PassContext& ctx) {
  if (!ctx.evaluate) return 0;
  const GraphFacts facts(g);
  return rewrite_all(g, [&](const GraphIndex& index, int qi) -> Result<bool> {
    const ir::Node& q = g.nodes[qi];
    if (!is_onnx(q, "QuantizeLinear") || q.outputs.size() != 1 || !per_tensor_bytes(g, q)) return false;
    Function f;
    if (!FunctionFinder(g, index, facts).add(q.inputs[0], f) || f.root.empty()) return false;
    // A function computes something: a bare DQ -> Q requantization is left to the passes that
    // know the ops around it.
    const bool computes = std::any_of(f.nodes.begin(), f.nodes.end(), [&](int i) {
      return !is_onnx(g.nodes[i], "QuantizeLinear") && !is_onnx(g.nodes[i], "DequantizeLinear");
    });
    if (!computes) return false;
    IGNIS_ASSIGN_OR_RETURN(std::optional<Tensor> table, evaluate_table(g, ctx, f, q));
    if (!table || !byte_type(table->dtype())) return false;
    const std::string table_name = ir::unique_value_name(g, q.outputs[0] + "_table");
    g.initializers[table_name] = std::move(*table);
    ir::Node lookup;
    lookup.name = q.name;
    lookup.op_type = "QLinearLookup";
    lookup.domain = "ai.ignis";
    lookup.inputs = {f.root, table_name};
    lookup.outputs = {q.outputs[0]};
    import_ignis_domain(g);
    replace_nodes(g, {qi}, std::move(lookup));
    return true;
  });
}

}  // namespace ignis::passes
