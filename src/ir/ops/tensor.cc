// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the shape and data-movement ops: Shape, Size, Reshape,
// Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split, Slice, Expand, Tile, Pad,
// ConstantOfShape, Range, EyeLike, DepthToSpace, SpaceToDepth. Indexing ops live in
// tensor_index.cc.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/broadcast.h"
#include "core/dtype_dispatch.h"
#include "ir/ops/tensor_internal.h"

namespace ignis::ir {
namespace tensor_ops {

Result<Shape> checked_shape(const InferContext& ctx, std::span<const int64_t> dims, DType dtype,
                            std::string_view what) {
  if (dims.size() > static_cast<size_t>(Shape::kMaxRank))
    return ctx.fail(what, " would have rank ", dims.size(), ", more than the supported ", Shape::kMaxRank);
  int64_t numel = 1;
  for (int64_t d : dims) {
    if (d < 0) return ctx.fail(what, " would have a negative dimension: ", str_list(dims));
    if (__builtin_mul_overflow(numel, d, &numel))
      return ctx.fail(what, " shape ", str_list(dims), " has too many elements");
  }
  const int64_t esize = std::max<int64_t>(1, static_cast<int64_t>(dtype_size(dtype)));
  if (numel > kMaxTensorBytes / esize)
    return ctx.fail(what, " shape ", str_list(dims), " is too large (", numel, " elements)");
  return Shape(dims);
}

Result<int64_t> checked_mul(const InferContext& ctx, int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) return ctx.fail(what, " overflows: ", a, " * ", b);
  return r;
}

Result<int> resolve_axis(const InferContext& ctx, int64_t axis, int rank, std::string_view what) {
  auto a = normalize_axis(axis, rank);
  if (!a) return ctx.fail(what, " ", axis, " is out of range for rank ", rank);
  return *a;
}

Result<std::vector<int>> resolve_axes(const InferContext& ctx, std::span<const int64_t> axes, int rank,
                                      std::string_view what) {
  std::vector<int> out;
  std::vector<bool> seen(rank, false);
  for (int64_t a : axes) {
    IGNIS_ASSIGN_OR_RETURN(int ax, resolve_axis(ctx, a, rank, what));
    if (seen[ax]) return ctx.fail(what, " ", str_list(axes), " repeats axis ", ax);
    seen[ax] = true;
    out.push_back(ax);
  }
  return out;
}

// Data inputs may also be low-bit: the registry then finds a kernel only for the ops that
// move bytes by dtype size (Reshape, Transpose, Gather...).
Status expect_data_input(const InferContext& ctx, int i) {
  if (!ctx.has_input(i)) return ctx.fail("input ", i, " is required");
  if (!(kAnyType | DTypeSet::low_bit()).contains(ctx.input_dtype(i)))
    return ctx.unsupported(str_cat("input ", i, " has unsupported dtype ", dtype_name(ctx.input_dtype(i))));
  return Status::ok();
}

Status expect_index_input(const InferContext& ctx, int i, std::string_view what) {
  if (!ctx.has_input(i)) return ctx.fail("input '", what, "' is required");
  if (!kIndexTypes.contains(ctx.input_dtype(i)))
    return ctx.fail("input '", what, "' must be int32 or int64, got ", dtype_name(ctx.input_dtype(i)));
  return Status::ok();
}

Status expect_single_element(const InferContext& ctx, int i, std::string_view what) {
  const Shape& s = ctx.input_shape(i);
  if (s.numel() != 1 || s.rank() > 1)
    return ctx.fail("input '", what, "' must be a scalar or a 1-element 1-D tensor, got shape ", s.str());
  return Status::ok();
}

Status expect_same_dtype(const InferContext& ctx, int a, int b) {
  if (ctx.input_dtype(a) != ctx.input_dtype(b))
    return ctx.fail("inputs ", a, " and ", b, " must share a dtype, got ", dtype_name(ctx.input_dtype(a)), " and ",
                    dtype_name(ctx.input_dtype(b)));
  return Status::ok();
}

}  // namespace tensor_ops

