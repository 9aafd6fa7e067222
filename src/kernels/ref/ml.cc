// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the ONNX ML domain (ai.onnx.ml): LinearRegressor, LinearClassifier,
// Normalizer, Scaler, Binarizer, ArrayFeatureExtractor. Inputs of every allowed type are read
// as double, scores are accumulated in double and written as float (the ops' output type).
// Where the spec is silent (binary LinearClassifier scores, Normalizer MAX) the kernels follow
// onnxruntime, the runtime skl2onnx models are checked against.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "kernels/ref/ml_internal.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {

namespace {

// The input as doubles, row-major (the ML ops take float, double, int64 and int32).
std::vector<double> read_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T>) {
      const T* p = t.data_as<T>();
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(p[i]);
    } else {
      std::abort();  // the registration admits kMlTypes only
    }
  });
  return v;
}

// Rows and features of X, [N, C] or [C] (one row).
void rows_and_features(const Tensor& x, int64_t& n, int64_t& c) {
  n = x.rank() == 1 ? 1 : x.dim(0);
  c = x.rank() == 1 ? x.dim(0) : x.dim(1);
}

// sqrt(2) * erfinv(2p - 1) with the closed-form erfinv approximation (a = 0.147) the ONNX
// reference and onnxruntime use, so results agree with them rather than with an exact inverse.
double probit(double p) {
  const double x = 2.0 * p - 1.0;
  const double sgn = x < 0 ? -1.0 : 1.0;
  const double w = (1.0 - x) * (1.0 + x);
  if (w == 0.0) return 0.0;
  const double ln = std::log(w);
  constexpr double kPi = 3.14159265358979323846;
  const double a = 2.0 / (kPi * 0.147) + 0.5 * ln;
  const double b = ln / 0.147;
  return 1.41421356 * sgn * std::sqrt(-a + std::sqrt(a * a - b));
}

}  // namespace

PostTransform parse_post_transform(const std::string& s) {
  if (s == "SOFTMAX") return PostTransform::Softmax;
  if (s == "LOGISTIC") return PostTransform::Logistic;
  if (s == "SOFTMAX_ZERO") return PostTransform::SoftmaxZero;
  if (s == "PROBIT") return PostTransform::Probit;
  return PostTransform::None;
}

double logistic(double v) {
  // Written so that exp never overflows.
  if (v >= 0) return 1.0 / (1.0 + std::exp(-v));
  const double e = std::exp(v);
  return e / (1.0 + e);
}

void post_transform_row(PostTransform pt, double* s, int64_t k) {
  switch (pt) {
    case PostTransform::None: return;
    case PostTransform::Logistic:
      for (int64_t j = 0; j < k; ++j) s[j] = logistic(s[j]);
      return;
    case PostTransform::Probit:
      for (int64_t j = 0; j < k; ++j) s[j] = probit(s[j]);
      return;
    case PostTransform::Softmax: {
      const double m = *std::max_element(s, s + k);
      double sum = 0;
      for (int64_t j = 0; j < k; ++j) sum += (s[j] = std::exp(s[j] - m));
      for (int64_t j = 0; j < k; ++j) s[j] /= sum;
      return;
    }
    case PostTransform::SoftmaxZero: {
      // Scores that are (almost) exactly zero stay (almost) zero instead of taking a share.
      const double m = *std::max_element(s, s + k);
      const double e_neg_m = std::exp(-m);
      double sum = 0;
      for (int64_t j = 0; j < k; ++j) {
        s[j] = std::abs(s[j]) > 1e-7 ? std::exp(s[j] - m) : s[j] * e_neg_m;
        sum += s[j];
      }
      for (int64_t j = 0; j < k; ++j) s[j] = sum == 0 ? 0.5 : s[j] / sum;
      return;
    }
  }
}

