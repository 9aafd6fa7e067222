// SPDX-License-Identifier: Apache-2.0
// Reference normalization kernels: BatchNormalization (inference), InstanceNormalization,
// LayerNormalization, GroupNormalization, LRN and MeanVarianceNormalization.
// Statistics are accumulated in double with two passes (mean, then squared deviations);
// 16-bit floats are read and written through their float32 values.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/broadcast.h"
#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "kernels/ref/nn_internal.h"

namespace ignis::kernels::ref {

namespace {

std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = load_as_double(t.dtype(), t.data(), static_cast<int64_t>(i));
  return v;
}

// Mean and population variance of n values read through `at`.
template <class At>
void mean_var(int64_t n, At at, double& mean, double& var) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += at(i);
  mean = n > 0 ? s / static_cast<double>(n) : 0.0;
  double q = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = at(i) - mean;
    q += d * d;
  }
  var = n > 0 ? q / static_cast<double>(n) : 0.0;
}

// ---- BatchNormalization ---------------------------------------------------------------

// Per-channel mean and population variance of x [N, C, ...] (BatchNormalization's training mode).
void batch_statistics(const Tensor& x, int64_t channels, std::vector<double>& mean, std::vector<double>& var) {
  const int64_t n = x.dim(0);
  const int64_t inner = n > 0 && channels > 0 ? x.numel() / n / channels : 0;
  mean.assign(static_cast<size_t>(channels), 0.0);
  var.assign(static_cast<size_t>(channels), 0.0);
  const double count = static_cast<double>(std::max<int64_t>(n * inner, 1));
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0.0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i) sum += load_as_double(x.dtype(), x.data(), (b * channels + c) * inner + i);
    const double m = sum / count;
    double sq = 0.0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i) {
        const double d = load_as_double(x.dtype(), x.data(), (b * channels + c) * inner + i) - m;
        sq += d * d;
      }
    mean[static_cast<size_t>(c)] = m;
    var[static_cast<size_t>(c)] = sq / count;
  }
}

// Writes `values` into a float tensor of their length.
void store_doubles(const std::vector<double>& values, Tensor& t) {
  for (size_t i = 0; i < values.size(); ++i)
    visit_dtype(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T> || is_half_like_v<T>) t.data_as<T>()[i] = from_compute<T>(values[i]);
    });
}

// Inference uses the given mean/var. training_mode=1 (opset 14+) normalizes with the batch's
// own statistics and also returns the running ones: input * momentum + batch * (1 - momentum).
Status batch_norm_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const double eps = ctx.attrs().get_float("epsilon", 1e-5f);
  const std::vector<double> scale = to_doubles(ctx.input(1)), bias = to_doubles(ctx.input(2));
  std::vector<double> mean = to_doubles(ctx.input(3)), var = to_doubles(ctx.input(4));
  if (ctx.opset() >= 14 && ctx.attrs().get_int("training_mode", 0) == 1) {
    std::vector<double> batch_mean, batch_var;
    batch_statistics(x, static_cast<int64_t>(scale.size()), batch_mean, batch_var);
    const double momentum = ctx.attrs().get_float("momentum", 0.9f);
    for (size_t c = 0; c < mean.size(); ++c) {
      mean[c] = mean[c] * momentum + batch_mean[c] * (1.0 - momentum);
      var[c] = var[c] * momentum + batch_var[c] * (1.0 - momentum);
    }
    if (ctx.has_output(1)) store_doubles(mean, ctx.output(1));
    if (ctx.has_output(2)) store_doubles(var, ctx.output(2));
    mean = std::move(batch_mean);
    var = std::move(batch_var);
  }
  // y = x * a + b per parameter slot; slots are channels (spatial) or whole C x D1... blocks.
  const int64_t slots = static_cast<int64_t>(scale.size());
  std::vector<double> a(slots), b(slots);
  for (int64_t i = 0; i < slots; ++i) {
    a[i] = scale[i] / std::sqrt(var[i] + eps);
    b[i] = bias[i] - mean[i] * a[i];
  }
  const int64_t n = x.dim(0);
  const int64_t inner = n > 0 ? x.numel() / n / std::max<int64_t>(slots, 1) : 0;
  return visit_float(x.dtype(), "BatchNormalization", [&](auto tag) {
    using T = decltype(tag);
    const T* xs = x.data_as<T>();
    T* ys = ctx.output(0).data_as<T>();
    parallel_for(ctx.pool(), n * slots, 4, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const double ar = a[r % slots], br = b[r % slots];
        const T* xp = xs + r * inner;
        T* yp = ys + r * inner;
        for (int64_t i = 0; i < inner; ++i)
          yp[i] = from_compute<T>(static_cast<double>(to_compute(xp[i])) * ar + br);
      }
    });
  });
}

