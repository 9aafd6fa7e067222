// SPDX-License-Identifier: Apache-2.0
// Schemas for the string ops: StringNormalizer, RegexFullMatch, StringSplit and StringConcat.
// Models holding strings run dynamic plans, so StringNormalizer's and StringSplit's output
// shapes, which depend on the strings, are inferred from the input's value at run time (and
// answer ValueRequired before). Attributes are checked when the model is built (OpSchema::check),
// RegexFullMatch's pattern included.
#include <re2/re2.h>

#include <algorithm>
#include <optional>
#include <string>

#include "core/strings.h"
#include "core/text.h"
#include "ir/ops/nn_internal.h"
#include "ir/op_schema.h"

namespace ignis::ir {
namespace {

using Kind = Attribute::Kind;
using nn_ops::relabel;

Status value_required(const InferContext& ctx, const char* what) {
  return Status(StatusCode::ValueRequired,
                str_cat("node (", ctx.op_type(), "): ", what, " depends on the strings, known only at run time"));
}

Status expect_strings(const InferContext& ctx, int i) {
  if (ctx.input_dtype(i) != DType::String)
    return ctx.unsupported(str_cat("input ", i, " must be a string tensor, got ", dtype_name(ctx.input_dtype(i))));
  return Status::ok();
}

Status expect_attr_kind(const AttrMap& attrs, std::string_view name, Kind kind) {
  if (const Attribute* a = attrs.find(name); a && a->kind != kind)
    return invalid_argument(
        str_cat("attribute '", name, "' must be ", attribute_kind_name(kind), ", got ", attribute_kind_name(a->kind)));
  return Status::ok();
}

// --- StringNormalizer: X [C] or [1, C]; stopwords dropped, then the case changed ---------------

Status check_string_normalizer(const AttrMap& attrs, int64_t) {
  return StringNormalizerRules::read(attrs).status();
}

Status infer_string_normalizer(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_strings(ctx, 0));
  const Shape& x = ctx.input_shape(0);
  if (x.rank() != 1 && !(x.rank() == 2 && x[0] == 1))
    return ctx.fail("input 0 must be [C] or [1, C], got ", x.str());
  auto rules = StringNormalizerRules::read(ctx.attrs());
  if (!rules) return relabel(ctx, rules.error());
  if (!rules->has_stopwords()) {
    ctx.set_output(0, DType::String, x);
    return Status::ok();
  }
  const Tensor* v = ctx.input_value(0);
  if (!v) return value_required(ctx, "the output length");
  const auto* s = v->data_as<const std::string>();
  const int64_t kept = std::count_if(s, s + v->numel(), [&](const std::string& e) { return !rules->is_stopword(e); });
  // All dropped: one empty string, [1] or [1, 1], as the spec says.
  const int64_t c = std::max<int64_t>(kept, 1);
  ctx.set_output(0, DType::String, x.rank() == 1 ? Shape{c} : Shape{1, c});
  return Status::ok();
}

// --- RegexFullMatch: whether each whole string matches `pattern` (RE2 syntax) ------------------

Status check_regex_full_match(const AttrMap& attrs, int64_t) {
  IGNIS_RETURN_IF_ERROR(expect_attr_kind(attrs, "pattern", Kind::String));
  if (!attrs.has("pattern")) return invalid_argument("attribute 'pattern' is required");
  RE2::Options options;
  options.set_log_errors(false);
  const std::string pattern = attrs.get_string("pattern");
  const RE2 re(pattern, options);
  if (!re.ok())
    return invalid_argument(
        str_cat("attribute 'pattern' \"", pattern, "\" is not a valid RE2 regular expression: ", re.error()));
  return Status::ok();
}

Status infer_regex_full_match(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_strings(ctx, 0));
  IGNIS_RETURN_IF_ERROR(relabel(ctx, expect_attr_kind(ctx.attrs(), "pattern", Kind::String)));
  if (!ctx.attrs().has("pattern")) return ctx.error("attribute 'pattern' is required");
  ctx.set_output(0, DType::Bool, ctx.input_shape(0));
  return Status::ok();
}

// --- StringSplit: X -> substrings [..., k] padded with "", and their counts [...] -------------

Status check_string_split(const AttrMap& attrs, int64_t) {
  IGNIS_RETURN_IF_ERROR(expect_attr_kind(attrs, "delimiter", Kind::String));
  return expect_attr_kind(attrs, "maxsplit", Kind::Int);
}

std::optional<int64_t> maxsplit_attr(const AttrMap& attrs) {
  if (!attrs.has("maxsplit")) return std::nullopt;
  return attrs.get_int("maxsplit");
}

Status infer_string_split(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_strings(ctx, 0));
  IGNIS_RETURN_IF_ERROR(relabel(ctx, check_string_split(ctx.attrs(), ctx.opset())));
  const Tensor* v = ctx.input_value(0);
  if (!v) return value_required(ctx, "the number of substrings");
  const std::string delimiter = ctx.attrs().get_string("delimiter");
  const std::optional<int64_t> maxsplit = maxsplit_attr(ctx.attrs());
  int64_t most = 0;
  for (int64_t i = 0; i < v->numel(); ++i) {
    const auto parts = split_string(v->data_as<const std::string>()[i], delimiter, maxsplit);
    most = std::max(most, static_cast<int64_t>(parts.size()));
  }
  Shape y = ctx.input_shape(0);
  y.push_back(most);
  ctx.set_output(0, DType::String, y);
  ctx.set_output(1, DType::I64, ctx.input_shape(0));
  return Status::ok();
}

// --- StringConcat: X + Y elementwise, broadcasting --------------------------------------------

Status infer_string_concat(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_strings(ctx, 0));
  IGNIS_RETURN_IF_ERROR(expect_strings(ctx, 1));
  return infer_broadcast(ctx, DType::String);
}

}  // namespace

void register_string_schemas(OpSchemaRegistry& r) {
  r.add({.domain = "", .op_type = "StringNormalizer", .since_opset = 10, .until_opset = 10,
         .infer = infer_string_normalizer, .check = check_string_normalizer});
  r.add({.domain = "", .op_type = "RegexFullMatch", .since_opset = 20, .until_opset = 20,
         .infer = infer_regex_full_match, .check = check_regex_full_match});
  r.add({.domain = "", .op_type = "StringSplit", .since_opset = 20, .until_opset = 20, .infer = infer_string_split,
         .check = check_string_split});
  r.add({"", "StringConcat", 20, 20, infer_string_concat});
}

}  // namespace ignis::ir
