// SPDX-License-Identifier: Apache-2.0
// FlexAttention's reference stages (transformer_flex.h). Values are held in double and rounded
// to the dtype of each step of the ONNX reference, so float16 results match it to the last
// bit in most elements.
#include "kernels/ref/transformer_flex.h"

#include <cmath>
#include <limits>
#include <vector>

#include "core/dtype_dispatch.h"
#include "kernels/ref/transformer_internal.h"

namespace ignis::kernels::ref {

namespace {

std::vector<double> doubles_of(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  (void)visit_float(t.dtype(), "FlexAttention", [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data_as<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(to_compute(p[i]));
  });
  return v;
}

// Stores values already rounded to t's precision.
void store_doubles(const std::vector<double>& v, Tensor& t) {
  (void)visit_float(t.dtype(), "FlexAttention", [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data_as<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = from_compute<T>(v[i]);
  });
}

}  // namespace

DType flex_attention_score_dtype(const AttrMap& attrs, DType input) {
  if (attrs.has("softmax_precision"))
    return dtype_from_onnx(static_cast<int32_t>(attrs.get_int("softmax_precision", 1))).value_or(DType::F32);
  return input == DType::F64 ? DType::F64 : DType::F32;
}

void flex_attention_scores(const AttrMap& attrs, const Tensor& q, const Tensor& k, Tensor& scores, ThreadPool* pool) {
  const int64_t batch = q.dim(0), q_heads = q.dim(1), q_len = q.dim(2), head = q.dim(3);
  const int64_t kv_heads = k.dim(1), kv_len = k.dim(2), group = q_heads / kv_heads;
  const RoundFn rt = round_fn(q.dtype()), rs = round_fn(scores.dtype());
  // The reference takes sqrt(scale) in float32 and casts it to the inputs' dtype.
  const double scale =
      attrs.has("scale") ? attrs.get_float("scale", 1.0f) : 1.0 / std::sqrt(static_cast<double>(head));
  const double scale_sqrt = rt(round_to<float>(std::sqrt(round_to<float>(scale))));
  std::vector<double> qs = doubles_of(q), ks = doubles_of(k);
  for (double& x : qs) x = rt(x * scale_sqrt);
  for (double& x : ks) x = rt(x * scale_sqrt);
  std::vector<double> out(static_cast<size_t>(scores.numel()));
  parallel_for(pool, batch * q_heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / q_heads, kvh = (bh % q_heads) / group;
      const double* kbase = ks.data() + (b * kv_heads + kvh) * kv_len * head;
      for (int64_t i = 0; i < q_len; ++i) {
        const double* qrow = qs.data() + (bh * q_len + i) * head;
        for (int64_t j = 0; j < kv_len; ++j) {
          double s = 0.0;
          for (int64_t d = 0; d < head; ++d) s += qrow[d] * kbase[j * head + d];
          out[(bh * q_len + i) * kv_len + j] = rs(rt(s));
        }
      }
    }
  });
  store_doubles(out, scores);
}

void flex_attention_softmax(const Tensor& scores, Tensor& probs, ThreadPool* pool) {
  const int64_t len = scores.rank() > 0 ? scores.shape().back() : 1;
  const int64_t rows = len > 0 ? scores.numel() / len : 0;
  const RoundFn rp = round_fn(scores.dtype());
  const bool bf16 = scores.dtype() == DType::BF16;
  std::vector<double> v = doubles_of(scores);
  parallel_for(pool, rows, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> row(static_cast<size_t>(len));
    for (int64_t r = begin; r < end; ++r) {
      double* x = v.data() + r * len;
      bool all_masked = true;
      for (int64_t j = 0; j < len; ++j) all_masked = all_masked && x[j] == -std::numeric_limits<double>::infinity();
      row.assign(x, x + len);
      attention_softmax(row, rp, bf16);
      for (int64_t j = 0; j < len; ++j) x[j] = all_masked ? std::numeric_limits<double>::quiet_NaN() : row[j];
    }
  });
  store_doubles(v, probs);
}

void flex_attention_output(const Tensor& probs, const Tensor& v, Tensor& y, ThreadPool* pool) {
  const int64_t batch = probs.dim(0), q_heads = probs.dim(1), q_len = probs.dim(2), kv_len = probs.dim(3);
  const int64_t kv_heads = v.dim(1), v_head = v.dim(3), group = q_heads / kv_heads;
  const RoundFn rp = round_fn(probs.dtype()), ry = round_fn(y.dtype());
  const std::vector<double> ps = doubles_of(probs);
  std::vector<double> vs = doubles_of(v);
  for (double& x : vs) x = rp(x);
  std::vector<double> out(static_cast<size_t>(y.numel()));
  parallel_for(pool, batch * q_heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / q_heads, kvh = (bh % q_heads) / group;
      const double* vbase = vs.data() + (b * kv_heads + kvh) * kv_len * v_head;
      for (int64_t i = 0; i < q_len; ++i) {
        const double* p = ps.data() + (bh * q_len + i) * kv_len;
        for (int64_t d = 0; d < v_head; ++d) {
          double acc = 0.0;
          for (int64_t j = 0; j < kv_len; ++j) acc += p[j] * vbase[j * v_head + d];
          out[(bh * q_len + i) * v_head + d] = ry(rp(acc));
        }
      }
    }
  });
  store_doubles(out, y);
}

}  // namespace ignis::kernels::ref