// ---- InstanceNormalization / GroupNormalization ----------------------------------------------

// Normalizes rows of `len` contiguous elements; row r's element i gets scale/bias from
// param(r, i).
template <class T, class Param>
void normalize_rows(const T* xs, T* ys, int64_t rows, int64_t len, double eps, ThreadPool* pool, Param param) {
  parallel_for(pool, rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xp = xs + r * len;
      T* yp = ys + r * len;
      double mean, var;
      mean_var(len, [&](int64_t i) { return static_cast<double>(to_compute(xp[i])); }, mean, var);
      const double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t i = 0; i < len; ++i) {
        double s, b;
        param(r, i, s, b);
        yp[i] = from_compute<T>((static_cast<double>(to_compute(xp[i])) - mean) * inv * s + b);
      }
    }
  });
}

Status instance_norm_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const double eps = ctx.attrs().get_float("epsilon", 1e-5f);
  const std::vector<double> scale = to_doubles(ctx.input(1)), bias = to_doubles(ctx.input(2));
  const int64_t c = x.dim(1), plane = x.shape().numel(2, x.rank());
  return visit_float(x.dtype(), "InstanceNormalization", [&](auto tag) {
    using T = decltype(tag);
    normalize_rows(x.data_as<T>(), ctx.output(0).data_as<T>(), x.dim(0) * c, plane, eps, ctx.pool(),
                   [&](int64_t r, int64_t, double& s, double& b) {
                     s = scale[r % c];
                     b = bias[r % c];
                   });
  });
}

Status group_norm_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const double eps = ctx.attrs().get_float("epsilon", 1e-5f);
  const int64_t groups = ctx.attrs().get_int("num_groups", 1);
  const std::vector<double> scale = to_doubles(ctx.input(1)), bias = to_doubles(ctx.input(2));
  const int64_t c = x.dim(1), plane = x.shape().numel(2, x.rank());
  const int64_t per_group = c / groups;
  const bool per_channel = ctx.opset() >= 21;
  return visit_float(x.dtype(), "GroupNormalization", [&](auto tag) {
    using T = decltype(tag);
    normalize_rows(x.data_as<T>(), ctx.output(0).data_as<T>(), x.dim(0) * groups, per_group * plane, eps,
                   ctx.pool(), [&](int64_t r, int64_t i, double& s, double& b) {
                     const int64_t g = r % groups;
                     const int64_t p = per_channel ? g * per_group + i / plane : g;
                     s = scale[p];
                     b = bias[p];
                   });
  });
}

// ---- LayerNormalization --------------------------------------------------------------------

