// SPDX-License-Identifier: Apache-2.0
// Dtype/rank/extent propagation for the optimizer. Each rule below is exact for a valid
// model: where a rule cannot be sure (a data-dependent shape, an unknown op) it says
// Unknown. Broadcasting uses what validity implies: a fixed extent k != 1 broadcast with
// anything gives k, because the other side must be 1 or k.
#include "passes/graph_facts.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "core/broadcast.h"
#include "core/conv_geometry.h"
#include "ir/rewrite.h"

namespace ignis::passes {

bool same_dim(const DimFact& a, const DimFact& b) {
  if (a.is_fixed()) return a.value == b.value;
  return !a.symbol.empty() && a.symbol == b.symbol;
}

namespace {

using Facts = std::unordered_map<std::string, ValueFact>;

DimFact broadcast_dim(const DimFact& a, const DimFact& b) {
  if (same_dim(a, b)) return a;
  if (a.is_fixed() && a.value == 1) return b;
  if (b.is_fixed() && b.value == 1) return a;
  if (a.is_fixed()) return a;
  if (b.is_fixed()) return b;
  return {};
}

ValueFact with_rank(DType dtype, int rank) {
  ValueFact f;
  f.dtype = dtype;
  f.rank = rank;
  if (rank >= 0) f.dims.assign(static_cast<size_t>(rank), DimFact{});
  return f;
}

ValueFact broadcast_all(const std::vector<const ValueFact*>& in, DType dtype) {
  int rank = 0;
  for (const auto* f : in) {
    if (!f->has_rank()) return with_rank(dtype, -1);
    rank = std::max(rank, f->rank);
  }
  ValueFact out = with_rank(dtype, rank);
  for (int i = 0; i < rank; ++i) {
    bool first = true;
    DimFact d = DimFact::fixed(1);
    for (const auto* f : in) {
      const int j = i - (rank - f->rank);
      if (j < 0) continue;
      d = first ? f->dims[j] : broadcast_dim(d, f->dims[j]);
      first = false;
    }
    out.dims[i] = d;
  }
  return out;
}

// Product of extents: fixed when all are, the one non-unit extent when the others are 1.
DimFact product(const std::vector<DimFact>& dims, int from, int to) {
  int64_t fixed = 1;
  const DimFact* other = nullptr;
  for (int i = from; i < to; ++i) {
    if (dims[i].is_fixed()) {
      fixed *= dims[i].value;
    } else {
      if (other) return {};
      other = &dims[i];
    }
  }
  if (!other) return DimFact::fixed(fixed);
  return fixed == 1 ? *other : DimFact{};
}

// Integer values of a constant input, or nullopt.
std::optional<std::vector<int64_t>> const_ints(const ir::Graph& g, const ir::Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i].empty()) return std::nullopt;
  const Tensor* t = ir::constant_value(g, n.inputs[i]);
  if (!t || (t->dtype() != DType::I64 && t->dtype() != DType::I32)) return std::nullopt;
  std::vector<int64_t> v(static_cast<size_t>(t->numel()));
  for (int64_t k = 0; k < t->numel(); ++k)
    v[k] = t->dtype() == DType::I64 ? t->data_as<int64_t>()[k] : t->data_as<int32_t>()[k];
  return v;
}

// Axes of Squeeze/Unsqueeze/Reduce*: the attribute before `input_since`, input 1 from then.
std::optional<std::vector<int64_t>> axes_of(const ir::Graph& g, const ir::Node& n, int64_t opset,
                                            int64_t input_since) {
  if (opset < input_since) {
    if (!n.attrs.has("axes")) return std::vector<int64_t>{};
    return n.attrs.get_ints("axes");
  }
  if (n.inputs.size() < 2 || n.inputs[1].empty()) return std::vector<int64_t>{};
  return const_ints(g, n, 1);
}

