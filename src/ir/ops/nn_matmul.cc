// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the matrix products: MatMul, Gemm and Einsum.
#include <vector>

#include "core/broadcast.h"
#include "core/einsum_equation.h"
#include "ir/ops/nn_internal.h"

namespace ignis::ir::nn_ops {

namespace {

constexpr DTypeSet kMatMulTypes{DType::F32, DType::F64, DType::F16, DType::BF16,
                                DType::I32, DType::I64, DType::U32, DType::U64};

// numpy.matmul: 1-D operands are promoted (A to [1, K], B to [K, 1]) and the promoted axis
// is removed from the result; leading (batch) axes broadcast.
Status infer_matmul(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "A", kMatMulTypes));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 1, "B", 0));
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  if (a.rank() < 1 || b.rank() < 1)
    return ctx.fail("inputs must have rank >= 1, got A ", a.str(), " and B ", b.str());
  const int64_t ka = a[a.rank() - 1];
  const int64_t kb = b.rank() == 1 ? b[0] : b[b.rank() - 2];
  if (ka != kb) return ctx.fail("inner dimensions differ: A ", a.str(), " and B ", b.str());
  Shape a_batch, b_batch;
  for (int i = 0; i + 2 < a.rank(); ++i) a_batch.push_back(a[i]);
  for (int i = 0; i + 2 < b.rank(); ++i) b_batch.push_back(b[i]);
  auto batch = broadcast_shapes(a_batch, b_batch);
  if (!batch) return ctx.fail("batch dimensions of A ", a.str(), " and B ", b.str(), " do not broadcast");
  std::vector<int64_t> out = batch->to_vector();
  if (a.rank() >= 2) out.push_back(a[a.rank() - 2]);
  if (b.rank() >= 2) out.push_back(b[b.rank() - 1]);
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

Status infer_gemm(InferContext& ctx) {
  // C became optional at opset 11.
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(ctx.opset() >= 11 ? 2 : 3, 3));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "A", kMatMulTypes));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 1, "B", 0));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 2, "C", 0));
  IGNIS_RETURN_IF_ERROR(ctx.expect_rank(0, 2));
  IGNIS_RETURN_IF_ERROR(ctx.expect_rank(1, 2));
  const bool ta = ctx.attrs().get_int("transA", 0) != 0;
  const bool tb = ctx.attrs().get_int("transB", 0) != 0;
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  const int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
  const int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (k != kb)
    return ctx.fail("inner dimensions differ: A ", a.str(), (ta ? " (transposed)" : ""), " and B ", b.str(),
                    (tb ? " (transposed)" : ""));
  if (ctx.has_input(2)) {
    const Shape& c = ctx.input_shape(2);
    auto bc = broadcast_shapes(Shape{m, n}, c);
    if (c.rank() > 2 || !bc || !(*bc == Shape{m, n}))
      return ctx.fail("input 2 ('C') of shape ", c.str(), " does not broadcast to [", m, ", ", n, "]");
  }
  ctx.set_output(0, ctx.input_dtype(0), Shape{m, n});
  return Status::ok();
}

constexpr DTypeSet kEinsumTypes = DTypeSet::numeric();

Status infer_einsum(InferContext& ctx) {
  if (ctx.num_inputs() < 1) return ctx.error("expected at least 1 input");
  std::vector<Shape> shapes;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    IGNIS_RETURN_IF_ERROR(expect_input(ctx, i, "Inputs", kEinsumTypes));
    IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, i, "Inputs", 0));
    shapes.push_back(ctx.input_shape(i));
  }
  const Attribute* eq = ctx.attrs().find("equation");
  if (eq == nullptr || eq->kind != Attribute::Kind::String) return ctx.error("string attribute 'equation' is required");
  auto parsed = parse_einsum(eq->s, shapes);
  if (!parsed) return relabel(ctx, parsed.error());
  std::vector<int64_t> out;
  for (int label : parsed->output) out.push_back(parsed->label_dims[label]);
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

}  // namespace

void register_matmul_schemas(OpSchemaRegistry& r) {
  r.add({"", "MatMul", 1, 21, infer_matmul});
  r.add({"", "Gemm", 1, 21, infer_gemm});
  r.add({"", "Einsum", 12, 28, infer_einsum});
}

}  // namespace ignis::ir::nn_ops
