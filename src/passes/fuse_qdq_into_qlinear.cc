// SPDX-License-Identifier: Apache-2.0
// Rewrites the QDQ form of a statically quantized convolution or matrix product into the
// integer op, so that it runs in int8 instead of dequantize -> float op -> quantize:
//   QuantizeLinear(Conv(DQ(x_q), DQ(w_q), [DQ(b_i32) | b]) [-> Relu | Clip], y_s, y_zp)
//     =>  QLinearConv(x_q, x_s, x_zp, w_q, w_s, w_zp, y_s, y_zp, [b_i32])
//   QuantizeLinear(MatMul(DQ(a_q), DQ(b_q)) [-> Relu | Clip])  (or Gemm without C, alpha 1, no transA)
//     =>  QLinearMatMul(a_q, a_s, a_zp, b_q', b_s, b_zp, y_s, y_zp)
//   (b_q constant weights, or, for MatMul, a tensor computed at run time: attention's products)
// and, at level All (onnxruntime's contrib op is no standard ONNX), fuse_qdq_into_qlinear_add:
//   QuantizeLinear(Add(DQ(a_q), DQ(b_q)) [-> Relu | Clip], y_s, y_zp)   (a residual sum)
//     =>  com.microsoft QLinearAdd(a_q, a_s, a_zp, b_q, b_s, b_zp, y_s, y_zp)
// and fuse_qdq_into_qlinear_mul likewise (a squeeze-excitation gate times its feature map):
//   QuantizeLinear(Mul(DQ(a_q), DQ(b_q)) [-> Relu | Clip], y_s, y_zp)
//     =>  com.microsoft QLinearMul(a_q, a_s, a_zp, b_q, b_s, b_zp, y_s, y_zp)
// and fuse_qdq_into_qlinear_global_average_pool (level All, the same reason):
//   QuantizeLinear(GlobalAveragePool(DQ(x_q)), y_s, y_zp)
//     =>  com.microsoft QLinearGlobalAveragePool(x_q, x_s, x_zp, y_s, y_zp)
// and fuse_qdq_gemm_into_matmul_integer (level All: an ai.ignis op):
//   Gemm(DQ(a_q), DQ(w_q), bias)  =>  ai.ignis MatMulIntegerToFloat(a_q, w_q', a_s * w_s, a_zp, w_zp, bias)
//   MatMul(DQ(a_q), DQ(w_q)) [+ constant bias], float output  =>  the same
// This is what onnxruntime's quantize_static (QDQ format) and `ignis quantize --calibrate`
// write. Both results are the exact integer sum requantized once; the QDQ graph instead
// rounds the float products and sums, so the two may differ by one step of y where the exact
// value lies near a rounding boundary. QLinearAdd scales each input by its scale over y's
// (kernels/qlinear_add.h) where the QDQ graph divides the float sum by y's scale: again within
// one step of y. It reads two byte tensors where the QDQ form writes and reads three float
// ones. Its inputs and y are of one type, all per tensor; they may broadcast.
// Legality: every scale and zero point is a constant (zero points present: their type names
// the quantized type), float32, per tensor for x, y and a; per tensor or one per output
// channel along axis 0 for conv weights, one per column along axis 1 for MatMul weights (0 for
// a Gemm's transposed weights, which are transposed here); the weights are uint8/int8
// constants, or a MatMul's B is any uint8/int8 tensor with per-tensor parameters; the float
// op's output (and the Relu's or Clip's) feeds only the next node of the pattern and is not a
// graph output. A Relu, or a Clip with constant bounds, folds only when y's saturation
// already clamps there (Relu: y's zero point is its type's minimum). The bias: a
// DequantizeLinear of an int32 constant with scale x_s * w_s[c] (as the quantizers write it)
// and zero point 0 is used as it is; any other constant bias b becomes round_half_even(b /
// (x_s * w_s[c])) in int32, as onnxruntime's quantizer computes it.
// Runs before fold_constants, which would otherwise fold DQ(w_q) into float weights.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"
#include "passes/qdq_params.h"