ValueFact window_op(const ir::Node& n, const ValueFact& x, const ValueFact* w, DType dtype) {
  ValueFact out = with_rank(dtype, x.rank);
  if (x.rank < 3) return out;
  out.dims[0] = x.dims[0];
  if (w) {
    if (w->rank != x.rank) return out;
    out.dims[1] = w->dims[0];
  } else {
    out.dims[1] = x.dims[1];
  }
  std::vector<int64_t> in, ker;
  for (int i = 2; i < x.rank; ++i) {
    if (!x.dims[i].is_fixed()) return out;
    in.push_back(x.dims[i].value);
    if (w) {
      if (!w->dims[i].is_fixed()) return out;
      ker.push_back(w->dims[i].value);
    }
  }
  auto geo = make_window_geometry(n.attrs, in, ker, n.attrs.get_int("ceil_mode", 0) != 0);
  if (!geo) return out;
  for (int i = 0; i < geo->rank; ++i) out.dims[2 + i] = DimFact::fixed(geo->out[i]);
  return out;
}

// numpy matmul of a and b; trans_a / trans_b (FusedMatMul) swap the last two axes of a / b.
ValueFact matmul(const ValueFact& a, const ValueFact& b, DType dtype, bool trans_a = false, bool trans_b = false) {
  if (!a.has_rank() || !b.has_rank() || a.rank < 1 || b.rank < 1) return with_rank(dtype, -1);
  if ((trans_a && a.rank < 2) || (trans_b && b.rank < 2)) return with_rank(dtype, -1);
  ValueFact ab = with_rank(dtype, std::max(a.rank - 2, 0));
  ValueFact bb = with_rank(dtype, std::max(b.rank - 2, 0));
  for (int i = 0; i + 2 < a.rank; ++i) ab.dims[i] = a.dims[i];
  for (int i = 0; i + 2 < b.rank; ++i) bb.dims[i] = b.dims[i];
  ValueFact out = broadcast_all({&ab, &bb}, dtype);
  if (a.rank >= 2) out.dims.push_back(trans_a ? a.dims.back() : a.dims[a.rank - 2]);
  if (b.rank >= 2) out.dims.push_back(trans_b ? b.dims[b.rank - 2] : b.dims.back());
  out.rank = static_cast<int>(out.dims.size());
  return out;
}

bool is_same_shape_op(const std::string& op) {
  static const std::unordered_set<std::string> kOps = {
      "Abs",       "Acos",        "Acosh",       "Asin",       "Asinh",    "Atan",     "Atanh",
      "Ceil",      "Celu",        "Clip",        "Cos",        "Cosh",     "Elu",      "Erf",
      "Exp",       "Floor",       "Gelu",        "HardSigmoid", "HardSwish", "Hardmax", "Identity",
      "LeakyRelu", "Log",         "LogSoftmax",  "Mish",       "Neg",      "Reciprocal", "Relu",
      "Round",     "Selu",        "Sigmoid",     "Sign",       "Sin",      "Sinh",     "Softmax",
      "Softplus",  "Softsign",    "Sqrt",        "Tan",        "Tanh",     "ThresholdedRelu",
      "Dropout",   "LayerNormalization", "BatchNormalization", "InstanceNormalization", "LRN",
      "MeanVarianceNormalization", "GroupNormalization", "CumSum"};
  return kOps.count(op) > 0;
}

bool is_broadcast_op(const std::string& op) {
  static const std::unordered_set<std::string> kOps = {"Add", "Sub", "Mul", "Div", "Pow", "Max",
                                                       "Min", "Sum", "Mean", "Mod", "PRelu", "BitShift"};
  return kOps.count(op) > 0;
}

bool is_compare_op(const std::string& op) {
  static const std::unordered_set<std::string> kOps = {"Equal", "Less", "Greater", "LessOrEqual",
                                                       "GreaterOrEqual", "And", "Or", "Xor"};
  return kOps.count(op) > 0;
}

