// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the indexing ops: Gather, GatherElements, GatherND, ScatterElements,
// Scatter, ScatterND, OneHot, NonZero, Compress, Trilu, ReverseSequence, CumSum, TopK, Unique.
// Index tensors come from data, so every index is range-checked (OutOfRange status); scatters
// validate all indices before writing anything.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "core/broadcast.h"
#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "kernels/ref/tensor_internal.h"

namespace ignis::kernels::ref::tensor_ops {
namespace {

int axis_of(int64_t axis, int rank) { return static_cast<int>(axis < 0 ? axis + rank : axis); }

void copy_input_to_output(const Tensor& in, Tensor& out) {
  if (out.data() != in.data() && in.nbytes() > 0) std::memmove(out.data(), in.data(), in.nbytes());
}

Status gather_kernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  Tensor& out = ctx.output(0);
  const int axis = axis_of(ctx.attrs().get_int("axis", 0), data.rank());
  const int64_t dim = data.dim(axis);
  const int64_t n = indices.numel();
  std::vector<int64_t> idx(n);
  for (int64_t j = 0; j < n; ++j) IGNIS_RETURN_IF_ERROR(load_index(indices, j, dim, "Gather", &idx[j]));
  const int64_t outer = data.shape().numel(0, axis);
  const auto block = data.shape().numel(axis + 1, data.rank()) * static_cast<int64_t>(dtype_size(data.dtype()));
  if (block == 0) return Status::ok();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      std::memcpy(bytes_of(out) + (o * n + j) * block, bytes_of(data) + (o * dim + idx[j]) * block,
                  static_cast<size_t>(block));
  return Status::ok();
}

// Element offsets into `data` for each entry of `indices` (GatherElements/ScatterElements):
// the entry's own coordinates, with the axis coordinate replaced by the index value.
Status element_offsets(const Tensor& data, const Tensor& indices, int axis, const char* op,
                       std::vector<int64_t>* offsets) {
  const int rank = data.rank();
  const auto ds = dense_strides(data);
  const int64_t n = indices.numel();
  offsets->resize(n);
  std::vector<int64_t> coord(rank, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t v = 0;
    IGNIS_RETURN_IF_ERROR(load_index(indices, e, data.dim(axis), op, &v));
    int64_t off = 0;
    for (int k = 0; k < rank; ++k) off += (k == axis ? v : coord[k]) * ds[k];
    (*offsets)[e] = off;
    for (int k = rank - 1; k >= 0; --k) {
      if (++coord[k] < indices.dim(k)) break;
      coord[k] = 0;
    }
  }
  return Status::ok();
}

Status gather_elements_kernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int axis = axis_of(ctx.attrs().get_int("axis", 0), data.rank());
  std::vector<int64_t> offsets;
  IGNIS_RETURN_IF_ERROR(element_offsets(data, ctx.input(1), axis, "GatherElements", &offsets));
  with_element_type(dtype_size(data.dtype()), [&](auto tag) {
    using U = decltype(tag);
    const U* d = data.data_as<U>();
    U* o = out.data_as<U>();
    for (size_t e = 0; e < offsets.size(); ++e) o[e] = d[offsets[e]];
  });
  return Status::ok();
}

// GatherND/ScatterND geometry: indices [batch..., tuples..., m] address slices of
// data[batch..., m dims, slice...].
struct NdLayout {
  int64_t batches = 1;      // product of the batch dims
  int64_t tuples = 1;       // index tuples per batch
  int64_t m = 0;            // tuple length
  int64_t slice = 1;        // elements per addressed slice
  int64_t batch_elems = 1;  // data elements per batch
};

// Data offsets (in elements) of every addressed slice, range-checked.
Status nd_offsets(const Tensor& data, const Tensor& indices, int b, const char* op, NdLayout* lay,
                  std::vector<int64_t>* offsets) {
  const int q = indices.rank();
  lay->m = indices.dim(q - 1);
  lay->batches = data.shape().numel(0, b);
  lay->tuples = indices.shape().numel(b, q - 1);
  lay->slice = data.shape().numel(b + static_cast<int>(lay->m), data.rank());
  lay->batch_elems = data.shape().numel(b, data.rank());
  const auto ds = dense_strides(data);
  offsets->resize(lay->batches * lay->tuples);
  for (int64_t t = 0; t < lay->batches * lay->tuples; ++t) {
    int64_t off = (t / std::max<int64_t>(lay->tuples, 1)) * lay->batch_elems;
    for (int64_t j = 0; j < lay->m; ++j) {
      const int axis = b + static_cast<int>(j);
      int64_t v = 0;
      IGNIS_RETURN_IF_ERROR(load_index(indices, t * lay->m + j, data.dim(axis), op, &v));
      off += v * ds[axis];
    }
    (*offsets)[t] = off;
  }
  return Status::ok();
}

