// SPDX-License-Identifier: Apache-2.0
// Measured kernel choice. Where several kernels (an AVX2 and an AVX-512 GEMM) or several
// algorithms of one kernel (KernelDef::tactics: im2col GEMM, Winograd F(4x4)/F(2x2),
// transposed GEMM) can run a node, the planner may time each on the node's real shapes and
// keep the fastest, or take what a tuning cache recorded for the same signature on this CPU.
// Without either, the kernels' built-in rules choose, as they always did.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/thread_pool.h"
#include "ignis/session.h"
#include "kernels/registry.h"
#include "runtime/model.h"
#include "runtime/tuning_cache.h"

namespace ignis::runtime {

struct TuningOptions {
  Tuning mode = Tuning::Cached;  // not Off: that means no TuningOptions at all
  std::shared_ptr<TuningCache> cache;
  int threads = 1;             // the key's thread count: the session's
  ThreadPool* pool = nullptr;  // measurements run on it
  std::function<void(const TunedNode&)> on_measured;  // optional
};

struct TacticCandidate {
  const kernels::KernelDef* def = nullptr;
  std::string_view tactic;  // empty: the kernel's rules
};

// "x86/conv_f32_8x32:winograd4", or the kernel id alone for its rules.
std::string kernel_label(const kernels::KernelDef& def, std::string_view tactic);

// What may run this node: first `rules` (the registry's choice) with its rules, then every
// usable optimized kernel for the node and dtypes with each of its tactics. A single entry
// means there is nothing to choose.
std::vector<TacticCandidate> tactic_candidates(const NodeInfo& info, std::span<const DType> dtypes,
                                               const kernels::KernelInit& init, const kernels::KernelDef* rules);

// The key of a node for the tuning cache: op, opset, input dtypes and shapes (constants
// marked, their values left out), attributes and precision. Empty when the node cannot be
// keyed (an attribute holds a tensor or a graph).
std::string node_signature(const NodeInfo& info, std::span<const DType> dtypes, std::span<const Shape> shapes,
                           std::span<const Tensor* const> constants, Precision precision);

// Runs every candidate on inputs of the plan's types (constants as given, other inputs
// filled with deterministic values in [-1, 1]) in interleaved rounds and returns the index of
// the fastest, keeping the rules' choice (index 0) unless another is at least 3% faster.
// `event` receives every time. Fails when no candidate runs, or when a non-constant input is
// not floating point (its values could be meaningful: indices, shapes).
Result<size_t> measure_tactics(const NodeInfo& info, std::span<const TacticCandidate> candidates,
                               const kernels::KernelInit& init, std::span<const ir::ValueType> outputs,
                               ThreadPool* pool, TunedNode* event);

}  // namespace ignis::runtime
