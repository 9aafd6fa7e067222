// SPDX-License-Identifier: Apache-2.0
// Transformer op cases: ai.ignis Attention (1, 3 and 12 heads; query/key lengths 1, 7, 128
// and unequal; every mask form the schema allows, including a last axis of 1; a V width that
// differs from Q/K; a large scale that makes the softmax nearly one-hot; key lengths long
// enough to cut heads into several row blocks; empty and zero-width edges), ai.ignis
// SkipLayerNorm, LayerNormalization (each axis, scale/bias broadcast forms) and Softmax
// (opset 13 last axis and other axes, the coerced 2-D form of opset 11), with row lengths
// around the 8-lane vector width and the model sizes (384, 768).
#include <optional>

#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

// Attention outputs are convex combinations of V rows whose weights come from scores summed
// over d products; the weighted sum adds sk products: depth = d + sk. (The optimized kernel
// agreed within depth 1, i.e. 2e-6 * max(1, |ref|), on every case, scale 40 included.)
KernelCase attention(int64_t batch, int64_t sq, int64_t sk, int64_t heads, int64_t d, int64_t dv,
                     std::optional<Shape> mask, float scale = 0.0f) {
  KernelCase c;
  c.domain = "ai.ignis";
  c.op_type = "Attention";
  c.opset = 1;
  c.attrs.set("num_heads", int_attr(heads));
  if (scale != 0.0f) c.attrs.set("scale", float_attr(scale));
  c.inputs = {Shape{batch, sq, heads * d}, Shape{batch, sk, heads * d}, Shape{batch, sk, heads * dv}};
  if (mask) c.inputs.push_back(*mask);
  c.depth = d + sk;
  c.label = str_cat("B=", batch, " Sq=", sq, " Sk=", sk, " heads=", heads, " d=", d, " dv=", dv,
                    mask ? str_cat(" mask", mask->str()) : std::string(" no mask"),
                    scale != 0.0f ? str_cat(" scale=", scale) : std::string());
  return c;
}

}  // namespace

std::vector<KernelCase> attention_cases() {
  std::vector<KernelCase> cases;
  for (int64_t heads : {1, 3, 12})
    for (int64_t s : {1, 7, 128}) {
      const int64_t d = heads == 12 ? 8 : 32;
      cases.push_back(attention(1, s, s, heads, d, d, std::nullopt));
      cases.push_back(attention(1, s, s, heads, d, d, Shape{1, 1, 1, s}));
    }
  // Unequal lengths, odd head widths, batches, V wider or narrower than Q/K.
  cases.push_back(attention(2, 7, 13, 3, 5, 5, std::nullopt));
  cases.push_back(attention(1, 1, 128, 12, 64, 64, Shape{1, 1, 1, 128}));
  cases.push_back(attention(1, 128, 1, 2, 17, 9, std::nullopt));
  cases.push_back(attention(3, 9, 33, 2, 7, 11, std::nullopt));
  cases.push_back(attention(2, 5, 6, 4, 24, 25, std::nullopt));
  cases.push_back(attention(1, 37, 41, 1, 1, 1, std::nullopt));
  // Every mask form: padding, per-query, causal, full, lower ranks, a last axis of 1, scalar.
  const int64_t b = 2, h = 3, sq = 9, sk = 11;
  const Shape masks[] = {Shape{b, 1, 1, sk}, Shape{b, 1, sq, sk}, Shape{1, 1, sq, sk}, Shape{b, h, sq, sk},
                         Shape{1, h, 1, sk},  Shape{h, sq, sk},    Shape{sq, sk},       Shape{sk},
                         Shape{b, 1, sq, 1},  Shape{sq, 1},        Shape{1},            Shape{}};
  for (const Shape& m : masks) cases.push_back(attention(b, sq, sk, h, 8, 8, m));
  // Nearly one-hot softmax.
  cases.push_back(attention(1, 16, 19, 2, 8, 8, Shape{1, 1, 1, 19}, 40.0f));
  cases.push_back(attention(1, 7, 7, 1, 4, 4, std::nullopt, 0.25f));
  // Score blocks that outgrow L2: several row blocks per head, then very long keys.
  cases.push_back(attention(1, 200, 700, 1, 4, 3, Shape{1, 1, 200, 700}));
  cases.push_back(attention(1, 20, 9000, 1, 2, 2, Shape{1, 1, 1, 9000}));
  // Empty edges: no queries, no keys (zeros), zero-width Q/K heads (reference delegation).
  cases.push_back(attention(1, 0, 5, 2, 4, 4, std::nullopt));
  cases.push_back(attention(2, 3, 0, 2, 4, 4, std::nullopt));
  cases.push_back(attention(1, 4, 5, 3, 0, 2, std::nullopt));
  return cases;
}

namespace {

// Normalized values are O(1); mean and variance are sums over the row, so the row length is
// the depth.
// Bias needs Beta (inputs cannot be skipped here).
KernelCase skip_layer_norm(Shape x, Shape skip, bool beta, bool bias, float eps) {
  KernelCase c;
  c.domain = "ai.ignis";
  c.op_type = "SkipLayerNorm";
  c.opset = 1;
  const int64_t n = x.rank() ? x.back() : 1;
  c.inputs = {x, skip, Shape{n}};
  if (beta) c.inputs.push_back(Shape{n});
  if (beta && bias) c.inputs.push_back(Shape{n});
  if (eps != 1e-5f) c.attrs.set("epsilon", float_attr(eps));
  c.depth = n;
  c.label = str_cat("X", x.str(), " Skip", skip.str(), beta ? " beta" : " no beta", bias ? " bias" : " no bias",
                    " epsilon=", eps);
  return c;
}

}  // namespace

