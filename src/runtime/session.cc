// SPDX-License-Identifier: Apache-2.0
// The public Session: owns the indexed model, the thread pool and a cache of plans keyed by
// input-shape signature. run() validates inputs against the model's declarations first.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

#include "core/strings.h"
#include "ignis/session.h"
#include "onnx/import.h"
#include "passes/pass.h"
#include "runtime/evaluate.h"
#include "runtime/model.h"
#include "runtime/plan.h"
#include "runtime/session_internal.h"

namespace ignis {

std::string ValueInfo::shape_string() const {
  if (!has_shape) return "?";
  std::vector<std::string> parts;
  for (size_t i = 0; i < dims.size(); ++i)
    parts.push_back(dims[i] >= 0 ? std::to_string(dims[i]) : (dim_names[i].empty() ? "?" : dim_names[i]));
  return str_list(parts);
}

struct Session::Impl {
  std::shared_ptr<const runtime::Model> model;
  SessionOptions options;
  std::unique_ptr<ThreadPool> pool;
  ModelInfo info;
  std::mutex plans_mu;
  std::map<std::vector<int64_t>, std::shared_ptr<const runtime::Plan>> plans;

  Result<std::shared_ptr<const runtime::Plan>> plan_for(const std::vector<ir::ValueType>& types) {
    std::vector<int64_t> key;
    for (const auto& t : types) {
      key.push_back(static_cast<int64_t>(t.dtype));
      key.push_back(t.shape.rank());
      key.insert(key.end(), t.shape.begin(), t.shape.end());
    }
    std::lock_guard<std::mutex> lock(plans_mu);  // planning is rare; one at a time is fine
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
    IGNIS_ASSIGN_OR_RETURN(auto plan, runtime::Plan::create(model, types));
    std::shared_ptr<const runtime::Plan> shared(std::move(plan));
    plans.emplace(std::move(key), shared);
    return shared;
  }
};

namespace {

// Shapes for a plan with every symbolic dim set to 1; nullopt if some input has no shape.
std::optional<std::vector<ir::ValueType>> default_signature(const ir::Graph& g, bool* all_static) {
  std::vector<ir::ValueType> types;
  *all_static = true;
  for (const auto& in : g.inputs) {
    if (!in.has_shape || in.dtype == DType::Undefined) return std::nullopt;
    Shape s;
    for (int64_t d : in.dims) {
      if (d < 0) *all_static = false;
      s.push_back(d < 0 ? 1 : d);
    }
    types.push_back({in.dtype, s});
  }
  return types;
}

}  // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

Result<Session> Session::open(const std::string& path, const SessionOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return not_found(str_cat("model file '", path, "' does not exist"));
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(str_cat("cannot open model file '", path, "'"));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string dir = std::filesystem::absolute(path, ec).parent_path().string();
  auto s = open_bytes(std::as_bytes(std::span<const char>(bytes)), options, dir.empty() ? "." : dir);
  if (!s) return Status(s.error().code(), str_cat("'", path, "': ", s.error().message()));
  return s;
}

Result<Session> Session::open_bytes(std::span<const std::byte> bytes, const SessionOptions& options,
                                    const std::string& base_dir) {
  if (options.threads < 0) return invalid_argument(str_cat("threads must be >= 0, got ", options.threads));
  IGNIS_ASSIGN_OR_RETURN(ir::Graph graph, onnx_io::import_model(bytes, base_dir));
  auto impl = std::make_unique<Impl>();
  impl->options = options;

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

  if (options.optimization != OptLevel::None) {
    IGNIS_ASSIGN_OR_RETURN(auto fired, passes::optimize(graph, runtime::pass_level(options.optimization),
                                                        runtime::make_pass_context()));
    (void)fired;
  }
  IGNIS_ASSIGN_OR_RETURN(impl->model, runtime::build_model(std::move(graph)));
  const int threads = options.threads == 0 ? ThreadPool::default_threads() : options.threads;
  impl->pool = std::make_unique<ThreadPool>(threads);

  // Plan the default signature now: errors surface at creation and the first run is fast.
  bool all_static = false;
  if (auto sig = default_signature(impl->model->graph, &all_static)) {
    auto plan = impl->plan_for(*sig);
    if (plan) info.flops = (*plan)->dynamic() ? -1 : (*plan)->flops();
    else if (all_static) return plan.error();
  }
  return Session(std::move(impl));
}

const std::vector<ValueInfo>& Session::inputs() const { return impl_->model->graph.inputs; }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->model->graph.outputs; }
const ModelInfo& Session::model_info() const { return impl_->info; }

