// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the transformer ops: Attention, RMSNormalization, RotaryEmbedding (the
// stateful ones are in transformer_recurrent.cc, FlexAttention's stages in transformer_flex.cc).
// Values are computed in double and rounded to the tensor's dtype after each step where the
// ONNX reference rounds (scaled Q and K, QK^T, softcap, the masked scores, softmax in its
// precision, P*V), so 16-bit results match the reference to the last bit in most elements.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/broadcast.h"
#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "kernels/ref/transformer_internal.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();
}  // namespace

RoundFn round_fn(DType t) {
  switch (t) {
    case DType::F16: return round_to<Half>;
    case DType::BF16: return round_to<BFloat16>;
    case DType::F64: return round_to<double>;
    default: return round_to<float>;
  }
}

void attention_softmax(std::vector<double>& x, RoundFn rp, bool round_each_add) {
  double mx = kNegInf;
  for (double& v : x) {
    v = rp(v);
    if (v > mx) mx = v;
  }
  if (mx == kNegInf) {
    std::fill(x.begin(), x.end(), 0.0);
    return;
  }
  double sum = 0.0;
  for (double& v : x) {
    v = rp(std::exp(rp(v - mx)));
    sum = round_each_add ? rp(sum + v) : sum + v;
  }
  sum = rp(sum);
  if (sum == 0.0) sum = 1.0;
  for (double& v : x) v = rp(v / sum);
}

namespace {

// ---- Attention ------------------------------------------------------------------------------
// Per (batch, query head): the key/value head is head / (q_heads / kv_heads) (grouped-query
// heads share one KV head). Per query row: build the additive bias over all keys (mask,
// causal frontier, sliding window, padding), then scores, softmax and the weighted sum of V.

struct AttentionGeom {
  bool three_d;
  int64_t batch, q_heads, kv_heads, q_len, kv_len, past_len, head, v_head;
  int64_t total() const { return past_len + kv_len; }
};

AttentionGeom attention_geom(const KernelContext& ctx) {
  const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
  AttentionGeom g{};
  g.three_d = q.rank() == 3;
  g.batch = q.dim(0);
  if (g.three_d) {
    g.q_heads = ctx.attrs().get_int("q_num_heads", 1);
    g.kv_heads = ctx.attrs().get_int("kv_num_heads", 1);
    g.q_len = q.dim(1);
    g.kv_len = k.dim(1);
    g.head = q.dim(2) / g.q_heads;
    g.v_head = v.dim(2) / g.kv_heads;
  } else {
    g.q_heads = q.dim(1);
    g.kv_heads = k.dim(1);
    g.q_len = q.dim(2);
    g.kv_len = k.dim(2);
    g.head = q.dim(3);
    g.v_head = v.dim(3);
  }
  g.past_len = ctx.has_input(4) ? ctx.input(4).dim(2) : 0;
  return g;
}

// Index of element (b, head h, position s, component d) of a Q/K/V/Y tensor, 3-D
// [batch, seq, heads * size] or 4-D [batch, heads, seq, size].
inline int64_t bhsd(bool three_d, int64_t heads, int64_t len, int64_t size, int64_t b, int64_t h, int64_t s,
                    int64_t d) {
  return three_d ? ((b * len + s) * heads + h) * size + d : ((b * heads + h) * len + s) * size + d;
}

// Concatenates past [B, Hkv, P, size] and the new K or V (3-D or 4-D) into present
// [B, Hkv, P + L, size], in T.
template <class T>
std::vector<T> concat_present(const AttentionGeom& g, const Tensor* past, const Tensor& cur, int64_t size) {
  const int64_t total = g.total();
  std::vector<T> out(static_cast<size_t>(g.batch * g.kv_heads * total * size));
  const T* ps = past ? past->data_as<T>() : nullptr;
  const T* cs = cur.data_as<T>();
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t h = 0; h < g.kv_heads; ++h)
      for (int64_t s = 0; s < total; ++s)
        for (int64_t d = 0; d < size; ++d) {
          const int64_t o = ((b * g.kv_heads + h) * total + s) * size + d;
          out[o] = s < g.past_len ? ps[((b * g.kv_heads + h) * g.past_len + s) * size + d]
                                  : cs[bhsd(g.three_d, g.kv_heads, g.kv_len, size, b, h, s - g.past_len, d)];
        }
  return out;
}

struct AttentionParams {
  double scale_sqrt;  // sqrt(scale), applied to Q and K separately as the spec's graph does
  double softcap;
  bool causal;
  int64_t left_window, right_window;  // -1: unbounded
  int64_t mode;                       // qk_matmul_output_mode
  RoundFn softmax_round;
  bool softmax_bf16;  // the softmax runs in bfloat16
};

