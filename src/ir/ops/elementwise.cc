// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the elementwise family: unary math and activations, binary
// arithmetic/logic/comparison with broadcasting, variadic Sum/Mean/Max/Min, Where, Clip, Cast,
// CastLike, Identity and Dropout (inference semantics).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>

#include "core/broadcast.h"
#include "ir/op_schema.h"

namespace ignis::ir {
namespace {

using Kind = Attribute::Kind;

// Type constraints shared by several ops (the union over the opsets ignis implements).
enum class Types { Float, Numeric, SignedNumeric, Int, UInt, Bool, NumericBool, PowBase, String };

DTypeSet type_set(Types t) {
  switch (t) {
    case Types::Float: return DTypeSet::floats();
    case Types::Numeric: return DTypeSet::numeric();
    case Types::SignedNumeric: return DTypeSet::floats() | DTypeSet::signed_ints();
    case Types::Int: return DTypeSet::ints();
    case Types::UInt: return DTypeSet::unsigned_ints();
    case Types::Bool: return DTypeSet{DType::Bool};
    case Types::NumericBool: return DTypeSet::all();
    case Types::PowBase: return DTypeSet::floats() | DTypeSet{DType::I32, DType::I64};
    case Types::String: return DTypeSet{DType::String};
  }
  return {};
}

struct AttrSpec {
  std::string_view name;
  Kind kind;
};

// A present attribute must have the expected kind; float attributes also accept ints.
Status check_attrs(const InferContext& ctx, std::initializer_list<AttrSpec> specs) {
  for (const auto& spec : specs) {
    const Attribute* a = ctx.attrs().find(spec.name);
    if (!a) continue;
    const bool ok = a->kind == spec.kind || (spec.kind == Kind::Float && a->kind == Kind::Int);
    if (!ok)
      return ctx.fail("attribute '", spec.name, "' must be ", attribute_kind_name(spec.kind), ", got ",
                      attribute_kind_name(a->kind));
  }
  return Status::ok();
}

// Input dtype must be representable and in `allowed`.
Status check_dtype(const InferContext& ctx, int i, DTypeSet allowed) {
  const DType t = ctx.input_dtype(i);
  if (t == DType::Undefined) return ctx.fail("input ", i, " has an undefined dtype");
  return ctx.expect_dtype(i, allowed);
}

Status check_same_dtype(const InferContext& ctx, int i, int j) {
  if (ctx.input_dtype(i) != ctx.input_dtype(j))
    return ctx.fail("inputs ", i, " and ", j, " must have the same dtype, got ", dtype_name(ctx.input_dtype(i)),
                    " and ", dtype_name(ctx.input_dtype(j)));
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Unary ops

Status infer_unary(InferContext& ctx, Types types, std::initializer_list<AttrSpec> attrs = {},
                   bool bool_out = false) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(check_attrs(ctx, attrs));
  IGNIS_RETURN_IF_ERROR(check_dtype(ctx, 0, type_set(types)));
  ctx.set_output(0, bool_out ? DType::Bool : ctx.input_dtype(0), ctx.input_shape(0));
  return Status::ok();
}

template <Types T>
Status infer_unary_plain(InferContext& ctx) {
  return infer_unary(ctx, T);
}

Status infer_isinf(InferContext& ctx) {
  return infer_unary(ctx, Types::Float, {{"detect_negative", Kind::Int}, {"detect_positive", Kind::Int}}, true);
}

Status infer_gelu(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(infer_unary(ctx, Types::Float, {{"approximate", Kind::String}}));
  const std::string mode = ctx.attrs().get_string("approximate", "none");
  if (mode != "none" && mode != "tanh")
    return ctx.fail("attribute 'approximate' must be \"none\" or \"tanh\", got \"", mode, "\"");
  return Status::ok();
}

Status infer_shrink(InferContext& ctx) {
  return infer_unary(ctx, Types::Numeric, {{"bias", Kind::Float}, {"lambd", Kind::Float}});
}

// Clip: bounds are attributes before opset 11 and optional scalar inputs from 11 on.
Status infer_clip(InferContext& ctx) {
  if (ctx.opset() < 11) {
    IGNIS_RETURN_IF_ERROR(infer_unary(ctx, Types::Float, {{"min", Kind::Float}, {"max", Kind::Float}}));
    return Status::ok();
  }
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 3));
  IGNIS_RETURN_IF_ERROR(check_dtype(ctx, 0, ctx.opset() < 12 ? DTypeSet::floats() : DTypeSet::numeric()));
  for (int i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    IGNIS_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
    if (ctx.input_shape(i).numel() != 1)
      return ctx.fail("input ", i, " (", i == 1 ? "min" : "max", ") must be a scalar, got shape ",
                      ctx.input_shape(i).str());
  }
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Binary ops

// Output shape of a binary op. Before opset 7, broadcasting was opt-in (`broadcast` = 1) and
// aligned B inside A at `axis` (suffix matching when absent); otherwise shapes must be equal.
Result<Shape> binary_shape(const InferContext& ctx, bool legacy) {
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  if (legacy && ctx.opset() < 7) {
    IGNIS_RETURN_IF_ERROR(check_attrs(ctx, {{"broadcast", Kind::Int}, {"axis", Kind::Int}}));
    if (ctx.attrs().get_int("broadcast", 0) == 0) {
      if (!(a == b))
        return ctx.fail("inputs must have equal shapes when broadcast=0, got ", a.str(), " and ", b.str());
      return a;
    }
    if (b.rank() > a.rank()) return ctx.fail("input B ", b.str(), " has a higher rank than input A ", a.str());
    int axis = a.rank() - b.rank();
    if (ctx.attrs().has("axis")) {
      const int64_t raw = ctx.attrs().get_int("axis");
      auto n = normalize_axis(raw, std::max(a.rank(), 1));
      if (!n) return ctx.fail("attribute 'axis' ", raw, " is out of range for rank ", a.rank());
      axis = *n;
    }
    if (axis + b.rank() > a.rank())
      return ctx.fail("input B ", b.str(), " does not fit in input A ", a.str(), " at axis ", axis);
    for (int i = 0; i < b.rank(); ++i)
      if (b[i] != 1 && b[i] != a[axis + i])
        return ctx.fail("input B ", b.str(), " does not match input A ", a.str(), " at axis ", axis);
    return a;
  }
  auto out = broadcast_shapes(a, b);
  if (!out) return ctx.fail("input shapes ", a.str(), " and ", b.str(), " do not broadcast");
  return *out;
}

// `legacy` marks ops that had the opset-1..6 `broadcast`/`axis` attributes.
Status infer_binary(InferContext& ctx, Types types, bool bool_out, bool legacy) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(check_dtype(ctx, 0, type_set(types)));
  IGNIS_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  IGNIS_ASSIGN_OR_RETURN(Shape shape, binary_shape(ctx, legacy));
  ctx.set_output(0, bool_out ? DType::Bool : ctx.input_dtype(0), shape);
  return Status::ok();
}

