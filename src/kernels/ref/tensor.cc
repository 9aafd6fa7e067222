// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the shape and data-movement ops. Most of them are one strided copy:
// the op is expressed as (dims, source strides) over the dense output — a transpose permutes
// strides, a slice scales them by the step, an expand zeroes broadcast ones, a tile splits
// each output dim into (repeat, extent) with a zero stride on the repeat. Shape inference has
// validated every attribute and shape; the kernels re-derive what they need from them.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "core/broadcast.h"
#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "kernels/ref/tensor_internal.h"

namespace ignis::kernels::ref {
namespace tensor_ops {

void for_each_transpose_strip(const std::vector<int64_t>& d, const std::vector<int64_t>& s, int k, int64_t strip,
                              ThreadPool* pool, const TransposeStripFn& fn) {
  const int rank = static_cast<int>(d.size());
  const int last = rank - 1;
  std::vector<int64_t> o(rank);  // dense output strides
  int64_t acc = 1;
  for (int i = rank - 1; i >= 0; --i) {
    o[i] = acc;
    acc *= d[i];
  }
  std::vector<int> others;
  int64_t combos = 1;
  for (int i = 0; i < last; ++i)
    if (i != k) {
      others.push_back(i);
      combos *= d[i];
    }
  const int64_t strips = (d[k] + strip - 1) / strip;
  parallel_for(pool, combos * strips, 1, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      int64_t rem = item / strips, src_off = 0, dst_off = 0;
      for (int j = static_cast<int>(others.size()) - 1; j >= 0; --j) {
        const int axis = others[j];
        const int64_t idx = rem % d[axis];
        rem /= d[axis];
        src_off += idx * s[axis];
        dst_off += idx * o[axis];
      }
      const int64_t k0 = (item % strips) * strip;
      fn(dst_off, src_off, o[k], k0, std::min(k0 + strip, d[k]));
    }
  });
}

namespace {

template <class U>
void copy_row(std::byte* dst, const std::byte* src, int64_t n, int64_t stride) {
  U* d = reinterpret_cast<U*>(dst);
  const U* s = reinterpret_cast<const U*>(src);
  if (stride == 0) {
    std::fill(d, d + n, *s);
    return;
  }
  for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
}

void copy_row_any(std::byte* dst, const std::byte* src, int64_t n, int64_t stride, size_t esize) {
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * esize);
    return;
  }
  switch (esize) {
    case 1: copy_row<uint8_t>(dst, src, n, stride); break;
    case 2: copy_row<uint16_t>(dst, src, n, stride); break;
    case 4: copy_row<uint32_t>(dst, src, n, stride); break;
    default: copy_row<uint64_t>(dst, src, n, stride); break;
  }
}

// Copies a view whose innermost output dim is strided in the source while output dim `k` is
// contiguous there (a transpose): walks 32x32 tiles of (k, last) so that both the source
// lines and the output rows stay in cache.
template <class U>
void tiled_transpose_copy(std::byte* dst, const std::byte* src, const std::vector<int64_t>& d,
                          const std::vector<int64_t>& s, int k, ThreadPool* pool) {
  constexpr int64_t kTile = 32;
  const int last = static_cast<int>(d.size()) - 1;
  U* out = reinterpret_cast<U*>(dst);
  const U* in = reinterpret_cast<const U*>(src);
  for_each_transpose_strip(d, s, k, kTile, pool, [&](int64_t dst_off, int64_t src_off, int64_t ok, int64_t k0, int64_t k1) {
    for (int64_t j0 = 0; j0 < d[last]; j0 += kTile) {
      const int64_t j1 = std::min(j0 + kTile, d[last]);
      for (int64_t kk = k0; kk < k1; ++kk) {
        U* row = out + dst_off + kk * ok;
        const U* col = in + src_off + kk * s[k];
        for (int64_t j = j0; j < j1; ++j) row[j] = col[j * s[last]];
      }
    }
  });
}

}  // namespace

