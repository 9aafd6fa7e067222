// SPDX-License-Identifier: Apache-2.0
// The public Session: owns the indexed model, the thread pool and a cache of plans keyed by
// input-shape signature. run() validates inputs against the model's declarations first.
#include <algorithm>
#include <atomic>
#include <array>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "core/cpu_features.h"
#include "core/memory_info.h"
#include "core/strings.h"
#include "ignis/session.h"
#include "ir/index_limits.h"
#include "kernels/registry.h"
#include "onnx/import.h"
#include "passes/pass.h"
#include "runtime/evaluate.h"
#include "runtime/model.h"
#include "runtime/plan.h"
#include "runtime/session_internal.h"
#include "runtime/tactics.h"

namespace ignis {

std::string ValueInfo::shape_string() const {
  if (!has_shape) return "?";
  std::vector<std::string> parts;
  for (size_t i = 0; i < dims.size(); ++i)
    parts.push_back(dims[i] >= 0 ? std::to_string(dims[i]) : (dim_names[i].empty() ? "?" : dim_names[i]));
  return str_list(parts);
}

namespace {

// Signatures are compared in place, from the caller's tensors, so a run that finds its plan
// allocates nothing. `type_at(i)` yields input i's (dtype, shape).
template <class TypeAt>
uint64_t signature_hash(size_t n, const TypeAt& type_at) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](uint64_t x) { h = (h ^ x) * 0x100000001b3ull; };
  for (size_t i = 0; i < n; ++i) {
    const auto [dtype, shape] = type_at(i);
    mix(static_cast<uint64_t>(dtype));
    mix(static_cast<uint64_t>(shape->rank()));
    for (int64_t d : *shape) mix(static_cast<uint64_t>(d));
  }
  return h;
}

template <class TypeAt>
bool signature_equals(const std::vector<ir::ValueType>& sig, size_t n, const TypeAt& type_at) {
  if (sig.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    const auto [dtype, shape] = type_at(i);
    if (sig[i].dtype != dtype || !(sig[i].shape == *shape)) return false;
  }
  return true;
}

}  // namespace

struct Session::Impl {
  std::shared_ptr<runtime::Model> model;
  SessionOptions options;
  size_t memory_limit = SIZE_MAX;  // resolved from options.memory_limit_bytes
  std::shared_ptr<ThreadPool> pool;  // shared with the process's other sessions of this size
  ModelInfo info;
  runtime::KernelCache kernels;  // outlives the plans, which may read it
  // Set unless options.tuning is Off; plans read it while they are created.
  std::unique_ptr<runtime::TuningOptions> tuning;
  std::string tuning_path;     // where a measuring session writes what it measured
  size_t tuning_unsaved = 0;   // nodes measured since the last write (under planning_mu)

  struct PlanEntry {
    std::vector<ir::ValueType> signature;
    std::shared_ptr<const runtime::Plan> plan;
    std::atomic<uint64_t> last_used{0};  // a tick of `clock`
  };
  std::mutex planning_mu;             // plans are created one at a time
  bool planned_once = false;          // under planning_mu
  mutable std::shared_mutex plans_mu;  // guards `plans`; runs take it shared
  // By signature hash. Beyond options.max_cached_plans the least recently used is dropped (its
  // activation buffers with it); runs in progress keep their plan alive.
  std::unordered_multimap<uint64_t, std::unique_ptr<PlanEntry>> plans;
  std::atomic<uint64_t> clock{0};

