// SPDX-License-Identifier: Apache-2.0
#include "runtime/subgraph.h"

#include <algorithm>

#include "core/strings.h"

namespace ignis::runtime {

namespace {

// Plans kept per body; a body called with ever-changing shapes (a growing sequence) replans
// rather than holding every plan.
constexpr size_t kMaxPlans = 16;

}  // namespace

Result<std::unique_ptr<Subgraph>> Subgraph::create(const ir::Graph& body) {
  std::unique_ptr<Subgraph> s(new Subgraph());
  ir::Graph g = body;
  s->declared_inputs_ = g.inputs.size();
  s->outer_names_ = ir::outer_scope_names(body);
  // The body's own declarations are the exporter's; the values the node passes are checked
  // by the control-flow kernel, so the inputs are left untyped here.
  auto untyped = [](const std::string& name) {
    ValueInfo v;
    v.name = name;
    return v;
  };
  for (auto& in : g.inputs) in = untyped(in.name);
  for (const auto& name : s->outer_names_) g.inputs.push_back(untyped(name));
  auto model = build_model(std::move(g));
  if (!model) return Status(model.error().code(), str_cat("body '", body.name, "': ", model.error().message()));
  s->model_ = std::move(*model);
  return s;
}

Result<std::vector<Tensor>> Subgraph::run(std::span<const Tensor* const> inputs, ThreadPool* pool) const {
  if (inputs.size() != model_->graph_inputs.size())
    return internal_error(str_cat("body '", model_->graph.name, "' takes ", model_->graph_inputs.size(),
                                  " values, got ", inputs.size()));
  std::vector<ir::ValueType> sig;
  sig.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr || !inputs[i]->defined())
      return invalid_argument(str_cat("body '", model_->graph.name, "': input '",
                                      model_->graph.inputs[i].name, "' has no value"));
    sig.push_back({inputs[i]->dtype(), inputs[i]->shape()});
  }
  std::shared_ptr<const Plan> plan;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& e : plans_) {
      bool same = e.signature.size() == sig.size();
      for (size_t i = 0; same && i < sig.size(); ++i)
        same = e.signature[i].dtype == sig[i].dtype && e.signature[i].shape == sig[i].shape;
      if (same) {
        plan = e.plan;
        break;
      }
    }
    if (!plan) {
      PlanOptions options;
      options.kernels = &kernels_;
      auto created = Plan::create(model_, sig, options);
      if (!created) return Status(created.error().code(), str_cat("body '", model_->graph.name, "': ", created.error().message()));
      plan = std::move(*created);
      if (plans_.size() >= kMaxPlans) plans_.erase(plans_.begin());
      plans_.push_back({sig, plan});
    }
  }
  auto out = plan->run(inputs, model_->graph_outputs, pool, nullptr);
  if (!out) return Status(out.error().code(), str_cat("body '", model_->graph.name, "': ", out.error().message()));
  return out;
}

Result<NodeSubgraph> make_node_subgraph(const kernels::KernelInit& init, std::string_view attr) {
  const ir::Graph* g = init.attrs.get_graph(attr);
  if (g == nullptr) return invalid_argument(str_cat("graph attribute '", attr, "' is missing"));
  NodeSubgraph b;
  IGNIS_ASSIGN_OR_RETURN(b.graph, Subgraph::create(*g));
  const std::vector<std::string> node_outer = ir::outer_scope_names(init.attrs);
  const int declared = static_cast<int>(init.input_dtypes.size() - node_outer.size());
  for (const auto& name : b.graph->outer_names()) {
    auto it = std::find(node_outer.begin(), node_outer.end(), name);
    if (it == node_outer.end()) return internal_error(str_cat("outer value '", name, "' is not an input of the node"));
    b.outer_inputs.push_back(declared + static_cast<int>(it - node_outer.begin()));
  }
  return b;
}

Result<std::vector<Tensor>> run_node_subgraph(const NodeSubgraph& body, const kernels::KernelContext& ctx,
                                              std::vector<const Tensor*> declared) {
  for (int i : body.outer_inputs) declared.push_back(ctx.has_input(i) ? &ctx.input(i) : nullptr);
  return body.graph->run(declared, ctx.pool());
}

}  // namespace ignis::runtime