namespace ignis::passes {

namespace {

// The weights DequantizeLinear(w_q constant) producing `value`, with parameters per tensor or
// one per entry of w_q's axis `axis`.
struct WeightMatch {
  int node = -1;
  const Tensor* w = nullptr;
  QParams params;
};

std::optional<WeightMatch> weight_dq(const ir::Graph& g, const GraphIndex& index, const std::string& value, int axis,
                                     int min_rank, int max_rank) {
  const int i = index.producer(value);
  if (i < 0 || !is_onnx(g.nodes[i], "DequantizeLinear")) return std::nullopt;
  const ir::Node& dq = g.nodes[i];
  const Tensor* w = ir::constant_value(g, dq.inputs[0]);
  if (!w || (w->dtype() != DType::U8 && w->dtype() != DType::I8) || w->rank() < min_rank || w->rank() > max_rank)
    return std::nullopt;
  auto p = constant_params(g, dq);
  if (!p || p->zero_point->dtype() != w->dtype()) return std::nullopt;
  if (p->count() != 1) {
    const int64_t a = p->axis < 0 ? p->axis + w->rank() : p->axis;
    if (a != axis || p->count() != w->dim(axis)) return std::nullopt;
  }
  return WeightMatch{i, w, *p};
}

// The int32 bias of QLinearConv for the Conv bias `value` (a DQ of an int32 constant, or a float
// constant), given x's scale and the weights' scales; its name (a new initializer unless the
// DQ's int32 constant serves as it is) and the DQ node to drop (-1 when none).
std::optional<std::pair<std::string, int>> int32_bias(ir::Graph& g, const GraphIndex& index, const std::string& value,
                                                      float x_scale, const QParams& w, int64_t channels,
                                                      const std::string& base) {
  std::vector<double> b(static_cast<size_t>(channels));
  const int di = index.producer(value);
  int drop = -1;
  if (di >= 0 && is_onnx(g.nodes[di], "DequantizeLinear")) {
    const ir::Node& dq = g.nodes[di];
    const Tensor* q = ir::constant_value(g, dq.inputs[0]);
    const Tensor* s = dq.inputs.size() > 1 ? ir::constant_value(g, dq.inputs[1]) : nullptr;
    const Tensor* z = dq.inputs.size() > 2 && !dq.inputs[2].empty() ? ir::constant_value(g, dq.inputs[2]) : nullptr;
    const bool has_z = dq.inputs.size() > 2 && !dq.inputs[2].empty();
    if (!q || q->dtype() != DType::I32 || q->numel() != channels || !s || s->dtype() != DType::F32 ||
        (s->numel() != 1 && s->numel() != channels) || (has_z && (!z || z->dtype() != DType::I32)))
      return std::nullopt;
    bool exact = true;
    for (int64_t c = 0; c < channels; ++c) {
      const int32_t zc = z ? z->data_as<int32_t>()[z->numel() == 1 ? 0 : c] : 0;
      const float sc = s->data_as<float>()[s->numel() == 1 ? 0 : c];
      const float want = x_scale * w.scale->data_as<float>()[w.count() == 1 ? 0 : c];
      exact &= zc == 0 && sc == want;
      b[static_cast<size_t>(c)] = static_cast<double>(static_cast<float>(q->data_as<int32_t>()[c] - zc) * sc);
    }
    if (index.single_use(value)) drop = di;
    if (exact) return std::make_pair(dq.inputs[0], drop);
  } else {
    const Tensor* f = ir::constant_value(g, value);
    if (!f || f->dtype() != DType::F32 || f->numel() != channels) return std::nullopt;
    for (int64_t c = 0; c < channels; ++c) b[static_cast<size_t>(c)] = f->data_as<float>()[c];
  }
  Tensor out = Tensor::empty(DType::I32, Shape{channels});
  for (int64_t c = 0; c < channels; ++c) {
    const double s = static_cast<double>(x_scale * w.scale->data_as<float>()[w.count() == 1 ? 0 : c]);
    const double r = s > 0 ? std::nearbyint(b[static_cast<size_t>(c)] / s) : 0.0;
    out.data_as<int32_t>()[c] = static_cast<int32_t>(
        std::clamp(r, static_cast<double>(std::numeric_limits<int32_t>::min()), static_cast<double>(std::numeric_limits<int32_t>::max())));
  }
  const std::string name = ir::unique_value_name(g, base + "_bias_i32");
  g.initializers[name] = std::move(out);
  return std::make_pair(name, drop);
}

// [N x K] int8/uint8 as [K x N].
Tensor transposed(const Tensor& w) {
  const int64_t n = w.dim(0), k = w.dim(1);
  Tensor t = Tensor::empty(w.dtype(), Shape{k, n});
  const auto* src = static_cast<const uint8_t*>(w.data());
  auto* dst = static_cast<uint8_t*>(t.data());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) dst[j * n + i] = src[i * k + j];
  return t;
}

// Whether Q(Clip(x, lo, hi), y_s, y_zp) == Q(x, y_s, y_zp) for every x: y's own saturation
// clamps at least as tightly, Q(lo) being the type's minimum and Q(hi) its maximum (a Relu is
// Clip(0, inf): y_zp must be the minimum). A hundredth of a step keeps rounding ties out.
bool saturation_implies(const QParams& y, float lo, float hi) {
  const bool u8 = y.zero_point->dtype() == DType::U8;
  const double qmin = u8 ? 0.0 : -128.0, qmax = u8 ? 255.0 : 127.0;
  const double scale = y.scale->data_as<float>()[0], zp = zero_point_value(y, 0);
  if (!(scale > 0.0)) return false;
  const bool low = lo == -std::numeric_limits<float>::infinity() || lo / scale + zp <= qmin + 0.49;
  const bool high = hi == std::numeric_limits<float>::infinity() || hi / scale + zp >= qmax - 0.49;
  return low && high;
}

// The QuantizeLinear qi (per-tensor constant parameters) and the optional Relu or Clip before
// it: the nodes matched, and the node producing what they quantize; each value between feeds
// only the next node. The Relu / Clip folds only when y's saturation implies it.
struct QuantizedTail {
  std::vector<int> pattern;
  int op = -1;
};

std::optional<QuantizedTail> quantized_tail(const ir::Graph& g, const GraphIndex& index, int qi) {
  const ir::Node& q = g.nodes[qi];
  if (!is_onnx(q, "QuantizeLinear") || q.outputs.size() != 1) return std::nullopt;
  const auto yp = constant_params(g, q);
  if (!yp || yp->count() != 1) return std::nullopt;
  QuantizedTail t{{qi}, -1};
  std::string v = q.inputs[0];
  if (!index.single_use(v)) return std::nullopt;
  int oi = index.producer(v);
  if (oi < 0) return std::nullopt;
  std::optional<std::pair<float, float>> clamp;
  if (is_onnx(g.nodes[oi], "Relu")) clamp = std::pair{0.0f, std::numeric_limits<float>::infinity()};
  if (is_onnx(g.nodes[oi], "Clip")) {
    clamp = constant_clip_bounds(g, g.nodes[oi]);
    if (!clamp) return std::nullopt;
  }
  if (clamp) {
    if (!saturation_implies(*yp, clamp->first, clamp->second)) return std::nullopt;
    t.pattern.push_back(oi);
    v = g.nodes[oi].inputs[0];
    if (!index.single_use(v)) return std::nullopt;
    oi = index.producer(v);
    if (oi < 0) return std::nullopt;
  }
  t.op = oi;
  return t;
}

}  // namespace