  // The plan for a signature, created on first use. The session's first plan may drop weights
  // that only prepacking kernels read, as soon as their last reader exists (no run can be in
  // flight before the first plan); later plans reuse those kernels through the kernel cache.
  template <class TypeAt>
  Result<std::shared_ptr<const runtime::Plan>> plan_for(size_t n, const TypeAt& type_at) {
    const uint64_t h = signature_hash(n, type_at);
    auto find = [&]() -> std::shared_ptr<const runtime::Plan> {
      std::shared_lock<std::shared_mutex> lock(plans_mu);
      auto [b, e] = plans.equal_range(h);
      for (auto it = b; it != e; ++it)
        if (signature_equals(it->second->signature, n, type_at)) {
          it->second->last_used.store(clock.fetch_add(1, std::memory_order_relaxed), std::memory_order_relaxed);
          return it->second->plan;
        }
      return nullptr;
    };
    if (auto p = find()) return p;
    std::lock_guard<std::mutex> planning(planning_mu);
    if (auto p = find()) return p;  // planned while this call waited
    std::vector<ir::ValueType> sig;
    for (size_t i = 0; i < n; ++i) {
      const auto [dtype, shape] = type_at(i);
      sig.push_back({dtype, *shape});
    }
    runtime::PlanOptions po;
    po.kernels = &kernels;
    if (!planned_once) {
      runtime::Model* m = model.get();
      po.on_initializer_unused = [m](int v) { runtime::release_initializer_data(*m, v); };
    }
    planned_once = true;
    po.memory_limit_bytes = memory_limit == SIZE_MAX ? 0 : memory_limit;
    po.tuning = tuning.get();
    po.slicing = runtime::slicing_options_from_env();
    auto created = runtime::Plan::create(model, sig, po);
    save_tuning();  // what was measured is kept even when planning failed later on
    if (!created) return created.error();
    std::shared_ptr<const runtime::Plan> plan = std::move(*created);
    auto entry = std::make_unique<PlanEntry>();
    entry->signature = std::move(sig);
    entry->plan = plan;
    entry->last_used = clock.fetch_add(1, std::memory_order_relaxed);
    std::unique_lock<std::shared_mutex> lock(plans_mu);
    plans.emplace(h, std::move(entry));
    if (options.max_cached_plans > 0 && plans.size() > options.max_cached_plans) {
      auto oldest = plans.end();
      for (auto it = plans.begin(); it != plans.end(); ++it)
        if (it->second->plan != plan &&
            (oldest == plans.end() || it->second->last_used.load() < oldest->second->last_used.load()))
          oldest = it;
      if (oldest != plans.end()) plans.erase(oldest);
    }
    return plan;
  }

  // Writes the tuning cache when this session measured something since the last write; a
  // failed write is a warning (the choices still hold for this session).
  void save_tuning() {
    if (!tuning || tuning_unsaved == 0 || tuning_path.empty()) return;
    tuning_unsaved = 0;
    if (Status s = tuning->cache->save(tuning_path); !s)
      std::fprintf(stderr, "ignis: warning: %s\n", s.message().c_str());
  }

  Result<std::shared_ptr<const runtime::Plan>> plan_for(const std::vector<ir::ValueType>& types) {
    return plan_for(types.size(), [&](size_t i) { return std::pair{types[i].dtype, &types[i].shape}; });
  }
};

namespace {

// Shapes for the plan made at creation, symbolic dims set as SessionOptions::plan_dims and
// plan_batch say; nullopt if some input has no shape.
std::optional<std::vector<ir::ValueType>> default_signature(const ir::Graph& g, const SessionOptions& options,
                                                            bool* all_static) {
  std::vector<ir::ValueType> types;
  *all_static = true;
  for (const auto& in : g.inputs) {
    if (!in.has_shape || in.dtype == DType::Undefined) return std::nullopt;
    Shape s;
    bool leading = true;
    for (size_t d = 0; d < in.dims.size(); ++d) {
      int64_t v = in.dims[d];
      if (v < 0) {
        *all_static = false;
        auto it = d < in.dim_names.size() ? options.plan_dims.find(in.dim_names[d]) : options.plan_dims.end();
        v = it != options.plan_dims.end() && it->second >= 0 ? it->second
            : leading && options.plan_batch > 0             ? options.plan_batch
                                                            : 1;
        leading = false;
      }
      s.push_back(v);
    }
    types.push_back({in.dtype, s});
  }
  return types;
}

// Everything after import: model facts, graph passes, indexing, the default signature's plan.
Result<std::unique_ptr<Session::Impl>> make_impl(ir::Graph graph, const SessionOptions& options) {
  auto impl = std::make_unique<Session::Impl>();
  impl->options = options;
  impl->memory_limit = options.memory_limit_bytes;
  if (impl->memory_limit == 0) impl->memory_limit = physical_memory_bytes();
  if (impl->memory_limit == 0) impl->memory_limit = SIZE_MAX;

  ModelInfo& info = impl->info;
  info.ir_version = graph.ir_version;
  info.producer = graph.producer;
  for (const auto& [d, v] : graph.opsets) info.opsets.emplace_back(d, v);
  for (const auto& n : graph.nodes) info.op_histogram[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type]++;
  info.node_count = static_cast<int64_t>(graph.nodes.size());
  for (const auto& [name, t] : graph.initializers) {
    info.parameter_count += t.numel();
    info.parameter_bytes += static_cast<int64_t>(t.nbytes());
  }
  info.index_limits = ir::gather_index_limits(graph);  // before fusions hide the Gathers

  IGNIS_RETURN_IF_ERROR(passes::expand_qoperator_ops(graph).status());
  if (options.optimization != OptLevel::None) {
    IGNIS_ASSIGN_OR_RETURN(auto fired, passes::optimize(graph, runtime::pass_level(options.optimization),
                                                        runtime::make_pass_context(options.precision)));
    (void)fired;
  }
  IGNIS_ASSIGN_OR_RETURN(impl->model, runtime::build_model(std::move(graph)));
  impl->model->precision = options.precision;
  const int threads = options.threads == 0 ? ThreadPool::default_threads() : options.threads;
  impl->pool = ThreadPool::shared(threads, options.pin_threads);
  if (options.log_level >= LogLevel::Info)
    std::fprintf(stderr, "ignis: session: kernels %s; %d threads%s%s\n", kernels::kernel_selection_summary().c_str(),
                 threads, options.pin_threads ? ", workers pinned to cores" : "",
                 options.precision == Precision::Bf16   ? "; bfloat16 GEMMs and convolutions where the CPU has AVX512_BF16"
                 : options.precision == Precision::F16 ? "; MatMul and Gemm weights stored as float16 where the CPU has F16C"
                                                       : "");

  if (options.tuning != Tuning::Off) {
    impl->tuning = std::make_unique<runtime::TuningOptions>();
    runtime::TuningOptions& t = *impl->tuning;
    t.mode = options.tuning;
    t.threads = threads;
    t.pool = impl->pool.get();
    impl->tuning_path = options.tuning_cache.empty() ? runtime::default_tuning_cache_path() : options.tuning_cache;
    t.cache = impl->tuning_path.empty() ? std::make_shared<runtime::TuningCache>(cpu_features().identity())
                                        : runtime::shared_tuning_cache(impl->tuning_path);
    Session::Impl* self = impl.get();
    t.on_measured = [self, log = options.log_level >= LogLevel::Info,
                     user = options.on_tuned](const TunedNode& node) {
      ++self->tuning_unsaved;
      if (log)
        std::fprintf(stderr, "ignis: tuned %s (%s): %s %.1f us (rules %.1f us)\n", node.node.c_str(),
                     node.op_type.c_str(), node.chosen.c_str(), node.chosen_us, node.rules_us);
      if (user) user(node);
    };
  }

  // Plan the default signature now: errors surface at creation and the first run is fast.
  bool all_static = false;
  if (!options.plan_at_open) return impl;
  if (auto sig = default_signature(impl->model->graph, options, &all_static)) {
    auto plan = impl->plan_for(*sig);
    if (plan) info.flops = (*plan)->dynamic() ? -1 : (*plan)->flops();
    else if (all_static) return plan.error();
  }
  return impl;
}

}  // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

