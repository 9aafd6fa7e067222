// SPDX-License-Identifier: Apache-2.0
// Pattern-matching helpers shared by the fusion passes: use lists, constant lookups, the
// activation matcher, and the rewrite that swaps a matched set of nodes for one fused node.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/activation.h"
#include "ignis/status.h"
#include "ir/graph.h"
#include "passes/graph_facts.h"

namespace ignis::passes {

// Producers and use lists of a graph at one moment; rebuilt after every rewrite.
class GraphIndex {
 public:
  explicit GraphIndex(const ir::Graph& g);

  const ir::Graph& graph() const { return g_; }
  // Index of the node producing `value`; -1 for graph inputs, initializers and unknown names.
  int producer(const std::string& value) const;
  // The producing node when it is the ai.onnx op `op_type` (any op when empty), else nullptr.
  const ir::Node* producer_op(const std::string& value, std::string_view op_type = {}) const;
  // Indices of the nodes reading `value`, one entry per use.
  const std::vector<int>& consumers(const std::string& value) const;
  // True when `value` is read exactly once and is not a graph output: its producer can be
  // folded into that one consumer.
  bool single_use(const std::string& value) const;
  // True when `value` is not a graph output and every use is by a node in `nodes`.
  bool used_only_by(const std::string& value, const std::vector<int>& nodes) const;

 private:
  const ir::Graph& g_;
  std::unordered_map<std::string, std::vector<int>> uses_;
  std::unordered_map<std::string, int> producers_;
  std::vector<int> none_;
};

// The node is `op_type` in the default ONNX domain.
inline bool is_onnx(const ir::Node& n, std::string_view op_type) { return n.domain.empty() && n.op_type == op_type; }
inline bool is_ignis(const ir::Node& n, std::string_view op_type) {
  return n.domain == "ai.ignis" && n.op_type == op_type;
}

// The value of a float32 initializer with a single element and rank <= max_rank, else nullopt.
// The rank bound keeps a [1, 1, 1] constant from widening the shape of what it is applied to.
std::optional<double> scalar_constant(const ir::Graph& g, const std::string& value, int max_rank);
// Node input i when it is a float32 initializer, else nullptr (also when absent).
const Tensor* f32_constant_input(const ir::Graph& g, const ir::Node& n, size_t i);
// The values of node input i when it is a constant int64/int32 tensor of rank <= 1, else nullopt.
std::optional<std::vector<int64_t>> constant_ints(const ir::Graph& g, const ir::Node& n, size_t i);
// Whether every value of float32 tensor `t` is finite (a weight whose products with zeros
// are zeros).
bool all_finite_f32(const Tensor& t);
// Sets (or replaces) an int attribute.
void set_int(ir::Node& n, const std::string& name, int64_t v);
// Sets (or replaces) an ints attribute.
void set_ints(ir::Node& n, const std::string& name, std::vector<int64_t> v);
// |a - b| <= tol * max(1, |b|).
bool nearly(double a, double b, double tol = 1e-6);

// An op applied to each element on its own, with attributes and other inputs (Clip's scalar
// bounds) that do not depend on the layout or the shape: it commutes with any Transpose, and
// is a function of each element's value alone.
bool elementwise_unary(const ir::Node& n);

// The bounds {min, max} of a Clip whose bounds are constants (attributes before opset 11,
// scalar inputs from 11; absent ones infinite, or the float range before 11), min <= max.
std::optional<std::pair<float, float>> constant_clip_bounds(const ir::Graph& g, const ir::Node& clip);

// The one node reading `value` when it is read once and is not a graph output, else -1.
int only_reader(const GraphIndex& index, const std::string& value);

// Whether `n` is the ai.onnx reduction `op_type` over only the last axis of a rank-`rank` input
// (axes -1 or rank - 1, as the attribute before opset 18 or a constant input from it), keeping
// that axis.
bool reduces_last_axis(const ir::Graph& g, const ir::Node& n, std::string_view op_type, int rank);

// For a two-input node that reads `v`, the other input ("" when `v` is not an input).
std::string other_input(const ir::Node& n, const std::string& v);

// Adds the ai.ignis opset import (version 1) if the model lacks it.
void import_ignis_domain(ir::Graph& g);
// Adds the com.microsoft opset import (version 1) if the model lacks it.
void import_microsoft_domain(ir::Graph& g);

// The Add that alone reads `value` (GraphIndex::single_use) with a constant float32 [n] as its
// other input, which a fused node can take as its bias: {the Add's index, the bias's name}.
// n < 0 (an unknown width) never matches.
std::optional<std::pair<int, std::string>> constant_bias_add(const ir::Graph& g, const GraphIndex& index,
                                                             const std::string& value, int64_t n);

// Replaces the nodes `pattern` (indices into g.nodes) with `fused`, which takes the list
// position of the last of them. The list stays topologically ordered: every value the pattern
// reads from outside is produced before the pattern's last node reads it.
void replace_nodes(ir::Graph& g, std::vector<int> pattern, ir::Node fused);

// An element-wise activation applied to a value, as FusedConv/FusedMatMul encode it.
struct ActivationMatch {
  std::vector<int> nodes;  // the matched nodes
  std::string output;      // the value the activation produces
  Activation kind = Activation::None;  // written as its name (core/activation.h)
  std::vector<std::pair<std::string, float>> params;  // activation_min, activation_alpha, ...
};

// Matches an activation consuming `value` that can be folded into value's producer: `value`
// is not a graph output and every use of it is inside the match. Recognized: Relu, Sigmoid,
// HardSigmoid, HardSwish, LeakyRelu, Clip with constant bounds, ONNX or ai.ignis Gelu, and
// SiLU as Mul(value, Sigmoid(value)).
std::optional<ActivationMatch> match_activation(const GraphIndex& index, const std::string& value);

// Writes the `activation` and `activation_*` attributes of `m` onto a fused node.
void set_activation(ir::Node& fused, const ActivationMatch& m);

// The usual driver: calls try_at(index, i) for each node i in order; after a rewrite the
// index is rebuilt and the scan starts over. Returns the number of rewrites.
Result<int> rewrite_all(ir::Graph& g, const std::function<Result<bool>(const GraphIndex&, int)>& try_at);

}  // namespace ignis::passes