namespace {

// Q(op(DQ(a), DQ(b)) [-> Relu | Clip]) => com.microsoft `fused_op`(a, .., b, .., y_s, y_zp) for the
// float op `op` (Add or Mul).
Result<int> fuse_qdq_binary(ir::Graph& g, std::string_view op, std::string_view fused_op) {
  return rewrite_all(g, [&](const GraphIndex& index, int qi) -> Result<bool> {
    auto tail = quantized_tail(g, index, qi);
    if (!tail || !is_onnx(g.nodes[tail->op], op)) return false;
    const ir::Node& q = g.nodes[qi];
    const ir::Node& node = g.nodes[tail->op];
    if (node.inputs.size() != 2 || node.outputs.size() != 1) return false;
    const auto a = per_tensor_dq(g, index, node.inputs[0]);
    const auto b = per_tensor_dq(g, index, node.inputs[1]);
    if (!a || !b) return false;
    const DType t = a->second.zero_point->dtype();
    if (b->second.zero_point->dtype() != t || constant_params(g, q)->zero_point->dtype() != t) return false;
    tail->pattern.push_back(tail->op);
    ir::Node fused;
    fused.name = node.name;
    fused.op_type = std::string(fused_op);
    fused.domain = "com.microsoft";
    fused.inputs = {g.nodes[a->first].inputs[0], a->second.scale_name, a->second.zero_point_name,
                    g.nodes[b->first].inputs[0], b->second.scale_name, b->second.zero_point_name,
                    q.inputs[1], q.inputs[2]};
    fused.outputs = {q.outputs[0]};
    import_microsoft_domain(g);
    replace_nodes(g, std::move(tail->pattern), std::move(fused));
    return true;
  });
}

}  // namespace

