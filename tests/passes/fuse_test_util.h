// SPDX-License-Identifier: Apache-2.0
// Helpers for the fusion pass tests (tests/passes/fuse_*_test.cc): an ir::Graph builder with
// every attribute kind, running one pass, and running a graph through ignis::Session with and
// without optimization on the same random inputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ignis/session.h"
#include "ir/graph.h"
#include "ir/rewrite.h"
#include "onnx/export.h"
#include "passes/pass.h"
#include "runtime/evaluate.h"
#include "testing/graph_attr.h"

namespace ignis::fuse_test {

inline std::vector<float> random_values(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

inline Attribute ints(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}
inline Attribute int_attr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}
inline Attribute float_attr(float v) {
  Attribute a;
  a.kind = Attribute::Kind::Float;
  a.f = v;
  return a;
}
inline Attribute string_attr(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::String;
  a.s = std::move(v);
  return a;
}

// A uint8 / int8 tensor of `shape` with every byte `value` (as uint8: -1 is 255).
inline Tensor filled(DType t, const Shape& shape, int value) {
  Tensor out = Tensor::empty(t, shape);
  for (int64_t i = 0; i < out.numel(); ++i) static_cast<uint8_t*>(out.data())[i] = static_cast<uint8_t>(value);
  return out;
}

// A uint8 / int8 tensor of `shape` with bytes uniform in [lo, hi] from `seed`.
inline Tensor bytes(DType t, const Shape& shape, uint32_t seed, int lo, int hi) {
  Tensor out = Tensor::empty(t, shape);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  for (int64_t i = 0; i < out.numel(); ++i) static_cast<uint8_t*>(out.data())[i] = static_cast<uint8_t>(d(rng));
  return out;
}

// Builds an ir::Graph directly. Dims < 0 are symbolic, named by `dim_names` ("" = unnamed).
class GraphBuilder {
 public:
  explicit GraphBuilder(int64_t opset = 17) {
    g_.ir_version = 8;
    g_.opsets[""] = opset;
  }

  GraphBuilder& input(const std::string& name, std::vector<int64_t> dims, std::vector<std::string> dim_names = {},
                      DType dtype = DType::F32) {
    ValueInfo v;
    v.name = name;
    v.dtype = dtype;
    v.dims = std::move(dims);
    v.dim_names = std::move(dim_names);
    v.dim_names.resize(v.dims.size());
    v.has_shape = true;
    g_.inputs.push_back(v);
    return *this;
  }
  GraphBuilder& output(const std::string& name) {
    ValueInfo v;
    v.name = name;
    g_.outputs.push_back(v);
    return *this;
  }
  GraphBuilder& constant(const std::string& name, const Shape& shape, const std::vector<float>& values) {
    Tensor t = Tensor::empty(DType::F32, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = values[static_cast<size_t>(i)];
    g_.initializers[name] = t;
    return *this;
  }
  GraphBuilder& weight(const std::string& name, const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    return constant(name, shape, random_values(shape.numel(), seed, lo, hi));
  }
  GraphBuilder& scalar(const std::string& name, float v) { return constant(name, Shape{}, {v}); }
  GraphBuilder& ints_constant(const std::string& name, const std::vector<int64_t>& values) {
    Tensor t = Tensor::empty(DType::I64, Shape{static_cast<int64_t>(values.size())});
    for (size_t i = 0; i < values.size(); ++i) t.data_as<int64_t>()[i] = values[i];
    g_.initializers[name] = t;
    return *this;
  }
  GraphBuilder& int_scalar(const std::string& name, int64_t v) {
    Tensor t = Tensor::empty(DType::I64, Shape{});
    t.data_as<int64_t>()[0] = v;
    g_.initializers[name] = t;
    return *this;
  }
  GraphBuilder& bool_scalar(const std::string& name, bool v) {
    Tensor t = Tensor::empty(DType::Bool, Shape{});
    static_cast<uint8_t*>(t.data())[0] = v ? 1 : 0;
    g_.initializers[name] = t;
    return *this;
  }
  // As the importer does, the values the node's graph attributes read from outer scope
  // follow its inputs.
  GraphBuilder& node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                     std::vector<std::pair<std::string, Attribute>> attrs = {}) {
    ir::Node n;
    n.name = op + "_" + std::to_string(g_.nodes.size());
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    for (auto& [k, v] : attrs) n.attrs.set(k, v);
    for (auto& name : ir::outer_scope_names(n.attrs)) n.inputs.push_back(std::move(name));
    g_.nodes.push_back(std::move(n));
    return *this;
  }

  const ir::Graph& graph() const { return g_; }

