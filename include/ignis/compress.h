// SPDX-License-Identifier: Apache-2.0
// Offline weight compression: quantization and magnitude pruning of the weight operands of
// Conv, ConvTranspose, MatMul and Gemm. Each reads an ONNX model and writes a standard ONNX model
// (any ONNX runtime runs it) with the same inputs and outputs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ignis/status.h"
#include "ignis/tensor.h"

namespace ignis {

enum class QuantizeMode {
  // int8 weights, symmetric (zero point 0), one scale per output channel (per tensor when the
  // model's opset is below 13 or per_channel is off), stored as DequantizeLinear(int8) feeding
  // the op. ignis dequantizes them once at session creation, so compute stays float32 while
  // the file is ~4x smaller.
  Int8,
  // float16 weights feeding the op through Cast(to=float): ~2x smaller, computed in float32.
  Fp16,
  // Dynamic int8 MatMul/Gemm, in onnxruntime quantize_dynamic's form: each activation read by
  // a MatMul (or Gemm with transA=0) whose B is a constant 2-D float32 weight goes through
  // DynamicQuantizeLinear (uint8, range taken per run), and the product becomes
  // MatMulInteger(uint8, int8) -> Cast(to=float) -> Mul(x_scale * w_scale) [-> Add(bias)].
  // Weights are int8 symmetric, one scale per output column (per tensor without per_channel).
  // Needs opset >= 11.
  Dynamic,
  // Calibrated static int8, written as QDQ (QuantizeLinear -> DequantizeLinear pairs): the
  // float model runs on calibration samples, and each activation read or written by Conv,
  // MatMul and Gemm gets a fixed int8 range, asymmetric (zero point in [-128, 127]) as
  // onnxruntime's default S8S8 QDQ; weights are int8 symmetric per output channel (per
  // tensor without per_channel or below opset 13) through DequantizeLinear, and Conv/Gemm
  // biases int32 with scale x_scale * w_scale. Needs opset >= 10.
  Static,
  // 4-bit weight-only MatMul: each MatMul whose B is a constant 2-D float32 weight [K, N]
  // becomes com.microsoft MatMulNBits (onnxruntime's contrib op, which onnxruntime runs too)
  // with asymmetric 4-bit codes per block of block_size depths of each column (a scale and a
  // 4-bit zero point per block, range [min(0, w), max(0, w)] over the block) and
  // accuracy_level 4 (A may be rounded to int8 per block for batch-1 speed). K need not be a
  // multiple of block_size: the last block is partial. With calibration_data the codes are
  // chosen by GPTQ (calibrated rounding) instead of round-to-nearest.
  Int4,
};

// How `max_drop` measures the loss of a statically quantized model, on the calibration samples
// against the float model.
enum class AccuracyMetric {
  // Share of rows (every index but the last axis, of every float output whose last axis has
  // at least 2 entries) whose argmax over the last axis differs from the float model's.
  Top1Disagreement,
  // 1 - the mean over samples and float outputs of the cosine between quantized and float.
  Cosine,
};

// A user's measure of accuracy loss for `max_drop`, replacing `metric`: given the names of
// the model's outputs and, per calibration sample (outer index), the float model's and the
// quantized model's outputs in that order, the loss in max_drop's units (larger is worse,
// finite, >= 0). Called once per measurement (the whole model quantized, then each step of
// the search), with every sample's outputs held in memory; an error it returns stops the
// quantization with that error.
using AccuracyLossFn = std::function<Result<double>(const std::vector<std::string>& output_names,
                                                    const std::vector<std::vector<Tensor>>& float_outputs,
                                                    const std::vector<std::vector<Tensor>>& quantized_outputs)>;

enum class CalibrationMethod {
  MinMax,      // the range seen: [min(0, min x), max(0, max x)]
  Percentile,  // |x| clipped at the percentile of its histogram
  Entropy,     // |x| clipped where the KL divergence to the int8 histogram is least (TensorRT's)
};

struct QuantizeOptions {
  QuantizeMode mode = QuantizeMode::Int8;
  bool per_channel = true;
  // Dynamic only (other modes reject it): each activation gets one scale per row (its last
  // axis) instead of one per tensor: symmetric int8, scale = max(max |x_row|, 1e-30) / 127,
  // written in standard ops (Abs, ReduceMax, Max, Div, Round, Clip, Cast) that onnxruntime runs
  // too and ignis fuses into one kernel; each product is then scaled by W's scale and by its
  // row's.
  bool per_row = false;
  // Smaller weights (biases, depthwise kernels) stay float32. Unset: 1024, and 0 for Static,
  // where every Conv/MatMul/Gemm of the model computes in int8.
  std::optional<int64_t> min_elements;
  // Dynamic, Static and Int4: names of nodes to keep in float32; each must name a node of the model.
  std::vector<std::string> exclude_nodes;
  // Int4: depths per quantization block, a power of 2 >= 16.
  int64_t block_size = 32;

