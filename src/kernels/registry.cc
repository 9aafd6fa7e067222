// SPDX-License-Identifier: Apache-2.0
#include "kernels/registry.h"

#include "core/aligned_alloc.h"

namespace ignis::kernels {

void* Scratch::get(size_t bytes) {
  if (bytes > size_) {
    buf_ = {static_cast<std::byte*>(aligned_malloc(bytes)), [](std::byte* p) { aligned_free(p); }};
    size_ = bytes;
  }
  return buf_.get();
}

void KernelRegistry::add(const KernelDef& def) { defs_.push_back(def); }

const KernelDef* KernelRegistry::find(std::string_view domain, std::string_view op_type, int64_t opset,
                                      std::span<const DType> input_dtypes) const {
  const KernelDef* best = nullptr;
  for (const auto& d : defs_) {
    if (d.domain != domain || d.op_type != op_type || opset < d.since_opset || opset > d.until_opset) continue;
    if (d.type_input >= static_cast<int>(input_dtypes.size())) continue;
    if (!d.types.contains(input_dtypes[d.type_input])) continue;
    if (!best || d.priority > best->priority) best = &d;
  }
  return best;
}

bool KernelRegistry::has_op(std::string_view domain, std::string_view op_type, int64_t opset) const {
  for (const auto& d : defs_)
    if (d.domain == domain && d.op_type == op_type && opset >= d.since_opset && opset <= d.until_opset) return true;
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
    return r;
  }();
  return registry;
}

}  // namespace ignis::kernels
