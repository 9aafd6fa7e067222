// SPDX-License-Identifier: Apache-2.0
#include "runtime/plan.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "core/aligned_alloc.h"
#include "core/dtype_dispatch.h"
#include "core/memory_info.h"
#include "core/strings.h"
#include "runtime/memory_plan.h"

namespace ignis::runtime {

// Per-run mutable state, pooled by the plan so steady-state runs allocate only outputs.
struct Plan::RunState {
  std::shared_ptr<void> arena;
  std::vector<Tensor> slots;          // arena views and per-run outputs, by value id
  std::vector<const Tensor*> values;  // what each value id reads from this run
  std::vector<const Tensor*> in_ptrs;
  std::vector<Tensor*> out_ptrs;
  std::vector<Tensor> views;  // a sliced step's inputs and outputs (reserved before pointers are taken)
  kernels::Scratch scratch;
};

namespace {

// Ops whose result is not a pure function of their inputs are never folded.
bool is_foldable(const ir::Node& n) {
  static const char* kNonDeterministic[] = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                            "RandomUniformLike", "Multinomial", "Bernoulli"};
  for (const char* op : kNonDeterministic)
    if (n.op_type == op) return false;
  return true;
}

// Ops whose output value follows from the input's shape alone.
bool reads_only_shape(const ir::Node& n) { return n.domain.empty() && (n.op_type == "Shape" || n.op_type == "Size"); }

Status with_node(const ir::Node& n, int64_t opset, const Status& s) {
  const std::string prefix = str_cat("node '", n.name, "'");
  if (s.message().rfind(prefix, 0) == 0) return s;
  return Status(s.code(), str_cat("node '", n.name, "' (", n.op_type, ", opset ", opset, "): ", s.message()));
}

const kernels::KernelDef* choose_kernel(const NodeInfo& info, const std::vector<DType>& dtypes, Status* err) {
  const auto* def = kernels::KernelRegistry::global().find(info.node->domain, info.node->op_type, info.opset, dtypes);
  if (!def) {
    std::vector<std::string> names;
    for (DType d : dtypes) names.emplace_back(d == DType::Undefined ? "-" : dtype_name(d));
    *err = unsupported(str_cat("node '", info.node->name, "' (", info.node->op_type, ", opset ", info.opset,
                               "): no kernel for input types ", str_list(names)));
  }
  return def;
}

// Runs shape inference for one node; `types`/`values` are indexed by value id. `read_values`,
// when given, tells whether inference asked for any input's value.
Result<std::vector<ir::ValueType>> infer_node(const NodeInfo& info, const std::vector<ir::ValueType>& types,
                                              const std::vector<const Tensor*>& values, bool* read_values = nullptr) {
  std::vector<const ir::ValueType*> in_types(info.inputs.size(), nullptr);
  std::vector<const Tensor*> in_values(info.inputs.size(), nullptr);
  for (size_t i = 0; i < info.inputs.size(); ++i) {
    const int v = info.inputs[i];
    if (v < 0) continue;
    in_types[i] = &types[v];
    in_values[i] = values[v];
  }
  ir::InferContext ctx(info.node->name, info.node->op_type, info.opset, info.node->attrs, in_types, in_values,
                       static_cast<int>(info.outputs.size()));
  Status s = info.schema->infer(ctx);
  if (read_values) *read_values = ctx.read_values();
  if (!s) return with_node(*info.node, info.opset, s);
  for (size_t i = 0; i < ctx.outputs().size(); ++i)
    if (ctx.outputs()[i].dtype == DType::Undefined && info.outputs[i] >= 0)
      return internal_error(str_cat(info.node->label(), ": shape inference left output ", i, " unset"));
  return ctx.outputs();
}

std::vector<DType> input_dtypes(const NodeInfo& info, const std::vector<ir::ValueType>& types) {
  std::vector<DType> d(info.inputs.size(), DType::Undefined);
  for (size_t i = 0; i < info.inputs.size(); ++i)
    if (info.inputs[i] >= 0) d[i] = types[info.inputs[i]].dtype;
  return d;
}

std::vector<Shape> input_shapes(const NodeInfo& info, const std::vector<ir::ValueType>& types) {
  std::vector<Shape> s(info.inputs.size());
  for (size_t i = 0; i < info.inputs.size(); ++i)
    if (info.inputs[i] >= 0) s[i] = types[info.inputs[i]].shape;
  return s;
}

// Executes one node's kernel on tensors given by pointer (used for folding and dynamic runs).
Status run_kernel(const NodeInfo& info, const kernels::Kernel& kernel, std::span<const Tensor* const> ins,
                  std::span<Tensor* const> outs, ThreadPool* pool, kernels::Scratch* scratch) {
  kernels::KernelContext ctx(info.node->attrs, info.opset, ins, outs, pool, scratch);
  Status s = kernel.run(ctx);
  return s ? s : with_node(*info.node, info.opset, s);
}

// A kernel may be shared across plans when every constant it was given is a model initializer.
bool signature_independent(const Model& m, const NodeInfo& info, std::span<const Tensor* const> constants) {
  for (size_t i = 0; i < info.inputs.size(); ++i)
    if (constants[i] && constants[i] != m.initializers[info.inputs[i]]) return false;
  return true;
}

// Kernels are created from constants whose data is present; data released after the first plan
// is only ever read through kernels of the cache.
Status check_constants_present(const NodeInfo& info, std::span<const Tensor* const> constants) {
  for (size_t i = 0; i < constants.size(); ++i)
    if (constants[i] && constants[i]->data() == nullptr && constants[i]->numel() > 0)
      return internal_error(
          str_cat(info.node->label(), ": the data of input ", i, " was released after planning and is needed again"));
  return Status::ok();
}

// Bytes of a value of type `t`; InvalidArgument naming `what` when the size is not representable.
Result<size_t> value_bytes(const ir::ValueType& t, const std::string& what) {
  if (auto bytes = tensor_bytes(t.dtype, t.shape)) return *bytes;
  for (int64_t d : t.shape)
    if (d < 0) return invalid_argument(str_cat(what, " has shape ", t.shape.str(), " with a negative dim"));
  return invalid_argument(str_cat(what, " has shape ", t.shape.str(), ", whose size in bytes (", dtype_name(t.dtype),
                                  ") does not fit in 64 bits"));
}

std::string limit_text(size_t limit) {
  return str_cat("the session's memory limit of ", format_bytes(limit), " (SessionOptions::memory_limit_bytes)");
}

// "{x: [100000000, 1, 8, 8], mask: [1, 8]}"
std::string signature_text(const Model& m, const std::vector<ir::ValueType>& inputs) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < m.graph_inputs.size() && i < inputs.size(); ++i)
    parts.push_back(str_cat(m.value_names[m.graph_inputs[i]], ": ", inputs[i].shape.str()));
  return "{" + str_join(parts) + "}";
}