namespace {

// scores[i, e] = sum_c x[i, c] * coef[e * C + c] + intercept[e]
std::vector<double> linear_scores(const std::vector<double>& x, int64_t n, int64_t c, const std::vector<float>& coef,
                                  const std::vector<float>& icp, int64_t e) {
  std::vector<double> s(static_cast<size_t>(n * e));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t t = 0; t < e; ++t) {
      double acc = icp.empty() ? 0.0 : icp[t];
      for (int64_t j = 0; j < c; ++j) acc += x[i * c + j] * static_cast<double>(coef[t * c + j]);
      s[i * e + t] = acc;
    }
  return s;
}

Status linear_regressor_kernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  int64_t n = 0, c = 0;
  rows_and_features(xt, n, c);
  const int64_t targets = ctx.attrs().get_int("targets", 1);
  const std::vector<double> s = linear_scores(read_doubles(xt), n, c, ctx.attrs().get_floats("coefficients"),
                                              ctx.attrs().get_floats("intercepts"), targets);
  float* y = ctx.output(0).data_as<float>();
  for (size_t i = 0; i < s.size(); ++i) y[i] = static_cast<float>(s[i]);
  return Status::ok();
}

Status linear_classifier_kernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  int64_t n = 0, c = 0;
  rows_and_features(xt, n, c);
  const std::vector<float> coef = ctx.attrs().get_floats("coefficients");
  const PostTransform pt = parse_post_transform(ctx.attrs().get_string("post_transform", "NONE"));
  const int64_t e = static_cast<int64_t>(coef.size()) / c;
  const std::vector<double> s = linear_scores(read_doubles(xt), n, c, coef, ctx.attrs().get_floats("intercepts"), e);
  // Output 0 gets label k of classlabels_ints (int64) or classlabels_strings (string).
  Tensor& y = ctx.output(0);
  const std::vector<int64_t> int_labels = ctx.attrs().get_ints("classlabels_ints");
  const std::vector<std::string> string_labels = ctx.attrs().get_strings("classlabels_strings");
  auto set_label = [&](int64_t i, size_t k) {
    if (y.dtype() == DType::String) y.data_as<std::string>()[i] = string_labels[k];
    else y.data_as<int64_t>()[i] = int_labels[k];
  };
  float* z = ctx.has_output(1) ? ctx.output(1).data_as<float>() : nullptr;
  if (e == 1) {
    // Binary (shape inference admits NONE and LOGISTIC only): the positive class wins when its
    // score is above 0; the scores are [1 - s, s] (NONE) or [logistic(-s), logistic(s)].
    for (int64_t i = 0; i < n; ++i) {
      const double v = s[i];
      set_label(i, v > 0 ? 1 : 0);
      if (z == nullptr) continue;
      const bool logit = pt == PostTransform::Logistic;
      z[2 * i] = static_cast<float>(logit ? logistic(-v) : 1.0 - v);
      z[2 * i + 1] = static_cast<float>(logit ? logistic(v) : v);
    }
    return Status::ok();
  }
  std::vector<double> row(static_cast<size_t>(e));
  for (int64_t i = 0; i < n; ++i) {
    std::copy(s.begin() + i * e, s.begin() + (i + 1) * e, row.begin());
    // The label is the first best raw score (onnxruntime's choice; every transform but
    // SOFTMAX_ZERO preserves the order).
    set_label(i, static_cast<size_t>(std::max_element(row.begin(), row.end()) - row.begin()));
    post_transform_row(pt, row.data(), e);
    if (z != nullptr)
      for (int64_t t = 0; t < e; ++t) z[i * e + t] = static_cast<float>(row[t]);
  }
  return Status::ok();
}