// nonpad_kv_seqlen[b], clamped so that position arithmetic cannot overflow: any negative
// count masks every key, and counts past 2^60 behave as they would unclamped.
int64_t nonpad_len(const Tensor& t, int64_t b) {
  return std::clamp<int64_t>(t.data_as<int64_t>()[b], -1, int64_t{1} << 60);
}

// Additive bias of query row i of (b, h) over all `total` keys: 0 where attended, -inf where
// masked, plus a float mask's values. `offset` is the number of valid keys before the query
// block (past length, or nonpad_kv_seqlen - q_len per batch for an external cache).
template <class T>
void attention_bias_row(const KernelContext& ctx, const AttentionGeom& g, const AttentionParams& p,
                        const std::vector<int64_t>& mask_strides, int64_t b, int64_t h, int64_t i, int64_t offset,
                        std::vector<double>& bias) {
  const int64_t total = g.total();
  std::fill(bias.begin(), bias.end(), 0.0);
  if (ctx.has_input(3)) {
    const Tensor& m = ctx.input(3);
    const int64_t m_len = m.shape().back();
    const int64_t base = b * mask_strides[0] + h * mask_strides[1] + i * mask_strides[2];
    for (int64_t j = 0; j < total; ++j) {
      if (j >= m_len) {
        bias[j] = kNegInf;  // a short mask counts the keys past its end as masked
      } else if (m.dtype() == DType::Bool) {
        bias[j] = m.data_as<bool>()[base + j * mask_strides[3]] ? 0.0 : kNegInf;
      } else {
        bias[j] = static_cast<double>(to_compute(m.data_as<T>()[base + j * mask_strides[3]]));
      }
    }
  }
  const int64_t nonpad = ctx.has_input(6) ? nonpad_len(ctx.input(6), b) : total;
  for (int64_t j = 0; j < total; ++j) {
    const int64_t diff = i + offset - j;  // query's absolute position minus the key's
    bool allowed = !(p.causal && diff < 0);
    if (p.left_window >= 0 && diff > p.left_window) allowed = false;
    if (p.right_window >= 0 && -diff > p.right_window) allowed = false;
    if (j >= nonpad) allowed = false;
    if (!allowed) bias[j] += kNegInf;
    bias[j] = round_to<T>(bias[j]);
  }
}

template <class T>
void attention_typed(KernelContext& ctx, const AttentionGeom& g, const AttentionParams& p) {
  const int64_t total = g.total();
  const std::vector<T> keys = concat_present<T>(g, ctx.has_input(4) ? &ctx.input(4) : nullptr, ctx.input(1), g.head);
  const std::vector<T> values =
      concat_present<T>(g, ctx.has_input(5) ? &ctx.input(5) : nullptr, ctx.input(2), g.v_head);
  if (ctx.has_output(1)) std::copy(keys.begin(), keys.end(), ctx.output(1).data_as<T>());
  if (ctx.has_output(2)) std::copy(values.begin(), values.end(), ctx.output(2).data_as<T>());
  // K scaled by sqrt(scale) in T, as [B, Hkv, total, head].
  std::vector<double> ks(keys.size());
  for (size_t n = 0; n < keys.size(); ++n) ks[n] = round_to<T>(static_cast<double>(to_compute(keys[n])) * p.scale_sqrt);
  std::vector<int64_t> mask_strides(4, 0);
  if (ctx.has_input(3)) {
    const Shape& ms = ctx.input(3).shape();
    mask_strides = broadcast_strides(ms, Shape{g.batch, g.q_heads, g.q_len, ms.back()});
  }
  const T* qs = ctx.input(0).data_as<T>();
  T* ys = ctx.output(0).data_as<T>();
  T* qk_out = ctx.has_output(3) ? ctx.output(3).data_as<T>() : nullptr;
  const int64_t group = g.q_heads / g.kv_heads;
  parallel_for(ctx.pool(), g.batch * g.q_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> bias(static_cast<size_t>(total)), score(static_cast<size_t>(total)), qrow(g.head);
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / g.q_heads, h = bh % g.q_heads, kvh = h / group;
      int64_t offset = g.past_len;
      if (ctx.has_input(6)) offset = nonpad_len(ctx.input(6), b) - g.q_len;
      const double* kbase = ks.data() + (b * g.kv_heads + kvh) * total * g.head;
      const T* vbase = values.data() + (b * g.kv_heads + kvh) * total * g.v_head;
      for (int64_t i = 0; i < g.q_len; ++i) {
        attention_bias_row<T>(ctx, g, p, mask_strides, b, h, i, offset, bias);
        for (int64_t d = 0; d < g.head; ++d) {
          const T qv = qs[bhsd(g.three_d, g.q_heads, g.q_len, g.head, b, h, i, d)];
          qrow[d] = round_to<T>(static_cast<double>(to_compute(qv)) * p.scale_sqrt);
        }
        T* qk_row = qk_out ? qk_out + (bh * g.q_len + i) * total : nullptr;
        bool all_masked = true;
        for (int64_t j = 0; j < total; ++j) {
          double s = 0.0;
          for (int64_t d = 0; d < g.head; ++d) s += qrow[d] * kbase[j * g.head + d];
          s = round_to<T>(s);
          if (qk_row && p.mode == 0) qk_row[j] = from_compute<T>(s);
          if (p.softcap > 0.0) s = round_to<T>(round_to<T>(std::tanh(round_to<T>(s / p.softcap))) * p.softcap);
          if (qk_row && p.mode == 1) qk_row[j] = from_compute<T>(s);
          s = round_to<T>(s + bias[j]);
          if (qk_row && p.mode == 2) qk_row[j] = from_compute<T>(s);
          score[j] = s;
          all_masked = all_masked && bias[j] == kNegInf;
        }
        attention_softmax(score, p.softmax_round, p.softmax_bf16);
        // A row whose bias masks every key attends nothing: zeros, even where its raw scores
        // would make the softmax NaN.
        for (int64_t j = 0; j < total; ++j) score[j] = all_masked ? 0.0 : round_to<T>(score[j]);
        if (qk_row && p.mode == 3)
          for (int64_t j = 0; j < total; ++j) qk_row[j] = from_compute<T>(score[j]);
        for (int64_t d = 0; d < g.v_head; ++d) {
          double acc = 0.0;
          for (int64_t j = 0; j < total; ++j)
            acc += score[j] * static_cast<double>(to_compute(vbase[j * g.v_head + d]));
          ys[bhsd(g.three_d, g.q_heads, g.q_len, g.v_head, b, h, i, d)] = from_compute<T>(acc);
        }
      }
    }
  });
}