Status layer_norm_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int rank = x.rank();
  const int axis = *normalize_axis(ctx.attrs().get_int("axis", -1), rank);
  const double eps = ctx.attrs().get_float("epsilon", 1e-5f);
  const int64_t outer = x.shape().numel(0, axis), inner = x.shape().numel(axis, rank);
  // Scale and B broadcast to X. The usual shape (the normalized axes) is read at the
  // position within the row; any other broadcast goes through a per-element offset table.
  auto offsets_of = [&](int input) {
    std::vector<int64_t> off;
    if (!ctx.has_input(input)) return off;
    const Tensor& p = ctx.input(input);
    const std::vector<int64_t> st = broadcast_strides(p.shape(), x.shape());
    bool row_shaped = p.numel() == inner;
    int64_t s = 1;
    for (int i = 0; i < rank && row_shaped; ++i) {
      const int j = rank - 1 - i;  // walk from the last axis
      if (j >= axis) {
        if (x.dim(j) != 1 && st[j] != s) row_shaped = false;
        s *= x.dim(j);
      } else if (st[j] != 0) {
        row_shaped = false;
      }
    }
    if (row_shaped) return off;
    off.resize(static_cast<size_t>(x.numel()));
    if (x.numel() == 0) return off;
    StridedIndexer it(x.shape(), {broadcast_strides(p.shape(), x.shape())});
    int64_t i = 0;
    do off[i++] = it.offset(0);
    while (it.next());
    return off;
  };
  const std::vector<int64_t> soff = offsets_of(1), boff = offsets_of(2);
  const std::vector<double> scale = to_doubles(ctx.input(1));
  const std::vector<double> bias = ctx.has_input(2) ? to_doubles(ctx.input(2)) : std::vector<double>();
  float* mean_out = ctx.has_output(1) ? ctx.output(1).data_as<float>() : nullptr;
  float* inv_out = ctx.has_output(2) ? ctx.output(2).data_as<float>() : nullptr;
  return visit_float(x.dtype(), "LayerNormalization", [&](auto tag) {
    using T = decltype(tag);
    const T* xs = x.data_as<T>();
    T* ys = ctx.output(0).data_as<T>();
    parallel_for(ctx.pool(), outer, 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* xp = xs + r * inner;
        T* yp = ys + r * inner;
        double mean, var;
        mean_var(inner, [&](int64_t i) { return static_cast<double>(to_compute(xp[i])); }, mean, var);
        const double inv = 1.0 / std::sqrt(var + eps);
        if (mean_out) mean_out[r] = static_cast<float>(mean);
        if (inv_out) inv_out[r] = static_cast<float>(inv);
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t flat = r * inner + i;
          const double sc = soff.empty() ? scale[i] : scale[soff[flat]];
          const double b = bias.empty() ? 0.0 : (boff.empty() ? bias[i] : bias[boff[flat]]);
          yp[i] = from_compute<T>((static_cast<double>(to_compute(xp[i])) - mean) * inv * sc + b);
        }
      }
    });
  });
}

// ---- LRN -----------------------------------------------------------------------------------

Status lrn_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t size = ctx.attrs().get_int("size", 1);
  const double alpha = ctx.attrs().get_float("alpha", 1e-4f);
  const double beta = ctx.attrs().get_float("beta", 0.75f);
  const double bias = ctx.attrs().get_float("bias", 1.0f);
  const int64_t n = x.dim(0), c = x.dim(1), plane = x.shape().numel(2, x.rank());
  const int64_t before = (size - 1) / 2, after = size - 1 - before;  // floor and ceil of (size-1)/2
  return visit_float(x.dtype(), "LRN", [&](auto tag) {
    using T = decltype(tag);
    const T* xs = x.data_as<T>();
    T* ys = ctx.output(0).data_as<T>();
    parallel_for(ctx.pool(), n * c, 1, [&](int64_t begin, int64_t end) {
      std::vector<double> sq(static_cast<size_t>(plane));
      for (int64_t r = begin; r < end; ++r) {
        const int64_t img = r / c, ch = r % c;
        std::fill(sq.begin(), sq.end(), 0.0);
        for (int64_t k = std::max<int64_t>(0, ch - before); k <= std::min(c - 1, ch + after); ++k) {
          const T* xp = xs + (img * c + k) * plane;
          for (int64_t i = 0; i < plane; ++i) {
            const double v = static_cast<double>(to_compute(xp[i]));
            sq[i] += v * v;
          }
        }
        const T* xp = xs + r * plane;
        T* yp = ys + r * plane;
        for (int64_t i = 0; i < plane; ++i)
          yp[i] = from_compute<T>(static_cast<double>(to_compute(xp[i])) /
                                  std::pow(bias + alpha / static_cast<double>(size) * sq[i], beta));
      }
    });
  });
}

// ---- MeanVarianceNormalization -------------------------------------------------------------