// A static plan that needs `need` bytes (or at least that many, when planning stopped early).
Status plan_exceeds_limit(const Model& m, const std::vector<ir::ValueType>& inputs, size_t need, bool at_least,
                          size_t limit, const std::string& detail = "") {
  return resource_exhausted(str_cat("input shapes ", signature_text(m, inputs), " need ", at_least ? "at least " : "",
                                    format_bytes(need), " of activations and outputs", detail, ", more than ",
                                    limit_text(limit)));
}

// An allocation the size checks allowed but the system refused.
Status out_of_memory(size_t bytes, const std::string& what) {
  return resource_exhausted(str_cat("out of memory allocating ", format_bytes(bytes), " for ", what));
}

// Tensor::empty that reports a refused allocation instead of aborting; the size was checked.
Result<Tensor> try_empty(const ir::ValueType& t, const std::string& what) {
  if (!dtype_is_plain(t.dtype)) return Tensor::empty(t.dtype, t.shape);  // strings, containers
  const size_t bytes = *tensor_bytes(t.dtype, t.shape);
  auto buffer = try_make_aligned_buffer(bytes);
  if (!buffer) return out_of_memory(bytes, what);
  void* data = buffer.get();
  return Tensor::wrap(t.dtype, t.shape, data, std::move(buffer));
}

// Strings and containers are objects, not arena bytes, and a container's contents (hence the
// types of what reads it) are known only at run time: plans holding any run dynamically.
bool needs_dynamic_plan(std::span<const ir::ValueType> types) {
  for (const auto& t : types)
    if (t.dtype != DType::Undefined && !dtype_is_plain(t.dtype)) return true;
  return false;
}

std::string value_text(const Model& m, int v, const ir::ValueType& t) {
  return str_cat("'", m.value_names[v], "' ", dtype_name(t.dtype), t.shape.str());
}

}  // namespace

std::optional<KernelCache::Entry> KernelCache::find(int node, std::span<const DType> dtypes) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto [b, e] = entries_.equal_range(node);
  for (auto it = b; it != e; ++it)
    if (std::equal(dtypes.begin(), dtypes.end(), it->second.first.begin(), it->second.first.end()))
      return it->second.second;
  return std::nullopt;
}

void KernelCache::insert(int node, std::span<const DType> dtypes, Entry entry) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.emplace(node, std::pair{std::vector<DType>(dtypes.begin(), dtypes.end()), std::move(entry)});
}

namespace {

// The kernel definition and tactic for a node the plan is about to instantiate: the rules'
// choice unless tuning names another (a cache entry this build still offers, or, when
// measuring, the fastest candidate, which is then added to the cache).
Result<TacticCandidate> tuned_choice(const TuningOptions& tuning, const NodeInfo& info, std::span<const DType> dtypes,
                                     const kernels::KernelInit& init, std::span<const ir::ValueType> outputs,
                                     const kernels::KernelDef* rules) {
  const std::vector<TacticCandidate> candidates = tactic_candidates(info, dtypes, init, rules);
  if (candidates.size() < 2) return TacticCandidate{rules, {}};
  const std::string key = node_signature(info, dtypes, init.input_shapes, init.constants, init.precision);
  if (key.empty()) return TacticCandidate{rules, {}};
  TunedChoice cached;
  if (tuning.mode != Tuning::Remeasure && tuning.cache && tuning.cache->find(tuning.threads, key, &cached)) {
    for (const TacticCandidate& c : candidates)
      if (c.def->id == cached.kernel_id && c.tactic == cached.tactic) return c;
  }
  if (tuning.mode != Tuning::Measure && tuning.mode != Tuning::Remeasure) return TacticCandidate{rules, {}};
  TunedNode event;
  event.signature = key;
  auto best = measure_tactics(info, candidates, init, outputs, tuning.pool, &event);
  if (!best) return TacticCandidate{rules, {}};  // not measurable (integer inputs): the rules
  const TacticCandidate& chosen = candidates[*best];
  if (tuning.cache)
    tuning.cache->put(tuning.threads, key,
                      TunedChoice{std::string(chosen.def->id), std::string(chosen.tactic), event.chosen_us});
  if (tuning.on_measured) tuning.on_measured(event);
  return chosen;
}

// The data input whose bytes output `v` of the step running `node` can take: the step is a Reshape-like op
// (the output is the input's elements in the same order) and the last reader of that input,
// whose value was planned before v. -1 otherwise.
int aliasable_input(const Model& m, int node, int v, const std::vector<int>& last_step, int step_index) {
  const NodeInfo& info = m.nodes[static_cast<size_t>(node)];
  const ir::Node& n = *info.node;
  const bool reshape_like = n.domain.empty() && (n.op_type == "Reshape" || n.op_type == "Flatten" ||
                                                 n.op_type == "Squeeze" || n.op_type == "Unsqueeze" ||
                                                 n.op_type == "Identity");
  if (!reshape_like || info.outputs.size() != 1 || info.outputs[0] != v || info.inputs.empty()) return -1;
  const int u = info.inputs[0];
  if (u < 0 || u >= v || last_step[static_cast<size_t>(u)] != step_index) return -1;
  return u;
}

// Whether node `node` is a Concat whose output is its inputs' bytes laid end to end: one
// outer block (every dimension before the axis is 1) of plain elements.
bool concat_of_whole_inputs(const Model& m, int node, const std::vector<ir::ValueType>& types) {
  const NodeInfo& info = m.nodes[static_cast<size_t>(node)];
  const ir::Node& n = *info.node;
  if (!n.domain.empty() || n.op_type != "Concat" || info.outputs.size() != 1 || info.outputs[0] < 0) return false;
  const ir::ValueType& out = types[static_cast<size_t>(info.outputs[0])];
  const int64_t rank = out.shape.rank();
  if (rank == 0 || !dtype_is_plain(out.dtype)) return false;
  int64_t axis = n.attrs.get_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  for (int64_t d = 0; d < axis; ++d)
    if (out.shape[static_cast<int>(d)] != 1) return false;
  return true;
}

// The ints of input `k` of a node (Slice's starts, axes, steps) where it is known at plan time
// (`known`: initializers and values folded for these shapes), or nullopt when it is absent,
// not known or not an integer tensor.
std::optional<std::vector<int64_t>> constant_ints(const std::vector<const Tensor*>& known, const NodeInfo& info,
                                                  size_t k) {
  if (k >= info.inputs.size() || info.inputs[k] < 0) return std::nullopt;
  const Tensor* t = known[static_cast<size_t>(info.inputs[k])];
  if (t == nullptr || (t->dtype() != DType::I64 && t->dtype() != DType::I32)) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t->numel(); ++i) out.push_back(load_as_int64(t->dtype(), t->data(), i));
  return out;
}