// Q(Add(DQ(a), DQ(b)) [-> Relu | Clip]) => com.microsoft QLinearAdd(a, .., b, .., y_s, y_zp).
Result<int> fuse_qdq_into_qlinear_add(ir::Graph& g, const PassContext&) { return fuse_qdq_binary(g, "Add", "QLinearAdd"); }

// Q(Mul(DQ(a), DQ(b)) [-> Relu | Clip]) => com.microsoft QLinearMul(a, .., b, .., y_s, y_zp): a
// squeeze-excitation gate applied to its feature map.
Result<int> fuse_qdq_into_qlinear_mul(ir::Graph& g, const PassContext&) { return fuse_qdq_binary(g, "Mul", "QLinearMul"); }

// Q(GlobalAveragePool(DQ(x))) => com.microsoft QLinearGlobalAveragePool(x, x_s, x_zp, y_s, y_zp):
// the integer sum of each channel requantized once (kernels/ref/quantize_pool.cc), within one
// step of y of the QDQ graph's float mean.
Result<int> fuse_qdq_into_qlinear_global_average_pool(ir::Graph& g, const PassContext&) {
  return rewrite_all(g, [&](const GraphIndex& index, int qi) -> Result<bool> {
    auto tail = quantized_tail(g, index, qi);
    if (!tail || !is_onnx(g.nodes[tail->op], "GlobalAveragePool")) return false;
    const ir::Node& q = g.nodes[qi];
    const ir::Node& pool = g.nodes[tail->op];
    if (pool.inputs.size() != 1 || pool.outputs.size() != 1) return false;
    const auto x = per_tensor_dq(g, index, pool.inputs[0]);
    if (!x) return false;
    if (constant_params(g, q)->zero_point->dtype() != x->second.zero_point->dtype()) return false;
    tail->pattern.push_back(tail->op);
    // The DequantizeLinear goes too unless others read it (a squeeze-excitation's Mul reads the
    // map the pool averages).
    if (index.single_use(pool.inputs[0])) tail->pattern.push_back(x->first);
    ir::Node fused;
    fused.name = pool.name;
    fused.op_type = "QLinearGlobalAveragePool";
    fused.domain = "com.microsoft";
    fused.inputs = {g.nodes[x->first].inputs[0], x->second.scale_name, x->second.zero_point_name, q.inputs[1],
                    q.inputs[2]};
    fused.outputs = {q.outputs[0]};
    import_microsoft_domain(g);
    replace_nodes(g, std::move(tail->pattern), std::move(fused));
    return true;
  });
}

