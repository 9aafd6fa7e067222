// SPDX-License-Identifier: Apache-2.0
// Schemas for the ai.onnx.ml ops that map labels: LabelEncoder (versions 1, 2 and 4; its
// attributes are read by core/label_encoder) and ZipMap (class scores to a sequence of maps).
// Both are checked when the model is built, since models holding strings or maps plan
// dynamically and would otherwise report a bad attribute only when they first run.
#include <string>

#include "core/label_encoder.h"
#include "core/onnx_op_versions.h"
#include "ir/ops/ml_internal.h"
#include "ir/ops/nn_internal.h"

namespace ignis::ir {

namespace {

using ml_ops::kMl;
using nn_ops::relabel;

int64_t label_encoder_version(int64_t opset) { return onnx_op_version(kMl, "LabelEncoder", opset); }

Status check_label_encoder(const AttrMap& attrs, int64_t opset) {
  return read_label_encoder(attrs, label_encoder_version(opset), DType::Undefined).status();
}

Status infer_label_encoder(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  const int64_t version = label_encoder_version(ctx.opset());
  const DTypeSet types = version < 2   ? DTypeSet{DType::String, DType::I64}
                         : version < 4 ? DTypeSet{DType::String, DType::I64, DType::F32}
                                       : DTypeSet{DType::String, DType::I64, DType::F32, DType::I32, DType::I16,
                                                  DType::F64};
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, types));
  const DType x = ctx.input_dtype(0);
  auto table = read_label_encoder(ctx.attrs(), version, x);
  if (!table) return relabel(ctx, table.error());
  if (table->keys.dtype() != x)
    return ctx.fail("input 0 is ", dtype_name(x), " but the keys are ", dtype_name(table->keys.dtype()));
  ctx.set_output(0, table->values.dtype(), ctx.input_shape(0));
  return Status::ok();
}

// The class labels of ZipMap: exactly one of classlabels_int64s and classlabels_strings.
Result<int64_t> zipmap_label_count(const AttrMap& attrs) {
  const Attribute* ints = attrs.find("classlabels_int64s");
  const Attribute* strings = attrs.find("classlabels_strings");
  if ((ints == nullptr) == (strings == nullptr))
    return invalid_argument(
        "exactly one of the attributes 'classlabels_int64s' and 'classlabels_strings' must be given");
  if (ints && ints->kind != Attribute::Kind::Ints)
    return invalid_argument(
        str_cat("attribute 'classlabels_int64s' must be ints, got ", attribute_kind_name(ints->kind)));
  if (strings && strings->kind != Attribute::Kind::Strings)
    return invalid_argument(
        str_cat("attribute 'classlabels_strings' must be strings, got ", attribute_kind_name(strings->kind)));
  return static_cast<int64_t>(ints ? ints->ints.size() : strings->strings.size());
}

Status check_zipmap(const AttrMap& attrs, int64_t) { return zipmap_label_count(attrs).status(); }

// ZipMap(X [N, C] or [C]) -> a sequence of N maps (one for [C]) from the C labels to the row.
Status infer_zipmap(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, {DType::F32}));
  auto labels = zipmap_label_count(ctx.attrs());
  if (!labels) return relabel(ctx, labels.error());
  const Shape& x = ctx.input_shape(0);
  if (x.rank() != 1 && x.rank() != 2) return ctx.fail("input 0 ('X') must be [N, C] or [C], got ", x.str());
  if (x[x.rank() - 1] != *labels)
    return ctx.fail("input 0 ('X') ", x.str(), " has ", x[x.rank() - 1], " scores per row for ", *labels,
                    " class labels");
  ctx.set_output(0, DType::Sequence, Shape{});
  return Status::ok();
}

}  // namespace

void ml_ops::register_ml_label_schemas(OpSchemaRegistry& r) {
  r.add({.domain = kMl, .op_type = "LabelEncoder", .since_opset = 1, .until_opset = 4, .infer = infer_label_encoder,
         .check = check_label_encoder});
  r.add({.domain = kMl, .op_type = "ZipMap", .since_opset = 1, .until_opset = 1, .infer = infer_zipmap,
         .check = check_zipmap});
}

}  // namespace ignis::ir