template <Types T, bool BoolOut, bool Legacy>
Status infer_binary_plain(InferContext& ctx) {
  return infer_binary(ctx, T, BoolOut, Legacy);
}

// Equal-19 also compares strings.
Status infer_equal(InferContext& ctx) {
  if (ctx.num_inputs() >= 1 && ctx.has_input(0) && ctx.input_dtype(0) == DType::String) {
    if (ctx.opset() < 19) return ctx.unsupported("comparing strings needs Equal-19 (opset 19)");
    return infer_binary(ctx, Types::String, true, false);
  }
  return infer_binary(ctx, Types::NumericBool, true, true);
}

// SwiGLU-28: gate A and value B of one shape (no broadcasting).
Status infer_swiglu(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(check_attrs(ctx, {{"alpha", Kind::Float}}));
  IGNIS_RETURN_IF_ERROR(infer_binary(ctx, Types::Float, false, false));
  if (!(ctx.input_shape(0) == ctx.input_shape(1)))
    return ctx.fail("inputs A ", ctx.input_shape(0).str(), " and B ", ctx.input_shape(1).str(), " must have one shape");
  return Status::ok();
}

// Pow: from opset 12 the exponent may have its own numeric dtype.
Status infer_pow(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(check_dtype(ctx, 0, type_set(Types::PowBase)));
  IGNIS_RETURN_IF_ERROR(check_dtype(ctx, 1, DTypeSet::numeric()));
  if (ctx.opset() < 12) IGNIS_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  IGNIS_ASSIGN_OR_RETURN(Shape shape, binary_shape(ctx, true));
  ctx.set_output(0, ctx.input_dtype(0), shape);
  return Status::ok();
}

