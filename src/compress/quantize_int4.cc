// SPDX-License-Identifier: Apache-2.0
// 4-bit weight-only quantization of MatMul, written as com.microsoft MatMulNBits (onnxruntime's
// contrib op, so onnxruntime runs the result too):
//
//   MatMul(x, W [K, N] float32)  ─►  MatMulNBits(x, B uint8 [N, blocks, block / 2], scales, zero_points)
//
// Each column of W is cut into blocks of block_size depths (the last may be partial). Per block
// the codes are asymmetric: range [lo, hi] = [min(0, min w), max(0, max w)], each end possibly
// narrowed toward 0 where that leaves less squared error (best_grid), scale = (hi - lo) / 15,
// zero point z = round(-lo / scale) in [0, 15], q = clamp(round(w / scale) + z, 0, 15), so
// w ~= (q - z) * scale with error <= scale / 2 inside the range. Asymmetric codes use all 16
// levels on one-sided blocks where a symmetric grid would waste half of them; that costs one
// 4-bit zero point per block. Codes are packed two per byte, low nibble first, as are the zero
// points (ceil(blocks / 2) bytes per column); depths past K get code z (they dequantize to 0).
// accuracy_level 4 lets the kernel round A to int8 per block (the batch-1 fast path).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "compress/graph_edit.h"
#include "compress/quantize_graph.h"
#include "core/strings.h"
#include "ir/rewrite.h"

namespace ignis::compress {

namespace {

// Narrowed ranges tried per block end: 1 - 0.05 a for a < 8 (down to 65% of the range).
constexpr int kShrinkSteps = 8;
constexpr float kShrinkStep = 0.05f;

struct Int4Weight {
  Tensor codes, scales, zero_points;
  float max_abs = 0.0f, max_abs_error = 0.0f;
  int64_t zeros = 0;  // weights that dequantize to 0
};

struct BlockGrid {
  float scale = 1.0f;
  int zero_point = 0;
};

// The grid over [lo, hi] (lo <= 0 <= hi): scale (hi - lo) / 15, zero point round(-lo / scale).
BlockGrid grid_of(float lo, float hi) {
  BlockGrid g;
  g.scale = hi > lo ? (hi - lo) / 15.0f : 1.0f;
  g.zero_point = static_cast<int>(std::clamp(std::nearbyint(-lo / g.scale), 0.0f, 15.0f));
  return g;
}

double squared_error(const float* x, int64_t stride, int64_t count, const BlockGrid& g) {
  double e = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const float v = x[i * stride];
    const float q = std::clamp(std::nearbyint(v / g.scale) + static_cast<float>(g.zero_point), 0.0f, 15.0f);
    const double d = static_cast<double>(v) - static_cast<double>((q - static_cast<float>(g.zero_point)) * g.scale);
    e += d * d;
  }
  return e;
}

// The block's grid: the full range [lo, hi] or one narrowed toward 0 at either end, whichever
// leaves the least squared error over the block's `count` values (`stride` apart). Clipping a
// rare outlier buys a finer step for every other value.
BlockGrid best_grid(const float* x, int64_t stride, int64_t count, float lo, float hi) {
  BlockGrid best = grid_of(lo, hi);
  double best_error = squared_error(x, stride, count, best);
  for (int a = 0; a < kShrinkSteps; ++a) {
    for (int b = 0; b < kShrinkSteps; ++b) {
      if (a == 0 && b == 0) continue;
      const BlockGrid g = grid_of(lo * (1.0f - kShrinkStep * static_cast<float>(a)),
                                  hi * (1.0f - kShrinkStep * static_cast<float>(b)));
      const double e = squared_error(x, stride, count, g);
      if (e < best_error) {
        best_error = e;
        best = g;
      }
    }
  }
  return best;
}

// W [K, N] float32 into MatMulNBits' B, scales and zero_points (see the file comment).
Int4Weight quantize_int4_blocks(const Tensor& w, int64_t block) {
  const int64_t k = w.dim(0), n = w.dim(1);
  const int64_t blocks = (k + block - 1) / block, zp_row = (blocks + 1) / 2;
  Int4Weight out;
  out.codes = Tensor::zeros(DType::U8, Shape{n, blocks, block / 2});
  out.scales = Tensor::empty(DType::F32, Shape{n * blocks});
  out.zero_points = Tensor::zeros(DType::U8, Shape{n * zp_row});
  const float* x = w.data_as<float>();
  uint8_t* codes = out.codes.data_as<uint8_t>();
  uint8_t* zps = out.zero_points.data_as<uint8_t>();
  for (int64_t col = 0; col < n; ++col) {
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t k0 = b * block, k1 = std::min(k, k0 + block);
      float lo = 0.0f, hi = 0.0f;
      for (int64_t i = k0; i < k1; ++i) {
        lo = std::min(lo, x[i * n + col]);
        hi = std::max(hi, x[i * n + col]);
      }
      const BlockGrid grid = best_grid(x + k0 * n + col, n, k1 - k0, lo, hi);
      const float scale = grid.scale;
      const int zp = grid.zero_point;
      out.scales.data_as<float>()[col * blocks + b] = scale;
      zps[col * zp_row + b / 2] |= static_cast<uint8_t>(b % 2 == 0 ? zp : zp << 4);
      uint8_t* blob = codes + (col * blocks + b) * (block / 2);
      for (int64_t i = 0; i < block; ++i) {
        int q = zp;
        if (k0 + i < k1) {
          const float v = x[(k0 + i) * n + col];
          q = static_cast<int>(std::clamp(std::nearbyint(v / scale) + static_cast<float>(zp), 0.0f, 15.0f));
          const float back = static_cast<float>(q - zp) * scale;
          out.max_abs = std::max(out.max_abs, std::fabs(v));
          out.max_abs_error = std::max(out.max_abs_error, std::fabs(v - back));
          out.zeros += q == zp;
        }
        blob[i / 2] |= static_cast<uint8_t>(i % 2 == 0 ? q : q << 4);
      }
    }
  }
  return out;
}

}  // namespace

