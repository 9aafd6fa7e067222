// SPDX-License-Identifier: Apache-2.0
// Case generators for the registry-wide kernel consistency test (consistency_test.cc): per
// op, the shapes, attributes and tolerances an optimized kernel is checked on against the
// reference kernel. One file per op family.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/attribute.h"
#include "ignis/dtype.h"
#include "ignis/shape.h"
#include "ignis/tensor.h"

namespace ignis::kernel_cases {

struct KernelCase {
  std::string domain;  // "" = ai.onnx
  std::string op_type;
  int64_t opset = 17;
  AttrMap attrs;
  std::vector<Shape> inputs;         // float32 inputs filled with uniform values in [-1, 1]
  // Per input, float32 when absent; uint8/int8 take any value; Undefined: the input is omitted
  // (an optional input before a given one).
  std::vector<DType> input_dtypes;
  // Per input, the range values are drawn from when set (lo > hi = unset): uniform reals for
  // float32, uniform integers for uint8 / int8 / int32 (int32 inputs need one).
  std::vector<std::pair<double, double>> input_ranges;
  // Per input, its exact values when not empty (float32 or int64 inputs, e.g. Resize scales
  // and sizes); such inputs are also visible to shape inference.
  std::vector<std::vector<double>> input_values;
  std::vector<int> weight_inputs;    // also run with these passed as plan-time constants
  int outputs = 1;                   // outputs the node has (every one compared)
  int64_t depth = 1;                 // products summed per output element
  double error_scale = 1.0;          // rounding of the method relative to a direct sum (tolerance factor)
  std::string label;                 // shapes and attributes, printed on failure
};

// Float tolerance for sums of `depth` products of values in [-1, 1], summed in different
// orders by the two kernels: |got - ref| <= 2e-6 * sqrt(depth) * max(1, max |ref|). Both
// results carry rounding error that grows like sqrt(depth) times the magnitude of the
// partial sums; the largest ratio seen over all cases is ~1e-7, so this leaves a 20x margin.
inline double tolerance(int64_t depth, double max_abs_ref) {
  return 2e-6 * std::sqrt(static_cast<double>(std::max<int64_t>(depth, 1))) * std::max(1.0, max_abs_ref);
}

using CaseGenerator = std::vector<KernelCase> (*)();

std::vector<KernelCase> matmul_cases();        // nn_gemm.cc
std::vector<KernelCase> gemm_cases();          // nn_gemm.cc
std::vector<KernelCase> fused_matmul_cases();  // nn_gemm.cc (ai.ignis)
std::vector<KernelCase> conv_cases();          // nn_conv.cc
std::vector<KernelCase> fused_conv_cases();    // nn_conv.cc (ai.ignis)
std::vector<KernelCase> conv_winograd_cases();        // conv_winograd.cc
std::vector<KernelCase> fused_conv_winograd_cases();  // conv_winograd.cc (ai.ignis)
std::vector<KernelCase> fused_matmul_activation_cases();  // fused_activation.cc (ai.ignis)
std::vector<KernelCase> fused_conv_activation_cases();    // fused_activation.cc (ai.ignis)
std::vector<KernelCase> gemm_tile_edge_cases();           // fused_activation.cc
std::vector<KernelCase> conv_depthwise_cases();           // conv_depthwise.cc
std::vector<KernelCase> fused_conv_depthwise_cases();     // conv_depthwise.cc (ai.ignis)
std::vector<KernelCase> max_pool_cases();             // nn_pool.cc
std::vector<KernelCase> average_pool_cases();         // nn_pool.cc
std::vector<KernelCase> global_max_pool_cases();      // nn_pool.cc
std::vector<KernelCase> global_average_pool_cases();  // nn_pool.cc
std::vector<KernelCase> add_cases();                  // elementwise.cc
std::vector<KernelCase> sub_cases();                  // elementwise.cc
std::vector<KernelCase> mul_cases();                  // elementwise.cc
std::vector<KernelCase> div_cases();                  // elementwise.cc
std::vector<KernelCase> relu_cases();                 // elementwise.cc
std::vector<KernelCase> sigmoid_cases();              // elementwise.cc
std::vector<KernelCase> tanh_cases();                 // elementwise.cc
std::vector<KernelCase> exp_cases();                  // elementwise.cc
std::vector<KernelCase> erf_cases();                  // elementwise.cc
std::vector<KernelCase> max_cases();                  // elementwise.cc
std::vector<KernelCase> min_cases();                  // elementwise.cc
std::vector<KernelCase> pow_cases();                  // elementwise.cc
std::vector<KernelCase> log_cases();                  // elementwise.cc
std::vector<KernelCase> sqrt_cases();                 // elementwise.cc
std::vector<KernelCase> abs_cases();                  // elementwise.cc
std::vector<KernelCase> neg_cases();                  // elementwise.cc
std::vector<KernelCase> reciprocal_cases();           // elementwise.cc
std::vector<KernelCase> clip_cases();                 // elementwise.cc
std::vector<KernelCase> leaky_relu_cases();           // elementwise.cc
std::vector<KernelCase> attention_cases();        // nn_transformer.cc (ai.ignis)
std::vector<KernelCase> skip_layer_norm_cases();  // nn_transformer.cc (ai.ignis)
std::vector<KernelCase> layer_norm_cases();       // nn_transformer.cc
std::vector<KernelCase> ignis_layer_norm_cases();  // nn_transformer.cc (ai.ignis, the same cases)
std::vector<KernelCase> softmax_cases();          // nn_transformer.cc
std::vector<KernelCase> lstm_cases();  // nn_recurrent.cc
std::vector<KernelCase> gru_cases();   // nn_recurrent.cc
std::vector<KernelCase> rnn_cases();   // nn_recurrent.cc
std::vector<KernelCase> blocked_conv_cases();      // blocked.cc (ai.ignis)
std::vector<KernelCase> block_channels_cases();    // blocked.cc (ai.ignis)
std::vector<KernelCase> unblock_channels_cases();  // blocked.cc (ai.ignis)
std::vector<KernelCase> blocked_global_average_pool_cases();  // blocked.cc (ai.ignis)
std::vector<KernelCase> blocked_max_pool_cases();             // blocked.cc (ai.ignis)
std::vector<KernelCase> matmul_integer_cases();            // quantize.cc
std::vector<KernelCase> matmul_integer_to_float_cases();   // quantize.cc (ai.ignis)
std::vector<KernelCase> dynamic_quantize_linear_cases();   // quantize.cc
std::vector<KernelCase> dynamic_quantize_rows_cases();     // quantize.cc (ai.ignis)
std::vector<KernelCase> qlinear_conv_cases();              // quantize.cc
std::vector<KernelCase> qlinear_conv_nhwc_cases();         // quantize.cc (ai.ignis)
std::vector<KernelCase> conv_integer_cases();              // quantize.cc
std::vector<KernelCase> cast_cases();                      // quantize.cc
std::vector<KernelCase> qlinear_matmul_cases();            // quantize.cc
std::vector<KernelCase> quantize_linear_cases();           // quantize.cc
std::vector<KernelCase> dequantize_linear_cases();         // quantize.cc
std::vector<KernelCase> matmul_nbits_cases();              // quantize_nbits.cc (com.microsoft)
std::vector<KernelCase> qlinear_add_cases();               // quantize_add.cc (com.microsoft)
std::vector<KernelCase> qlinear_mul_cases();               // quantize_add.cc (com.microsoft)
std::vector<KernelCase> qlinear_lookup_cases();            // quantize_add.cc (ai.ignis)
std::vector<KernelCase> qlinear_global_average_pool_cases();  // quantize_pool.cc (com.microsoft)
std::vector<KernelCase> gelu_cases();                      // elementwise.cc (ONNX Gelu-20)
std::vector<KernelCase> transpose_cases();                 // tensor.cc
std::vector<KernelCase> pad_cases();                       // tensor.cc
std::vector<KernelCase> batch_norm_cases();                // nn_norm.cc
std::vector<KernelCase> reduce_sum_cases();                // reduce.cc
std::vector<KernelCase> reduce_mean_cases();               // reduce.cc
std::vector<KernelCase> reduce_max_cases();                // reduce.cc
std::vector<KernelCase> reduce_min_cases();                // reduce.cc
std::vector<KernelCase> reduce_sum_square_cases();         // reduce.cc
std::vector<KernelCase> reduce_l2_cases();                 // reduce.cc
std::vector<KernelCase> ignis_gelu_cases();                // elementwise.cc (ai.ignis)
std::vector<KernelCase> resize_cases();                    // nn_resize.cc
std::vector<KernelCase> conv_transpose_cases();            // nn_conv_transpose.cc
std::vector<KernelCase> upsample_cases();                  // nn_resize.cc
std::vector<KernelCase> tree_ensemble_regressor_cases();   // ml_tree.cc (ai.onnx.ml)
std::vector<KernelCase> tree_ensemble_classifier_cases();  // ml_tree.cc (ai.onnx.ml)
std::vector<KernelCase> tree_ensemble_cases();             // ml_tree.cc (ai.onnx.ml 5)
std::vector<KernelCase> scaler_cases();                    // ml_scaler.cc (ai.onnx.ml)
std::vector<KernelCase> concat_cases();                    // concat.cc

// a followed by b (one op's cases from several files; later files append, so the seeds of
// earlier cases do not change).
inline std::vector<KernelCase> concat(std::vector<KernelCase> a, std::vector<KernelCase> b) {
  for (KernelCase& c : b) a.push_back(std::move(c));
  return a;
}

struct CaseGeneratorEntry {
  std::string_view domain;
  std::string_view op_type;
  CaseGenerator generate;
};

// Generator per (domain, op type).
inline const std::vector<CaseGeneratorEntry>& case_generators() {
  static const std::vector<CaseGeneratorEntry> list = {
      {"", "MatMul", matmul_cases},
      {"", "Gemm", [] { return concat(gemm_cases(), gemm_tile_edge_cases()); }},
      {"", "Conv", [] { return concat(concat(conv_cases(), conv_winograd_cases()), conv_depthwise_cases()); }},
      {"ai.ignis", "FusedMatMul", [] { return concat(fused_matmul_cases(), fused_matmul_activation_cases()); }},
      {"ai.ignis", "FusedConv",
       [] {
         return concat(concat(concat(fused_conv_cases(), fused_conv_winograd_cases()), fused_conv_activation_cases()),
                       fused_conv_depthwise_cases());
       }},
      {"", "MaxPool", max_pool_cases},
      {"", "AveragePool", average_pool_cases},
      {"", "GlobalMaxPool", global_max_pool_cases},
      {"", "GlobalAveragePool", global_average_pool_cases},
      {"", "Add", add_cases},
      {"", "Sub", sub_cases},
      {"", "Mul", mul_cases},
      {"", "Div", div_cases},
      {"", "Relu", relu_cases},
      {"", "Sigmoid", sigmoid_cases},
      {"", "Tanh", tanh_cases},
      {"", "Exp", exp_cases},
      {"", "Erf", erf_cases},
      {"", "Max", max_cases},
      {"", "Min", min_cases},
      {"", "Pow", pow_cases},
      {"", "Log", log_cases},
      {"", "Sqrt", sqrt_cases},
      {"", "Abs", abs_cases},
      {"", "Neg", neg_cases},
      {"", "Reciprocal", reciprocal_cases},
      {"", "Clip", clip_cases},
      {"", "LeakyRelu", leaky_relu_cases},
      {"ai.ignis", "Attention", attention_cases},
      {"ai.ignis", "SkipLayerNorm", skip_layer_norm_cases},
      {"", "LayerNormalization", layer_norm_cases},
      {"ai.ignis", "LayerNormalization", ignis_layer_norm_cases},
      {"", "Softmax", softmax_cases},
      {"", "LSTM", lstm_cases},
      {"", "GRU", gru_cases},
      {"", "RNN", rnn_cases},
      {"ai.ignis", "BlockedConv", blocked_conv_cases},
      {"ai.ignis", "BlockChannels", block_channels_cases},
      {"ai.ignis", "UnblockChannels", unblock_channels_cases},
      {"ai.ignis", "BlockedGlobalAveragePool", blocked_global_average_pool_cases},
      {"ai.ignis", "BlockedMaxPool", blocked_max_pool_cases},
      {"", "MatMulInteger", matmul_integer_cases},
      {"ai.ignis", "MatMulIntegerToFloat", matmul_integer_to_float_cases},
      {"", "DynamicQuantizeLinear", dynamic_quantize_linear_cases},
      {"ai.ignis", "DynamicQuantizeRows", dynamic_quantize_rows_cases},
      {"", "QLinearConv", qlinear_conv_cases},
      {"ai.ignis", "QLinearConvNhwc", qlinear_conv_nhwc_cases},
      {"", "ConvInteger", conv_integer_cases},
      {"", "Cast", cast_cases},
      {"", "QLinearMatMul", qlinear_matmul_cases},
      {"", "QuantizeLinear", quantize_linear_cases},
      {"", "DequantizeLinear", dequantize_linear_cases},
      {"com.microsoft", "MatMulNBits", matmul_nbits_cases},
      {"com.microsoft", "QLinearAdd", qlinear_add_cases},
      {"com.microsoft", "QLinearMul", qlinear_mul_cases},
      {"ai.ignis", "QLinearLookup", qlinear_lookup_cases},
      {"com.microsoft", "QLinearGlobalAveragePool", qlinear_global_average_pool_cases},
      {"", "Gelu", gelu_cases},
      {"ai.ignis", "Gelu", ignis_gelu_cases},
      {"", "Transpose", transpose_cases},
      {"", "Pad", pad_cases},
      {"", "BatchNormalization", batch_norm_cases},
      {"", "ReduceSum", reduce_sum_cases},
      {"", "ReduceMean", reduce_mean_cases},
      {"", "ReduceMax", reduce_max_cases},
      {"", "ReduceMin", reduce_min_cases},
      {"", "ReduceSumSquare", reduce_sum_square_cases},
      {"", "ReduceL2", reduce_l2_cases},
      {"", "Resize", resize_cases},
      {"", "ConvTranspose", conv_transpose_cases},
      {"", "Upsample", upsample_cases},
      {"ai.onnx.ml", "TreeEnsembleRegressor", tree_ensemble_regressor_cases},
      {"ai.onnx.ml", "TreeEnsembleClassifier", tree_ensemble_classifier_cases},
      {"ai.onnx.ml", "TreeEnsemble", tree_ensemble_cases},
      {"ai.onnx.ml", "Scaler", scaler_cases},
      {"", "Concat", concat_cases},
  };
  return list;
}

// The activation attributes of the ai.ignis fused ops, one setting per activation kind.
struct FusedActivation {
  std::string name;  // "" = none
  std::vector<std::pair<std::string, float>> params;
};
inline std::vector<FusedActivation> fused_activations() {
  return {{"", {}},
          {"Relu", {}},
          {"Clip", {{"activation_min", 0.0f}, {"activation_max", 0.5f}}},
          {"Clip", {{"activation_max", -0.25f}}},
          {"LeakyRelu", {{"activation_alpha", 0.2f}}},
          {"LeakyRelu", {}},
          {"Sigmoid", {}},
          {"HardSigmoid", {{"activation_alpha", 0.3f}, {"activation_beta", 0.4f}}},
          {"HardSwish", {}},
          {"SiLU", {}},
          {"Gelu", {}},
          {"GeluTanh", {}}};
}

// Attribute helpers.
inline Attribute int_attr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}
inline Attribute float_attr(float v) {
  Attribute a;
  a.kind = Attribute::Kind::Float;
  a.f = v;
  return a;
}
inline Attribute ints_attr(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}
inline Attribute string_attr(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::String;
  a.s = std::move(v);
  return a;
}

inline void set_activation(AttrMap& attrs, const FusedActivation& act) {
  if (act.name.empty()) return;
  attrs.set("activation", string_attr(act.name));
  for (const auto& [name, v] : act.params) attrs.set(name, float_attr(v));
}

inline std::string activation_label(const FusedActivation& act) {
  std::string s = act.name.empty() ? "no activation" : "activation=" + act.name;
  for (const auto& [name, v] : act.params) s += " " + name + "=" + std::to_string(v);
  return s;
}

}  // namespace ignis::kernel_cases