bool coalesce_view(const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides, std::vector<int64_t>& d,
                   std::vector<int64_t>& s) {
  d.clear();
  s.clear();
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 0) return false;
    if (dims[k] == 1) continue;
    if (!d.empty() && s.back() == src_strides[k] * dims[k]) {
      d.back() *= dims[k];
      s.back() = src_strides[k];
      continue;
    }
    d.push_back(dims[k]);
    s.push_back(src_strides[k]);
  }
  return true;
}

void strided_copy(void* dst, const void* src, std::vector<int64_t> dims, std::vector<int64_t> src_strides, size_t esize,
                  ThreadPool* pool) {
  std::vector<int64_t> d, s;
  if (!coalesce_view(dims, src_strides, d, s)) return;
  auto* out = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  const auto ssize = static_cast<int64_t>(esize);
  if (d.empty()) {
    std::memcpy(out, in, esize);
    return;
  }
  const int outer_rank = static_cast<int>(d.size()) - 1;
  const int64_t n = d.back(), stride = s.back();
  if (stride != 1 && stride != 0 && n >= 8) {
    for (int k = 0; k < outer_rank; ++k) {
      if (s[k] != 1 || d[k] < 8) continue;
      switch (esize) {
        case 1: tiled_transpose_copy<uint8_t>(out, in, d, s, k, pool); break;
        case 2: tiled_transpose_copy<uint16_t>(out, in, d, s, k, pool); break;
        case 4: tiled_transpose_copy<uint32_t>(out, in, d, s, k, pool); break;
        default: tiled_transpose_copy<uint64_t>(out, in, d, s, k, pool); break;
      }
      return;
    }
  }
  int64_t rows = 1;
  for (int k = 0; k < outer_rank; ++k) rows *= d[k];
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / n);
  parallel_for(pool, rows, grain, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(outer_rank, 0);
    int64_t off = 0, rem = begin;
    for (int k = outer_rank - 1; k >= 0; --k) {
      idx[k] = rem % d[k];
      rem /= d[k];
      off += idx[k] * s[k];
    }
    for (int64_t r = begin; r < end; ++r) {
      copy_row_any(out + r * n * ssize, in + off * ssize, n, stride, esize);
      for (int k = outer_rank - 1; k >= 0; --k) {
        off += s[k];
        if (++idx[k] < d[k]) break;
        off -= s[k] * d[k];
        idx[k] = 0;
      }
    }
  });
}

Status load_index(const Tensor& t, int64_t i, int64_t dim, const char* op, int64_t* out) {
  const int64_t v = t.dtype() == DType::I32 ? t.data_as<int32_t>()[i] : t.data_as<int64_t>()[i];
  if (v < -dim || v >= dim)
    return out_of_range(str_cat(op, ": index ", v, " is out of range for an axis of size ", dim));
  *out = v < 0 ? v + dim : v;
  return Status::ok();
}

void transpose_view(const Tensor& in, const AttrMap& attrs, std::vector<int64_t>& dims, std::vector<int64_t>& strides) {
  const int rank = in.rank();
  std::vector<int64_t> perm = attrs.get_ints("perm");
  if (!attrs.has("perm"))
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  const auto in_strides = dense_strides(in);
  dims.resize(rank);
  strides.resize(rank);
  for (int k = 0; k < rank; ++k) {
    dims[k] = in.dim(static_cast<int>(perm[k]));
    strides[k] = in_strides[perm[k]];
  }
}

}  // namespace tensor_ops

namespace {

using namespace tensor_ops;

int axis_of(int64_t axis, int rank) { return static_cast<int>(axis < 0 ? axis + rank : axis); }

Status shape_kernel(KernelContext& ctx) {
  const Shape& in = ctx.input(0).shape();
  const int64_t rank = in.rank();
  int64_t start = 0;
  if (ctx.opset() >= 15) {
    start = ctx.attrs().get_int("start", 0);
    if (start < 0) start += rank;
    start = std::clamp<int64_t>(start, 0, rank);
  }
  int64_t* out = ctx.output(0).data_as<int64_t>();
  for (int64_t i = 0; i < ctx.output(0).numel(); ++i) out[i] = in[static_cast<int>(start + i)];
  return Status::ok();
}

Status size_kernel(KernelContext& ctx) {
  *ctx.output(0).data_as<int64_t>() = ctx.input(0).numel();
  return Status::ok();
}

// Reshape, Flatten, Squeeze, Unsqueeze: same bytes, new shape.
Status copy_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.data() != in.data() && in.nbytes() > 0) std::memmove(out.data(), in.data(), in.nbytes());
  return Status::ok();
}