// Where output `v` of a Slice or Split step lies in its data input's bytes when it is one
// contiguous run of them: every dimension before the first one the op cuts is 1, that one is
// cut with step 1 and the later ones are whole. Returns the byte offset, or -1.
int64_t contiguous_part_offset(const Model& m, int node, int v, const std::vector<ir::ValueType>& types,
                               const std::vector<const Tensor*>& known) {
  const NodeInfo& info = m.nodes[static_cast<size_t>(node)];
  const ir::Node& n = *info.node;
  if (!n.domain.empty() || (n.op_type != "Slice" && n.op_type != "Split") || info.inputs.empty() || info.inputs[0] < 0)
    return -1;
  const ir::ValueType& in = types[static_cast<size_t>(info.inputs[0])];
  const ir::ValueType& out = types[static_cast<size_t>(v)];
  const int rank = in.shape.rank();
  if (!dtype_is_plain(in.dtype) || rank == 0 || out.shape.rank() != rank) return -1;
  const int64_t esize = static_cast<int64_t>(dtype_size(in.dtype));
  // The axis cut and the start along it.
  int64_t axis = -1, start = 0;
  if (n.op_type == "Split") {
    axis = n.attrs.get_int("axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return -1;
    for (int o : info.outputs) {
      if (o == v) break;
      if (o < 0) return -1;
      start += types[static_cast<size_t>(o)].shape[static_cast<int>(axis)];
    }
  } else {
    if (info.opset < 10) return -1;
    const auto starts = constant_ints(known, info, 1);
    if (!starts) return -1;
    std::vector<int64_t> axes, steps;
    if (info.inputs.size() > 3 && info.inputs[3] >= 0) {
      const auto a = constant_ints(known, info, 3);
      if (!a) return -1;
      axes = *a;
    } else {
      for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (info.inputs.size() > 4 && info.inputs[4] >= 0) {
      const auto st = constant_ints(known, info, 4);
      if (!st) return -1;
      steps = *st;
    }
    if (axes.size() != starts->size() || (!steps.empty() && steps.size() != axes.size())) return -1;
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (a < 0 || a >= rank) return -1;
      const int64_t dim = in.shape[static_cast<int>(a)];
      if (out.shape[static_cast<int>(a)] == dim) continue;  // whole (step 1 from 0, checked below)
      if (axis >= 0 || (!steps.empty() && steps[i] != 1)) return -1;
      axis = a;
      start = (*starts)[i] < 0 ? (*starts)[i] + dim : (*starts)[i];
      start = std::clamp<int64_t>(start, 0, dim);
    }
    // An axis kept whole must not be reversed or strided: its step is 1 (or it has one element).
    for (size_t i = 0; i < axes.size() && !steps.empty(); ++i) {
      const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (steps[i] != 1 && in.shape[static_cast<int>(a)] > 1) return -1;
    }
    if (axis < 0) return 0;  // the whole input
  }
  for (int d = 0; d < rank; ++d) {
    if (d < axis && in.shape[d] != 1) return -1;
    if (d > axis && out.shape[d] != in.shape[d]) return -1;
  }
  return start * in.shape.numel(static_cast<int>(axis) + 1, rank) * esize;
}

}  // namespace

Plan::~Plan() { delete spare_.load(); }