Status attention_kernel(KernelContext& ctx) {
  const AttentionGeom g = attention_geom(ctx);
  AttentionParams p{};
  const double scale =
      ctx.attrs().has("scale") ? ctx.attrs().get_float("scale", 1.0f) : 1.0 / std::sqrt(static_cast<double>(g.head));
  p.scale_sqrt = round_fn(ctx.input(0).dtype())(std::sqrt(scale));
  p.softcap = ctx.attrs().get_float("softcap", 0.0f);
  p.causal = ctx.attrs().get_int("is_causal", 0) != 0;
  p.left_window = ctx.opset() >= 25 ? ctx.attrs().get_int("left_window_size", -1) : -1;
  p.right_window = ctx.opset() >= 25 ? ctx.attrs().get_int("right_window_size", -1) : -1;
  p.mode = ctx.attrs().get_int("qk_matmul_output_mode", 0);
  // softmax_precision holds a TensorProto data type code.
  DType softmax_type = ctx.input(0).dtype();
  if (ctx.attrs().has("softmax_precision")) {
    switch (ctx.attrs().get_int("softmax_precision", 1)) {
      case 10: softmax_type = DType::F16; break;
      case 11: softmax_type = DType::F64; break;
      case 16: softmax_type = DType::BF16; break;
      default: softmax_type = DType::F32; break;
    }
  }
  p.softmax_round = round_fn(softmax_type);
  p.softmax_bf16 = softmax_type == DType::BF16;
  return visit_float(ctx.input(0).dtype(), "Attention", [&](auto tag) {
    using T = decltype(tag);
    attention_typed<T>(ctx, g, p);
  });
}

// ---- RMSNormalization -----------------------------------------------------------------------
// stash_type 1: the statistics and the normalization run in float32; Normalized is cast back
// to X's type, then multiplied by the scale (broadcast to X) in the scale's type.

Status rms_norm_kernel(KernelContext& ctx) {
  const Tensor &x = ctx.input(0), &sc = ctx.input(1);
  Tensor& y = ctx.output(0);
  const int rank = x.rank();
  const int axis = *normalize_axis(ctx.attrs().get_int("axis", -1), rank);
  const float eps = ctx.attrs().get_float("epsilon", 1e-5f);
  const int64_t outer = x.shape().numel(0, axis), inner = x.shape().numel(axis, rank);
  // Scale offset per element of X.
  std::vector<int64_t> soff(static_cast<size_t>(x.numel()));
  if (x.numel() > 0) {
    StridedIndexer it(x.shape(), {broadcast_strides(sc.shape(), x.shape())});
    int64_t n = 0;
    do soff[n++] = it.offset(0);
    while (it.next());
  }
  const RoundFn rx = round_fn(x.dtype());
  return visit_float(y.dtype(), "RMSNormalization", [&](auto tag) {
    using T = decltype(tag);
    T* ys = y.data_as<T>();
    parallel_for(ctx.pool(), outer, 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        double sq = 0.0;
        for (int64_t i = 0; i < inner; ++i) {
          const double v = round_to<float>(load_as_double(x.dtype(), x.data(), r * inner + i));
          sq += round_to<float>(v * v);
        }
        const float mean = static_cast<float>(inner > 0 ? sq / static_cast<double>(inner) : 0.0);
        const float inv = 1.0f / std::sqrt(mean + eps);
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t n = r * inner + i;
          const double normalized = rx(round_to<float>(load_as_double(x.dtype(), x.data(), n) * inv));
          ys[n] = from_compute<T>(normalized * load_as_double(sc.dtype(), sc.data(), soff[n]));
        }
      }
    });
  });
}