Status transpose_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> dims, strides;
  transpose_view(in, ctx.attrs(), dims, strides);
  strided_copy(ctx.output(0).data(), in.data(), dims, strides, dtype_size(in.dtype()), ctx.pool());
  return Status::ok();
}

Status concat_kernel(KernelContext& ctx) {
  Tensor& out = ctx.output(0);
  const int axis = axis_of(ctx.attrs().get_int("axis", 1), out.rank());
  const size_t esize = dtype_size(out.dtype());
  const int64_t outer = out.shape().numel(0, axis);
  const int64_t inner = out.shape().numel(axis + 1, out.rank()) * static_cast<int64_t>(esize);
  const int64_t out_row = out.dim(axis) * inner;
  int64_t offset = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& in = ctx.input(i);
    const int64_t row = in.dim(axis) * inner;
    if (row > 0) {
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(bytes_of(out) + o * out_row + offset, bytes_of(in) + o * row, static_cast<size_t>(row));
    }
    offset += row;
  }
  return Status::ok();
}

// Split sizes, derived the way shape inference does (outputs may be omitted, so their shapes
// cannot be used).
std::vector<int64_t> split_sizes(const KernelContext& ctx, int64_t dim) {
  const int n = ctx.num_outputs();
  if (ctx.has_input(1)) {
    const Tensor& s = ctx.input(1);
    std::vector<int64_t> sizes(s.numel());
    for (int64_t i = 0; i < s.numel(); ++i) sizes[i] = load_as_int64(s.dtype(), s.data(), i);
    return sizes;
  }
  if (ctx.opset() < 13 && ctx.attrs().has("split")) return ctx.attrs().get_ints("split");
  if (ctx.opset() < 18) return std::vector<int64_t>(n, dim / n);
  const int64_t chunk = (dim + n - 1) / n;
  std::vector<int64_t> sizes(n, chunk);
  sizes.back() = dim - chunk * (n - 1);
  return sizes;
}

Status split_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const int axis = axis_of(ctx.attrs().get_int("axis", 0), in.rank());
  const auto sizes = split_sizes(ctx, in.dim(axis));
  const size_t esize = dtype_size(in.dtype());
  const int64_t outer = in.shape().numel(0, axis);
  const int64_t inner = in.shape().numel(axis + 1, in.rank()) * static_cast<int64_t>(esize);
  const int64_t in_row = in.dim(axis) * inner;
  int64_t offset = 0;
  for (int i = 0; i < ctx.num_outputs() && i < static_cast<int>(sizes.size()); ++i) {
    const int64_t row = sizes[i] * inner;
    if (ctx.has_output(i) && row > 0) {
      Tensor& out = ctx.output(i);
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(bytes_of(out) + o * row, bytes_of(in) + o * in_row + offset, static_cast<size_t>(row));
    }
    offset += row;
  }
  return Status::ok();
}

std::vector<int64_t> ints_of(const Tensor& t) {
  std::vector<int64_t> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = load_as_int64(t.dtype(), t.data(), i);
  return v;
}

// Effective first index of a sliced axis (Slice-13 clamping); the count comes from the output.
int64_t slice_start(int64_t dim, int64_t start, int64_t step) {
  if (start < 0) start += dim;
  return step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, dim - 1);
}

Status slice_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.numel() == 0) return Status::ok();
  std::vector<int64_t> starts, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.attrs().get_ints("starts");
    axes = ctx.attrs().get_ints("axes");
  } else {
    starts = ints_of(ctx.input(1));
    if (ctx.has_input(3)) axes = ints_of(ctx.input(3));
    if (ctx.has_input(4)) steps = ints_of(ctx.input(4));
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  const auto in_strides = dense_strides(in);
  std::vector<int64_t> strides = in_strides;
  int64_t base = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int a = axis_of(axes[i], in.rank());
    base += slice_start(in.dim(a), starts[i], steps[i]) * in_strides[a];
    strides[a] = in_strides[a] * steps[i];
  }
  const size_t esize = dtype_size(in.dtype());
  strided_copy(out.data(), bytes_of(in) + base * static_cast<int64_t>(esize), out.shape().to_vector(), strides, esize,
               ctx.pool());
  return Status::ok();
}

