// SPDX-License-Identifier: Apache-2.0
#include "testing/op_runner.h"

#include <cstring>
#include <limits>

#include "core/strings.h"
#include "ir/op_schema.h"
#include "kernels/registry.h"

namespace ignis::testing {

Result<std::vector<Tensor>> run_op_with(const OpCall& call, const KernelChooser& choose, const std::string& what,
                                        int threads, bool only_weights_constant) {
  const auto* schema = ir::OpSchemaRegistry::global().find(call.domain, call.op_type, call.opset);
  if (!schema) return unsupported(str_cat("no schema for ", call.op_type, " at opset ", call.opset));
  std::vector<ir::ValueType> types(call.inputs.size());
  std::vector<const ir::ValueType*> type_ptrs(call.inputs.size(), nullptr);
  std::vector<const Tensor*> values(call.inputs.size(), nullptr);
  std::vector<DType> dtypes(call.inputs.size(), DType::Undefined);
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    if (!call.inputs[i].defined()) continue;
    types[i] = {call.inputs[i].dtype(), call.inputs[i].shape()};
    type_ptrs[i] = &types[i];
    values[i] = &call.inputs[i];
    dtypes[i] = call.inputs[i].dtype();
  }
  ir::InferContext ictx("test", call.op_type, call.opset, call.attrs, type_ptrs, values, call.num_outputs);
  IGNIS_RETURN_IF_ERROR(schema->infer(ictx));

  const kernels::KernelDef* def = choose(dtypes);
  if (!def) return unsupported(what);
  std::vector<const Tensor*> constants = values;
  if (only_weights_constant)
    for (size_t i = 0; i < constants.size(); ++i)
      if (i != 1) constants[i] = nullptr;
  kernels::KernelInit init{call.attrs, call.opset, dtypes, constants};
  IGNIS_ASSIGN_OR_RETURN(auto kernel, kernels::make_kernel(*def, init));

  std::vector<Tensor> outputs;
  for (const auto& vt : ictx.outputs()) {
    Tensor t = Tensor::empty(vt.dtype, vt.shape);
    // Poison float outputs so a kernel that skips an element is caught.
    if (vt.dtype == DType::F32)
      for (int64_t k = 0; k < t.numel(); ++k) t.data_as<float>()[k] = std::numeric_limits<float>::quiet_NaN();
    outputs.push_back(t);
  }
  std::vector<Tensor*> out_ptrs;
  for (auto& t : outputs) out_ptrs.push_back(&t);
  ThreadPool pool(threads);
  kernels::Scratch scratch;
  kernels::KernelContext kctx(call.attrs, call.opset, values, out_ptrs, threads > 1 ? &pool : nullptr, &scratch);
  IGNIS_RETURN_IF_ERROR(kernel->run(kctx));
  return outputs;
}

Result<std::vector<Tensor>> run_op(const OpCall& call) {
  return run_op_with(
      call,
      [&](const std::vector<DType>& dtypes) {
        return kernels::KernelRegistry::global().find(call.domain, call.op_type, call.opset, dtypes);
      },
      str_cat("no kernel for ", call.op_type, " at opset ", call.opset));
}

Tensor make_tensor_f32(const Shape& shape, const std::vector<float>& values) {
  Tensor t = Tensor::empty(DType::F32, shape);
  if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
  return t;
}

Tensor make_tensor_i64(const Shape& shape, const std::vector<int64_t>& values) {
  Tensor t = Tensor::empty(DType::I64, shape);
  if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

Tensor make_tensor_str(const Shape& shape, const std::vector<std::string>& values) {
  Tensor t = Tensor::empty(DType::String, shape);
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i)
    t.data_as<std::string>()[i] = values[i];
  return t;
}

Attribute attr_int(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}
Attribute attr_float(float v) {
  Attribute a;
  a.kind = Attribute::Kind::Float;
  a.f = v;
  return a;
}
Attribute attr_ints(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}
Attribute attr_floats(std::vector<float> v) {
  Attribute a;
  a.kind = Attribute::Kind::Floats;
  a.floats = std::move(v);
  return a;
}
Attribute attr_string(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::String;
  a.s = std::move(v);
  return a;
}

Attribute attr_strings(std::vector<std::string> v) {
  Attribute a;
  a.kind = Attribute::Kind::Strings;
  a.strings = std::move(v);
  return a;
}
Attribute attr_tensor(Tensor t) {
  Attribute a;
  a.kind = Attribute::Kind::Tensor;
  a.t = std::move(t);
  return a;
}

}  // namespace ignis::testing