// ---- RotaryEmbedding ------------------------------------------------------------------------
// Rotates the first `rot` components of every head: pairs (x1, x2) are the two halves of that
// span, or its even and odd components when interleaved; the rest pass through.

template <class T>
Status rotary_typed(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool three_d = x.rank() == 3;
  const int64_t heads = three_d ? ctx.attrs().get_int("num_heads", 1) : x.dim(1);
  const int64_t batch = x.dim(0), seq = three_d ? x.dim(1) : x.dim(2);
  const int64_t head = three_d ? x.dim(2) / heads : x.dim(3);
  int64_t rot = ctx.attrs().get_int("rotary_embedding_dim", 0);
  if (rot == 0) rot = head;
  const int64_t half = rot / 2;
  const bool interleaved = ctx.attrs().get_int("interleaved", 0) != 0;
  const T* cos_c = ctx.input(1).data_as<T>();
  const T* sin_c = ctx.input(2).data_as<T>();
  const int64_t* pos = ctx.has_input(3) ? ctx.input(3).data_as<int64_t>() : nullptr;
  const int64_t max_pos = pos ? ctx.input(1).dim(0) : 0;
  // Row of the caches for each (batch, position).
  std::vector<int64_t> cache_row(static_cast<size_t>(batch * seq));
  for (int64_t n = 0; n < batch * seq; ++n) {
    cache_row[n] = pos ? pos[n] : n;
    if (pos && (pos[n] < 0 || pos[n] >= max_pos))
      return invalid_argument(str_cat("RotaryEmbedding: position_ids value ", pos[n], " is out of range [0, ",
                                      max_pos, ")"));
  }
  const T* xs = x.data_as<T>();
  T* ys = ctx.output(0).data_as<T>();
  auto rt = round_to<T>;
  parallel_for(ctx.pool(), batch * heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / heads, h = bh % heads;
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t base = bhsd(three_d, heads, seq, head, b, h, s, 0);
        const T* xp = xs + base;
        T* yp = ys + base;
        const int64_t row = cache_row[b * seq + s] * half;
        for (int64_t k = 0; k < half; ++k) {
          const int64_t i1 = interleaved ? 2 * k : k, i2 = interleaved ? 2 * k + 1 : k + half;
          const double c = static_cast<double>(to_compute(cos_c[row + k]));
          const double sn = static_cast<double>(to_compute(sin_c[row + k]));
          const double x1 = static_cast<double>(to_compute(xp[i1])), x2 = static_cast<double>(to_compute(xp[i2]));
          yp[i1] = from_compute<T>(rt(c * x1) - rt(sn * x2));
          yp[i2] = from_compute<T>(rt(sn * x1) + rt(c * x2));
        }
        for (int64_t d = rot; d < head; ++d) yp[d] = xp[d];
      }
    }
  });
  return Status::ok();
}

Status rotary_kernel(KernelContext& ctx) {
  Status st = Status::ok();
  Status visited = visit_float(ctx.input(0).dtype(), "RotaryEmbedding", [&](auto tag) {
    using T = decltype(tag);
    st = rotary_typed<T>(ctx);
  });
  return visited.is_ok() ? st : visited;
}

constexpr DTypeSet kFloats = DTypeSet::floats();

}  // namespace

void register_transformer(KernelRegistry& r) {
  // "ref/attention" is the ai.ignis fused Attention's reference kernel (fused.cc).
  r.add({.domain = "", .op_type = "Attention", .since_opset = 23, .until_opset = 25, .types = kFloats,
         .id = "ref/attention_onnx", .fn = attention_kernel});
  r.add({.domain = "", .op_type = "RMSNormalization", .since_opset = 23, .until_opset = 23, .types = kFloats,
         .id = "ref/rmsnormalization", .fn = rms_norm_kernel});
  r.add({.domain = "", .op_type = "RotaryEmbedding", .since_opset = 23, .until_opset = 23,
         .types = {DType::F32, DType::F16, DType::BF16}, .id = "ref/rotaryembedding", .fn = rotary_kernel});
  register_transformer_recurrent(r);
}

}  // namespace ignis::kernels::ref
