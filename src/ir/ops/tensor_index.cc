// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the indexing ops: Gather, GatherElements, GatherND,
// ScatterElements, Scatter, ScatterND, OneHot, NonZero, Compress, Trilu, ReverseSequence,
// CumSum, TopK, Unique.
#include <algorithm>
#include <cmath>

#include "core/dtype_dispatch.h"
#include "ir/ops/tensor_internal.h"

namespace ignis::ir::tensor_ops {
namespace {

Status infer_gather(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  IGNIS_RETURN_IF_ERROR(expect_index_input(ctx, 1, "indices"));
  const Shape& data = ctx.input_shape(0);
  const Shape& idx = ctx.input_shape(1);
  if (data.rank() == 0) return ctx.error("input 'data' must have rank >= 1, got a scalar");
  IGNIS_ASSIGN_OR_RETURN(int axis, resolve_axis(ctx, ctx.attrs().get_int("axis", 0), data.rank(), "attribute 'axis'"));
  std::vector<int64_t> dims(data.begin(), data.begin() + axis);
  dims.insert(dims.end(), idx.begin(), idx.end());
  dims.insert(dims.end(), data.begin() + axis + 1, data.end());
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, dims, ctx.input_dtype(0), "output"));
  if (data[axis] == 0 && idx.numel() > 0)
    return ctx.fail("cannot gather ", idx.numel(), " indices from empty axis ", axis, " of ", data.str());
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

// GatherElements / ScatterElements: `indices` has data's rank and, off the axis, no larger
// extents than data (the kernels read data at those coordinates unchecked).
Status check_elements_indices(const InferContext& ctx, const Shape& data, const Shape& idx, int axis) {
  if (idx.rank() != data.rank())
    return ctx.fail("input 'indices' ", idx.str(), " must have the rank of 'data' ", data.str());
  for (int d = 0; d < data.rank(); ++d)
    if (d != axis && idx[d] > data[d])
      return ctx.fail("input 'indices' ", idx.str(), " exceeds 'data' ", data.str(), " on axis ", d);
  return Status::ok();
}

Status infer_gather_elements(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  IGNIS_RETURN_IF_ERROR(expect_index_input(ctx, 1, "indices"));
  const Shape& data = ctx.input_shape(0);
  if (data.rank() == 0) return ctx.error("input 'data' must have rank >= 1, got a scalar");
  IGNIS_ASSIGN_OR_RETURN(int axis, resolve_axis(ctx, ctx.attrs().get_int("axis", 0), data.rank(), "attribute 'axis'"));
  IGNIS_RETURN_IF_ERROR(check_elements_indices(ctx, data, ctx.input_shape(1), axis));
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(1));
  return Status::ok();
}

Status infer_gather_nd(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  IGNIS_RETURN_IF_ERROR(expect_index_input(ctx, 1, "indices"));
  const Shape& data = ctx.input_shape(0);
  const Shape& idx = ctx.input_shape(1);
  const int r = data.rank(), q = idx.rank();
  if (r < 1 || q < 1) return ctx.fail("inputs must have rank >= 1, got ", data.str(), " and ", idx.str());
  const int64_t b = ctx.opset() >= 12 ? ctx.attrs().get_int("batch_dims", 0) : 0;
  if (b < 0 || b >= std::min(q, r))
    return ctx.fail("attribute 'batch_dims' ", b, " must be in [0, ", std::min(q, r), ")");
  for (int i = 0; i < b; ++i)
    if (idx[i] != data[i])
      return ctx.fail("batch dims of 'indices' ", idx.str(), " and 'data' ", data.str(), " differ");
  const int64_t m = idx.back();
  if (m < 1 || m > r - b) return ctx.fail("last dim of 'indices' ", idx.str(), " must be in [1, ", r - b, "]");
  std::vector<int64_t> dims(idx.begin(), idx.end() - 1);
  dims.insert(dims.end(), data.begin() + b + m, data.end());
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, dims, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

// `reduction` values valid at this opset: none before 16, add/mul from 16, max/min from 18.
Status check_reduction(const InferContext& ctx) {
  const std::string red = ctx.attrs().get_string("reduction", "none");
  const bool ok = red == "none" || ((red == "add" || red == "mul") && ctx.opset() >= 16) ||
                  ((red == "max" || red == "min") && ctx.opset() >= 18);
  if (!ok) return ctx.fail("attribute 'reduction' '", red, "' is not valid at this opset");
  if (red != "none" && ctx.input_dtype(0) == DType::Bool && (red == "add" || red == "mul"))
    return ctx.unsupported(str_cat("reduction '", red, "' on bool"));
  return Status::ok();
}

Status infer_scatter_elements(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 3));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  IGNIS_RETURN_IF_ERROR(expect_index_input(ctx, 1, "indices"));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 0, 2));
  IGNIS_RETURN_IF_ERROR(check_reduction(ctx));
  const Shape& data = ctx.input_shape(0);
  if (data.rank() == 0) return ctx.error("input 'data' must have rank >= 1, got a scalar");
  IGNIS_ASSIGN_OR_RETURN(int axis, resolve_axis(ctx, ctx.attrs().get_int("axis", 0), data.rank(), "attribute 'axis'"));
  IGNIS_RETURN_IF_ERROR(check_elements_indices(ctx, data, ctx.input_shape(1), axis));
  if (ctx.input_shape(2) != ctx.input_shape(1))
    return ctx.fail("input 'updates' ", ctx.input_shape(2).str(), " must have the shape of 'indices' ",
                    ctx.input_shape(1).str());
  ctx.set_output(0, ctx.input_dtype(0), data);
  return Status::ok();
}