Result<std::unique_ptr<Plan>> Plan::create(std::shared_ptr<const Model> model, const std::vector<ir::ValueType>& inputs,
                                           const PlanOptions& options) {
  std::unique_ptr<Plan> plan(new Plan());
  plan->model_ = model;
  plan->kernel_cache_ = options.kernels;
  plan->memory_limit_ = options.memory_limit_bytes;
  const size_t limit = options.memory_limit_bytes;
  const Model& m = *model;
  const size_t nv = m.value_names.size();
  plan->values_.resize(nv);
  plan->folded_.resize(nv);

  std::vector<ir::ValueType> types(nv);
  std::vector<const Tensor*> known(nv, nullptr);  // values known at plan time
  for (size_t v = 0; v < nv; ++v) {
    if (const Tensor* t = m.initializers[v]) {
      types[v] = {t->dtype(), t->shape()};
      known[v] = t;
      plan->values_[v].kind = Kind::Constant;
      plan->values_[v].constant = t;
    }
  }
  for (size_t i = 0; i < m.graph_inputs.size(); ++i) {
    const int v = m.graph_inputs[i];
    types[v] = inputs[i];
    plan->values_[v].kind = Kind::Input;
    IGNIS_RETURN_IF_ERROR(value_bytes(inputs[i], str_cat("input '", m.value_names[v], "'")).status());
  }
  if (needs_dynamic_plan(inputs) || needs_dynamic_plan(types)) {  // `types` holds the initializers' so far
    plan->dynamic_ = true;
    return plan;
  }

  // Readers of each initializer, and how many of them are cached kernels that ignore its data.
  std::vector<int> readers(nv, 0), readers_done(nv, 0);
  if (options.on_initializer_unused)
    for (const NodeInfo& info : m.nodes)
      for (int v : info.inputs)
        if (v >= 0 && m.initializers[v]) ++readers[v];
  for (int v : m.graph_outputs) readers[v] = -1;  // returned by value: never dropped

  kernels::Scratch scratch;
  std::vector<int> step_of_value(nv, -1);
  std::vector<std::optional<PerSampleStep>> per_sample;  // by step, when slicing is enabled
  size_t folded_bytes = 0;
  for (int ni = 0; ni < static_cast<int>(m.nodes.size()); ++ni) {
    const NodeInfo& info = m.nodes[ni];
    auto inferred = infer_node(info, types, known);
    if (!inferred) {
      if (inferred.error().code() == StatusCode::ValueRequired) {
        plan->dynamic_ = true;  // a shape depends on run-time data
        plan->steps_.clear();
        return plan;
      }
      return inferred.error();
    }
    const auto& outs = *inferred;
    if (needs_dynamic_plan(outs)) {
      plan->dynamic_ = true;
      plan->steps_.clear();
      return plan;
    }
    // Sizes are checked before any kernel or buffer sees the shapes.
    std::vector<size_t> out_bytes(outs.size(), 0);
    for (size_t o = 0; o < outs.size(); ++o) {
      const int v = info.outputs[o];
      if (v < 0) continue;
      types[v] = outs[o];
      auto bytes = value_bytes(outs[o], str_cat("output '", m.value_names[v], "'"));
      if (!bytes) return with_node(*info.node, info.opset, bytes.error());
      out_bytes[o] = *bytes;
      if (limit != 0 && *bytes > limit)
        return plan_exceeds_limit(m, inputs, *bytes, true, limit,
                                  str_cat(" (value ", value_text(m, v, outs[o]), " alone)"));
    }

    const auto dtypes = input_dtypes(info, types);
    Status err;
    const kernels::KernelDef* def = choose_kernel(info, dtypes, &err);
    if (!def) return err;

    bool all_known = is_foldable(*info.node);
    for (int v : info.inputs)
      if (v >= 0 && !known[v]) all_known = false;
    const bool shape_only = reads_only_shape(*info.node) && info.inputs.size() == 1 && info.inputs[0] >= 0;

    std::vector<const Tensor*> in_values(info.inputs.size(), nullptr);
    for (size_t i = 0; i < info.inputs.size(); ++i)
      if (info.inputs[i] >= 0) in_values[i] = known[info.inputs[i]];
    const bool shareable = !(all_known || shape_only) && signature_independent(m, info, in_values);
    std::shared_ptr<const kernels::Kernel> kernel;
    std::string label;
    if (shareable && options.kernels) {
      if (auto cached = options.kernels->find(ni, dtypes)) {
        def = cached->def;
        label = std::move(cached->label);
        kernel = std::move(cached->kernel);
      }
    }
    if (!kernel) {
      IGNIS_RETURN_IF_ERROR(check_constants_present(info, in_values));
      const std::vector<Shape> shapes = input_shapes(info, types);
      kernels::KernelInit init{info.node->attrs, info.opset, dtypes, in_values, shapes, m.precision};
      if (options.tuning && !(all_known || shape_only)) {
        IGNIS_ASSIGN_OR_RETURN(const TacticCandidate chosen,
                               tuned_choice(*options.tuning, info, dtypes, init, outs, def));
        def = chosen.def;
        init.tactic = chosen.tactic;
      }
      IGNIS_ASSIGN_OR_RETURN(auto made, kernels::make_kernel(*def, init));
      kernel = std::move(made);
      label = kernel_label(*def, init.tactic);
      if (shareable && options.kernels) options.kernels->insert(ni, dtypes, {def, label, kernel});
    }
    if (shareable && options.kernels && options.on_initializer_unused) {
      for (size_t i = 0; i < info.inputs.size(); ++i) {
        const int v = info.inputs[i];
        if (v < 0 || !m.initializers[v] || readers[v] < 0 || kernel->uses_constant_data(static_cast<int>(i)))
          continue;
        if (++readers_done[v] == readers[v]) options.on_initializer_unused(v);
      }
    }

    if (all_known || shape_only) {
      // Evaluate now; the results become constants of this plan.
      Tensor shape_probe;
      if (shape_only && !all_known) {
        const auto& t = types[info.inputs[0]];
        shape_probe = Tensor::view(t.dtype, t.shape, static_cast<const void*>(nullptr));
        in_values[0] = &shape_probe;
      }
      for (size_t o = 0; o < info.outputs.size(); ++o)
        if (info.outputs[o] >= 0) folded_bytes = add_saturating(folded_bytes, out_bytes[o]);
      if (limit != 0 && folded_bytes > limit)
        return plan_exceeds_limit(m, inputs, folded_bytes, true, limit, " (in constants computed for these shapes)");
      std::vector<Tensor*> out_ptrs(info.outputs.size(), nullptr);
      for (size_t o = 0; o < info.outputs.size(); ++o) {
        const int v = info.outputs[o];
        if (v < 0) continue;
        plan->folded_[v] = Tensor::zeros(outs[o].dtype, outs[o].shape);
        out_ptrs[o] = &plan->folded_[v];
      }
      IGNIS_RETURN_IF_ERROR(run_kernel(info, *kernel, in_values, out_ptrs, nullptr, &scratch));
      for (int v : info.outputs) {
        if (v < 0) continue;
        known[v] = &plan->folded_[v];
        plan->values_[v].kind = Kind::Constant;
        plan->values_[v].constant = &plan->folded_[v];
      }
      continue;
    }

    Step step;
    step.node = ni;
    step.def = def;
    step.label = std::move(label);
    step.kernel = std::move(kernel);
    std::vector<const ir::ValueType*> in_types;
    for (int v : info.inputs) in_types.push_back(v >= 0 ? &types[v] : nullptr);
    if (options.slicing.enabled) {
      per_sample.push_back(per_sample_step(*info.node, in_types, in_values, outs));
      if (per_sample.back()) step.sliced = per_sample.back()->sliced;
    }
    step.flops = estimate_flops(*info.node, in_types, outs);
    plan->flops_ += step.flops;
    for (int v : info.outputs)
      if (v >= 0) step_of_value[v] = static_cast<int>(plan->steps_.size());
    plan->steps_.push_back(std::move(step));
  }

  // Memory plan over step indices: a value lives from its producing step to its last reader.
  std::vector<int> last_step(nv, -1);
  for (int s = 0; s < static_cast<int>(plan->steps_.size()); ++s)
    for (int v : m.nodes[plan->steps_[s].node].inputs)
      if (v >= 0) last_step[v] = s;
  std::vector<bool> is_output(nv, false), read_by_concat(nv, false);
  for (int v : m.graph_outputs) is_output[v] = true;
  for (const NodeInfo& info : m.nodes)
    if (info.node->domain.empty() && info.node->op_type == "Concat")
      for (int v : info.inputs)
        if (v >= 0) read_by_concat[static_cast<size_t>(v)] = true;
  plan->slice_runs_ = find_slice_runs(per_sample, options.slicing);
  std::vector<int> run_of_step(plan->steps_.size(), -1);
  for (size_t r = 0; r < plan->slice_runs_.size(); ++r)
    for (int st = plan->slice_runs_[r].first; st < plan->slice_runs_[r].last; ++st) run_of_step[st] = static_cast<int>(r);

  // Every size below was checked when its value was inferred, so only sums can overflow.
  std::vector<BufferRequest> requests, slice_requests;
  std::vector<int> request_value, slice_request_value;
  // Per value: its arena request, and for an aliased value the value whose bytes it takes (from
  // alias_offset bytes in). Per request: how many values share it, and whether a Concat's
  // request took it over (it is then not placed).
  std::vector<int> request_of(nv, -1), alias_of(nv, -1);
  std::vector<size_t> alias_offset(nv, 0);
  std::vector<int> request_users;
  std::vector<char> request_dropped;
  size_t requested_bytes = 0;
  for (size_t v = 0; v < nv; ++v) {
    plan->values_[v].type = types[v];
    const int first = step_of_value[v];
    if (first >= 0 || last_step[v] >= 0) {
      // A sliced run reads and writes its values one slice of samples at a time.
      const int64_t batch = types[v].shape.rank() >= 1 ? types[v].shape[0] : 0;
      if (batch > 0 && dtype_is_plain(types[v].dtype))
        plan->values_[v].sample_bytes = *tensor_bytes(types[v].dtype, types[v].shape) / static_cast<size_t>(batch);
    }
    if (first < 0) continue;
    const size_t bytes = *tensor_bytes(types[v].dtype, types[v].shape);
    if (is_output[v]) {
      plan->values_[v].kind = Kind::Output;
      plan->output_bytes_ = add_saturating(plan->output_bytes_, bytes);
      continue;
    }
    int last = std::max(last_step[v], first);
    const int run = run_of_step[first];
    if (run >= 0 && last < plan->slice_runs_[run].last) {
      // Made and consumed within one slice of the run: one slice's bytes, reused by the next.
      plan->values_[v].kind = Kind::Slice;
      const size_t slice_bytes = plan->values_[v].sample_bytes * static_cast<size_t>(plan->slice_runs_[run].slice);
      slice_requests.push_back({slice_bytes, first, last});
      slice_request_value.push_back(static_cast<int>(v));
      requested_bytes = add_saturating(requested_bytes, align_up(std::max<size_t>(slice_bytes, 1)));
      continue;
    }
    // Values a sliced run writes for later steps, or reads from earlier ones, hold every sample
    // from the run's first step to its last (the first slice writes before the last one reads).
    const int first_live = run >= 0 ? plan->slice_runs_[run].first : first;
    if (run_of_step[last] >= 0) last = plan->slice_runs_[run_of_step[last]].last - 1;
    plan->values_[v].kind = Kind::Arena;
    const int node = plan->steps_[static_cast<size_t>(first)].node;
    // Output v takes u's bytes from `offset` on: u's buffer lives until v's last reader too,
    // and the step does not run.
    auto view_of = [&](int u, size_t offset) {
      BufferRequest& r = requests[static_cast<size_t>(request_of[u])];
      r.last_step = std::max(r.last_step, last);
      request_of[v] = request_of[u];
      ++request_users[static_cast<size_t>(request_of[u])];
      alias_of[v] = u;
      alias_offset[v] = offset;
      plan->steps_[static_cast<size_t>(first)].aliases_input = true;
    };
    if (const int u = aliasable_input(m, node, static_cast<int>(v), last_step, first);
        run < 0 && u >= 0 && plan->values_[u].kind == Kind::Arena && request_of[u] >= 0 &&
        *tensor_bytes(types[u].dtype, types[u].shape) == bytes) {
      // The same bytes under another shape, read after the input's last use: one buffer, live
      // until the output's last reader.
      view_of(u, 0);
      continue;
    }
    if (run < 0 && contiguous_part_offset(m, node, static_cast<int>(v), types, known) >= 0) {
      // A Slice or Split output that is a contiguous run of its input's bytes: a view at that
      // offset, when every output of the step can be one (the step then does not run). The
      // input's buffer lives until the last read of any view; views start at 64-byte offsets.
      const NodeInfo& info = m.nodes[static_cast<size_t>(node)];
      const int u = info.inputs[0];
      bool views = u >= 0 && static_cast<size_t>(u) < v && plan->values_[u].kind == Kind::Arena && request_of[u] >= 0;
      // Not for outputs a Concat reads: made by a copying step, such an output can be made in
      // place in the Concat's output (shufflenet's Concat of a channel split's passed-through
      // half and its branch), which a view cannot.
      int64_t offset = -1;
      for (int o : info.outputs) {
        if (!views) break;
        const int64_t off = o < 0 ? -1 : contiguous_part_offset(m, node, o, types, known);
        views = o >= 0 && !is_output[static_cast<size_t>(o)] && !read_by_concat[static_cast<size_t>(o)] && off >= 0 &&
                off % kAlignment == 0;
        if (o == static_cast<int>(v)) offset = off;
      }
      if (views) {
        view_of(u, static_cast<size_t>(offset));
        continue;
      }
    }
    int first_step = first_live;
    if (run < 0 && concat_of_whole_inputs(m, node, types)) {
      // A Concat of whole inputs: each input is made in place in its part of the output's buffer,
      // which lives from the first input's step to the last read of the output or any input, and
      // the Concat does not run. Only for inputs that own their buffer (made by a step outside
      // sliced runs, not graph outputs, not shared with a Reshape) at 64-byte aligned offsets.
      const std::vector<int>& parts = m.nodes[static_cast<size_t>(node)].inputs;
      bool whole = !parts.empty();
      size_t offset = 0;
      for (size_t i = 0; whole && i < parts.size(); ++i) {
        const int u = parts[i];
        whole = u >= 0 && static_cast<size_t>(u) < v && plan->values_[u].kind == Kind::Arena && alias_of[u] < 0 &&
                request_of[u] >= 0 && request_users[static_cast<size_t>(request_of[u])] == 1 &&
                step_of_value[u] >= 0 && run_of_step[step_of_value[u]] < 0 && offset % kAlignment == 0 &&
                std::count(parts.begin(), parts.end(), u) == 1;
        if (whole) offset += requests[static_cast<size_t>(request_of[u])].bytes;
      }
      if (whole && offset == bytes) {
        offset = 0;
        const int merged = static_cast<int>(requests.size());
        for (int u : parts) {
          const BufferRequest& r = requests[static_cast<size_t>(request_of[u])];
          first_step = std::min(first_step, r.first_step);
          last = std::max(last, r.last_step);
          request_dropped[static_cast<size_t>(request_of[u])] = 1;
          request_of[u] = -1;  // no later Reshape takes these bytes
          alias_of[u] = static_cast<int>(v);
          alias_offset[u] = offset;
          offset += r.bytes;
        }
        plan->steps_[static_cast<size_t>(first)].aliases_input = true;
        request_of[v] = merged;
      }
    }
    if (request_of[v] < 0) request_of[v] = static_cast<int>(requests.size());
    requests.push_back({bytes, first_step, last});
    request_value.push_back(static_cast<int>(v));
    request_users.push_back(1);
    request_dropped.push_back(0);
    requested_bytes = add_saturating(requested_bytes, align_up(std::max<size_t>(bytes, 1)));
  }
  // Requests a Concat took over are not placed (their values are views of the Concat's).
  std::vector<BufferRequest> placed_requests;
  std::vector<int> placed_value;
  for (size_t r = 0; r < requests.size(); ++r)
    if (!request_dropped[r]) {
      placed_requests.push_back(requests[r]);
      placed_value.push_back(request_value[r]);
    }
  // The arena is at most the sum of the aligned requests, so plan_memory cannot overflow.
  if (requested_bytes == SIZE_MAX)
    return resource_exhausted(str_cat("input shapes ", signature_text(m, inputs),
                                      " need more activation memory than 64-bit sizes can express"));
  const MemoryPlan mp = plan_memory(placed_requests);
  for (size_t r = 0; r < placed_requests.size(); ++r) plan->values_[placed_value[r]].offset = mp.offsets[r];
  // A Concat input takes its place in the Concat's output (a higher value, itself placed or a
  // part of a later Concat: descending order), a Reshape's output its input's bytes and a
  // Slice's or Split's output a part of them (a lower value: ascending), so an alias of an
  // alias finds its target placed.
  for (size_t v = nv; v-- > 0;)
    if (alias_of[v] > static_cast<int>(v))
      plan->values_[v].offset = plan->values_[static_cast<size_t>(alias_of[v])].offset + alias_offset[v];
  for (size_t v = 0; v < nv; ++v)
    if (alias_of[v] >= 0 && alias_of[v] < static_cast<int>(v))
      plan->values_[v].offset = plan->values_[static_cast<size_t>(alias_of[v])].offset + alias_offset[v];
  // Slice-local values follow the full-batch ones in the same buffer; runs never overlap in
  // time, so one plan over step indices lets every run reuse the same bytes.
  const MemoryPlan sp = plan_memory(slice_requests);
  const size_t slice_base = align_up(mp.arena_bytes);
  for (size_t r = 0; r < slice_requests.size(); ++r)
    plan->values_[slice_request_value[r]].offset = slice_base + sp.offsets[r];
  plan->slice_arena_bytes_ = sp.arena_bytes;
  plan->arena_bytes_ = slice_requests.empty() ? mp.arena_bytes : slice_base + sp.arena_bytes;
  const size_t need = add_saturating(add_saturating(plan->arena_bytes_, plan->output_bytes_), folded_bytes);
  if (limit != 0 && need > limit) return plan_exceeds_limit(m, inputs, need, false, limit);
  for (int v : m.graph_outputs)
    if (plan->values_[v].kind == Kind::Unset) plan->values_[v].type = types[v];
  for (size_t v = 0; v < nv; ++v)
    if (plan->values_[v].kind == Kind::Output) plan->output_values_.push_back(static_cast<int>(v));
  return plan;
}

