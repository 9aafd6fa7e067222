// SPDX-License-Identifier: Apache-2.0
// calibrate(): the float model, with the tensors to calibrate added as graph outputs, runs once
// per sample; each sample's values update the tensor's statistics and are then dropped. The
// 4-D activations it observes may stay in the blocked channel layout (PassContext::
// blocked_outputs), so the instrumented model runs blocked as the float model does instead of
// reordering each observed tensor back to NCHW; their statistics skip the padding lanes.
#include "compress/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compress/calibration_data.h"
#include "compress/histogram.h"
#include "core/strings.h"
#include "core/thread_pool.h"
#include "ir/rewrite.h"
#include "onnx/export.h"
#include "passes/graph_facts.h"
#include "passes/pass.h"
#include "runtime/evaluate.h"

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
// (a quantized trial on int8 kernels), and fusions keep every graph output as it is. The
// outputs named in `blocked` (added ones only) may come back in the blocked channel layout:
// the graph is then optimized here, with them in PassContext::blocked_outputs, and opened as
// it is.
Result<Session> open_instrumented(const ir::Graph& g, const std::vector<std::string>& tensors, const std::string& dir,
                                  const std::unordered_set<std::string>& blocked = {}) {
  ir::Graph copy = g;
  passes::PassContext ctx = runtime::make_pass_context();
  for (const auto& t : tensors) {
    if (ir::is_graph_output(copy, t)) continue;
    ValueInfo v;
    v.name = t;
    v.dtype = DType::F32;
    copy.outputs.push_back(v);
    if (blocked.count(t)) ctx.blocked_outputs.insert(t);
  }
  SessionOptions so;
  so.optimization = OptLevel::All;
  if (!ctx.blocked_outputs.empty()) {
    IGNIS_RETURN_IF_ERROR(passes::optimize(copy, passes::Level::All, ctx).status());
    so.optimization = OptLevel::None;
  }
  IGNIS_ASSIGN_OR_RETURN(std::string bytes, onnx_io::export_model(copy));
  return Session::open_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), so, dir);
}

// The real channels of each of `tensors` that is a float32 [N, C, H, W] of a known C: those
// the instrumented model may return blocked.
std::unordered_map<std::string, int64_t> nchw_channels(const ir::Graph& g, const std::vector<std::string>& tensors) {
  const passes::GraphFacts facts(g);
  std::unordered_map<std::string, int64_t> out;
  for (const auto& t : tensors) {
    const passes::ValueFact& f = facts[t];
    if (f.dtype == DType::F32 && f.rank == 4 && f.dims[1].is_fixed() && !ir::is_graph_output(g, t))
      out.emplace(t, f.dims[1].value);
  }
  return out;
}

// The values of t: itself when it is not blocked ([N, CB, H, W, B] with `channels` of its
// CB * B lanes real) or every lane is real, else its real lanes gathered into `buffer`.
std::span<const float> real_values(const Tensor& t, int64_t channels, std::vector<float>& buffer) {
  const float* x = t.data_as<float>();
  if (channels <= 0 || t.rank() != 5 || channels == t.dim(1) * t.dim(4))
    return {x, static_cast<size_t>(t.numel())};
  const int64_t images = t.dim(0), block = t.dim(4), pixels = t.dim(2) * t.dim(3);
  const int64_t full = channels / block, rest = channels % block;
  buffer.resize(static_cast<size_t>(images * channels * pixels));
  float* out = buffer.data();
  for (int64_t n = 0; n < images; ++n) {
    const float* image = x + n * t.dim(1) * pixels * block;
    out = std::copy_n(image, full * pixels * block, out);
    const float* last = image + full * pixels * block;
    for (int64_t p = 0; p < pixels; ++p) out = std::copy_n(last + p * block, rest, out);
  }
  return {buffer.data(), buffer.size()};
}

// Runs every graph of `graphs` on each sample; visit(i, values) gets tensor i as each computed it
// (graph s computes names[s][i]; one list serves all when names has one).
Result<int64_t> run_graphs(const std::vector<const ir::Graph*>& graphs, const std::string& model_dir,
                           const std::vector<std::vector<std::string>>& names, const QuantizeOptions& o,
                           const std::function<Status(size_t, const std::vector<Tensor>&)>& visit,
                           const std::unordered_set<std::string>& blocked = {}) {
  const auto tensors_of = [&](size_t s) -> const std::vector<std::string>& { return names[names.size() > 1 ? s : 0]; };
  const std::vector<std::string>& tensors = names[0];
  IGNIS_ASSIGN_OR_RETURN(auto samples, list_calibration_samples(o.calibration_data));
  if (o.calibration_samples > 0 && samples.size() > static_cast<size_t>(o.calibration_samples))
    samples.resize(static_cast<size_t>(o.calibration_samples));
  std::vector<Session> sessions;
  for (size_t s = 0; s < graphs.size(); ++s) {
    IGNIS_ASSIGN_OR_RETURN(Session session, open_instrumented(*graphs[s], tensors_of(s), model_dir, blocked));
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
  // The 4-D activations may come back blocked; by_channel ones (read per last axis) stay NCHW.
  std::unordered_map<std::string, int64_t> channels = nchw_channels(g, tensors);
  for (const auto& [name, k] : by_channel) channels.erase(name);
  std::unordered_set<std::string> blocked;
  std::vector<int64_t> real_channels(tensors.size(), 0);
  for (size_t i = 0; i < tensors.size(); ++i) {
    auto c = channels.find(tensors[i]);
    if (c == channels.end()) continue;
    blocked.insert(tensors[i]);
    real_channels[i] = c->second;
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
    thread_local std::vector<float> gathered;
    const std::span<const float> values = real_values(t, real_channels[i], gathered);
    const float* x = values.data();
    const auto n = static_cast<int64_t>(values.size());
    const FiniteRange r = finite_range(x, n);
    s.min = std::min(s.min, r.min);
    s.max = std::max(s.max, r.max);
    if (s.hist) s.hist->add(x, n, r.min <= r.max ? std::max(-r.min, r.max) : 0.0f);
    if (!s.channels) return;
    const int64_t k = depth[i];
    if (t.rank() < 1 || t.dim(t.rank() - 1) != k) s.channels.reset();
    else update_channels(*s.channels, x, n / k, k, sample_index < abs_max_samples);
  };
  auto samples = run_graphs({&g}, model_dir, {tensors}, o, [&](size_t i, const std::vector<Tensor>& values) {
    const Tensor& t = values[0];
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
  }, blocked);
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