Status infer_scatter_nd(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 3));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  IGNIS_RETURN_IF_ERROR(expect_index_input(ctx, 1, "indices"));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 0, 2));
  IGNIS_RETURN_IF_ERROR(check_reduction(ctx));
  const Shape& data = ctx.input_shape(0);
  const Shape& idx = ctx.input_shape(1);
  const Shape& upd = ctx.input_shape(2);
  if (data.rank() < 1 || idx.rank() < 1)
    return ctx.fail("'data' and 'indices' must have rank >= 1, got ", data.str(), " and ", idx.str());
  const int64_t m = idx.back();
  if (m < 0 || m > data.rank())
    return ctx.fail("last dim of 'indices' ", idx.str(), " exceeds the rank of ", data.str());
  std::vector<int64_t> want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), data.begin() + m, data.end());
  if (upd.dims().size() != want.size() || !std::equal(want.begin(), want.end(), upd.begin()))
    return ctx.fail("input 'updates' ", upd.str(), " must have shape ", str_list(want));
  ctx.set_output(0, ctx.input_dtype(0), data);
  return Status::ok();
}

Status infer_one_hot(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 3));
  const DTypeSet numeric = DTypeSet::numeric();
  if (!numeric.contains(ctx.input_dtype(0)))
    return ctx.fail("input 'indices' must be numeric, got ", dtype_name(ctx.input_dtype(0)));
  if (!numeric.contains(ctx.input_dtype(1)))
    return ctx.fail("input 'depth' must be numeric, got ", dtype_name(ctx.input_dtype(1)));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 2));
  IGNIS_RETURN_IF_ERROR(expect_single_element(ctx, 1, "depth"));
  if (ctx.input_shape(2).rank() != 1 || ctx.input_shape(2)[0] != 2)
    return ctx.fail("input 'values' must be [off_value, on_value] of shape [2], got ", ctx.input_shape(2).str());
  const Shape& in = ctx.input_shape(0);
  IGNIS_ASSIGN_OR_RETURN(auto depth_v, ctx.input_doubles(1));
  const double depth_d = std::trunc(depth_v[0]);
  if (!(depth_d >= 1) || depth_d > static_cast<double>(kMaxTensorBytes))
    return ctx.fail("input 'depth' must be a positive count, got ", depth_v[0]);
  const int64_t depth = static_cast<int64_t>(depth_d);
  const int out_rank = in.rank() + 1;
  const int64_t axis_attr = ctx.attrs().get_int("axis", -1);
  IGNIS_ASSIGN_OR_RETURN(int axis, resolve_axis(ctx, axis_attr, out_rank, "attribute 'axis'"));
  std::vector<int64_t> dims(in.begin(), in.end());
  dims.insert(dims.begin() + axis, depth);
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, dims, ctx.input_dtype(2), "output"));
  ctx.set_output(0, ctx.input_dtype(2), out);
  return Status::ok();
}