Status infer_mod(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(check_attrs(ctx, {{"fmod", Kind::Int}}));
  IGNIS_RETURN_IF_ERROR(infer_binary(ctx, Types::Numeric, false, false));
  const int64_t fmod = ctx.attrs().get_int("fmod", 0);
  if (fmod != 0 && fmod != 1) return ctx.fail("attribute 'fmod' must be 0 or 1, got ", fmod);
  if (fmod == 0 && dtype_is_float(ctx.input_dtype(0)) && ctx.opset() < 28)
    return ctx.fail("attribute 'fmod' must be 1 for floating-point inputs, got 0 with ",
                    dtype_name(ctx.input_dtype(0)));
  return Status::ok();
}

Status infer_bitshift(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(check_attrs(ctx, {{"direction", Kind::String}}));
  if (!ctx.attrs().has("direction")) return ctx.error("attribute 'direction' is required");
  const std::string dir = ctx.attrs().get_string("direction");
  if (dir != "LEFT" && dir != "RIGHT")
    return ctx.fail("attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"", dir, "\"");
  // BitShift-28 adds the signed integer types.
  return infer_binary(ctx, ctx.opset() >= 28 ? Types::Int : Types::UInt, false, false);
}

// PRelu: slope broadcasts unidirectionally to X. Before opset 7 a 1-D slope of X's channel count
// applied per channel (axis 1), as in the models of that era.
Status infer_prelu(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(check_dtype(ctx, 0, DTypeSet::numeric()));
  IGNIS_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  const Shape& x = ctx.input_shape(0);
  Shape slope = ctx.input_shape(1);
  if (ctx.opset() < 7 && slope.rank() == 1 && x.rank() >= 2 && slope[0] == x[1] && slope[0] != 1) {
    slope.resize(x.rank() - 1, 1);
  }
  auto out = broadcast_shapes(x, slope);
  if (!out || !(*out == x))
    return ctx.fail("slope shape ", ctx.input_shape(1).str(), " does not broadcast to input shape ", x.str());
  ctx.set_output(0, ctx.input_dtype(0), x);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Variadic, Where

Status infer_variadic(InferContext& ctx, Types types) {
  if (ctx.num_inputs() < 1) return ctx.error("expected at least 1 input, got 0");
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (!ctx.has_input(i)) return ctx.fail("input ", i, " is required");
  IGNIS_RETURN_IF_ERROR(check_dtype(ctx, 0, type_set(types)));
  for (int i = 1; i < ctx.num_inputs(); ++i) IGNIS_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
  return infer_broadcast(ctx, ctx.input_dtype(0));
}

template <Types T>
Status infer_variadic_plain(InferContext& ctx) {
  return infer_variadic(ctx, T);
}

Status infer_where(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 3));
  if (ctx.input_dtype(0) != DType::Bool)
    return ctx.fail("input 0 (condition) must be bool, got ", dtype_name(ctx.input_dtype(0)));
  IGNIS_RETURN_IF_ERROR(check_dtype(ctx, 1, DTypeSet::all()));
  IGNIS_RETURN_IF_ERROR(check_same_dtype(ctx, 1, 2));
  return infer_broadcast(ctx, ctx.input_dtype(1));
}

// ---------------------------------------------------------------------------------------------
// Cast, CastLike, Identity, Dropout

