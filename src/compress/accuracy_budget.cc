// SPDX-License-Identifier: Apache-2.0
#include "compress/accuracy_budget.h"

#include <cmath>

#include "compress/calibrate.h"
#include "core/strings.h"

namespace ignis::compress {

namespace {

double cosine(const Tensor& f, const Tensor& q) {
  double dot = 0, nf = 0, nq = 0;
  const float* a = f.data_as<float>();
  const float* b = q.data_as<float>();
  for (int64_t i = 0; i < f.numel(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    nf += static_cast<double>(a[i]) * a[i];
    nq += static_cast<double>(b[i]) * b[i];
  }
  if (nf == 0 && nq == 0) return 1.0;
  if (nf == 0 || nq == 0) return 0.0;
  return dot / std::sqrt(nf * nq);
}

int64_t argmax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}

bool comparable(const Tensor& f, const Tensor& q) {
  return f.dtype() == DType::F32 && q.dtype() == DType::F32 && f.shape() == q.shape();
}

}  // namespace

Result<QuantizationError> measure_quantization_error(const ir::Graph& float_graph, const ir::Graph& quantized,
                                                     const std::string& dir, const QuantizeOptions& options) {
  std::vector<std::string> names;
  for (const ValueInfo& v : float_graph.outputs) names.push_back(v.name);
  int64_t rows = 0, disagreements = 0, cosine_count = 0;
  double cosine_sum = 0;
  // For a custom metric: every sample's outputs (visited in output order per sample).
  std::vector<std::vector<Tensor>> float_outputs, quantized_outputs;
  QuantizeOptions o = options;
  o.progress = nullptr;  // one line per sample and step would drown the decisions
  IGNIS_ASSIGN_OR_RETURN(
      const int64_t samples,
      run_calibration_pair(quantized, float_graph, dir, names, o, [&](size_t i, const Tensor& q, const Tensor& f) {
        if (options.custom_metric) {
          if (i == 0) {
            float_outputs.emplace_back();
            quantized_outputs.emplace_back();
          }
          float_outputs.back().push_back(f.clone());
          quantized_outputs.back().push_back(q.clone());
        }
        if (!comparable(f, q)) return Status::ok();
        cosine_sum += cosine(f, q);
        ++cosine_count;
        const int64_t classes = f.rank() > 0 ? f.dim(f.rank() - 1) : 0;
        if (classes < 2) return Status::ok();
        for (int64_t r = 0; r < f.numel() / classes; ++r) {
          ++rows;
          disagreements += argmax(f.data_as<float>() + r * classes, classes) !=
                           argmax(q.data_as<float>() + r * classes, classes);
        }
        return Status::ok();
      }));
  if (samples == 0) return invalid_argument("no calibration samples to measure the accuracy loss on");
  if (cosine_count == 0 && !options.custom_metric)
    return invalid_argument("measuring the accuracy loss needs a float32 model output");
  QuantizationError e;
  e.output_error = cosine_count > 0 ? 1.0 - cosine_sum / static_cast<double>(cosine_count) : 0.0;
  if (options.custom_metric) {
    IGNIS_ASSIGN_OR_RETURN(e.loss, options.custom_metric(names, float_outputs, quantized_outputs));
    if (!(e.loss >= 0) || !std::isfinite(e.loss))
      return invalid_argument(str_cat("the accuracy metric returned ", e.loss, "; it must be a finite loss >= 0"));
  } else if (options.metric == AccuracyMetric::Top1Disagreement) {
    if (rows == 0)
      return invalid_argument(
          "the top-1 metric needs a float32 model output whose last dimension is at least 2 (class scores); "
          "use the cosine metric");
    e.loss = static_cast<double>(disagreements) / static_cast<double>(rows);
  } else {
    e.loss = e.output_error;
  }
  return e;
}

}  // namespace ignis::compress
