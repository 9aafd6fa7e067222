// SPDX-License-Identifier: Apache-2.0
// Op schemas: for each (domain, op) the opset range ignis understands and a shape/type
// inference function. Inference runs with concrete input shapes (symbolic dims resolved when
// inputs arrive) and, where an op's output shape depends on an input's *values* (Reshape's
// shape, Slice's starts...), with that value when it is known.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/attribute.h"
#include "core/strings.h"
#include "ignis/shape.h"
#include "ignis/status.h"
#include "ignis/tensor.h"

namespace ignis::ir {

struct ValueType {
  DType dtype = DType::Undefined;
  Shape shape;
};

class InferContext {
 public:
  InferContext(std::string_view node_name, std::string_view op_type, int64_t opset,
               const AttrMap& attrs, std::span<const ValueType* const> inputs,
               std::span<const Tensor* const> values, int num_outputs);

  int64_t opset() const { return opset_; }
  const AttrMap& attrs() const { return attrs_; }
  std::string_view op_type() const { return op_type_; }

  // Inputs as the node lists them, trailing omitted ones included.
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // False for an omitted optional input ("" in the node) or past the end.
  bool has_input(int i) const { return i < num_inputs() && inputs_[i] != nullptr; }
  const ValueType& input(int i) const { return *inputs_[i]; }
  DType input_dtype(int i) const { return inputs_[i]->dtype; }
  const Shape& input_shape(int i) const { return inputs_[i]->shape; }
  // The input's value when known at this point (initializer, folded constant, or run time).
  const Tensor* input_value(int i) const {
    read_values_ = true;
    return has_input(i) ? values_[i] : nullptr;
  }
  // True once inference asked for an input's value: until then its result follows from the
  // input types and attributes alone.
  bool read_values() const { return read_values_; }
  // Reads an integer input (shape, axes, pads...) as int64s. Fails with ValueRequired when the
  // value is unknown, and InvalidArgument when its dtype is not an integer type.
  Result<std::vector<int64_t>> input_ints(int i) const;
  // Reads a float/int input (scales, etc.) as doubles, with the same failure rules.
  Result<std::vector<double>> input_doubles(int i) const;

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  void set_output(int i, DType dtype, const Shape& shape);
  const std::vector<ValueType>& outputs() const { return outputs_; }

  // Errors prefixed with the node label: "node 'x' (Reshape, opset 13): <message>".
  Status error(const std::string& message) const;
  Status unsupported(const std::string& message) const;
  template <class... Args>
  Status fail(const Args&... args) const {
    return error(str_cat(args...));
  }

  // Checks a count of present inputs in [lo, hi].
  Status expect_inputs(int lo, int hi) const;
  // Checks that input i has a dtype in `allowed`.
  Status expect_dtype(int i, DTypeSet allowed) const;
  // Checks that input i has the given rank.
  Status expect_rank(int i, int rank) const;

 private:
  std::string_view node_name_;
  std::string_view op_type_;
  int64_t opset_;
  const AttrMap& attrs_;
  std::span<const ValueType* const> inputs_;
  std::span<const Tensor* const> values_;
  std::vector<ValueType> outputs_;
  mutable bool read_values_ = false;
};

using InferFn = Status (*)(InferContext&);
// Checks what needs no inputs (attribute values, a regular expression's syntax); errors carry
// no node prefix, the caller adds it.
using CheckFn = Status (*)(const AttrMap& attrs, int64_t opset);

struct OpSchema {
  std::string_view domain;  // "" = ai.onnx
  std::string_view op_type;
  // The op versions `infer` implements: a node's opset is resolved to the op's version
  // (core/onnx_op_versions.h) before it is compared with this range.
  int since_opset = 1;
  int until_opset = 21;
  InferFn infer = nullptr;
  // Ops whose output shapes are known only by running them (If, Loop, Scan run a body): `infer`
  // checks what it can and answers ValueRequired; the plan is then dynamic and the kernel
  // gives each output its dtype and shape.
  bool kernel_sizes_outputs = false;
  // Run once per node when a model is built, so a bad attribute fails the load even where the
  // plan is dynamic (strings, containers) and `infer` first runs with the first inputs.
  CheckFn check = nullptr;
};

class OpSchemaRegistry {
 public:
  static const OpSchemaRegistry& global();
  void add(const OpSchema& schema);
  // Schema for (domain, op) valid at `opset`, or nullptr.
  const OpSchema* find(std::string_view domain, std::string_view op_type, int64_t opset) const;
  // True when any opset of (domain, op) is known (to tell "unknown op" from "opset too new").
  bool knows(std::string_view domain, std::string_view op_type) const;
  const std::vector<OpSchema>& all() const { return schemas_; }

 private:
  std::vector<OpSchema> schemas_;
};

// One function per op family adds its schemas; op_schema.cc calls every one of them.
void register_elementwise_schemas(OpSchemaRegistry& r);
void register_tensor_schemas(OpSchemaRegistry& r);
void register_nn_schemas(OpSchemaRegistry& r);
void register_reduce_schemas(OpSchemaRegistry& r);
void register_quantize_schemas(OpSchemaRegistry& r);  // QuantizeLinear, DequantizeLinear...
void register_recurrent_schemas(OpSchemaRegistry& r);    // LSTM, GRU, RNN
void register_transformer_schemas(OpSchemaRegistry& r);  // Attention, LinearAttention, FlexAttention...
void register_vision_schemas(OpSchemaRegistry& r);       // GridSample, RoiAlign, NonMaxSuppression...
void register_signal_schemas(OpSchemaRegistry& r);       // DFT, STFT, windows, MelWeightMatrix...
void register_text_schemas(OpSchemaRegistry& r);         // TfIdfVectorizer
void register_ml_schemas(OpSchemaRegistry& r);           // ai.onnx.ml: linear models, scalers
void register_control_flow_schemas(OpSchemaRegistry& r);  // If, Loop, Scan
void register_sequence_schemas(OpSchemaRegistry& r);      // sequences and optionals
void register_string_schemas(OpSchemaRegistry& r);  // StringNormalizer, RegexFullMatch, StringSplit, StringConcat
void register_fused_schemas(OpSchemaRegistry& r);  // ai.ignis fused ops
void register_blocked_schemas(OpSchemaRegistry& r);  // ai.ignis blocked channel layout

// Shared inference for the common shapes of op.
Status infer_same_as_input(InferContext& ctx);         // output 0 = input 0's type and shape
Status infer_broadcast(InferContext& ctx, DType out);  // numpy broadcast of all present inputs

}  // namespace ignis::ir
