// SPDX-License-Identifier: Apache-2.0
// Session: a loaded, planned model. Creation does the expensive work (parse, verify, infer,
// choose kernels, plan memory); run() is thread-safe and may be called from many threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ignis/status.h"
#include "ignis/tensor.h"

namespace ignis {

enum class OptLevel { None, Basic, Extended, All };
enum class LogLevel { Error, Warning, Info, Debug };

// How plans choose between the kernels and algorithms that can run the same node (an AVX2 or
// an AVX-512 GEMM; im2col, Winograd F(4x4) or F(2x2), or transposed for a convolution).
// Off: the kernels' built-in rules. Cached: what the tuning cache recorded for the node's
// signature (op, shapes, attributes) on this CPU and thread count, else the rules. Measure:
// as Cached, and signatures the cache lacks are timed on the spot, candidate by candidate,
// and written to the cache file. Remeasure: every node with a choice is timed, replacing what
// the cache held. A session chooses once per node, when it first plans it (the shapes of its
// first plan, see plan_dims, key the choice; later shapes reuse the kernel).
enum class Tuning { Off, Cached, Measure, Remeasure };

// What a Tuning::Measure session timed for one node.
struct TunedNode {
  std::string node;
  std::string op_type;
  std::string signature;  // the tuning cache's key
  std::string chosen;     // kernel id, ":tactic" when one was named
  double chosen_us = 0;
  double rules_us = 0;  // the built-in rules' choice, timed in the same rounds
  std::vector<std::pair<std::string, double>> candidates;  // kernel label -> microseconds per run
};

struct SessionOptions {
  int threads = 0;  // intra-op threads; 0 = one per physical core
  // Bind each worker thread to its own physical core (the calling thread stays unbound).
  // Sessions with the same `threads` and `pin_threads` share one set of workers.
  bool pin_threads = false;
  OptLevel optimization = OptLevel::All;
  LogLevel log_level = LogLevel::Warning;
  // Most bytes one run may hold in activations and outputs (inputs and weights not counted);
  // 0 = the machine's physical memory. A run whose shapes need more returns ResourceExhausted
  // before allocating, and the session stays usable (open() fails the same way for a model
  // whose every input shape is fixed). Each run counts on its own: concurrent runs each hold
  // their own activations.
  size_t memory_limit_bytes = 0;
  // Execution plans kept, one per input signature (dtypes and shapes) seen; beyond this the
  // least recently used is dropped with its activation buffers and planned again if its
  // signature comes back. 0 = keep every plan.
  size_t max_cached_plans = 64;
  // Bf16: MatMul, Gemm and their fused forms with constant weights round both operands to
  // bfloat16 and sum in float32 (about 3 significant digits per product), where the CPU has
  // AVX512_BF16; everything else stays float32. F16: the constant weights of MatMul, Gemm and
  // FusedMatMul are stored as IEEE half (half the memory and bytes streamed) and all arithmetic
  // stays float32, where the CPU has F16C. F32 (default): float32 throughout.
  Precision precision = Precision::F32;
  // The input shapes the session plans when it is created, so that kernels (and tuning) choose
  // algorithms and weight layouts for the shapes it will mostly run; other shapes still run
  // with those choices. A symbolic input dim takes its value from plan_dims by name, else the
  // first symbolic dim of each input takes plan_batch (when > 0), else 1.
  std::map<std::string, int64_t> plan_dims{};
  int64_t plan_batch = 0;
  // False: make no plan at creation; the first run (or arena_bytes) plans its own shapes, which
  // then choose the kernels, as plan_dims would. ModelInfo::flops stays -1.
  bool plan_at_open = true;
  Tuning tuning = Tuning::Cached;
  // The tuning cache file; empty = $IGNIS_TUNING_CACHE, else $XDG_CACHE_HOME/ignis/tuning-cache.tsv,
  // else ~/.cache/ignis/tuning-cache.tsv. Entries of other CPUs, and entries naming kernels or
  // tactics this build does not offer for the node, are ignored.
  std::string tuning_cache{};
  // Tuning::Measure: called for each node measured (from the planning thread).
  std::function<void(const TunedNode&)> on_tuned{};
};

// One graph input or output as the model declares it. A dim < 0 is symbolic; its name (if the
// model gives one, e.g. "batch") is in dim_names at the same position.
struct ValueInfo {
  std::string name;
  DType dtype = DType::Undefined;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_names;
  bool has_shape = false;  // false when the model declares no shape at all
  // For Sequence, Optional and Map values, the full ONNX type, e.g. "seq(tensor(float))",
  // "optional(seq(tensor(int64)))", "map(string,tensor(float))"; empty for tensors.
  std::string type_text{};

  std::string shape_string() const;  // "[batch, 3, 224, 224]"
};

// Facts about the loaded model, for `ignis inspect` and tooling.
struct ModelInfo {
  int64_t ir_version = 0;
  std::string producer;
  std::vector<std::pair<std::string, int64_t>> opsets;  // (domain, version); "" = ai.onnx
  std::map<std::string, int> op_histogram;               // op type -> node count
  int64_t node_count = 0;
  int64_t parameter_count = 0;  // elements in initializers
  int64_t parameter_bytes = 0;
  // Multiply-adds counted as 2 FLOPs, for one run of the plan made at creation (symbolic dims
  // as SessionOptions::plan_dims, else 1); -1 if unknown or not planned at creation.
  int64_t flops = -1;
  // Integer inputs used (directly or through Cast/Reshape/Unsqueeze/...) as Gather indices into
  // initializer tables: name -> the smallest indexed extent, so indices in [0, limit) are valid.
  std::map<std::string, int64_t> index_limits;
};

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Time spent in one executed node during a profiled run.
struct OpTiming {
  std::string node;
  std::string op_type;
  std::string kernel;  // kernel id, e.g. "ref/conv"
  double micros = 0;
  int64_t flops = 0;  // estimated; 0 when unknown
};

class Session {
 public:
  static Result<Session> open(const std::string& path, const SessionOptions& options = {});
  static Result<Session> open_bytes(std::span<const std::byte> model, const SessionOptions& options = {},
                                    const std::string& base_dir = "");

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  const ModelInfo& model_info() const;

  // Runs the model. Inputs are matched by name; every graph input without a default must be
  // given. `output_names` empty means all outputs, in model order. Thread-safe.
  Result<std::vector<Tensor>> run(const NamedTensors& inputs,
                                  const std::vector<std::string>& output_names = {}) const;

  // As run(), also appending one OpTiming per executed node to `timings` (in run order).
  Result<std::vector<Tensor>> run_profiled(const NamedTensors& inputs, std::vector<OpTiming>* timings,
                                           const std::vector<std::string>& output_names = {}) const;

  // Size in bytes of the activation arena for the plan of these input shapes (planning them
  // if needed); 0 for plans whose shapes depend on data. Reads only dtypes and shapes, so
  // tensors without data (views of null) are fine. InvalidArgument naming the input when one
  // does not fit its declaration, ResourceExhausted, as for run().
  Result<size_t> arena_bytes(const NamedTensors& inputs) const;

  // The memory limit in force: SessionOptions::memory_limit_bytes, or the physical memory when
  // that is 0 (SIZE_MAX if the physical memory is unknown).
  size_t memory_limit_bytes() const;
  // Execution plans held now (at most SessionOptions::max_cached_plans when that is set).
  size_t cached_plans() const;

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ignis