Status infer_non_zero(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  if (dtype_is_low_bit(ctx.input_dtype(0)))
    return ctx.unsupported(str_cat("NonZero of ", dtype_name(ctx.input_dtype(0)), " is not supported"));
  const Tensor* v = ctx.input_value(0);
  if (v == nullptr)
    return Status(StatusCode::ValueRequired, str_cat("NonZero: the output shape depends on the value of input 0"));
  int64_t nnz = 0;
  visit_dtype(v->dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = v->data_as<T>();
    for (int64_t i = 0; i < v->numel(); ++i) nnz += to_compute(p[i]) != compute_t<T>(0) ? 1 : 0;
  });
  // A scalar is treated as a 1-element vector, like numpy.
  const int64_t rank = std::max(1, ctx.input_shape(0).rank());
  ctx.set_output(0, DType::I64, Shape{rank, nnz});
  return Status::ok();
}

Status infer_compress(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  if (ctx.input_dtype(1) != DType::Bool)
    return ctx.fail("input 'condition' must be bool, got ", dtype_name(ctx.input_dtype(1)));
  if (ctx.input_shape(1).rank() != 1) return ctx.fail("input 'condition' must be 1-D, got ", ctx.input_shape(1).str());
  const Shape& in = ctx.input_shape(0);
  if (in.rank() < 1) return ctx.error("input must have rank >= 1, got a scalar");
  int axis = -1;
  if (ctx.attrs().has("axis")) {
    IGNIS_ASSIGN_OR_RETURN(axis, resolve_axis(ctx, ctx.attrs().get_int("axis"), in.rank(), "attribute 'axis'"));
  }
  const Tensor* cond = ctx.input_value(1);
  if (cond == nullptr)
    return Status(StatusCode::ValueRequired, "Compress: the output shape depends on the value of input 1");
  const int64_t extent = axis < 0 ? in.numel() : in[axis];
  const bool* c = cond->data_as<bool>();
  int64_t kept = 0;
  for (int64_t i = 0; i < cond->numel(); ++i) {
    if (!c[i]) continue;
    if (i >= extent)
      return ctx.fail("input 'condition' selects index ", i, " beyond the ", extent, " slices of ", in.str());
    ++kept;
  }
  Shape out = axis < 0 ? Shape{kept} : in;
  if (axis >= 0) out[axis] = kept;
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

Status infer_trilu(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 2));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  if (ctx.input_shape(0).rank() < 2) return ctx.fail("input must have rank >= 2, got ", ctx.input_shape(0).str());
  if (ctx.has_input(1)) {
    IGNIS_RETURN_IF_ERROR(expect_single_element(ctx, 1, "k"));
    if (!kIndexTypes.contains(ctx.input_dtype(1)))
      return ctx.fail("input 'k' must be int64, got ", dtype_name(ctx.input_dtype(1)));
  }
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::ok();
}

Status infer_reverse_sequence(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  IGNIS_RETURN_IF_ERROR(expect_index_input(ctx, 1, "sequence_lens"));
  const Shape& in = ctx.input_shape(0);
  if (in.rank() < 2) return ctx.fail("input must have rank >= 2, got ", in.str());
  const int64_t batch_axis = ctx.attrs().get_int("batch_axis", 1);
  const int64_t time_axis = ctx.attrs().get_int("time_axis", 0);
  if ((batch_axis != 0 && batch_axis != 1) || (time_axis != 0 && time_axis != 1) || batch_axis == time_axis)
    return ctx.fail("attributes 'batch_axis' ", batch_axis, " and 'time_axis' ", time_axis,
                    " must be 0 and 1 in some order");
  const Shape& lens = ctx.input_shape(1);
  if (lens.rank() != 1 || lens[0] != in[static_cast<int>(batch_axis)])
    return ctx.fail("input 'sequence_lens' ", lens.str(), " must be [", in[static_cast<int>(batch_axis)], "]");
  ctx.set_output(0, ctx.input_dtype(0), in);
  return Status::ok();
}