// Target of Cast: an ONNX DataType number (opset 6+) or its name (opset 1..5).
Result<DType> cast_target(const InferContext& ctx) {
  const Attribute* to = ctx.attrs().find("to");
  if (!to) return ctx.error("attribute 'to' is required");
  int64_t code = -1;
  if (to->kind == Kind::Int) {
    code = to->i;
  } else if (to->kind == Kind::String) {
    static constexpr std::string_view kNames[] = {
        "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL",
        "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
    std::string upper = to->s;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (size_t k = 1; k < std::size(kNames); ++k)
      if (kNames[k] == upper) code = static_cast<int64_t>(k);
    if (code < 0) return ctx.fail("attribute 'to' names an unknown data type \"", to->s, "\"");
  } else {
    return ctx.fail("attribute 'to' must be int, got ", attribute_kind_name(to->kind));
  }
  if (code <= 0 || code > 64) return ctx.fail("attribute 'to' is not a valid data type: ", code);
  auto t = dtype_from_onnx(static_cast<int32_t>(code));
  if (!t) return ctx.unsupported(str_cat("cast to ONNX data type ", code, " is not supported"));
  return *t;
}

Status check_cast_source(const InferContext& ctx) {
  return check_dtype(ctx, 0, DTypeSet::storable() | DTypeSet{DType::String});
}

// Strings convert to and from numbers and bools; the low-bit types have no text form here.
Status check_string_cast(const InferContext& ctx, DType from, DType to) {
  if ((from == DType::String) == (to == DType::String)) return Status::ok();
  const DType other = from == DType::String ? to : from;
  if (!DTypeSet::all().contains(other))
    return ctx.unsupported(str_cat("cast from ", dtype_name(from), " to ", dtype_name(to), " is not supported"));
  return Status::ok();
}

// Cast-24's round_mode (float8e8m0 targets only): "up", "down" or "nearest".
Status check_round_mode(const InferContext& ctx) {
  const Attribute* a = ctx.attrs().find("round_mode");
  if (a && a->s != "up" && a->s != "down" && a->s != "nearest")
    return ctx.fail("attribute 'round_mode' must be \"up\", \"down\" or \"nearest\", got \"", a->s, "\"");
  return Status::ok();
}

Status infer_cast(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(check_attrs(ctx, {{"saturate", Kind::Int}, {"round_mode", Kind::String}}));
  IGNIS_RETURN_IF_ERROR(check_round_mode(ctx));
  IGNIS_ASSIGN_OR_RETURN(DType to, cast_target(ctx));
  IGNIS_RETURN_IF_ERROR(check_cast_source(ctx));
  IGNIS_RETURN_IF_ERROR(check_string_cast(ctx, ctx.input_dtype(0), to));
  ctx.set_output(0, to, ctx.input_shape(0));
  return Status::ok();
}

// BitCast-26: the same bits read as `to`, a type of the same width.
Status infer_bitcast(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_ASSIGN_OR_RETURN(DType to, cast_target(ctx));
  IGNIS_RETURN_IF_ERROR(check_dtype(ctx, 0, DTypeSet::storable()));
  if (!dtype_is_plain(to)) return ctx.fail("cannot reinterpret bits as ", dtype_name(to));
  const DType from = ctx.input_dtype(0);
  // The 4- and 2-bit types are held one byte per element, so their bytes are not their bits.
  if (dtype_bits(from) < 8 || dtype_bits(to) < 8)
    return ctx.unsupported(str_cat("reinterpreting ", dtype_name(from), " as ", dtype_name(to), " is not supported"));
  if (dtype_size(from) != dtype_size(to))
    return ctx.fail("cannot reinterpret ", dtype_name(from), " (", 8 * dtype_size(from), " bits) as ", dtype_name(to),
                    " (", 8 * dtype_size(to), " bits)");
  // A bool holds 0 or 1; other bit patterns have no bool value.
  if (to == DType::Bool && from != DType::Bool)
    return ctx.unsupported(str_cat("reinterpreting ", dtype_name(from), " as bool is not supported"));
  ctx.set_output(0, to, ctx.input_shape(0));
  return Status::ok();
}

Status infer_castlike(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(check_attrs(ctx, {{"saturate", Kind::Int}, {"round_mode", Kind::String}}));
  IGNIS_RETURN_IF_ERROR(check_round_mode(ctx));
  IGNIS_RETURN_IF_ERROR(check_cast_source(ctx));
  const DType to = ctx.input_dtype(1);
  IGNIS_RETURN_IF_ERROR(check_dtype(ctx, 1, DTypeSet::storable() | DTypeSet{DType::String}));
  IGNIS_RETURN_IF_ERROR(check_string_cast(ctx, ctx.input_dtype(0), to));
  ctx.set_output(0, to, ctx.input_shape(0));
  return Status::ok();
}

Status infer_identity(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(check_dtype(ctx, 0, DTypeSet::storable() | DTypeSet::containers() | DTypeSet{DType::String}));
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::ok();
}

// Dropout at inference is the identity; the optional mask is all true (ones of T before opset
// 10). From opset 12 a true training_mode asks for random dropout, which ignis does not do —
// unless the ratio is 0, where training mode is also the identity.
Status infer_dropout(InferContext& ctx) {
  const DType t = ctx.has_input(0) ? ctx.input_dtype(0) : DType::Undefined;
  if (ctx.opset() < 12) {
    IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
    IGNIS_RETURN_IF_ERROR(check_attrs(ctx, {{"ratio", Kind::Float}, {"is_test", Kind::Int}}));
    IGNIS_RETURN_IF_ERROR(check_dtype(ctx, 0, DTypeSet::floats()));
    const float ratio = ctx.attrs().get_float("ratio", 0.5f);
    if (!(ratio >= 0.0f && ratio < 1.0f)) return ctx.fail("attribute 'ratio' must be in [0, 1), got ", ratio);
    ctx.set_output(0, t, ctx.input_shape(0));
    ctx.set_output(1, ctx.opset() < 10 ? t : DType::Bool, ctx.input_shape(0));
    return Status::ok();
  }
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 3));
  IGNIS_RETURN_IF_ERROR(check_attrs(ctx, {{"seed", Kind::Int}}));
  IGNIS_RETURN_IF_ERROR(check_dtype(ctx, 0, DTypeSet::floats()));
  double ratio = 0.5;
  if (ctx.has_input(1)) {
    if (!dtype_is_float(ctx.input_dtype(1)))
      return ctx.fail("input 1 (ratio) must be a float tensor, got ", dtype_name(ctx.input_dtype(1)));
    if (ctx.input_shape(1).numel() != 1)
      return ctx.fail("input 1 (ratio) must be a scalar, got shape ", ctx.input_shape(1).str());
  }
  if (ctx.has_input(2)) {
    if (ctx.input_dtype(2) != DType::Bool)
      return ctx.fail("input 2 (training_mode) must be bool, got ", dtype_name(ctx.input_dtype(2)));
    if (ctx.input_shape(2).numel() != 1)
      return ctx.fail("input 2 (training_mode) must be a scalar, got shape ", ctx.input_shape(2).str());
    IGNIS_ASSIGN_OR_RETURN(std::vector<int64_t> training, ctx.input_ints(2));
    if (training[0] != 0) {
      if (ctx.has_input(1)) {
        IGNIS_ASSIGN_OR_RETURN(std::vector<double> r, ctx.input_doubles(1));
        ratio = r[0];
      }
      if (!(ratio >= 0.0 && ratio < 1.0)) return ctx.fail("input 1 (ratio) must be in [0, 1), got ", ratio);
      if (ratio != 0.0) return ctx.unsupported("training-mode dropout (random) is not supported");
    }
  }
  ctx.set_output(0, t, ctx.input_shape(0));
  ctx.set_output(1, DType::Bool, ctx.input_shape(0));
  return Status::ok();
}

}  // namespace