namespace {

using namespace tensor_ops;

Status infer_shape_op(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  const int64_t rank = ctx.input_shape(0).rank();
  int64_t start = 0, end = rank;
  if (ctx.opset() >= 15) {
    start = ctx.attrs().get_int("start", 0);
    end = ctx.attrs().get_int("end", rank);
  }
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  ctx.set_output(0, DType::I64, Shape{std::max<int64_t>(end - start, 0)});
  return Status::ok();
}

Status infer_size(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  ctx.set_output(0, DType::I64, Shape{});
  return Status::ok();
}

Status infer_reshape(InferContext& ctx) {
  std::vector<int64_t> target;
  if (ctx.opset() < 5) {
    IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
    if (!ctx.attrs().has("shape")) return ctx.error("attribute 'shape' is required");
    target = ctx.attrs().get_ints("shape");
  } else {
    IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
    if (ctx.input_shape(1).rank() != 1) return ctx.fail("input 'shape' must be 1-D, got ", ctx.input_shape(1).str());
    IGNIS_ASSIGN_OR_RETURN(target, ctx.input_ints(1));
  }
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  const Shape& in = ctx.input_shape(0);
  const bool allowzero = ctx.opset() >= 14 && ctx.attrs().get_int("allowzero", 0) != 0;
  if (target.size() > static_cast<size_t>(Shape::kMaxRank))
    return ctx.fail("target shape ", str_list(target), " has more than ", Shape::kMaxRank, " dims");
  int infer_at = -1;
  bool has_zero = false;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t& d = target[i];
    if (d == -1) {
      if (infer_at >= 0) return ctx.fail("target shape ", str_list(target), " has more than one -1");
      infer_at = static_cast<int>(i);
      continue;
    }
    if (d < -1) return ctx.fail("target shape ", str_list(target), " has invalid dim ", d);
    if (d == 0) {
      has_zero = true;
      if (!allowzero) {
        if (static_cast<int>(i) >= in.rank())
          return ctx.fail("target shape ", str_list(target), " copies dim ", i, " (0) but the input ", in.str(),
                          " has rank ", in.rank());
        d = in[static_cast<int>(i)];
      }
    }
    if (__builtin_mul_overflow(known, d, &known)) return ctx.fail("target shape ", str_list(target), " overflows");
  }
  if (allowzero && has_zero && infer_at >= 0)
    return ctx.fail("target shape ", str_list(target), " has both 0 and -1 with allowzero=1");
  const int64_t numel = in.numel();
  if (infer_at >= 0) {
    if (known == 0 || numel % known != 0)
      return ctx.fail("cannot reshape ", in.str(), " (", numel, " elements) to ", str_list(target));
    target[infer_at] = numel / known;
  } else if (known != numel) {
    return ctx.fail("cannot reshape ", in.str(), " (", numel, " elements) to ", str_list(target));
  }
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, target, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

Status infer_flatten(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  const Shape& in = ctx.input_shape(0);
  int64_t axis = ctx.attrs().get_int("axis", 1);
  if (axis < -in.rank() || axis > in.rank())
    return ctx.fail("attribute 'axis' ", axis, " is out of range for rank ", in.rank());
  if (axis < 0) axis += in.rank();
  const int a = static_cast<int>(axis);
  ctx.set_output(0, ctx.input_dtype(0), Shape{in.numel(0, a), in.numel(a, in.rank())});
  return Status::ok();
}

// Squeeze/Unsqueeze axes: an attribute before opset 13, an input from 13. `present` is false
// when neither gives any.
Result<std::vector<int64_t>> read_axes(InferContext& ctx, bool* present) {
  *present = false;
  if (ctx.opset() < 13) {
    IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
    if (!ctx.attrs().has("axes")) return std::vector<int64_t>{};
    *present = true;
    return ctx.attrs().get_ints("axes");
  }
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 2));
  if (!ctx.has_input(1)) return std::vector<int64_t>{};
  if (ctx.input_shape(1).rank() > 1) return ctx.fail("input 'axes' must be 1-D, got ", ctx.input_shape(1).str());
  *present = true;
  return ctx.input_ints(1);
}

