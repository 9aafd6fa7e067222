// SPDX-License-Identifier: Apache-2.0
#include "runtime/evaluate.h"

#include <cstdlib>
#include <cstring>

#include "core/cpu_features.h"
#include "core/strings.h"
#include "ir/op_schema.h"
#include "kernels/registry.h"

namespace ignis::runtime {

Result<std::vector<Tensor>> evaluate_node(const ir::Node& node, int64_t opset, const std::vector<const Tensor*>& inputs) {
  const auto* schema = ir::OpSchemaRegistry::global().find(node.domain, node.op_type, opset);
  if (!schema) return unsupported(str_cat(node.label(), ": no schema at opset ", opset));
  std::vector<ir::ValueType> types(inputs.size());
  std::vector<const ir::ValueType*> type_ptrs(inputs.size(), nullptr);
  std::vector<DType> dtypes(inputs.size(), DType::Undefined);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    types[i] = {inputs[i]->dtype(), inputs[i]->shape()};
    type_ptrs[i] = &types[i];
    dtypes[i] = inputs[i]->dtype();
  }
  ir::InferContext ictx(node.name, node.op_type, opset, node.attrs, type_ptrs, inputs,
                        static_cast<int>(node.outputs.size()));
  IGNIS_RETURN_IF_ERROR(schema->infer(ictx));
  const auto* def = kernels::KernelRegistry::global().find(node.domain, node.op_type, opset, dtypes);
  if (!def) return unsupported(str_cat(node.label(), ": no kernel for these input types"));
  std::vector<Shape> shapes(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) shapes[i] = types[i].shape;
  kernels::KernelInit init{node.attrs, opset, dtypes, inputs, shapes};
  IGNIS_ASSIGN_OR_RETURN(auto kernel, kernels::make_kernel(*def, init));
  std::vector<Tensor> outputs;
  outputs.reserve(ictx.outputs().size());
  for (const auto& vt : ictx.outputs()) outputs.push_back(Tensor::zeros(vt.dtype, vt.shape));
  std::vector<Tensor*> out_ptrs;
  for (size_t o = 0; o < outputs.size(); ++o)
    out_ptrs.push_back(o < node.outputs.size() && !node.outputs[o].empty() ? &outputs[o] : nullptr);
  kernels::Scratch scratch;
  kernels::KernelContext kctx(node.attrs, opset, inputs, out_ptrs, nullptr, &scratch);
  IGNIS_RETURN_IF_ERROR(kernel->run(kctx));
  return outputs;
}

passes::PassContext make_pass_context(Precision precision) {
  passes::PassContext ctx;
  ctx.precision = precision;
  ctx.evaluate = evaluate_node;
  // Only where an optimized BlockedConv kernel runs (AVX2 or AVX-512; IGNIS_KERNELS=ref turns
  // it off): the reference one is far slower than the NCHW kernels.
  // IGNIS_LAYOUT=nchw keeps every tensor in NCHW, for A/B measurements.
  const DType f32[] = {DType::F32, DType::F32};
  const auto* blocked = kernels::KernelRegistry::global().find("ai.ignis", "BlockedConv", 1, f32);
  const char* layout = std::getenv("IGNIS_LAYOUT");
  ctx.blocked_layout = blocked != nullptr && blocked->role == kernels::KernelRole::Optimized &&
                       !(layout != nullptr && std::strcmp(layout, "nchw") == 0);
  ctx.blocked_direct = ctx.blocked_layout && blocked->isa == kernels::Isa::Avx2;
  ctx.blocked_winograd = ctx.blocked_layout && blocked->isa == kernels::Isa::Avx512;
  ctx.blocked_direct_strided = ctx.blocked_winograd;
  ctx.blocked_direct_grouped = ctx.blocked_winograd;
  // As the GEMM backend is chosen (kernels/x86/gemm.cc, gemm_backend_for).
  ctx.blocked_direct_bf16 = ctx.blocked_winograd && precision == Precision::Bf16 &&
                            kernels::isa_enabled(kernels::Isa::Avx512) && cpu_features().avx512bf16;
  // The int8 GEMM's VNNI tile (gemm_int8.cc's choice of backend) under an optimized
  // QLinearConvNhwc kernel; IGNIS_LAYOUT=nchw turns it off too.
  const DType u8[] = {DType::U8};
  const auto* nhwc = kernels::KernelRegistry::global().find("ai.ignis", "QLinearConvNhwc", 1, u8);
  ctx.int8_channels_last = nhwc != nullptr && nhwc->role == kernels::KernelRole::Optimized &&
                           kernels::isa_enabled(kernels::Isa::Avx512) && cpu_features().avx512vnni &&
                           cpu_features().avx512bw && !(layout != nullptr && std::strcmp(layout, "nchw") == 0);
  return ctx;
}

}  // namespace ignis::runtime
