// SPDX-License-Identifier: Apache-2.0
// Removes ops that do not change their input, and shortens chains of data-movement ops:
//   Cast to the input's dtype; Reshape / Flatten / Squeeze / Unsqueeze whose output shape is
//   provably the input's (graph_facts: fixed extents, or the same symbol); Expand to a
//   constant shape that broadcasts to the input's own; Transpose by the identity; Slice of
//   every element (steps 1, starts at the beginning, ends at or past the end); Pad by zero
//   on every side (torch writes one before an AveragePool it pads by nothing); Concat of one
//   input (torch.cat of a one-tensor list: densenet's first layer in each block).
//   Transpose(Transpose(x, p1), p2) = Transpose(x, p) with p[i] = p1[p2[i]]; none if p is
//   the identity. Transpose(U(Transpose(x, p1)), p2) = U(x) for an elementwise unary U
//   read only there, when p is the identity.
//   Reshape(R(x), s) = Reshape(x, s) for R a Reshape, Flatten, Squeeze or Unsqueeze (all
//   keep the element order), when s is a constant that does not refer to R's output shape:
//   no 0 ("copy this extent"), unless allowzero makes 0 literal. -1 is resolved from the
//   element count, which R does not change.
//   Cast(Cast(x, T1), T2): when T1 holds every value of x's dtype T0 exactly, the inner cast
//   changes no value, so the pair is Cast(x, T2) — and nothing when T2 = T0. Only widenings
//   (integer to wider integer or float with enough mantissa, float to wider float, bool to
//   anything) count; narrowing or sign-changing intermediates are never removed.
// A no-op whose output is a graph output stays, so the interface keeps its names; the outer
// op of a chain is rewritten in place and its input's producer is left to dead-code removal.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "core/broadcast.h"
#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

// Every value of dtype `from` is exactly representable in `to` (and converts back unchanged).
bool holds_exactly(DType from, DType to) {
  using D = DType;
  if (from == to) return true;
  if (from == D::Bool) return to != D::String && to != D::Undefined && to != D::F8E8M0;  // e8m0 has no 0
  switch (from) {
    case D::U8:
      return to == D::U16 || to == D::U32 || to == D::U64 || to == D::I16 || to == D::I32 || to == D::I64 ||
             to == D::F16 || to == D::BF16 || to == D::F32 || to == D::F64;
    case D::I8:
      return to == D::I16 || to == D::I32 || to == D::I64 || to == D::F16 || to == D::BF16 || to == D::F32 ||
             to == D::F64;
    case D::U16: return to == D::U32 || to == D::U64 || to == D::I32 || to == D::I64 || to == D::F32 || to == D::F64;
    case D::I16: return to == D::I32 || to == D::I64 || to == D::F32 || to == D::F64;
    case D::U32: return to == D::U64 || to == D::I64 || to == D::F64;
    case D::I32: return to == D::I64 || to == D::F64;
    case D::F16:
    case D::BF16: return to == D::F32 || to == D::F64;
    case D::F32: return to == D::F64;
    default: return false;
  }
}

std::optional<DType> cast_target(const ir::Node& n) {
  return dtype_from_onnx(static_cast<int32_t>(n.attrs.get_int("to", 0)));
}

// perm of a Transpose on a value of rank `rank` (-1: unknown); nullopt unless a permutation.
std::optional<std::vector<int64_t>> transpose_perm(const ir::Node& n, int rank) {
  std::vector<int64_t> perm = n.attrs.get_ints("perm");
  if (perm.empty()) {
    if (rank < 0) return std::nullopt;
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (rank >= 0 && static_cast<int>(perm.size()) != rank) return std::nullopt;
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) return std::nullopt;
    seen[p] = true;
  }
  return perm;
}

