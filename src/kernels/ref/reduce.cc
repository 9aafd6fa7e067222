// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the reduction family: Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax/
// Hardmax, SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss.
//
// Reduce*: the input dims are coalesced (extent-1 dims dropped, neighbours that are both
// reduced or both kept merged), then the input is walked once in memory order and every element
// is folded into the accumulator of its output element (double for float inputs, 64-bit wrapping
// integers for integer sums and products). A run along the innermost coalesced dim folds into one
// accumulator when that dim is reduced, into consecutive ones when it is kept. When the outermost
// coalesced dim is kept it is split across threads, so threads own disjoint outputs.
//
// Softmax family and ArgMax/ArgMin view the input as [outer, n, inner] and work on each of the
// outer * inner rows of n elements (stride inner), in double.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "kernels/ref/reduce_internal.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {

ReduceLayout make_reduce_layout(const KernelContext& ctx, int axes_input_since) {
  const Shape& in = ctx.input(0).shape();
  const int rank = in.rank();
  std::vector<int64_t> axes;
  bool noop = false;
  if (ctx.opset() >= axes_input_since) {
    if (ctx.has_input(1)) {
      const Tensor& a = ctx.input(1);
      for (int64_t k = 0; k < a.numel(); ++k) axes.push_back(load_as_int64(a.dtype(), a.data(), k));
    }
    noop = ctx.attrs().get_int("noop_with_empty_axes", 0) != 0;
  } else {
    axes = ctx.attrs().get_ints("axes");
  }
  ReduceLayout l;
  if (axes.empty() && noop) {
    l.noop = true;
    return l;
  }
  bool red[Shape::kMaxRank] = {};
  for (int64_t a : axes) red[a < 0 ? a + rank : a] = true;
  if (axes.empty()) std::fill(red, red + rank, true);

  for (int d = 0; d < rank; ++d) {
    if (red[d]) l.count *= in[d];
    else l.out_numel *= in[d];
    if (in[d] == 1) continue;
    if (l.rank > 0 && l.reduced[l.rank - 1] == red[d]) {
      l.dims[l.rank - 1] *= in[d];
    } else {
      l.dims[l.rank] = in[d];
      l.reduced[l.rank] = red[d];
      ++l.rank;
    }
  }
  int64_t in_stride = 1, out_stride = 1;
  for (int d = l.rank - 1; d >= 0; --d) {
    l.in_strides[d] = in_stride;
    in_stride *= l.dims[d];
    l.out_strides[d] = l.reduced[d] ? 0 : out_stride;
    if (!l.reduced[d]) out_stride *= l.dims[d];
  }
  return l;
}


