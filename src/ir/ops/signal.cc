// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the signal ops: DFT, STFT, window functions, MelWeightMatrix,
// and Det (CumProd sits beside CumSum in tensor_index.cc). Complex tensors are real tensors with a trailing dimension of 2 (real,
// imaginary); a trailing 1 marks a real signal.
#include <algorithm>
#include <vector>

#include "ir/op_schema.h"
#include "ir/ops/tensor_internal.h"

namespace ignis::ir {

namespace {

using tensor_ops::checked_shape;
using tensor_ops::expect_index_input;
using tensor_ops::expect_single_element;

constexpr DTypeSet kFloatTypes = DTypeSet::floats();
// Output types of the window functions and MelWeightMatrix (T2/T3 in the spec).
constexpr DTypeSet kGeneratedTypes = DTypeSet::numeric();

Status expect_float_input(const InferContext& ctx, int i, std::string_view what) {
  if (!ctx.has_input(i)) return ctx.fail("input '", what, "' is required");
  if (!kFloatTypes.contains(ctx.input_dtype(i)))
    return ctx.unsupported(str_cat("input '", what, "' dtype ", dtype_name(ctx.input_dtype(i))));
  return Status::ok();
}

// A 0/1 attribute; other values are malformed.
Result<bool> flag_attr(const InferContext& ctx, std::string_view name, int64_t def) {
  const int64_t v = ctx.attrs().get_int(name, def);
  if (v != 0 && v != 1) return ctx.fail("attribute '", name, "' must be 0 or 1, got ", v);
  return v == 1;
}

// Reads the single integer of scalar input i (the value must be known).
Result<int64_t> scalar_int(const InferContext& ctx, int i, std::string_view what) {
  IGNIS_RETURN_IF_ERROR(expect_index_input(ctx, i, what));
  IGNIS_RETURN_IF_ERROR(expect_single_element(ctx, i, what));
  IGNIS_ASSIGN_OR_RETURN(auto v, ctx.input_ints(i));
  return v[0];
}

// The output dtype named by attribute 'output_datatype' (default float32).
Result<DType> output_datatype(const InferContext& ctx) {
  const int64_t code = ctx.attrs().get_int("output_datatype", 1);
  auto t = dtype_from_onnx(static_cast<int32_t>(code));
  if (!t || !kGeneratedTypes.contains(*t))
    return ctx.unsupported(str_cat("attribute 'output_datatype' ", code));
  return *t;
}

// ---- DFT ----------------------------------------------------------------------------------
// The transform runs along one signal axis of [dims..., 1|2]. Output length along that axis:
// n (full spectrum or inverse), n/2+1 (one-sided forward), n (one-sided inverse, real result).
Status infer_dft(InferContext& ctx) {
  const bool axis_input = ctx.opset() >= 20;  // DFT-20 moved 'axis' from an attribute to input 2
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, axis_input ? 3 : 2));
  IGNIS_RETURN_IF_ERROR(expect_float_input(ctx, 0, "input"));
  IGNIS_ASSIGN_OR_RETURN(bool inverse, flag_attr(ctx, "inverse", 0));
  IGNIS_ASSIGN_OR_RETURN(bool onesided, flag_attr(ctx, "onesided", 0));
  const Shape& in = ctx.input_shape(0);
  const int rank = in.rank();
  if (rank < 2) return ctx.fail("input must have rank >= 2 ([signal dims..., 1 or 2]), got ", in.str());
  if (in.back() != 1 && in.back() != 2)
    return ctx.fail("input's last dimension must be 1 (real) or 2 (complex), got ", in.str());

  int64_t axis = 1;
  if (axis_input) {
    axis = -2;
    if (ctx.has_input(2)) {
      IGNIS_ASSIGN_OR_RETURN(axis, scalar_int(ctx, 2, "axis"));
    }
  } else {
    axis = ctx.attrs().get_int("axis", 1);
  }
  // Accepted range [-r, -2] U [0, r-2]: the last dimension holds the complex parts.
  if (axis < -rank || axis > rank - 2 || axis == -1)
    return ctx.fail("axis ", axis, " is out of range for input ", in.str(), " (the last dimension is not a signal axis)");
  const int a = static_cast<int>(axis < 0 ? axis + rank : axis);

  const int64_t len = in[a];
  int64_t n = inverse && onesided ? 2 * (len - 1) : len;
  if (ctx.has_input(1)) {
    IGNIS_ASSIGN_OR_RETURN(n, scalar_int(ctx, 1, "dft_length"));
  }
  if (n < 1) return ctx.fail("dft_length must be >= 1, got ", n, " for input ", in.str(), " along axis ", a);