Status infer_squeeze(InferContext& ctx) {
  bool present = false;
  IGNIS_ASSIGN_OR_RETURN(std::vector<int64_t> axes, read_axes(ctx, &present));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  const Shape& in = ctx.input_shape(0);
  std::vector<bool> drop(in.rank(), false);
  if (present && !axes.empty()) {
    IGNIS_ASSIGN_OR_RETURN(auto resolved, resolve_axes(ctx, axes, in.rank(), "axes"));
    for (int a : resolved) {
      if (in[a] != 1) return ctx.fail("cannot squeeze axis ", a, " of size ", in[a], " in input ", in.str());
      drop[a] = true;
    }
  } else {
    for (int i = 0; i < in.rank(); ++i) drop[i] = in[i] == 1;
  }
  Shape out;
  for (int i = 0; i < in.rank(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

Status infer_unsqueeze(InferContext& ctx) {
  bool present = false;
  IGNIS_ASSIGN_OR_RETURN(std::vector<int64_t> axes, read_axes(ctx, &present));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  if (!present) return ctx.error(ctx.opset() < 13 ? "attribute 'axes' is required" : "input 'axes' is required");
  const Shape& in = ctx.input_shape(0);
  const int64_t out_rank = in.rank() + static_cast<int64_t>(axes.size());
  if (out_rank > Shape::kMaxRank)
    return ctx.fail("output would have rank ", out_rank, ", more than the supported ", Shape::kMaxRank);
  IGNIS_ASSIGN_OR_RETURN(auto resolved, resolve_axes(ctx, axes, static_cast<int>(out_rank), "axes"));
  std::vector<bool> inserted(out_rank, false);
  for (int a : resolved) inserted[a] = true;
  Shape out;
  int k = 0;
  for (int i = 0; i < out_rank; ++i) out.push_back(inserted[i] ? 1 : in[k++]);
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

Status infer_transpose(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  const Shape& in = ctx.input_shape(0);
  std::vector<int64_t> perm = ctx.attrs().get_ints("perm");
  if (!ctx.attrs().has("perm")) {
    for (int i = in.rank() - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int>(perm.size()) != in.rank())
    return ctx.fail("attribute 'perm' ", str_list(perm), " must have ", in.rank(), " entries for input ", in.str());
  std::vector<bool> seen(in.rank(), false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.rank() || seen[p])
      return ctx.fail("attribute 'perm' ", str_list(perm), " is not a permutation of 0..", in.rank() - 1);
    seen[p] = true;
    out.push_back(in[static_cast<int>(p)]);
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

Status infer_concat(InferContext& ctx) {
  if (ctx.num_inputs() < 1) return ctx.error("expected at least 1 input");
  for (int i = 0; i < ctx.num_inputs(); ++i) IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, i));
  if (ctx.opset() >= 4 && !ctx.attrs().has("axis")) return ctx.error("attribute 'axis' is required");
  const Shape& first = ctx.input_shape(0);
  if (first.rank() == 0) return ctx.error("inputs must have rank >= 1, got a scalar");
  IGNIS_ASSIGN_OR_RETURN(int axis, resolve_axis(ctx, ctx.attrs().get_int("axis", 1), first.rank(), "attribute 'axis'"));
  Shape out = first;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 0, i));
    const Shape& s = ctx.input_shape(i);
    bool ok = s.rank() == first.rank();
    for (int d = 0; ok && d < s.rank(); ++d) ok = d == axis || s[d] == first[d];
    if (!ok)
      return ctx.fail("input ", i, " shape ", s.str(), " does not match input 0 shape ", first.str(), " outside axis ",
                      axis);
    out[axis] += s[axis];
  }
  IGNIS_ASSIGN_OR_RETURN(out, checked_shape(ctx, out.dims(), ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

Status infer_split(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, ctx.opset() == 1 || ctx.opset() >= 13 ? 2 : 1));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  const Shape& in = ctx.input_shape(0);
  if (in.rank() == 0) return ctx.error("input must have rank >= 1, got a scalar");
  IGNIS_ASSIGN_OR_RETURN(int axis, resolve_axis(ctx, ctx.attrs().get_int("axis", 0), in.rank(), "attribute 'axis'"));
  const int n = ctx.num_outputs();
  if (n < 1) return ctx.error("needs at least one output");
  const int64_t dim = in[axis];
  std::vector<int64_t> sizes;
  bool given = false;
  if (ctx.has_input(1)) {
    if (ctx.input_shape(1).rank() > 1) return ctx.fail("input 'split' must be 1-D, got ", ctx.input_shape(1).str());
    IGNIS_ASSIGN_OR_RETURN(sizes, ctx.input_ints(1));
    given = true;
  } else if (ctx.opset() < 13 && ctx.attrs().has("split")) {
    sizes = ctx.attrs().get_ints("split");
    given = true;
  }
  if (given) {
    if (ctx.opset() >= 18 && ctx.attrs().has("num_outputs"))
      return ctx.error("'split' and attribute 'num_outputs' must not both be given");
    if (static_cast<int>(sizes.size()) != n)
      return ctx.fail("split ", str_list(sizes), " has ", sizes.size(), " entries for ", n, " outputs");
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0) return ctx.fail("split ", str_list(sizes), " has a negative size");
      if (__builtin_add_overflow(sum, s, &sum)) return ctx.fail("split ", str_list(sizes), " overflows");
    }
    if (sum != dim)
      return ctx.fail("split ", str_list(sizes), " sums to ", sum, " but axis ", axis, " of ", in.str(), " has ", dim);
  } else {
    int64_t parts = n;
    if (ctx.opset() >= 18 && ctx.attrs().has("num_outputs")) {
      parts = ctx.attrs().get_int("num_outputs");
      if (parts != n) return ctx.fail("attribute 'num_outputs' is ", parts, " but the node has ", n, " outputs");
    }
    if (ctx.opset() < 18) {
      if (dim % parts != 0)
        return ctx.fail("axis ", axis, " of ", in.str(), " (", dim, ") does not split evenly into ", parts, " parts");
      sizes.assign(parts, dim / parts);
    } else {
      // Opset 18: chunks of ceil(dim / parts), the last one smaller.
      const int64_t chunk = (dim + parts - 1) / parts;
      const int64_t last = dim - chunk * (parts - 1);
      if (last < 0)
        return ctx.fail("axis ", axis, " of ", in.str(), " (", dim, ") cannot be split into ", parts, " chunks of ",
                        chunk);
      sizes.assign(parts, chunk);
      sizes.back() = last;
    }
  }
  for (int i = 0; i < n; ++i) {
    Shape out = in;
    out[axis] = sizes[i];
    ctx.set_output(i, ctx.input_dtype(0), out);
  }
  return Status::ok();
}