 private:
  ir::Graph g_;
};

// A control-flow body attribute holding `body`'s graph.
inline Attribute graph_attr(const GraphBuilder& body) { return testing::graph_attr(body.graph()); }

inline int count_ops(const ir::Graph& g, const std::string& op, const std::string& domain = "") {
  int n = 0;
  for (const auto& node : g.nodes) n += node.op_type == op && node.domain == domain ? 1 : 0;
  return n;
}

inline const ir::Node* find_op(const ir::Graph& g, const std::string& op, const std::string& domain = "ai.ignis") {
  for (const auto& node : g.nodes)
    if (node.op_type == op && node.domain == domain) return &node;
  return nullptr;
}

// Runs one pass on a copy of the graph; expects success and a valid graph.
inline ir::Graph run_pass(Result<int> (*pass)(ir::Graph&, const passes::PassContext&), const ir::Graph& in,
                          const passes::PassContext& ctx, int* rewrites = nullptr) {
  ir::Graph g = in;
  auto r = pass(g, ctx);
  EXPECT_TRUE(r) << r.error().to_string();
  const Status v = ir::verify(g);
  EXPECT_TRUE(v) << v.to_string();
  if (rewrites) *rewrites = r ? *r : -1;
  return g;
}

inline ir::Graph run_pass(Result<int> (*pass)(ir::Graph&, const passes::PassContext&), const ir::Graph& in,
                          int* rewrites = nullptr) {
  return run_pass(pass, in, runtime::make_pass_context(), rewrites);
}

// The whole pipeline at `level` on a copy of the graph.
inline ir::Graph optimized(const ir::Graph& in, passes::Level level = passes::Level::All) {
  ir::Graph g = in;
  auto r = passes::optimize(g, level, runtime::make_pass_context());
  EXPECT_TRUE(r) << r.error().to_string();
  return g;
}

// Random input values for every graph input (float32: uniform in [-2, 2]).
inline NamedTensors random_inputs(const ir::Graph& g, const std::vector<std::vector<int64_t>>& shapes, uint32_t seed) {
  NamedTensors feeds;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Shape shape(shapes[i]);
    const auto v = random_values(shape.numel(), seed + static_cast<uint32_t>(i), -2.0f, 2.0f);
    Tensor t = Tensor::empty(DType::F32, shape);
    for (int64_t k = 0; k < t.numel(); ++k) t.data_as<float>()[k] = v[static_cast<size_t>(k)];
    feeds.emplace_back(g.inputs[i].name, t);
  }
  return feeds;
}

// Runs g as it is (exported, then loaded without optimization) on feeds.
inline std::vector<Tensor> run_as_is(const ir::Graph& g, const NamedTensors& feeds) {
  auto bytes = onnx_io::export_model(g);
  EXPECT_TRUE(bytes) << bytes.error().to_string();
  if (!bytes) return {};
  SessionOptions opts;
  opts.optimization = OptLevel::None;
  opts.threads = 2;
  auto s = Session::open_bytes(std::as_bytes(std::span<const char>(bytes->data(), bytes->size())), opts);
  EXPECT_TRUE(s) << s.error().to_string();
  if (!s) return {};
  auto out = s->run(feeds);
  EXPECT_TRUE(out) << out.error().to_string();
  return out ? *out : std::vector<Tensor>{};
}

// Largest |difference| over all outputs between the graph run unoptimized and at `level`
// (both through ignis::Session, i.e. through the registered kernels). Infinity on failure.
inline double optimized_vs_plain(const ir::Graph& g, const NamedTensors& feeds, OptLevel level = OptLevel::All) {
  auto bytes = onnx_io::export_model(g);
  EXPECT_TRUE(bytes) << bytes.error().to_string();
  if (!bytes) return INFINITY;
  const auto span = std::as_bytes(std::span<const char>(bytes->data(), bytes->size()));
  SessionOptions plain_opts, opt_opts;
  plain_opts.optimization = OptLevel::None;
  opt_opts.optimization = level;
  plain_opts.threads = opt_opts.threads = 2;
  auto plain = Session::open_bytes(span, plain_opts);
  auto opt = Session::open_bytes(span, opt_opts);
  EXPECT_TRUE(plain) << plain.error().to_string();
  EXPECT_TRUE(opt) << opt.error().to_string();
  if (!plain || !opt) return INFINITY;
  auto a = plain->run(feeds);
  auto b = opt->run(feeds);
  EXPECT_TRUE(a) << a.error().to_string();
  EXPECT_TRUE(b) << b.error().to_string();
  if (!a || !b || a->size() != b->size()) return INFINITY;
  double diff = 0;
  for (size_t o = 0; o < a->size(); ++o) {
    const Tensor &x = (*a)[o], &y = (*b)[o];
    EXPECT_EQ(x.shape(), y.shape());
    if (!(x.shape() == y.shape())) return INFINITY;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double d = std::fabs(double(x.data_as<float>()[i]) - y.data_as<float>()[i]);
      diff = std::max(diff, std::isnan(d) ? INFINITY : d);
    }
  }
  return diff;
}

}  // namespace ignis::fuse_test
