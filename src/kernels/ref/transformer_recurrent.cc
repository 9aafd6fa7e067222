// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the stateful sequence ops: LinearAttention and CausalConvWithState.
// Both follow the ONNX reference's arithmetic: LinearAttention runs its recurrence in float32
// whatever the input types (dot products accumulate in double, then round to float);
// CausalConvWithState sums each output in float and rounds it to the tensor's type before the
// bias is added, as numpy's matmul of 16-bit arrays does.
#include <cmath>
#include <string>
#include <vector>

#include "core/dtype_dispatch.h"
#include "kernels/ref/nn_internal.h"
#include "kernels/ref/transformer_internal.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {

namespace {

// ---- LinearAttention --------------------------------------------------------------------------
// One task per (batch, key/value head) walks the sequence, updating that head's [d_k, d_v] state
// S in place, then reads it with each of the q_heads / kv_heads query heads that share it:
//   gated:  S *= exp(g_t)                      (g_t per key component or one per head)
//   delta:  v_t <- beta_t * (v_t - S^T k_t)    (with the already-decayed S)
//   always: S += k_t v_t^T;  o_t = scale * q_t^T S

struct LinearAttentionGeom {
  int64_t batch, seq, q_heads, kv_heads, dk, dv;
  bool gated, delta;
  int64_t decay_width, beta_width;  // [B, T, width] layouts of decay and beta
  float scale;
};

LinearAttentionGeom linear_attention_geom(const KernelContext& ctx) {
  LinearAttentionGeom g{};
  const Tensor& q = ctx.input(0);
  g.q_heads = ctx.attrs().get_int("q_num_heads", 1);
  g.kv_heads = ctx.attrs().get_int("kv_num_heads", 1);
  g.batch = q.dim(0);
  g.seq = q.dim(1);
  g.dk = q.dim(2) / g.q_heads;
  g.dv = ctx.input(2).dim(2) / g.kv_heads;
  const std::string rule = ctx.attrs().get_string("update_rule", "gated_delta");
  g.gated = rule == "gated" || rule == "gated_delta";
  g.delta = rule == "delta" || rule == "gated_delta";
  g.decay_width = g.gated ? ctx.input(4).dim(2) : 0;
  g.beta_width = g.delta ? ctx.input(5).dim(2) : 0;
  const float scale = ctx.attrs().get_float("scale", 0.0f);
  g.scale = scale != 0.0f ? scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(g.dk)));
  return g;
}

Status linear_attention_kernel(KernelContext& ctx) {
  const LinearAttentionGeom g = linear_attention_geom(ctx);
  const std::vector<float> qs = to_float_vector(ctx.input(0)), ks = to_float_vector(ctx.input(1)),
                           vs = to_float_vector(ctx.input(2));
  const std::vector<float> decay = g.gated ? to_float_vector(ctx.input(4)) : std::vector<float>();
  const std::vector<float> beta = g.delta ? to_float_vector(ctx.input(5)) : std::vector<float>();
  std::vector<float> state = ctx.has_input(3)
                                 ? to_float_vector(ctx.input(3))
                                 : std::vector<float>(static_cast<size_t>(g.batch * g.kv_heads * g.dk * g.dv), 0.0f);
  std::vector<float> out(static_cast<size_t>(g.batch * g.seq * g.q_heads * g.dv));
  const int64_t group = g.q_heads / g.kv_heads;
  const bool decay_per_key = g.decay_width != g.kv_heads;
  parallel_for(ctx.pool(), g.batch * g.kv_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> v(static_cast<size_t>(g.dv));
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / g.kv_heads, h = bh % g.kv_heads;
      float* s = state.data() + bh * g.dk * g.dv;
      for (int64_t t = 0; t < g.seq; ++t) {
        const int64_t row = b * g.seq + t;  // (batch, position) index into the packed inputs
        const float* k = ks.data() + (row * g.kv_heads + h) * g.dk;
        if (g.gated) {
          for (int64_t i = 0; i < g.dk; ++i) {
            const float gate = decay[row * g.decay_width + (decay_per_key ? h * g.dk + i : h)];
            const float e = std::exp(gate);
            for (int64_t m = 0; m < g.dv; ++m) s[i * g.dv + m] *= e;
          }
        }
        for (int64_t m = 0; m < g.dv; ++m) v[m] = vs[(row * g.kv_heads + h) * g.dv + m];
        if (g.delta) {
          const float rate = beta[row * g.beta_width + (g.beta_width == 1 ? 0 : h)];
          for (int64_t m = 0; m < g.dv; ++m) {
            double retrieved = 0.0;
            for (int64_t i = 0; i < g.dk; ++i) retrieved += static_cast<double>(s[i * g.dv + m]) * k[i];
            v[m] = rate * (v[m] - static_cast<float>(retrieved));
          }
        }
        for (int64_t i = 0; i < g.dk; ++i)
          for (int64_t m = 0; m < g.dv; ++m) s[i * g.dv + m] += k[i] * v[m];
        for (int64_t r = 0; r < group; ++r) {
          const int64_t qh = h * group + r;
          const float* q = qs.data() + (row * g.q_heads + qh) * g.dk;
          float* o = out.data() + (row * g.q_heads + qh) * g.dv;
          for (int64_t m = 0; m < g.dv; ++m) {
            double acc = 0.0;
            for (int64_t i = 0; i < g.dk; ++i) acc += static_cast<double>(q[i]) * s[i * g.dv + m];
            o[m] = g.scale * static_cast<float>(acc);
          }
        }
      }
    }
  });
  store_float_vector(out, ctx.output(0));
  if (ctx.has_output(1)) store_float_vector(state, ctx.output(1));
  return Status::ok();
}