Result<std::unique_ptr<Plan::RunState>> Plan::acquire_state() const {
  if (RunState* spare = spare_.exchange(nullptr)) return std::unique_ptr<RunState>(spare);
  {
    std::lock_guard<std::mutex> lock(states_mu_);
    if (!free_states_.empty()) {
      auto s = std::move(free_states_.back());
      free_states_.pop_back();
      return s;
    }
  }
  auto s = std::make_unique<RunState>();
  const size_t nv = values_.size();
  s->arena = try_make_aligned_buffer(arena_bytes_);
  if (!s->arena) return out_of_memory(arena_bytes_, "the activation arena");
  s->slots.resize(nv);
  s->values.assign(nv, nullptr);
  for (size_t v = 0; v < nv; ++v) {
    const Value& val = values_[v];
    if (val.kind == Kind::Arena) {
      s->slots[v] = Tensor::view(val.type.dtype, val.type.shape, static_cast<char*>(s->arena.get()) + val.offset);
      s->values[v] = &s->slots[v];
    } else if (val.kind == Kind::Constant) {
      s->values[v] = val.constant;
    }
  }
  return s;
}

void Plan::release_state(std::unique_ptr<RunState> s) const {
  RunState* expected = nullptr;
  if (spare_.compare_exchange_strong(expected, s.get())) {
    (void)s.release();
    return;
  }
  std::lock_guard<std::mutex> lock(states_mu_);
  free_states_.push_back(std::move(s));
}