// Output facts of one node (same order as n.outputs).
// A constant in ValueFact::contents: a fixed extent, or for a negative value (Reshape's -1) a
// symbol no extent carries, "#<value>".
DimFact constant_content(int64_t v) { return v >= 0 ? DimFact::fixed(v) : DimFact::named("#" + std::to_string(v)); }

// Reshape(x, shape) where the shape's values are known (a constant, or extents as
// ValueFact::contents holds them): a fixed entry is that extent (0 copies x's extent unless
// allowzero; -1 is what the others leave of x's elements, [N, C, 1, 1] -> [-1, C, 1, 1]
// keeping N); an extent of some value is the output's extent,
// where a 0 could not copy a different one of x's (allowzero, past x's rank, or x's own
// extent there).
ValueFact reshape_by_contents(const ValueFact& x, const std::vector<DimFact>& contents, bool allowzero) {
  ValueFact out = with_rank(x.dtype, static_cast<int>(contents.size()));
  int inferred = -1;
  for (size_t i = 0; i < contents.size(); ++i) {
    const DimFact& d = contents[i];
    const bool x_has = x.has_rank() && static_cast<int>(i) < x.rank;
    if (d.is_fixed()) {
      if (d.value > 0 || (d.value == 0 && allowzero)) out.dims[i] = d;
      else if (d.value == 0 && x_has) out.dims[i] = x.dims[i];
    } else if (d.symbol == "#-1") {
      inferred = static_cast<int>(i);
    } else if (!d.is_unknown() && d.symbol[0] != '#' && (allowzero || !x_has || same_dim(d, x.dims[i]))) {
      // A computed extent: >= 0, and 0 would copy x's extent there, which is this one or
      // none (past x's rank a 0 is invalid).
      out.dims[i] = d;
    }
  }
  if (inferred >= 0 && x.has_rank()) {
    // x's elements over the other entries': exact when each side's extents are fixed but for
    // at most one symbolic extent, the same on both sides (it cancels), or only on x's side
    // (it is the answer when the fixed parts are equal).
    struct Split {
      int64_t fixed = 1;
      std::vector<const DimFact*> symbolic;
    };
    const auto split = [](const std::vector<DimFact>& dims, int skip) {
      Split r;
      for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
        if (i == skip) continue;
        if (dims[i].is_fixed()) r.fixed *= dims[i].value;
        else r.symbolic.push_back(&dims[i]);
      }
      return r;
    };
    const Split total = split(x.dims, -1), rest = split(out.dims, inferred);
    DimFact& d = out.dims[static_cast<size_t>(inferred)];
    const bool unknown_rest = std::any_of(rest.symbolic.begin(), rest.symbolic.end(),
                                          [](const DimFact* f) { return f->is_unknown(); });
    if (unknown_rest || total.symbolic.size() > 1 || rest.symbolic.size() > 1 || rest.fixed <= 0) {
      // not provable
    } else if (total.symbolic.size() == rest.symbolic.size() &&
               (total.symbolic.empty() || same_dim(*total.symbolic[0], *rest.symbolic[0]))) {
      if (total.fixed % rest.fixed == 0) d = DimFact::fixed(total.fixed / rest.fixed);
    } else if (total.symbolic.size() == 1 && rest.symbolic.empty() && total.fixed == rest.fixed) {
      d = *total.symbolic[0];
    }
  }
  return out;
}