void register_elementwise_schemas(OpSchemaRegistry& r) {
  constexpr auto F = Types::Float;
  constexpr auto N = Types::Numeric;

  // Unary math.
  r.add({"", "Abs", 1, 21, infer_unary_plain<N>});
  r.add({"", "Neg", 1, 21, infer_unary_plain<Types::SignedNumeric>});
  r.add({"", "Sign", 9, 21, infer_unary_plain<N>});
  for (std::string_view op : {"Reciprocal", "Floor", "Ceil", "Sqrt", "Exp", "Log", "Sigmoid", "Tanh", "Softsign",
                              "Softplus"})
    r.add({"", op, 1, 22, infer_unary_plain<F>});  // Softsign-22, Softplus-22 add bfloat16
  r.add({"", "Round", 11, 22, infer_unary_plain<F>});
  for (std::string_view op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan"}) r.add({"", op, 7, 22, infer_unary_plain<F>});
  for (std::string_view op : {"Sinh", "Cosh", "Asinh", "Acosh", "Atanh"}) r.add({"", op, 9, 22, infer_unary_plain<F>});
  r.add({"", "Erf", 9, 21, infer_unary_plain<N>});
  r.add({"", "IsNaN", 9, 21, [](InferContext& c) { return infer_unary(c, Types::Float, {}, true); }});
  r.add({"", "IsInf", 10, 21, infer_isinf});
  r.add({"", "Not", 1, 21, infer_unary_plain<Types::Bool>});
  r.add({"", "BitwiseNot", 18, 21, infer_unary_plain<Types::Int>});

  // Activations.
  r.add({"", "Relu", 1, 21, infer_unary_plain<Types::SignedNumeric>});
  r.add({"", "LeakyRelu", 1, 21, [](InferContext& c) { return infer_unary(c, F, {{"alpha", Kind::Float}}); }});
  r.add({"", "PRelu", 1, 21, infer_prelu});
  r.add({"", "HardSigmoid", 1, 22,
         [](InferContext& c) { return infer_unary(c, F, {{"alpha", Kind::Float}, {"beta", Kind::Float}}); }});
  r.add({"", "HardSwish", 14, 22, infer_unary_plain<F>});
  r.add({"", "Elu", 1, 22, [](InferContext& c) { return infer_unary(c, F, {{"alpha", Kind::Float}}); }});
  r.add({"", "Selu", 1, 22,
         [](InferContext& c) { return infer_unary(c, F, {{"alpha", Kind::Float}, {"gamma", Kind::Float}}); }});
  r.add({"", "Celu", 12, 28, [](InferContext& c) { return infer_unary(c, F, {{"alpha", Kind::Float}}); }});
  r.add({"", "ThresholdedRelu", 10, 22,
         [](InferContext& c) { return infer_unary(c, F, {{"alpha", Kind::Float}}); }});
  r.add({"", "Shrink", 9, 21, infer_shrink});
  r.add({"", "Mish", 18, 22, infer_unary_plain<F>});
  r.add({"", "Swish", 24, 24, [](InferContext& c) { return infer_unary(c, F, {{"alpha", Kind::Float}}); }});
  r.add({"", "Gelu", 20, 21, infer_gelu});
  r.add({"", "Clip", 1, 21, infer_clip});

  // Binary.
  for (std::string_view op : {"Add", "Sub", "Mul", "Div"}) r.add({"", op, 1, 21, infer_binary_plain<N, false, true>});
  r.add({"", "Pow", 1, 21, infer_pow});
  r.add({"", "SwiGLU", 28, 28, infer_swiglu});
  r.add({"", "Mod", 10, 28, infer_mod});
  r.add({"", "BitShift", 11, 28, infer_bitshift});
  for (std::string_view op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    r.add({"", op, 18, 21, infer_binary_plain<Types::Int, false, false>});
  for (std::string_view op : {"And", "Or", "Xor"}) r.add({"", op, 1, 21, infer_binary_plain<Types::Bool, true, true>});
  r.add({"", "Equal", 1, 21, infer_equal});
  for (std::string_view op : {"Less", "Greater"}) r.add({"", op, 1, 21, infer_binary_plain<N, true, true>});
  for (std::string_view op : {"LessOrEqual", "GreaterOrEqual"})
    r.add({"", op, 12, 21, infer_binary_plain<N, true, false>});

  // Variadic and selection.
  for (std::string_view op : {"Sum", "Mean"}) r.add({"", op, 1, 21, infer_variadic_plain<F>});
  for (std::string_view op : {"Max", "Min"}) r.add({"", op, 1, 21, infer_variadic_plain<N>});
  r.add({"", "Where", 9, 21, infer_where});

  // Type conversion and pass-through.
  r.add({"", "Cast", 1, 28, infer_cast});
  r.add({"", "CastLike", 15, 25, infer_castlike});
  r.add({"", "BitCast", 26, 26, infer_bitcast});
  r.add({"", "Identity", 1, 25, infer_identity});
  r.add({"", "Dropout", 1, 22, infer_dropout});
}

}  // namespace ignis::ir