Result<std::vector<Tensor>> Plan::run(std::span<const Tensor* const> inputs, std::span<const int> output_ids,
                                      ThreadPool* pool, std::vector<StepTiming>* timings) const {
  if (dynamic_) return run_dynamic(inputs, output_ids, pool, timings);
  const Model& m = *model_;
  IGNIS_ASSIGN_OR_RETURN(auto state, acquire_state());
  RunState& s = *state;
  for (size_t i = 0; i < m.graph_inputs.size(); ++i) s.values[m.graph_inputs[i]] = inputs[i];
  Status status;
  for (int v : output_values_) {
    auto t = try_empty(values_[v].type, str_cat("output '", m.value_names[v], "'"));
    if (!t) {
      status = t.error();
      break;
    }
    s.slots[v] = std::move(*t);
    s.values[v] = &s.slots[v];
  }

  using Clock = std::chrono::steady_clock;
  size_t next_run = 0;
  for (size_t si = 0; si < steps_.size(); ++si) {
    if (!status) break;  // an output could not be allocated, or the previous step failed
    if (next_run < slice_runs_.size() && slice_runs_[next_run].first == static_cast<int>(si)) {
      const SliceRun& r = slice_runs_[next_run++];
      status = run_sliced(r, s, pool, timings);
      si = static_cast<size_t>(r.last) - 1;
      continue;
    }
    const Step& step = steps_[si];
    if (step.aliases_input) continue;  // its output already holds the values (see Step)
    const NodeInfo& info = m.nodes[step.node];
    s.in_ptrs.assign(info.inputs.size(), nullptr);
    s.out_ptrs.assign(info.outputs.size(), nullptr);
    for (size_t i = 0; i < info.inputs.size(); ++i)
      if (info.inputs[i] >= 0) s.in_ptrs[i] = s.values[info.inputs[i]];
    for (size_t o = 0; o < info.outputs.size(); ++o)
      if (info.outputs[o] >= 0) s.out_ptrs[o] = &s.slots[info.outputs[o]];
    const auto t0 = timings ? Clock::now() : Clock::time_point{};
    status = run_kernel(info, *step.kernel, s.in_ptrs, s.out_ptrs, pool, &s.scratch);
    if (timings) {
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      timings->push_back({step.node, step.label, us, step.flops});
    }
  }

  std::vector<Tensor> results;
  if (status) {
    results.reserve(output_ids.size());
    for (int v : output_ids) {
      if (values_[v].kind == Kind::Output) results.push_back(s.slots[v]);
      else results.push_back(s.values[v]->clone());  // an input or constant passed straight through
    }
  }
  for (int v : output_values_) s.slots[v] = Tensor();
  for (int v : m.graph_inputs) s.values[v] = nullptr;
  release_state(std::move(state));
  if (!status) return status;
  return results;
}

