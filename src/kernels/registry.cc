// SPDX-License-Identifier: Apache-2.0
#include "kernels/registry.h"

#include <cstdlib>
#include <cstring>

#include "core/aligned_alloc.h"
#include "core/cpu_features.h"
#include "core/onnx_op_versions.h"
#include "runtime/control_flow.h"
#include "runtime/flex_attention.h"

namespace ignis::kernels {

void* Scratch::get(size_t bytes) {
  if (bytes > size_) {
    buf_ = {static_cast<std::byte*>(aligned_malloc(bytes)), [](std::byte* p) { aligned_free(p); }};
    size_ = bytes;
  }
  return buf_.get();
}

void KernelRegistry::add(const KernelDef& def) {
  defs_.push_back(def);
  KernelDef& d = defs_.back();
  if (d.role == KernelRole::Unset) d.role = d.isa == Isa::None ? KernelRole::Reference : KernelRole::Optimized;
}

const KernelDef* KernelRegistry::reference(std::string_view domain, std::string_view op_type, int64_t opset,
                                           DType type) const {
  const KernelDef* best = nullptr;
  for (const KernelDef& d : defs_)
    if (d.role == KernelRole::Reference && d.backend == Backend::Cpu && d.implements(domain, op_type, opset) &&
        d.types.contains(type) && (!best || d.priority < best->priority))
      best = &d;
  return best;
}

bool KernelDef::implements(std::string_view node_domain, std::string_view node_op, int64_t opset) const {
  if (domain != node_domain || op_type != node_op) return false;
  const int64_t version = onnx_op_version(node_domain, node_op, opset);
  return version >= since_opset && version <= until_opset;
}

namespace {

// The widest ISA the IGNIS_KERNELS environment variable allows: "ref" (reference kernels
// only), "avx2" (no AVX-512 kernels, for A/B measurements), unset or anything else: all.
Isa isa_cap() {
  static const Isa cap = [] {
    const char* v = std::getenv("IGNIS_KERNELS");
    if (v != nullptr && std::strcmp(v, "ref") == 0) return Isa::None;
    if (v != nullptr && std::strcmp(v, "avx2") == 0) return Isa::Avx2;
    return Isa::Avx512;
  }();
  return cap;
}

}  // namespace

bool reference_kernels_only() { return isa_cap() == Isa::None; }

bool isa_available(Isa isa) {
  switch (isa) {
    case Isa::None: return true;
    case Isa::Avx2: return cpu_features().has_avx2_fma() && cpu_features().f16c;
    case Isa::Avx512: return cpu_features().avx512f;
  }
  return false;
}

bool isa_enabled(Isa isa) {
  return static_cast<int>(isa) <= static_cast<int>(isa_cap()) && isa_available(isa);
}

std::string kernel_selection_summary() {
  std::string s;
#ifdef IGNIS_HAVE_X86_KERNELS
  if (reference_kernels_only()) s = "reference only (IGNIS_KERNELS=ref)";
  else if (isa_enabled(Isa::Avx512)) s = "x86 AVX-512 + AVX2";
  else if (isa_enabled(Isa::Avx2)) s = isa_available(Isa::Avx512) ? "x86 AVX2 (IGNIS_KERNELS=avx2)" : "x86 AVX2";
  else s = "reference only (the CPU lacks AVX2/FMA/F16C)";
#else
  s = "reference only (portable build)";
#endif
  const std::string features = cpu_features().summary();
  const std::string uarch = cpu_features().microarchitecture();
  return s + " (cpu: " + (uarch.empty() ? "" : uarch + "; ") +
         (features.empty() ? "no vector extensions detected" : features) + ")";
}

bool kernel_usable(const KernelDef& d) {
  if (d.role == KernelRole::Reference && d.backend == Backend::Cpu) return true;
  if (d.role == KernelRole::Composed && d.backend == Backend::Cpu) return !reference_kernels_only();
  return !reference_kernels_only() && d.backend == Backend::Cpu && isa_enabled(d.isa);
}

const KernelDef* KernelRegistry::find(std::string_view domain, std::string_view op_type, int64_t opset,
                                      std::span<const DType> input_dtypes) const {
  const KernelDef* best = nullptr;
  for (const auto& d : defs_) {
    if (!d.implements(domain, op_type, opset)) continue;
    // An input the node leaves out (or lists past its end) has type Undefined.
    const bool listed = d.type_input < static_cast<int>(input_dtypes.size());
    if (!d.types.contains(listed ? input_dtypes[d.type_input] : DType::Undefined)) continue;
    if (!kernel_usable(d)) continue;
    if (!best || d.priority > best->priority) best = &d;
  }
  return best;
}

const KernelDef* KernelRegistry::find_by_id(std::string_view id) const {
  for (const auto& d : defs_)
    if (d.id == id) return &d;
  return nullptr;
}

bool KernelRegistry::has_op(std::string_view domain, std::string_view op_type, int64_t opset) const {
  for (const auto& d : defs_)
    if (d.implements(domain, op_type, opset)) return true;
  return false;
}

namespace {
class FunctionKernel final : public Kernel {
 public:
  explicit FunctionKernel(KernelFn fn) : fn_(fn) {}
  Status run(KernelContext& ctx) const override { return fn_(ctx); }

 private:
  KernelFn fn_;
};
}  // namespace

Result<std::unique_ptr<Kernel>> make_kernel(const KernelDef& def, const KernelInit& init) {
  if (def.factory) return def.factory(init);
  return std::unique_ptr<Kernel>(std::make_unique<FunctionKernel>(def.fn));
}

const KernelRegistry& KernelRegistry::global() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    ref::register_elementwise(r);
    ref::register_tensor(r);
    ref::register_nn(r);
    ref::register_reduce(r);
    ref::register_quantize(r);
    ref::register_recurrent(r);
    ref::register_transformer(r);
    ref::register_vision(r);
    ref::register_signal(r);
    ref::register_text(r);
    // If, Loop and Scan run their bodies with the runtime (src/runtime/control_flow.cc).
    runtime::register_control_flow_kernels(r);
    // FlexAttention runs its score/probability modifier subgraphs the same way.
    runtime::register_flex_attention_kernels(r);
    ref::register_fused(r);
    ref::register_blocked(r);
    ref::register_ml(r);
    ref::register_sequence(r);
    ref::register_string(r);
#ifdef IGNIS_HAVE_X86_KERNELS
    x86::register_all(r);
#endif
    return r;
  }();
  return registry;
}

}  // namespace ignis::kernels