Status quantize_int4(ir::Graph& g, const QuantizeOptions& o, CompressReport* report) {
  const std::set<std::string> excluded(o.exclude_nodes.begin(), o.exclude_nodes.end());
  struct Written {
    std::string codes, scales, zero_points;
  };
  std::map<std::string, Written> written;  // float initializer -> its int4 initializers
  for (ir::Node& n : g.nodes) {
    if (!n.domain.empty() || (n.op_type != "MatMul" && n.op_type != "Gemm")) continue;
    std::string why;
    const Tensor* w = ir::constant_value(g, n.inputs[1]);
    if (n.op_type == "Gemm") why = "Gemm is not rewritten (int4 covers MatMul)";
    else if (w == nullptr || !g.initializers.count(n.inputs[1])) why = "B is computed, not a constant initializer";
    else if (w->dtype() != DType::F32) why = str_cat("B has dtype ", dtype_name(w->dtype()), ", not float32");
    else if (w->rank() != 2) why = str_cat("B is ", w->rank(), "-D, not 2-D");
    else if (ir::constant_value(g, n.inputs[0]) != nullptr) why = "A is a constant (constant folding's job)";
    else if (w->numel() < o.min_elements.value_or(0))
      why = str_cat("B has ", w->numel(), " elements, below the minimum of ", *o.min_elements);
    else if (excluded.count(n.name)) why = "excluded";
    if (!why.empty()) {
      report->skipped.push_back(str_cat(n.label(), ": ", why));
      continue;
    }
    const std::string weight = n.inputs[1];
    const int64_t k = w->dim(0), cols = w->dim(1);
    auto it = written.find(weight);
    if (it == written.end()) {
      Int4Weight q = quantize_int4_blocks(*w, o.block_size);
      WeightChange change;
      change.value = weight;
      change.op_type = n.op_type;
      change.scheme = str_cat("int4 asymmetric block ", o.block_size);
      change.elements = w->numel();
      change.zeros_before = std::count(w->data_as<float>(), w->data_as<float>() + w->numel(), 0.0f);
      change.zeros_after = q.zeros;
      change.max_abs = q.max_abs;
      change.max_abs_error = q.max_abs_error;
      report->parameters_changed += change.elements;
      report->changed.push_back(std::move(change));
      Written names;
      names.codes = add_initializer(g, weight + "_int4", std::move(q.codes));
      names.scales = add_initializer(g, weight + "_int4_scales", std::move(q.scales));
      names.zero_points = add_initializer(g, weight + "_int4_zero_points", std::move(q.zero_points));
      it = written.emplace(weight, names).first;
    }
    // Rewritten in place: the node keeps its name, position and output.
    n.domain = "com.microsoft";
    n.op_type = "MatMulNBits";
    n.inputs = {n.inputs[0], it->second.codes, it->second.scales, it->second.zero_points};
    n.attrs = AttrMap();
    n.attrs.set("K", int_attr(k));
    n.attrs.set("N", int_attr(cols));
    n.attrs.set("bits", int_attr(4));
    n.attrs.set("block_size", int_attr(o.block_size));
    n.attrs.set("accuracy_level", int_attr(4));
  }
  if (!written.empty() && !g.opsets.count("com.microsoft")) g.opsets["com.microsoft"] = 1;
  ir::remove_unused_initializers(g);
  return Status::ok();
}

}  // namespace ignis::compress
