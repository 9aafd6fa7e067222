// SPDX-License-Identifier: Apache-2.0
#include "passes/match.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_set>

#include "ir/rewrite.h"

namespace ignis::passes {

GraphIndex::GraphIndex(const ir::Graph& g) : g_(g), uses_(ir::consumers(g)), producers_(ir::producers(g)) {}

int GraphIndex::producer(const std::string& value) const {
  auto it = producers_.find(value);
  return it == producers_.end() ? -1 : it->second;
}

const ir::Node* GraphIndex::producer_op(const std::string& value, std::string_view op_type) const {
  const int p = producer(value);
  if (p < 0) return nullptr;
  const ir::Node& n = g_.nodes[p];
  if (!op_type.empty() && !is_onnx(n, op_type)) return nullptr;
  return &n;
}

const std::vector<int>& GraphIndex::consumers(const std::string& value) const {
  auto it = uses_.find(value);
  return it == uses_.end() ? none_ : it->second;
}

bool GraphIndex::single_use(const std::string& value) const {
  return consumers(value).size() == 1 && !ir::is_graph_output(g_, value);
}

bool GraphIndex::used_only_by(const std::string& value, const std::vector<int>& nodes) const {
  if (ir::is_graph_output(g_, value)) return false;
  for (int c : consumers(value))
    if (std::find(nodes.begin(), nodes.end(), c) == nodes.end()) return false;
  return true;
}

std::optional<double> scalar_constant(const ir::Graph& g, const std::string& value, int max_rank) {
  const Tensor* t = ir::constant_value(g, value);
  if (!t || t->dtype() != DType::F32 || t->numel() != 1 || t->rank() > max_rank) return std::nullopt;
  return static_cast<double>(t->data_as<float>()[0]);
}

const Tensor* f32_constant_input(const ir::Graph& g, const ir::Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i].empty()) return nullptr;
  const Tensor* t = ir::constant_value(g, n.inputs[i]);
  return t && t->dtype() == DType::F32 ? t : nullptr;
}

std::optional<std::vector<int64_t>> constant_ints(const ir::Graph& g, const ir::Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i].empty()) return std::nullopt;
  const Tensor* t = ir::constant_value(g, n.inputs[i]);
  if (!t || t->rank() > 1 || (t->dtype() != DType::I64 && t->dtype() != DType::I32)) return std::nullopt;
  std::vector<int64_t> v(static_cast<size_t>(t->numel()));
  for (int64_t k = 0; k < t->numel(); ++k)
    v[k] = t->dtype() == DType::I64 ? t->data_as<int64_t>()[k] : t->data_as<int32_t>()[k];
  return v;
}

void set_int(ir::Node& n, const std::string& name, int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  n.attrs.set(name, std::move(a));
}

void set_ints(ir::Node& n, const std::string& name, std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
  n.attrs.set(name, std::move(a));
}

bool nearly(double a, double b, double tol) { return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b)); }

std::string other_input(const ir::Node& n, const std::string& v) {
  if (n.inputs.size() != 2) return {};
  if (n.inputs[0] == v) return n.inputs[1];
  if (n.inputs[1] == v) return n.inputs[0];
  return {};
}

void import_ignis_domain(ir::Graph& g) {
  if (g.opset("ai.ignis") == 0) g.opsets["ai.ignis"] = 1;
}

void import_microsoft_domain(ir::Graph& g) {
  if (g.opset("com.microsoft") == 0) g.opsets["com.microsoft"] = 1;
}

std::optional<std::pair<int, std::string>> constant_bias_add(const ir::Graph& g, const GraphIndex& index,
                                                             const std::string& value, int64_t n) {
  if (n < 0 || !index.single_use(value)) return std::nullopt;
  const int ai = index.consumers(value)[0];
  const ir::Node& add = g.nodes[ai];
  const std::string bias = is_onnx(add, "Add") && add.outputs.size() == 1 ? other_input(add, value) : std::string();
  const Tensor* t = bias.empty() || bias == value ? nullptr : ir::constant_value(g, bias);
  if (t == nullptr || t->dtype() != DType::F32 || t->rank() != 1 || t->dim(0) != n) return std::nullopt;
  return std::make_pair(ai, bias);
}