Status gather_nd_kernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int b = ctx.opset() >= 12 ? static_cast<int>(ctx.attrs().get_int("batch_dims", 0)) : 0;
  NdLayout lay;
  std::vector<int64_t> offsets;
  IGNIS_RETURN_IF_ERROR(nd_offsets(data, ctx.input(1), b, "GatherND", &lay, &offsets));
  const auto esize = static_cast<int64_t>(dtype_size(data.dtype()));
  const int64_t block = lay.slice * esize;
  if (block == 0) return Status::ok();
  for (size_t t = 0; t < offsets.size(); ++t)
    std::memcpy(bytes_of(out) + static_cast<int64_t>(t) * block, bytes_of(data) + offsets[t] * esize,
                static_cast<size_t>(block));
  return Status::ok();
}

enum class Reduction { None, Add, Mul, Max, Min };

Reduction reduction_of(const KernelContext& ctx) {
  const std::string r = ctx.attrs().get_string("reduction", "none");
  if (r == "add") return Reduction::Add;
  if (r == "mul") return Reduction::Mul;
  if (r == "max") return Reduction::Max;
  if (r == "min") return Reduction::Min;
  return Reduction::None;
}

// Integers wrap like two's complement (no signed-overflow UB); floats compute in compute_t.
template <class T>
T reduce_value(T a, T b, Reduction r) {
  if constexpr (std::is_same_v<T, bool>) {
    return r == Reduction::Max ? (a || b) : r == Reduction::Min ? (a && b) : b;
  } else if constexpr (std::is_integral_v<T>) {
    switch (r) {
      case Reduction::Add: return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
      case Reduction::Mul: return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
      case Reduction::Max: return std::max(a, b);
      case Reduction::Min: return std::min(a, b);
      case Reduction::None: return b;
    }
    return b;
  } else {
    const auto x = to_compute(a), y = to_compute(b);
    switch (r) {
      case Reduction::Add: return from_compute<T>(x + y);
      case Reduction::Mul: return from_compute<T>(x * y);
      case Reduction::Max: return from_compute<T>(std::max(x, y));
      case Reduction::Min: return from_compute<T>(std::min(x, y));
      case Reduction::None: return b;
    }
    return b;
  }
}

// Applies updates[u * slice + i] to out[offsets[u] + i].
void scatter_apply(Tensor& out, const Tensor& updates, const std::vector<int64_t>& offsets, int64_t slice,
                   Reduction red) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data_as<T>();
    const T* u = updates.data_as<T>();
    for (size_t e = 0; e < offsets.size(); ++e) {
      T* dst = o + offsets[e];
      const T* src = u + static_cast<int64_t>(e) * slice;
      if (red == Reduction::None) {
        std::copy(src, src + slice, dst);
      } else {
        for (int64_t i = 0; i < slice; ++i) dst[i] = reduce_value(dst[i], src[i], red);
      }
    }
  });
}

Status scatter_elements_kernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int axis = axis_of(ctx.attrs().get_int("axis", 0), data.rank());
  std::vector<int64_t> offsets;
  IGNIS_RETURN_IF_ERROR(element_offsets(data, ctx.input(1), axis, "ScatterElements", &offsets));
  copy_input_to_output(data, out);
  scatter_apply(out, ctx.input(2), offsets, 1, reduction_of(ctx));
  return Status::ok();
}

Status scatter_nd_kernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  Tensor& out = ctx.output(0);
  NdLayout lay;
  std::vector<int64_t> offsets;
  IGNIS_RETURN_IF_ERROR(nd_offsets(data, ctx.input(1), 0, "ScatterND", &lay, &offsets));
  copy_input_to_output(data, out);
  scatter_apply(out, ctx.input(2), offsets, lay.slice, reduction_of(ctx));
  return Status::ok();
}