  std::vector<int64_t> dims = in.to_vector();
  dims[a] = !inverse && onesided ? n / 2 + 1 : n;
  dims.back() = inverse && onesided ? 1 : 2;
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, dims, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

// ---- STFT ---------------------------------------------------------------------------------
Status infer_stft(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 4));
  IGNIS_RETURN_IF_ERROR(expect_float_input(ctx, 0, "signal"));
  IGNIS_ASSIGN_OR_RETURN(bool onesided, flag_attr(ctx, "onesided", 1));
  const Shape& sig = ctx.input_shape(0);
  if (sig.rank() != 3 || (sig[2] != 1 && sig[2] != 2))
    return ctx.fail("input 'signal' must be [batch, length, 1 or 2], got ", sig.str());
  const int64_t length = sig[1];

  IGNIS_ASSIGN_OR_RETURN(int64_t step, scalar_int(ctx, 1, "frame_step"));
  if (step < 1) return ctx.fail("frame_step must be >= 1, got ", step);

  int64_t frame_length = length;
  if (ctx.has_input(2)) {
    if (ctx.input_dtype(2) != ctx.input_dtype(0))
      return ctx.fail("input 'window' must have the signal's dtype ", dtype_name(ctx.input_dtype(0)), ", got ",
                      dtype_name(ctx.input_dtype(2)));
    if (ctx.input_shape(2).rank() != 1) return ctx.fail("input 'window' must be 1-D, got ", ctx.input_shape(2).str());
    frame_length = ctx.input_shape(2)[0];
  }
  if (ctx.has_input(3)) {
    IGNIS_ASSIGN_OR_RETURN(int64_t fl, scalar_int(ctx, 3, "frame_length"));
    if (ctx.has_input(2) && fl != frame_length)
      return ctx.fail("frame_length ", fl, " differs from the window's length ", frame_length);
    frame_length = fl;
  }
  if (frame_length < 1) return ctx.fail("frame_length must be >= 1, got ", frame_length);
  if (frame_length > length)
    return ctx.fail("frame_length ", frame_length, " is longer than the signal (", length, " samples)");

  const int64_t frames = (length - frame_length) / step + 1;
  const int64_t bins = onesided ? frame_length / 2 + 1 : frame_length;
  const std::vector<int64_t> dims = {sig[0], frames, bins, 2};
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, dims, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

// ---- HannWindow, HammingWindow, BlackmanWindow ----------------------------------------------
Status infer_window(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(flag_attr(ctx, "periodic", 1).status());
  IGNIS_ASSIGN_OR_RETURN(DType dtype, output_datatype(ctx));
  IGNIS_ASSIGN_OR_RETURN(int64_t size, scalar_int(ctx, 0, "size"));
  if (size < 0) return ctx.fail("size must be >= 0, got ", size);
  const std::vector<int64_t> dims = {size};
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, dims, dtype, "output"));
  ctx.set_output(0, dtype, out);
  return Status::ok();
}

// ---- MelWeightMatrix ----------------------------------------------------------------------
Status infer_mel_weight_matrix(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(5, 5));
  IGNIS_ASSIGN_OR_RETURN(DType dtype, output_datatype(ctx));
  for (int i = 3; i < 5; ++i) {
    IGNIS_RETURN_IF_ERROR(expect_float_input(ctx, i, i == 3 ? "lower_edge_hertz" : "upper_edge_hertz"));
    IGNIS_RETURN_IF_ERROR(expect_single_element(ctx, i, i == 3 ? "lower_edge_hertz" : "upper_edge_hertz"));
  }
  IGNIS_ASSIGN_OR_RETURN(int64_t mel_bins, scalar_int(ctx, 0, "num_mel_bins"));
  IGNIS_ASSIGN_OR_RETURN(int64_t dft_length, scalar_int(ctx, 1, "dft_length"));
  IGNIS_RETURN_IF_ERROR(expect_index_input(ctx, 2, "sample_rate"));
  IGNIS_RETURN_IF_ERROR(expect_single_element(ctx, 2, "sample_rate"));
  if (mel_bins < 1) return ctx.fail("num_mel_bins must be >= 1, got ", mel_bins);
  if (dft_length < 1) return ctx.fail("dft_length must be >= 1, got ", dft_length);
  if (ctx.input_value(2) != nullptr) {
    IGNIS_ASSIGN_OR_RETURN(auto rate, ctx.input_ints(2));
    if (rate[0] < 1) return ctx.fail("sample_rate must be >= 1, got ", rate[0]);
  }
  const std::vector<int64_t> dims = {dft_length / 2 + 1, mel_bins};
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, dims, dtype, "output"));
  ctx.set_output(0, dtype, out);
  return Status::ok();
}

// ---- Det ----------------------------------------------------------------------------------
Status infer_det(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_float_input(ctx, 0, "X"));
  const Shape& in = ctx.input_shape(0);
  if (in.rank() < 2 || in[in.rank() - 1] != in[in.rank() - 2])
    return ctx.fail("input 'X' must be [..., M, M], got ", in.str());
  const auto dims = in.dims().first(static_cast<size_t>(in.rank() - 2));
  ctx.set_output(0, ctx.input_dtype(0), Shape(dims));
  return Status::ok();
}

}  // namespace

void register_signal_schemas(OpSchemaRegistry& r) {
  r.add({"", "DFT", 17, 20, infer_dft});
  r.add({"", "STFT", 17, 17, infer_stft});
  r.add({"", "HannWindow", 17, 17, infer_window});
  r.add({"", "HammingWindow", 17, 17, infer_window});
  r.add({"", "BlackmanWindow", 17, 17, infer_window});
  r.add({"", "MelWeightMatrix", 17, 17, infer_mel_weight_matrix});
  r.add({"", "Det", 11, 22, infer_det});
}

}  // namespace ignis::ir