Status expand_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  strided_copy(out.data(), in.data(), out.shape().to_vector(), broadcast_strides(in.shape(), out.shape()),
               dtype_size(in.dtype()), ctx.pool());
  return Status::ok();
}

Status tile_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.numel() == 0) return Status::ok();
  // Output dim k = repeat_k * extent_k, read as the pair (repeat_k, extent_k) with stride 0 on
  // the repeat: a row-major walk of the pairs is a row-major walk of the output.
  const auto in_strides = dense_strides(in);
  std::vector<int64_t> dims, strides;
  for (int k = 0; k < in.rank(); ++k) {
    dims.push_back(out.dim(k) / in.dim(k));
    strides.push_back(0);
    dims.push_back(in.dim(k));
    strides.push_back(in_strides[k]);
  }
  strided_copy(out.data(), in.data(), dims, strides, dtype_size(in.dtype()), ctx.pool());
  return Status::ok();
}

enum class PadMode { Constant, Reflect, Edge, Wrap };

// Maps output coordinate i (input coordinate x = i - begin) of an axis of size d to an input
// coordinate, or -1 for "use the constant".
int64_t pad_source(int64_t x, int64_t d, PadMode mode) {
  if (x >= 0 && x < d) return x;
  switch (mode) {
    case PadMode::Constant: return -1;
    case PadMode::Edge: return x < 0 ? 0 : d - 1;
    case PadMode::Wrap: return ((x % d) + d) % d;
    case PadMode::Reflect: {
      if (d == 1) return 0;
      const int64_t period = 2 * (d - 1);
      int64_t m = ((x % period) + period) % period;
      return m < d ? m : period - m;
    }
  }
  return -1;
}

template <class U>
void pad_rows(std::byte* out_bytes, const std::byte* in_bytes, const Shape& out_shape, const Shape& in_shape,
              const std::vector<std::vector<int64_t>>& maps, U fill) {
  U* out = reinterpret_cast<U*>(out_bytes);
  const U* in = reinterpret_cast<const U*>(in_bytes);
  const int rank = out_shape.rank();
  const auto in_strides = in_shape.strides();
  const int64_t n = out_shape[rank - 1];
  const auto& last = maps[rank - 1];
  const int64_t rows = out_shape.numel(0, rank - 1);
  std::vector<int64_t> idx(rank - 1, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t off = 0;
    bool outside = false;
    for (int k = 0; k < rank - 1; ++k) {
      const int64_t src = maps[k][idx[k]];
      if (src < 0) outside = true;
      off += src * in_strides[k];
    }
    U* row = out + r * n;
    if (outside) {
      std::fill(row, row + n, fill);
    } else {
      const U* src = in + off;
      for (int64_t j = 0; j < n; ++j) row[j] = last[j] < 0 ? fill : src[last[j]];
    }
    for (int k = rank - 2; k >= 0; --k) {
      if (++idx[k] < out_shape[k]) break;
      idx[k] = 0;
    }
  }
}