// The contents (ValueFact::contents) of what node n makes from extents: Shape, and Gather,
// Unsqueeze, Squeeze, Concat, Cast and Identity of tensors whose contents are known.
// Resize's output: with constant scales (floor(d * s); an extent kept where s is 1) or sizes,
// and no `axes`; else the rank alone.
ValueFact resized(const ir::Graph& g, const ir::Node& n, const ValueFact& x) {
  ValueFact out = with_rank(x.dtype, x.rank);
  if (!x.has_rank() || n.attrs.find("axes") != nullptr) return out;
  const size_t scales_at = g.opset("") < 11 ? 1 : 2;
  const std::string scales = n.inputs.size() > scales_at ? n.inputs[scales_at] : std::string();
  const std::string sizes = g.opset("") >= 11 && n.inputs.size() > 3 ? n.inputs[3] : std::string();
  const Tensor* t = scales.empty() ? nullptr : ir::constant_value(g, scales);
  if (!scales.empty() && (t == nullptr || t->numel() > 0)) {  // an empty scales tensor means sizes
    if (t == nullptr || t->dtype() != DType::F32 || t->numel() != x.rank) return out;
    for (int i = 0; i < x.rank; ++i) {
      const float f = t->data_as<float>()[i];
      if (f == 1.0f) out.dims[i] = x.dims[i];
      else if (x.dims[i].is_fixed())
        out.dims[i] = DimFact::fixed(static_cast<int64_t>(std::floor(static_cast<double>(x.dims[i].value) * f)));
    }
    return out;
  }
  if (sizes.empty() || n.attrs.get_string("keep_aspect_ratio_policy", "stretch") != "stretch") return out;
  const auto v = const_ints(g, n, 3);
  if (!v || static_cast<int>(v->size()) != x.rank) return out;
  for (int i = 0; i < x.rank; ++i) out.dims[i] = DimFact::fixed((*v)[static_cast<size_t>(i)]);
  return out;
}

void infer_contents(const ir::Graph& g, const ir::Node& n, const Facts& facts, std::vector<ValueFact>& out) {
  if (!n.domain.empty() || out.empty() || n.inputs.empty() || n.inputs[0].empty()) return;
  static const ValueFact unknown;
  auto in = [&](size_t i) -> const ValueFact& {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return unknown;
    auto it = facts.find(n.inputs[i]);
    return it == facts.end() ? unknown : it->second;
  };
  const std::string& op = n.op_type;
  const ValueFact& x = in(0);
  std::vector<DimFact> c;
  if (op == "Shape") {
    if (!x.has_rank()) return;
    const int64_t rank = x.rank;
    int64_t start = n.attrs.get_int("start", 0), end = n.attrs.get_int("end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    for (int64_t i = start; i < end; ++i) c.push_back(x.dims[static_cast<size_t>(i)]);
    if (c.empty()) return;
  } else if (x.contents.empty()) {
    return;
  } else if (op == "Gather") {
    auto idx = const_ints(g, n, 1);
    const int64_t size = static_cast<int64_t>(x.contents.size());
    if (!idx || x.rank != 1 || n.attrs.get_int("axis", 0) != 0 || in(1).rank > 1) return;
    for (int64_t k : *idx) {
      if (k < 0) k += size;
      if (k < 0 || k >= size) return;
      c.push_back(x.contents[static_cast<size_t>(k)]);
    }
  } else if (op == "Unsqueeze" || op == "Squeeze" || op == "Identity") {
    if (out[0].rank > 1) return;  // still a scalar or a vector of the same values
    c = x.contents;
  } else if (op == "Cast") {
    const auto to = dtype_from_onnx(static_cast<int32_t>(n.attrs.get_int("to", 0)));
    if (!to || (*to != DType::I64 && *to != DType::I32)) return;
    c = x.contents;
  } else if (op == "Concat") {
    if (out[0].rank != 1) return;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const ValueFact& f = in(i);
      if (f.contents.empty() || f.rank > 1) return;
      c.insert(c.end(), f.contents.begin(), f.contents.end());
    }
  } else {
    return;
  }
  out[0].contents = std::move(c);
}

