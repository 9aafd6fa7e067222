// SPDX-License-Identifier: Apache-2.0
#include "compress/accuracy_budget.h"

#include <cmath>
#include <set>

#include "compress/calibrate.h"
#include "compress/calibration_data.h"
#include "core/strings.h"

namespace ignis::compress {

namespace {

// ||q - f|| / ||f|| (0 when both are zero).
double relative_error(const Tensor& f, const Tensor& q) {
  double diff = 0, norm = 0;
  const float* a = f.data_as<float>();
  const float* b = q.data_as<float>();
  for (int64_t i = 0; i < f.numel(); ++i) {
    const double d = static_cast<double>(b[i]) - a[i];
    diff += d * d;
    norm += static_cast<double>(a[i]) * a[i];
  }
  if (norm == 0) return diff == 0 ? 0.0 : 1.0;
  return std::sqrt(diff / norm);
}

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
                                                     const std::string& dir, const std::vector<ErrorProbe>& probes,
                                                     const QuantizeOptions& o) {
  IGNIS_ASSIGN_OR_RETURN(auto samples, list_calibration_samples(o.calibration_data));
  if (o.calibration_samples > 0 && samples.size() > static_cast<size_t>(o.calibration_samples))
    samples.resize(static_cast<size_t>(o.calibration_samples));

  // Requested outputs: the model's own, then every probed tensor once.
  std::vector<std::string> names;
  for (const ValueInfo& v : float_graph.outputs) names.push_back(v.name);
  const size_t model_outputs = names.size();
  std::set<std::string> taken(names.begin(), names.end());
  for (const ErrorProbe& p : probes)
    for (const std::string* t : {&p.input, &p.output})
      if (taken.insert(*t).second) names.push_back(*t);
  const std::vector<std::string> probed(names.begin() + static_cast<std::ptrdiff_t>(model_outputs), names.end());
  IGNIS_ASSIGN_OR_RETURN(Session fs, open_instrumented(float_graph, probed, dir));
  IGNIS_ASSIGN_OR_RETURN(Session qs, open_instrumented(quantized, probed, dir));

  int64_t rows = 0, disagreements = 0;
  double cosine_sum = 0;
  int64_t cosine_count = 0;
  std::map<std::string, double> error_sum;
  for (const CalibrationSample& sample : samples) {
    IGNIS_ASSIGN_OR_RETURN(NamedTensors feeds, load_calibration_sample(sample, fs.inputs()));
    auto f = fs.run(feeds, names);
    if (!f) return Status(f.error().code(), str_cat("sample '", sample.path, "', float model: ", f.error().message()));
    auto q = qs.run(feeds, names);
    if (!q) return Status(q.error().code(), str_cat("sample '", sample.path, "', quantized: ", q.error().message()));
    for (size_t i = 0; i < model_outputs; ++i) {
      const Tensor& a = (*f)[i];
      const Tensor& b = (*q)[i];
      if (!comparable(a, b)) continue;
      cosine_sum += cosine(a, b);
      ++cosine_count;
      const int64_t classes = a.rank() > 0 ? a.dim(a.rank() - 1) : 0;
      if (classes < 2) continue;
      for (int64_t r = 0; r < a.numel() / classes; ++r) {
        ++rows;
        disagreements += argmax(a.data_as<float>() + r * classes, classes) !=
                         argmax(b.data_as<float>() + r * classes, classes);
      }
    }
    for (size_t i = model_outputs; i < names.size(); ++i)
      if (comparable((*f)[i], (*q)[i])) error_sum[names[i]] += relative_error((*f)[i], (*q)[i]);
  }
  if (samples.empty()) return invalid_argument("no calibration samples to measure the accuracy loss on");
  QuantizationError e;
  if (o.metric == AccuracyMetric::Top1Disagreement) {
    if (rows == 0)
      return invalid_argument(
          "the top-1 metric needs a float32 model output whose last dimension is at least 2 (class scores); "
          "use the cosine metric");
    e.loss = static_cast<double>(disagreements) / static_cast<double>(rows);
  } else {
    if (cosine_count == 0) return invalid_argument("the cosine metric needs a float32 model output");
    e.loss = 1.0 - cosine_sum / static_cast<double>(cosine_count);
  }
  const double n = static_cast<double>(samples.size());
  for (const ErrorProbe& p : probes) {
    const auto in = error_sum.find(p.input), out = error_sum.find(p.output);
    e.growth[p.node] = ((out == error_sum.end() ? 0.0 : out->second) - (in == error_sum.end() ? 0.0 : in->second)) / n;
  }
  return e;
}

}  // namespace ignis::compress
