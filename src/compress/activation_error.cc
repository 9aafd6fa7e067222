// SPDX-License-Identifier: Apache-2.0
// measure_activation_errors(): the quantized and the float model side by side on the first
// calibration samples, each quantized activation's DequantizeLinear output against the float
// model's tensor.
#include "compress/activation_error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "compress/calibrate.h"
#include "core/strings.h"

namespace ignis::compress {

namespace {

// The values `g` computes or is fed.
std::set<std::string> defined_values(const ir::Graph& g) {
  std::set<std::string> out;
  for (const auto& in : g.inputs) out.insert(in.name);
  for (const auto& n : g.nodes) out.insert(n.outputs.begin(), n.outputs.end());
  return out;
}

}  // namespace

Status measure_activation_errors(const ir::Graph& quantized, const ir::Graph& float_graph, const std::string& model_dir,
                                 const std::vector<SmoothedActivation>& smoothed, const QuantizeOptions& options,
                                 CompressReport* report) {
  if (options.error_samples <= 0 || report->activations.empty()) return Status::ok();
  std::map<std::string, const ir::Node*> by_name;
  for (const auto& n : quantized.nodes) by_name[n.name] = &n;
  std::map<std::string, const SmoothedActivation*> smoothing;  // by the Mul's output
  const std::set<std::string> float_values = defined_values(float_graph);
  for (const auto& a : smoothed) smoothing[a.output] = &a;

  // write_qdq names the pair of activation x "x/QuantizeLinear" and "x/DequantizeLinear".
  std::vector<std::string> dequantized, reference;
  std::vector<size_t> which;
  std::vector<const std::vector<float>*> inverse;
  for (size_t k = 0; k < report->activations.size(); ++k) {
    const std::string& x = report->activations[k].value;
    const auto q = by_name.find(x + "/QuantizeLinear");
    const auto dq = by_name.find(x + "/DequantizeLinear");
    if (q == by_name.end() || dq == by_name.end() || dq->second->inputs.empty() ||
        dq->second->inputs[0] != q->second->outputs[0])
      continue;
    const auto s = smoothing.find(x);
    const std::string& float_value = s == smoothing.end() ? x : s->second->value;
    if (!float_values.count(float_value)) continue;
    dequantized.push_back(dq->second->outputs[0]);
    reference.push_back(float_value);
    which.push_back(k);
    inverse.push_back(s == smoothing.end() ? nullptr : &s->second->inverse);
  }
  if (which.empty()) return Status::ok();

  QuantizeOptions first = options;
  first.calibration_samples = options.calibration_samples > 0
                                  ? std::min(options.calibration_samples, options.error_samples)
                                  : options.error_samples;
  if (options.progress) first.progress = [&options](const std::string& line) { options.progress("error: " + line); };
  std::vector<double> squared_error(which.size(), 0.0), squared_value(which.size(), 0.0);
  std::vector<bool> measured(which.size(), false);
  IGNIS_RETURN_IF_ERROR(
      run_calibration_pair(quantized, float_graph, model_dir, dequantized, reference, first,
                           [&](size_t i, const Tensor& q, const Tensor& f) {
                             if (q.dtype() != DType::F32 || f.dtype() != DType::F32 || q.numel() != f.numel())
                               return Status::ok();
                             const std::vector<float>* inv = inverse[i];
                             const int64_t k = inv ? static_cast<int64_t>(inv->size()) : 1;
                             if (inv && (f.rank() < 1 || f.dim(f.rank() - 1) != k)) return Status::ok();
                             const float* a = q.data_as<float>();
                             const float* b = f.data_as<float>();
                             double e2 = 0.0, v2 = 0.0;
                             for (int64_t e = 0; e < f.numel(); ++e) {
                               const double want = inv ? static_cast<double>(b[e]) * (*inv)[static_cast<size_t>(e % k)]
                                                       : static_cast<double>(b[e]);
                               const double d = static_cast<double>(a[e]) - want;
                               if (!std::isfinite(d) || !std::isfinite(want)) continue;
                               e2 += d * d;
                               v2 += want * want;
                             }
                             squared_error[i] += e2;
                             squared_value[i] += v2;
                             measured[i] = true;
                             return Status::ok();
                           })
          .status());
  for (size_t i = 0; i < which.size(); ++i) {
    if (!measured[i]) continue;
    report->activations[which[i]].error =
        squared_value[i] > 0.0 ? std::sqrt(squared_error[i] / squared_value[i])
                               : (squared_error[i] > 0.0 ? std::numeric_limits<double>::infinity() : 0.0);
  }
  return Status::ok();
}

}  // namespace ignis::compress