namespace {

// Elements per parallel chunk, so small tensors stay on the calling thread.
constexpr int64_t kGrainElements = 1 << 15;

template <class T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

template <class T>
bool is_negative(T v) {
  if constexpr (std::is_signed_v<T>) return v < 0;
  else return false;
}

// double -> integer without undefined behaviour: NaN maps to 0, out-of-range values saturate.
template <class T>
T saturate_cast(double v) {
  if (std::isnan(v)) return T{0};
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (v <= lo) return std::numeric_limits<T>::lowest();
  if (v >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// Stores a double result into an element of type T.
template <class T>
T store_from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0.0;
  else if constexpr (std::is_integral_v<T>) return saturate_cast<T>(v);
  else return from_compute<T>(v);
}

// Calls f with a value of the storage type for the four float dtypes (callers validated it).
template <class F>
Status visit_float_dtype(DType t, F&& f) {
  switch (t) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::F16: return f(Half{});
    case DType::BF16: return f(BFloat16{});
    default: return internal_error(str_cat("float kernel called with dtype ", dtype_name(t)));
  }
}

// ---------------------------------------------------------------------------------------------
// Reduce*

enum class ReduceKind { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

// Calls run(x_offset, out_offset, len, out_step) for every innermost run of the layout whose
// outermost index lies in [begin, end). out_step is 0 when the innermost dim is reduced.
template <class Run>
void for_each_run(const ReduceLayout& l, int64_t begin, int64_t end, Run&& run) {
  const int r = l.rank;
  if (r == 0) {
    run(int64_t{0}, int64_t{0}, int64_t{1}, int64_t{0});
    return;
  }
  const int64_t step = l.reduced[r - 1] ? 0 : 1;
  if (r == 1) {
    run(begin, begin * step, end - begin, step);
    return;
  }
  const int64_t inner = l.dims[r - 1];
  int64_t idx[Shape::kMaxRank] = {};
  for (int64_t i0 = begin; i0 < end; ++i0) {
    int64_t xo = i0 * l.in_strides[0];
    int64_t oo = i0 * l.out_strides[0];
    std::fill(idx, idx + r, 0);
    for (;;) {
      run(xo, oo, inner, step);
      int d = r - 2;
      for (; d >= 1; --d) {
        if (++idx[d] < l.dims[d]) {
          xo += l.in_strides[d];
          oo += l.out_strides[d];
          break;
        }
        xo -= l.in_strides[d] * (l.dims[d] - 1);
        oo -= l.out_strides[d] * (l.dims[d] - 1);
        idx[d] = 0;
      }
      if (d < 1) break;
    }
  }
}

// Folds every input element into acc[its output index] with fold(acc_ref, load(x), out_index).
template <class T, class Acc, class Load, class Fold>
void fold_input(const KernelContext& ctx, const ReduceLayout& l, Acc* acc, Load load, Fold fold) {
  const T* x = ctx.input(0).data_as<const T>();
  auto body = [&](int64_t b, int64_t e) {
    for_each_run(l, b, e, [&](int64_t xo, int64_t oo, int64_t len, int64_t step) {
      const T* xs = x + xo;
      if (step == 0) {
        Acc a = acc[oo];
        for (int64_t j = 0; j < len; ++j) fold(a, load(xs[j]), oo);
        acc[oo] = a;
      } else {
        for (int64_t j = 0; j < len; ++j) fold(acc[oo + j], load(xs[j]), oo + j);
      }
    });
  };
  const int64_t outer = l.rank == 0 ? 1 : l.dims[0];
  if (l.rank > 0 && !l.reduced[0] && outer > 1) {
    const int64_t per_outer = std::max<int64_t>(1, ctx.input(0).numel() / outer);
    parallel_for(ctx.pool(), outer, std::max<int64_t>(1, kGrainElements / per_outer), body);
  } else {
    body(0, outer);
  }
}

template <class Acc>
Acc* reduce_scratch(const KernelContext& ctx, int64_t n, Acc init) {
  Acc* acc = static_cast<Acc*>(ctx.scratch(static_cast<size_t>(n) * sizeof(Acc)));
  std::fill(acc, acc + n, init);
  return acc;
}

// Max/Min with numpy semantics: a NaN anywhere makes the result NaN.
template <class V>
void fold_max(V& a, V v) {
  if (v > a || is_nan(v)) a = is_nan(a) ? a : v;
}
template <class V>
void fold_min(V& a, V v) {
  if (v < a || is_nan(v)) a = is_nan(a) ? a : v;
}

// Every kind computed in double (float inputs; integer inputs of L2/LogSum/LogSumExp).
template <class T>
void reduce_in_double(const KernelContext& ctx, ReduceKind kind, const ReduceLayout& l, T* y) {
  const int64_t n = l.out_numel;
  const bool has_data = ctx.input(0).numel() > 0;
  auto load = [](T v) { return static_cast<double>(to_compute(v)); };
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double init = kind == ReduceKind::Prod ? 1.0
                      : (kind == ReduceKind::Max || kind == ReduceKind::LogSumExp) ? -kInf
                      : kind == ReduceKind::Min ? kInf
                                                : 0.0;
  // LogSumExp keeps the per-output maximum in the second half of the scratch.
  double* acc = static_cast<double*>(
      ctx.scratch(static_cast<size_t>(n) * sizeof(double) * (kind == ReduceKind::LogSumExp ? 2 : 1)));
  std::fill(acc, acc + n, init);
  if (has_data) {
    switch (kind) {
      case ReduceKind::Sum:
      case ReduceKind::Mean:
      case ReduceKind::LogSum:
        fold_input<T>(ctx, l, acc, load, [](double& a, double v, int64_t) { a += v; });
        break;
      case ReduceKind::L1:
        fold_input<T>(ctx, l, acc, load, [](double& a, double v, int64_t) { a += std::fabs(v); });
        break;
      case ReduceKind::L2:
      case ReduceKind::SumSquare:
        fold_input<T>(ctx, l, acc, load, [](double& a, double v, int64_t) { a += v * v; });
        break;
      case ReduceKind::Prod:
        fold_input<T>(ctx, l, acc, load, [](double& a, double v, int64_t) { a *= v; });
        break;
      case ReduceKind::Max:
        fold_input<T>(ctx, l, acc, load, [](double& a, double v, int64_t) { fold_max(a, v); });
        break;
      case ReduceKind::Min:
        fold_input<T>(ctx, l, acc, load, [](double& a, double v, int64_t) { fold_min(a, v); });
        break;
      case ReduceKind::LogSumExp: {
        double* shift = acc + n;
        std::fill(shift, shift + n, -kInf);
        fold_input<T>(ctx, l, shift, load, [](double& a, double v, int64_t) { fold_max(a, v); });
        // Shifting by the maximum keeps exp() in range; an infinite maximum (all -inf, or a +inf
        // element) is not subtracted, which gives -inf and +inf respectively.
        for (int64_t o = 0; o < n; ++o)
          if (!std::isfinite(shift[o]) && !std::isnan(shift[o])) shift[o] = 0.0;
        std::fill(acc, acc + n, 0.0);
        fold_input<T>(ctx, l, acc, load, [shift](double& a, double v, int64_t o) { a += std::exp(v - shift[o]); });
        for (int64_t o = 0; o < n; ++o) acc[o] = std::log(acc[o]) + shift[o];
        break;
      }
    }
  } else if (kind == ReduceKind::LogSumExp) {
    std::fill(acc, acc + n, -kInf);
  }
  const double count = static_cast<double>(l.count);
  for (int64_t o = 0; o < n; ++o) {
    double v = acc[o];
    switch (kind) {
      case ReduceKind::Mean: v = v / count; break;  // 0/0 = NaN for an empty reduction
      case ReduceKind::L2: v = std::sqrt(v); break;
      case ReduceKind::LogSum: v = std::log(v); break;
      default: break;
    }
    y[o] = store_from_double<T>(v);
  }
}

// Integer inputs: exact 64-bit arithmetic for sums and products (wrapping like the narrow
// type would), native comparisons for max/min.
template <class T>
void reduce_integer(const KernelContext& ctx, ReduceKind kind, const ReduceLayout& l, T* y) {
  using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  const int64_t n = l.out_numel;
  const bool has_data = ctx.input(0).numel() > 0;
  auto identity = [](T v) { return v; };
  if (kind == ReduceKind::Max || kind == ReduceKind::Min) {
    const bool is_max = kind == ReduceKind::Max;
    T* acc = reduce_scratch<T>(ctx, n, is_max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max());
    if (has_data) {
      if (is_max) fold_input<T>(ctx, l, acc, identity, [](T& a, T v, int64_t) { a = std::max(a, v); });
      else fold_input<T>(ctx, l, acc, identity, [](T& a, T v, int64_t) { a = std::min(a, v); });
    }
    std::copy(acc, acc + n, y);
    return;
  }
  if (kind == ReduceKind::L2 || kind == ReduceKind::LogSum || kind == ReduceKind::LogSumExp) {
    reduce_in_double<T>(ctx, kind, l, y);
    return;
  }
  auto widen = [](T v) { return static_cast<uint64_t>(static_cast<Wide>(v)); };
  uint64_t* acc = reduce_scratch<uint64_t>(ctx, n, kind == ReduceKind::Prod ? 1 : 0);
  if (has_data) {
    switch (kind) {
      case ReduceKind::Prod:
        fold_input<T>(ctx, l, acc, widen, [](uint64_t& a, uint64_t v, int64_t) { a *= v; });
        break;
      case ReduceKind::L1:
        fold_input<T>(ctx, l, acc, identity, [](uint64_t& a, T v, int64_t) {
          const uint64_t w = static_cast<uint64_t>(static_cast<Wide>(v));
          a += (is_negative(v) ? uint64_t{0} - w : w);
        });
        break;
      case ReduceKind::SumSquare:
        fold_input<T>(ctx, l, acc, widen, [](uint64_t& a, uint64_t v, int64_t) { a += v * v; });
        break;
      default:  // Sum, Mean
        fold_input<T>(ctx, l, acc, widen, [](uint64_t& a, uint64_t v, int64_t) { a += v; });
        break;
    }
  }
  for (int64_t o = 0; o < n; ++o) {
    Wide v = static_cast<Wide>(acc[o]);
    if (kind == ReduceKind::Mean) v = l.count == 0 ? Wide{0} : v / static_cast<Wide>(l.count);
    y[o] = static_cast<T>(v);
  }
}

template <ReduceKind kKind>
Status reduce_kernel(KernelContext& ctx) {
  const ReduceLayout l = make_reduce_layout(ctx, kKind == ReduceKind::Sum ? 13 : 18);
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (l.noop) {
    if (x.nbytes() > 0 && y.data() != x.data()) std::memmove(y.data(), x.data(), x.nbytes());
    return Status::ok();
  }
  if (l.out_numel == 0) return Status::ok();
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    T* out = y.data_as<T>();
    if constexpr (std::is_same_v<T, bool>) {
      // ReduceMax/ReduceMin on bool (opset 20): False < True.
      const bool is_max = kKind == ReduceKind::Max;
      if (kKind != ReduceKind::Max && kKind != ReduceKind::Min)
        return internal_error("bool reduction other than max/min");
      bool* acc = reduce_scratch<bool>(ctx, l.out_numel, !is_max);
      if (x.numel() > 0) {
        auto load = [](bool v) { return v; };
        if (is_max) fold_input<bool>(ctx, l, acc, load, [](bool& a, bool v, int64_t) { a = a || v; });
        else fold_input<bool>(ctx, l, acc, load, [](bool& a, bool v, int64_t) { a = a && v; });
      }
      std::copy(acc, acc + l.out_numel, out);
    } else if constexpr (std::is_integral_v<T>) {
      reduce_integer<T>(ctx, kKind, l, out);
    } else {
      reduce_in_double<T>(ctx, kKind, l, out);
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------------
// Shared [outer, n, inner] view of one axis.

struct AxisLayout {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};

AxisLayout make_axis_layout(const Shape& s, int axis) {
  return {s.numel(0, axis), s[axis], s.numel(axis + 1, s.rank())};
}

// True when v should replace the current best of an ArgMax (or ArgMin when !is_max) scan.
// NaN wins over numbers, as numpy's argmax/argmin report the first NaN.
template <class V>
bool arg_better(V v, V best, bool is_max, bool select_last) {
  if (is_nan(best)) return select_last && is_nan(v);
  if (is_nan(v)) return true;
  if (select_last && v == best) return true;
  return is_max ? v > best : v < best;
}

template <bool kIsMax>
Status arg_reduce_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int rank = x.rank();
  const int64_t a = ctx.attrs().get_int("axis", 0);
  const AxisLayout l = make_axis_layout(x.shape(), static_cast<int>(a < 0 ? a + rank : a));
  const bool select_last = ctx.attrs().get_int("select_last_index", 0) != 0;
  int64_t* y = ctx.output(0).data_as<int64_t>();
  if (l.n == 0) return Status::ok();  // shape inference allowed this only for empty outputs
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return internal_error("ArgMax/ArgMin on bool");
    } else {
      const T* xs = x.data_as<const T>();
      const int64_t rows = l.outer * l.inner;
      parallel_for(ctx.pool(), rows, std::max<int64_t>(1, kGrainElements / l.n), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const T* row = xs + (r / l.inner) * l.n * l.inner + r % l.inner;
          auto best = to_compute(row[0]);
          int64_t best_j = 0;
          for (int64_t j = 1; j < l.n; ++j) {
            const auto v = to_compute(row[j * l.inner]);
            if (arg_better(v, best, kIsMax, select_last)) {
              best = v;
              best_j = j;
            }
          }
          y[r] = best_j;
        }
      });
      return Status::ok();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Softmax, LogSoftmax, Hardmax

enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

template <SoftmaxKind kKind>
Status softmax_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& s = x.shape();
  const int rank = s.rank();
  AxisLayout l;
  if (ctx.opset() < 13) {
    // Coerced to 2-D [prod(dims[:axis]), prod(dims[axis:])]; each row is one softmax.
    int64_t a = ctx.attrs().get_int("axis", 1);
    if (a < 0) a += rank;
    l = {s.numel(0, static_cast<int>(a)), s.numel(static_cast<int>(a), rank), 1};
  } else {
    const int64_t a = ctx.attrs().get_int("axis", -1);
    l = make_axis_layout(s, static_cast<int>(a < 0 ? a + rank : a));
  }
  if (l.n == 0 || x.numel() == 0) return Status::ok();
  return visit_float_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* xs = x.data_as<const T>();
    T* ys = ctx.output(0).data_as<T>();
    const int64_t rows = l.outer * l.inner;
    parallel_for(ctx.pool(), rows, std::max<int64_t>(1, kGrainElements / l.n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t base = (r / l.inner) * l.n * l.inner + r % l.inner;
        const T* row = xs + base;
        T* out = ys + base;
        auto at = [&](int64_t j) { return static_cast<double>(to_compute(row[j * l.inner])); };
        if constexpr (kKind == SoftmaxKind::Hardmax) {
          double best = at(0);
          int64_t best_j = 0;
          for (int64_t j = 1; j < l.n; ++j) {
            const double v = at(j);
            if (arg_better(v, best, true, false)) {
              best = v;
              best_j = j;
            }
          }
          for (int64_t j = 0; j < l.n; ++j) out[j * l.inner] = from_compute<T>(j == best_j ? 1.0 : 0.0);
        } else {
          double m = -std::numeric_limits<double>::infinity();
          for (int64_t j = 0; j < l.n; ++j) m = std::max(m, at(j));
          double sum = 0.0;
          if constexpr (kKind == SoftmaxKind::Softmax && !is_half_like_v<T>) {
            // float/double outputs hold exp(x - max) until the sum is known: one exp per element.
            for (int64_t j = 0; j < l.n; ++j) {
              const double e = std::exp(at(j) - m);
              out[j * l.inner] = static_cast<T>(e);
              sum += e;
            }
            for (int64_t j = 0; j < l.n; ++j)
              out[j * l.inner] = static_cast<T>(static_cast<double>(out[j * l.inner]) / sum);
          } else if constexpr (kKind == SoftmaxKind::Softmax) {
            for (int64_t j = 0; j < l.n; ++j) sum += std::exp(at(j) - m);
            for (int64_t j = 0; j < l.n; ++j) out[j * l.inner] = from_compute<T>(std::exp(at(j) - m) / sum);
          } else {
            for (int64_t j = 0; j < l.n; ++j) sum += std::exp(at(j) - m);
            const double log_sum = std::log(sum);
            for (int64_t j = 0; j < l.n; ++j) out[j * l.inner] = from_compute<T>(at(j) - m - log_sum);
          }
        }
      }
    });
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------------
// SoftmaxCrossEntropyLoss (kFromScores: log-softmax over C first) and NegativeLogLikelihoodLoss
// (input already holds log-probabilities). Inputs are viewed as [N, C, D] and [N, D].

template <bool kFromScores>
Status loss_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& labels = ctx.input(1);
  const Tensor* weights = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  const std::string reduction = ctx.attrs().get_string("reduction", "mean");
  const bool has_ignore = ctx.attrs().has("ignore_index");
  const int64_t ignore_index = ctx.attrs().get_int("ignore_index", 0);
  const int64_t num = x.dim(0);
  const int64_t classes = x.dim(1);
  const int64_t d_size = x.shape().numel(2, x.rank());
  return visit_float_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* xs = x.data_as<const T>();
    const T* ws = weights ? weights->data_as<const T>() : nullptr;
    T* loss_out = ctx.output(0).data_as<T>();
    T* log_prob = kFromScores && ctx.has_output(1) ? ctx.output(1).data_as<T>() : nullptr;
    const bool per_element = reduction == "none";
    double total_loss = 0.0;
    double total_weight = 0.0;
    for (int64_t i = 0; i < num; ++i) {
      for (int64_t d = 0; d < d_size; ++d) {
        const T* col = xs + i * classes * d_size + d;  // class c at col[c * d_size]
        auto at = [&](int64_t c) { return static_cast<double>(to_compute(col[c * d_size])); };
        double shift = 0.0;  // log-probability of class c = at(c) - shift
        if constexpr (kFromScores) {
          double m = -std::numeric_limits<double>::infinity();
          for (int64_t c = 0; c < classes; ++c) m = std::max(m, at(c));
          double sum = 0.0;
          for (int64_t c = 0; c < classes; ++c) sum += std::exp(at(c) - m);
          shift = m + std::log(sum);
          if (log_prob)
            for (int64_t c = 0; c < classes; ++c)
              log_prob[i * classes * d_size + c * d_size + d] = from_compute<T>(at(c) - shift);
        }
        const int64_t k = i * d_size + d;
        const int64_t label = load_as_int64(labels.dtype(), labels.data(), k);
        double loss = 0.0;
        if (!(has_ignore && label == ignore_index)) {
          if (label < 0 || label >= classes)
            return out_of_range(str_cat(kFromScores ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss",
                                        ": label ", label, " at index ", k, " is outside [0, ", classes, ")"));
          const double w = ws ? static_cast<double>(to_compute(ws[label])) : 1.0;
          loss = -(at(label) - shift) * w;
          total_weight += w;
        }
        total_loss += loss;
        if (per_element) loss_out[k] = from_compute<T>(loss);
      }
    }
    if (reduction == "sum") loss_out[0] = from_compute<T>(total_loss);
    else if (!per_element) loss_out[0] = from_compute<T>(total_loss / total_weight);
    return Status::ok();
  });
}

