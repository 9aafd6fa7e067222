// SPDX-License-Identifier: Apache-2.0
// An execution plan for one input-shape signature: shapes inferred, constant subgraphs
// (including shape arithmetic fed by Shape ops) evaluated once, one kernel chosen and
// instantiated per remaining node, and every intermediate given an arena offset.
// When some output shape depends on input *data* the plan is dynamic: shapes are inferred
// and buffers allocated per run instead.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/thread_pool.h"
#include "ir/op_schema.h"
#include "kernels/registry.h"
#include "runtime/batch_slicing.h"
#include "runtime/model.h"
#include "runtime/tactics.h"

namespace ignis::runtime {

// Per-step timing of one run, for profiling.
struct StepTiming {
  int node = 0;  // index into Model::nodes
  std::string kernel_id;
  double micros = 0;
  int64_t flops = 0;
};

// Kernels shared by the plans of one model. A kernel created with no constants other than
// model initializers does not depend on the input signature (kernels see other inputs only at
// run time), so every plan, and every run of a dynamic plan, reuses one instance and its
// prepacked weights. Thread-safe.
class KernelCache {
 public:
  struct Entry {
    const kernels::KernelDef* def = nullptr;
    std::string label;  // def->id, with ":tactic" when a tactic was named
    std::shared_ptr<const kernels::Kernel> kernel;
  };
  // The kernel made for `node` with these input dtypes, by whichever definition and tactic
  // the first plan chose (later plans must reuse it: its weights may have been released).
  std::optional<Entry> find(int node, std::span<const DType> dtypes) const;
  void insert(int node, std::span<const DType> dtypes, Entry entry);

 private:
  mutable std::mutex mu_;
  std::unordered_multimap<int, std::pair<std::vector<DType>, Entry>> entries_;  // by node index
};

struct PlanOptions {
  KernelCache* kernels = nullptr;  // optional; shared by the plans of the model
  // Optional. Called with the value id of each initializer whose every reader is a cached
  // kernel that no longer reads its data (Kernel::uses_constant_data), as soon as the last
  // such kernel exists; the caller may then drop the data (release_initializer_data).
  std::function<void(int value)> on_initializer_unused;
  // Most bytes one run may hold in activations, outputs and constants folded for the
  // signature; 0 = no limit. create() checks static plans against it before allocating
  // anything; dynamic plans check each allocation of a run. Exceeding it is ResourceExhausted.
  size_t memory_limit_bytes = 0;
  // Optional: measured kernel choice (runtime/tactics.h). Null = the kernels' rules.
  const TuningOptions* tuning = nullptr;
  // Runs of per-sample steps over large activations execute a slice of the batch at a time
  // (runtime/batch_slicing.h). Off by default; sessions take it from the environment.
  SlicingOptions slicing;
};

class Plan {
 public:
  // `inputs` gives dtype and shape per graph input (data is not read).
  static Result<std::unique_ptr<Plan>> create(std::shared_ptr<const Model> model,
                                              const std::vector<ir::ValueType>& inputs,
                                              const PlanOptions& options = {});
  ~Plan();

  bool dynamic() const { return dynamic_; }
  size_t arena_bytes() const { return arena_bytes_; }
  // Bytes of the outputs one run allocates (static plans).
  size_t output_bytes() const { return output_bytes_; }
  int64_t flops() const { return flops_; }
  size_t step_count() const { return steps_.size(); }
  // The runs of steps executed slice by slice, and the bytes of the buffer their slice-local
  // values share (part of each run's activation memory besides arena_bytes()).
  const std::vector<SliceRun>& slice_runs() const { return slice_runs_; }
  size_t slice_arena_bytes() const { return slice_arena_bytes_; }

  // Runs with `inputs` in graph-input order (already validated against the signature).
  // Returns the values of `output_ids`. Thread-safe.
  Result<std::vector<Tensor>> run(std::span<const Tensor* const> inputs, std::span<const int> output_ids,
                                  ThreadPool* pool, std::vector<StepTiming>* timings) const;

  struct RunState;

 private:
  // Slice: written and read only inside one sliced run; lives in the slice arena, sized for
  // one slice of samples.
  enum class Kind { Unset, Input, Constant, Arena, Output, Slice };
  struct Value {
    ir::ValueType type;
    Kind kind = Kind::Unset;
    size_t offset = 0;
    size_t sample_bytes = 0;  // bytes of one sample (dimension 0), for values a sliced run reads or writes
    const Tensor* constant = nullptr;
  };
  struct Step {
    int node = 0;
    const kernels::KernelDef* def = nullptr;
    std::string label;  // for profiles: the kernel id, ":tactic" when one was named
    std::shared_ptr<const kernels::Kernel> kernel;
    int64_t flops = 0;
    std::vector<bool> sliced;  // per input, in a sliced run: read as a view of the slice's samples
    // A Reshape-like step whose output the memory plan placed on its input's bytes (the input's
    // last read), a Slice or Split whose outputs are contiguous parts of its input's bytes
    // (views at 64-byte offsets), or a Concat whose inputs were made in place in its output:
    // nothing to run.
    bool aliases_input = false;
  };

  Plan() = default;
  Status run_sliced(const SliceRun& r, RunState& s, ThreadPool* pool, std::vector<StepTiming>* timings) const;
  Result<std::vector<Tensor>> run_dynamic(std::span<const Tensor* const> inputs, std::span<const int> output_ids,
                                          ThreadPool* pool, std::vector<StepTiming>* timings) const;
  Result<std::unique_ptr<RunState>> acquire_state() const;
  void release_state(std::unique_ptr<RunState> s) const;

  std::shared_ptr<const Model> model_;
  KernelCache* kernel_cache_ = nullptr;
  bool dynamic_ = false;
  std::vector<Value> values_;
  std::vector<int> output_values_;  // value ids of kind Output
  std::vector<Tensor> folded_;      // constants computed at plan time, by value id
  std::vector<Step> steps_;
  size_t arena_bytes_ = 0;
  size_t output_bytes_ = 0;
  std::vector<SliceRun> slice_runs_;
  size_t slice_arena_bytes_ = 0;
  size_t memory_limit_ = 0;  // 0 = none
  int64_t flops_ = 0;

  // Run states not in use. One sits in spare_ so that a single caller's runs take no lock.
  mutable std::atomic<RunState*> spare_{nullptr};
  mutable std::mutex states_mu_;
  mutable std::vector<std::unique_ptr<RunState>> free_states_;

  // Dynamic plans infer every node on every run. A node whose inference read no input value
  // gets the same answer for the same input types, so its answers are kept, per node, for its
  // first few input types (an ensemble's inference, which checks every tree, then runs once).
  // Entries are never removed, so a pointer find_inferred returns stays valid.
  struct InferMemo {
    std::vector<ir::ValueType> inputs;
    std::vector<ir::ValueType> outputs;
  };
  const std::vector<ir::ValueType>* find_inferred(int node, const std::vector<ir::ValueType>& inputs) const;
  void keep_inferred(int node, std::vector<ir::ValueType> inputs, const std::vector<ir::ValueType>& outputs) const;
  mutable std::shared_mutex infer_memo_mu_;
  mutable std::vector<std::vector<std::unique_ptr<const InferMemo>>> infer_memo_;  // by node
};

// FLOPs of one node (multiply-add = 2), from its input and output types.
int64_t estimate_flops(const ir::Node& node, const std::vector<const ir::ValueType*>& inputs,
                       const std::vector<ir::ValueType>& outputs);

}  // namespace ignis::runtime
