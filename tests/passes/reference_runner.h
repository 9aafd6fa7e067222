// SPDX-License-Identifier: Apache-2.0
// Runs an ir::Graph node by node on the reference kernels ("ref/..." ids) only, whatever the
// machine offers, and compares a graph with its rewrite by a pass on the same inputs. For
// pass tests whose rewritten graph uses attributes only the reference kernels read.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/strings.h"
#include "ignis/session.h"
#include "ir/graph.h"
#include "ir/op_schema.h"
#include "ir/rewrite.h"
#include "kernels/registry.h"

namespace ignis::reference_runner {

// The reference kernel for the node, or nullptr.
inline const kernels::KernelDef* find_reference_kernel(const ir::Node& n, int64_t opset,
                                                       const std::vector<DType>& dtypes) {
  for (const auto& d : kernels::KernelRegistry::global().all()) {
    if (d.domain != n.domain || d.op_type != n.op_type || opset < d.since_opset || opset > d.until_opset) continue;
    if (!std::string_view(d.id).starts_with("ref/") || d.isa != kernels::Isa::None) continue;
    if (d.type_input >= static_cast<int>(dtypes.size()) || !d.types.contains(dtypes[d.type_input])) continue;
    return &d;
  }
  return nullptr;
}

// The graph outputs, in declaration order.
inline Result<std::vector<Tensor>> run(const ir::Graph& g, const NamedTensors& feeds) {
  std::unordered_map<std::string, Tensor> values(g.initializers.begin(), g.initializers.end());
  for (const auto& [name, t] : feeds) values[name] = t;
  IGNIS_ASSIGN_OR_RETURN(auto order, ir::topological_order(g));
  for (int idx : order) {
    const ir::Node& n = g.nodes[idx];
    const int64_t opset = g.opset(n.domain);
    std::vector<const Tensor*> inputs;
    std::vector<ir::ValueType> types(n.inputs.size());
    std::vector<const ir::ValueType*> type_ptrs;
    std::vector<DType> dtypes;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Tensor* t = nullptr;
      if (!n.inputs[i].empty()) {
        auto it = values.find(n.inputs[i]);
        if (it == values.end()) return internal_error(str_cat(n.label(), ": input '", n.inputs[i], "' has no value"));
        t = &it->second;
        types[i] = {t->dtype(), t->shape()};
      }
      inputs.push_back(t);
      type_ptrs.push_back(t ? &types[i] : nullptr);
      dtypes.push_back(t ? t->dtype() : DType::Undefined);
    }
    const auto* schema = ir::OpSchemaRegistry::global().find(n.domain, n.op_type, opset);
    if (!schema) return unsupported(str_cat(n.label(), ": no schema"));
    ir::InferContext ictx(n.name, n.op_type, opset, n.attrs, type_ptrs, inputs, static_cast<int>(n.outputs.size()));
    IGNIS_RETURN_IF_ERROR(schema->infer(ictx));
    const auto* def = find_reference_kernel(n, opset, dtypes);
    if (!def) return unsupported(str_cat(n.label(), ": no reference kernel"));
    kernels::KernelInit init{n.attrs, opset, dtypes, inputs};
    IGNIS_ASSIGN_OR_RETURN(auto kernel, kernels::make_kernel(*def, init));
    std::vector<Tensor> outputs;
    for (const auto& vt : ictx.outputs()) outputs.push_back(Tensor::zeros(vt.dtype, vt.shape));
    std::vector<Tensor*> out_ptrs;
    for (size_t o = 0; o < outputs.size(); ++o)
      out_ptrs.push_back(o < n.outputs.size() && !n.outputs[o].empty() ? &outputs[o] : nullptr);
    kernels::Scratch scratch;
    kernels::KernelContext kctx(n.attrs, opset, inputs, out_ptrs, nullptr, &scratch);
    IGNIS_RETURN_IF_ERROR(kernel->run(kctx));
    for (size_t o = 0; o < outputs.size() && o < n.outputs.size(); ++o)
      if (!n.outputs[o].empty()) values[n.outputs[o]] = outputs[o];
  }
  std::vector<Tensor> result;
  for (const auto& o : g.outputs) {
    auto it = values.find(o.name);
    if (it == values.end()) return internal_error(str_cat("graph output '", o.name, "' was not computed"));
    result.push_back(it->second);
  }
  return result;
}

// Largest |difference| between the outputs of `a` and `b` on `feeds` (float32 outputs; other
// dtypes must match bytewise, else infinity). Infinity on any failure.
inline double max_difference(const ir::Graph& a, const ir::Graph& b, const NamedTensors& feeds) {
  auto x = run(a, feeds);
  auto y = run(b, feeds);
  EXPECT_TRUE(x) << x.error().to_string();
  EXPECT_TRUE(y) << y.error().to_string();
  if (!x || !y || x->size() != y->size()) return INFINITY;
  double diff = 0;
  for (size_t o = 0; o < x->size(); ++o) {
    const Tensor &p = (*x)[o], &q = (*y)[o];
    EXPECT_EQ(p.shape(), q.shape()) << "output " << o;
    EXPECT_EQ(p.dtype(), q.dtype()) << "output " << o;
    if (!(p.shape() == q.shape()) || p.dtype() != q.dtype()) return INFINITY;
    if (p.dtype() != DType::F32) {
      if (p.nbytes() && std::memcmp(p.data(), q.data(), p.nbytes()) != 0) return INFINITY;
      continue;
    }
    for (int64_t i = 0; i < p.numel(); ++i) {
      const double d = std::fabs(double(p.data_as<float>()[i]) - q.data_as<float>()[i]);
      diff = std::max(diff, std::isnan(d) ? INFINITY : d);
    }
  }
  return diff;
}

}  // namespace ignis::reference_runner
