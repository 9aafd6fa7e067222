// SPDX-License-Identifier: Apache-2.0
// The kernel registry: every kernel ignis has, keyed by (domain, op, opset range, dtype,
// backend/ISA) with a priority. Built once from an explicit list of family functions.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernel.h"

namespace ignis::kernels {

class KernelRegistry {
 public:
  static const KernelRegistry& global();
  void add(const KernelDef& def);

  // Best kernel for the node, or nullptr. `input_dtypes` has one entry per node input.
  const KernelDef* find(std::string_view domain, std::string_view op_type, int64_t opset,
                        std::span<const DType> input_dtypes) const;
  // True when some kernel exists for (domain, op) at this opset, whatever the dtype.
  bool has_op(std::string_view domain, std::string_view op_type, int64_t opset) const;
  // The reference kernel (KernelRole::Reference) of (domain, op) at `opset` for main input
  // type `type`, or nullptr: what optimized kernels are tested against and fall back to.
  const KernelDef* reference(std::string_view domain, std::string_view op_type, int64_t opset, DType type) const;
  // The kernel registered under `id` (e.g. "x86/conv_f32_8x32"), or nullptr.
  const KernelDef* find_by_id(std::string_view id) const;
  const std::vector<KernelDef>& all() const { return defs_; }

 private:
  std::vector<KernelDef> defs_;
};

// True when the CPU can run kernels of `isa`.
bool isa_available(Isa isa);
// True when the CPU can run kernels of `isa` and IGNIS_KERNELS does not exclude them
// (IGNIS_KERNELS=avx2 leaves AVX-512 kernels out, for A/B measurements).
bool isa_enabled(Isa isa);
// True when IGNIS_KERNELS=ref is set: only reference kernels are chosen (CI runs the
// conformance and parity suites once this way so the reference path keeps its coverage).
bool reference_kernels_only();
// Which kernels this process chooses from, for logs and `ignis bench`:
// "x86 AVX-512 + AVX2 (cpu: avx2 fma f16c avx512f ...)", "reference only (IGNIS_KERNELS=ref)"...
std::string kernel_selection_summary();
// True when `find` may choose this kernel on this machine in this process.
bool kernel_usable(const KernelDef& def);

// Instantiates the chosen kernel (wrapping plain functions).
Result<std::unique_ptr<Kernel>> make_kernel(const KernelDef& def, const KernelInit& init);

// One function per family file; registry.cc calls each from a single list.
namespace ref {
void register_elementwise(KernelRegistry& r);
void register_tensor(KernelRegistry& r);
void register_nn(KernelRegistry& r);
void register_reduce(KernelRegistry& r);
void register_quantize(KernelRegistry& r);  // QuantizeLinear, DequantizeLinear...
void register_recurrent(KernelRegistry& r);    // LSTM, GRU, RNN
void register_transformer(KernelRegistry& r);  // Attention, LinearAttention, CausalConvWithState...
void register_vision(KernelRegistry& r);       // GridSample, RoiAlign, NonMaxSuppression...
void register_signal(KernelRegistry& r);       // DFT, STFT, windows, MelWeightMatrix...
void register_text(KernelRegistry& r);         // TfIdfVectorizer
void register_ml(KernelRegistry& r);           // ai.onnx.ml: linear models, scalers
void register_sequence(KernelRegistry& r);     // sequences, optionals, Identity on them
void register_string(KernelRegistry& r);       // string ops, Equal on strings
void register_fused(KernelRegistry& r);  // ai.ignis fused ops
void register_blocked(KernelRegistry& r);  // ai.ignis blocked channel layout
}  // namespace ref
namespace x86 {
// Optimized x86 kernels (AVX2/FMA); registered only in builds with IGNIS_HAVE_X86_KERNELS.
void register_all(KernelRegistry& r);
}  // namespace x86

}  // namespace ignis::kernels