bool is_identity_perm(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

bool is_reshape_like(const ir::Node& n) {
  return n.domain.empty() && n.outputs.size() == 1 &&
         (n.op_type == "Reshape" || n.op_type == "Flatten" || n.op_type == "Squeeze" || n.op_type == "Unsqueeze");
}

// Expand(x, s) with s constant is x when s broadcast with x's shape gives x's shape.
bool expand_is_no_op(const ir::Graph& g, const GraphFacts& facts, const ir::Node& n) {
  auto s = constant_ints(g, n, 1);
  const ValueFact& x = facts[n.inputs[0]];
  if (!s || !x.has_rank() || static_cast<int>(s->size()) > x.rank) return false;
  const int offset = x.rank - static_cast<int>(s->size());
  for (size_t k = 0; k < s->size(); ++k) {
    const DimFact& d = x.dims[offset + k];
    if ((*s)[k] != 1 && !(d.is_fixed() && d.value == (*s)[k])) return false;
  }
  return true;
}

// Slice reading every element: steps 1, each start clamps to 0, each end to the extent.
bool slice_is_no_op(const ir::Graph& g, const GraphFacts& facts, const ir::Node& n) {
  const ValueFact& x = facts[n.inputs[0]];
  if (!x.has_rank()) return false;
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (g.opset("") < 10) {
    starts = n.attrs.get_ints("starts");
    ends = n.attrs.get_ints("ends");
    if (n.attrs.has("axes")) axes = n.attrs.get_ints("axes");
  } else {
    starts = constant_ints(g, n, 1);
    ends = constant_ints(g, n, 2);
    if (n.inputs.size() > 3 && !n.inputs[3].empty()) {
      axes = constant_ints(g, n, 3);
      if (!axes) return false;
    }
    if (n.inputs.size() > 4 && !n.inputs[4].empty()) {
      steps = constant_ints(g, n, 4);
      if (!steps) return false;
    }
  }
  if (!starts || !ends || starts->size() != ends->size()) return false;
  const size_t k = starts->size();
  if ((axes && axes->size() != k) || (steps && steps->size() != k)) return false;
  // An end this large is past any extent a tensor can have.
  constexpr int64_t kPastAnyEnd = std::numeric_limits<int64_t>::max() / 2;
  std::vector<bool> seen(static_cast<size_t>(x.rank), false);
  for (size_t i = 0; i < k; ++i) {
    auto axis = normalize_axis(axes ? (*axes)[i] : static_cast<int64_t>(i), x.rank);
    if (!axis || seen[*axis]) return false;
    seen[*axis] = true;
    if (steps && (*steps)[i] != 1) return false;
    const DimFact& d = x.dims[*axis];
    const int64_t start = (*starts)[i], end = (*ends)[i];
    const bool from_first = start == 0 || (start < 0 && d.is_fixed() && start + d.value <= 0);
    const bool to_last = end >= kPastAnyEnd || (d.is_fixed() && end >= d.value);
    if (!from_first || !to_last) return false;
  }
  return true;
}

// Pad whose pads (the attribute before opset 11, a constant input from it) are all zero, in any
// mode: every output element is the input element at the same index.
bool pad_is_no_op(const ir::Graph& g, const ir::Node& n) {
  std::optional<std::vector<int64_t>> pads;
  if (g.opset("") < 11) pads = n.attrs.get_ints(g.opset("") < 2 ? "paddings" : "pads");
  else if (n.inputs.size() > 1 && !n.inputs[1].empty()) pads = constant_ints(g, n, 1);
  if (!pads || pads->empty()) return false;
  return std::all_of(pads->begin(), pads->end(), [](int64_t p) { return p == 0; });
}

// Drops node i; readers of its output read `replacement`.
void bypass(ir::Graph& g, int i, const std::string& replacement) {
  ir::replace_uses(g, g.nodes[i].outputs[0], replacement);
  std::vector<bool> remove(g.nodes.size(), false);
  remove[i] = true;
  ir::remove_nodes(g, remove);
}

// Node i rewritten to read `input` as its input 0 (the rest unchanged).
void reroute(ir::Graph& g, int i, const std::string& input) {
  ir::Node n = g.nodes[i];
  n.inputs[0] = input;
  replace_nodes(g, {i}, std::move(n));
}

Result<bool> try_cast(ir::Graph& g, const GraphFacts& facts, const GraphIndex& index, int i, bool interface) {
  const ir::Node& n = g.nodes[i];
  if (g.opset("") < 6) return false;  // `to` was a string before opset 6
  const std::string x = n.inputs[0];
  const auto to = cast_target(n);
  const DType t0 = facts.dtype(x);
  if (!to || t0 == DType::Undefined) return false;
  if (t0 == *to) {
    if (interface) return false;
    bypass(g, i, x);
    return true;
  }
  const ir::Node* inner = index.producer_op(x, "Cast");
  if (!inner || inner->inputs.empty() || inner->outputs.size() != 1) return false;
  const std::string x0 = inner->inputs[0];
  const DType t00 = facts.dtype(x0);
  if (t00 == DType::Undefined || !holds_exactly(t00, t0)) return false;
  if (*to == t00 && !interface) {
    bypass(g, i, x0);
    return true;
  }
  if (*to != t00 && !holds_exactly(t00, *to)) return false;
  reroute(g, i, x0);
  return true;
}

// Transpose(U(Transpose(x0, p1)), p2) for an elementwise U whose output only the outer
// Transpose reads, when p1 then p2 is the identity: U(x0), under the outer Transpose's output
// name (tf2onnx leaves such NCHW -> NHWC -> NCHW pairs around activations). The inner
// Transpose goes with dead-code removal when U was its only reader.
bool try_transpose_around_unary(ir::Graph& g, const GraphFacts& facts, const GraphIndex& index, int i,
                                const std::vector<int64_t>& perm) {
  const ir::Node& n = g.nodes[i];
  const int ui = index.producer(n.inputs[0]);
  if (ui < 0 || !elementwise_unary(g.nodes[ui]) || !index.single_use(n.inputs[0])) return false;
  const ir::Node& u = g.nodes[ui];
  const ir::Node* inner = index.producer_op(u.inputs[0], "Transpose");
  if (!inner || inner->inputs.empty() || inner->outputs.size() != 1) return false;
  const auto inner_perm = transpose_perm(*inner, facts.rank(inner->inputs[0]));
  if (!inner_perm || inner_perm->size() != perm.size()) return false;
  for (size_t k = 0; k < perm.size(); ++k)
    if ((*inner_perm)[perm[k]] != static_cast<int64_t>(k)) return false;
  ir::Node moved = u;
  moved.inputs[0] = inner->inputs[0];
  moved.outputs = n.outputs;
  replace_nodes(g, {ui, i}, std::move(moved));
  return true;
}

Result<bool> try_transpose(ir::Graph& g, const GraphFacts& facts, const GraphIndex& index, int i, bool interface) {
  const ir::Node& n = g.nodes[i];
  const std::string x = n.inputs[0];
  const auto perm = transpose_perm(n, facts.rank(x));
  if (!perm) return false;
  if (is_identity_perm(*perm)) {
    if (interface) return false;
    bypass(g, i, x);
    return true;
  }
  const ir::Node* inner = index.producer_op(x, "Transpose");
  if (!inner) return try_transpose_around_unary(g, facts, index, i, *perm);
  if (inner->inputs.empty() || inner->outputs.size() != 1) return false;
  const std::string x0 = inner->inputs[0];
  const auto inner_perm = transpose_perm(*inner, facts.rank(x0));
  if (!inner_perm || inner_perm->size() != perm->size()) return false;
  std::vector<int64_t> composed(perm->size());
  for (size_t k = 0; k < perm->size(); ++k) composed[k] = (*inner_perm)[(*perm)[k]];
  if (is_identity_perm(composed) && !interface) {
    bypass(g, i, x0);
    return true;
  }
  ir::Node t = n;
  t.inputs = {x0};
  if (is_identity_perm(composed)) {
    t.op_type = "Identity";
    t.attrs = {};
  } else {
    set_ints(t, "perm", composed);
  }
  replace_nodes(g, {i}, std::move(t));
  return true;
}

Result<bool> try_reshape_chain(ir::Graph& g, const GraphIndex& index, int i) {
  const ir::Node& n = g.nodes[i];
  const int p = index.producer(n.inputs[0]);
  if (p < 0 || !is_reshape_like(g.nodes[p]) || g.nodes[p].inputs.empty() || n.inputs.size() != 2) return false;
  auto shape = constant_ints(g, n, 1);
  if (!shape) return false;
  const bool allowzero = n.attrs.get_int("allowzero", 0) != 0;
  for (int64_t s : *shape)
    if (s == 0 && !allowzero) return false;
  reroute(g, i, g.nodes[p].inputs[0]);
  return true;
}

}  // namespace

