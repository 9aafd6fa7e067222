// SPDX-License-Identifier: Apache-2.0
// Control-flow bodies through the pipeline, each as a working copy (optimize_bodies.h).
// Legality: a body's declared inputs differ from call to call, and a Loop's carried values may
// change shape from one iteration to the next, so the working copy keeps only their dtype and
// rank (the declared extents are the exporter's, not checked by the runtime). Outer values
// that are not constants of an enclosing graph are inputs of unknown type. Passes never
// rename or remove graph inputs, initializers they did not create, or graph outputs, so
// what the body reads from outside and gives back keeps its names.
#include "passes/optimize_bodies.h"

#include <memory>
#include <utility>
#include <vector>

#include "core/strings.h"

namespace ignis::passes {

namespace {

ValueInfo run_time_value(const std::string& name) {
  ValueInfo v;
  v.name = name;
  return v;
}

// `info` with its extents unknown: dtype and rank stay.
ValueInfo without_extents(ValueInfo info) {
  for (auto& d : info.dims) d = -1;
  info.dim_names.assign(info.dims.size(), "");
  return info;
}

// The constants visible inside `g`'s bodies: `outer` less what `g` defines at run time, and
// `g`'s initializers.
OuterConstants visible_in_bodies(const ir::Graph& g, const OuterConstants& outer) {
  OuterConstants visible = outer;
  for (const auto& in : g.inputs) visible.erase(in.name);
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs) visible.erase(o);
  for (const auto& [name, t] : g.initializers) visible[name] = t;
  return visible;
}

// Optimizes a copy of `body`, adding its rewrites to `total`; null when nothing changed.
Result<std::shared_ptr<const ir::Graph>> optimize_body(
    const ir::Graph& body, const OuterConstants& visible,
    const std::function<Result<int>(ir::Graph&, const OuterConstants&)>& optimize, int* total) {
  ir::Graph w = body;
  for (auto& in : w.inputs) in = without_extents(std::move(in));
  std::vector<std::string> copied;
  for (const auto& name : ir::outer_scope_names(body)) {
    auto it = visible.find(name);
    if (it != visible.end()) {
      w.initializers[name] = it->second;
      copied.push_back(name);
    } else {
      w.inputs.push_back(run_time_value(name));
    }
  }
  IGNIS_ASSIGN_OR_RETURN(int rewrites, optimize(w, visible));
  *total += rewrites;
  if (rewrites == 0) return std::shared_ptr<const ir::Graph>();

  bool inputs_kept = w.inputs.size() >= body.inputs.size();
  for (size_t i = 0; inputs_kept && i < body.inputs.size(); ++i) inputs_kept = w.inputs[i].name == body.inputs[i].name;
  if (!inputs_kept) return internal_error(str_cat("optimizing body '", body.name, "' changed its inputs"));
  w.inputs = body.inputs;
  for (const auto& name : copied) {
    auto it = w.initializers.find(name);
    if (it == w.initializers.end()) continue;  // no longer read
    if (it->second.data() != visible.at(name).data())
      return internal_error(str_cat("optimizing body '", body.name, "' replaced outer constant '", name, "'"));
    w.initializers.erase(it);  // read from the enclosing graph again
  }
  return std::make_shared<const ir::Graph>(std::move(w));
}

}  // namespace

Result<int> optimize_bodies(ir::Graph& g, const OuterConstants& outer,
                            const std::function<Result<int>(ir::Graph&, const OuterConstants&)>& optimize,
                            int* dropped) {
  *dropped = 0;
  std::unique_ptr<OuterConstants> visible;  // built at the first body
  int total = 0;
  for (auto& n : g.nodes) {
    const size_t declared = ir::declared_input_count(n);
    const size_t captured = n.inputs.size() - declared;
    std::vector<std::pair<std::string, Attribute>> replaced;
    for (const auto& [attr_name, a] : n.attrs.items()) {
      if (a.kind != Attribute::Kind::Graph || !a.graph) continue;
      if (!visible) visible = std::make_unique<OuterConstants>(visible_in_bodies(g, outer));
      IGNIS_ASSIGN_OR_RETURN(auto optimized, optimize_body(*a.graph, *visible, optimize, &total));
      if (!optimized) continue;
      Attribute copy = a;
      copy.graph = std::move(optimized);
      replaced.emplace_back(attr_name, std::move(copy));
    }
    if (replaced.empty()) continue;
    for (auto& [attr_name, a] : replaced) {
      // A fusion may have imported a domain (ai.ignis) into the body; a model declares its
      // opsets once, at the top.
      for (const auto& [domain, version] : a.graph->opsets) g.opsets.emplace(domain, version);
      n.attrs.set(attr_name, std::move(a));
    }
    n.inputs.resize(declared);
    for (auto& name : ir::outer_scope_names(n.attrs)) n.inputs.push_back(std::move(name));
    *dropped += static_cast<int>(captured - (n.inputs.size() - declared));
  }
  return total;
}

}  // namespace ignis::passes