// Effective (start, step, count) of one sliced axis, per the Slice-13 clamping rules.
struct SliceAxis {
  int64_t start = 0, step = 1, count = 0;
};

SliceAxis slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  // An end of INT_MAX means "to the end" in either direction (numpy's None), as onnxruntime
  // reads it; plain clamping would make a backward slice empty.
  if (step < 0 && (end == std::numeric_limits<int64_t>::max() || end == std::numeric_limits<int32_t>::max()))
    end = -1 - dim;
  SliceAxis r;
  r.step = step;
  if (dim == 0) return r;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    // |step| > any span here when step is INT64_MIN, so one element at most.
    const int64_t mag = step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -step;
    r.count = start > end ? (start - end - 1) / mag + 1 : 0;
  }
  r.start = r.count > 0 ? start : 0;
  return r;
}

Status infer_slice(InferContext& ctx) {
  std::vector<int64_t> starts, ends, axes, steps;
  bool has_axes = false, has_steps = false;
  if (ctx.opset() < 10) {
    IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
    if (!ctx.attrs().has("starts") || !ctx.attrs().has("ends"))
      return ctx.error("attributes 'starts' and 'ends' are required");
    starts = ctx.attrs().get_ints("starts");
    ends = ctx.attrs().get_ints("ends");
    has_axes = ctx.attrs().has("axes");
    axes = ctx.attrs().get_ints("axes");
  } else {
    IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 5));
    for (int i = 1; i < 5; ++i)
      if (ctx.has_input(i) && ctx.input_shape(i).rank() != 1)
        return ctx.fail("input ", i, " must be 1-D, got ", ctx.input_shape(i).str());
    IGNIS_ASSIGN_OR_RETURN(starts, ctx.input_ints(1));
    IGNIS_ASSIGN_OR_RETURN(ends, ctx.input_ints(2));
    if (ctx.has_input(3)) {
      has_axes = true;
      IGNIS_ASSIGN_OR_RETURN(axes, ctx.input_ints(3));
    }
    if (ctx.has_input(4)) {
      has_steps = true;
      IGNIS_ASSIGN_OR_RETURN(steps, ctx.input_ints(4));
    }
  }
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  const Shape& in = ctx.input_shape(0);
  const size_t n = starts.size();
  if (ends.size() != n) return ctx.fail("starts ", str_list(starts), " and ends ", str_list(ends), " differ in length");
  if (!has_axes)
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  if (axes.size() != n) return ctx.fail("axes ", str_list(axes), " must have ", n, " entries like starts");
  if (!has_steps) steps.assign(n, 1);
  if (steps.size() != n) return ctx.fail("steps ", str_list(steps), " must have ", n, " entries like starts");
  IGNIS_ASSIGN_OR_RETURN(auto resolved, resolve_axes(ctx, axes, in.rank(), "axes"));
  Shape out = in;
  for (size_t i = 0; i < n; ++i) {
    if (steps[i] == 0) return ctx.fail("steps ", str_list(steps), " contains 0");
    out[resolved[i]] = slice_axis(in[resolved[i]], starts[i], ends[i], steps[i]).count;
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

Status infer_expand(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  if (ctx.input_shape(1).rank() != 1) return ctx.fail("input 'shape' must be 1-D, got ", ctx.input_shape(1).str());
  IGNIS_ASSIGN_OR_RETURN(auto dims, ctx.input_ints(1));
  IGNIS_ASSIGN_OR_RETURN(Shape target, checked_shape(ctx, dims, ctx.input_dtype(0), "input 'shape'"));
  auto out = broadcast_shapes(ctx.input_shape(0), target);
  if (!out) return ctx.fail("input shape ", ctx.input_shape(0).str(), " cannot be expanded to ", target.str());
  IGNIS_ASSIGN_OR_RETURN(Shape checked, checked_shape(ctx, out->dims(), ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), checked);
  return Status::ok();
}

Status infer_tile(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  const Shape& in = ctx.input_shape(0);
  std::vector<int64_t> repeats(in.rank(), 1);
  if (ctx.opset() < 6) {
    // Tile-1: scalar `tiles` copies along scalar `axis`.
    IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 3));
    IGNIS_RETURN_IF_ERROR(expect_single_element(ctx, 1, "tiles"));
    IGNIS_RETURN_IF_ERROR(expect_single_element(ctx, 2, "axis"));
    IGNIS_ASSIGN_OR_RETURN(auto tiles, ctx.input_ints(1));
    IGNIS_ASSIGN_OR_RETURN(auto axis_v, ctx.input_ints(2));
    IGNIS_ASSIGN_OR_RETURN(int axis, resolve_axis(ctx, axis_v[0], in.rank(), "input 'axis'"));
    repeats[axis] = tiles[0];
  } else {
    IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
    if (ctx.input_shape(1).rank() != 1) return ctx.fail("input 'repeats' must be 1-D, got ", ctx.input_shape(1).str());
    IGNIS_ASSIGN_OR_RETURN(repeats, ctx.input_ints(1));
    if (static_cast<int>(repeats.size()) != in.rank())
      return ctx.fail("input 'repeats' ", str_list(repeats), " must have ", in.rank(), " entries for input ", in.str());
  }
  std::vector<int64_t> dims(in.rank());
  for (int i = 0; i < in.rank(); ++i) {
    if (repeats[i] < 0) return ctx.fail("repeats ", str_list(repeats), " has a negative entry");
    IGNIS_ASSIGN_OR_RETURN(dims[i], checked_mul(ctx, in[i], repeats[i], "output dim"));
  }
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, dims, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