namespace {

// The bias of a fused int8 product as float32 [n]: a float constant, or the DequantizeLinear of
// an int32 constant (per tensor or per column), dequantized as DequantizeLinear computes it.
std::optional<Tensor> float_bias(const ir::Graph& g, const GraphIndex& index, const std::string& value, int64_t n) {
  Tensor bias = Tensor::empty(DType::F32, Shape{n});
  float* bf = bias.data_as<float>();
  if (const Tensor* c = ir::constant_value(g, value); c != nullptr) {
    if (c->dtype() != DType::F32 || c->numel() != n || c->rank() != 1) return std::nullopt;
    std::copy_n(c->data_as<float>(), n, bf);
    return bias;
  }
  const int di = index.producer(value);
  if (di < 0 || !is_onnx(g.nodes[di], "DequantizeLinear")) return std::nullopt;
  const ir::Node& dq = g.nodes[di];
  const Tensor* q = ir::constant_value(g, dq.inputs[0]);
  const Tensor* sc = dq.inputs.size() > 1 ? ir::constant_value(g, dq.inputs[1]) : nullptr;
  const bool has_z = dq.inputs.size() > 2 && !dq.inputs[2].empty();
  const Tensor* z = has_z ? ir::constant_value(g, dq.inputs[2]) : nullptr;
  if (!q || q->dtype() != DType::I32 || q->numel() != n || !sc || sc->dtype() != DType::F32 ||
      (sc->numel() != 1 && sc->numel() != n) || (has_z && (!z || z->dtype() != DType::I32 || z->numel() != sc->numel())))
    return std::nullopt;
  for (int64_t c = 0; c < n; ++c) {
    const int64_t k = sc->numel() == 1 ? 0 : c;
    const int32_t zc = z ? z->data_as<int32_t>()[k] : 0;
    bf[c] = static_cast<float>(q->data_as<int32_t>()[c] - zc) * sc->data_as<float>()[k];
  }
  return bias;
}

// product(DQ(a_q), DQ(w_q)) [+ bias] with float output, the nodes `pattern` (the product, and
// the bias Add where there is one), as ai.ignis MatMulIntegerToFloat(a_q, w_q', a_s * w_s,
// a_zp, w_zp, bias). `a` is the per-tensor DQ of the product's A, `w` the weights' DQ (w_q
// [K, N], or [N, K] when trans_b).
void replace_with_matmul_integer(ir::Graph& g, std::vector<int> pattern, const ir::Node& product,
                                 const std::pair<int, QParams>& a, const WeightMatch& w, bool trans_b,
                                 std::optional<Tensor> bias, std::vector<std::string> outputs) {
  const int64_t n = w.w->dim(trans_b ? 0 : 1);
  // One scale per column: a_s * w_s[c], as the float product's operands carry them.
  const float a_scale = a.second.scale->data_as<float>()[0];
  Tensor scale = Tensor::empty(DType::F32, Shape{n});
  for (int64_t c = 0; c < n; ++c)
    scale.data_as<float>()[c] = a_scale * w.params.scale->data_as<float>()[w.params.count() == 1 ? 0 : c];
  const std::string base = product.name.empty() ? product.outputs[0] : product.name;
  std::string b_name = g.nodes[w.node].inputs[0];
  if (trans_b) {
    b_name = ir::unique_value_name(g, b_name + "_t");
    g.initializers[b_name] = transposed(*w.w);
  }
  const std::string scale_name = ir::unique_value_name(g, base + "_scale");
  g.initializers[scale_name] = std::move(scale);
  ir::Node fused;
  fused.name = product.name;
  fused.op_type = "MatMulIntegerToFloat";
  fused.domain = "ai.ignis";
  fused.inputs = {g.nodes[a.first].inputs[0], b_name, scale_name, a.second.zero_point_name, w.params.zero_point_name};
  if (bias) {
    const std::string bias_name = ir::unique_value_name(g, base + "_bias");
    g.initializers[bias_name] = std::move(*bias);
    fused.inputs.push_back(bias_name);
  }
  fused.outputs = std::move(outputs);
  import_ignis_domain(g);
  replace_nodes(g, std::move(pattern), std::move(fused));
  ir::remove_unused_initializers(g);
}

}  // namespace