Status Plan::run_sliced(const SliceRun& r, RunState& s, ThreadPool* pool, std::vector<StepTiming>* timings) const {
  using Clock = std::chrono::steady_clock;
  const Model& m = *model_;
  char* arena = static_cast<char*>(s.arena.get());
  std::vector<double> micros(static_cast<size_t>(r.last - r.first), 0.0);
  // Samples [b0, b0 + count) of value v: its slice-local buffer, or a view into the whole batch.
  const auto slice_of = [&](int v, int64_t b0, int64_t count) {
    const Value& val = values_[v];
    Shape shape = val.type.shape;
    shape[0] = count;
    if (val.kind == Kind::Slice) return Tensor::view(val.type.dtype, shape, static_cast<void*>(arena + val.offset));
    // Arena values and outputs are their slots; inputs and constants what the run reads.
    return Tensor::view(val.type.dtype, shape,
                        static_cast<void*>(static_cast<char*>(s.values[v]->data()) +
                                           static_cast<size_t>(b0) * val.sample_bytes));
  };
  for (int64_t b0 = 0; b0 < r.batch; b0 += r.slice) {
    const int64_t count = std::min(r.slice, r.batch - b0);
    for (int si = r.first; si < r.last; ++si) {
      const Step& step = steps_[si];
      const NodeInfo& info = m.nodes[step.node];
      s.views.clear();
      s.views.reserve(info.inputs.size() + info.outputs.size());
      s.in_ptrs.assign(info.inputs.size(), nullptr);
      s.out_ptrs.assign(info.outputs.size(), nullptr);
      for (size_t i = 0; i < info.inputs.size(); ++i) {
        const int v = info.inputs[i];
        if (v < 0) continue;
        if (step.sliced[i]) {
          s.views.push_back(slice_of(v, b0, count));
          s.in_ptrs[i] = &s.views.back();
        } else {
          s.in_ptrs[i] = s.values[v];
        }
      }
      for (size_t o = 0; o < info.outputs.size(); ++o) {
        if (info.outputs[o] < 0) continue;
        s.views.push_back(slice_of(info.outputs[o], b0, count));
        s.out_ptrs[o] = &s.views.back();
      }
      const auto t0 = timings ? Clock::now() : Clock::time_point{};
      IGNIS_RETURN_IF_ERROR(run_kernel(info, *step.kernel, s.in_ptrs, s.out_ptrs, pool, &s.scratch));
      if (timings) micros[si - r.first] += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    }
  }
  if (timings)
    for (int si = r.first; si < r.last; ++si)
      timings->push_back({steps_[si].node, steps_[si].label, micros[si - r.first], steps_[si].flops});
  return Status::ok();
}

namespace {

// Answers kept per node (Plan::find_inferred).
constexpr size_t kMaxInferredPerNode = 8;

bool same_types(const std::vector<ir::ValueType>& a, const std::vector<ir::ValueType>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].dtype != b[i].dtype || !(a[i].shape == b[i].shape)) return false;
  return true;
}

}  // namespace

const std::vector<ir::ValueType>* Plan::find_inferred(int node, const std::vector<ir::ValueType>& inputs) const {
  std::shared_lock<std::shared_mutex> lock(infer_memo_mu_);
  if (static_cast<size_t>(node) >= infer_memo_.size()) return nullptr;
  for (const auto& e : infer_memo_[static_cast<size_t>(node)])
    if (same_types(e->inputs, inputs)) return &e->outputs;
  return nullptr;
}

void Plan::keep_inferred(int node, std::vector<ir::ValueType> inputs, const std::vector<ir::ValueType>& outputs) const {
  std::unique_lock<std::shared_mutex> lock(infer_memo_mu_);
  if (infer_memo_.size() <= static_cast<size_t>(node)) infer_memo_.resize(model_->nodes.size());
  auto& kept = infer_memo_[static_cast<size_t>(node)];
  if (kept.size() >= kMaxInferredPerNode) return;
  for (const auto& e : kept)
    if (same_types(e->inputs, inputs)) return;  // kept by a concurrent run
  kept.push_back(std::make_unique<const InferMemo>(InferMemo{std::move(inputs), outputs}));
}

