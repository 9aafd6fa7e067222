// SPDX-License-Identifier: Apache-2.0
// The kernel contract. A kernel sees attributes, shapes and buffers, never the graph.
// Outputs arrive allocated with the shapes shape inference computed; the kernel fills them.
// Kernels return a Status only for data-dependent failures the planner cannot see (e.g. a
// Gather index out of range); everything shape- or attribute-related was validated by
// shape inference before the kernel runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/attribute.h"
#include "core/thread_pool.h"
#include "ignis/status.h"
#include "ignis/tensor.h"

namespace ignis::kernels {

// Per-run scratch memory; grows on first use and is reused by later runs of the same plan.
class Scratch {
 public:
  void* get(size_t bytes);

 private:
  std::unique_ptr<std::byte[], void (*)(std::byte*)> buf_{nullptr, nullptr};
  size_t size_ = 0;
};

class KernelContext {
 public:
  KernelContext(const AttrMap& attrs, int64_t opset, std::span<const Tensor* const> inputs,
                std::span<Tensor* const> outputs, ThreadPool* pool, Scratch* scratch)
      : attrs_(attrs), opset_(opset), inputs_(inputs), outputs_(outputs), pool_(pool), scratch_(scratch) {}

  const AttrMap& attrs() const { return attrs_; }
  int64_t opset() const { return opset_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool has_input(int i) const { return i < num_inputs() && inputs_[i] != nullptr; }
  const Tensor& input(int i) const { return *inputs_[i]; }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  bool has_output(int i) const { return i < num_outputs() && outputs_[i] != nullptr; }
  Tensor& output(int i) const { return *outputs_[i]; }
  ThreadPool* pool() const { return pool_; }
  // Scratch valid until the kernel returns; contents unspecified. 64-byte aligned.
  void* scratch(size_t bytes) const { return scratch_->get(bytes); }

 private:
  const AttrMap& attrs_;
  int64_t opset_;
  std::span<const Tensor* const> inputs_;
  std::span<Tensor* const> outputs_;
  ThreadPool* pool_;
  Scratch* scratch_;
};

// What a kernel factory may look at when the plan instantiates it: constant inputs (for
// weight prepacking) are given, other entries of `constants` are null. `input_shapes`, when
// not empty, holds the input shapes of the plan the kernel is made for (empty Shape for
// omitted inputs). It is a hint only: one kernel serves every plan of a session (e.g. each
// batch size), so run() must accept any shape the op allows; a kernel may use the hint to
// choose which single weight layout to prepare.
struct KernelInit {
  const AttrMap& attrs;
  int64_t opset;
  std::span<const DType> input_dtypes;  // Undefined for omitted inputs
  std::span<const Tensor* const> constants;
  std::span<const Shape> input_shapes = {};
  // The session's precision: kernels that can run their products in bfloat16 may do so.
  Precision precision = Precision::F32;
  // One of the names KernelDef::tactics lists for this init, chosen by measurement or a tuning
  // cache; empty = the kernel's built-in rules. A named tactic fixes the algorithm (and the
  // weight layout it needs) for every run the plan's shapes describe; runs of other shapes may
  // still take another path where the named one cannot run them.
  std::string_view tactic = {};
};

// Kernels are defined in files built with and without ISA flags; the virtual members with a
// body are defined in kernel.cc (built without them), which is also where the vtable and
// type info go, so no ISA file emits a copy of them for the linker to choose.
class Kernel {
 public:
  virtual ~Kernel();
  // Must be safe to call concurrently: per-run state lives in ctx, not in the kernel.
  virtual Status run(KernelContext& ctx) const = 0;
  // False when run() never reads the data of input `input` because the kernel copied what it
  // needs (e.g. prepacked weights) from that constant when it was created. When every reader
  // of a constant says so, the session may drop the constant's data; ctx.input(input) then
  // still has its dtype and shape but a null data pointer.
  virtual bool uses_constant_data(int input) const;
};

using KernelFn = Status (*)(KernelContext& ctx);
using KernelFactory = Result<std::unique_ptr<Kernel>> (*)(const KernelInit& init);
// The algorithms a kernel can run for a node in the plan's shapes (init.input_shapes), by name
// (e.g. "gemm", "winograd4"); empty when it has a single one. The names are stable: they are
// written to tuning caches.
using KernelTactics = std::vector<std::string_view> (*)(const KernelInit& init);

enum class Backend { Cpu, Cuda };
enum class Isa { None, Avx2, Avx512 };
// What a kernel is for. Reference: the plain implementation every other kernel of the op is
// tested against (and the one IGNIS_KERNELS=ref runs). Optimized: a faster kernel for some ISA,
// compared with the reference by the consistency tests. Composed: an ISA-less kernel that runs
// the best kernels of other ops (a fused op as its base op plus an epilogue), preferred over
// the reference and tested against it like an optimized one.
enum class KernelRole { Unset, Reference, Composed, Optimized };

inline constexpr int kAnyOpVersion = 1 << 20;

struct KernelDef {
  std::string_view domain;  // "" = ai.onnx
  std::string_view op_type;
  // Op versions, as for OpSchema: the node's opset is resolved to the op's version first.
  // The op's schema decides which versions a model may use; a kernel states an upper bound
  // only when it implements a subset of the versions the schema admits (Upsample 7-9).
  int since_opset = 1;
  int until_opset = kAnyOpVersion;
  // The dtype of input `type_input` must be in `types` (the op's main type constraint).
  DTypeSet types = DTypeSet::numeric();
  int type_input = 0;
  Backend backend = Backend::Cpu;
  Isa isa = Isa::None;
  int priority = 0;     // higher wins among kernels that match
  // Unset: KernelRegistry::add makes it Optimized for an ISA kernel, else Reference.
  KernelRole role = KernelRole::Unset;
  std::string_view id;  // "<backend>/<op>_<dtype>[_<tile>]", e.g. "ref/conv"
  // Exactly one of these is set: a stateless function or a factory for prepacking kernels.
  KernelFn fn = nullptr;
  KernelFactory factory = nullptr;
  // Optional, with a factory: the tactics a plan may measure and pass in KernelInit::tactic.
  KernelTactics tactics = nullptr;

  // True when this kernel implements (domain, op) as a node at `opset` selects it (the opset
  // resolved to the op's version).
  bool implements(std::string_view node_domain, std::string_view node_op, int64_t opset) const;
};

}  // namespace ignis::kernels