// Gemm(DQ(a_q), DQ(w_q), bias) with float output (a classifier head: QLinearMatMul has no
// bias), and MatMul(DQ(a_q), DQ(w_q)) [+ constant bias] with float output (a transformer's
// projections, whose outputs `ignis quantize` leaves float: the bias and residual adds that
// read them run in float32) => ai.ignis MatMulIntegerToFloat(a_q, w_q', a_s * w_s, a_zp, w_zp,
// bias): the int8 product of the quantized operands, scaled and biased as it is stored,
// instead of a float product on weights dequantized to float32 (four times the bytes). The
// bias is a float constant or the DequantizeLinear of an int32 constant, dequantized here as
// DequantizeLinear computes it; a MatMul's is the constant [N] of the Add that alone reads it.
// A MatMul whose output is quantized is QLinearMatMul's (fuse_qdq_into_qlinear, which runs
// first). A MatMul of two quantized activations with a float output (attention's products as
// `ignis quantize` leaves them) stays a float MatMul of the dequantized operands: as
// MatMulIntegerToFloat, packing B per call for each of 12 heads, all-MiniLM-L6-v2's twelve
// took 3.1-3.3 ms against 0.9 (2 threads, Zen 4).
Result<int> fuse_qdq_gemm_into_matmul_integer(ir::Graph& g, const PassContext&) {
  return rewrite_all(g, [&](const GraphIndex& index, int gi) -> Result<bool> {
    const ir::Node& node = g.nodes[gi];
    if (node.outputs.size() != 1) return false;
    if (is_onnx(node, "MatMul")) {
      if (node.inputs.size() != 2) return false;
      const auto a = per_tensor_dq(g, index, node.inputs[0]);
      if (!a) return false;
      const auto w = weight_dq(g, index, node.inputs[1], 1, 2, 2);
      if (!w) return false;
      std::vector<int> pattern = {gi};
      std::vector<std::string> outputs = node.outputs;
      std::optional<Tensor> bias;
      if (const auto add = constant_bias_add(g, index, node.outputs[0], w->w->dim(1))) {
        bias = float_bias(g, index, add->second, w->w->dim(1));
        pattern.push_back(add->first);
        outputs = g.nodes[add->first].outputs;
      }
      replace_with_matmul_integer(g, std::move(pattern), node, *a, *w, false, std::move(bias), std::move(outputs));
      return true;
    }
    if (!is_onnx(node, "Gemm") || node.inputs.size() != 3 || node.inputs[2].empty()) return false;
    if (node.attrs.get_int("transA", 0) != 0 || node.attrs.get_float("alpha", 1.0f) != 1.0f ||
        node.attrs.get_float("beta", 1.0f) != 1.0f)
      return false;
    const auto a = per_tensor_dq(g, index, node.inputs[0]);
    if (!a) return false;
    const bool trans_b = node.attrs.get_int("transB", 0) != 0;
    const auto w = weight_dq(g, index, node.inputs[1], trans_b ? 0 : 1, 2, 2);
    if (!w) return false;
    auto bias = float_bias(g, index, node.inputs[2], w->w->dim(trans_b ? 0 : 1));
    if (!bias) return false;
    replace_with_matmul_integer(g, {gi}, node, *a, *w, trans_b, std::move(bias), node.outputs);
    return true;
  });
}