int only_reader(const GraphIndex& index, const std::string& value) {
  return index.single_use(value) ? index.consumers(value)[0] : -1;
}

bool reduces_last_axis(const ir::Graph& g, const ir::Node& n, std::string_view op_type, int rank) {
  if (!is_onnx(n, op_type) || n.outputs.size() != 1 || n.attrs.get_int("keepdims", 1) != 1) return false;
  std::vector<int64_t> axes;
  if (n.inputs.size() >= 2 && !n.inputs[1].empty()) {
    auto given = constant_ints(g, n, 1);
    if (!given) return false;
    axes = *given;
  } else {
    axes = n.attrs.get_ints("axes");
  }
  return axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
}

bool all_finite_f32(const Tensor& t) {
  const float* v = t.data_as<const float>();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(v[i])) return false;
  return true;
}

void replace_nodes(ir::Graph& g, std::vector<int> pattern, ir::Node fused) {
  std::sort(pattern.begin(), pattern.end());
  pattern.erase(std::unique(pattern.begin(), pattern.end()), pattern.end());
  g.nodes[pattern.back()] = std::move(fused);
  std::vector<bool> remove(g.nodes.size(), false);
  for (size_t i = 0; i + 1 < pattern.size(); ++i) remove[pattern[i]] = true;
  ir::remove_nodes(g, remove);
}

std::optional<std::pair<float, float>> constant_clip_bounds(const ir::Graph& g, const ir::Node& clip) {
  if (!clip.domain.empty() || clip.op_type != "Clip") return std::nullopt;
  // Before opset 11 the bounds are attributes (defaulting to the float range); from 11 they
  // are optional scalar inputs, which must be constants here.
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (g.opset("") < 11) {
    lo = clip.attrs.get_float("min", std::numeric_limits<float>::lowest());
    hi = clip.attrs.get_float("max", std::numeric_limits<float>::max());
  } else {
    if (clip.inputs.size() > 3) return std::nullopt;
    for (size_t i = 1; i < clip.inputs.size(); ++i) {
      if (clip.inputs[i].empty()) continue;
      auto v = scalar_constant(g, clip.inputs[i], 1);
      if (!v) return std::nullopt;
      (i == 1 ? lo : hi) = static_cast<float>(*v);
    }
  }
  if (lo > hi) return std::nullopt;  // Clip then returns max everywhere; keep the op as written
  return std::pair{lo, hi};
}

namespace {

// A single-input activation node reading `value` as its input 0, in the form FusedConv and
// FusedMatMul encode. Returns false for anything else.
bool single_node_activation(const ir::Graph& g, const ir::Node& a, ActivationMatch& m) {
  if (a.outputs.size() != 1 || a.inputs.empty()) return false;
  if (a.domain == "ai.ignis" && a.op_type == "Gelu") {
    m.kind = a.attrs.get_string("approximate", "none") == "tanh" ? Activation::GeluTanh : Activation::Gelu;
    return true;
  }
  if (!a.domain.empty()) return false;
  const std::string& op = a.op_type;
  if (op == "Relu" || op == "Sigmoid" || op == "HardSwish") {
    m.kind = *activation_from_name(op);
    return true;
  }
  if (op == "Gelu") {
    const std::string approx = a.attrs.get_string("approximate", "none");
    if (approx != "none" && approx != "tanh") return false;
    m.kind = approx == "tanh" ? Activation::GeluTanh : Activation::Gelu;
    return true;
  }
  if (op == "LeakyRelu") {
    m.kind = Activation::LeakyRelu;
    m.params = {{"activation_alpha", a.attrs.get_float("alpha", 0.01f)}};
    return true;
  }
  if (op == "HardSigmoid") {
    m.kind = Activation::HardSigmoid;
    m.params = {{"activation_alpha", a.attrs.get_float("alpha", 0.2f)},
                {"activation_beta", a.attrs.get_float("beta", 0.5f)}};
    return true;
  }
  if (op == "Clip") {
    const auto bounds = constant_clip_bounds(g, a);
    if (!bounds) return false;
    const auto [lo, hi] = *bounds;
    m.kind = Activation::Clip;
    if (std::isfinite(lo) || g.opset("") < 11) m.params.push_back({"activation_min", lo});
    if (std::isfinite(hi) || g.opset("") < 11) m.params.push_back({"activation_max", hi});
    return true;
  }
  return false;
}

}  // namespace

