// SPDX-License-Identifier: Apache-2.0
// calibrate(): the float model, with the tensors to calibrate added as graph outputs, runs once
// per sample; each sample's values update the tensor's statistics and are then dropped.
#include "compress/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <span>

#include "compress/calibration_data.h"
#include "compress/histogram.h"
#include "core/strings.h"
#include "core/thread_pool.h"
#include "ir/rewrite.h"
#include "onnx/export.h"

namespace ignis::compress {

namespace {

struct TensorStats {
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
  std::unique_ptr<AbsHistogram> hist;       // percentile and entropy only
  std::unique_ptr<ChannelRanges> channels;  // by_channel tensors, until a sample does not fit
  bool float32 = true;
};

// Folds the [rows, k] values x into per-channel ranges; |x| too when `abs`.
void update_channels(ChannelRanges& c, const float* x, int64_t rows, int64_t k, bool abs) {
  for (int64_t r = 0; r < rows; ++r, x += k)
    for (int64_t j = 0; j < k; ++j) {
      const float v = x[j];
      if (!std::isfinite(v)) {
        if (abs && std::isinf(v)) c.abs_max[static_cast<size_t>(j)] = std::numeric_limits<float>::infinity();
        continue;
      }
      c.min[static_cast<size_t>(j)] = std::min(c.min[static_cast<size_t>(j)], v);
      c.max[static_cast<size_t>(j)] = std::max(c.max[static_cast<size_t>(j)], v);
      if (abs) c.abs_max[static_cast<size_t>(j)] = std::max(c.abs_max[static_cast<size_t>(j)], std::fabs(v));
    }
}

// The range `method` picks from the statistics. Percentile and entropy clip |x| at a threshold
// T, so the range is [min, max] intersected with [-T, T].
CalibratedRange range_of(const TensorStats& s, const QuantizeOptions& o) {
  CalibratedRange r{s.min, s.max};
  if (o.calibration_method == CalibrationMethod::MinMax || !s.hist || s.hist->width() == 0.0) return r;
  // A non-negative tensor (after ReLU, softmax) uses all 256 levels on one side.
  const double t = o.calibration_method == CalibrationMethod::Percentile
                       ? percentile_threshold(*s.hist, o.percentile)
                       : entropy_threshold(*s.hist, s.min >= 0.0f ? 256 : 128);
  r.min = std::max(r.min, static_cast<float>(-t));
  r.max = std::min(r.max, static_cast<float>(t));
  return r;
}

// `g` with `tensors` also as graph outputs, opened at level all: as the model will run
// (a quantized trial on int8 kernels), and fusions keep every graph output as it is.
Result<Session> open_instrumented(const ir::Graph& g, const std::vector<std::string>& tensors, const std::string& dir) {
  ir::Graph copy = g;
  for (const auto& t : tensors) {
    if (ir::is_graph_output(copy, t)) continue;
    ValueInfo v;
    v.name = t;
    v.dtype = DType::F32;
    copy.outputs.push_back(v);
  }
  IGNIS_ASSIGN_OR_RETURN(std::string bytes, onnx_io::export_model(copy));
  SessionOptions so;
  so.optimization = OptLevel::All;
  return Session::open_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), so, dir);
}

// Runs every graph of `graphs` on each sample; visit(i, values) gets tensor i as each computed it
// (graph s computes names[s][i]; one list serves all when names has one).
Result<int64_t> run_graphs(const std::vector<const ir::Graph*>& graphs, const std::string& model_dir,
                           const std::vector<std::vector<std::string>>& names, const QuantizeOptions& o,
                           const std::function<Status(size_t, const std::vector<Tensor>&)>& visit) {
  const auto tensors_of = [&](size_t s) -> const std::vector<std::string>& { return names[names.size() > 1 ? s : 0]; };
  const std::vector<std::string>& tensors = names[0];
  IGNIS_ASSIGN_OR_RETURN(auto samples, list_calibration_samples(o.calibration_data));
  if (o.calibration_samples > 0 && samples.size() > static_cast<size_t>(o.calibration_samples))
    samples.resize(static_cast<size_t>(o.calibration_samples));
  std::vector<Session> sessions;
  for (size_t s = 0; s < graphs.size(); ++s) {
    IGNIS_ASSIGN_OR_RETURN(Session session, open_instrumented(*graphs[s], tensors_of(s), model_dir));
    sessions.push_back(std::move(session));
  }
  for (size_t k = 0; k < samples.size(); ++k) {
    const auto start = std::chrono::steady_clock::now();
    IGNIS_ASSIGN_OR_RETURN(NamedTensors feeds, load_calibration_sample(samples[k], sessions[0].inputs()));
    std::vector<std::vector<Tensor>> outputs;
    for (size_t s = 0; s < sessions.size(); ++s) {
      auto out = sessions[s].run(feeds, tensors_of(s));
      if (!out)
        return Status(out.error().code(), str_cat("calibration sample '", samples[k].path, "': ", out.error().message()));
      outputs.push_back(std::move(*out));
    }
    std::vector<Tensor> values(sessions.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      for (size_t s = 0; s < sessions.size(); ++s) values[s] = outputs[s][i];
      IGNIS_RETURN_IF_ERROR(visit(i, values));
    }
    if (o.progress) {
      const auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
      o.progress(str_cat("calibration sample ", k + 1, "/", samples.size(), " '", samples[k].path, "': ",
                         tensors.size(), " tensors in ", ms, " ms"));
    }
  }
  return static_cast<int64_t>(samples.size());
}

}  // namespace