Result<int> fuse_qdq_into_qlinear(ir::Graph& g, const PassContext&) {
  return rewrite_all(g, [&](const GraphIndex& index, int qi) -> Result<bool> {
    auto tail = quantized_tail(g, index, qi);
    if (!tail) return false;
    const ir::Node& q = g.nodes[qi];
    const auto yp = constant_params(g, q);
    std::vector<int> pattern = std::move(tail->pattern);
    const int oi = tail->op;
    const ir::Node& op = g.nodes[oi];
    if (op.outputs.size() != 1 || op.inputs.size() < 2) return false;
    const bool conv = is_onnx(op, "Conv"), matmul = is_onnx(op, "MatMul"), gemm = is_onnx(op, "Gemm");
    if (!conv && !matmul && !gemm) return false;
    pattern.push_back(oi);

    const auto xp = per_tensor_dq(g, index, op.inputs[0]);
    if (!xp) return false;
    const std::string& x_q = g.nodes[xp->first].inputs[0];

    ir::Node fused;
    fused.name = op.name;
    fused.outputs = {q.outputs[0]};
    if (conv) {
      const auto w = weight_dq(g, index, op.inputs[1], 0, 3, 4);
      if (!w) return false;
      std::optional<std::pair<std::string, int>> bias;
      const bool has_bias = op.inputs.size() > 2 && !op.inputs[2].empty();
      if (has_bias) {
        bias = int32_bias(g, index, op.inputs[2], xp->second.scale->data_as<float>()[0], w->params, w->w->dim(0),
                          op.name.empty() ? op.outputs[0] : op.name);
        if (!bias) return false;
        if (bias->second >= 0) pattern.push_back(bias->second);
      }
      if (index.used_only_by(op.inputs[1], {oi})) pattern.push_back(w->node);
      fused.op_type = "QLinearConv";
      fused.attrs = op.attrs;
      fused.inputs = {x_q, xp->second.scale_name, xp->second.zero_point_name, g.nodes[w->node].inputs[0],
                      w->params.scale_name, w->params.zero_point_name, yp->scale_name, yp->zero_point_name};
      if (bias) fused.inputs.push_back(bias->first);
    } else {
      if (op.inputs.size() > 2 && !op.inputs[2].empty()) return false;  // a Gemm bias: no QLinearMatMul form
      const bool trans_b = gemm && op.attrs.get_int("transB", 0) != 0;
      if (gemm && (op.attrs.get_int("transA", 0) != 0 || op.attrs.get_float("alpha", 1.0f) != 1.0f)) return false;
      const auto w = weight_dq(g, index, op.inputs[1], trans_b ? 0 : 1, 2, 2);
      if (!w) {
        // B computed at run time (attention's products: both operands activations), per tensor.
        const auto b = matmul ? per_tensor_dq(g, index, op.inputs[1]) : std::nullopt;
        if (!b) return false;
        fused.op_type = "QLinearMatMul";
        fused.inputs = {x_q, xp->second.scale_name, xp->second.zero_point_name, g.nodes[b->first].inputs[0],
                        b->second.scale_name, b->second.zero_point_name, yp->scale_name, yp->zero_point_name};
        replace_nodes(g, pattern, std::move(fused));
        return true;
      }
      std::string b_name = g.nodes[w->node].inputs[0];
      if (trans_b) {
        b_name = ir::unique_value_name(g, b_name + "_t");
        g.initializers[b_name] = transposed(*w->w);
      }
      if (index.used_only_by(op.inputs[1], {oi})) pattern.push_back(w->node);
      fused.op_type = "QLinearMatMul";
      fused.inputs = {x_q, xp->second.scale_name, xp->second.zero_point_name, b_name, w->params.scale_name,
                      w->params.zero_point_name, yp->scale_name, yp->zero_point_name};
    }
    replace_nodes(g, pattern, std::move(fused));
    ir::remove_unused_initializers(g);
    return true;
  });
}

}  // namespace ignis::passes