std::vector<KernelCase> skip_layer_norm_cases() {
  std::vector<KernelCase> cases;
  for (int64_t n : {1, 7, 8, 9, 31, 384, 768})
    for (int flags = 0; flags < 3; ++flags)
      cases.push_back(skip_layer_norm(Shape{2, 5, n}, Shape{2, 5, n}, flags >= 1, flags >= 2, 1e-5f));
  cases.push_back(skip_layer_norm(Shape{1, 128, 384}, Shape{1, 128, 384}, true, false, 1e-12f));
  cases.push_back(skip_layer_norm(Shape{3, 17}, Shape{3, 17}, true, true, 0.5f));
  cases.push_back(skip_layer_norm(Shape{13}, Shape{13}, true, true, 1e-5f));
  // Broadcast X and Skip (reference delegation), and an empty tensor.
  cases.push_back(skip_layer_norm(Shape{2, 7, 5}, Shape{7, 5}, true, true, 1e-5f));
  cases.push_back(skip_layer_norm(Shape{1, 5}, Shape{4, 5}, true, false, 1e-5f));
  cases.push_back(skip_layer_norm(Shape{0, 5}, Shape{0, 5}, true, false, 1e-5f));
  return cases;
}

namespace {

KernelCase layer_norm(Shape x, int64_t axis, Shape scale, std::optional<Shape> bias, float eps = 1e-5f) {
  KernelCase c;
  c.op_type = "LayerNormalization";
  c.opset = 17;
  if (axis != -1) c.attrs.set("axis", int_attr(axis));
  if (eps != 1e-5f) c.attrs.set("epsilon", float_attr(eps));
  c.inputs = {x, scale};
  if (bias) c.inputs.push_back(*bias);
  const int a = static_cast<int>(axis < 0 ? axis + x.rank() : axis);
  c.depth = std::max<int64_t>(1, x.numel(a, x.rank()));
  c.label = str_cat("X", x.str(), " axis=", axis, " Scale", scale.str(),
                    bias ? str_cat(" B", bias->str()) : std::string(" no B"), " epsilon=", eps);
  return c;
}

}  // namespace

std::vector<KernelCase> layer_norm_cases() {
  std::vector<KernelCase> cases;
  for (int64_t n : {1, 5, 8, 17, 384}) {
    cases.push_back(layer_norm(Shape{3, 4, n}, -1, Shape{n}, Shape{n}));
    cases.push_back(layer_norm(Shape{3, 4, n}, -1, Shape{n}, std::nullopt));
  }
  cases.push_back(layer_norm(Shape{1, 128, 768}, -1, Shape{768}, Shape{768}, 1e-12f));
  // Several normalized axes, with scale/bias shaped like them or with leading 1s.
  cases.push_back(layer_norm(Shape{2, 3, 5}, 1, Shape{3, 5}, Shape{3, 5}));
  cases.push_back(layer_norm(Shape{2, 3, 5}, -2, Shape{1, 3, 5}, Shape{3, 5}));
  cases.push_back(layer_norm(Shape{2, 3, 5}, 0, Shape{2, 3, 5}, Shape{2, 3, 5}));
  cases.push_back(layer_norm(Shape{7}, 0, Shape{7}, Shape{7}, 0.25f));
  // Broadcast scale/bias forms other than the row (reference delegation).
  cases.push_back(layer_norm(Shape{2, 3, 5}, 1, Shape{5}, Shape{3, 1}));
  cases.push_back(layer_norm(Shape{2, 3, 5}, -1, Shape{1}, Shape{5}));
  cases.push_back(layer_norm(Shape{0, 5}, -1, Shape{5}, Shape{5}));
  return cases;
}

std::vector<KernelCase> ignis_layer_norm_cases() {
  std::vector<KernelCase> cases = layer_norm_cases();
  for (auto& c : cases) {
    c.domain = "ai.ignis";
    c.opset = 1;
  }
  return cases;
}

namespace {

KernelCase softmax(Shape x, std::optional<int64_t> axis, int64_t opset) {
  KernelCase c;
  c.op_type = "Softmax";
  c.opset = opset;
  if (axis) c.attrs.set("axis", int_attr(*axis));
  c.inputs = {x};
  c.depth = 1;
  c.label = str_cat("X", x.str(), axis ? str_cat(" axis=", *axis) : std::string(" default axis"), " opset ", opset);
  return c;
}

}  // namespace

std::vector<KernelCase> softmax_cases() {
  std::vector<KernelCase> cases;
  for (int64_t n : {1, 7, 8, 9, 16, 17, 33, 128, 1000}) cases.push_back(softmax(Shape{3, n}, std::nullopt, 13));
  cases.push_back(softmax(Shape{1, 12, 128, 128}, -1, 13));
  cases.push_back(softmax(Shape{2, 3, 5}, 2, 13));
  cases.push_back(softmax(Shape{2, 3, 5}, 1, 13));  // not the last axis (reference delegation)
  cases.push_back(softmax(Shape{2, 3, 5}, 0, 13));
  cases.push_back(softmax(Shape{3, 0}, std::nullopt, 13));
  cases.push_back(softmax(Shape{0, 4}, std::nullopt, 13));
  // Opset 11: coerced to 2-D at the axis (default 1).
  cases.push_back(softmax(Shape{2, 3, 5}, std::nullopt, 11));
  cases.push_back(softmax(Shape{2, 3, 5}, 0, 11));
  cases.push_back(softmax(Shape{2, 3, 5}, 2, 11));
  cases.push_back(softmax(Shape{2, 3, 5}, -1, 11));
  cases.push_back(softmax(Shape{4, 9}, std::nullopt, 11));
  return cases;
}

}  // namespace ignis::kernel_cases