Result<Session> Session::open(const std::string& path, const SessionOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return not_found(str_cat("model file '", path, "' does not exist"));
  if (options.threads < 0) return invalid_argument(str_cat("threads must be >= 0, got ", options.threads));
  const std::string dir = std::filesystem::absolute(path, ec).parent_path().string();
  auto graph = onnx_io::import_model_file(path, dir.empty() ? "." : dir);
  if (!graph) return Status(graph.error().code(), str_cat("'", path, "': ", graph.error().message()));
  auto impl = make_impl(std::move(*graph), options);
  if (!impl) return Status(impl.error().code(), str_cat("'", path, "': ", impl.error().message()));
  return Session(std::move(*impl));
}

Result<Session> Session::open_bytes(std::span<const std::byte> bytes, const SessionOptions& options,
                                    const std::string& base_dir) {
  if (options.threads < 0) return invalid_argument(str_cat("threads must be >= 0, got ", options.threads));
  IGNIS_ASSIGN_OR_RETURN(ir::Graph graph, onnx_io::import_model(bytes, base_dir));
  IGNIS_ASSIGN_OR_RETURN(auto impl, make_impl(std::move(graph), options));
  return Session(std::move(impl));
}

const std::vector<ValueInfo>& Session::inputs() const { return impl_->model->graph.inputs; }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->model->graph.outputs; }
const ModelInfo& Session::model_info() const { return impl_->info; }
size_t Session::memory_limit_bytes() const { return impl_->memory_limit; }

Result<std::vector<Tensor>> Session::run(const NamedTensors& inputs, const std::vector<std::string>& output_names) const {
  return runtime::run_session(*impl_, inputs, output_names, nullptr);
}

Result<std::vector<Tensor>> Session::run_profiled(const NamedTensors& inputs, std::vector<OpTiming>* timings,
                                                  const std::vector<std::string>& output_names) const {
  std::vector<runtime::StepTiming> steps;
  auto result = runtime::run_session(*impl_, inputs, output_names, &steps);
  if (timings) {
    for (const auto& s : steps) {
      const ir::Node& n = *impl_->model->nodes[s.node].node;
      timings->push_back({n.name, n.op_type, s.kernel_id, s.micros, s.flops});
    }
  }
  return result;
}