Status one_hot_kernel(KernelContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Tensor& values = ctx.input(2);
  Tensor& out = ctx.output(0);
  const int axis = axis_of(ctx.attrs().get_int("axis", -1), out.rank());
  const int64_t depth = out.dim(axis);
  const int64_t outer = indices.shape().numel(0, axis);
  const int64_t inner = indices.shape().numel(axis, indices.rank());
  with_element_type(dtype_size(out.dtype()), [&](auto tag) {
    using U = decltype(tag);
    const U off = values.data_as<U>()[0], on = values.data_as<U>()[1];
    U* o = out.data_as<U>();
    std::fill(o, o + out.numel(), off);
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t i = 0; i < inner; ++i) {
        // Non-integer indices are cast to int64 (truncation); out-of-range ones stay all "off".
        const double raw = load_as_double(indices.dtype(), indices.data(), a * inner + i);
        if (!(std::abs(raw) < static_cast<double>(depth) + 1)) continue;
        int64_t v = static_cast<int64_t>(raw);
        if (v < 0) v += depth;
        if (v < 0 || v >= depth) continue;
        o[(a * depth + v) * inner + i] = on;
      }
    }
  });
  return Status::ok();
}

template <class T>
bool is_nonzero(T v) {
  return to_compute(v) != compute_t<T>(0);
}

Status non_zero_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int rank = in.rank();
  const int64_t nnz = out.dim(1);
  int64_t* o = out.data_as<int64_t>();
  Status status;
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = in.data_as<T>();
    int64_t count = 0;
    for (int64_t i = 0; i < in.numel(); ++i) count += is_nonzero(p[i]) ? 1 : 0;
    if (count != nnz) {
      status = internal_error(str_cat("NonZero: input changed after shape inference (", count, " vs ", nnz, ")"));
      return;
    }
    if (rank == 0) {
      if (nnz == 1) o[0] = 0;
      return;
    }
    std::vector<int64_t> coord(rank, 0);
    int64_t j = 0;
    for (int64_t i = 0; i < in.numel(); ++i) {
      if (is_nonzero(p[i])) {
        for (int k = 0; k < rank; ++k) o[k * nnz + j] = coord[k];
        ++j;
      }
      for (int k = rank - 1; k >= 0; --k) {
        if (++coord[k] < in.dim(k)) break;
        coord[k] = 0;
      }
    }
  });
  return status;
}

Status compress_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& cond = ctx.input(1);
  Tensor& out = ctx.output(0);
  const bool has_axis = ctx.attrs().has("axis");
  const int axis = has_axis ? axis_of(ctx.attrs().get_int("axis"), in.rank()) : 0;
  const int64_t outer = has_axis ? in.shape().numel(0, axis) : 1;
  const int64_t dim = has_axis ? in.dim(axis) : in.numel();
  const int64_t inner = has_axis ? in.shape().numel(axis + 1, in.rank()) : 1;
  std::vector<int64_t> keep;
  const bool* c = cond.data_as<bool>();
  for (int64_t i = 0; i < std::min(dim, cond.numel()); ++i)
    if (c[i]) keep.push_back(i);
  const int64_t kept_dim = has_axis ? out.dim(axis) : out.numel();
  if (static_cast<int64_t>(keep.size()) != kept_dim)
    return internal_error("Compress: condition changed after shape inference");
  const auto block = inner * static_cast<int64_t>(dtype_size(in.dtype()));
  if (block == 0) return Status::ok();
  const auto kept = static_cast<int64_t>(keep.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < kept; ++j)
      std::memcpy(bytes_of(out) + (o * kept + j) * block, bytes_of(in) + (o * dim + keep[j]) * block,
                  static_cast<size_t>(block));
  return Status::ok();
}

Status trilu_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  int64_t k = 0;
  if (ctx.has_input(1)) k = load_as_int64(ctx.input(1).dtype(), ctx.input(1).data(), 0);
  const bool upper = ctx.attrs().get_int("upper", 1) != 0;
  const int rank = in.rank();
  const int64_t rows = in.dim(rank - 2), cols = in.dim(rank - 1);
  const int64_t mats = in.shape().numel(0, rank - 2);
  with_element_type(dtype_size(in.dtype()), [&](auto tag) {
    using U = decltype(tag);
    const U* src = in.data_as<U>();
    U* dst = out.data_as<U>();
    for (int64_t m = 0; m < mats; ++m) {
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t base = (m * rows + i) * cols;
        for (int64_t j = 0; j < cols; ++j) {
          const bool keep = upper ? j - i >= k : j - i <= k;
          dst[base + j] = keep ? src[base + j] : U{0};
        }
      }
    }
  });
  return Status::ok();
}