Status infer_pad(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  const Shape& in = ctx.input_shape(0);
  const DType dt = ctx.input_dtype(0);
  const std::string mode = ctx.attrs().get_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && !(mode == "wrap" && ctx.opset() >= 19))
    return ctx.fail("attribute 'mode' '", mode, "' is not one of constant, reflect, edge",
                    ctx.opset() >= 19 ? ", wrap" : "");
  std::vector<int64_t> pads;
  std::vector<int> axes;
  if (ctx.opset() < 11) {
    IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
    const char* name = ctx.opset() < 2 ? "paddings" : "pads";
    if (!ctx.attrs().has(name)) return ctx.fail("attribute '", name, "' is required");
    pads = ctx.attrs().get_ints(name);
  } else {
    IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, ctx.opset() >= 18 ? 4 : 3));
    if (ctx.input_shape(1).rank() != 1) return ctx.fail("input 'pads' must be 1-D, got ", ctx.input_shape(1).str());
    IGNIS_ASSIGN_OR_RETURN(pads, ctx.input_ints(1));
    if (ctx.has_input(2)) {
      if (ctx.input_shape(2).numel() != 1 || ctx.input_shape(2).rank() > 1)
        return ctx.fail("input 'constant_value' must hold one element, got shape ", ctx.input_shape(2).str());
      IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 0, 2));
    }
    if (ctx.has_input(3)) {
      if (ctx.input_shape(3).rank() != 1) return ctx.fail("input 'axes' must be 1-D, got ", ctx.input_shape(3).str());
      IGNIS_ASSIGN_OR_RETURN(auto raw, ctx.input_ints(3));
      IGNIS_ASSIGN_OR_RETURN(axes, resolve_axes(ctx, raw, in.rank(), "axes"));
    }
  }
  if (axes.empty() && !(ctx.has_input(3)))
    for (int i = 0; i < in.rank(); ++i) axes.push_back(i);
  const size_t n = axes.size();
  if (pads.size() != 2 * n)
    return ctx.fail("pads ", str_list(pads), " must have ", 2 * n, " entries for ", n, " padded axes");
  std::vector<int64_t> dims = in.to_vector();
  for (size_t i = 0; i < n; ++i) {
    const int a = axes[i];
    if (pads[i] < -in[a] || pads[i + n] < -in[a])
      return ctx.fail("pads ", str_list(pads), " remove more than the ", in[a], " elements of axis ", a);
    int64_t d = 0;
    if (__builtin_add_overflow(in[a], pads[i], &d) || __builtin_add_overflow(d, pads[i + n], &d) || d < 0)
      return ctx.fail("pads ", str_list(pads), " give axis ", a, " of ", in.str(), " a negative or huge size");
    if (mode != "constant" && in[a] == 0 && d > 0)
      return ctx.fail("mode '", mode, "' cannot pad axis ", a, " of size 0");
    dims[a] = d;
  }
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, dims, dt, "output"));
  ctx.set_output(0, dt, out);
  return Status::ok();
}