Result<int64_t> run_calibration(const ir::Graph& g, const std::string& model_dir, const std::vector<std::string>& tensors,
                                const QuantizeOptions& o, const CalibrationVisitor& visit) {
  return run_graphs({&g}, model_dir, {tensors}, o,
                    [&](size_t i, const std::vector<Tensor>& values) { return visit(i, values[0]); });
}

Result<int64_t> run_calibration_pair(const ir::Graph& g, const ir::Graph& reference, const std::string& model_dir,
                                     const std::vector<std::string>& tensors, const QuantizeOptions& o,
                                     const CalibrationPairVisitor& visit) {
  return run_graphs({&g, &reference}, model_dir, {tensors}, o,
                    [&](size_t i, const std::vector<Tensor>& values) { return visit(i, values[0], values[1]); });
}

Result<int64_t> run_calibration_pair(const ir::Graph& g, const ir::Graph& reference, const std::string& model_dir,
                                     const std::vector<std::string>& tensors,
                                     const std::vector<std::string>& reference_tensors, const QuantizeOptions& o,
                                     const CalibrationPairVisitor& visit) {
  if (tensors.size() != reference_tensors.size())
    return internal_error("run_calibration_pair: the two graphs' tensor lists differ in length");
  return run_graphs({&g, &reference}, model_dir, {tensors, reference_tensors}, o,
                    [&](size_t i, const std::vector<Tensor>& values) { return visit(i, values[0], values[1]); });
}

Result<Calibration> calibrate(const ir::Graph& g, const std::string& model_dir,
                              const std::vector<std::string>& asked, const QuantizeOptions& o,
                              const std::map<std::string, int64_t>& by_channel, int64_t abs_max_samples) {
  std::vector<std::string> tensors = asked;
  for (const auto& [name, k] : by_channel)
    if (std::find(tensors.begin(), tensors.end(), name) == tensors.end()) tensors.push_back(name);
  std::vector<TensorStats> stats(tensors.size());
  std::vector<int64_t> depth(tensors.size(), 0);
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (o.calibration_method != CalibrationMethod::MinMax) stats[i].hist = std::make_unique<AbsHistogram>();
    const auto k = by_channel.find(tensors[i]);
    if (k == by_channel.end() || k->second < 1) continue;
    depth[i] = k->second;
    const auto n = static_cast<size_t>(k->second);
    stats[i].channels = std::make_unique<ChannelRanges>(
        ChannelRanges{std::vector<float>(n, std::numeric_limits<float>::infinity()),
                      std::vector<float>(n, -std::numeric_limits<float>::infinity()), std::vector<float>(n, 0.0f)});
  }
  int64_t sample_index = 0;
  // A sample's tensors are gathered, then their statistics taken on every core: reading each
  // activation (tens of MB a sample for a CNN) costs more than the run that computed it. Tensor
  // i goes to thread i % threads, spreading the large early activations.
  ThreadPool pool(ThreadPool::default_threads());
  std::vector<Tensor> sample(tensors.size());
  const auto update = [&](size_t i) {
    TensorStats& s = stats[i];
    const Tensor& t = sample[i];
    if (t.dtype() != DType::F32) {
      s.float32 = false;
      s.channels.reset();
      return;
    }
    const float* x = t.data_as<float>();
    const int64_t n = t.numel();
    const FiniteRange r = finite_range(x, n);
    s.min = std::min(s.min, r.min);
    s.max = std::max(s.max, r.max);
    if (s.hist) s.hist->add(x, n, r.min <= r.max ? std::max(-r.min, r.max) : 0.0f);
    if (!s.channels) return;
    const int64_t k = depth[i];
    if (t.rank() < 1 || t.dim(t.rank() - 1) != k) s.channels.reset();
    else update_channels(*s.channels, x, n / k, k, sample_index < abs_max_samples);
  };
  auto samples = run_calibration(g, model_dir, tensors, o, [&](size_t i, const Tensor& t) {
    sample[i] = t;
    if (i + 1 < tensors.size()) return Status::ok();
    const int threads = pool.threads();
    pool.parallel_for(threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part)
        for (size_t k = static_cast<size_t>(part); k < tensors.size(); k += static_cast<size_t>(threads)) update(k);
    });
    for (Tensor& held : sample) held = Tensor();
    ++sample_index;
    return Status::ok();
  });
  if (!samples) return samples.error();

  Calibration c;
  c.samples = *samples;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!stats[i].float32) c.skipped.push_back(str_cat(tensors[i], ": not float32"));
    else if (!(stats[i].min <= stats[i].max)) c.skipped.push_back(str_cat(tensors[i], ": no finite values seen"));
    else c.ranges[tensors[i]] = range_of(stats[i], o);
    if (stats[i].channels) c.channels[tensors[i]] = std::move(*stats[i].channels);
  }
  return c;
}

}  // namespace ignis::compress