Status reverse_sequence_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& lens = ctx.input(1);
  Tensor& out = ctx.output(0);
  const int batch_axis = static_cast<int>(ctx.attrs().get_int("batch_axis", 1));
  const int time_axis = 1 - batch_axis;
  const int64_t batches = in.dim(batch_axis), steps = in.dim(time_axis);
  const auto s = dense_strides(in);
  const auto esize = static_cast<int64_t>(dtype_size(in.dtype()));
  const int64_t block = in.shape().numel(2, in.rank()) * esize;
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t len = lens.dtype() == DType::I32 ? lens.data_as<int32_t>()[b] : lens.data_as<int64_t>()[b];
    if (len < 0 || len > steps)
      return out_of_range(str_cat("ReverseSequence: sequence_lens[", b, "] = ", len, " is outside [0, ", steps, "]"));
  }
  if (block == 0) return Status::ok();
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t len = lens.dtype() == DType::I32 ? lens.data_as<int32_t>()[b] : lens.data_as<int64_t>()[b];
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t src_t = t < len ? len - 1 - t : t;
      const int64_t dst = (b * s[batch_axis] + t * s[time_axis]) * esize;
      const int64_t src = (b * s[batch_axis] + src_t * s[time_axis]) * esize;
      std::memcpy(bytes_of(out) + dst, bytes_of(in) + src, static_cast<size_t>(block));
    }
  }
  return Status::ok();
}

// TensorScatter: copies the cache, then each [prefix, step] row of `update` to the cache row at
// write_indices[batch] + step (modulo the cache length in circular mode).
Status tensor_scatter_kernel(KernelContext& ctx) {
  const Tensor& cache = ctx.input(0);
  const Tensor& update = ctx.input(1);
  Tensor& out = ctx.output(0);
  const int rank = cache.rank();
  const int axis = static_cast<int>(*ignis::normalize_axis(ctx.attrs().get_int("axis", -2), rank));
  const bool circular = ctx.attrs().get_string("mode", "linear") == "circular";
  if (out.data() != cache.data() && cache.nbytes() > 0) std::memcpy(out.data(), cache.data(), cache.nbytes());
  const auto esize = static_cast<int64_t>(dtype_size(cache.dtype()));
  const int64_t row = cache.shape().numel(axis + 1, rank) * esize;  // bytes of one step
  const int64_t prefix = cache.shape().numel(0, axis), per_batch = prefix / std::max<int64_t>(cache.dim(0), 1);
  const int64_t max_len = cache.dim(axis), len = update.dim(axis);
  for (int64_t p = 0; p < prefix; ++p) {
    const int64_t b = p / std::max<int64_t>(per_batch, 1);
    int64_t start = 0;
    if (ctx.has_input(2)) start = load_as_int64(ctx.input(2).dtype(), ctx.input(2).data(), b);
    for (int64_t t = 0; t < len; ++t) {
      int64_t dst = start + t;
      if (circular) dst = ((dst % max_len) + max_len) % max_len;
      if (dst < 0 || dst >= max_len)
        return out_of_range(str_cat("TensorScatter: write index ", start, " + ", t, " is outside the cache length ",
                                    max_len));
      if (row == 0) continue;
      std::memcpy(bytes_of(out) + (p * max_len + dst) * row, bytes_of(update) + (p * len + t) * row,
                  static_cast<size_t>(row));
    }
  }
  return Status::ok();
}