Status infer_constant_of_shape(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  if (!dtype_is_integer(ctx.input_dtype(0)))
    return ctx.fail("input 'input' must be an int64 tensor, got ", dtype_name(ctx.input_dtype(0)));
  if (ctx.input_shape(0).rank() != 1) return ctx.fail("input 'input' must be 1-D, got ", ctx.input_shape(0).str());
  DType dt = DType::F32;
  if (const Attribute* a = ctx.attrs().find("value")) {
    if (a->kind != Attribute::Kind::Tensor) return ctx.error("attribute 'value' must be a tensor");
    if (a->t.numel() != 1) return ctx.fail("attribute 'value' must hold one element, got ", a->t.type_string());
    dt = a->t.dtype();
    if (!kAnyType.contains(dt)) return ctx.unsupported(str_cat("attribute 'value' has dtype ", dtype_name(dt)));
  }
  IGNIS_ASSIGN_OR_RETURN(auto dims, ctx.input_ints(0));
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, dims, dt, "output"));
  ctx.set_output(0, dt, out);
  return Status::ok();
}

Status infer_range(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 3));
  const DType dt = ctx.input_dtype(0);
  // Range-27 adds float16 and bfloat16, accumulated in float32 (stash_type 1, the default).
  const bool half = (dt == DType::F16 || dt == DType::BF16) && ctx.opset() >= 27;
  if (!half && !DTypeSet{DType::F32, DType::F64, DType::I16, DType::I32, DType::I64}.contains(dt))
    return ctx.unsupported(str_cat("dtype ", dtype_name(dt), " (supported: float, double, int16, int32, int64",
                                   ctx.opset() >= 27 ? ", float16, bfloat16)" : ")"));
  if (half && ctx.attrs().get_int("stash_type", 1) != 1)
    return ctx.unsupported(str_cat("stash_type ", ctx.attrs().get_int("stash_type", 1), " (only 1, float32)"));
  for (int i = 1; i < 3; ++i) IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 0, i));
  IGNIS_RETURN_IF_ERROR(expect_single_element(ctx, 0, "start"));
  IGNIS_RETURN_IF_ERROR(expect_single_element(ctx, 1, "limit"));
  IGNIS_RETURN_IF_ERROR(expect_single_element(ctx, 2, "delta"));
  int64_t count = 0;
  if (dtype_is_integer(dt)) {
    IGNIS_ASSIGN_OR_RETURN(auto start, ctx.input_ints(0));
    IGNIS_ASSIGN_OR_RETURN(auto limit, ctx.input_ints(1));
    IGNIS_ASSIGN_OR_RETURN(auto delta, ctx.input_ints(2));
    if (delta[0] == 0) return ctx.error("input 'delta' must not be 0");
    const __int128 span = static_cast<__int128>(limit[0]) - start[0];
    const __int128 d = delta[0];
    // ceil(span / d) for either sign of d.
    __int128 q = span / d;
    if (q * d != span && ((span > 0) == (d > 0))) ++q;
    count = q > 0 ? static_cast<int64_t>(q) : 0;
  } else {
    IGNIS_ASSIGN_OR_RETURN(auto start, ctx.input_doubles(0));
    IGNIS_ASSIGN_OR_RETURN(auto limit, ctx.input_doubles(1));
    IGNIS_ASSIGN_OR_RETURN(auto delta, ctx.input_doubles(2));
    if (delta[0] == 0) return ctx.error("input 'delta' must not be 0");
    // The difference is taken in the input type (float32 for the 16-bit types), the division
    // in double.
    const double span = dt != DType::F64
                            ? static_cast<double>(static_cast<float>(limit[0]) - static_cast<float>(start[0]))
                            : limit[0] - start[0];
    const double n = std::ceil(span / delta[0]);
    if (!std::isfinite(n) || n > static_cast<double>(kMaxTensorBytes))
      return ctx.fail("range from ", start[0], " to ", limit[0], " by ", delta[0], " is too long");
    count = n > 0 ? static_cast<int64_t>(n) : 0;
  }
  const int64_t dims[] = {count};
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, dims, dt, "output"));
  ctx.set_output(0, dt, out);
  return Status::ok();
}