// ---- CausalConvWithState ----------------------------------------------------------------------
// Per (batch, channel): the padded row is past_state (or k - 1 zeros) followed by the input;
// output t is the k-tap dot product starting at padded[t], and present_state is the padded
// row's last k - 1 values.

template <class T>
void causal_conv_typed(KernelContext& ctx) {
  using C = compute_t<T>;  // float for the 16-bit types
  const Tensor &x = ctx.input(0), &w = ctx.input(1);
  const int64_t batch = x.dim(0), channels = x.dim(1), len = x.dim(2), k = w.dim(2);
  const bool silu = ctx.attrs().get_string("activation", "none") != "none";
  const T* xs = x.data_as<T>();
  const T* ws = w.data_as<T>();
  const T* bias = ctx.has_input(2) ? ctx.input(2).data_as<T>() : nullptr;
  const T* past = ctx.has_input(3) ? ctx.input(3).data_as<T>() : nullptr;
  T* ys = ctx.output(0).data_as<T>();
  T* present = ctx.has_output(1) ? ctx.output(1).data_as<T>() : nullptr;
  parallel_for(ctx.pool(), batch * channels, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> padded(static_cast<size_t>(len + k - 1));
    for (int64_t bc = begin; bc < end; ++bc) {
      const int64_t c = bc % channels;
      for (int64_t j = 0; j < k - 1; ++j) padded[j] = past ? past[bc * (k - 1) + j] : from_compute<T>(C{0});
      for (int64_t t = 0; t < len; ++t) padded[k - 1 + t] = xs[bc * len + t];
      for (int64_t t = 0; t < len; ++t) {
        C acc = 0;
        for (int64_t j = 0; j < k; ++j) acc += to_compute(ws[c * k + j]) * to_compute(padded[t + j]);
        T y = from_compute<T>(acc);
        if (bias) y = from_compute<T>(to_compute(y) + to_compute(bias[c]));
        if (silu) {
          const C f = to_compute(y);
          y = from_compute<T>(f * (C{1} / (C{1} + std::exp(-f))));
        }
        ys[bc * len + t] = y;
      }
      if (present)
        for (int64_t j = 0; j < k - 1; ++j) present[bc * (k - 1) + j] = padded[len + j];
    }
  });
}

Status causal_conv_kernel(KernelContext& ctx) {
  return visit_float(ctx.input(0).dtype(), "CausalConvWithState", [&](auto tag) {
    using T = decltype(tag);
    causal_conv_typed<T>(ctx);
  });
}

constexpr DTypeSet kTypes = {DType::F32, DType::F16, DType::BF16};

}  // namespace

void register_transformer_recurrent(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "LinearAttention", .since_opset = 27, .until_opset = 27, .types = kTypes,
         .id = "ref/linearattention", .fn = linear_attention_kernel});
  r.add({.domain = "", .op_type = "CausalConvWithState", .since_opset = 27, .until_opset = 27, .types = kTypes,
         .id = "ref/causalconvwithstate", .fn = causal_conv_kernel});
}

}  // namespace ignis::kernels::ref
