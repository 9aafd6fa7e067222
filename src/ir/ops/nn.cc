// SPDX-License-Identifier: Apache-2.0
// Entry point of the NN op schemas (the ops CNNs and transformers spend their time in) and
// the validation helpers the nn_*.cc schema files share.
#include <algorithm>

#include "ir/ops/nn_internal.h"

namespace ignis::ir {
namespace nn_ops {

Status relabel(const InferContext& ctx, const Status& s) {
  if (s.is_ok()) return s;
  if (s.code() == StatusCode::InvalidArgument) return ctx.error(s.message());
  if (s.code() == StatusCode::Unsupported) return ctx.unsupported(s.message());
  return s;
}

Status expect_input(const InferContext& ctx, int i, std::string_view name, DTypeSet allowed) {
  if (!ctx.has_input(i)) return ctx.fail("input ", i, " ('", name, "') is required");
  if (!allowed.contains(ctx.input_dtype(i)))
    return ctx.unsupported(str_cat("input ", i, " ('", name, "') has unsupported dtype ",
                                   dtype_name(ctx.input_dtype(i))));
  return Status::ok();
}

Status expect_same_dtype(const InferContext& ctx, int i, std::string_view name, int ref) {
  if (!ctx.has_input(i)) return Status::ok();
  if (ctx.input_dtype(i) != ctx.input_dtype(ref))
    return ctx.fail("input ", i, " ('", name, "') must have dtype ", dtype_name(ctx.input_dtype(ref)), ", got ",
                    dtype_name(ctx.input_dtype(i)));
  return Status::ok();
}

Status expect_min_rank(const InferContext& ctx, int i, std::string_view name, int min_rank) {
  if (ctx.input_shape(i).rank() < min_rank)
    return ctx.fail("input ", i, " ('", name, "') must have rank >= ", min_rank, ", got shape ",
                    ctx.input_shape(i).str());
  return Status::ok();
}

Status expect_vector(const InferContext& ctx, int i, std::string_view name, int64_t n) {
  const Shape& s = ctx.input_shape(i);
  if (s.rank() != 1 || s[0] != n)
    return ctx.fail("input ", i, " ('", name, "') must have shape [", n, "], got ", s.str());
  return Status::ok();
}

Result<Shape> checked_shape(const InferContext& ctx, std::span<const int64_t> dims, DType dtype,
                            std::string_view what) {
  if (dims.size() > static_cast<size_t>(Shape::kMaxRank))
    return ctx.fail(what, " would have rank ", dims.size(), ", more than the supported ", Shape::kMaxRank);
  int64_t numel = 1;
  for (int64_t d : dims) {
    if (d < 0) return ctx.fail(what, " would have a negative dimension: ", str_list(dims));
    if (__builtin_mul_overflow(numel, d, &numel)) return ctx.fail(what, " shape ", str_list(dims), " is too large");
  }
  const int64_t esize = std::max<int64_t>(1, static_cast<int64_t>(dtype_size(dtype)));
  if (numel > kMaxTensorBytes / esize) return ctx.fail(what, " shape ", str_list(dims), " is too large");
  return Shape(dims);
}

void set_remaining_outputs(InferContext& ctx, int from, DType dtype, const Shape& shape) {
  for (int i = from; i < ctx.num_outputs(); ++i) ctx.set_output(i, dtype, shape);
}

}  // namespace nn_ops

void register_nn_schemas(OpSchemaRegistry& r) {
  nn_ops::register_matmul_schemas(r);
  nn_ops::register_conv_schemas(r);
  nn_ops::register_pool_schemas(r);
  nn_ops::register_norm_schemas(r);
  nn_ops::register_resize_schemas(r);
}

}  // namespace ignis::ir