// TensorScatter-24(past_cache, update, write_indices?): the cache with `update` written along
// `axis` (not the batch axis) from each batch entry's write index.
Status infer_tensor_scatter(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 3));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  const Shape& cache = ctx.input_shape(0);
  const Shape& update = ctx.input_shape(1);
  if (ctx.input_dtype(1) != ctx.input_dtype(0))
    return ctx.fail("input 'update' must have the cache's dtype ", dtype_name(ctx.input_dtype(0)), ", got ",
                    dtype_name(ctx.input_dtype(1)));
  if (cache.rank() < 2 || update.rank() != cache.rank())
    return ctx.fail("inputs 'past_cache' ", cache.str(), " and 'update' ", update.str(), " must have one rank >= 2");
  IGNIS_ASSIGN_OR_RETURN(int axis, resolve_axis(ctx, ctx.attrs().get_int("axis", -2), cache.rank(), "attribute 'axis'"));
  if (axis == 0) return ctx.error("attribute 'axis' must not be the batch axis 0");
  for (int d = 0; d < cache.rank(); ++d)
    if (d != axis ? update[d] != cache[d] : update[d] > cache[d])
      return ctx.fail("input 'update' ", update.str(), " does not fit the cache ", cache.str(), " along axis ", axis);
  const std::string mode = ctx.attrs().get_string("mode", "linear");
  if (mode != "linear" && mode != "circular") return ctx.fail("attribute 'mode' \"", mode, "\" is not linear or circular");
  if (ctx.has_input(2)) {
    IGNIS_RETURN_IF_ERROR(expect_index_input(ctx, 2, "write_indices"));
    if (!(ctx.input_shape(2) == Shape{cache[0]}))
      return ctx.fail("input 'write_indices' ", ctx.input_shape(2).str(), " must be [", cache[0], "]");
  }
  ctx.set_output(0, ctx.input_dtype(0), cache);
  return Status::ok();
}

// CumSum and CumProd: the running sum or product along input 1's axis.
Status infer_cumulative(InferContext& ctx, DTypeSet types) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  if (!types.contains(ctx.input_dtype(0)))
    return ctx.unsupported(str_cat("input dtype ", dtype_name(ctx.input_dtype(0))));
  IGNIS_RETURN_IF_ERROR(expect_index_input(ctx, 1, "axis"));
  IGNIS_RETURN_IF_ERROR(expect_single_element(ctx, 1, "axis"));
  const Shape& in = ctx.input_shape(0);
  if (in.rank() < 1) return ctx.error("input must have rank >= 1, got a scalar");
  // The axis does not change the shape; check it when known, else the kernel does.
  if (ctx.input_value(1) != nullptr) {
    IGNIS_ASSIGN_OR_RETURN(auto axis, ctx.input_ints(1));
    IGNIS_RETURN_IF_ERROR(resolve_axis(ctx, axis[0], in.rank(), "input 'axis'").status());
  }
  ctx.set_output(0, ctx.input_dtype(0), in);
  return Status::ok();
}

Status infer_cum_sum(InferContext& ctx) { return infer_cumulative(ctx, DTypeSet::numeric()); }
Status infer_cum_prod(InferContext& ctx) {
  return infer_cumulative(ctx, {DType::U32, DType::U64, DType::I32, DType::I64, DType::F16, DType::F32, DType::F64,
                                DType::BF16});
}

Status infer_top_k(InferContext& ctx) {
  int64_t k = 0;
  if (ctx.opset() < 10) {
    IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
    if (!ctx.attrs().has("k")) return ctx.error("attribute 'k' is required");
    k = ctx.attrs().get_int("k");
  } else {
    IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
    IGNIS_RETURN_IF_ERROR(expect_single_element(ctx, 1, "K"));
    IGNIS_ASSIGN_OR_RETURN(auto kv, ctx.input_ints(1));
    k = kv[0];
  }
  if (!DTypeSet::numeric().contains(ctx.input_dtype(0)))
    return ctx.unsupported(str_cat("input dtype ", dtype_name(ctx.input_dtype(0))));
  const Shape& in = ctx.input_shape(0);
  if (in.rank() < 1) return ctx.error("input must have rank >= 1, got a scalar");
  IGNIS_ASSIGN_OR_RETURN(int axis, resolve_axis(ctx, ctx.attrs().get_int("axis", -1), in.rank(), "attribute 'axis'"));
  if (k < 0 || k > in[axis])
    return ctx.fail("k = ", k, " must be in [0, ", in[axis], "] for axis ", axis, " of ", in.str());
  Shape out = in;
  out[axis] = k;
  ctx.set_output(0, ctx.input_dtype(0), out);
  ctx.set_output(1, DType::I64, out);
  return Status::ok();
}

