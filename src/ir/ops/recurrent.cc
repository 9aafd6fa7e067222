// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the recurrent ops: LSTM, GRU, RNN (every ONNX version:
// 1 only adds the ignored 'output_sequence' hint, 14 adds 'layout', 22 adds bfloat16).
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "ir/ops/nn_internal.h"

namespace ignis::ir {

namespace {

using nn_ops::checked_shape;
using nn_ops::expect_input;
using nn_ops::expect_same_dtype;

// The float types the reference kernels run (16-bit ones through float32).
constexpr DTypeSet kRecurrentTypes = {DType::F32, DType::F64, DType::F16, DType::BF16};

// What distinguishes the three cells for shape checks: gates per W/R block and how many
// activation functions one direction takes.
struct CellInfo {
  int gates;
  int activations;
};

CellInfo cell_info(std::string_view op) {
  if (op == "LSTM") return {4, 3};
  if (op == "GRU") return {3, 2};
  return {1, 1};
}

// The activation functions ONNX lists for the recurrent ops (the kernels implement all).
bool known_activation(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  static constexpr const char* kNames[] = {"relu", "tanh", "sigmoid", "affine", "leakyrelu", "thresholdedrelu",
                                           "scaledtanh", "hardsigmoid", "elu", "softsign", "softplus"};
  return std::any_of(std::begin(kNames), std::end(kNames), [&](const char* n) { return name == n; });
}

Result<int64_t> direction_count(const InferContext& ctx) {
  const std::string dir = ctx.attrs().get_string("direction", "forward");
  if (dir == "forward" || dir == "reverse") return 1;
  if (dir == "bidirectional") return 2;
  return ctx.fail("attribute 'direction' must be forward, reverse or bidirectional, got '", dir, "'");
}

// Activations: one set per direction, or (bidirectional) one set both directions share.
Status check_activations(const InferContext& ctx, int per_direction, int64_t dirs) {
  if (!ctx.attrs().has("activations")) return Status::ok();
  const std::vector<std::string> acts = ctx.attrs().get_strings("activations");
  const auto n = static_cast<int64_t>(acts.size());
  if (n != per_direction * dirs && n != per_direction)
    return ctx.fail("attribute 'activations' must list ", per_direction * dirs, " functions (", per_direction,
                    " per direction), got ", n);
  for (const std::string& a : acts)
    if (!known_activation(a)) return ctx.unsupported(str_cat("activation function '", a, "'"));
  return Status::ok();
}

Status expect_shape(const InferContext& ctx, int i, std::string_view name, const std::vector<int64_t>& want) {
  if (!ctx.has_input(i)) return Status::ok();
  const Shape& s = ctx.input_shape(i);
  if (!(s == Shape(want)))
    return ctx.fail("input ", i, " ('", name, "') must have shape ", str_list(want), ", got ", s.str());
  return Status::ok();
}

Status infer_recurrent(InferContext& ctx) {
  const CellInfo cell = cell_info(ctx.op_type());
  const bool lstm = ctx.op_type() == "LSTM";
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, lstm ? 8 : 6));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kRecurrentTypes));
  static constexpr const char* kNames[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (i == 4) continue;
    if (i < 3) IGNIS_RETURN_IF_ERROR(expect_input(ctx, i, kNames[i], kRecurrentTypes));
    IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, i, kNames[i], 0));
  }
  if (ctx.has_input(4)) IGNIS_RETURN_IF_ERROR(expect_input(ctx, 4, "sequence_lens", {DType::I32}));
  for (int i = 0; i < 3; ++i) IGNIS_RETURN_IF_ERROR(ctx.expect_rank(i, 3));

  const int64_t layout = ctx.opset() >= 14 ? ctx.attrs().get_int("layout", 0) : 0;
  if (layout != 0 && layout != 1) return ctx.fail("attribute 'layout' must be 0 or 1, got ", layout);
  IGNIS_ASSIGN_OR_RETURN(const int64_t dirs, direction_count(ctx));
  IGNIS_RETURN_IF_ERROR(check_activations(ctx, cell.activations, dirs));
  if (ctx.attrs().has("clip") && !(ctx.attrs().get_float("clip") > 0.0f))
    return ctx.fail("attribute 'clip' must be positive, got ", ctx.attrs().get_float("clip"));
  if (lstm && ctx.attrs().get_int("input_forget", 0) != 0 && ctx.attrs().get_int("input_forget", 0) != 1)
    return ctx.fail("attribute 'input_forget' must be 0 or 1");

  const Shape& x = ctx.input_shape(0);
  const int64_t seq = layout == 0 ? x[0] : x[1];
  const int64_t batch = layout == 0 ? x[1] : x[0];
  const int64_t input = x[2];
  const int64_t hidden = ctx.attrs().get_int("hidden_size", ctx.input_shape(2)[2]);
  if (hidden < 0) return ctx.fail("attribute 'hidden_size' must be non-negative, got ", hidden);
  const int64_t gh = cell.gates * hidden;
  IGNIS_RETURN_IF_ERROR(expect_shape(ctx, 1, "W", {dirs, gh, input}));
  IGNIS_RETURN_IF_ERROR(expect_shape(ctx, 2, "R", {dirs, gh, hidden}));
  IGNIS_RETURN_IF_ERROR(expect_shape(ctx, 3, "B", {dirs, 2 * gh}));
  IGNIS_RETURN_IF_ERROR(expect_shape(ctx, 4, "sequence_lens", {batch}));
  const std::vector<int64_t> state =
      layout == 0 ? std::vector<int64_t>{dirs, batch, hidden} : std::vector<int64_t>{batch, dirs, hidden};
  IGNIS_RETURN_IF_ERROR(expect_shape(ctx, 5, "initial_h", state));
  if (lstm) {
    IGNIS_RETURN_IF_ERROR(expect_shape(ctx, 6, "initial_c", state));
    IGNIS_RETURN_IF_ERROR(expect_shape(ctx, 7, "P", {dirs, 3 * hidden}));
  }
  if (ctx.num_outputs() > (lstm ? 3 : 2))
    return ctx.fail("has ", ctx.num_outputs(), " outputs, at most ", lstm ? 3 : 2, " are defined");

  const DType t = ctx.input_dtype(0);
  const std::vector<int64_t> y = layout == 0 ? std::vector<int64_t>{seq, dirs, batch, hidden}
                                             : std::vector<int64_t>{batch, seq, dirs, hidden};
  IGNIS_ASSIGN_OR_RETURN(Shape y_shape, checked_shape(ctx, y, t, "output 'Y'"));
  IGNIS_ASSIGN_OR_RETURN(Shape state_shape, checked_shape(ctx, state, t, "output 'Y_h'"));
  if (ctx.num_outputs() > 0) ctx.set_output(0, t, y_shape);
  for (int i = 1; i < ctx.num_outputs(); ++i) ctx.set_output(i, t, state_shape);
  return Status::ok();
}

}  // namespace

void register_recurrent_schemas(OpSchemaRegistry& r) {
  r.add({"", "LSTM", 1, 22, infer_recurrent});
  r.add({"", "GRU", 1, 22, infer_recurrent});
  r.add({"", "RNN", 1, 22, infer_recurrent});
}

}  // namespace ignis::ir