std::vector<ValueFact> infer_node(const ir::Graph& g, const ir::Node& n, const Facts& facts) {
  static const ValueFact kUnknown;
  auto in = [&](size_t i) -> const ValueFact& {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return kUnknown;
    auto it = facts.find(n.inputs[i]);
    return it == facts.end() ? kUnknown : it->second;
  };
  std::vector<ValueFact> out(n.outputs.size());
  if (out.empty()) return out;
  const std::string& op = n.op_type;
  const ValueFact& x = in(0);
  const int64_t opset = g.opset(n.domain);

  if (n.domain == "ai.ignis") {
    if (op == "Gelu") out[0] = x;
    else if (op == "FusedConv") out[0] = window_op(n, x, &in(1), x.dtype);
    else if (op == "FusedMatMul")
      out[0] = matmul(x, in(1), x.dtype, n.attrs.get_int("transA", 0) != 0, n.attrs.get_int("transB", 0) != 0);
    else if (op == "MatMulIntegerToFloat") out[0] = matmul(x, in(1), DType::F32);
    else if (op == "DynamicQuantizeRows") {
      out[0] = x;
      out[0].dtype = DType::I8;
      out[0].contents.clear();
      if (out.size() > 1) {
        out[1] = out[0];
        out[1].dtype = DType::F32;
        if (x.rank > 0) out[1].dims.back() = DimFact::fixed(1);
      }
    }
    else if (op == "SkipLayerNorm") {
      out[0] = broadcast_all({&x, &in(1)}, x.dtype);
      if (out.size() > 1) out[1] = out[0];
    } else if (op == "Attention" && x.rank == 3 && in(2).rank == 3) {
      out[0] = with_rank(x.dtype, 3);
      out[0].dims = {x.dims[0], x.dims[1], in(2).dims[2]};
    }
    return out;
  }
  if (n.domain == "com.microsoft") {
    if (op == "QLinearAdd" && n.inputs.size() > 3) out[0] = broadcast_all({&x, &in(3)}, x.dtype);
    return out;
  }
  if (!n.domain.empty()) return out;

  if (is_same_shape_op(op)) {
    out[0] = x;
    // Secondary outputs (Dropout mask, norm statistics) are left unknown.
  } else if (op == "Cast") {
    out[0] = x;
    auto to = dtype_from_onnx(static_cast<int32_t>(n.attrs.get_int("to", 0)));
    out[0].dtype = to ? *to : DType::Undefined;
  } else if (op == "Not" || op == "IsNaN" || op == "IsInf") {
    out[0] = x;
    out[0].dtype = DType::Bool;
  } else if (is_broadcast_op(op) || is_compare_op(op)) {
    std::vector<const ValueFact*> ins;
    for (size_t i = 0; i < n.inputs.size(); ++i) ins.push_back(&in(i));
    out[0] = broadcast_all(ins, is_compare_op(op) ? DType::Bool : x.dtype);
  } else if (op == "Where") {
    out[0] = broadcast_all({&x, &in(1), &in(2)}, in(1).dtype);
  } else if (op == "MatMul") {
    out[0] = matmul(x, in(1), x.dtype);
  } else if (op == "Gemm") {
    out[0] = with_rank(x.dtype, 2);
    if (x.rank == 2 && in(1).rank == 2) {
      out[0].dims[0] = x.dims[n.attrs.get_int("transA", 0) ? 1 : 0];
      out[0].dims[1] = in(1).dims[n.attrs.get_int("transB", 0) ? 0 : 1];
    }
  } else if (op == "Conv") {
    out[0] = window_op(n, x, &in(1), x.dtype);
  } else if (op == "QLinearConv" && n.inputs.size() > 7) {
    out[0] = window_op(n, x, &in(3), in(7).dtype);
  } else if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
    out[0] = window_op(n, x, nullptr, x.dtype);
    if (out.size() > 1) {
      out[1] = out[0];
      out[1].dtype = DType::I64;
    }
  } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "GlobalLpPool") {
    out[0] = with_rank(x.dtype, x.rank);
    for (int i = 0; i < x.rank; ++i) out[0].dims[i] = i < 2 ? x.dims[i] : DimFact::fixed(1);
  } else if (op == "Flatten") {
    out[0] = with_rank(x.dtype, 2);
    int64_t axis = n.attrs.get_int("axis", 1);
    if (x.has_rank() && axis < 0) axis += x.rank;
    if (x.has_rank() && axis >= 0 && axis <= x.rank)
      out[0].dims = {product(x.dims, 0, static_cast<int>(axis)), product(x.dims, static_cast<int>(axis), x.rank)};
  } else if (op == "Reshape") {
    // The target's values: a constant's, or extents the facts know (ValueFact::contents).
    std::vector<DimFact> target;
    if (auto shape = const_ints(g, n, 1))
      for (int64_t v : *shape) target.push_back(constant_content(v));
    else target = in(1).contents;
    if (in(1).rank == 1 && !target.empty())
      out[0] = reshape_by_contents(x, target, n.attrs.get_int("allowzero", 0) != 0);
    else if (in(1).rank == 1 && in(1).dims[0].is_fixed())
      out[0] = with_rank(x.dtype, static_cast<int>(in(1).dims[0].value));
    else
      out[0] = with_rank(x.dtype, -1);
  } else if (op == "Transpose") {
    out[0] = with_rank(x.dtype, x.rank);
    if (x.has_rank()) {
      std::vector<int64_t> perm = n.attrs.get_ints("perm");
      if (perm.empty())
        for (int i = x.rank - 1; i >= 0; --i) perm.push_back(i);
      if (static_cast<int>(perm.size()) == x.rank)
        for (int i = 0; i < x.rank; ++i)
          if (perm[i] >= 0 && perm[i] < x.rank) out[0].dims[i] = x.dims[perm[i]];
    }
  } else if (op == "Unsqueeze" || op == "Squeeze") {
    const bool unsq = op == "Unsqueeze";
    auto axes = axes_of(g, n, opset, 13);
    out[0] = with_rank(x.dtype, -1);
    if (axes && x.has_rank()) {
      const int rank = unsq ? x.rank + static_cast<int>(axes->size()) : x.rank;
      std::vector<bool> marked(static_cast<size_t>(rank), false);
      bool ok = !(unsq && axes->empty());
      for (int64_t a : *axes) {
        auto ax = normalize_axis(a, rank);
        if (!ax || marked[*ax]) ok = false;
        else marked[*ax] = true;
      }
      if (!unsq && axes->empty()) {  // squeeze every extent-1 axis: needs all extents known
        for (int i = 0; i < x.rank; ++i) {
          if (!x.dims[i].is_fixed()) ok = false;
          else marked[i] = x.dims[i].value == 1;
        }
      }
      if (ok) {
        out[0].dims.clear();
        for (int i = 0, j = 0; i < rank; ++i) {
          if (unsq) out[0].dims.push_back(marked[i] ? DimFact::fixed(1) : x.dims[j++]);
          else if (!marked[i]) out[0].dims.push_back(x.dims[i]);
        }
        out[0].rank = static_cast<int>(out[0].dims.size());
      }
    }
  } else if (op == "Shape") {
    out[0] = with_rank(DType::I64, 1);
    if (x.has_rank()) {
      const int64_t start = std::clamp<int64_t>(n.attrs.get_int("start", 0) < 0 ? n.attrs.get_int("start", 0) + x.rank
                                                                                   : n.attrs.get_int("start", 0),
                                                0, x.rank);
      const int64_t end_attr = n.attrs.get_int("end", x.rank);
      const int64_t end = std::clamp<int64_t>(end_attr < 0 ? end_attr + x.rank : end_attr, 0, x.rank);
      out[0].dims[0] = DimFact::fixed(std::max<int64_t>(0, end - start));
    }
  } else if (op == "Size") {
    out[0] = with_rank(DType::I64, 0);
  } else if (op == "DequantizeLinear") {
    // Same shape as x; the scale's element type (opset 23 adds output_dtype, 0 = the scale's).
    out[0] = x;
    auto to = dtype_from_onnx(static_cast<int32_t>(n.attrs.get_int("output_dtype", 0)));
    out[0].dtype = to ? *to : in(1).dtype;
  } else if (op == "QuantizeLinear") {
    // Same shape as x; the zero point's element type, else output_dtype, else uint8.
    out[0] = x;
    auto to = dtype_from_onnx(static_cast<int32_t>(n.attrs.get_int("output_dtype", 0)));
    out[0].dtype = n.inputs.size() > 2 && !n.inputs[2].empty() ? in(2).dtype : to ? *to : DType::U8;
  } else if (op == "DynamicQuantizeLinear") {
    out[0] = x;
    out[0].dtype = DType::U8;
    if (out.size() > 1) out[1] = with_rank(DType::F32, 0);
    if (out.size() > 2) out[2] = with_rank(DType::U8, 0);
  } else if (op == "MatMulInteger") {
    out[0] = matmul(x, in(1), DType::I32);
  } else if (op == "Gather") {
    const ValueFact& idx = in(1);
    out[0] = with_rank(x.dtype, -1);
    auto axis = x.has_rank() ? normalize_axis(n.attrs.get_int("axis", 0), x.rank) : std::nullopt;
    if (axis && idx.has_rank()) {
      out[0].dims.assign(x.dims.begin(), x.dims.begin() + *axis);
      out[0].dims.insert(out[0].dims.end(), idx.dims.begin(), idx.dims.end());
      out[0].dims.insert(out[0].dims.end(), x.dims.begin() + *axis + 1, x.dims.end());
      out[0].rank = static_cast<int>(out[0].dims.size());
    }
  } else if (op == "Concat") {
    out[0] = with_rank(x.dtype, x.rank);
    auto axis = x.has_rank() ? normalize_axis(n.attrs.get_int("axis", 0), x.rank) : std::nullopt;
    if (axis) {
      int64_t total = 0;
      bool fixed = true;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        const ValueFact& f = in(i);
        if (f.rank != x.rank || !f.dims[*axis].is_fixed()) fixed = false;
        else total += f.dims[*axis].value;
      }
      for (int i = 0; i < x.rank; ++i) out[0].dims[i] = i == *axis ? (fixed ? DimFact::fixed(total) : DimFact{}) : x.dims[i];
    }
  } else if (op == "Resize") {
    out[0] = resized(g, n, x);
  } else if (op == "Slice" || op == "Pad" || op == "Tile" || op == "Upsample" || op == "ReverseSequence") {
    out[0] = with_rank(x.dtype, x.rank);
  } else if (op == "Split") {
    for (auto& o : out) o = with_rank(x.dtype, x.rank);
  } else if (op == "Expand") {
    const ValueFact& s = in(1);
    out[0] = with_rank(x.dtype, -1);
    if (x.has_rank() && s.rank == 1 && s.dims[0].is_fixed())
      out[0] = with_rank(x.dtype, std::max<int>(x.rank, static_cast<int>(s.dims[0].value)));
  } else if (op == "ConstantOfShape") {
    const Tensor* v = n.attrs.get_tensor("value");
    const ValueFact& s = in(0);
    out[0] = with_rank(v ? v->dtype() : DType::F32, s.rank == 1 && s.dims[0].is_fixed() ? static_cast<int>(s.dims[0].value) : -1);
  } else if (op == "Range") {
    out[0] = with_rank(x.dtype, 1);
  } else if (op == "NonZero") {
    out[0] = with_rank(DType::I64, 2);
  } else if (op.rfind("Reduce", 0) == 0) {
    const bool keep = n.attrs.get_int("keepdims", 1) != 0;
    out[0] = with_rank(x.dtype, keep ? x.rank : -1);
    auto axes = axes_of(g, n, opset, op == "ReduceSum" ? 13 : 18);
    if (axes && x.has_rank() && !axes->empty()) {
      std::vector<bool> marked(static_cast<size_t>(x.rank), false);
      bool ok = true;
      for (int64_t a : *axes) {
        auto ax = normalize_axis(a, x.rank);
        if (!ax) ok = false;
        else marked[*ax] = true;
      }
      if (ok) {
        out[0].dims.clear();
        for (int i = 0; i < x.rank; ++i) {
          if (!marked[i]) out[0].dims.push_back(x.dims[i]);
          else if (keep) out[0].dims.push_back(DimFact::fixed(1));
        }
        out[0].rank = static_cast<int>(out[0].dims.size());
      }
    }
  }
  return out;
}

