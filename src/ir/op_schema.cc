// SPDX-License-Identifier: Apache-2.0
#include "ir/op_schema.h"

#include "core/broadcast.h"
#include "core/dtype_dispatch.h"
#include "core/onnx_op_versions.h"

namespace ignis::ir {

InferContext::InferContext(std::string_view node_name, std::string_view op_type, int64_t opset,
                           const AttrMap& attrs, std::span<const ValueType* const> inputs,
                           std::span<const Tensor* const> values, int num_outputs)
    : node_name_(node_name), op_type_(op_type), opset_(opset), attrs_(attrs), inputs_(inputs),
      values_(values), outputs_(num_outputs) {}

Result<std::vector<int64_t>> InferContext::input_ints(int i) const {
  const Tensor* v = input_value(i);
  if (!has_input(i)) return error(str_cat("input ", i, " is required"));
  if (v == nullptr)
    return Status(StatusCode::ValueRequired, str_cat("node '", node_name_, "' (", op_type_,
                                                      "): input ", i, " must be known to infer shapes"));
  if (!dtype_is_integer(v->dtype()) && v->dtype() != DType::Bool)
    return error(str_cat("input ", i, " must be an integer tensor, got ", dtype_name(v->dtype())));
  std::vector<int64_t> out(v->numel());
  for (int64_t k = 0; k < v->numel(); ++k) out[k] = load_as_int64(v->dtype(), v->data(), k);
  return out;
}

Result<std::vector<double>> InferContext::input_doubles(int i) const {
  const Tensor* v = input_value(i);
  if (!has_input(i)) return error(str_cat("input ", i, " is required"));
  if (v == nullptr)
    return Status(StatusCode::ValueRequired, str_cat("node '", node_name_, "' (", op_type_,
                                                      "): input ", i, " must be known to infer shapes"));
  if (v->dtype() == DType::String || v->dtype() == DType::Undefined)
    return error(str_cat("input ", i, " must be numeric"));
  std::vector<double> out(v->numel());
  for (int64_t k = 0; k < v->numel(); ++k) out[k] = load_as_double(v->dtype(), v->data(), k);
  return out;
}

void InferContext::set_output(int i, DType dtype, const Shape& shape) {
  if (i < num_outputs()) outputs_[i] = ValueType{dtype, shape};
}

Status InferContext::error(const std::string& message) const {
  return invalid_argument(str_cat("node '", node_name_, "' (", op_type_, ", opset ", opset_, "): ", message));
}

Status InferContext::unsupported(const std::string& message) const {
  return ::ignis::unsupported(str_cat("node '", node_name_, "' (", op_type_, ", opset ", opset_, "): ", message));
}

Status InferContext::expect_inputs(int lo, int hi) const {
  int present = 0;
  for (int i = 0; i < num_inputs(); ++i) present += has_input(i) ? 1 : 0;
  if (num_inputs() < lo || present < lo || num_inputs() > hi)
    return error(str_cat("expected ", lo == hi ? str_cat(lo) : str_cat(lo, " to ", hi), " inputs, got ",
                         num_inputs()));
  for (int i = 0; i < lo; ++i)
    if (!has_input(i)) return error(str_cat("input ", i, " is required"));
  return Status::ok();
}

Status InferContext::expect_dtype(int i, DTypeSet allowed) const {
  if (!allowed.contains(input_dtype(i)))
    return unsupported(str_cat("input ", i, " has unsupported dtype ", dtype_name(input_dtype(i))));
  return Status::ok();
}

Status InferContext::expect_rank(int i, int rank) const {
  if (input_shape(i).rank() != rank)
    return error(str_cat("input ", i, " must be ", rank, "-D, got ", input_shape(i).str()));
  return Status::ok();
}

Status infer_same_as_input(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::ok();
}

Status infer_broadcast(InferContext& ctx, DType out) {
  Shape shape;
  bool first = true;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    if (first) {
      shape = ctx.input_shape(i);
      first = false;
      continue;
    }
    auto b = broadcast_shapes(shape, ctx.input_shape(i));
    if (!b) return ctx.fail("input shapes ", shape.str(), " and ", ctx.input_shape(i).str(), " do not broadcast");
    shape = *b;
  }
  if (first) return ctx.error("needs at least one input");
  ctx.set_output(0, out, shape);
  return Status::ok();
}

void OpSchemaRegistry::add(const OpSchema& schema) { schemas_.push_back(schema); }

const OpSchema* OpSchemaRegistry::find(std::string_view domain, std::string_view op_type, int64_t opset) const {
  opset = onnx_op_version(domain, op_type, opset);
  for (const auto& s : schemas_)
    if (s.domain == domain && s.op_type == op_type && opset >= s.since_opset && opset <= s.until_opset) return &s;
  return nullptr;
}

bool OpSchemaRegistry::knows(std::string_view domain, std::string_view op_type) const {
  for (const auto& s : schemas_)
    if (s.domain == domain && s.op_type == op_type) return true;
  return false;
}

const OpSchemaRegistry& OpSchemaRegistry::global() {
  static const OpSchemaRegistry registry = [] {
    OpSchemaRegistry r;
    register_elementwise_schemas(r);
    register_tensor_schemas(r);
    register_nn_schemas(r);
    register_reduce_schemas(r);
    register_quantize_schemas(r);
    register_recurrent_schemas(r);
    register_transformer_schemas(r);
    register_vision_schemas(r);
    register_signal_schemas(r);
    register_text_schemas(r);
    register_control_flow_schemas(r);
    register_sequence_schemas(r);
    register_string_schemas(r);
    register_fused_schemas(r);
    register_blocked_schemas(r);
    register_ml_schemas(r);
    return r;
  }();
  return registry;
}

}  // namespace ignis::ir