Result<std::vector<Tensor>> Session::run(const NamedTensors& inputs, const std::vector<std::string>& output_names) const {
  return runtime::run_session(*impl_->model, inputs, output_names, nullptr,
                              [this](const std::vector<ir::ValueType>& t) { return impl_->plan_for(t); },
                              impl_->pool.get());
}

Result<std::vector<Tensor>> Session::run_profiled(const NamedTensors& inputs, std::vector<OpTiming>* timings,
                                                  const std::vector<std::string>& output_names) const {
  std::vector<runtime::StepTiming> steps;
  auto result = runtime::run_session(*impl_->model, inputs, output_names, &steps,
                                     [this](const std::vector<ir::ValueType>& t) { return impl_->plan_for(t); },
                                     impl_->pool.get());
  if (timings) {
    for (const auto& s : steps) {
      const ir::Node& n = *impl_->model->nodes[s.node].node;
      timings->push_back({n.name, n.op_type, s.kernel_id, s.micros, s.flops});
    }
  }
  return result;
}

Result<size_t> Session::arena_bytes(const NamedTensors& inputs) const {
  std::vector<ir::ValueType> types;
  for (const auto& in : impl_->model->graph.inputs) {
    auto it = std::find_if(inputs.begin(), inputs.end(), [&](const auto& p) { return p.first == in.name; });
    if (it == inputs.end()) return invalid_argument(str_cat("missing input '", in.name, "'"));
    types.push_back({it->second.dtype(), it->second.shape()});
  }
  IGNIS_ASSIGN_OR_RETURN(auto plan, impl_->plan_for(types));
  return plan->arena_bytes();
}

namespace runtime {

Result<std::vector<Tensor>> run_session(const Model& model, const NamedTensors& inputs,
                                        const std::vector<std::string>& output_names,
                                        std::vector<StepTiming>* timings, const PlanLookup& plan_for,
                                        ThreadPool* pool) {
  const ir::Graph& g = model.graph;
  std::vector<const Tensor*> ordered(g.inputs.size(), nullptr);
  for (const auto& [name, tensor] : inputs) {
    size_t i = 0;
    while (i < g.inputs.size() && g.inputs[i].name != name) ++i;
    if (i == g.inputs.size()) {
      std::vector<std::string> names;
      for (const auto& in : g.inputs) names.push_back("'" + in.name + "'");
      return invalid_argument(str_cat("unknown input '", name, "'; the model's inputs are ", str_join(names)));
    }
    if (ordered[i]) return invalid_argument(str_cat("input '", name, "' is given twice"));
    const ValueInfo& decl = g.inputs[i];
    if (!tensor.defined() || (tensor.data() == nullptr && tensor.numel() > 0))
      return invalid_argument(str_cat("input '", name, "' has no data"));
    if (decl.dtype != DType::Undefined && tensor.dtype() != decl.dtype)
      return invalid_argument(str_cat("input '", name, "' must be ", dtype_name(decl.dtype), ", got ",
                                      dtype_name(tensor.dtype())));
    if (decl.has_shape) {
      bool ok = static_cast<int>(decl.dims.size()) == tensor.rank();
      for (int d = 0; ok && d < tensor.rank(); ++d) ok = decl.dims[d] < 0 || decl.dims[d] == tensor.dim(d);
      if (!ok)
        return invalid_argument(str_cat("input '", name, "' must have shape ", decl.shape_string(), ", got ",
                                        tensor.shape().str()));
    }
    ordered[i] = &tensor;
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < ordered.size(); ++i)
    if (!ordered[i]) missing.push_back("'" + g.inputs[i].name + "'");
  if (!missing.empty()) return invalid_argument(str_cat("missing inputs: ", str_join(missing)));

  std::vector<int> output_ids;
  if (output_names.empty()) {
    output_ids = model.graph_outputs;
  } else {
    for (const auto& name : output_names) {
      size_t i = 0;
      while (i < g.outputs.size() && g.outputs[i].name != name) ++i;
      if (i == g.outputs.size()) return invalid_argument(str_cat("unknown output '", name, "'"));
      output_ids.push_back(model.graph_outputs[i]);
    }
  }

  std::vector<ir::ValueType> types;
  for (const Tensor* t : ordered) types.push_back({t->dtype(), t->shape()});
  IGNIS_ASSIGN_OR_RETURN(auto plan, plan_for(types));
  return plan->run(ordered, output_ids, pool, timings);
}

}  // namespace runtime
}  // namespace ignis