KernelDef make_def(std::string_view op, int since, DTypeSet types, std::string_view id, KernelFn fn) {
  KernelDef d;
  d.op_type = op;
  d.since_opset = since;
  d.types = types;
  d.id = id;
  d.fn = fn;
  return d;
}

}  // namespace

void register_reduce(KernelRegistry& r) {
  const DTypeSet numeric = DTypeSet::numeric();
  const DTypeSet with_bool = numeric | DTypeSet{DType::Bool};
  const DTypeSet floats = DTypeSet::floats();
  r.add(make_def("ReduceSum", 1, numeric, "ref/reducesum", reduce_kernel<ReduceKind::Sum>));
  r.add(make_def("ReduceMean", 1, numeric, "ref/reducemean", reduce_kernel<ReduceKind::Mean>));
  r.add(make_def("ReduceMax", 1, with_bool, "ref/reducemax", reduce_kernel<ReduceKind::Max>));
  r.add(make_def("ReduceMin", 1, with_bool, "ref/reducemin", reduce_kernel<ReduceKind::Min>));
  r.add(make_def("ReduceProd", 1, numeric, "ref/reduceprod", reduce_kernel<ReduceKind::Prod>));
  r.add(make_def("ReduceL1", 1, numeric, "ref/reducel1", reduce_kernel<ReduceKind::L1>));
  r.add(make_def("ReduceL2", 1, numeric, "ref/reducel2", reduce_kernel<ReduceKind::L2>));
  r.add(make_def("ReduceLogSum", 1, numeric, "ref/reducelogsum", reduce_kernel<ReduceKind::LogSum>));
  r.add(make_def("ReduceLogSumExp", 1, numeric, "ref/reducelogsumexp", reduce_kernel<ReduceKind::LogSumExp>));
  r.add(make_def("ReduceSumSquare", 1, numeric, "ref/reducesumsquare", reduce_kernel<ReduceKind::SumSquare>));
  r.add(make_def("ArgMax", 1, numeric, "ref/argmax", arg_reduce_kernel<true>));
  r.add(make_def("ArgMin", 1, numeric, "ref/argmin", arg_reduce_kernel<false>));
  r.add(make_def("Softmax", 1, floats, "ref/softmax", softmax_kernel<SoftmaxKind::Softmax>));
  r.add(make_def("LogSoftmax", 1, floats, "ref/logsoftmax", softmax_kernel<SoftmaxKind::LogSoftmax>));
  r.add(make_def("Hardmax", 1, floats, "ref/hardmax", softmax_kernel<SoftmaxKind::Hardmax>));
  r.add(make_def("SoftmaxCrossEntropyLoss", 12, floats, "ref/softmaxcrossentropyloss", loss_kernel<true>));
  r.add(make_def("NegativeLogLikelihoodLoss", 12, floats, "ref/negativeloglikelihoodloss", loss_kernel<false>));
}

}  // namespace ignis::kernels::ref