// An extent no rule could relate to others still is one fixed quantity: "dimension i of
// value v". Naming it lets exact rules (same-shape ops, MatMul rows...) carry it, so values
// derived from v provably share it.
void name_unknown_dims(const std::string& value, ValueFact& f) {
  for (int i = 0; i < f.rank; ++i)
    if (f.dims[i].is_unknown()) f.dims[i] = DimFact::named("?" + value + "#" + std::to_string(i));
}

}  // namespace

GraphFacts::GraphFacts(const ir::Graph& g) {
  for (const auto& in : g.inputs) {
    ValueFact f;
    f.dtype = in.dtype;
    if (in.has_shape) {
      f.rank = static_cast<int>(in.dims.size());
      for (size_t i = 0; i < in.dims.size(); ++i) {
        if (in.dims[i] >= 0) f.dims.push_back(DimFact::fixed(in.dims[i]));
        else if (i < in.dim_names.size() && !in.dim_names[i].empty()) f.dims.push_back(DimFact::named(in.dim_names[i]));
        else f.dims.push_back(DimFact{});
      }
    }
    name_unknown_dims(in.name, f);
    facts_[in.name] = std::move(f);
  }
  for (const auto& [name, t] : g.initializers) {
    ValueFact f;
    f.dtype = t.dtype();
    f.rank = t.rank();
    for (int i = 0; i < t.rank(); ++i) f.dims.push_back(DimFact::fixed(t.dim(i)));
    constexpr int64_t kMaxContents = 16;  // a shape, not data
    if ((t.dtype() == DType::I64 || t.dtype() == DType::I32) && t.rank() <= 1 && t.numel() <= kMaxContents)
      for (int64_t k = 0; k < t.numel(); ++k)
        f.contents.push_back(
            constant_content(t.dtype() == DType::I64 ? t.data_as<int64_t>()[k] : t.data_as<int32_t>()[k]));
    facts_[name] = std::move(f);
  }
  auto order = ir::topological_order(g);
  if (!order) return;  // an invalid graph: everything stays unknown
  for (int idx : *order) {
    const ir::Node& n = g.nodes[idx];
    std::vector<ValueFact> outs = infer_node(g, n, facts_);
    for (ValueFact& o : outs) o.contents.clear();  // rules that copy x's fact copy its contents too
    infer_contents(g, n, facts_, outs);
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      if (n.outputs[o].empty() || facts_.count(n.outputs[o])) continue;
      name_unknown_dims(n.outputs[o], outs[o]);
      facts_[n.outputs[o]] = std::move(outs[o]);
    }
  }
}

const ValueFact& GraphFacts::operator[](const std::string& value) const {
  auto it = facts_.find(value);
  return it == facts_.end() ? unknown_ : it->second;
}

bool GraphFacts::same_shape(const std::string& a, const std::string& b) const {
  const ValueFact& fa = (*this)[a];
  const ValueFact& fb = (*this)[b];
  if (!fa.has_rank() || fa.rank != fb.rank) return false;
  for (int i = 0; i < fa.rank; ++i)
    if (!same_dim(fa.dims[i], fb.dims[i])) return false;
  return true;
}

int64_t GraphFacts::elements_per_image(const std::string& value) const {
  const ValueFact& f = (*this)[value];
  if (f.rank != 4) return -1;
  int64_t e = 1;
  for (int d = 1; d < 4; ++d) {
    if (!f.dims[d].is_fixed()) return -1;
    e *= f.dims[d].value;
  }
  return e;
}

}  // namespace ignis::passes