Status infer_eye_like(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  IGNIS_RETURN_IF_ERROR(ctx.expect_rank(0, 2));
  DType dt = ctx.input_dtype(0);
  if (ctx.attrs().has("dtype")) {
    const int64_t code = ctx.attrs().get_int("dtype");
    auto t = dtype_from_onnx(static_cast<int32_t>(code));
    if (!t || !kAnyType.contains(*t)) return ctx.unsupported(str_cat("attribute 'dtype' ", code));
    dt = *t;
  }
  ctx.set_output(0, dt, ctx.input_shape(0));
  return Status::ok();
}

Status infer_depth_to_space(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  IGNIS_RETURN_IF_ERROR(ctx.expect_rank(0, 4));
  const Shape& in = ctx.input_shape(0);
  if (!ctx.attrs().has("blocksize")) return ctx.error("attribute 'blocksize' is required");
  const int64_t b = ctx.attrs().get_int("blocksize");
  if (b <= 0 || b > (int64_t{1} << 20)) return ctx.fail("attribute 'blocksize' must be positive, got ", b);
  const std::string mode = ctx.attrs().get_string("mode", "DCR");
  if (mode != "DCR" && (mode != "CRD" || ctx.opset() < 11))
    return ctx.fail("attribute 'mode' '", mode, "' must be DCR", ctx.opset() >= 11 ? " or CRD" : "");
  if (in[1] % (b * b) != 0)
    return ctx.fail("channels ", in[1], " of input ", in.str(), " are not divisible by blocksize^2 = ", b * b);
  std::vector<int64_t> dims = {in[0], in[1] / (b * b), 0, 0};
  IGNIS_ASSIGN_OR_RETURN(dims[2], checked_mul(ctx, in[2], b, "output height"));
  IGNIS_ASSIGN_OR_RETURN(dims[3], checked_mul(ctx, in[3], b, "output width"));
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, dims, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

Status infer_space_to_depth(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  IGNIS_RETURN_IF_ERROR(ctx.expect_rank(0, 4));
  const Shape& in = ctx.input_shape(0);
  if (!ctx.attrs().has("blocksize")) return ctx.error("attribute 'blocksize' is required");
  const int64_t b = ctx.attrs().get_int("blocksize");
  if (b <= 0 || b > (int64_t{1} << 20)) return ctx.fail("attribute 'blocksize' must be positive, got ", b);
  const std::string mode = ctx.attrs().get_string("mode", "DCR");
  if (mode != "DCR" && (mode != "CRD" || ctx.opset() < 28))
    return ctx.fail("attribute 'mode' '", mode, "' must be DCR", ctx.opset() >= 28 ? " or CRD" : "");
  if (in[2] % b != 0 || in[3] % b != 0)
    return ctx.fail("spatial dims of input ", in.str(), " are not divisible by blocksize ", b);
  std::vector<int64_t> dims = {in[0], 0, in[2] / b, in[3] / b};
  IGNIS_ASSIGN_OR_RETURN(dims[1], checked_mul(ctx, in[1], b * b, "output channels"));
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, dims, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

}  // namespace

void register_tensor_schemas(OpSchemaRegistry& r) {
  r.add({"", "Shape", 1, 25, infer_shape_op});
  r.add({"", "Size", 1, 25, infer_size});
  r.add({"", "Reshape", 1, 25, infer_reshape});
  r.add({"", "Flatten", 1, 25, infer_flatten});
  r.add({"", "Squeeze", 1, 25, infer_squeeze});
  r.add({"", "Unsqueeze", 1, 25, infer_unsqueeze});
  r.add({"", "Transpose", 1, 25, infer_transpose});
  r.add({"", "Concat", 1, 21, infer_concat});
  r.add({"", "Split", 1, 21, infer_split});
  r.add({"", "Slice", 1, 21, infer_slice});
  r.add({"", "Expand", 8, 21, infer_expand});
  r.add({"", "Tile", 1, 21, infer_tile});
  r.add({"", "Pad", 1, 25, infer_pad});  // 21-25 add float8, int4, float4, int2 types
  r.add({"", "ConstantOfShape", 9, 25, infer_constant_of_shape});
  r.add({"", "Range", 11, 27, infer_range});  // Range-27's stash_type concerns float16 only
  r.add({"", "EyeLike", 9, 22, infer_eye_like});
  r.add({"", "DepthToSpace", 1, 28, infer_depth_to_space});
  r.add({"", "SpaceToDepth", 1, 28, infer_space_to_depth});
  tensor_ops::register_tensor_index_schemas(r);
}

}  // namespace ignis::ir
