// SPDX-License-Identifier: Apache-2.0
// 4-bit weight-only quantization of MatMul, written as com.microsoft MatMulNBits (onnxruntime's
// contrib op, so onnxruntime runs the result too):
//
//   MatMul(x, W [K, N] float32)  ─►  MatMulNBits(x, B uint8 [N, blocks, block / 2], scales, zero_points)
//
// Each column of W is cut into blocks of block_size depths (the last may be partial). Per block
// the codes are asymmetric: range [lo, hi] = [min(0, min w), max(0, max w)], each end possibly
// narrowed toward 0 where that leaves less squared error (int4_block_grid), scale =
// (hi - lo) / 15, zero point z = round(-lo / scale) in [0, 15], q = clamp(round(w / scale) + z,
// 0, 15), so w ~= (q - z) * scale with error <= scale / 2 inside the range. Asymmetric codes use
// all 16 levels on one-sided blocks where a symmetric grid would waste half of them; that costs
// one 4-bit zero point per block. Codes are packed two per byte, low nibble first, as are the
// zero points (ceil(blocks / 2) bytes per column); depths past K get code z (they dequantize to 0).
// accuracy_level 4 lets the kernel round A to int8 per block (the batch-1 fast path).
//
// With calibration data the codes come from GPTQ (gptq.h) instead of rounding to nearest: the
// float model runs on the samples, each rewritten MatMul's input x adds x^T x to its Hessian,
// and the rounding of each weight then minimizes the error of X W rather than of W.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "compress/calibrate.h"
#include "compress/graph_edit.h"
#include "compress/gptq.h"
#include "compress/int4_weights.h"
#include "compress/quantize_graph.h"
#include "core/strings.h"
#include "core/thread_pool.h"
#include "ir/rewrite.h"