// CumSum and CumProd: the running `op` along input 1's axis from `identity`, optionally
// exclusive (each output leaves its own element out) and reversed.
template <class Op>
Status cumulative_kernel(KernelContext& ctx, const char* name, int identity, Op op) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int64_t axis_v = load_as_int64(ctx.input(1).dtype(), ctx.input(1).data(), 0);
  if (axis_v < -in.rank() || axis_v >= in.rank())
    return invalid_argument(str_cat(name, ": axis ", axis_v, " is out of range for rank ", in.rank()));
  const int axis = axis_of(axis_v, in.rank());
  const bool exclusive = ctx.attrs().get_int("exclusive", 0) != 0;
  const bool reverse = ctx.attrs().get_int("reverse", 0) != 0;
  const int64_t outer = in.shape().numel(0, axis), dim = in.dim(axis);
  const int64_t inner = in.shape().numel(axis + 1, in.rank());
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    // Floats accumulate in double; integers in uint64 (two's complement wrap, no UB).
    using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
    const T* x = in.data_as<T>();
    T* y = out.data_as<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        Acc acc = static_cast<Acc>(identity);
        for (int64_t step = 0; step < dim; ++step) {
          const int64_t d = reverse ? dim - 1 - step : step;
          const int64_t at = (o * dim + d) * inner + i;
          const Acc v = static_cast<Acc>(to_compute(x[at]));
          if (exclusive) {
            y[at] = from_compute<T>(acc);
            acc = op(acc, v);
          } else {
            acc = op(acc, v);
            y[at] = from_compute<T>(acc);
          }
        }
      }
    }
  });
  return Status::ok();
}

Status cum_sum_kernel(KernelContext& ctx) {
  return cumulative_kernel(ctx, "CumSum", 0, [](auto a, auto b) { return a + b; });
}
Status cum_prod_kernel(KernelContext& ctx) {
  return cumulative_kernel(ctx, "CumProd", 1, [](auto a, auto b) { return a * b; });
}

// Orders (value, index) pairs for TopK: by value (NaN beyond every number), ties by index.
template <class C>
struct TopKOrder {
  bool largest;
  bool operator()(const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& b) const {
    bool an = false, bn = false;
    if constexpr (std::is_floating_point_v<C>) {
      an = std::isnan(a.first);
      bn = std::isnan(b.first);
    }
    if (an != bn) return largest ? an : bn;
    if (!an && a.first != b.first) return largest ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  }
};

Status top_k_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const int axis = axis_of(ctx.attrs().get_int("axis", -1), in.rank());
  const bool largest = ctx.opset() < 11 || ctx.attrs().get_int("largest", 1) != 0;
  const int64_t k = ctx.has_output(0) ? ctx.output(0).dim(axis) : ctx.output(1).dim(axis);
  const int64_t outer = in.shape().numel(0, axis), dim = in.dim(axis);
  const int64_t inner = in.shape().numel(axis + 1, in.rank());
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* x = in.data_as<T>();
    T* values = ctx.has_output(0) ? ctx.output(0).data_as<T>() : nullptr;
    int64_t* indices = ctx.has_output(1) ? ctx.output(1).data_as<int64_t>() : nullptr;
    std::vector<std::pair<C, int64_t>> line(dim);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        for (int64_t d = 0; d < dim; ++d) line[d] = {to_compute(x[(o * dim + d) * inner + i]), d};
        std::partial_sort(line.begin(), line.begin() + k, line.end(), TopKOrder<C>{largest});
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = (o * k + j) * inner + i;
          if (values) values[at] = x[(o * dim + line[j].second) * inner + i];
          if (indices) indices[at] = line[j].second;
        }
      }
    }
  });
  return Status::ok();
}