size_t Session::cached_plans() const {
  std::shared_lock<std::shared_mutex> lock(impl_->plans_mu);
  return impl_->plans.size();
}

Result<size_t> Session::arena_bytes(const NamedTensors& inputs) const {
  std::vector<ir::ValueType> types;
  for (const auto& in : impl_->model->graph.inputs) {
    auto it = std::find_if(inputs.begin(), inputs.end(), [&](const auto& p) { return p.first == in.name; });
    if (it == inputs.end()) return invalid_argument(str_cat("missing input '", in.name, "'"));
    IGNIS_RETURN_IF_ERROR(runtime::check_declared_type(in, it->second));
    types.push_back({it->second.dtype(), it->second.shape()});
  }
  IGNIS_ASSIGN_OR_RETURN(auto plan, impl_->plan_for(types));
  return plan->arena_bytes();
}

namespace runtime {

Status check_declared_type(const ValueInfo& decl, const Tensor& tensor) {
  if (decl.dtype != DType::Undefined && tensor.dtype() != decl.dtype)
    return invalid_argument(str_cat("input '", decl.name, "' must be ", dtype_name(decl.dtype), ", got ",
                                    dtype_name(tensor.dtype())));
  if (decl.has_shape) {
    bool ok = static_cast<int>(decl.dims.size()) == tensor.rank();
    for (int d = 0; ok && d < tensor.rank(); ++d) ok = decl.dims[d] < 0 || decl.dims[d] == tensor.dim(d);
    if (!ok)
      return invalid_argument(str_cat("input '", decl.name, "' must have shape ", decl.shape_string(), ", got ",
                                      tensor.shape().str()));
  }
  return Status::ok();
}

Result<std::vector<Tensor>> run_session(Session::Impl& session, const NamedTensors& inputs,
                                        const std::vector<std::string>& output_names,
                                        std::vector<StepTiming>* timings) {
  const Model& model = *session.model;
  const ir::Graph& g = model.graph;
  // Inputs in graph order; on the stack for the usual handful of inputs.
  constexpr size_t kInline = 16;
  std::array<const Tensor*, kInline> inline_ordered{};
  std::vector<const Tensor*> heap_ordered;
  if (g.inputs.size() > kInline) heap_ordered.assign(g.inputs.size(), nullptr);
  const std::span<const Tensor*> ordered = g.inputs.size() > kInline
                                               ? std::span<const Tensor*>(heap_ordered)
                                               : std::span<const Tensor*>(inline_ordered.data(), g.inputs.size());
  for (const auto& [name, tensor] : inputs) {
    size_t i = 0;
    while (i < g.inputs.size() && g.inputs[i].name != name) ++i;
    if (i == g.inputs.size()) {
      std::vector<std::string> names;
      for (const auto& in : g.inputs) names.push_back("'" + in.name + "'");
      return invalid_argument(str_cat("unknown input '", name, "'; the model's inputs are ", str_join(names)));
    }
    if (ordered[i]) return invalid_argument(str_cat("input '", name, "' is given twice"));
    if (!tensor.defined() || (tensor.data() == nullptr && tensor.numel() > 0))
      return invalid_argument(str_cat("input '", name, "' has no data"));
    IGNIS_RETURN_IF_ERROR(check_declared_type(g.inputs[i], tensor));
    ordered[i] = &tensor;
  }
  if (std::find(ordered.begin(), ordered.end(), nullptr) != ordered.end()) {
    std::vector<std::string> missing;
    for (size_t i = 0; i < ordered.size(); ++i)
      if (!ordered[i]) missing.push_back("'" + g.inputs[i].name + "'");
    return invalid_argument(str_cat("missing inputs: ", str_join(missing)));
  }

  std::vector<int> named_ids;
  for (const auto& name : output_names) {
    size_t i = 0;
    while (i < g.outputs.size() && g.outputs[i].name != name) ++i;
    if (i == g.outputs.size()) return invalid_argument(str_cat("unknown output '", name, "'"));
    named_ids.push_back(model.graph_outputs[i]);
  }
  const std::span<const int> output_ids = output_names.empty() ? std::span<const int>(model.graph_outputs)
                                                                : std::span<const int>(named_ids);

  IGNIS_ASSIGN_OR_RETURN(std::shared_ptr<const Plan> plan, session.plan_for(ordered.size(), [&](size_t i) {
    return std::pair{ordered[i]->dtype(), &ordered[i]->shape()};
  }));
  return plan->run(ordered, output_ids, session.pool.get(), timings);
}

}  // namespace runtime
}  // namespace ignis