Status pad_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.numel() == 0) return Status::ok();
  const int rank = in.rank();
  const size_t esize = dtype_size(in.dtype());
  if (rank == 0) {
    std::memcpy(out.data(), in.data(), esize);
    return Status::ok();
  }
  const std::string mode_name = ctx.attrs().get_string("mode", "constant");
  const PadMode mode = mode_name == "reflect" ? PadMode::Reflect
                       : mode_name == "edge"  ? PadMode::Edge
                       : mode_name == "wrap"  ? PadMode::Wrap
                                              : PadMode::Constant;
  std::vector<int64_t> pads;
  std::vector<int64_t> axes;
  uint64_t fill = 0;  // the constant's bytes
  if (ctx.opset() < 11) {
    pads = ctx.attrs().get_ints(ctx.opset() < 2 ? "paddings" : "pads");
    const float value = ctx.attrs().get_float("value", 0.0f);
    visit_dtype(in.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T v = from_compute<T>(value);
      std::memcpy(&fill, &v, sizeof(T));
    });
  } else {
    pads = ints_of(ctx.input(1));
    if (ctx.has_input(2)) std::memcpy(&fill, ctx.input(2).data(), esize);
    if (ctx.has_input(3)) axes = ints_of(ctx.input(3));
  }
  if (!ctx.has_input(3))
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  std::vector<int64_t> begin(rank, 0);
  const size_t n = axes.size();
  for (size_t i = 0; i < n; ++i) begin[axis_of(axes[i], rank)] = pads[i];
  std::vector<std::vector<int64_t>> maps(rank);
  for (int k = 0; k < rank; ++k) {
    maps[k].resize(out.dim(k));
    for (int64_t i = 0; i < out.dim(k); ++i) maps[k][i] = pad_source(i - begin[k], in.dim(k), mode);
  }
  switch (esize) {
    case 1:
      pad_rows<uint8_t>(bytes_of(out), bytes_of(in), out.shape(), in.shape(), maps, static_cast<uint8_t>(fill));
      break;
    case 2:
      pad_rows<uint16_t>(bytes_of(out), bytes_of(in), out.shape(), in.shape(), maps, static_cast<uint16_t>(fill));
      break;
    case 4:
      pad_rows<uint32_t>(bytes_of(out), bytes_of(in), out.shape(), in.shape(), maps, static_cast<uint32_t>(fill));
      break;
    default: pad_rows<uint64_t>(bytes_of(out), bytes_of(in), out.shape(), in.shape(), maps, fill); break;
  }
  return Status::ok();
}

Status constant_of_shape_kernel(KernelContext& ctx) {
  Tensor& out = ctx.output(0);
  const size_t esize = dtype_size(out.dtype());
  const Tensor* value = ctx.attrs().get_tensor("value");
  std::byte* p = bytes_of(out);
  if (value == nullptr) {
    if (out.nbytes() > 0) std::memset(p, 0, out.nbytes());
    return Status::ok();
  }
  for (int64_t i = 0; i < out.numel(); ++i) std::memcpy(p + i * static_cast<int64_t>(esize), value->data(), esize);
  return Status::ok();
}

Status range_kernel(KernelContext& ctx) {
  Tensor& out = ctx.output(0);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      const T start = *ctx.input(0).data_as<T>();
      const T delta = *ctx.input(2).data_as<T>();
      T* o = out.data_as<T>();
      for (int64_t i = 0; i < out.numel(); ++i) {
        if constexpr (std::is_integral_v<T>) {
          // Wrapping arithmetic: the count was computed exactly, so values stay in range.
          o[i] = static_cast<T>(static_cast<uint64_t>(start) + static_cast<uint64_t>(i) * static_cast<uint64_t>(delta));
        } else {
          o[i] = static_cast<T>(start + static_cast<T>(i) * delta);
        }
      }
    } else if constexpr (is_half_like_v<T>) {
      // Range-27's float16/bfloat16: computed in float32 (stash_type 1), rounded once.
      const float start = to_compute(*ctx.input(0).data_as<T>());
      const float delta = to_compute(*ctx.input(2).data_as<T>());
      T* o = out.data_as<T>();
      for (int64_t i = 0; i < out.numel(); ++i) o[i] = from_compute<T>(start + static_cast<float>(i) * delta);
    }
  });
  return Status::ok();
}

Status eye_like_kernel(KernelContext& ctx) {
  Tensor& out = ctx.output(0);
  if (out.nbytes() > 0) std::memset(out.data(), 0, out.nbytes());
  const int64_t rows = out.dim(0), cols = out.dim(1);
  const int64_t k = ctx.attrs().get_int("k", 0);
  if (k >= cols || k <= -rows) return Status::ok();  // the diagonal misses the matrix
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data_as<T>();
    const T one = from_compute<T>(1);
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t j = i + k;
      if (j >= 0 && j < cols) o[i * cols + j] = one;
    }
  });
  return Status::ok();
}