// Unique over slices along an axis (or all elements): slices are sorted by value with a
// stable sort, so each run of equal slices starts at its first occurrence.
Status unique_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool has_axis = ctx.attrs().has("axis");
  const int axis = has_axis ? axis_of(ctx.attrs().get_int("axis"), x.rank()) : -1;
  const bool sorted = ctx.attrs().get_int("sorted", 1) != 0;
  const int64_t n = has_axis ? x.dim(axis) : x.numel();
  const int64_t outer = has_axis ? x.shape().numel(0, axis) : 1;
  const int64_t inner = has_axis ? x.shape().numel(axis + 1, x.rank()) : 1;
  std::vector<int64_t> order(n);
  std::vector<int64_t> group_start;  // positions in `order` where a run of equal slices begins
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data_as<T>();
    auto cmp = [&](int64_t a, int64_t b) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const double u = static_cast<double>(to_compute(p[(o * n + a) * inner + i]));
          const double v = static_cast<double>(to_compute(p[(o * n + b) * inner + i]));
          const bool un = std::isnan(u), vn = std::isnan(v);
          if (un || vn) {
            if (un != vn) return un ? 1 : -1;
            continue;
          }
          if (u != v) return u < v ? -1 : 1;
        }
      return 0;
    };
    for (int64_t j = 0; j < n; ++j) order[j] = j;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
    for (int64_t k = 0; k < n; ++k)
      if (k == 0 || cmp(order[k - 1], order[k]) != 0) group_start.push_back(k);
  });
  const auto groups = static_cast<int64_t>(group_start.size());
  const int64_t out_groups = ctx.has_output(1)   ? ctx.output(1).numel()
                             : ctx.has_output(3) ? ctx.output(3).numel()
                             : has_axis          ? ctx.output(0).dim(axis)
                                                 : ctx.output(0).numel();
  if (groups != out_groups) return internal_error("Unique: input changed after shape inference");
  // Group g covers order[group_start[g] .. next start); its first occurrence is order[start].
  std::vector<int64_t> first(groups), count(groups), rank(groups);
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t end = g + 1 < groups ? group_start[g + 1] : n;
    first[g] = order[group_start[g]];
    count[g] = end - group_start[g];
  }
  // Output position of each group: sorted order, or by first occurrence.
  std::vector<int64_t> by_output(groups);
  for (int64_t g = 0; g < groups; ++g) by_output[g] = g;
  if (!sorted) std::sort(by_output.begin(), by_output.end(), [&](int64_t a, int64_t b) { return first[a] < first[b]; });
  for (int64_t k = 0; k < groups; ++k) rank[by_output[k]] = k;
  const auto esize = static_cast<int64_t>(dtype_size(x.dtype()));
  if (ctx.has_output(0) && inner * esize > 0) {
    Tensor& y = ctx.output(0);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < groups; ++k)
        std::memcpy(bytes_of(y) + (o * groups + k) * inner * esize,
                    bytes_of(x) + (o * n + first[by_output[k]]) * inner * esize, static_cast<size_t>(inner * esize));
  }
  if (ctx.has_output(1))
    for (int64_t k = 0; k < groups; ++k) ctx.output(1).data_as<int64_t>()[k] = first[by_output[k]];
  if (ctx.has_output(2)) {
    int64_t* inv = ctx.output(2).data_as<int64_t>();
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t end = g + 1 < groups ? group_start[g + 1] : n;
      for (int64_t k = group_start[g]; k < end; ++k) inv[order[k]] = rank[g];
    }
  }
  if (ctx.has_output(3))
    for (int64_t k = 0; k < groups; ++k) ctx.output(3).data_as<int64_t>()[k] = count[by_output[k]];
  return Status::ok();
}

}  // namespace

void register_tensor_index(KernelRegistry& r) {
  const DTypeSet all = DTypeSet::all();
  const DTypeSet bytes = DTypeSet::storable();  // byte-moving kernels: the low-bit types too
  add_kernel(r, "Gather", 1, bytes, "ref/gather", gather_kernel);
  add_kernel(r, "GatherElements", 11, bytes, "ref/gatherelements", gather_elements_kernel);
  add_kernel(r, "GatherND", 11, all, "ref/gathernd", gather_nd_kernel);
  add_kernel(r, "ScatterElements", 11, all, "ref/scatterelements", scatter_elements_kernel);
  add_kernel(r, "Scatter", 9, all, "ref/scatter", scatter_elements_kernel, /*until=*/10);
  add_kernel(r, "ScatterND", 11, all, "ref/scatternd", scatter_nd_kernel);
  add_kernel(r, "OneHot", 9, all, "ref/onehot", one_hot_kernel, kAnyOpVersion, /*type_input=*/2);
  add_kernel(r, "NonZero", 9, all, "ref/nonzero", non_zero_kernel);
  add_kernel(r, "Compress", 9, bytes, "ref/compress", compress_kernel);
  add_kernel(r, "Trilu", 14, all, "ref/trilu", trilu_kernel);
  add_kernel(r, "ReverseSequence", 10, bytes, "ref/reversesequence", reverse_sequence_kernel);
  add_kernel(r, "CumSum", 11, DTypeSet::numeric(), "ref/cumsum", cum_sum_kernel);
  add_kernel(r, "CumProd", 26, {DType::U32, DType::U64, DType::I32, DType::I64, DType::F16, DType::F32, DType::F64, DType::BF16},
             "ref/cumprod", cum_prod_kernel);
  add_kernel(r, "TensorScatter", 24, all, "ref/tensorscatter", tensor_scatter_kernel);
  add_kernel(r, "TopK", 1, DTypeSet::numeric(), "ref/topk", top_k_kernel);
  add_kernel(r, "Unique", 11, all, "ref/unique", unique_kernel);
}

}  // namespace ignis::kernels::ref::tensor_ops