Result<int> eliminate_no_ops(ir::Graph& g, const PassContext&) {
  // Facts stay valid across the rewrites: no value changes its shape or dtype, and the
  // rewritten nodes keep their outputs.
  const GraphFacts facts(g);
  return rewrite_all(g, [&](const GraphIndex& index, int i) -> Result<bool> {
    const ir::Node& n = g.nodes[i];
    if (!n.domain.empty() || n.outputs.size() != 1 || n.outputs[0].empty() || n.inputs.empty() ||
        n.inputs[0].empty())
      return false;
    const std::string& op = n.op_type;
    const bool interface = ir::is_graph_output(g, n.outputs[0]);
    if (op == "Cast") return try_cast(g, facts, index, i, interface);
    if (op == "Transpose") return try_transpose(g, facts, index, i, interface);
    if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Expand" || op == "Slice" ||
        op == "Pad" || op == "Concat") {
      bool no_op = false;
      if (op == "Expand") no_op = expand_is_no_op(g, facts, n);
      else if (op == "Slice") no_op = slice_is_no_op(g, facts, n);
      else if (op == "Pad") no_op = pad_is_no_op(g, n);
      else if (op == "Concat") no_op = n.inputs.size() == 1;
      else no_op = facts.same_shape(n.inputs[0], n.outputs[0]);
      if (no_op && !interface) {
        const std::string x = n.inputs[0];
        bypass(g, i, x);
        return true;
      }
      if (op == "Reshape") return try_reshape_chain(g, index, i);
    }
    return false;
  });
}

}  // namespace ignis::passes
