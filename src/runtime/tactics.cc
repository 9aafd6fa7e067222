// SPDX-License-Identifier: Apache-2.0
#include "runtime/tactics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/strings.h"

namespace ignis::runtime {

namespace {

using Clock = std::chrono::steady_clock;

bool is_float(DType d) { return d == DType::F32 || d == DType::F16 || d == DType::BF16 || d == DType::F64; }

std::string attribute_text(const Attribute& a, bool* keyable) {
  switch (a.kind) {
    case Attribute::Kind::Float: return str_cat(a.f);
    case Attribute::Kind::Int: return str_cat(a.i);
    case Attribute::Kind::String: return a.s;
    case Attribute::Kind::Floats: {
      std::vector<std::string> v;
      for (float f : a.floats) v.push_back(str_cat(f));
      return str_join(v, ",");
    }
    case Attribute::Kind::Ints: {
      std::vector<std::string> v;
      for (int64_t i : a.ints) v.push_back(str_cat(i));
      return str_join(v, ",");
    }
    case Attribute::Kind::Strings: return str_join(a.strings, ",");
    default: *keyable = false; return "";
  }
}

// Deterministic values in [-1, 1]: every candidate sees the same data, and no run of the
// measurement meets denormals or NaN.
void fill_uniform(Tensor& t) {
  float* p = t.data_as<float>();
  uint32_t s = 0x9e3779b9u;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<float>(s >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
}

}  // namespace

std::string kernel_label(const kernels::KernelDef& def, std::string_view tactic) {
  return tactic.empty() ? std::string(def.id) : str_cat(def.id, ":", tactic);
}

std::vector<TacticCandidate> tactic_candidates(const NodeInfo& info, std::span<const DType> dtypes,
                                               const kernels::KernelInit& init, const kernels::KernelDef* rules) {
  std::vector<TacticCandidate> out;
  if (!rules) return out;
  out.push_back({rules, {}});
  // Reference kernels are never candidates: they exist for correctness, not speed.
  if (rules->role != kernels::KernelRole::Optimized) return out;
  std::vector<const kernels::KernelDef*> defs;
  for (const kernels::KernelDef& d : kernels::KernelRegistry::global().all()) {
    if (d.role != kernels::KernelRole::Optimized || !kernels::kernel_usable(d)) continue;
    if (!d.implements(info.node->domain, info.node->op_type, info.opset)) continue;
    const bool listed = d.type_input < static_cast<int>(dtypes.size());
    if (!d.types.contains(listed ? dtypes[d.type_input] : DType::Undefined)) continue;
    defs.push_back(&d);
  }
  std::stable_sort(defs.begin(), defs.end(), [](auto* a, auto* b) { return a->priority > b->priority; });
  for (const kernels::KernelDef* d : defs) {
    const std::vector<std::string_view> tactics = d->tactics ? d->tactics(init) : std::vector<std::string_view>{};
    if (tactics.empty()) {
      if (d != rules) out.push_back({d, {}});
      continue;
    }
    for (std::string_view t : tactics) out.push_back({d, t});
  }
  return out;
}

std::string node_signature(const NodeInfo& info, std::span<const DType> dtypes, std::span<const Shape> shapes,
                           std::span<const Tensor* const> constants, Precision precision) {
  const ir::Node& n = *info.node;
  std::string key = str_cat(n.domain.empty() ? "" : n.domain + ".", n.op_type, "@", info.opset);
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (dtypes[i] == DType::Undefined) {
      key += " -";
      continue;
    }
    key += str_cat(" ", dtype_name(dtypes[i]), i < shapes.size() ? shapes[i].str() : std::string("?"),
                   i < constants.size() && constants[i] ? "c" : "");
  }
  std::vector<std::pair<std::string, Attribute>> attrs = n.attrs.items();
  std::sort(attrs.begin(), attrs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  bool keyable = true;
  std::vector<std::string> parts;
  for (const auto& [name, a] : attrs) parts.push_back(str_cat(name, "=", attribute_text(a, &keyable)));
  if (!keyable) return "";
  key += " {" + str_join(parts, " ") + "}";
  if (precision == Precision::Bf16) key += " bf16";
  for (char& c : key)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return key;
}

Result<size_t> measure_tactics(const NodeInfo& info, std::span<const TacticCandidate> candidates,
                               const kernels::KernelInit& init, std::span<const ir::ValueType> outputs,
                               ThreadPool* pool, TunedNode* event) {
  // Inputs: constants as the plan has them, others made up.
  std::vector<Tensor> made(init.input_dtypes.size());
  std::vector<const Tensor*> ins(init.input_dtypes.size(), nullptr);
  for (size_t i = 0; i < ins.size(); ++i) {
    if (init.input_dtypes[i] == DType::Undefined) continue;
    if (i < init.constants.size() && init.constants[i]) {
      ins[i] = init.constants[i];
      continue;
    }
    if (!is_float(init.input_dtypes[i]) || i >= init.input_shapes.size())
      return unsupported(str_cat("input ", i, " is ", dtype_name(init.input_dtypes[i]), ", not measured"));
    made[i] = Tensor::zeros(init.input_dtypes[i], init.input_shapes[i]);
    if (init.input_dtypes[i] == DType::F32) fill_uniform(made[i]);
    ins[i] = &made[i];
  }
  std::vector<Tensor> outs;
  std::vector<Tensor*> out_ptrs;
  outs.reserve(outputs.size());
  for (const ir::ValueType& t : outputs)
    outs.push_back(t.dtype == DType::Undefined ? Tensor() : Tensor::empty(t.dtype, t.shape));
  for (Tensor& t : outs) out_ptrs.push_back(t.defined() ? &t : nullptr);

  struct Trial {
    size_t index;
    std::unique_ptr<kernels::Kernel> kernel;
    double best_us = std::numeric_limits<double>::infinity();
    int reps = 1;
  };
  std::vector<Trial> trials;
  kernels::Scratch scratch;
  auto run_once = [&](const kernels::Kernel& k) {
    kernels::KernelContext ctx(info.node->attrs, info.opset, ins, out_ptrs, pool, &scratch);
    return k.run(ctx);
  };
  for (size_t c = 0; c < candidates.size(); ++c) {
    kernels::KernelInit ci = init;
    ci.tactic = candidates[c].tactic;
    auto k = kernels::make_kernel(*candidates[c].def, ci);
    if (!k) continue;
    // The first run warms caches and sizes the scratch; it also proves the candidate runs.
    const auto t0 = Clock::now();
    if (!run_once(**k)) continue;
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    // Repeat short runs so that one timing spans about a millisecond.
    const int reps = std::clamp(static_cast<int>(1000.0 / std::max(us, 1.0)), 1, 100);
    trials.push_back({c, std::move(*k), std::numeric_limits<double>::infinity(), reps});
  }
  if (trials.empty()) return internal_error("no candidate kernel ran");
  // Interleaved rounds, so that a burst of load elsewhere on the machine hits every candidate;
  // the minimum is the least disturbed estimate.
  constexpr int kRounds = 5;
  for (int round = 0; round < kRounds; ++round) {
    for (Trial& t : trials) {
      const auto t0 = Clock::now();
      for (int r = 0; r < t.reps; ++r) IGNIS_RETURN_IF_ERROR(run_once(*t.kernel));
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / t.reps;
      t.best_us = std::min(t.best_us, us);
    }
  }
  size_t best = 0;
  for (size_t i = 1; i < trials.size(); ++i)
    if (trials[i].best_us < trials[best].best_us) best = i;
  const bool rules_ran = trials[0].index == 0;
  if (rules_ran && best != 0 && trials[best].best_us > 0.97 * trials[0].best_us) best = 0;
  if (event) {
    event->node = info.node->name;
    event->op_type = info.node->op_type;
    event->candidates.clear();
    for (const Trial& t : trials)
      event->candidates.emplace_back(
          t.index == 0 ? str_cat(kernel_label(*candidates[0].def, {}), " (rules)")
                       : kernel_label(*candidates[t.index].def, candidates[t.index].tactic),
          t.best_us);
    event->chosen = kernel_label(*candidates[trials[best].index].def, candidates[trials[best].index].tactic);
    event->chosen_us = trials[best].best_us;
    event->rules_us = rules_ran ? trials[0].best_us : 0;
  }
  return trials[best].index;
}

}  // namespace ignis::runtime