  // Static and Int4 (other modes reject it). The calibration data folder: *.npz (one sample
  // each, arrays named by input), *.npy (one sample each, single-input models), sub-folders
  // (one sample each: NAME.npy per input or input_0.pb, ...), or one ONNX test-data folder.
  // Int4 then rounds by GPTQ: each MatMul's inputs on the samples give H = sum x^T x, and the
  // codes minimize the error of x W over them instead of the error of each weight.
  std::string calibration_data;
  CalibrationMethod calibration_method = CalibrationMethod::MinMax;
  double percentile = 99.999;       // Percentile: the share of |x| (in %) inside the range
  int64_t calibration_samples = 0;  // use at most this many samples, in path order (0: all)
  // Static: SmoothQuant's strength alpha in [0, 1] (0: off). Each MatMul / Gemm with constant
  // weights reads its input divided per channel (last axis) by s_j = max|x_j|^alpha /
  // max|w_j|^(1 - alpha), with its weight rows multiplied by s_j; the division is folded into
  // the input's QuantizeLinear (one scale per channel), so it costs nothing at run time. It
  // moves a transformer's outlier channels into the per-channel weight scales.
  double smooth_alpha = 0.7;
  // Static: measure each quantized activation's error against the float model on the first
  // this many samples (ActivationRange::error); 0: not measured.
  int64_t error_samples = 0;
  // Called with one line per calibrated sample; may be empty.
  std::function<void(const std::string&)> progress;
  // Static only: the largest accuracy loss allowed (in metric units: 0.01 = one point of top-1
  // agreement). When set, the quantized model is measured on the calibration samples; when
  // its loss exceeds this, each quantized node is measured alone (only it quantized: what it
  // costs the outputs' cosine) and the costliest stay float32: the fewest, in that order, for
  // which the loss holds (bisection). Each step is listed in CompressReport::decisions. When
  // even every node float32 misses it, quantize_model fails (InvalidArgument) and writes nothing.
  std::optional<double> max_drop;
  AccuracyMetric metric = AccuracyMetric::Top1Disagreement;
  // When set, max_drop's loss is this function's instead of `metric`'s.
  AccuracyLossFn custom_metric;
};

enum class PruneGranularity {
  Element,  // the smallest-magnitude elements of each weight tensor become zero
  Channel,  // whole output channels with the smallest L2 norm become zero (shapes unchanged)
};

struct PruneOptions {
  double sparsity = 0.5;  // fraction of each weight tensor (elements or channels) set to zero
  PruneGranularity granularity = PruneGranularity::Element;
  int64_t min_elements = 1024;  // smaller weights stay untouched
};

// One weight tensor that was changed.
struct WeightChange {
  std::string value;    // initializer name in the input model
  std::string op_type;  // the op that reads it (first reader when several)
  std::string scheme;   // "int8 per-channel axis 0", "fp16", "element 50%", "channel 25%"...
  int64_t elements = 0;
  int64_t zeros_before = 0, zeros_after = 0;
  float max_abs = 0.0f;        // largest |w| before the change
  float max_abs_error = 0.0f;  // largest |w - w'|
};

// Static: one activation given a QuantizeLinear/DequantizeLinear pair.
struct ActivationRange {
  std::string value;
  float min = 0.0f, max = 0.0f;  // calibrated range (before the int8 grid widens it to hold 0)
  float scale = 1.0f;
  int zero_point = 0;            // int8
  // With QuantizeOptions::error_samples: sqrt(sum (x_q - x)^2 / sum x^2) of its dequantized
  // value in the model written against the float model's, over those samples (the error of
  // the layers before it included); -1 when not measured.
  double error = -1;
};

struct CompressReport {
  std::vector<WeightChange> changed;
  std::vector<ActivationRange> activations;  // Static
  int64_t calibration_samples = 0;           // Static, and Int4 with calibration data
  // Static with max_drop: the loss measured for the model written, and one line per step
  // ("loss 0.0312 > 0.01 with 12 nodes quantized: /conv3 kept float32 (error growth 0.084)").
  double accuracy_loss = -1;
  std::vector<std::string> decisions;
  std::vector<std::string> skipped;  // "<value>: <why>" for candidate weights left alone
  int64_t parameters = 0;            // elements of all initializers of the input model
  int64_t parameters_changed = 0;    // elements of the changed weights
  int64_t initializer_bytes_before = 0, initializer_bytes_after = 0;
  int64_t file_bytes_before = 0, file_bytes_after = 0;
};

// Quantizes the weights of `input_path` and writes the result to `output_path`. A model that
// already holds quantized ops (QuantizeLinear, DequantizeLinear, MatMulInteger, QLinearConv,
// MatMulNBits...) is refused in every mode: quantize the float model instead.
Result<CompressReport> quantize_model(const std::string& input_path, const std::string& output_path,
                                      const QuantizeOptions& options = {});

// Prunes the weights of `input_path` and writes the result to `output_path`.
Result<CompressReport> prune_model(const std::string& input_path, const std::string& output_path,
                                   const PruneOptions& options = {});

}  // namespace ignis
