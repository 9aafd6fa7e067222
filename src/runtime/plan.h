// SPDX-License-Identifier: Apache-2.0
// An execution plan for one input-shape signature: shapes inferred, constant subgraphs
// (including shape arithmetic fed by Shape ops) evaluated once, one kernel chosen and
// instantiated per remaining node, and every intermediate given an arena offset.
// When some output shape depends on input *data* the plan is dynamic: shapes are inferred
// and buffers allocated per run instead.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "ir/op_schema.h"
#include "kernels/registry.h"
#include "runtime/model.h"

namespace ignis::runtime {

// Per-step timing of one run, for profiling.
struct StepTiming {
  int node = 0;  // index into Model::nodes
  std::string kernel_id;
  double micros = 0;
  int64_t flops = 0;
};

class Plan {
 public:
  // `inputs` gives dtype and shape per graph input (data is not read).
  static Result<std::unique_ptr<Plan>> create(std::shared_ptr<const Model> model,
                                              const std::vector<ir::ValueType>& inputs);
  ~Plan();

  bool dynamic() const { return dynamic_; }
  size_t arena_bytes() const { return arena_bytes_; }
  int64_t flops() const { return flops_; }
  size_t step_count() const { return steps_.size(); }

  // Runs with `inputs` in graph-input order (already validated against the signature).
  // Returns the values of `output_ids`. Thread-safe.
  Result<std::vector<Tensor>> run(const std::vector<const Tensor*>& inputs, const std::vector<int>& output_ids,
                                  ThreadPool* pool, std::vector<StepTiming>* timings) const;

  struct RunState;

 private:
  enum class Kind { Unset, Input, Constant, Arena, Output };
  struct Value {
    ir::ValueType type;
    Kind kind = Kind::Unset;
    size_t offset = 0;
    const Tensor* constant = nullptr;
  };
  struct Step {
    int node = 0;
    const kernels::KernelDef* def = nullptr;
    std::unique_ptr<kernels::Kernel> kernel;
    int64_t flops = 0;
  };

  Plan() = default;
  Result<std::vector<Tensor>> run_dynamic(const std::vector<const Tensor*>& inputs,
                                          const std::vector<int>& output_ids, ThreadPool* pool,
                                          std::vector<StepTiming>* timings) const;
  std::unique_ptr<RunState> acquire_state() const;
  void release_state(std::unique_ptr<RunState> s) const;

  std::shared_ptr<const Model> model_;
  bool dynamic_ = false;
  std::vector<Value> values_;
  std::vector<Tensor> folded_;  // constants computed at plan time, by value id
  std::vector<Step> steps_;
  size_t arena_bytes_ = 0;
  int64_t flops_ = 0;

  mutable std::mutex states_mu_;
  mutable std::vector<std::unique_ptr<RunState>> free_states_;
};

// FLOPs of one node (multiply-add = 2), from its input and output types.
int64_t estimate_flops(const ir::Node& node, const std::vector<const ir::ValueType*>& inputs,
                       const std::vector<ir::ValueType>& outputs);

}  // namespace ignis::runtime