std::optional<ActivationMatch> match_activation(const GraphIndex& index, const std::string& value) {
  const ir::Graph& g = index.graph();
  if (ir::is_graph_output(g, value)) return std::nullopt;
  const auto& uses = index.consumers(value);
  ActivationMatch m;
  if (uses.size() == 1) {
    const ir::Node& a = g.nodes[uses[0]];
    if (a.inputs[0] != value || !single_node_activation(g, a, m)) return std::nullopt;
    for (size_t i = 1; i < a.inputs.size(); ++i)
      if (a.inputs[i] == value) return std::nullopt;
    m.nodes = {uses[0]};
    m.output = a.outputs[0];
    return m;
  }
  if (uses.size() == 2) {
    // SiLU: Mul(value, Sigmoid(value)), operands in either order. Same shapes on both sides,
    // so the Mul does not broadcast.
    for (int k = 0; k < 2; ++k) {
      const int si = uses[k], mi = uses[1 - k];
      const ir::Node& sig = g.nodes[si];
      const ir::Node& mul = g.nodes[mi];
      if (!is_onnx(sig, "Sigmoid") || !is_onnx(mul, "Mul") || sig.outputs.size() != 1 || mul.outputs.size() != 1)
        continue;
      if (sig.inputs[0] != value || other_input(mul, value) != sig.outputs[0]) continue;
      if (!index.single_use(sig.outputs[0])) continue;
      m.kind = Activation::SiLU;
      m.nodes = {si, mi};
      m.output = mul.outputs[0];
      return m;
    }
  }
  return std::nullopt;
}

void set_activation(ir::Node& fused, const ActivationMatch& m) {
  Attribute name;
  name.kind = Attribute::Kind::String;
  name.s = std::string(activation_name(m.kind));
  fused.attrs.set("activation", name);
  for (const auto& [key, v] : m.params) {
    Attribute a;
    a.kind = Attribute::Kind::Float;
    a.f = v;
    fused.attrs.set(key, a);
  }
}

Result<int> rewrite_all(ir::Graph& g, const std::function<Result<bool>(const GraphIndex&, int)>& try_at) {
  int count = 0;
  for (bool changed = true; changed;) {
    changed = false;
    const GraphIndex index(g);
    for (int i = 0; i < static_cast<int>(g.nodes.size()) && !changed; ++i) {
      IGNIS_ASSIGN_OR_RETURN(changed, try_at(index, i));
    }
    count += changed ? 1 : 0;
  }
  return count;
}

bool elementwise_unary(const ir::Node& n) {
  static const std::unordered_set<std::string> kOps = {
      "Relu",  "LeakyRelu", "Sigmoid", "Tanh",     "Elu",  "Selu",  "Celu", "HardSigmoid", "HardSwish",
      "Softplus", "Softsign", "Abs",   "Neg",      "Exp",  "Log",   "Sqrt", "Reciprocal",  "Floor",
      "Ceil",  "Round",     "Erf",     "Sign",     "Gelu", "Mish",  "ThresholdedRelu"};
  if (!n.domain.empty() || n.outputs.size() != 1 || n.inputs.empty()) return false;
  if (n.op_type == "Clip") return n.inputs.size() <= 3;
  return n.inputs.size() == 1 && kOps.count(n.op_type) > 0;
}

}  // namespace ignis::passes