Result<std::vector<Tensor>> Plan::run_dynamic(std::span<const Tensor* const> inputs, std::span<const int> output_ids,
                                              ThreadPool* pool, std::vector<StepTiming>* timings) const {
  const Model& m = *model_;
  const size_t nv = m.value_names.size();
  std::vector<Tensor> owned(nv);
  std::vector<const Tensor*> values(nv, nullptr);
  std::vector<ir::ValueType> types(nv);
  for (size_t v = 0; v < nv; ++v)
    if (m.initializers[v]) values[v] = m.initializers[v];
  for (size_t i = 0; i < m.graph_inputs.size(); ++i) values[m.graph_inputs[i]] = inputs[i];
  for (size_t v = 0; v < nv; ++v)
    if (values[v]) types[v] = {values[v]->dtype(), values[v]->shape()};
  std::vector<bool> keep(nv, false);
  for (int v : output_ids) keep[v] = true;

  kernels::Scratch scratch;
  using Clock = std::chrono::steady_clock;
  size_t live_bytes = 0;  // held in `owned`: this run's intermediates and outputs so far
  for (int ni = 0; ni < static_cast<int>(m.nodes.size()); ++ni) {
    const NodeInfo& info = m.nodes[ni];
    std::vector<ir::ValueType> in_types;
    for (int v : info.inputs) in_types.push_back(v >= 0 ? types[v] : ir::ValueType{});
    Result<std::vector<ir::ValueType>> inferred = std::vector<ir::ValueType>{};
    if (const auto* known_outs = find_inferred(ni, in_types)) {
      inferred = *known_outs;
    } else {
      bool read_values = true;
      inferred = infer_node(info, types, values, &read_values);
      if (inferred && !read_values) keep_inferred(ni, std::move(in_types), *inferred);
    }
    // Control flow: only running the node tells its output shapes; its kernel sizes them.
    const bool kernel_sized = !inferred && inferred.error().code() == StatusCode::ValueRequired &&
                              info.schema->kernel_sizes_outputs;
    if (!inferred && !kernel_sized) return inferred.error();
    std::vector<ir::ValueType> outs = kernel_sized ? std::vector<ir::ValueType>(info.outputs.size()) : *inferred;
    size_t step_bytes = 0;
    for (size_t o = 0; o < outs.size(); ++o) {
      const int v = info.outputs[o];
      if (v < 0) continue;
      types[v] = outs[o];
      auto bytes = value_bytes(outs[o], str_cat("output '", m.value_names[v], "'"));
      if (!bytes) return with_node(*info.node, info.opset, bytes.error());
      step_bytes = add_saturating(step_bytes, *bytes);
    }
    if (memory_limit_ != 0 && add_saturating(live_bytes, step_bytes) > memory_limit_) {
      std::vector<std::string> made;
      for (size_t o = 0; o < outs.size(); ++o)
        if (info.outputs[o] >= 0) made.push_back(value_text(m, info.outputs[o], outs[o]));
      return with_node(*info.node, info.opset,
                       resource_exhausted(str_cat("outputs ", str_join(made), " need ", format_bytes(step_bytes),
                                                  " with ", format_bytes(live_bytes),
                                                  " already held by this run, more than ", limit_text(memory_limit_))));
    }
    const auto dtypes = input_dtypes(info, types);
    Status err;
    const kernels::KernelDef* def = choose_kernel(info, dtypes, &err);
    if (!def) return err;
    std::vector<const Tensor*> in_values(info.inputs.size(), nullptr);
    for (size_t i = 0; i < info.inputs.size(); ++i)
      if (info.inputs[i] >= 0) in_values[i] = values[info.inputs[i]];
    // A kernel shared with the static plans may hold weights whose data was released.
    std::shared_ptr<const kernels::Kernel> kernel;
    std::string label(def->id);
    if (kernel_cache_) {
      if (auto cached = kernel_cache_->find(ni, dtypes)) {
        def = cached->def;
        label = std::move(cached->label);
        kernel = std::move(cached->kernel);
      }
    }
    if (!kernel) {
      // Made from the model's initializers alone, as a static plan would make it, so that it
      // serves every later run: making some kernels costs far more than running them (a tree
      // ensemble reads its attributes, a control-flow op plans its bodies).
      std::vector<const Tensor*> constants(info.inputs.size(), nullptr);
      for (size_t i = 0; i < info.inputs.size(); ++i)
        if (info.inputs[i] >= 0) constants[i] = m.initializers[info.inputs[i]];
      IGNIS_RETURN_IF_ERROR(check_constants_present(info, constants));
      const std::vector<Shape> shapes = input_shapes(info, types);
      kernels::KernelInit init{info.node->attrs, info.opset, dtypes, constants, shapes, m.precision};
      IGNIS_ASSIGN_OR_RETURN(auto made, kernels::make_kernel(*def, init));
      kernel = std::move(made);
      if (kernel_cache_) kernel_cache_->insert(ni, dtypes, {def, label, kernel});
    }
    std::vector<Tensor*> out_ptrs(info.outputs.size(), nullptr);
    for (size_t o = 0; o < info.outputs.size(); ++o) {
      const int v = info.outputs[o];
      if (v < 0) continue;
      if (kernel_sized) {
        owned[v] = Tensor();
        out_ptrs[o] = &owned[v];
        continue;
      }
      auto t = try_empty(outs[o], str_cat("output '", m.value_names[v], "'"));
      if (!t) return with_node(*info.node, info.opset, t.error());
      owned[v] = std::move(*t);
      live_bytes += owned[v].nbytes();
      out_ptrs[o] = &owned[v];
      values[v] = &owned[v];
    }
    const auto t0 = timings ? Clock::now() : Clock::time_point{};
    IGNIS_RETURN_IF_ERROR(run_kernel(info, *kernel, in_values, out_ptrs, pool, &scratch));
    if (kernel_sized) {
      for (size_t o = 0; o < info.outputs.size(); ++o) {
        const int v = info.outputs[o];
        if (v < 0) continue;
        if (!owned[v].defined())
          return internal_error(str_cat(info.node->label(), ": the kernel did not produce output ", o));
        outs[o] = types[v] = {owned[v].dtype(), owned[v].shape()};
        values[v] = &owned[v];
        live_bytes += owned[v].nbytes();
      }
      if (memory_limit_ != 0 && live_bytes > memory_limit_)
        return with_node(*info.node, info.opset,
                         resource_exhausted(str_cat("this run holds ", format_bytes(live_bytes), ", more than ",
                                                    limit_text(memory_limit_))));
    }
    if (timings) {
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      std::vector<const ir::ValueType*> in_types;
      for (int v : info.inputs) in_types.push_back(v >= 0 ? &types[v] : nullptr);
      timings->push_back({ni, label, us, estimate_flops(*info.node, in_types, outs)});
    }
    // Free intermediates after their last reader.
    for (int v : info.inputs)
      if (v >= 0 && m.last_use[v] == ni && !keep[v] && owned[v].defined()) {
        live_bytes -= owned[v].nbytes();
        owned[v] = Tensor();
        values[v] = nullptr;
      }
  }
  std::vector<Tensor> results;
  for (int v : output_ids) {
    if (!values[v]) return internal_error(str_cat("output '", m.value_names[v], "' was not computed"));
    results.push_back(owned[v].defined() ? owned[v] : values[v]->clone());
  }
  return results;
}

}  // namespace ignis::runtime