// Y = (X - mean) / (sqrt(var) + 1e-9) with statistics over `axes`, as ONNX's function body.
Status mvn_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& shape = x.shape();
  const int rank = shape.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : ctx.attrs().get_ints("axes", {0, 2, 3})) reduced[*normalize_axis(a, rank)] = true;
  // Statistics index of each element: its coordinates on the kept axes.
  Shape kept;
  for (int i = 0; i < rank; ++i) kept.push_back(reduced[i] ? 1 : shape[i]);
  const int64_t groups = kept.numel(), total = x.numel();
  std::vector<int64_t> group_of(static_cast<size_t>(total));
  if (total > 0) {
    StridedIndexer it(shape, {broadcast_strides(kept, shape)});
    int64_t i = 0;
    do group_of[i++] = it.offset(0);
    while (it.next());
  }
  const int64_t count = groups > 0 ? total / groups : 0;
  return visit_float(x.dtype(), "MeanVarianceNormalization", [&](auto tag) {
    using T = decltype(tag);
    const T* xs = x.data_as<T>();
    T* ys = ctx.output(0).data_as<T>();
    std::vector<double> mean(groups, 0.0), var(groups, 0.0);
    for (int64_t i = 0; i < total; ++i) mean[group_of[i]] += static_cast<double>(to_compute(xs[i]));
    for (auto& m : mean) m /= static_cast<double>(std::max<int64_t>(count, 1));
    for (int64_t i = 0; i < total; ++i) {
      const double d = static_cast<double>(to_compute(xs[i])) - mean[group_of[i]];
      var[group_of[i]] += d * d;
    }
    for (auto& v : var) v = std::sqrt(v / static_cast<double>(std::max<int64_t>(count, 1))) + 1e-9;
    for (int64_t i = 0; i < total; ++i)
      ys[i] = from_compute<T>((static_cast<double>(to_compute(xs[i])) - mean[group_of[i]]) / var[group_of[i]]);
  });
}

// ---- LpNormalization ------------------------------------------------------------------------

// Y = X / ||X||_p over `axis` (p = 1 or 2); a zero norm gives 0, as LpNormalization-22 defines.
Status lp_normalization_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& shape = x.shape();
  const int axis = static_cast<int>(*normalize_axis(ctx.attrs().get_int("axis", -1), shape.rank()));
  const bool l1 = ctx.attrs().get_int("p", 2) == 1;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= shape[i];
  for (int i = axis + 1; i < shape.rank(); ++i) inner *= shape[i];
  const int64_t n = shape[axis];
  return visit_float(x.dtype(), "LpNormalization", [&](auto tag) {
    using T = decltype(tag);
    const T* xs = x.data_as<T>();
    T* ys = ctx.output(0).data_as<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * n * inner + i;
        double norm = 0.0;
        for (int64_t k = 0; k < n; ++k) {
          const double v = static_cast<double>(to_compute(xs[base + k * inner]));
          norm += l1 ? std::fabs(v) : v * v;
        }
        if (!l1) norm = std::sqrt(norm);
        for (int64_t k = 0; k < n; ++k) {
          const double v = static_cast<double>(to_compute(xs[base + k * inner]));
          ys[base + k * inner] = from_compute<T>(norm == 0.0 ? 0.0 : v / norm);
        }
      }
  });
}

constexpr DTypeSet kFloats = DTypeSet::floats();

}  // namespace

void register_nn_norm(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "BatchNormalization", .since_opset = 1, .types = kFloats,
         .id = "ref/batchnormalization", .fn = batch_norm_kernel});
  r.add({.domain = "", .op_type = "InstanceNormalization", .since_opset = 1, .types = kFloats,
         .id = "ref/instancenormalization", .fn = instance_norm_kernel});
  r.add({.domain = "", .op_type = "LayerNormalization", .since_opset = 17, .types = kFloats,
         .id = "ref/layernormalization", .fn = layer_norm_kernel});
  // ai.ignis.LayerNormalization: the same op for models importing opsets below 17.
  r.add({.domain = "ai.ignis", .op_type = "LayerNormalization", .since_opset = 1, .until_opset = 1, .types = kFloats,
         .id = "ref/ignis_layernormalization", .fn = layer_norm_kernel});
  r.add({.domain = "", .op_type = "GroupNormalization", .since_opset = 18, .types = kFloats,
         .id = "ref/groupnormalization", .fn = group_norm_kernel});
  r.add({.domain = "", .op_type = "LRN", .since_opset = 1, .types = kFloats, .id = "ref/lrn",
         .fn = lrn_kernel});
  r.add({.domain = "", .op_type = "MeanVarianceNormalization", .since_opset = 9,
         .types = kFloats, .id = "ref/meanvariancenormalization", .fn = mvn_kernel});
  r.add({.domain = "", .op_type = "LpNormalization", .since_opset = 1, .types = kFloats, .id = "ref/lpnormalization",
         .fn = lp_normalization_kernel});
}

}  // namespace ignis::kernels::ref