namespace ignis::compress {

namespace {

// The damping added to H, as a share of its mean diagonal: GPTQ's dampening and the pull of the
// target W' toward W (gptq_target). The paper's 1% suits large calibration sets; all-MiniLM-L6-v2
// on 64 sentences (~840 rows for up to 1536 inputs, tests/python/test_quantize_int4.py), min/mean
// sentence-embedding cosine to float: 0.03 -> 0.985/0.991, 0.1 -> 0.987/0.992, 0.3 ->
// 0.990/0.993, 1.0 -> 0.990/0.993.
constexpr double kGptqDamping = 0.3;

// Why MatMul/Gemm `n` is not rewritten, or "" when it is.
std::string skip_reason(const ir::Graph& g, const ir::Node& n, const QuantizeOptions& o,
                        const std::set<std::string>& excluded) {
  const Tensor* w = ir::constant_value(g, n.inputs[1]);
  if (n.op_type == "Gemm") return "Gemm is not rewritten (int4 covers MatMul)";
  if (w == nullptr || !g.initializers.count(n.inputs[1])) return "B is computed, not a constant initializer";
  if (w->dtype() != DType::F32) return str_cat("B has dtype ", dtype_name(w->dtype()), ", not float32");
  if (w->rank() != 2) return str_cat("B is ", w->rank(), "-D, not 2-D");
  if (ir::constant_value(g, n.inputs[0]) != nullptr) return "A is a constant (constant folding's job)";
  if (w->numel() < o.min_elements.value_or(0))
    return str_cat("B has ", w->numel(), " elements, below the minimum of ", *o.min_elements);
  if (excluded.count(n.name)) return "excluded";
  return "";
}

// MatMulNBits' initializers for `codes` of weight `weight` (float32 `w`), recorded in `report`.
struct Written {
  std::string codes, scales, zero_points;
};
Written write_int4(ir::Graph& g, const std::string& weight, const std::string& op_type, const Tensor& w,
                   const Int4Codes& codes, const std::string& scheme, CompressReport* report) {
  Int4Weight q = int4_pack(codes, w);
  WeightChange change;
  change.value = weight;
  change.op_type = op_type;
  change.scheme = scheme;
  change.elements = w.numel();
  change.zeros_before = std::count(w.data_as<float>(), w.data_as<float>() + w.numel(), 0.0f);
  change.zeros_after = q.zeros;
  change.max_abs = q.max_abs;
  change.max_abs_error = q.max_abs_error;
  report->parameters_changed += change.elements;
  report->changed.push_back(std::move(change));
  Written names;
  names.codes = add_initializer(g, weight + "_int4", std::move(q.codes));
  names.scales = add_initializer(g, weight + "_int4_scales", std::move(q.scales));
  names.zero_points = add_initializer(g, weight + "_int4_zero_points", std::move(q.zero_points));
  return names;
}

// MatMul `n` becomes MatMulNBits reading `w`; it keeps its name, position and output.
void rewrite_node(ir::Node& n, const Written& w, int64_t k, int64_t cols, int64_t block) {
  n.domain = "com.microsoft";
  n.op_type = "MatMulNBits";
  n.inputs = {n.inputs[0], w.codes, w.scales, w.zero_points};
  n.attrs = AttrMap();
  n.attrs.set("K", int_attr(k));
  n.attrs.set("N", int_attr(cols));
  n.attrs.set("bits", int_attr(4));
  n.attrs.set("block_size", int_attr(block));
  n.attrs.set("accuracy_level", int_attr(4));
}

// The calibrated path, one stage per MatMul input tensor in node order: the samples run through
// `g` as quantized so far and through the float model; the input's statistics give each weight
// read from it its GPTQ target and factor; its readers are then rewritten, so later stages see
// their inputs as the quantized model computes them. A weight read from several inputs is
// rounded for the first. Memory stays flat in the sample count: each stage keeps two k x k sums.
Status quantize_int4_gptq(ir::Graph& g, const std::string& model_path, const std::vector<size_t>& targets,
                          const QuantizeOptions& o, CompressReport* report) {
  const ir::Graph reference = g;
  std::vector<std::string> stages;
  for (size_t i : targets)
    if (std::find(stages.begin(), stages.end(), g.nodes[i].inputs[0]) == stages.end())
      stages.push_back(g.nodes[i].inputs[0]);
  const auto pool = ThreadPool::shared(0, false);
  std::error_code ec;
  const std::string dir = std::filesystem::absolute(model_path, ec).parent_path().string();
  QuantizeOptions quiet = o;
  quiet.progress = nullptr;
  const std::string scheme = str_cat("int4 asymmetric block ", o.block_size, " gptq");
  std::map<std::string, Written> written;
  for (size_t s = 0; s < stages.size(); ++s) {
    const auto start = std::chrono::steady_clock::now();
    const std::string& a = stages[s];
    std::vector<size_t> readers;
    for (size_t i : targets)
      if (g.nodes[i].inputs[0] == a) readers.push_back(i);
    InputStatistics stats;
    stats.k = g.initializers.at(g.nodes[readers[0]].inputs[1]).dim(0);
    auto samples = run_calibration_pair(g, reference, dir, {a}, quiet, [&](size_t, const Tensor& x, const Tensor& x_ref) {
      if (x.dtype() != DType::F32 || x.rank() < 1 || x.dim(x.rank() - 1) != stats.k || x.shape() != x_ref.shape())
        return invalid_argument(str_cat("MatMul input '", a, "' is ", dtype_name(x.dtype()), " ", x.shape().str(),
                                        " in calibration, expected float32 [..., ", stats.k, "]"));
      const float* p = x.data_as<float>();
      const float* q = x_ref.data_as<float>();
      const int64_t k = stats.k, rows = k > 0 ? x.numel() / k : 0;
      // Rows holding a non-finite value are left out: one would poison the whole sum.
      auto finite = [&](const float* row) { return std::all_of(row, row + k, [](float v) { return std::isfinite(v); }); };
      int64_t first = 0;
      for (int64_t r = 0; r <= rows; ++r) {
        if (r < rows && finite(p + r * k) && finite(q + r * k)) continue;
        if (r > first) stats.add(p + first * k, q + first * k, r - first, pool.get());
        first = r + 1;
      }
      return Status::ok();
    });
    if (!samples) return samples.error();
    report->calibration_samples = *samples;
    for (size_t i : readers) {
      ir::Node& n = g.nodes[i];
      const std::string weight = n.inputs[1];
      const Tensor& w = g.initializers.at(weight);
      const int64_t k = w.dim(0), cols = w.dim(1);
      auto it = written.find(weight);
      if (it == written.end()) {
        double damp = 0.0;
        auto u = gptq_inverse_factor(stats.h, k, kGptqDamping, &damp, pool.get());
        if (!u) return Status(u.error().code(), str_cat("weight '", weight, "': ", u.error().message()));
        const Tensor target = gptq_target(w, stats, *u, damp, pool.get());
        const Int4Codes codes = gptq_int4(target, *u, o.block_size, pool.get());
        it = written.emplace(weight, write_int4(g, weight, n.op_type, w, codes, scheme, report)).first;
      }
      rewrite_node(g.nodes[i], it->second, k, cols, o.block_size);
    }
    if (o.progress) {
      const auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
      o.progress(str_cat("gptq ", s + 1, "/", stages.size(), " '", a, "': ", readers.size(), " MatMul on ",
                         stats.rows, " rows of ", *samples, " samples in ", ms, " ms"));
    }
  }
  return Status::ok();
}

}  // namespace

Status quantize_int4(ir::Graph& g, const std::string& model_path, const QuantizeOptions& o, CompressReport* report) {
  const std::set<std::string> excluded(o.exclude_nodes.begin(), o.exclude_nodes.end());
  std::vector<size_t> targets;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    if (!n.domain.empty() || (n.op_type != "MatMul" && n.op_type != "Gemm")) continue;
    const std::string why = skip_reason(g, n, o, excluded);
    if (!why.empty()) report->skipped.push_back(str_cat(n.label(), ": ", why));
    else targets.push_back(i);
  }
  if (!targets.empty() && !g.opsets.count("com.microsoft")) g.opsets["com.microsoft"] = 1;
  if (!o.calibration_data.empty()) {
    IGNIS_RETURN_IF_ERROR(quantize_int4_gptq(g, model_path, targets, o, report));
  } else {
    std::map<std::string, Written> written;  // float initializer -> its int4 initializers
    for (size_t i : targets) {
      ir::Node& n = g.nodes[i];
      const std::string weight = n.inputs[1];
      const Tensor& w = g.initializers.at(weight);
      auto it = written.find(weight);
      if (it == written.end()) {
        const Int4Codes codes = int4_round_to_nearest(w, o.block_size);
        it = written
                 .emplace(weight, write_int4(g, weight, n.op_type, w, codes,
                                             str_cat("int4 asymmetric block ", o.block_size), report))
                 .first;
      }
      rewrite_node(n, it->second, w.dim(0), w.dim(1), o.block_size);
    }
  }
  ir::remove_unused_initializers(g);
  return Status::ok();
}

}  // namespace ignis::compress