Status normalizer_kernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  int64_t n = 0, c = 0;
  rows_and_features(xt, n, c);
  const std::vector<double> x = read_doubles(xt);
  const std::string norm = ctx.attrs().get_string("norm", "MAX");
  float* y = ctx.output(0).data_as<float>();
  for (int64_t i = 0; i < n; ++i) {
    const double* r = x.data() + i * c;
    double d = 0;
    if (norm == "MAX") {
      // onnxruntime divides by the largest value (not the largest magnitude), as the spec's
      // "X / max(X)" reads.
      d = c > 0 ? *std::max_element(r, r + c) : 0.0;
    } else if (norm == "L1") {
      for (int64_t j = 0; j < c; ++j) d += std::abs(r[j]);
    } else {
      for (int64_t j = 0; j < c; ++j) d += r[j] * r[j];
      d = std::sqrt(d);
    }
    // An all-zero row is left as it is.
    for (int64_t j = 0; j < c; ++j) y[i * c + j] = static_cast<float>(d != 0 ? r[j] / d : r[j]);
  }
  return Status::ok();
}

Status scaler_kernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const std::vector<double> x = read_doubles(xt);
  const std::vector<float> offset = ctx.attrs().get_floats("offset");
  const std::vector<float> scale = ctx.attrs().get_floats("scale");
  const int64_t c = xt.rank() == 0 ? 1 : xt.dim(xt.rank() - 1);
  float* y = ctx.output(0).data_as<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t j = c > 0 ? i % static_cast<size_t>(c) : 0;
    const double o = offset.empty() ? 0.0 : offset[offset.size() == 1 ? 0 : j];
    const double k = scale.empty() ? 1.0 : scale[scale.size() == 1 ? 0 : j];
    y[i] = static_cast<float>((x[i] - o) * k);
  }
  return Status::ok();
}

Status binarizer_kernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const double threshold = ctx.attrs().get_float("threshold", 0.0f);
  visit_dtype(xt.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T>) {
      const T* x = xt.data_as<T>();
      T* y = ctx.output(0).data_as<T>();
      for (int64_t i = 0; i < xt.numel(); ++i) y[i] = static_cast<double>(x[i]) > threshold ? T(1) : T(0);
    } else {
      std::abort();  // the registration admits kMlTypes only
    }
  });
  return Status::ok();
}

Status array_feature_extractor_kernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Tensor& it = ctx.input(1);
  const int64_t c = xt.dim(xt.rank() - 1);
  const int64_t rows = c > 0 ? xt.numel() / c : 0;
  const int64_t k = it.numel();
  const int64_t* idx = it.data_as<int64_t>();
  for (int64_t j = 0; j < k; ++j)
    if (idx[j] < 0 || idx[j] >= c)
      return out_of_range(str_cat("ArrayFeatureExtractor: index ", idx[j], " is out of range [0, ", c, ")"));
  const size_t es = dtype_size(xt.dtype());
  const auto* x = static_cast<const unsigned char*>(xt.data());
  auto* y = static_cast<unsigned char*>(ctx.output(0).data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j)
      std::copy_n(x + (r * c + idx[j]) * es, es, y + (r * k + j) * es);
  return Status::ok();
}

}  // namespace

void register_ml(KernelRegistry& r) {
  r.add({.domain = kMl, .op_type = "LinearRegressor", .types = kMlTypes, .id = "ref/linear_regressor",
         .fn = linear_regressor_kernel});
  r.add({.domain = kMl, .op_type = "LinearClassifier", .types = kMlTypes, .id = "ref/linear_classifier",
         .fn = linear_classifier_kernel});
  r.add({.domain = kMl, .op_type = "Normalizer", .types = kMlTypes, .id = "ref/normalizer", .fn = normalizer_kernel});
  r.add({.domain = kMl, .op_type = "Scaler", .types = kMlTypes, .id = "ref/scaler", .fn = scaler_kernel});
  r.add({.domain = kMl, .op_type = "Binarizer", .types = kMlTypes, .id = "ref/binarizer", .fn = binarizer_kernel});
  r.add({.domain = kMl, .op_type = "ArrayFeatureExtractor", .types = kMlTypes, .id = "ref/array_feature_extractor",
         .fn = array_feature_extractor_kernel});
  register_ml_tree(r);
  register_ml_label(r);
}

}  // namespace ignis::kernels::ref