// Number of distinct slices of `x` along `axis` (all elements when axis < 0). Slices compare
// elementwise by value, NaN equal to NaN.
int64_t count_unique(const Tensor& x, int axis) {
  const int64_t n = axis < 0 ? x.numel() : x.dim(axis);
  const int64_t outer = axis < 0 ? 1 : x.shape().numel(0, axis);
  const int64_t inner = axis < 0 ? 1 : x.shape().numel(axis + 1, x.rank());
  int64_t groups = 0;
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data_as<T>();
    auto at = [&](int64_t j, int64_t o, int64_t i) {
      return static_cast<double>(to_compute(p[(o * n + j) * inner + i]));
    };
    // -1, 0, 1 ordering of slices a and b; NaN sorts after every number.
    auto cmp = [&](int64_t a, int64_t b) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const double u = at(a, o, i), v = at(b, o, i);
          const bool un = std::isnan(u), vn = std::isnan(v);
          if (un || vn) {
            if (un != vn) return un ? 1 : -1;
            continue;
          }
          if (u != v) return u < v ? -1 : 1;
        }
      return 0;
    };
    std::vector<int64_t> order(n);
    for (int64_t j = 0; j < n; ++j) order[j] = j;
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
    for (int64_t k = 0; k < n; ++k)
      if (k == 0 || cmp(order[k - 1], order[k]) != 0) ++groups;
  });
  return groups;
}

Status infer_unique(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_data_input(ctx, 0));
  const Shape& in = ctx.input_shape(0);
  int axis = -1;
  if (ctx.attrs().has("axis")) {
    IGNIS_ASSIGN_OR_RETURN(axis, resolve_axis(ctx, ctx.attrs().get_int("axis"), in.rank(), "attribute 'axis'"));
  }
  const Tensor* x = ctx.input_value(0);
  if (x == nullptr)
    return Status(StatusCode::ValueRequired, "Unique: the output shapes depend on the value of input 0");
  const int64_t groups = count_unique(*x, axis);
  Shape y = axis < 0 ? Shape{groups} : in;
  if (axis >= 0) y[axis] = groups;
  ctx.set_output(0, ctx.input_dtype(0), y);
  ctx.set_output(1, DType::I64, Shape{groups});
  ctx.set_output(2, DType::I64, Shape{axis < 0 ? in.numel() : in[axis]});
  ctx.set_output(3, DType::I64, Shape{groups});
  return Status::ok();
}

}  // namespace

void register_tensor_index_schemas(OpSchemaRegistry& r) {
  r.add({"", "Gather", 1, 21, infer_gather});
  r.add({"", "GatherElements", 11, 21, infer_gather_elements});
  r.add({"", "GatherND", 11, 21, infer_gather_nd});
  r.add({"", "ScatterElements", 11, 21, infer_scatter_elements});
  r.add({"", "Scatter", 9, 10, infer_scatter_elements});
  r.add({"", "ScatterND", 11, 21, infer_scatter_nd});
  r.add({"", "OneHot", 9, 28, infer_one_hot});
  r.add({"", "NonZero", 9, 21, infer_non_zero});
  r.add({"", "Compress", 9, 28, infer_compress});
  r.add({"", "Trilu", 14, 21, infer_trilu});
  r.add({"", "ReverseSequence", 10, 28, infer_reverse_sequence});
  r.add({"", "CumSum", 11, 21, infer_cum_sum});
  r.add({"", "CumProd", 26, 26, infer_cum_prod});
  r.add({"", "TensorScatter", 24, 24, infer_tensor_scatter});
  r.add({"", "TopK", 1, 24, infer_top_k});
  r.add({"", "Unique", 11, 28, infer_unique});
}

}  // namespace ignis::ir::tensor_ops