// Output [N, C', H*b, W*b] walked as [N, C', H, b, W, b] over the input [N, C'*b*b, H, W].
Status depth_to_space_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int64_t b = ctx.attrs().get_int("blocksize");
  const bool crd = ctx.opset() >= 11 && ctx.attrs().get_string("mode", "DCR") == "CRD";
  const auto s = dense_strides(in);
  const int64_t c_out = out.dim(1);
  std::vector<int64_t> dims = {in.dim(0), c_out, in.dim(2), b, in.dim(3), b};
  std::vector<int64_t> strides = crd ? std::vector<int64_t>{s[0], b * b * s[1], s[2], b * s[1], s[3], s[1]}
                                     : std::vector<int64_t>{s[0], s[1], s[2], b * c_out * s[1], s[3], c_out * s[1]};
  strided_copy(out.data(), in.data(), dims, strides, dtype_size(in.dtype()), ctx.pool());
  return Status::ok();
}

// Output [N, C*b*b, H', W'] walked as [N, b, b, C, H', W'] over the input [N, C, H'*b, W'*b].
Status space_to_depth_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int64_t b = ctx.attrs().get_int("blocksize");
  const auto s = dense_strides(in);
  // Output channel (bh * b + bw) * C + c in DCR order, c * b * b + bh * b + bw in CRD
  // (SpaceToDepth-28): walk the input in the output's order.
  std::vector<int64_t> dims = {in.dim(0), b, b, in.dim(1), out.dim(2), out.dim(3)};
  std::vector<int64_t> strides = {s[0], s[2], s[3], s[1], b * s[2], b * s[3]};
  if (ctx.attrs().get_string("mode", "DCR") == "CRD") {
    dims = {in.dim(0), in.dim(1), b, b, out.dim(2), out.dim(3)};
    strides = {s[0], s[1], s[2], s[3], b * s[2], b * s[3]};
  }
  strided_copy(out.data(), in.data(), dims, strides, dtype_size(in.dtype()), ctx.pool());
  return Status::ok();
}

}  // namespace

void register_tensor(KernelRegistry& r) {
  const DTypeSet all = DTypeSet::all();
  // Kernels that move bytes by dtype_size also take the low-bit types (one byte per element).
  const DTypeSet bytes = DTypeSet::storable();
  add_kernel(r, "Shape", 1, bytes, "ref/shape", shape_kernel);
  add_kernel(r, "Size", 1, bytes, "ref/size", size_kernel);
  add_kernel(r, "Reshape", 1, bytes, "ref/reshape", copy_kernel);
  add_kernel(r, "Flatten", 1, bytes, "ref/flatten", copy_kernel);
  add_kernel(r, "Squeeze", 1, bytes, "ref/squeeze", copy_kernel);
  add_kernel(r, "Unsqueeze", 1, bytes, "ref/unsqueeze", copy_kernel);
  add_kernel(r, "Transpose", 1, bytes, "ref/transpose", transpose_kernel);
  add_kernel(r, "Concat", 1, bytes, "ref/concat", concat_kernel);
  add_kernel(r, "Split", 1, bytes, "ref/split", split_kernel);
  add_kernel(r, "Slice", 1, bytes, "ref/slice", slice_kernel);
  add_kernel(r, "Expand", 8, bytes, "ref/expand", expand_kernel);
  add_kernel(r, "Tile", 1, bytes, "ref/tile", tile_kernel);
  add_kernel(r, "Pad", 1, all, "ref/pad", pad_kernel);
  add_kernel(r, "ConstantOfShape", 9, DTypeSet::ints(), "ref/constantofshape", constant_of_shape_kernel);
  add_kernel(r, "Range", 11, {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I16, DType::I32, DType::I64},
             "ref/range", range_kernel);
  add_kernel(r, "EyeLike", 9, all, "ref/eyelike", eye_like_kernel);
  add_kernel(r, "DepthToSpace", 1, bytes, "ref/depthtospace", depth_to_space_kernel);
  add_kernel(r, "SpaceToDepth", 1, bytes, "ref/spacetodepth", space_to_depth_kernel);
  tensor_ops::register_tensor_index(r);
}

}  // namespace ignis::kernels::ref
